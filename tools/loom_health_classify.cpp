// loom health classify: the jobcomp/health classifier on the command line,
// for admins asking "why did job X fail, and what would loom do?";
// loom health stats: print the failure statistics file; loom health probe:
// the active GPU probes (memory bandwidth, NCCL all-reduce).
#include "tools/command.hpp"

#include "lib/exchange/failure_stats.hpp"
#include "lib/health/classify.hpp"
#include "lib/health/config.hpp"
#include "lib/health/gpu_probe.hpp"
#include "lib/health/job_log.hpp"
#include "lib/util/config.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <string>
#include <unistd.h>

using namespace loom;
using namespace loom::health;

namespace {

void usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom health classify --state STATE [--exit-code N] [--signal N] [--nodes n1,n2]\n"
		     "                            [--node-state NODE=STATE]... [--node-reason NODE=REASON]...\n"
		     "                            [--log FILE]... [--checkpointed] [--requeue] [--restarts N]\n"
		     "                            [--budget N] [--json]\n"
		     "Prints the failure class, the culprit nodes and what jobcomp/health would do.\n");
}

bool split_kv(const char *arg, std::string &k, std::string &v)
{
	const char *eq = std::strchr(arg, '=');
	if (!eq || eq == arg)
		return false;
	k.assign(arg, eq);
	v = eq + 1;
	return true;
}

} // namespace

int loom_health_classify_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"state", required_argument, nullptr, 's'},      {"exit-code", required_argument, nullptr, 'e'},
		{"signal", required_argument, nullptr, 'g'},     {"nodes", required_argument, nullptr, 'n'},
		{"node-state", required_argument, nullptr, 'S'}, {"node-reason", required_argument, nullptr, 'R'},
		{"log", required_argument, nullptr, 'l'},        {"checkpointed", no_argument, nullptr, 'c'},
		{"requeue", no_argument, nullptr, 'q'},          {"restarts", required_argument, nullptr, 'r'},
		{"budget", required_argument, nullptr, 'b'},     {"json", no_argument, nullptr, 'j'},
		{"help", no_argument, nullptr, 'h'},             {nullptr, 0, nullptr, 0}};
	JobEnd job;
	std::vector<std::string> logs;
	int64_t budget = 3;
	bool json = false;
	optind = 1;
	int o;
	std::string k, v;
	while ((o = getopt_long(argc, argv, "s:e:g:n:S:R:l:cqr:b:jh", opts, nullptr)) != -1) {
		expected<int64_t> n = int64_t{0};
		switch (o) {
		case 's': job.state = optarg; break;
		case 'e': n = parse_int(optarg, 0, 255); job.exit_code = static_cast<int>(n.value_or(0)); break;
		case 'g': n = parse_int(optarg, 0, 64); job.signal = static_cast<int>(n.value_or(0)); break;
		case 'n': {
			std::string s = optarg;
			size_t start = 0;
			while (start <= s.size()) {
				size_t c = s.find(',', start);
				std::string w = s.substr(start, c == std::string::npos ? std::string::npos : c - start);
				if (!w.empty())
					job.nodes.push_back(w);
				if (c == std::string::npos)
					break;
				start = c + 1;
			}
			break;
		}
		case 'S':
			if (!split_kv(optarg, k, v)) {
				std::fprintf(stderr, "loom health classify: --node-state wants NODE=STATE\n");
				return tool::exit_usage;
			}
			job.node_state[k] = v;
			break;
		case 'R':
			if (!split_kv(optarg, k, v)) {
				std::fprintf(stderr, "loom health classify: --node-reason wants NODE=REASON\n");
				return tool::exit_usage;
			}
			job.node_reason[k] = v;
			break;
		case 'l': logs.push_back(optarg); break;
		case 'c': job.checkpointed = true; break;
		case 'q': job.requeue_allowed = true; break;
		case 'r': n = parse_int(optarg, 0, 1000000); job.restart_count = static_cast<uint32_t>(n.value_or(0)); break;
		case 'b': n = parse_int(optarg, 0, 1000); budget = n.value_or(0); break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return tool::exit_usage;
		}
		if (!n) {
			std::string name = "-?";
			for (const struct option *p = opts; p->name; p++)
				if (p->val == o)
					name = std::string("--") + p->name;
			return tool::bad_value("loom health classify", name, optarg, n.error().message);
		}
	}
	if (job.state.empty() || optind != argc) {
		usage(stderr);
		return tool::exit_usage;
	}
	JobLogScan all;
	for (const auto &path : logs) {
		auto scan = scan_job_log_file(path);
		if (!scan) {
			std::fprintf(stderr, "loom health classify: %s\n", scan.error().str().c_str());
			return tool::exit_problems;
		}
		for (auto &l : scan->lines)
			all.lines.push_back(std::move(l));
		for (const auto &[kind, c] : scan->counts)
			all.counts[kind] += c;
	}
	Classification c = classify_job(job, all);
	JobDecision d = decide_job(job, c, static_cast<uint32_t>(budget));
	if (json) {
		Json out = Json::object();
		out.set("class", Json::string(failure_class_name(c.cls)));
		out.set("infrastructure", Json::boolean(is_infrastructure(c.cls)));
		Json cul = Json::array();
		for (const auto &n : c.culprits)
			cul.push(Json::string(n));
		out.set("culprits", std::move(cul));
		out.set("evidence", Json::string(c.evidence));
		out.set("requeue", Json::boolean(d.requeue));
		out.set("drain_reason", Json::string(d.reason));
		out.set("decision", Json::string(d.why));
		std::fputs(out.dump().c_str(), stdout);
	} else {
		std::printf("class: %s%s\nevidence: %s\n", failure_class_name(c.cls),
			    is_infrastructure(c.cls) ? " (infrastructure)" : "", c.evidence.c_str());
		std::string cul;
		for (const auto &n : c.culprits)
			cul += (cul.empty() ? "" : ",") + n;
		std::printf("drain: %s\nrequeue: %s\ndecision: %s\n", cul.empty() ? "none" : cul.c_str(),
			    d.requeue ? "yes" : "no", d.why.c_str());
	}
	return is_infrastructure(c.cls) ? tool::exit_problems : tool::exit_ok;
}

