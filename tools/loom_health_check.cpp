// loom health check: gather, judge, report; with --drain, act on the node in
// Slurm (HealthCheckProgram): drain, resume, mark and clear suspect, through
// lib/health/slurm_ops. Exit codes are Nagios's: 0 ok, 1 warning (suspect),
// 2 critical (drain), 3 unknown (the check cannot judge: no GPU data where
// GPUs are expected, a collector that cannot read, a bad config, no verdict
// within the deadline). A check that cannot judge never looks healthy, and
// --drain never drains on unknown.
#include "tools/command.hpp"

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
#include <csignal>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <getopt.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace loom;
using namespace loom::health;

namespace {

constexpr const char *default_config = "/etc/loom/health.conf";

void usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom health check [--config FILE] [--root DIR] [--json] [--prometheus FILE]\n"
		     "                         [--node NAME] [--drain] [--state-dir DIR] [--hold-down DUR]\n"
		     "                         [--nvidia-smi FILE] [--no-predict] [--timeout DUR] [--quiet]\n\n"
		     "  --root DIR         read /sys, /proc and logs under DIR (replay a recorded node)\n"
		     "  --json             print the verdict as JSON\n"
		     "  --prometheus FILE  write a node_exporter textfile (atomically)\n"
		     "  --node NAME        Slurm node name (default $SLURMD_NODENAME, then the host name)\n"
		     "  --drain            act on the node in Slurm: drain when critical, mark it suspect\n"
		     "                     (Extra=loom:suspect:...) when suspect or unknown; resume and\n"
		     "                     clear what loom set once ok for the hold-down time\n"
		     "  --state-dir DIR    hold-down state, predictor history and the suspect flag\n"
		     "  --timeout DUR      no verdict within DUR (default 60s) exits 3 (unknown)\n"
		     "Exit: 0 ok, 1 warning (suspect), 2 critical (drain), 3 unknown (cannot judge,\n"
		     "unusable configuration or usage: nothing is drained).\n");
}

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

} // namespace

