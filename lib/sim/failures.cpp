// loom sim: failure model and outcomes (through lib/health).
#include "lib/sim/failures.hpp"

#include "lib/health/job_log.hpp"
#include "lib/util/config.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>

namespace loom::sim {

FailureModel default_failure_model()
{
	FailureModel m;
	const int64_t h = 3600;
	// Llama 3 (54 days, 16,384 H100): the share of each cause in %.
	m.causes = {
		{"gpu", Evidence::xid_79, 30.1, 72 * h, 0, true},          // faulty GPU: off the bus
		{"hbm", Evidence::xid_48, 17.2, 72 * h, 0, true},          // HBM3: double-bit ECC
		{"software", Evidence::traceback, 12.9, 0, 0, false},      // the job's own bug
		{"network", Evidence::ib_completion, 8.4, 4 * h, 0, true}, // switch or cable
		{"host", Evidence::node_down, 7.6, 8 * h, 0, true},        // host maintenance
		{"sram", Evidence::xid_95, 4.5, 72 * h, 0, true},          // GPU SRAM: uncontained ECC
		{"gsp", Evidence::xid_119, 4.1, 2 * h, 0, true},           // GPU system processor timeout
		{"nic", Evidence::ib_retry, 1.7, 24 * h, 0, true},         // NIC
		{"nccl", Evidence::nccl_watchdog, 1.7, 0, 600, false},     // NCCL watchdog: a hang
		{"other", Evidence::node_down, 11.8, 8 * h, 0, true},      // SDC, thermal, unlisted
	};
	return m;
}

expected<FailureModel> parse_failure_model(std::string_view text, const std::string &where)
{
	FailureModel m = default_failure_model();
	ConfigSchema s;
	s.real("rate", &m.rate_per_1000_node_days, 0, 1e6, "failures per 1000 node-days")
		.real("lemon_share", &m.lemon_share, 0, 1, "share of nodes that fail more often")
		.real("lemon_factor", &m.lemon_factor, 1, 1e4, "how much more often")
		.integer("restart_budget", &m.restart_budget, 0, 100000, "requeues of a job without --ckpt")
		.integer("ckpt_max_restarts", &m.ckpt_max_restarts, 0, 100000, "requeues of a --ckpt job")
		.duration("user_resubmit", &m.user_resubmit_s, 0, 365 * 86400, "delay before a user resubmits");
	for (Cause &c : m.causes) {
		s.real("cause." + c.name + ".share", &c.share, 0, 1e9, "relative share")
			.duration("cause." + c.name + ".repair", &c.repair_s, 0, 365 * 86400, "time out of service")
			.duration("cause." + c.name + ".detect", &c.detect_s, 0, 86400, "fault to job end")
			.real("cause." + c.name + ".warned", &c.warned, 0, 1, "share announced ahead")
			.duration("cause." + c.name + ".lead", &c.lead_s, 0, 30 * 86400, "how far ahead");
	}
	if (auto st = s.parse_text(text, where); !st)
		return unexpected(st.error());
	double sum = 0;
	for (const Cause &c : m.causes)
		sum += c.share;
	if (m.rate_per_1000_node_days > 0 && !(sum > 0))
		return unexpected(Error(where, "every cause has share 0 but rate is not 0"));
	return m;
}

expected<FailureModel> load_failure_model(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		return unexpected(Error(path, "cannot open the failure model"));
	std::stringstream ss;
	ss << in.rdbuf();
	return parse_failure_model(ss.str(), path);
}

std::string format_failure_model(const FailureModel &m)
{
	if (m.none)
		return "none\n";
	std::string out = strprintf(
		"rate=%g lemon_share=%g lemon_factor=%g restart_budget=%lld ckpt_max_restarts=%lld "
		"user_resubmit=%s\n",
		m.rate_per_1000_node_days, m.lemon_share, m.lemon_factor, static_cast<long long>(m.restart_budget),
		static_cast<long long>(m.ckpt_max_restarts), format_duration(m.user_resubmit_s).c_str());
	for (const Cause &c : m.causes)
		out += strprintf("cause.%s.share=%g cause.%s.repair=%s cause.%s.detect=%s%s\n", c.name.c_str(), c.share,
				 c.name.c_str(), format_duration(c.repair_s).c_str(), c.name.c_str(),
				 format_duration(c.detect_s).c_str(),
				 c.warned > 0 ? strprintf(" cause.%s.warned=%g cause.%s.lead=%s", c.name.c_str(),
							  c.warned, c.name.c_str(), format_duration(c.lead_s).c_str())
							.c_str()
					      : "");
	return out;
}

std::vector<Failure> draw_failures(const FailureModel &m, size_t nodes, int64_t horizon_s, uint64_t seed)
{
	std::vector<Failure> out;
	if (m.none || nodes == 0 || m.rate_per_1000_node_days <= 0 || horizon_s <= 0)
		return out;
	std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0xFA11);
	// Lemons: a seeded choice of nodes.
	std::vector<int32_t> order(nodes);
	std::iota(order.begin(), order.end(), 0);
	std::shuffle(order.begin(), order.end(), rng);
	size_t lemons = static_cast<size_t>(std::llround(m.lemon_share * static_cast<double>(nodes)));
	double n = static_cast<double>(nodes), l = static_cast<double>(lemons);
	double fleet = m.rate_per_1000_node_days / 1000 / 86400 * n; // failures per second, all nodes
	double p_lemon = lemons ? l * m.lemon_factor / (n - l + l * m.lemon_factor) : 0;
	std::vector<double> w;
	for (const Cause &c : m.causes)
		w.push_back(c.share);
	std::discrete_distribution<uint32_t> cause(w.begin(), w.end());
	std::exponential_distribution<double> gap(fleet);
	std::uniform_real_distribution<double> u(0, 1);
	double t = 0;
	for (;;) {
		t += gap(rng);
		if (t >= static_cast<double>(horizon_s))
			break;
		Failure f;
		f.t = static_cast<int64_t>(t);
		if (lemons && u(rng) < p_lemon)
			f.node = order[static_cast<size_t>(u(rng) * l) % lemons];
		else if (lemons < nodes)
			f.node = order[lemons + static_cast<size_t>(u(rng) * (n - l)) % (nodes - lemons)];
		else
			f.node = order[static_cast<size_t>(u(rng) * n) % nodes];
		f.cause = cause(rng);
		double ahead = u(rng); // drawn for every failure, so that warnings leave the rest as they were
		const Cause &c = m.causes[f.cause];
		if (ahead < c.warned)
			f.warn_t = std::max<int64_t>(0, f.t - c.lead_s);
		out.push_back(f);
	}
	return out;
}

