// loom health probe --pairs | --serve | --measure | --judge: network probes
// between nodes (lib/topo/net_probe.hpp). On a cluster: --pairs plans the
// pairs for the nodes of a job (each node once within its leaf, then across
// leaves), every node runs --serve for the probe's length, each pair's
// client runs --measure against its server, and --judge reads the result
// lines and names the slow or lossy link.
#include "tools/command.hpp"
#include "tools/options.hpp"

#include "lib/topo/build.hpp"
#include "lib/topo/formats.hpp"
#include "lib/topo/net_probe.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"
#include "lib/util/log.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

using namespace loom;

namespace {

const char *cmd = "loom health probe";

expected<topo::Cluster> load(const std::string &path)
{
	auto spec = topo::read_spec_file(path);
	if (!spec)
		return unexpected(spec.error());
	return topo::build_cluster(std::move(*spec));
}

struct NetArgs {
	std::string mode, bind, names;
	std::vector<std::string> pos, given;
	int64_t port = 18515, for_s = 60, count = 200, payload = 1024, timeout_s = 2;
	double gap_ms = 1;
	topo::ProbeLimits lim;
};

// Which options each mode takes.
const std::map<std::string, std::vector<std::string>> mode_options = {
	{"--pairs", {}},
	{"--serve", {"--bind", "--port", "--for"}},
	{"--measure", {"--port", "--count", "--payload", "--gap-ms", "--timeout", "--names"}},
	{"--judge", {"--max-loss", "--rtt-factor", "--rtt-floor-ms"}},
};

tool::Setter set_mode(NetArgs &a, const char *mode)
{
	return [&a, mode](const std::string &) {
		if (!a.mode.empty() && a.mode != mode)
			return "one of --pairs, --serve, --measure and --judge, not " + a.mode + " and " + mode;
		a.mode = mode;
		return std::string();
	};
}

tool::Setter set_seconds_upto_1h(int64_t &out)
{
	return [&out](const std::string &v) {
		auto d = parse_duration(v);
		if (!d || *d <= 0 || *d > 3600)
			return std::string("expected a duration up to 1h");
		out = *d;
		return std::string();
	};
}

tool::OptionTable net_options(NetArgs &a)
{
	using namespace tool;
	OptionTable t(cmd, "--pairs FABRIC NODELIST",
		      "Network probes between nodes: --pairs prints 'CLIENT SERVER ROUND' lines, --measure one\n"
		      "'CLIENT SERVER SENT RECEIVED RTT_MS' line (UDP echo against --serve), --judge names the link.");
	t.also("--serve [--bind ADDR] [--port P] [--for DUR]")
		.also("--measure ADDR [--port P] [--count N] [--payload BYTES] [--gap-ms X] [--timeout DUR]\n"
		      "                 [--names CLIENT,SERVER]")
		.also("--judge FABRIC RESULTS [--max-loss X] [--rtt-factor X] [--rtt-floor-ms X]");
	t.add("--pairs", "", "plan the pairs for the nodes of a job (each node once within its leaf, then across)",
	      set_mode(a, "--pairs"))
		.add("--serve", "", "answer the probe's UDP echo for --for (default 60s)", set_mode(a, "--serve"))
		.add("--measure", "", "probe the server at ADDR and print the result line", set_mode(a, "--measure"))
		.add("--judge", "", "read the result lines (RESULTS a file, - for stdin) and name a bad link",
		     set_mode(a, "--judge"))
		.add("--bind", "ADDR", "the address to serve on (default all)",
		     noted(a.given, "--bind", set_string(a.bind)))
		.add("--port", "P", "the UDP port (default 18515)", noted(a.given, "--port", set_int(a.port, 1, 65535)))
		.add("--for", "DUR", "how long to serve (up to 1h)",
		     noted(a.given, "--for", set_seconds_upto_1h(a.for_s)))
		.add("--count", "N", "echo packets to send (default 200)",
		     noted(a.given, "--count", set_int(a.count, 1, 100000)))
		.add("--payload", "BYTES", "bytes per packet, 16 to 65000 (default 1024)",
		     noted(a.given, "--payload", set_int(a.payload, 16, 65000)))
		.add("--gap-ms", "X", "milliseconds between packets (default 1)",
		     noted(a.given, "--gap-ms", set_real(a.gap_ms, 0, 1000, "expected 0 to 1000")))
		.add("--timeout", "DUR", "how long to wait for the last answer (default 2s, up to 1h)",
		     noted(a.given, "--timeout", set_seconds_upto_1h(a.timeout_s)))
		.add("--names", "CLIENT,SERVER", "the node names for the result line (default: this host, ADDR)",
		     noted(a.given, "--names", set_string(a.names)))
		.add("--max-loss", "X", strprintf("the share of packets a link may lose (default %g)", a.lim.max_loss),
		     noted(a.given, "--max-loss", set_real(a.lim.max_loss, 0, 1, "expected a share from 0 to 1")))
		.add("--rtt-factor", "X",
		     strprintf("a link slower than X times its peers' median is bad (default %g)", a.lim.rtt_factor),
		     noted(a.given, "--rtt-factor", set_real(a.lim.rtt_factor, 1, 1000, "expected 1 to 1000")))
		.add("--rtt-floor-ms", "X",
		     strprintf("round trips under X ms are never slow (default %g)", a.lim.rtt_floor_ms),
		     noted(a.given, "--rtt-floor-ms", set_real(a.lim.rtt_floor_ms, 0, 60000, "expected 0 to 60000")))
		.positional([&a](const std::string &v) {
			a.pos.push_back(v);
			return std::string();
		});
	t.epilog("Exit: 0 ok (judge: clean), 1 a bad link or a failed probe, 2 bad usage.");
	return t;
}

int usage_error(const tool::OptionTable &t, const std::string &msg)
{
	std::fprintf(stderr, "%s: %s\n", cmd, msg.c_str());
	t.usage(stderr);
	return tool::exit_usage;
}

int pairs(const NetArgs &a)
{
	auto c = load(a.pos[0]);
	if (!c) {
		std::fprintf(stderr, "%s: %s\n", cmd, c.error().str().c_str());
		return tool::exit_problems;
	}
	auto hosts = hostlist_expand(a.pos[1]);
	if (!hosts)
		return tool::bad_value(cmd, "NODELIST", a.pos[1], hosts.error().str());
	auto plan = topo::plan_pairs(*c, *hosts);
	if (!plan) {
		std::fprintf(stderr, "%s: --pairs: %s\n", cmd, plan.error().str().c_str());
		return tool::exit_problems;
	}
	for (const auto &p : *plan)
		std::printf("%s %s %d\n", p.client.c_str(), p.server.c_str(), p.round);
	return tool::exit_ok;
}

int serve(const NetArgs &a)
{
	if (auto st = topo::serve_echo(a.bind, static_cast<int>(a.port), static_cast<double>(a.for_s)); !st) {
		std::fprintf(stderr, "%s: --serve: %s\n", cmd, st.error().str().c_str());
		return tool::exit_problems;
	}
	return tool::exit_ok;
}

int measure(const NetArgs &a)
{
	std::string client, server = a.pos[0];
	if (!a.names.empty()) {
		size_t comma = a.names.find(',');
		if (comma == std::string::npos || comma == 0 || comma + 1 == a.names.size())
			return tool::bad_value(cmd, "--names", a.names, "expected CLIENT,SERVER");
		client = a.names.substr(0, comma);
		server = a.names.substr(comma + 1);
	} else {
		char h[256] = {};
		(void)::gethostname(h, sizeof(h) - 1);
		client = h;
	}
	auto r = topo::measure_echo(a.pos[0], static_cast<int>(a.port), static_cast<int>(a.count),
				    static_cast<int>(a.payload), a.gap_ms, static_cast<int>(a.timeout_s * 1000));
	if (!r) {
		std::fprintf(stderr, "%s: --measure: %s\n", cmd, r.error().str().c_str());
		return tool::exit_problems;
	}
	r->client = client;
	r->server = server;
	std::printf("%s\n", topo::format_result(*r).c_str());
	return tool::exit_ok;
}

int judge_results(const NetArgs &a)
{
	auto c = load(a.pos[0]);
	if (!c) {
		std::fprintf(stderr, "%s: %s\n", cmd, c.error().str().c_str());
		return tool::exit_problems;
	}
	const std::string &file = a.pos[1];
	auto text = file == "-" ? read_file("/dev/stdin") : read_file(file);
	if (!text) {
		std::fprintf(stderr, "%s: %s\n", cmd, text.error().str().c_str());
		return tool::exit_problems;
	}
	auto results = topo::parse_results(*text, file == "-" ? "stdin" : file);
	if (!results) {
		std::fprintf(stderr, "%s: %s\n", cmd, results.error().str().c_str());
		return tool::exit_problems;
	}
	if (results->empty()) {
		std::fprintf(stderr, "%s: --judge: %s holds no result: nothing to judge\n", cmd, file.c_str());
		return tool::exit_problems;
	}
	topo::ProbeVerdict v = topo::judge(*c, *results, a.lim);
	for (const std::string &b : v.bad_pairs)
		std::printf("bad pair: %s\n", b.c_str());
	std::printf("%s\n", v.why.c_str());
	return v.bad_pairs.empty() ? tool::exit_ok : tool::exit_problems;
}

} // namespace

int loom_health_netprobe_main(int argc, char **argv)
{
	NetArgs a;
	tool::OptionTable t = net_options(a);
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	auto it = mode_options.find(a.mode);
	if (it == mode_options.end())
		return usage_error(t, "expected --pairs, --serve, --measure or --judge");
	for (const std::string &g : a.given)
		if (std::find(it->second.begin(), it->second.end(), g) == it->second.end())
			return usage_error(t, g + " is not an option of " + a.mode);
	size_t want = a.mode == "--serve" ? 0 : a.mode == "--measure" ? 1 : 2;
	if (a.pos.size() != want)
		return usage_error(t, a.mode == "--serve"     ? "--serve takes no positional argument"
				      : a.mode == "--measure" ? "--measure: expected the server's ADDR"
				      : a.mode == "--pairs"
					      ? "--pairs: expected FABRIC and NODELIST"
					      : "--judge: expected FABRIC and RESULTS (a file, - for stdin)");
	if (a.mode == "--pairs")
		return pairs(a);
	if (a.mode == "--serve")
		return serve(a);
	return a.mode == "--measure" ? measure(a) : judge_results(a);
}
