// loom health probe: the active GPU probes (memory bandwidth per GPU, an
// NCCL all-reduce across the node's GPUs); the network probes are
// loom_health_netprobe.cpp's.
#include "tools/command.hpp"
#include "tools/options.hpp"

#include "lib/health/config.hpp"
#include "lib/health/gpu_probe.hpp"
#include "lib/util/config.hpp"
#include "lib/util/json.hpp"
#include "lib/util/log.hpp"

#include <cstdio>
#include <string>
#include <unistd.h>

using namespace loom;
using namespace loom::health;

namespace {

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

struct ProbeArgs {
	bool membw = true, allreduce = true, json = false, config_given = false;
	std::string config_path = "/etc/loom/health.conf", min_busbw_arg, size_arg;
	double min_gbps = 0;
};

tool::Setter set_probes(ProbeArgs &a)
{
	return [&a](const std::string &list) {
		a.membw = a.allreduce = false;
		size_t start = 0;
		while (start <= list.size()) {
			size_t comma = list.find(',', start);
			std::string w =
				list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
			if (w == "membw")
				a.membw = true;
			else if (w == "allreduce")
				a.allreduce = true;
			else if (w == "all")
				a.membw = a.allreduce = true;
			else
				return "unknown probe '" + w + "' (membw, allreduce, all)";
			if (comma == std::string::npos)
				break;
			start = comma + 1;
		}
		return std::string();
	};
}

// A value health.conf checks (the key's own rules): kept as given.
tool::Setter set_checked(std::string &out, bool size)
{
	return [&out, size](const std::string &v) {
		if (size) {
			if (auto sz = parse_size(v); !sz)
				return sz.error().message;
		} else if (auto x = parse_real(v, 0, 1e12); !x) {
			return std::string("expected a number, 0 or more");
		}
		out = v;
		return std::string();
	};
}

tool::OptionTable probe_options(ProbeArgs &a)
{
	using namespace tool;
	OptionTable t("loom health probe", "[--probe membw,allreduce] [OPTION]...",
		      "Runs active GPU probes through the CUDA runtime and NCCL (loaded at run time).");
	t.add("--probe", "LIST",
	      "membw (device memory bandwidth per GPU), allreduce (NCCL all-reduce\n"
	      "across the node's GPUs) or all (default)",
	      set_probes(a))
		.add("--config", "FILE",
		     "health config (default /etc/loom/health.conf when it exists):\n"
		     "probe_allreduce_busbw_min, probe_allreduce_size",
		     [&a](const std::string &v) {
			     a.config_path = v;
			     a.config_given = true;
			     return std::string();
		     })
		.add("--min-gbps", "N", "memory bandwidth every GPU must reach, GB/s (default 0)",
		     set_real(a.min_gbps, 0, 1e12, "expected a number, 0 or more"))
		.add("--min-busbw", "N", "all-reduce bus bandwidth to pass, GB/s (default from the config)",
		     set_checked(a.min_busbw_arg, false))
		.add("--size", "BYTES", "all-reduce bytes per GPU (256M, 1G; default from the config)",
		     set_checked(a.size_arg, true))
		.add("--json", "", "machine-readable output", set_flag(a.json));
	t.epilog("Exit 0 when no probe failed (a probe skipped on one GPU is neither a pass nor a\n"
		 "failure), 1 when one failed or could not run (no GPU), 2 on bad usage or config.\n"
		 "The network probes between nodes: loom health probe --pairs, --serve, --measure and\n"
		 "--judge (loom health probe --serve --help).");
	return t;
}

// The config's keys; the options, given, override them (and are checked
// the way the config checks its values). -1 when usable, else the exit code.
int probe_config(const ProbeArgs &a, HealthConfig &c)
{
	if (a.config_given || ::access(a.config_path.c_str(), F_OK) == 0) {
		auto loaded = load_health_config(a.config_path);
		if (!loaded) {
			std::fprintf(stderr, "loom health probe: %s\n", loaded.error().str().c_str());
			return tool::exit_usage;
		}
		c = std::move(*loaded);
	}
	std::string overrides;
	if (!a.min_busbw_arg.empty())
		overrides += "probe_allreduce_busbw_min=" + a.min_busbw_arg + "\n";
	if (!a.size_arg.empty())
		overrides += "probe_allreduce_size=" + a.size_arg + "\n";
	if (overrides.empty())
		return -1;
	auto o2 = parse_health_config(overrides, "command line");
	if (!o2) {
		std::fprintf(stderr, "loom health probe: %s\n", o2.error().str().c_str());
		return tool::exit_usage;
	}
	if (!a.min_busbw_arg.empty())
		c.probe_allreduce_busbw_min = o2->probe_allreduce_busbw_min;
	if (!a.size_arg.empty())
		c.probe_allreduce_size = o2->probe_allreduce_size;
	return -1;
}

void print_membw(const ProbeResult &r)
{
	if (!r.ran) {
		std::printf("memory bandwidth: not run: %s\n", r.why.c_str());
		return;
	}
	std::printf("memory bandwidth: %s\n", r.passed() ? "pass" : "FAIL");
	for (const auto &g : r.gpus)
		std::printf("  GPU %d: %.0f GB/s %s%s%s\n", g.gpu, g.gb_per_s, g.passed ? "pass" : "FAIL",
			    g.error.empty() ? "" : ": ", g.error.c_str());
}

void print_allreduce(const AllReduceResult &r)
{
	if (!r.ran) {
		std::printf("all-reduce: not run: %s\n", r.why.c_str());
		return;
	}
	std::string res = r.passed() ? "pass" : r.failed() ? "FAIL" : "skipped";
	std::printf("all-reduce: %s\n  %d GPUs, NCCL %s, %zu MiB per GPU, %d iterations\n", res.c_str(), r.gpus,
		    nccl_version(r.nccl_version).c_str(), r.bytes >> 20, r.iterations);
	if (r.seconds > 0)
		std::printf("  %.0f us per all-reduce: algbw %.1f GB/s, busbw %.1f GB/s (pass at %.1f)\n",
			    r.seconds * 1e6, r.algbw_gb_per_s, r.busbw_gb_per_s, r.min_busbw_gb_per_s);
	std::printf("  data: %s\n", r.data_ok ? "every element n(n+1)/2" : "not verified");
	if (!r.error.empty())
		std::printf("  error: %s\n", r.error.c_str());
	if (r.skipped)
		std::printf("  skipped: %s\n", r.why.c_str());
}

} // namespace

