// loom health check: gather, judge, report; with --drain, act on the node in
// Slurm (HealthCheckProgram): drain, resume, mark and clear suspect, through
// lib/health/slurm_ops. Exit codes are Nagios's: 0 ok, 1 warning (suspect),
// 2 critical (drain), 3 unknown (the check cannot judge: no GPU data where
// GPUs are expected, a collector that cannot read, a bad config, no verdict
// within the deadline). A check that cannot judge never looks healthy, and
// --drain never drains on unknown.
#include "tools/command.hpp"
#include "tools/options.hpp"

#include "lib/health/config.hpp"
#include "lib/health/drain.hpp"
#include "lib/health/gather.hpp"
#include "lib/health/predictor.hpp"
#include "lib/health/report.hpp"
#include "lib/health/rules.hpp"
#include "lib/health/slurm_ops.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace loom;
using namespace loom::health;

namespace {

constexpr const char *default_config = "/etc/loom/health.conf";

std::string node_name(const std::string &given)
{
	if (!given.empty())
		return given;
	if (const char *n = std::getenv("SLURMD_NODENAME"); n && *n)
		return n;
	char host[256] = {};
	if (::gethostname(host, sizeof(host) - 1) != 0)
		return "localhost";
	std::string h = host;
	return h.substr(0, h.find('.'));
}

// The deadline: a read that blocks in the kernel (a hung NFS mount, a
// device) cannot be interrupted, so past the deadline the process says
// which collector it was in and exits 3 (unknown), from the signal handler
// (write and _exit only).
void on_deadline(int)
{
	const char *stage = gather_stage();
	const char head[] = "loom health check: unknown: no verdict within the deadline";
	(void)!::write(2, head, sizeof(head) - 1);
	if (stage && *stage) {
		const char in[] = " (stuck in the ";
		(void)!::write(2, in, sizeof(in) - 1);
		(void)!::write(2, stage, std::strlen(stage));
		const char tail[] = " collector)";
		(void)!::write(2, tail, sizeof(tail) - 1);
	}
	(void)!::write(2, "\n", 1);
	::_exit(3);
}

int act_on_slurm(SlurmOps &slurm, const SlurmNode &st, const std::string &node, const Verdict &v, HoldState &hold,
		 int64_t hold_down, bool quiet)
{
	int64_t now = static_cast<int64_t>(std::time(nullptr));
	NodePlan plan = plan_node(st, v, hold, now, hold_down);
	if (!quiet) {
		std::string steps;
		for (const auto &p : plan.steps)
			steps += (steps.empty() ? "" : ", ") + std::string(node_step_name(p.step));
		std::fprintf(stderr, "loom health: %s: %s: %s\n", node.c_str(), steps.empty() ? "none" : steps.c_str(),
			     plan.why.c_str());
	}
	if (auto r = apply_plan(slurm, node, plan); !r) {
		std::fprintf(stderr, "loom health: %s\n", r.error().str().c_str());
		return -1;
	}
	return 0;
}

struct CheckArgs {
	std::string config_path, root = "/", prom, node_arg, state_dir, smi;
	int64_t hold_down = -1, timeout_s = 60;
	bool json = false, drain = false, quiet = false, predict = true, config_given = false;
};

tool::OptionTable check_options(CheckArgs &a)
{
	using namespace tool;
	OptionTable t("loom health check", "[OPTION]...",
		      "Gathers the node's GPU, kernel, fabric and host signals, judges them and says so.");
	t.add("--config", "FILE",
	      "health configuration (default /etc/loom/health.conf when it exists;\na bad file is unknown, exit 3)",
	      [&a](const std::string &v) {
		      a.config_path = v;
		      a.config_given = true;
		      return std::string();
	      })
		.add("--root", "DIR", "read /sys, /proc and logs under DIR (replay a recorded node)",
		     set_string(a.root))
		.add("--json", "", "print the verdict as JSON", set_flag(a.json))
		.add("--prometheus", "FILE", "write a node_exporter textfile (atomically)", set_string(a.prom))
		.add("--node", "NAME", "Slurm node name (default $SLURMD_NODENAME, then the host name)",
		     set_string(a.node_arg))
		.add("--drain", "",
		     "act on the node in Slurm: drain when critical, mark it suspect\n"
		     "(Extra=loom:suspect:...) when suspect or unknown; resume and\n"
		     "clear what loom set once ok for the hold-down time",
		     set_flag(a.drain))
		.add("--state-dir", "DIR", "hold-down state, predictor history and the suspect flag",
		     set_string(a.state_dir))
		.add("--hold-down", "DUR", "override health.conf's hold_down (e.g. 10m)", set_duration(a.hold_down))
		.add("--nvidia-smi", "FILE", "take GPU state from this nvidia-smi -q text instead of NVML",
		     set_string(a.smi))
		.add("--no-predict", "", "do not run the predictor",
		     [&a](const std::string &) {
			     a.predict = false;
			     return std::string();
		     })
		.add("--timeout", "DUR", "no verdict within DUR (default 60s) exits 3 (unknown)",
		     set_duration(a.timeout_s, 1))
		.add("--quiet", "", "print nothing but errors (the exit code says it)", set_flag(a.quiet));
	t.epilog("Exit: 0 ok, 1 warning (suspect), 2 critical (drain), 3 unknown (cannot judge,\n"
		 "unusable configuration or usage: nothing is drained).");
	return t;
}

// health.conf (or the built-in defaults) with the command line's overrides.
// -1 when usable, else the exit code.
int load_config(CheckArgs &a, HealthConfig &c)
{
	if (!a.config_given && ::access(default_config, F_OK) == 0) {
		a.config_path = default_config;
		a.config_given = true;
	}
	if (a.config_given) {
		auto loaded = load_health_config(a.config_path);
		if (!loaded) {
			std::fprintf(stderr, "loom health check: unknown: %s\n", loaded.error().str().c_str());
			return outcome_exit_code(Outcome::unknown);
		}
		c = std::move(*loaded);
	}
	if (a.hold_down >= 0)
		c.hold_down = a.hold_down;
	if (!a.state_dir.empty())
		c.state_dir = a.state_dir;
	return -1;
}

// What Slurm says about the node, with --drain only (HealthCheckProgram):
// its state, and its Gres (the GPUs it must show, unless health.conf says
// gpu_count), kept in the hold-down state for the checks without --drain
// (a prolog or epilog must not call Slurm: one RPC per job start).
struct InSlurm {
	std::optional<SlurmNode> node;
	std::string error;
	std::string expected_from = "health.conf gpu_count";
};

InSlurm ask_slurm(const CheckArgs &a, ScontrolOps &slurm, const std::string &node, const std::string &hold_path,
		  HoldState &hold, HealthConfig &c)
{
	InSlurm s;
	int64_t gres_gpus = -1;
	if (a.drain) {
		auto got = slurm.show_nodes({node});
		if (!got)
			s.error = got.error().str();
		else if (auto it = got->find(node); it != got->end())
			s.node = it->second;
		else
			s.error = node + ": scontrol does not know this node";
		if (s.node)
			hold.gres_gpus = gres_gpus = s.node->gres_gpus;
	} else if (auto h = load_hold_state(hold_path); h) {
		gres_gpus = h->gres_gpus;
	}
	if (c.gpu_count == 0 && gres_gpus > 0) {
		c.gpu_count = gres_gpus;
		s.expected_from = s.node ? "the node's Gres in Slurm" : "the node's Gres at the last --drain check";
	}
	return s;
}

void print_verdict(const std::string &node, const NodeSample &sample, const Verdict &v, const HealthConfig &c,
		   const std::string &expected_from, double ms)
{
	std::printf("%s: %s%s%s\n", node.c_str(), outcome_name(v.outcome), v.outcome == Outcome::ok ? "" : ": ",
		    v.reason().c_str());
	for (const auto &f : v.findings)
		std::printf("  %-8s %-18s %s\n", outcome_name(f.severity), f.check.c_str(), f.evidence.c_str());
	std::printf("  (%zu GPUs from %s", sample.gpus.size(),
		    sample.gpu_source.empty() ? "nowhere" : sample.gpu_source.c_str());
	if (c.gpu_count > 0)
		std::printf(", %lld expected by %s", static_cast<long long>(c.gpu_count), expected_from.c_str());
	std::printf(", %zu Xid events, %zu IB ports; %.1f ms)\n", sample.xids.size(), sample.ib_ports.size(), ms);
}

// The verdict's consequences: the textfile, the suspect flag, Slurm.
int report(const CheckArgs &a, const std::string &node, const NodeSample &sample, const Verdict &v,
	   const HealthConfig &c, ScontrolOps &slurm, const InSlurm &in_slurm, HoldState &hold)
{
	int rc = v.exit_code();
	if (!a.prom.empty())
		if (auto st = write_file_atomic(a.prom, verdict_prometheus(node, sample, v)); !st) {
			std::fprintf(stderr, "loom health check: --prometheus: %s\n", st.error().str().c_str());
			rc = outcome_exit_code(Outcome::unknown);
		}
	if (a.drain || !a.state_dir.empty())
		if (auto st = update_suspect_flag(c.state_dir, v); !st)
			std::fprintf(stderr, "loom health check: suspect flag: %s\n", st.error().str().c_str());
	if (!a.drain)
		return rc;
	if (!in_slurm.node) {
		std::fprintf(stderr, "loom health: cannot ask Slurm about %s: %s: nothing done in Slurm\n",
			     node.c_str(), in_slurm.error.c_str());
		if (rc == 0)
			rc = outcome_exit_code(Outcome::unknown);
	} else if (act_on_slurm(slurm, *in_slurm.node, node, v, hold, c.hold_down, a.quiet) != 0 && rc == 0) {
		rc = outcome_exit_code(Outcome::unknown);
	}
	return rc;
}

NodeSample gather_node(const CheckArgs &a, const HealthConfig &c, HoldState &hold)
{
	GatherOptions g;
	g.root = a.root;
	g.kernel_logs = c.kernel_logs;
	g.syslog = c.syslog;
	g.gpu_source = c.gpu_source;
	g.nvml_library = c.nvml_library;
	g.nvidia_smi_file = a.smi;
	g.expected_gpus = static_cast<int>(c.gpu_count);
	// Kernel-log records are judged once in --drain mode on a live node: an old
	// Xid must not hold a node out of service after its GPU was reset.
	g.kmsg_cursor = a.drain && g.live() ? &hold.kmsg_cursor : nullptr;
	return gather(g);
}

} // namespace

