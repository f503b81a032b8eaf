// loom sim: replay a job trace on a (generated) cluster with loom's own
// engines and Slurm-like baselines; see loom-sim(1). The options are
// loom_sim_args.cpp's table.
#include "tools/command.hpp"
#include "tools/loom_sim_args.hpp"

#include "lib/place/spares.hpp"
#include "lib/sim/cluster_gen.hpp"
#include "lib/sim/placer.hpp"
#include "lib/sim/report.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

using namespace loom;
using tool::SimArgs;

// "loom sim: WHY" on stderr; returns 'rc'.
int say(const Error &e, int rc = tool::exit_problems)
{
	std::fprintf(stderr, "loom sim: %s\n", e.str().c_str());
	return rc;
}

// What the run is over, and how each part was given.
struct World {
	topo::Cluster cluster;
	std::string cluster_desc, jobs_desc;
	std::vector<sim::Job> jobs;
	int gpus_per_node = 0;
	int64_t gpus = 0;
};

int load_cluster(const SimArgs &a, World &w)
{
	expected<topo::Cluster> cluster = unexpected("no cluster");
	if (!a.gen.empty()) {
		auto g = sim::parse_cluster_gen(a.gen);
		if (!g)
			return say(g.error(), tool::exit_usage);
		auto spec = sim::cluster_spec(*g);
		if (!spec)
			return say(spec.error());
		cluster = topo::build_cluster(std::move(*spec));
		w.cluster_desc = "generated: " + sim::format_cluster_gen(*g);
	} else {
		cluster = topo::load_cluster_file(a.cluster_file);
		w.cluster_desc = "file: " + a.cluster_file;
	}
	if (!cluster)
		return say(cluster.error());
	w.cluster = std::move(*cluster);
	for (const topo::Node &n : w.cluster.nodes) {
		w.gpus_per_node = std::max<int>(w.gpus_per_node, n.gpu_count);
		w.gpus += n.gpu_count;
	}
	if (w.gpus == 0)
		return say(Error("the cluster has no GPUs"));
	return -1;
}

int generate_jobs(SimArgs &a, World &w)
{
	auto m = sim::parse_mix_gen(a.gen_jobs);
	if (!m)
		return say(m.error(), tool::exit_usage);
	if (a.gen_jobs.find("seed=") == std::string::npos)
		m->seed = static_cast<uint64_t>(a.seed);
	if (a.days > 0 && a.gen_jobs.find("days=") == std::string::npos)
		m->days = a.days;
	w.jobs = sim::generate_mix(*m, w.gpus, w.gpus_per_node);
	w.jobs_desc = "generated: " + sim::format_mix_gen(*m);
	if (a.days == 0)
		a.days = m->days;
	return -1;
}

// --load: the time scale that offers that load, the trace's GPU-hours per
// hour of its span against the cluster's GPUs.
int scale_to_load(SimArgs &a, const World &w, sim::TraceFill f)
{
	f.size_scale = a.size_scale;
	f.skip_days = a.skip_days;
	auto t = sim::read_trace(a.trace_file, f, w.cluster.classes.all());
	if (!t)
		return say(t.error());
	double work = 0;
	// A job longer than the run offers only the run's length of work.
	int64_t cap = a.days > 0 ? a.days * 86400 : INT64_MAX;
	for (const sim::Job &j : *t)
		work += static_cast<double>(j.gpus()) * static_cast<double>(std::min(j.work_s, cap));
	double span = t->empty() ? 0 : static_cast<double>(t->back().submit_s);
	if (!(work > 0 && span > 0))
		return say(Error("--load: " + a.trace_file + " holds no work to scale"));
	a.time_scale = a.load * static_cast<double>(w.gpus) * span / work;
	return -1;
}

// A trace shorter than the days asked for (once scaled) repeats: how often it plays.
int repeat_trace(const SimArgs &a, std::vector<sim::Job> &jobs)
{
	int copies = 1;
	if (a.days <= 0 || jobs.empty() || !(a.load > 0 || a.time_scale > 1))
		return copies;
	int64_t span = jobs.back().submit_s + 1;
	size_t n = jobs.size();
	while (span * copies < a.days * 86400) {
		for (size_t k = 0; k < n && jobs[k].submit_s + span * copies < a.days * 86400; k++) {
			sim::Job j = jobs[k];
			j.submit_s += span * copies;
			j.id = static_cast<uint32_t>(jobs.size() + 1);
			j.source += strprintf(" (copy %d)", copies + 1);
			jobs.push_back(std::move(j));
		}
		copies++;
	}
	return copies;
}