int loom_health_probe_main(int argc, char **argv)
{
	ProbeArgs a;
	tool::OptionTable t = probe_options(a);
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	HealthConfig c;
	if (int rc = probe_config(a, c); rc >= 0)
		return rc;
	bool failed = false, any_passed = false;
	Json out = Json::object();
	if (a.membw) {
		ProbeResult r = probe_memory_bandwidth(a.min_gbps);
		failed |= !r.passed();
		any_passed |= r.passed();
		if (a.json)
			out.set("memory_bandwidth", membw_json(r, a.min_gbps));
		else
			print_membw(r);
	}
	if (a.allreduce) {
		AllReduceOptions ao;
		ao.min_busbw_gb_per_s = c.probe_allreduce_busbw_min;
		ao.bytes = static_cast<size_t>(c.probe_allreduce_size);
		AllReduceResult r = probe_allreduce(ao);
		failed |= !r.ran || r.failed();
		any_passed |= r.passed();
		if (a.json)
			out.set("allreduce", allreduce_json(r));
		else
			print_allreduce(r);
	}
	if (a.json) {
		out.set("result", Json::string(failed ? "fail" : any_passed ? "pass" : "skipped"));
		std::fputs(out.dump().c_str(), stdout);
	}
	return failed ? tool::exit_problems : tool::exit_ok;
}
