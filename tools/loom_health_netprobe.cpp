// loom health probe --pairs | --serve | --measure | --judge: network probes
// between nodes (lib/topo/net_probe.hpp). On a cluster: --pairs plans the
// pairs for the nodes of a job (each node once within its leaf, then across
// leaves), every node runs --serve for the probe's length, each pair's
// client runs --measure against its server, and --judge reads the result
// lines and names the slow or lossy link.
#include "tools/command.hpp"

#include "lib/topo/net_probe.hpp"
#include "lib/topo/build.hpp"
#include "lib/topo/formats.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/hostlist.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

using namespace loom;

namespace {

const char usage_text[] =
	"usage: loom health probe --pairs FABRIC NODELIST\n"
	"       loom health probe --serve [--bind ADDR] [--port P] [--for DUR]\n"
	"       loom health probe --measure ADDR [--port P] [--count N] [--payload BYTES] [--gap-ms X]\n"
	"                 [--timeout DUR] [--names CLIENT,SERVER]\n"
	"       loom health probe --judge FABRIC RESULTS [--max-loss X] [--rtt-factor X] [--rtt-floor-ms X]\n"
	"network probes between nodes: --pairs prints 'CLIENT SERVER ROUND' lines, --measure one\n"
	"'CLIENT SERVER SENT RECEIVED RTT_MS' line (UDP echo against --serve), --judge names the link.\n"
	"exit codes: 0 ok (judge: clean), 1 a bad link or a failed probe, 2 bad usage\n";

const char *cmd = "loom health probe";

int usage_error(const std::string &msg)
{
	std::fprintf(stderr, "%s: %s\n%s", cmd, msg.c_str(), usage_text);
	return tool::exit_usage;
}

expected<topo::Cluster> load(const std::string &path)
{
	auto spec = topo::read_spec_file(path);
	if (!spec)
		return unexpected(spec.error());
	return topo::build_cluster(std::move(*spec));
}

// "--key value" options after the mode's positional words.
struct Opts {
	std::vector<std::string> pos;
	std::map<std::string, std::string> kv;
	std::string error;
};
Opts parse(int argc, char **argv, std::initializer_list<const char *> keys)
{
	Opts o;
	for (int i = 2; i < argc; i++) {
		std::string a = argv[i];
		if (a.rfind("--", 0) != 0) {
			o.pos.push_back(a);
			continue;
		}
		bool known = false;
		for (const char *k : keys)
			known = known || a == k;
		if (!known) {
			o.error = "unknown option '" + a + "'";
			return o;
		}
		if (i + 1 >= argc) {
			o.error = a + " needs a value";
			return o;
		}
		o.kv[a] = argv[++i];
	}
	return o;
}

} // namespace