int read_jobs(SimArgs &a, World &w)
{
	sim::TraceFill f;
	f.gpus_per_node = w.gpus_per_node;
	if (a.load > 0)
		if (int rc = scale_to_load(a, w, f); rc >= 0)
			return rc;
	f.time_scale = a.time_scale;
	f.size_scale = a.size_scale;
	f.days = a.days > 0 ? static_cast<int64_t>(static_cast<double>(a.days) * a.time_scale + 0.999) : 0;
	f.skip_days = a.skip_days;
	auto t = sim::read_trace(a.trace_file, f, w.cluster.classes.all());
	if (!t)
		return say(t.error());
	w.jobs = std::move(*t);
	int copies = repeat_trace(a, w.jobs);
	w.jobs_desc = strprintf("trace: %s (arrivals x%.4g, sizes x%g, from day %lld%s)", a.trace_file.c_str(),
				a.time_scale, a.size_scale, static_cast<long long>(a.skip_days),
				copies > 1 ? strprintf(", played %d times over", copies).c_str() : "");
	if (a.days == 0 && !w.jobs.empty())
		a.days = w.jobs.back().submit_s / 86400 + 1;
	return -1;
}

// The failure model and the weights: into a.base (--topo-conf read the GPU classes).
int load_models(SimArgs &a, const World &w)
{
	sim::RunConfig &b = a.base;
	b.failures = sim::default_failure_model();
	if (a.failures == "none") {
		b.failures.none = true;
	} else if (a.failures != "default") {
		auto m = sim::load_failure_model(a.failures);
		if (!m)
			return say(m.error());
		b.failures = *m;
	}
	if (!a.weights_file.empty()) {
		auto wf = place::load_weights_file(a.weights_file);
		if (!wf)
			return say(wf.error());
		auto tiers = b.weights.tiers;
		b.weights = *wf;
		b.weights.tiers = tiers;
	}
	if (b.weights.tiers && b.cost.class_speed.empty())
		for (const place::PerfClass &pc : b.weights.tiers->classes)
			b.cost.class_speed[pc.name] = pc.throughput;
	if (auto st = place::check_spare_kinds(b.spares, topo::locality_kinds(w.cluster)); !st)
		return say(Error("--spares: " + st.error().str()));
	return -1;
}

// params.txt: what was run, for people and for the record.
std::string describe(const SimArgs &a, const World &w, size_t failures_drawn)
{
	const sim::RunConfig &b = a.base;
	int64_t job_gpu_h = 0;
	for (const sim::Job &j : w.jobs)
		job_gpu_h += static_cast<int64_t>(j.gpus()) * j.work_s / 3600;
	std::string p = strprintf("cluster    %s\n           %zu nodes, %lld GPUs, %zu NVLink domains\n",
				  w.cluster_desc.c_str(), w.cluster.nodes.size(), static_cast<long long>(w.gpus),
				  w.cluster.nvlink_domains.size());
	p += strprintf("jobs       %s\n           %zu jobs, %lld GPU-hours of work, %lld days simulated\n",
		       w.jobs_desc.c_str(), w.jobs.size(), static_cast<long long>(job_gpu_h),
		       static_cast<long long>(a.days));
	p += strprintf("failures   %s           %zu failures drawn (seed %lld)\n",
		       sim::format_failure_model(b.failures).c_str(), failures_drawn, static_cast<long long>(a.seed));
	p += strprintf("checkpoint interval %s, cost %gs, restart %llds\n",
		       b.ckpt.interval_s ? format_duration(b.ckpt.interval_s).c_str() : "auto", b.ckpt.cost_s,
		       static_cast<long long>(b.ckpt.restart_s));
	if (!b.spares.empty() || b.migrate)
		p += strprintf("spares     %s, lent to jobs of up to %s, replacement %llds; migration %s\n",
			       b.spares.empty() ? "none" : a.spares_text.c_str(),
			       format_duration(b.spares.lend_max_s).c_str(), static_cast<long long>(b.replace_s),
			       b.migrate ? "on" : "off");
	if (b.cost.model != sim::CommModel::share || b.cost.rank_order || b.contention)
		p += strprintf("comm       %s model, %s rank order%s\n", sim::comm_model_name(b.cost.model),
			       b.cost.rank_order ? "loom's" : "Slurm's",
			       b.contention ? ", uplinks shared by the jobs across them" : "");
	if (b.weights.tiers) {
		std::string cls;
		for (const place::PerfClass &pc : b.weights.tiers->classes)
			cls += strprintf("%s%s x%g %.2f/GPU-h", cls.empty() ? "" : ", ", pc.name.c_str(), pc.throughput,
					 pc.price);
		p += "classes    " + cls + "; jobs with a tier: " + b.tier_mode + "\n";
	}
	if (b.degraded_uplinks > 0)
		p += strprintf("degraded   %d leaf uplinks at %g of capacity; link marks on %g of their nodes\n",
			       b.degraded_uplinks, b.degraded_factor, b.link_marks);
	return p;
}

