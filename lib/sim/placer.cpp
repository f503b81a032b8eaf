// loom sim: placers.
#include "lib/sim/placer.hpp"

#include <algorithm>

namespace loom::sim {

namespace {

bool node_fits(const place::State &s, const topo::Cluster &c, topo::Index n, const place::Request &r, int cls)
{
	if (!s.available(n) || s.free_gpus(n) < r.gpus_per_node)
		return false;
	if (r.whole_node && !s.idle(n))
		return false;
	if (r.cores_per_node > 0 && s.total_cores(n) > 0 && s.free_cores(n) < r.cores_per_node)
		return false;
	return cls < 0 || c.nodes[static_cast<size_t>(n)].perf_class == cls;
}

int class_of(const topo::Cluster &c, const place::Request &r)
{
	if (r.gpu_class.empty() || r.gpu_class == "any")
		return -1;
	topo::Index id = c.classes.find(r.gpu_class);
	return id == topo::none ? -2 : id;
}

place::Decision from_nodes(std::vector<topo::Index> nodes, const place::State &s, const place::Request &r)
{
	place::Decision d;
	place::Candidate cand;
	for (topo::Index n : nodes)
		cand.gpus.push_back(r.whole_node ? s.total_gpus(n) : r.gpus_per_node);
	cand.nodes = std::move(nodes);
	d.candidates.push_back(std::move(cand));
	return d;
}

class LoomPlacer : public Placer {
public:
	explicit LoomPlacer(const place::Weights &w) : w_(w) {}
	expected<place::Decision> choose(const place::State &s, const place::Request &r) override
	{
		return place::place(s, r, nullptr, w_, 1);
	}
	void set_clock(int minute_of_day) override { w_.clock_minute = minute_of_day; }

private:
	place::Weights w_;
};

class TreePlacer : public Placer {
public:
	explicit TreePlacer(const place::Weights &w) : w_(w) {}
	expected<place::Decision> choose(const place::State &s, const place::Request &r) override
	{
		return place::place_baseline(s, r, nullptr, w_);
	}

private:
	place::Weights w_;
};

class FirstFit : public Placer {
public:
	explicit FirstFit(const topo::Cluster &c) : c_(c) {}
	expected<place::Decision> choose(const place::State &s, const place::Request &r) override
	{
		int cls = class_of(c_, r);
		std::vector<topo::Index> got;
		size_t need = static_cast<size_t>(r.min_nodes);
		if (cls != -2)
			for (topo::Index n = 0; n < static_cast<topo::Index>(s.node_count()) && got.size() < need; n++)
				if (node_fits(s, c_, n, r, cls))
					got.push_back(n);
		if (got.size() < need) {
			place::Decision d;
			d.reason = "not enough nodes fit";
			return d;
		}
		return from_nodes(std::move(got), s, r);
	}

private:
	const topo::Cluster &c_;
};

class BlockPlacer : public Placer {
public:
	explicit BlockPlacer(const topo::Cluster &c) : c_(c)
	{
		if (!c.nvlink_domains.empty()) {
			for (const topo::NvlinkDomain &v : c.nvlink_domains)
				blocks_.push_back(v.nodes);
		} else {
			for (const topo::Domain &d : c.domains)
				if (d.direct_end > d.node_begin) {
					std::vector<topo::Index> b;
					for (topo::Index n = d.node_begin; n < d.direct_end; n++)
						b.push_back(n);
					blocks_.push_back(std::move(b));
				}
		}
		for (const auto &b : blocks_)
			block_nodes_ = std::max(block_nodes_, b.size());
	}
	expected<place::Decision> choose(const place::State &s, const place::Request &r) override
	{
		int cls = class_of(c_, r);
		size_t need = static_cast<size_t>(r.min_nodes);
		place::Decision none;
		none.reason = "no block aggregate has room";
		if (cls == -2 || blocks_.empty())
			return none;
		size_t span = 1;
		while (span * block_nodes_ < need && span < blocks_.size())
			span *= 2;
		for (; span <= std::max<size_t>(1, blocks_.size()) * 2; span *= 2) {
			size_t best = SIZE_MAX, best_free = SIZE_MAX;
			for (size_t i = 0; i < blocks_.size(); i += span) {
				size_t free = 0;
				for (size_t b = i; b < std::min(blocks_.size(), i + span); b++)
					for (topo::Index n : blocks_[b])
						free += node_fits(s, c_, n, r, cls);
				if (free >= need && free < best_free) {
					best = i;
					best_free = free;
				}
			}
			if (best != SIZE_MAX) {
				std::vector<topo::Index> got;
				for (size_t b = best; b < std::min(blocks_.size(), best + span) && got.size() < need;
				     b++)
					for (topo::Index n : blocks_[b])
						if (got.size() < need && node_fits(s, c_, n, r, cls))
							got.push_back(n);
				return from_nodes(std::move(got), s, r);
			}
			if (span >= blocks_.size())
				break;
		}
		return none;
	}

private:
	const topo::Cluster &c_;
	std::vector<std::vector<topo::Index>> blocks_;
	size_t block_nodes_ = 1;
};

} // namespace

const std::vector<std::string> &placer_names()
{
	static const std::vector<std::string> v = {"loom", "tree", "firstfit", "block"};
	return v;
}

expected<std::unique_ptr<Placer>> make_placer(const std::string &name, const topo::Cluster &c, const place::Weights &w)
{
	if (name == "loom")
		return std::unique_ptr<Placer>(new LoomPlacer(w));
	if (name == "tree")
		return std::unique_ptr<Placer>(new TreePlacer(w));
	if (name == "firstfit")
		return std::unique_ptr<Placer>(new FirstFit(c));
	if (name == "block")
		return std::unique_ptr<Placer>(new BlockPlacer(c));
	return unexpected("unknown placer '" + name + "': expected loom, tree, firstfit or block");
}

} // namespace loom::sim
