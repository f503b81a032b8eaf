// loom health check: gather, judge, report; with --drain, drain or resume the
// node through scontrol (HealthCheckProgram). Exit 0 ok, 1 warn, 2 critical;
// bad usage or a bad config also exits 2 after saying why (fail closed: a
// health check that cannot judge must not look healthy).
#include "tools/command.hpp"

#include "lib/health/config.hpp"
#include "lib/health/drain.hpp"
#include "lib/health/gather.hpp"
#include "lib/health/predictor.hpp"
#include "lib/health/report.hpp"
#include "lib/health/rules.hpp"
#include "lib/health/subprocess.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <getopt.h>
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
		     "                         [--nvidia-smi FILE] [--no-predict] [--quiet]\n\n"
		     "  --root DIR         read /sys, /proc and logs under DIR (replay a recorded node)\n"
		     "  --json             print the verdict as JSON\n"
		     "  --prometheus FILE  write a node_exporter textfile (atomically)\n"
		     "  --node NAME        Slurm node name (default $SLURMD_NODENAME, then the host name)\n"
		     "  --drain            drain through scontrol when critical; resume nodes loom drained\n"
		     "                     once healthy for the hold-down time\n"
		     "  --state-dir DIR    hold-down state, predictor history and the suspect flag\n"
		     "Exit: 0 ok, 1 warn (suspect), 2 critical (drain) or unusable configuration.\n");
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

status ensure_dir(const std::string &dir)
{
	size_t pos = 0;
	while (pos != std::string::npos) {
		pos = dir.find('/', pos + 1);
		std::string part = dir.substr(0, pos);
		if (!part.empty() && ::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
			return unexpected(part, std::string("cannot create: ") + std::strerror(errno));
	}
	return ok();
}

int drain_step(const HealthConfig &c, const std::string &node, const Verdict &v, HoldState &hold, bool quiet)
{
	auto show = run_command({c.scontrol, "show", "node", node}, static_cast<int>(c.scontrol_timeout));
	if (!show || show->exit_code != 0) {
		std::fprintf(stderr, "loom health: cannot ask Slurm about %s: %s\n", node.c_str(),
			     show ? show->output.c_str() : show.error().str().c_str());
		return -1;
	}
	auto st = parse_scontrol_node(show->output, node);
	if (!st) {
		std::fprintf(stderr, "loom health: %s\n", st.error().str().c_str());
		return -1;
	}
	int64_t now = static_cast<int64_t>(std::time(nullptr));
	DrainDecision d = decide_drain(*st, v, hold, now, c.hold_down);
	if (!quiet)
		std::fprintf(stderr, "loom health: %s: %s: %s\n", node.c_str(), drain_step_name(d.step), d.why.c_str());
	std::vector<std::string> cmd;
	if (d.step == DrainStep::drain || d.step == DrainStep::update_reason)
		cmd = {c.scontrol, "update", "nodename=" + node, "state=drain", "reason=" + d.reason};
	else if (d.step == DrainStep::resume)
		cmd = {c.scontrol, "update", "nodename=" + node, "state=resume"};
	if (d.step == DrainStep::update_reason)
		cmd = {c.scontrol, "update", "nodename=" + node, "reason=" + d.reason};
	if (cmd.empty())
		return 0;
	auto r = run_command(cmd, static_cast<int>(c.scontrol_timeout));
	if (!r || r->exit_code != 0) {
		std::fprintf(stderr, "loom health: %s failed: %s\n", command_line(cmd).c_str(),
			     r ? r->output.c_str() : r.error().str().c_str());
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
		{nullptr, 0, nullptr, 0}};
	std::string config_path, root = "/", prom, node_arg, state_dir, hold_down, smi;
	bool json = false, drain = false, quiet = false, predict = true, config_given = false;
	optind = 1;
	int o;
	while ((o = getopt_long(argc, argv, "c:r:jp:n:ds:H:N:Pqh", opts, nullptr)) != -1) {
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
		return 2;
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
			std::fprintf(stderr, "loom health check: %s\n", loaded.error().str().c_str());
			return 2;
		}
		c = std::move(*loaded);
	}
	if (!hold_down.empty()) {
		auto d = parse_duration(hold_down);
		if (!d) {
			std::fprintf(stderr, "loom health check: --hold-down: %s\n", d.error().str().c_str());
			return 2;
		}
		c.hold_down = *d;
	}
	bool use_state = drain || !state_dir.empty();
	if (!state_dir.empty())
		c.state_dir = state_dir;
	const std::string node = node_name(node_arg);
	std::string hold_path = path_join(c.state_dir, "hold-" + node + ".json");
	HoldState hold;
	if (use_state) {
		if (auto st = ensure_dir(c.state_dir); !st) {
			std::fprintf(stderr, "loom health check: state dir: %s\n", st.error().str().c_str());
			return 2;
		}
		auto h = load_hold_state(hold_path);
		if (h)
			hold = *h;
		else
			std::fprintf(stderr, "loom health check: %s (starting afresh)\n", h.error().str().c_str());
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
		std::printf("  (%zu GPUs from %s, %zu Xid events, %zu IB ports; %.1f ms)\n", sample.gpus.size(),
			    sample.gpu_source.empty() ? "nowhere" : sample.gpu_source.c_str(), sample.xids.size(),
			    sample.ib_ports.size(), ms);
	}
	int rc = v.exit_code();
	if (!prom.empty()) {
		if (auto st = write_file_atomic(prom, verdict_prometheus(node, sample, v)); !st) {
			std::fprintf(stderr, "loom health check: --prometheus: %s\n", st.error().str().c_str());
			rc = 2;
		}
	}
	if (use_state) {
		if (auto st = update_suspect_flag(c.state_dir, v); !st)
			std::fprintf(stderr, "loom health check: suspect flag: %s\n", st.error().str().c_str());
	}
	if (drain && drain_step(c, node, v, hold, quiet) != 0)
		rc = rc == 0 ? 1 : rc;
	if (use_state)
		if (auto st = save_hold_state(hold_path, hold); !st)
			std::fprintf(stderr, "loom health check: %s\n", st.error().str().c_str());
	return rc;
}