int loom_health_netprobe_main(int argc, char **argv)
{
	if (tool::asks_help(argc, argv)) {
		std::fputs(usage_text, stdout);
		return tool::exit_ok;
	}
	std::string mode = argc > 1 ? argv[1] : "";
	if (mode == "--pairs") {
		Opts o = parse(argc, argv, {});
		if (!o.error.empty())
			return usage_error(o.error);
		if (o.pos.size() != 2)
			return usage_error("--pairs: expected FABRIC and NODELIST");
		auto c = load(o.pos[0]);
		if (!c) {
			std::fprintf(stderr, "%s: %s\n", cmd, c.error().str().c_str());
			return tool::exit_problems;
		}
		auto hosts = hostlist_expand(o.pos[1]);
		if (!hosts)
			return tool::bad_value(cmd, "NODELIST", o.pos[1], hosts.error().str());
		auto plan = topo::plan_pairs(*c, *hosts);
		if (!plan) {
			std::fprintf(stderr, "%s: --pairs: %s\n", cmd, plan.error().str().c_str());
			return tool::exit_problems;
		}
		for (const auto &p : *plan)
			std::printf("%s %s %d\n", p.client.c_str(), p.server.c_str(), p.round);
		return tool::exit_ok;
	}
	auto duration = [&](const Opts &o, const char *k, int64_t dflt, int64_t *out) {
		auto it = o.kv.find(k);
		if (it == o.kv.end()) {
			*out = dflt;
			return true;
		}
		auto d = parse_duration(it->second);
		if (!d || *d <= 0 || *d > 3600)
			return false;
		*out = *d;
		return true;
	};
	auto integer = [&](const Opts &o, const char *k, int64_t dflt, int64_t lo, int64_t hi, int64_t *out) {
		auto it = o.kv.find(k);
		if (it == o.kv.end()) {
			*out = dflt;
			return true;
		}
		auto v = parse_int(it->second, lo, hi);
		if (!v)
			return false;
		*out = *v;
		return true;
	};
	auto real = [&](const Opts &o, const char *k, double dflt, double lo, double hi, double *out) {
		auto it = o.kv.find(k);
		if (it == o.kv.end()) {
			*out = dflt;
			return true;
		}
		auto v = parse_real(it->second, lo, hi);
		if (!v)
			return false;
		*out = *v;
		return true;
	};
	if (mode == "--serve") {
		Opts o = parse(argc, argv, {"--bind", "--port", "--for"});
		if (!o.error.empty() || !o.pos.empty())
			return usage_error(o.error.empty() ? "--serve takes no positional argument" : o.error);
		int64_t port = 0, for_s = 0;
		if (!integer(o, "--port", 18515, 1, 65535, &port))
			return tool::bad_value(cmd, "--port", o.kv["--port"], "expected 1 to 65535");
		if (!duration(o, "--for", 60, &for_s))
			return tool::bad_value(cmd, "--for", o.kv["--for"], "expected a duration up to 1h");
		if (auto st = topo::serve_echo(o.kv["--bind"], static_cast<int>(port), static_cast<double>(for_s)); !st) {
			std::fprintf(stderr, "%s: --serve: %s\n", cmd, st.error().str().c_str());
			return tool::exit_problems;
		}
		return tool::exit_ok;
	}
	if (mode == "--measure") {
		Opts o = parse(argc, argv, {"--port", "--count", "--payload", "--gap-ms", "--timeout", "--names"});
		if (!o.error.empty())
			return usage_error(o.error);
		if (o.pos.size() != 1)
			return usage_error("--measure: expected the server's ADDR");
		int64_t port = 0, count = 0, payload = 0, timeout_s = 0;
		double gap = 0;
		if (!integer(o, "--port", 18515, 1, 65535, &port))
			return tool::bad_value(cmd, "--port", o.kv["--port"], "expected 1 to 65535");
		if (!integer(o, "--count", 200, 1, 100000, &count))
			return tool::bad_value(cmd, "--count", o.kv["--count"], "expected 1 to 100000");
		if (!integer(o, "--payload", 1024, 16, 65000, &payload))
			return tool::bad_value(cmd, "--payload", o.kv["--payload"], "expected 16 to 65000 bytes");
		if (!real(o, "--gap-ms", 1, 0, 1000, &gap))
			return tool::bad_value(cmd, "--gap-ms", o.kv["--gap-ms"], "expected 0 to 1000");
		if (!duration(o, "--timeout", 2, &timeout_s))
			return tool::bad_value(cmd, "--timeout", o.kv["--timeout"], "expected a duration up to 1h");
		std::string client, server = o.pos[0];
		if (auto it = o.kv.find("--names"); it != o.kv.end()) {
			size_t comma = it->second.find(',');
			if (comma == std::string::npos || comma == 0 || comma + 1 == it->second.size())
				return tool::bad_value(cmd, "--names", it->second, "expected CLIENT,SERVER");
			client = it->second.substr(0, comma);
			server = it->second.substr(comma + 1);
		} else {
			char h[256] = {};
			(void)::gethostname(h, sizeof(h) - 1);
			client = h;
		}
		auto r = topo::measure_echo(o.pos[0], static_cast<int>(port), static_cast<int>(count),
					      static_cast<int>(payload), gap, static_cast<int>(timeout_s * 1000));
		if (!r) {
			std::fprintf(stderr, "%s: --measure: %s\n", cmd, r.error().str().c_str());
			return tool::exit_problems;
		}
		r->client = client;
		r->server = server;
		std::printf("%s\n", topo::format_result(*r).c_str());
		return tool::exit_ok;
	}
	if (mode == "--judge") {
		Opts o = parse(argc, argv, {"--max-loss", "--rtt-factor", "--rtt-floor-ms"});
		if (!o.error.empty())
			return usage_error(o.error);
		if (o.pos.size() != 2)
			return usage_error("--judge: expected FABRIC and RESULTS (a file, - for stdin)");
		topo::ProbeLimits lim;
		if (!real(o, "--max-loss", lim.max_loss, 0, 1, &lim.max_loss))
			return tool::bad_value(cmd, "--max-loss", o.kv["--max-loss"], "expected a share from 0 to 1");
		if (!real(o, "--rtt-factor", lim.rtt_factor, 1, 1000, &lim.rtt_factor))
			return tool::bad_value(cmd, "--rtt-factor", o.kv["--rtt-factor"], "expected 1 to 1000");
		if (!real(o, "--rtt-floor-ms", lim.rtt_floor_ms, 0, 60000, &lim.rtt_floor_ms))
			return tool::bad_value(cmd, "--rtt-floor-ms", o.kv["--rtt-floor-ms"], "expected 0 to 60000");
		auto c = load(o.pos[0]);
		if (!c) {
			std::fprintf(stderr, "%s: %s\n", cmd, c.error().str().c_str());
			return tool::exit_problems;
		}
		auto text = o.pos[1] == "-" ? read_file("/dev/stdin") : read_file(o.pos[1]);
		if (!text) {
			std::fprintf(stderr, "%s: %s\n", cmd, text.error().str().c_str());
			return tool::exit_problems;
		}
		auto results = topo::parse_results(*text, o.pos[1] == "-" ? "stdin" : o.pos[1]);
		if (!results) {
			std::fprintf(stderr, "%s: %s\n", cmd, results.error().str().c_str());
			return tool::exit_problems;
		}
		if (results->empty()) {
			std::fprintf(stderr, "%s: --judge: %s holds no result: nothing to judge\n", cmd, o.pos[1].c_str());
			return tool::exit_problems;
		}
		topo::ProbeVerdict v = topo::judge(*c, *results, lim);
		for (const std::string &b : v.bad_pairs)
			std::printf("bad pair: %s\n", b.c_str());
		std::printf("%s\n", v.why.c_str());
		return v.bad_pairs.empty() ? tool::exit_ok : tool::exit_problems;
	}
	return usage_error("expected --pairs, --serve, --measure or --judge");
}