int loom_health_stats_main(int argc, char **argv)
{
	if (tool::asks_help(argc, argv)) {
		std::printf("usage: loom health stats FILE (failure-stats.json)\n");
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		std::string why = argc < 2   ? "a statistics file is required"
				  : argc > 2 ? "one statistics file only"
					     : "unknown option '" + std::string(argv[1]) + "'";
		std::fprintf(stderr, "loom health stats: %s\nusage: loom health stats FILE (failure-stats.json)\n",
			     why.c_str());
		return tool::exit_usage;
	}
	// A missing file is no statistics to print, not an empty table (the
	// worker's own reader takes a missing file as a fresh start).
	if (::access(argv[1], F_OK) != 0) {
		std::fprintf(stderr, "loom health stats: %s: %s\n", argv[1], std::strerror(errno));
		return tool::exit_problems;
	}
	auto s = exchange::load_failure_stats(argv[1]);
	if (!s) {
		std::fprintf(stderr, "loom health stats: %s\n", s.error().str().c_str());
		return tool::exit_problems;
	}
	std::printf("%-16s %-10s %12s %9s %14s\n", "node", "gpu_class", "exposure_h", "failures", "mtbf_h");
	for (const auto &[name, n] : s->nodes)
		std::printf("%-16s %-10s %12.1f %9lld %14s\n", name.c_str(), n.gpu_class.c_str(), n.exposure_s / 3600,
			    static_cast<long long>(n.failures),
			    n.failures ? std::to_string(n.mtbf_s() / 3600).substr(0, 10).c_str() : "-");
	for (const auto &[name, g] : s->gpu_classes)
		std::printf("%-16s %-10s %12.1f %9lld %14s\n", "(class)", name.c_str(), g.exposure_s / 3600,
			    static_cast<long long>(g.failures),
			    g.failures ? std::to_string(g.mtbf_s() / 3600).substr(0, 10).c_str() : "-");
	return 0;
}

namespace {

void probe_usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom health probe [--probe membw,allreduce] [--config FILE] [--min-gbps N]\n"
		     "                         [--min-busbw N] [--size BYTES] [--json]\n\n"
		     "  --probe LIST    membw (device memory bandwidth per GPU), allreduce (NCCL all-reduce\n"
		     "                  across the node's GPUs) or all (default)\n"
		     "  --config FILE   health config (default /etc/loom/health.conf when it exists):\n"
		     "                  probe_allreduce_busbw_min, probe_allreduce_size\n"
		     "  --min-gbps N    memory bandwidth every GPU must reach, GB/s (default 0)\n"
		     "  --min-busbw N   all-reduce bus bandwidth to pass, GB/s (default from the config)\n"
		     "  --size BYTES    all-reduce bytes per GPU (256M, 1G; default from the config)\n"
		     "Exit 0 when no probe failed (a probe skipped on one GPU is neither a pass nor a\n"
		     "failure), 1 when one failed or could not run (no GPU), 2 on bad usage or config.\n");
}

