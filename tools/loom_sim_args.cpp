// loom sim: its options, one table (loom_sim_args.hpp; loom-sim(1)).
#include "tools/loom_sim_args.hpp"

#include "tools/command.hpp"

#include "lib/place/spares.hpp"
#include "lib/place/tiers.hpp"
#include "lib/sim/placer.hpp"
#include "lib/util/config.hpp"

#include <cmath>
#include <memory>

namespace loom::tool {

namespace {

std::vector<std::string> split_list(const std::string &s)
{
	std::vector<std::string> out;
	size_t b = 0;
	for (;;) {
		size_t e = s.find(',', b);
		std::string w = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
		if (!w.empty())
			out.push_back(w);
		if (e == std::string::npos)
			return out;
		b = e + 1;
	}
}

Setter add_placers(std::vector<std::string> &out)
{
	return [&out](const std::string &v) {
		for (const std::string &p : split_list(v)) {
			bool known = false;
			for (const std::string &n : sim::placer_names())
				known |= n == p;
			if (!known)
				return "'" + p + "': expected loom, tree, firstfit or block";
			out.push_back(p);
		}
		return std::string();
	};
}

Setter set_ckpt_interval(int64_t &out)
{
	return [&out](const std::string &v) {
		if (v == "auto") {
			out = 0;
			return std::string();
		}
		auto d = parse_duration(v);
		if (!d || *d < 1)
			return std::string("expected auto or a duration such as 30m");
		out = *d;
		return std::string();
	};
}

Setter set_standby(int64_t &out)
{
	return [&out](const std::string &v) {
		if (v == "auto") {
			out = -1;
			return std::string();
		}
		auto n = parse_int(v, 0, 1024);
		if (!n)
			return std::string("expected auto or a number of nodes from 0 to 1024");
		out = *n;
		return std::string();
	};
}

Setter set_spares(SimArgs &a)
{
	return [&a](const std::string &v) {
		auto sp = place::parse_spares(v);
		if (!sp)
			return sp.error().message;
		int64_t lend = a.base.spares.lend_max_s;
		a.base.spares = *sp;
		a.base.spares.lend_max_s = lend;
		a.spares_text = v;
		return std::string();
	};
}

Setter set_degraded(SimArgs &a)
{
	return [&a](const std::string &v) {
		size_t colon = v.find(':');
		auto n = parse_int(v.substr(0, colon), 0, 1000000);
		auto f = colon == std::string::npos ? expected<double>(a.base.degraded_factor)
						    : parse_real(v.substr(colon + 1), 1e-3, 1);
		if (!n || !f)
			return std::string(
				"expected N[:FACTOR], a whole number of leaves and a factor from 0.001 to 1");
		a.base.degraded_uplinks = static_cast<int>(*n);
		a.base.degraded_factor = *f;
		return std::string();
	};
}

Setter set_class_speed(std::map<std::string, double> &out)
{
	return [&out](const std::string &v) {
		for (const std::string &item : split_list(v)) {
			auto eq = item.find('=');
			auto x = eq == std::string::npos || eq == 0 ? expected<double>(unexpected("no '='"))
								    : parse_real(item.substr(eq + 1), 1e-3, 1e3);
			if (!x)
				return "'" + item + "': expected CLASS=SPEED with SPEED from 0.001 to 1000";
			out[item.substr(0, eq)] = *x;
		}
		return std::string();
	};
}

Setter read_tiers(sim::RunConfig &b)
{
	return [&b](const std::string &v) {
		auto t = place::read_tier_table(v);
		if (!t)
			return t.error().str();
		if (t->empty())
			return v + ": no gpu_class.NAME in this file";
		b.weights.tiers = std::make_shared<const place::TierTable>(std::move(*t));
		return std::string();
	};
}

Setter set_cost(double &out)
{
	return [&out](const std::string &v) {
		auto d = parse_duration(v);
		if (!d)
			return d.error().message;
		out = static_cast<double>(*d);
		return std::string();
	};
}

void add_inputs(OptionTable &t, SimArgs &a)
{
	t.add("--cluster", "FILE", "loom cluster file (loom topo build)", set_string(a.cluster_file))
		.add("--generate", "SPEC", "a generated cluster, e.g. \"gpus=10240 fabric=nvl72 classes=h100,b200\"",
		     set_string(a.gen))
		.add("--trace", "FILE", "Philly (timestamp,duration,num_gpus,...) or Alibaba v2023 pod list CSV",
		     set_string(a.trace_file))
		.add("--generate-jobs", "SPEC", "a generated large-model mix, e.g. \"days=7 load=0.9 large_share=0.5\"",
		     set_string(a.gen_jobs))
		.add("--out", "DIR", "where the CSV files, the SVG plots and params.txt go", set_string(a.out_dir))
		.add("--placer", "NAME",
		     "loom, tree, firstfit, block (repeat or comma-separate; default loom,tree,firstfit,\n"
		     "and block on clusters with NVLink domains)",
		     add_placers(a.placers))
		.add("--failures", "MODEL|default|none",
		     "failure model file; default: Llama 3's rates and causes; none: no failures",
		     set_string(a.failures))
		.add("--days", "N", "simulated days (jobs arriving later are left out; default: the trace's span)",
		     set_int(a.days, 1, 36500))
		.add("--seed", "N", "failures and generated jobs (default 1)", set_int(a.seed, 0, INT64_MAX))
		.add("--time-scale", "X", "arrivals X times as fast",
		     set_real(a.time_scale, 1e-3, 1e3, "expected a number from 0.001 to 1000"))
		.add("--size-scale", "X", "jobs X times as large",
		     set_real(a.size_scale, 1e-3, 1e3, "expected a number from 0.001 to 1000"))
		.add("--load", "X", "the time scale that offers X GPU-hours per GPU-hour of the cluster",
		     set_real(a.load, 0.01, 10, "expected offered load from 0.01 to 10 (GPU-hours asked per GPU-hour)"))
		.add("--skip-days", "N", "start N days into the trace", set_int(a.skip_days, 0, 36500))
		.add("--large-gpus", "N", "jobs of N GPUs or more count as large (ETTR; default 1024)",
		     set_int(a.large, 1, 1 << 20));
}

void add_checkpoints_and_spares(OptionTable &t, SimArgs &a)
{
	sim::RunConfig &b = a.base;
	t.add("--ckpt-interval", "auto|DUR", "auto (Daly, from the job's MTBF; default) or a fixed interval",
	      set_ckpt_interval(b.ckpt.interval_s))
		.add("--ckpt-cost", "DUR", "blocking time of one checkpoint (default 60s)", set_cost(b.ckpt.cost_s))
		.add("--restart-cost", "DUR", "restore and warm-up after a restart (default 300s)",
		     set_duration(b.ckpt.restart_s))
		.add("--spares", "SPEC",
		     "a spare pool, as loom-topo.conf's spares= (\"nvlink:1,pod:2%\"; default none)", set_spares(a))
		.add("--spare-lend", "DUR",
		     "jobs with a time limit up to DUR may use spares (spare_lend=; default 30m)",
		     set_duration(b.spares.lend_max_s))
		.add("--replace-time", "DUR", "failure detected to running again on spares (default 10s)",
		     set_duration(b.replace_s))
		.add("--migrate", "yes|no",
		     "--ckpt jobs move off a node marked suspect (spank_ckpt migrate=; default no)",
		     set_yes_no(b.migrate))
		.add("--standby", "N|auto",
		     "standby nodes a --ckpt job of --standby-min-gpus or more holds in its allocation; a failed node "
		     "is replaced by one without a requeue (--ckpt-standby; auto: enough for its failures over its "
		     "time limit with probability --standby-p; default 0)",
		     set_standby(b.standby))
		.add("--standby-p", "P", "the probability auto standbys cover a job's failures (default 0.9)",
		     set_real(b.standby_p, 0.5, 0.9999, "a probability from 0.5 to 0.9999"))
		.add("--standby-min-gpus", "N", "the smallest job that holds standbys (default 1024)",
		     set_int(b.standby_min_gpus, 1, 1 << 24))
		.add("--in-alloc-time", "DUR",
		     "failure detected to the step running again inside the allocation (default 15s)",
		     set_duration(b.in_alloc_s));
}

void add_model(OptionTable &t, SimArgs &a)
{
	sim::RunConfig &b = a.base;
	t.add("--class-speed", "LIST", "relative speed per GPU class: \"a100=1,h100=2.5\" (default 1 each)",
	      set_class_speed(b.cost.class_speed))
		.add("--weights", "FILE", "placement weights for the loom placer", set_string(a.weights_file))
		.add("--comm-model", "share|ring",
		     "share (every GPU's traffic crosses each domain it spans; default) or ring\n"
		     "(a ring all-reduce in the job's rank order: only edges leaving a domain)",
		     [&b](const std::string &v) {
			     auto m = sim::parse_comm_model(v);
			     if (!m)
				     return std::string("expected share or ring");
			     b.cost.model = *m;
			     return std::string();
		     })
		.add("--contention", "yes|no",
		     "an uplink is shared by the jobs running across it at a job's start, not by\n"
		     "every GPU under it (default no: a full domain)",
		     set_yes_no(b.contention))
		.add("--rank-order", "yes|no",
		     "ring: jobs run in loom's rank order (LOOM_HOSTFILE), else Slurm's (default no)",
		     set_yes_no(b.cost.rank_order))
		.add("--degraded-uplinks", "N[:FACTOR]",
		     "N leaves, spread over the cluster, have uplinks at FACTOR of their capacity\n(default 0.25)",
		     set_degraded(a))
		.add("--link-marks", "SHARE",
		     "that share of each such leaf's nodes carries a link check's suspect mark,\n"
		     "which select/topo weighs (default 0: placement does not see it)",
		     set_real(b.link_marks, 0, 1, "expected a share of the leaf's nodes from 0 to 1"))
		.add_input("--topo-conf", "FILE",
			   "GPU classes, prices and tiers (loom-topo.conf's gpu_class.NAME, gpu_tier.NAME,\n"
			   "offpeak): class speeds from their throughput, a cost per job",
			   read_tiers(b))
		.add("--tier-mode", "engine|by-hand|any",
		     "jobs with a tier (generated tiers=): engine (as --gpu-tier; default),\n"
		     "by-hand (the class a person would name) or any (no class)",
		     set_choice(b.tier_mode, {"engine", "by-hand", "any"}));
}

void add_output(OptionTable &t, SimArgs &a)
{
	t.add("--dump-at", "HOURS",
	      "write the state, request and decision of the first placement after HOURS\n"
	      "to DIR/PLACER/dump-*.txt (replay with loom place --explain)",
	      set_real(a.dump_h, 0, 1e6, "expected hours from the start"))
		.add("--progress", "yes|no|auto", "a progress line on stderr (auto: when stderr is a terminal)",
		     set_choice(a.progress, {"yes", "no", "auto"}))
		.add("--quiet", "", "no parameters printed before the summary", set_flag(a.quiet));
}

} // namespace

OptionTable sim_options(SimArgs &a)
{
	OptionTable t(
		"loom sim",
		"(--cluster FILE | --generate SPEC) (--trace FILE | --generate-jobs SPEC) --out DIR [OPTION]...",
		"Replays jobs against a cluster under a Slurm-like scheduler loop (priority, backfill, time limits,\n"
		"requeue) with each placer in turn, the same jobs and the same failures for each; writes CSV files\n"
		"and SVG plots to DIR and prints a summary.");
	add_inputs(t, a);
	add_checkpoints_and_spares(t, a);
	add_model(t, a);
	add_output(t, a);
	t.epilog("Exit: 0 done, 1 bad input or a failed run, 2 bad usage.");
	return t;
}

int check_sim_args(const OptionTable &t, const SimArgs &a)
{
	if (a.base.cost.rank_order && a.base.cost.model != sim::CommModel::ring) {
		std::fprintf(stderr, "loom sim: --rank-order yes needs --comm-model ring (the share model does not "
				     "depend on the order)\n");
		return exit_usage;
	}
	if (a.cluster_file.empty() == a.gen.empty() || a.trace_file.empty() == a.gen_jobs.empty() ||
	    a.out_dir.empty()) {
		std::fprintf(stderr, "loom sim: give one of --cluster and --generate, one of --trace and "
				     "--generate-jobs, and --out\n");
		t.usage(stderr);
		return exit_usage;
	}
	return -1;
}

} // namespace loom::tool
