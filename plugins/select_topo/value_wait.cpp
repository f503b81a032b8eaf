#include "plugins/select_topo/value_wait.hpp"

namespace loom::select_topo {

std::unique_ptr<place::State> add_waitable_nodes(const Snapshot &s, const job_record_t *job, const place::Request &req,
						 place::Allowed &allowed)
{
	std::unique_ptr<place::State> view;
	if (!job->part_ptr || !job->part_ptr->node_bitmap)
		return view;
	const place::State &st = *s.state;
	int need = req.gpus_per_node > 0 ? req.gpus_per_node : 1;
	bitstr_t *part = job->part_ptr->node_bitmap;
	for (int64_t i = 0; i < bit_size(part); i++) {
		if (!bit_test(part, i))
			continue;
		topo::Index m = s.model(i);
		if (m == topo::none || allowed.test(m) || !st.available(m))
			continue;
		if (st.free_gpus(m) < need || (req.whole_node && !st.idle(m))) {
			allowed.set(m);
			continue;
		}
		node_record_t *node = i < node_record_count ? node_record_table_ptr[i] : nullptr;
		if (!node || !IS_NODE_COMPLETING(node))
			continue;
		if (!view)
			view = std::make_unique<place::State>(st);
		if (view->set_node_free(m, 0, 0))
			allowed.set(m);
	}
	return view;
}

StateView::StateView(Snapshot &s, std::unique_ptr<place::State> view) : s_(s)
{
	if (view) {
		kept_ = std::move(s_.state);
		s_.state = std::move(view);
	}
}

StateView::~StateView()
{
	if (kept_)
		s_.state = std::move(kept_);
}

} // namespace loom::select_topo