int loom_health_check_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, nullptr, 'c'}, {"root", required_argument, nullptr, 'r'},
		{"json", no_argument, nullptr, 'j'},          {"prometheus", required_argument, nullptr, 'p'},
		{"node", required_argument, nullptr, 'n'},    {"drain", no_argument, nullptr, 'd'},
		{"state-dir", required_argument, nullptr, 's'}, {"hold-down", required_argument, nullptr, 'H'},
		{"nvidia-smi", required_argument, nullptr, 'N'}, {"no-predict", no_argument, nullptr, 'P'},
		{"quiet", no_argument, nullptr, 'q'},         {"help", no_argument, nullptr, 'h'},
		{"timeout", required_argument, nullptr, 'T'}, {nullptr, 0, nullptr, 0}};
	std::string config_path, root = "/", prom, node_arg, state_dir, hold_down, smi, timeout = "60s";
	bool json = false, drain = false, quiet = false, predict = true, config_given = false;
	optind = 1;
	int o;
	while ((o = getopt_long(argc, argv, "c:r:jp:n:ds:H:N:PqhT:", opts, nullptr)) != -1) {
		switch (o) {
		case 'c': config_path = optarg; config_given = true; break;
		case 'r': root = optarg; break;
		case 'j': json = true; break;
		case 'p': prom = optarg; break;
		case 'n': node_arg = optarg; break;
		case 'd': drain = true; break;
		case 's': state_dir = optarg; break;
		case 'H': hold_down = optarg; break;
		case 'N': smi = optarg; break;
		case 'P': predict = false; break;
		case 'q': quiet = true; break;
		case 'T': timeout = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return tool::exit_usage;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return tool::exit_usage;
	}
	struct stat root_st;
	if (::stat(root.c_str(), &root_st) != 0 || !S_ISDIR(root_st.st_mode)) {
		std::fprintf(stderr, "loom health check: --root %s: not a directory\n", root.c_str());
		return tool::exit_usage;
	}
	auto deadline = parse_duration(timeout);
	if (!deadline || *deadline < 1) {
		std::fprintf(stderr, "loom health check: --timeout '%s': %s\n", timeout.c_str(),
			     deadline ? "must be at least 1s" : deadline.error().message.c_str());
		return tool::exit_usage;
	}
	auto t0 = std::chrono::steady_clock::now();
	HealthConfig c;
	if (!config_given && ::access(default_config, F_OK) == 0) {
		config_path = default_config;
		config_given = true;
	}
	if (config_given) {
		auto loaded = load_health_config(config_path);
		if (!loaded) {
			std::fprintf(stderr, "loom health check: unknown: %s\n", loaded.error().str().c_str());
			return outcome_exit_code(Outcome::unknown);
		}
		c = std::move(*loaded);
	}
	if (!hold_down.empty()) {
		auto d = parse_duration(hold_down);
		if (!d) {
			std::fprintf(stderr, "loom health check: --hold-down '%s': %s\n", hold_down.c_str(),
				     d.error().message.c_str());
			return tool::exit_usage;
		}
		c.hold_down = *d;
	}
	std::signal(SIGALRM, on_deadline);
	::alarm(static_cast<unsigned>(*deadline));
	bool use_state = drain || !state_dir.empty();
	if (!state_dir.empty())
		c.state_dir = state_dir;
	const std::string node = node_name(node_arg);
	std::string hold_path = path_join(c.state_dir, "hold-" + node + ".json");
	HoldState hold;
	if (use_state) {
		if (auto st = make_dirs(c.state_dir); !st) {
			std::fprintf(stderr, "loom health check: unknown: state dir: %s\n", st.error().str().c_str());
			return outcome_exit_code(Outcome::unknown);
		}
		auto h = load_hold_state(hold_path);
		if (h)
			hold = *h;
		else
			std::fprintf(stderr, "loom health check: %s (starting afresh)\n", h.error().str().c_str());
	}
	// What Slurm says about the node, with --drain only (HealthCheckProgram):
	// its state, and its Gres (the GPUs it must show, unless health.conf says
	// gpu_count), kept in the hold-down state for the checks without --drain
	// (a prolog or epilog must not call Slurm: one RPC per job start).
	ScontrolOps slurm(c.scontrol, static_cast<int>(c.scontrol_timeout));
	std::optional<SlurmNode> in_slurm;
	std::string slurm_error;
	int64_t gres_gpus = -1;
	if (drain) {
		auto got = slurm.show_nodes({node});
		if (!got)
			slurm_error = got.error().str();
		else if (auto it = got->find(node); it != got->end())
			in_slurm = it->second;
		else
			slurm_error = node + ": scontrol does not know this node";
		if (in_slurm)
			hold.gres_gpus = gres_gpus = in_slurm->gres_gpus;
	} else if (auto h = load_hold_state(hold_path); h) {
		gres_gpus = h->gres_gpus;
	}
	std::string expected_from = "health.conf gpu_count";
	if (c.gpu_count == 0 && gres_gpus > 0) {
		c.gpu_count = gres_gpus;
		expected_from = in_slurm ? "the node's Gres in Slurm" : "the node's Gres at the last --drain check";
	}
	GatherOptions g;
	g.root = root;
	g.kernel_logs = c.kernel_logs;
	g.syslog = c.syslog;
	g.gpu_source = c.gpu_source;
	g.nvml_library = c.nvml_library;
	g.nvidia_smi_file = smi;
	g.expected_gpus = static_cast<int>(c.gpu_count);
	// Kernel-log records are judged once in --drain mode on a live node: an old
	// Xid must not hold a node out of service after its GPU was reset.
	g.kmsg_cursor = drain && g.live() ? &hold.kmsg_cursor : nullptr;
	NodeSample sample = gather(g);
	Verdict v = judge(sample, c);
	if (predict && use_state)
		predict_and_judge(path_join(c.state_dir, "history-" + node + ".json"), sample, c,
				  static_cast<int64_t>(std::time(nullptr)), v);
	double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
	sample.collect_ms["total"] = ms;
	if (json) {
		std::fputs(verdict_json(node, sample, v).c_str(), stdout);
	} else if (!quiet) {
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
	int rc = v.exit_code();
	if (!prom.empty()) {
		if (auto st = write_file_atomic(prom, verdict_prometheus(node, sample, v)); !st) {
			std::fprintf(stderr, "loom health check: --prometheus: %s\n", st.error().str().c_str());
			rc = outcome_exit_code(Outcome::unknown);
		}
	}
	if (use_state) {
		if (auto st = update_suspect_flag(c.state_dir, v); !st)
			std::fprintf(stderr, "loom health check: suspect flag: %s\n", st.error().str().c_str());
	}
	if (drain) {
		if (!in_slurm) {
			std::fprintf(stderr, "loom health: cannot ask Slurm about %s: %s: nothing done in Slurm\n", node.c_str(),
				     slurm_error.c_str());
			if (rc == 0)
				rc = outcome_exit_code(Outcome::unknown);
		} else if (act_on_slurm(slurm, *in_slurm, node, v, hold, c.hold_down, quiet) != 0 && rc == 0) {
			rc = outcome_exit_code(Outcome::unknown);
		}
	}
	if (use_state)
		if (auto st = save_hold_state(hold_path, hold); !st)
			std::fprintf(stderr, "loom health check: %s\n", st.error().str().c_str());
	return rc;
}
