// loom health classify: the jobcomp/health classifier on the command line,
// for admins asking "why did job X fail, and what would loom do?", and
// loom health stats: print the failure statistics file.
#include "tools/command.hpp"

#include "lib/health/classify.hpp"
#include "lib/health/failure_stats.hpp"
#include "lib/health/gpu_probe.hpp"
#include "lib/health/job_log.hpp"
#include "lib/util/config.hpp"
#include "lib/util/json.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <string>

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
			std::fprintf(stderr, "loom health classify: %s: %s\n", argv[optind - 1], n.error().str().c_str());
			return tool::exit_usage;
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
	if (argc != 2 || std::strcmp(argv[1], "--help") == 0) {
		std::fprintf(argc == 2 ? stdout : stderr, "usage: loom health stats FILE (failure-stats.json)\n");
		return argc == 2 ? 0 : tool::exit_usage;
	}
	auto s = load_failure_stats(argv[1]);
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

int loom_health_probe_main(int argc, char **argv)
{
	double min = 0;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--min-gbps" && i + 1 < argc) {
			char *end = nullptr;
			min = std::strtod(argv[++i], &end);
			if (!end || *end || min < 0) {
				std::fprintf(stderr, "loom health probe: --min-gbps wants a number\n");
				return tool::exit_usage;
			}
		} else {
			std::fprintf(a == "--help" ? stdout : stderr, "usage: loom health probe [--min-gbps N]\n"
				     "Device-to-device copy bandwidth per GPU; exit 0 when every GPU reaches N GB/s,\n"
				     "1 when one does not or when there is no GPU to measure.\n");
			return a == "--help" ? 0 : tool::exit_usage;
		}
	}
	ProbeResult r = probe_memory_bandwidth(min);
	if (!r.ran) {
		std::printf("probe: not run: %s\n", r.why.c_str());
		return tool::exit_problems;
	}
	for (const auto &g : r.gpus)
		std::printf("GPU %d: %.0f GB/s %s\n", g.gpu, g.gb_per_s, g.passed ? "pass" : "FAIL");
	return r.passed() ? tool::exit_ok : tool::exit_problems;
}