Json membw_json(const ProbeResult &r, double min)
{
	Json o = Json::object();
	o.set("result", Json::string(r.result()));
	o.set("ran", Json::boolean(r.ran));
	o.set("why", Json::string(r.why));
	o.set("min_gb_per_s", Json::number(min));
	Json gpus = Json::array();
	for (const auto &g : r.gpus) {
		Json x = Json::object();
		x.set("gpu", Json::integer(g.gpu));
		x.set("gb_per_s", Json::number(g.gb_per_s));
		x.set("passed", Json::boolean(g.passed));
		x.set("error", Json::string(g.error));
		gpus.push(std::move(x));
	}
	o.set("gpus", std::move(gpus));
	return o;
}

Json allreduce_json(const AllReduceResult &r)
{
	Json o = Json::object();
	o.set("result", Json::string(r.result()));
	o.set("ran", Json::boolean(r.ran));
	o.set("skipped", Json::boolean(r.skipped));
	o.set("why", Json::string(r.why));
	o.set("error", Json::string(r.error));
	o.set("gpu_count", Json::integer(r.gpus));
	o.set("nccl_version", Json::integer(r.nccl_version));
	o.set("bytes_per_gpu", Json::integer(static_cast<int64_t>(r.bytes)));
	o.set("iterations", Json::integer(r.iterations));
	o.set("time_us", Json::number(r.seconds * 1e6));
	o.set("algbw_gb_per_s", Json::number(r.algbw_gb_per_s));
	o.set("busbw_gb_per_s", Json::number(r.busbw_gb_per_s));
	o.set("min_busbw_gb_per_s", Json::number(r.min_busbw_gb_per_s));
	o.set("data_ok", Json::boolean(r.data_ok));
	return o;
}

std::string nccl_version(int v)
{
	// 2.9 and later: major*10000 + minor*100 + patch; before: major*1000 + minor*100 + patch.
	int major = v >= 10000 ? v / 10000 : v / 1000, minor = v >= 10000 ? v / 100 % 100 : v / 100 % 10;
	return strprintf("%d.%d.%d", major, minor, v % 100);
}

} // namespace