int loom_health_check_main(int argc, char **argv)
{
	CheckArgs a;
	tool::OptionTable t = check_options(a);
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	struct stat root_st;
	if (::stat(a.root.c_str(), &root_st) != 0 || !S_ISDIR(root_st.st_mode)) {
		std::fprintf(stderr, "loom health check: --root %s: not a directory\n", a.root.c_str());
		return tool::exit_usage;
	}
	auto t0 = std::chrono::steady_clock::now();
	HealthConfig c;
	if (int rc = load_config(a, c); rc >= 0)
		return rc;
	std::signal(SIGALRM, on_deadline);
	::alarm(static_cast<unsigned>(a.timeout_s));
	bool use_state = a.drain || !a.state_dir.empty();
	const std::string node = node_name(a.node_arg);
	std::string hold_path = path_join(c.state_dir, "hold-" + node + ".json");
	HoldState hold;
	if (use_state) {
		if (auto st = make_dirs(c.state_dir); !st) {
			std::fprintf(stderr, "loom health check: unknown: state dir: %s\n", st.error().str().c_str());
			return outcome_exit_code(Outcome::unknown);
		}
		if (auto h = load_hold_state(hold_path); h)
			hold = *h;
		else
			std::fprintf(stderr, "loom health check: %s (starting afresh)\n", h.error().str().c_str());
	}
	ScontrolOps slurm(c.scontrol, static_cast<int>(c.scontrol_timeout));
	InSlurm in_slurm = ask_slurm(a, slurm, node, hold_path, hold, c);
	NodeSample sample = gather_node(a, c, hold);
	Verdict v = judge(sample, c);
	if (a.predict && use_state)
		predict_and_judge(path_join(c.state_dir, "history-" + node + ".json"), sample, c,
				  static_cast<int64_t>(std::time(nullptr)), v);
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	sample.collect_ms["total"] = ms;
	if (a.json)
		std::fputs(verdict_json(node, sample, v).c_str(), stdout);
	else if (!a.quiet)
		print_verdict(node, sample, v, c, in_slurm.expected_from, ms);
	int rc = report(a, node, sample, v, c, slurm, in_slurm, hold);
	if (use_state)
		if (auto st = save_hold_state(hold_path, hold); !st)
			std::fprintf(stderr, "loom health check: %s\n", st.error().str().c_str());
	return rc;
}