// One placer's run over the world.
int run_placer(const SimArgs &a, const World &w, const std::vector<sim::Failure> &drawn, const std::string &p,
	       std::vector<sim::RunResult> &runs)
{
	sim::RunConfig cfg = a.base;
	cfg.placer = p;
	if (a.dump_h >= 0) {
		cfg.dump_at_s = static_cast<int64_t>(a.dump_h * 3600);
		if (auto st = make_dirs(a.out_dir + "/" + p); !st)
			return say(st.error());
		cfg.dump_prefix = a.out_dir + "/" + p + "/dump-";
	}
	bool show = a.progress == "yes" || (a.progress == "auto" && isatty(2));
	auto last = std::chrono::steady_clock::now();
	if (show)
		cfg.progress = [&, p](int64_t now) {
			auto t = std::chrono::steady_clock::now();
			if (t - last < std::chrono::milliseconds(250))
				return;
			last = t;
			std::fprintf(stderr, "\rloom sim: %-8s day %6.1f of %lld (%3.0f%%)", p.c_str(),
				     double(now) / 86400, static_cast<long long>(a.days),
				     100.0 * double(now) / double(std::max<int64_t>(1, a.base.horizon_s)));
			std::fflush(stderr);
		};
	auto r = sim::simulate(w.cluster, w.jobs, drawn, cfg);
	if (show)
		std::fprintf(stderr, "\r%60s\r", "");
	if (!r)
		return say(Error(p + ": " + r.error().str()));
	runs.push_back(std::move(*r));
	return -1;
}

int run_all(SimArgs &a, const World &w)
{
	a.base.horizon_s = a.days * 86400;
	a.base.large_gpus = a.large;
	auto drawn = sim::draw_failures(a.base.failures, w.cluster.nodes.size(), a.base.horizon_s,
					static_cast<uint64_t>(a.seed));
	if (auto st = make_dirs(a.out_dir); !st)
		return say(st.error());
	std::string params = describe(a, w, drawn.size());
	if (!a.quiet)
		std::fputs(params.c_str(), stdout);
	if (auto st = write_file_atomic(a.out_dir + "/params.txt", params); !st)
		return say(st.error());
	if (auto st = write_file_atomic(a.out_dir + "/cluster.json", topo::write_cluster_json(w.cluster)); !st)
		return say(st.error());
	std::vector<std::string> placers = a.placers;
	if (placers.empty()) {
		placers = {"loom", "tree", "firstfit"};
		if (!w.cluster.nvlink_domains.empty())
			placers.push_back("block");
	}
	std::vector<sim::RunResult> runs;
	for (const std::string &p : placers)
		if (int rc = run_placer(a, w, drawn, p, runs); rc >= 0)
			return rc;
	if (auto st = sim::write_outputs(a.out_dir, runs); !st)
		return say(st.error());
	std::fputs(sim::summary_table(runs).c_str(), stdout);
	return tool::exit_ok;
}

int sim_main(int argc, char **argv)
{
	SimArgs a;
	tool::OptionTable t = tool::sim_options(a);
	if (int rc = t.parse(argc, argv); rc >= 0)
		return rc;
	if (int rc = tool::check_sim_args(t, a); rc >= 0)
		return rc;
	World w;
	if (int rc = load_cluster(a, w); rc >= 0)
		return rc;
	if (int rc = a.gen_jobs.empty() ? read_jobs(a, w) : generate_jobs(a, w); rc >= 0)
		return rc;
	if (int rc = load_models(a, w); rc >= 0)
		return rc;
	return run_all(a, w);
}

loom::tool::Command sim_command{"sim", "simulate the cluster: a trace, failures and placers at 10k-100k GPUs",
				sim_main};

} // namespace