int loom_health_probe_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"probe", required_argument, nullptr, 'p'},     {"config", required_argument, nullptr, 'c'},
		{"min-gbps", required_argument, nullptr, 'g'},  {"min-busbw", required_argument, nullptr, 'b'},
		{"size", required_argument, nullptr, 's'},      {"json", no_argument, nullptr, 'j'},
		{"help", no_argument, nullptr, 'h'},            {nullptr, 0, nullptr, 0}};
	bool membw = true, allreduce = true, json = false;
	std::string config_path = "/etc/loom/health.conf", min_busbw_arg, size_arg;
	bool config_given = false;
	double min_gbps = 0;
	optind = 1;
	int o;
	while ((o = getopt_long(argc, argv, "p:c:g:b:s:jh", opts, nullptr)) != -1) {
		switch (o) {
		case 'p': {
			membw = allreduce = false;
			std::string list = optarg;
			size_t start = 0;
			while (start <= list.size()) {
				size_t comma = list.find(',', start);
				std::string w = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
				if (w == "membw")
					membw = true;
				else if (w == "allreduce")
					allreduce = true;
				else if (w == "all")
					membw = allreduce = true;
				else {
					std::fprintf(stderr, "loom health probe: --probe: unknown probe '%s' (membw, allreduce, all)\n",
						     w.c_str());
					return tool::exit_usage;
				}
				if (comma == std::string::npos)
					break;
				start = comma + 1;
			}
			break;
		}
		case 'c': config_path = optarg; config_given = true; break;
		case 'g': {
			char *end = nullptr;
			min_gbps = std::strtod(optarg, &end);
			if (!end || *end || !*optarg || !(min_gbps >= 0))
				return tool::bad_value("loom health probe", "--min-gbps", optarg, "expected a number, 0 or more");
			break;
		}
		case 'b': {
			char *end = nullptr;
			double b = std::strtod(optarg, &end);
			if (!end || *end || !*optarg || !(b >= 0))
				return tool::bad_value("loom health probe", "--min-busbw", optarg, "expected a number, 0 or more");
			min_busbw_arg = optarg;
			break;
		}
		case 's':
			if (auto sz = parse_size(optarg); !sz)
				return tool::bad_value("loom health probe", "--size", optarg, sz.error().message);
			size_arg = optarg;
			break;
		case 'j': json = true; break;
		case 'h': probe_usage(stdout); return 0;
		default: probe_usage(stderr); return tool::exit_usage;
		}
	}
	if (optind != argc) {
		probe_usage(stderr);
		return tool::exit_usage;
	}
	// The config's keys; the options, given, override them (and are checked
	// the way the config checks its values).
	HealthConfig c;
	if (config_given || ::access(config_path.c_str(), F_OK) == 0) {
		auto loaded = load_health_config(config_path);
		if (!loaded) {
			std::fprintf(stderr, "loom health probe: %s\n", loaded.error().str().c_str());
			return tool::exit_usage;
		}
		c = std::move(*loaded);
	}
	std::string overrides;
	if (!min_busbw_arg.empty())
		overrides += "probe_allreduce_busbw_min=" + min_busbw_arg + "\n";
	if (!size_arg.empty())
		overrides += "probe_allreduce_size=" + size_arg + "\n";
	if (!overrides.empty()) {
		auto o2 = parse_health_config(overrides, "command line");
		if (!o2) {
			std::fprintf(stderr, "loom health probe: %s\n", o2.error().str().c_str());
			return tool::exit_usage;
		}
		if (!min_busbw_arg.empty())
			c.probe_allreduce_busbw_min = o2->probe_allreduce_busbw_min;
		if (!size_arg.empty())
			c.probe_allreduce_size = o2->probe_allreduce_size;
	}
	bool failed = false, any_passed = false;
	Json out = Json::object();
	if (membw) {
		ProbeResult r = probe_memory_bandwidth(min_gbps);
		failed |= !r.passed();
		any_passed |= r.passed();
		if (json) {
			out.set("memory_bandwidth", membw_json(r, min_gbps));
		} else if (!r.ran) {
			std::printf("memory bandwidth: not run: %s\n", r.why.c_str());
		} else {
			std::printf("memory bandwidth: %s\n", r.passed() ? "pass" : "FAIL");
			for (const auto &g : r.gpus)
				std::printf("  GPU %d: %.0f GB/s %s%s%s\n", g.gpu, g.gb_per_s, g.passed ? "pass" : "FAIL",
					    g.error.empty() ? "" : ": ", g.error.c_str());
		}
	}
	if (allreduce) {
		AllReduceOptions ao;
		ao.min_busbw_gb_per_s = c.probe_allreduce_busbw_min;
		ao.bytes = static_cast<size_t>(c.probe_allreduce_size);
		AllReduceResult r = probe_allreduce(ao);
		failed |= !r.ran || r.failed();
		any_passed |= r.passed();
		if (json) {
			out.set("allreduce", allreduce_json(r));
		} else if (!r.ran) {
			std::printf("all-reduce: not run: %s\n", r.why.c_str());
		} else {
			std::string res = r.passed() ? "pass" : r.failed() ? "FAIL" : "skipped";
			std::printf("all-reduce: %s\n  %d GPUs, NCCL %s, %zu MiB per GPU, %d iterations\n", res.c_str(),
				    r.gpus, nccl_version(r.nccl_version).c_str(), r.bytes >> 20, r.iterations);
			if (r.seconds > 0)
				std::printf("  %.0f us per all-reduce: algbw %.1f GB/s, busbw %.1f GB/s (pass at %.1f)\n",
					    r.seconds * 1e6, r.algbw_gb_per_s, r.busbw_gb_per_s, r.min_busbw_gb_per_s);
			std::printf("  data: %s\n", r.data_ok ? "every element n(n+1)/2" : "not verified");
			if (!r.error.empty())
				std::printf("  error: %s\n", r.error.c_str());
			if (r.skipped)
				std::printf("  skipped: %s\n", r.why.c_str());
		}
	}
	if (json) {
		out.set("result", Json::string(failed ? "fail" : any_passed ? "pass" : "skipped"));
		std::fputs(out.dump().c_str(), stdout);
	}
	return failed ? tool::exit_problems : tool::exit_ok;
}