std::string evidence_text(Evidence e, const std::string &node)
{
	const std::string sys = "Dec  1 10:00:00 " + node + " kernel: NVRM: Xid (PCI:0000:07:00): ";
	switch (e) {
	case Evidence::xid_79:
		return sys + "79, pid=4242, name=python, GPU has fallen off the bus.\n";
	case Evidence::xid_48:
		return sys + "48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on "
			     "GPU in the "
			     "framebuffer at partition 6, subpartition 0.\n";
	case Evidence::xid_95:
		return sys + "95, pid=4242, name=python, Uncontained: SRAM. RST: Yes, D-RST: No\n";
	case Evidence::xid_119:
		return sys + "119, pid=4242, name=python, Timeout after 6s of waiting for RPC response from GPU4 GSP! "
			     "Expected "
			     "function 76 (GSP_RM_CONTROL) (0x20801813 0x4c).\n";
	case Evidence::ib_completion:
		return node + ":3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer "
			      "10.0.0.2<54862> with "
			      "status=12 opcode=0 len=0 vendor err 129 (Recv)\n";
	case Evidence::ib_retry:
		return node + ":3468:3905 [2] net_ib.cc:1294 NCCL WARN NET/IB : transport retry counter exceeded "
			      "(IBV_WC_RETRY_EXC_ERR) on mlx5_2:1\n";
	case Evidence::nccl_watchdog:
		return "[rank0]:[E1201 10:00:00.069865760 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
		       "collective "
		       "operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
		       "Timeout(ms)=600000) ran "
		       "for 600001 milliseconds before timing out.\n";
	case Evidence::traceback:
		return "Traceback (most recent call last):\n  File \"train.py\", line 212, in <module>\nValueError: "
		       "loss is nan\n";
	case Evidence::node_down:
		return "";
	}
	return "";
}

Outcome judge_failure(const Cause &cause, uint32_t job_id, const std::vector<std::string> &job_nodes,
		      const std::string &node, bool ckpt, uint32_t restart_count, uint32_t restart_budget)
{
	health::JobEnd j;
	j.job_id = job_id;
	j.nodes = job_nodes;
	j.requeue_allowed = true;
	j.checkpointed = ckpt;
	j.restart_count = restart_count;
	if (cause.evidence == Evidence::node_down) {
		j.state = "NODE_FAIL";
		j.exit_code = 0;
		j.node_state[node] = "DOWN*";
		j.node_reason[node] = "Not responding";
	} else {
		j.state = "FAILED";
		j.exit_code = 1;
	}
	health::JobLogScan scan = health::scan_job_log(evidence_text(cause.evidence, node));
	health::Classification c = health::classify_job(j, scan);
	health::JobDecision d = health::decide_job(j, c, restart_budget);
	Outcome o;
	o.cls = c.cls;
	o.requeue = d.requeue;
	o.drain = d.drain;
	o.reason = d.drain.empty() ? d.why : d.reason;
	return o;
}

} // namespace loom::sim
