// loom sim: replay a job trace on a (generated) cluster with loom's own
// engines and Slurm-like baselines; see loom-sim(1).
#include "tools/command.hpp"

#include "lib/place/spares.hpp"
#include "lib/sim/cluster_gen.hpp"
#include "lib/sim/report.hpp"
#include "lib/sim/placer.hpp"
#include "lib/topo/cluster_json.hpp"
#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/log.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unistd.h>

namespace {

void usage(FILE *out)
{
	std::fprintf(out,
		     "usage: loom sim (--cluster FILE | --generate SPEC) (--trace FILE | --generate-jobs SPEC)\n"
		     "                [--placer NAME]... [--failures MODEL|default|none] [--days N] [--seed N] --out DIR\n"
		     "                [--time-scale X | --load X] [--size-scale X] [--skip-days N] [--ckpt-interval auto|DUR]\n"
		     "                [--ckpt-cost DUR] [--restart-cost DUR] [--class-speed LIST]\n"
		     "                [--weights FILE] [--large-gpus N] [--dump-at HOURS] [--progress yes|no|auto] [--quiet]\n"
		     "                [--spares SPEC] [--spare-lend DUR] [--replace-time DUR] [--migrate yes|no]\n"
		     "                [--comm-model share|ring] [--contention yes|no] [--rank-order yes|no]\n"
		     "                [--degraded-uplinks N[:FACTOR]]\n"
		     "                [--link-marks SHARE] [--topo-conf FILE] [--tier-mode engine|by-hand|any]\n"
		     "\n"
		     "Replays jobs against a cluster under a Slurm-like scheduler loop (priority, backfill, time limits,\n"
		     "requeue) with each placer in turn, the same jobs and the same failures for each; writes CSV files\n"
		     "and SVG plots to DIR and prints a summary.\n"
		     "  --cluster FILE        loom cluster file (loom topo build)\n"
		     "  --generate SPEC       a generated cluster, e.g. \"gpus=10240 fabric=nvl72 classes=h100,b200\"\n"
		     "  --trace FILE          Philly (timestamp,duration,num_gpus,...) or Alibaba v2023 pod list CSV\n"
		     "  --generate-jobs SPEC  a generated large-model mix, e.g. \"days=7 load=0.9 large_share=0.5\"\n"
		     "  --placer NAME         loom, tree, firstfit, block (repeat or comma-separate; default loom,tree,firstfit,\n"
		     "                        and block on clusters with NVLink domains)\n"
		     "  --failures MODEL      failure model file; default: Llama 3's rates and causes; none: no failures\n"
		     "  --days N              simulated days (jobs arriving later are left out; default: the trace's span)\n"
		     "  --seed N              failures and generated jobs (default 1)\n"
		     "  --time-scale X        arrivals X times as fast; --size-scale X: jobs X times as large\n"
		     "  --load X              the time scale that offers X GPU-hours per GPU-hour of the cluster\n"
		     "  --skip-days N         start N days into the trace\n"
		     "  --ckpt-interval I     auto (Daly, from the job's MTBF; default) or a fixed interval\n"
		     "  --ckpt-cost D         blocking time of one checkpoint (default 60s); --restart-cost D: 300s\n"
		     "  --class-speed LIST    relative speed per GPU class: \"a100=1,h100=2.5\" (default 1 each)\n"
		     "  --weights FILE        placement weights for the loom placer\n"
		     "  --large-gpus N        jobs of N GPUs or more count as large (ETTR; default 1024)\n"
		     "  --spares SPEC         a spare pool, as loom-topo.conf's spares= (\"nvlink:1,pod:2%%\"; default none)\n"
		     "  --spare-lend DUR      jobs with a time limit up to DUR may use spares (spare_lend=; default 30m)\n"
		     "  --replace-time DUR    failure detected to running again on spares (default 10s)\n"
		     "  --migrate yes|no      --ckpt jobs move off a node marked suspect (spank_ckpt migrate=; default no)\n"
		     "  --comm-model M        share (every GPU's traffic crosses each domain it spans; default) or ring\n"
		     "                        (a ring all-reduce in the job's rank order: only edges leaving a domain)\n"
		     "  --contention yes|no   an uplink is shared by the jobs running across it at a job's start, not by\n"
		     "                        every GPU under it (default no: a full domain)\n"
		     "  --rank-order yes|no   ring: jobs run in loom's rank order (LOOM_HOSTFILE), else Slurm's (default no)\n"
		     "  --degraded-uplinks N[:FACTOR]\n"
		     "                        N leaves, spread over the cluster, have uplinks at FACTOR of their capacity\n"
		     "                        (default 0.25)\n"
		     "  --link-marks SHARE    that share of each such leaf's nodes carries a link check's suspect mark,\n"
		     "                        which select/topo weighs (default 0: placement does not see it)\n"
		     "  --topo-conf FILE      GPU classes, prices and tiers (loom-topo.conf's gpu_class.NAME, gpu_tier.NAME,\n"
		     "                        offpeak): class speeds from their throughput, a cost per job\n"
		     "  --tier-mode M         jobs with a tier (generated tiers=): engine (as --gpu-tier; default),\n"
		     "                        by-hand (the class a person would name) or any (no class)\n"
		     "  --dump-at HOURS       write the state, request and decision of the first placement after HOURS\n"
		     "                        to DIR/PLACER/dump-*.txt (replay with loom place --explain)\n"
		     "  --progress WHEN       a progress line on stderr (auto: when stderr is a terminal)\n"
		     "Exit: 0 done, 1 bad input or a failed run, 2 bad usage.\n");
}

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

bool to_real(const std::string &s, double &out, double min, double max)
{
	char *end = nullptr;
	out = std::strtod(s.c_str(), &end);
	return !s.empty() && !*end && out >= min && out <= max;
}

int sim_main(int argc, char **argv)
{
	using namespace loom;
	const std::string cmd = "loom sim";
	std::string cluster_file, gen, trace_file, gen_jobs, failures = "default", out_dir, weights_file, progress = "auto", spares_text;
	std::vector<std::string> placers;
	int64_t days = 0, seed = 1, skip_days = 0, large = 1024;
	double time_scale = 1, size_scale = 1, dump_h = -1, load = 0;
	bool quiet = false;
	sim::RunConfig base;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		std::string v;
		auto value = [&]() {
			if (i + 1 >= argc)
				return false;
			v = argv[++i];
			return true;
		};
		if (a == "--help" || a == "-h") {
			usage(stdout);
			return tool::exit_ok;
		} else if (a == "--quiet") {
			quiet = true;
		} else if (a == "--cluster" && value()) {
			cluster_file = v;
		} else if (a == "--generate" && value()) {
			gen = v;
		} else if (a == "--trace" && value()) {
			trace_file = v;
		} else if (a == "--generate-jobs" && value()) {
			gen_jobs = v;
		} else if (a == "--placer" && value()) {
			for (const std::string &p : split_list(v)) {
				bool known = false;
				for (const std::string &n : sim::placer_names())
					known |= n == p;
				if (!known)
					return tool::bad_value(cmd, "--placer", p, "expected loom, tree, firstfit or block");
				placers.push_back(p);
			}
		} else if (a == "--failures" && value()) {
			failures = v;
		} else if (a == "--out" && value()) {
			out_dir = v;
		} else if (a == "--weights" && value()) {
			weights_file = v;
		} else if (a == "--progress" && value()) {
			if (v != "yes" && v != "no" && v != "auto")
				return tool::bad_value(cmd, "--progress", v, "expected yes, no or auto");
			progress = v;
		} else if ((a == "--days" || a == "--seed" || a == "--skip-days" || a == "--large-gpus") && value()) {
			int64_t lo = a == "--days" || a == "--large-gpus" ? 1 : 0;
			int64_t hi = a == "--seed" ? INT64_MAX : a == "--large-gpus" ? 1 << 20 : 36500;
			auto n = parse_int(v, lo, hi);
			if (!n)
				return tool::bad_value(cmd, a, v, n.error().message);
			(a == "--days" ? days : a == "--seed" ? seed : a == "--skip-days" ? skip_days : large) = *n;
		} else if ((a == "--time-scale" || a == "--size-scale") && value()) {
			double x = 0;
			if (!to_real(v, x, 1e-3, 1e3))
				return tool::bad_value(cmd, a, v, "expected a number from 0.001 to 1000");
			(a == "--time-scale" ? time_scale : size_scale) = x;
		} else if (a == "--load" && value()) {
			if (!to_real(v, load, 0.01, 10))
				return tool::bad_value(cmd, a, v, "expected offered load from 0.01 to 10 (GPU-hours asked per GPU-hour)");
		} else if (a == "--dump-at" && value()) {
			if (!to_real(v, dump_h, 0, 1e6))
				return tool::bad_value(cmd, a, v, "expected hours from the start");
		} else if (a == "--ckpt-interval" && value()) {
			if (v == "auto") {
				base.ckpt.interval_s = 0;
			} else {
				auto d = parse_duration(v);
				if (!d || *d < 1)
					return tool::bad_value(cmd, a, v, "expected auto or a duration such as 30m");
				base.ckpt.interval_s = *d;
			}
		} else if ((a == "--ckpt-cost" || a == "--restart-cost") && value()) {
			auto d = parse_duration(v);
			if (!d)
				return tool::bad_value(cmd, a, v, d.error().message);
			if (a == "--ckpt-cost")
				base.ckpt.cost_s = static_cast<double>(*d);
			else
				base.ckpt.restart_s = *d;
		} else if (a == "--spares" && value()) {
			spares_text = v;
			auto sp = place::parse_spares(v);
			if (!sp)
				return tool::bad_value(cmd, a, v, sp.error().message);
			int64_t lend = base.spares.lend_max_s;
			base.spares = *sp;
			base.spares.lend_max_s = lend;
		} else if ((a == "--spare-lend" || a == "--replace-time") && value()) {
			auto d = parse_duration(v);
			if (!d)
				return tool::bad_value(cmd, a, v, d.error().message);
			(a == "--spare-lend" ? base.spares.lend_max_s : base.replace_s) = *d;
		} else if (a == "--migrate" && value()) {
			if (v != "yes" && v != "no")
				return tool::bad_value(cmd, a, v, "expected yes or no");
			base.migrate = v == "yes";
		} else if (a == "--comm-model" && value()) {
			auto m = sim::parse_comm_model(v);
			if (!m)
				return tool::bad_value(cmd, a, v, "expected share or ring");
			base.cost.model = *m;
		} else if (a == "--contention" && value()) {
			if (v != "yes" && v != "no")
				return tool::bad_value(cmd, a, v, "expected yes or no");
			base.contention = v == "yes";
		} else if (a == "--rank-order" && value()) {
			if (v != "yes" && v != "no")
				return tool::bad_value(cmd, a, v, "expected yes or no");
			base.cost.rank_order = v == "yes";
		} else if (a == "--degraded-uplinks" && value()) {
			auto colon = v.find(':');
			double n = 0, f = base.degraded_factor;
			if (!to_real(v.substr(0, colon), n, 0, 1e6) || n != std::floor(n) ||
			    (colon != std::string::npos && !to_real(v.substr(colon + 1), f, 1e-3, 1)))
				return tool::bad_value(cmd, a, v, "expected N[:FACTOR], a whole number of leaves and a factor from 0.001 to 1");
			base.degraded_uplinks = static_cast<int>(n);
			base.degraded_factor = f;
		} else if (a == "--topo-conf" && value()) {
			auto t = place::read_tier_table(v);
			if (!t) {
				std::fprintf(stderr, "loom sim: %s\n", t.error().str().c_str());
				return tool::exit_problems;
			}
			if (t->empty())
				return tool::bad_value(cmd, a, v, "no gpu_class.NAME in this file");
			base.weights.tiers = std::make_shared<const place::TierTable>(std::move(*t));
		} else if (a == "--tier-mode" && value()) {
			if (v != "engine" && v != "by-hand" && v != "any")
				return tool::bad_value(cmd, a, v, "expected engine, by-hand or any");
			base.tier_mode = v;
		} else if (a == "--link-marks" && value()) {
			if (!to_real(v, base.link_marks, 0, 1))
				return tool::bad_value(cmd, a, v, "expected a share of the leaf's nodes from 0 to 1");
		} else if (a == "--class-speed" && value()) {
			for (const std::string &item : split_list(v)) {
				auto eq = item.find('=');
				double x = 0;
				if (eq == std::string::npos || eq == 0 || !to_real(item.substr(eq + 1), x, 1e-3, 1e3))
					return tool::bad_value(cmd, a, item, "expected CLASS=SPEED with SPEED from 0.001 to 1000");
				base.cost.class_speed[item.substr(0, eq)] = x;
			}
		} else {
			std::fprintf(stderr, "loom sim: unknown or incomplete option '%s'\n", a.c_str());
			usage(stderr);
			return tool::exit_usage;
		}
	}
	if (base.cost.rank_order && base.cost.model != sim::CommModel::ring) {
		std::fprintf(stderr, "loom sim: --rank-order yes needs --comm-model ring (the share model does not depend on the order)\n");
		return tool::exit_usage;
	}
	if (cluster_file.empty() == gen.empty() || trace_file.empty() == gen_jobs.empty() || out_dir.empty()) {
		std::fprintf(stderr, "loom sim: give one of --cluster and --generate, one of --trace and --generate-jobs, and --out\n");
		usage(stderr);
		return tool::exit_usage;
	}
	// The cluster.
	expected<topo::Cluster> cluster = unexpected("no cluster");
	std::string cluster_desc;
	if (!gen.empty()) {
		auto g = sim::parse_cluster_gen(gen);
		if (!g) {
			std::fprintf(stderr, "loom sim: %s\n", g.error().str().c_str());
			return tool::exit_usage;
		}
		auto spec = sim::cluster_spec(*g);
		if (!spec) {
			std::fprintf(stderr, "loom sim: %s\n", spec.error().str().c_str());
			return tool::exit_problems;
		}
		cluster = topo::build_cluster(std::move(*spec));
		cluster_desc = "generated: " + sim::format_cluster_gen(*g);
	} else {
		cluster = topo::load_cluster_file(cluster_file);
		cluster_desc = "file: " + cluster_file;
	}
	if (!cluster) {
		std::fprintf(stderr, "loom sim: %s\n", cluster.error().str().c_str());
		return tool::exit_problems;
	}
	int gpn = 0;
	int64_t gpus = 0;
	for (const topo::Node &n : cluster->nodes) {
		gpn = std::max<int>(gpn, n.gpu_count);
		gpus += n.gpu_count;
	}
	if (gpus == 0) {
		std::fprintf(stderr, "loom sim: the cluster has no GPUs\n");
		return tool::exit_problems;
	}
	// The jobs.
	std::vector<sim::Job> jobs;
	std::string jobs_desc;
	if (!gen_jobs.empty()) {
		auto m = sim::parse_mix_gen(gen_jobs);
		if (!m) {
			std::fprintf(stderr, "loom sim: %s\n", m.error().str().c_str());
			return tool::exit_usage;
		}
		if (gen_jobs.find("seed=") == std::string::npos)
			m->seed = static_cast<uint64_t>(seed);
		if (days > 0 && gen_jobs.find("days=") == std::string::npos)
			m->days = days;
		jobs = sim::generate_mix(*m, gpus, gpn);
		jobs_desc = "generated: " + sim::format_mix_gen(*m);
		if (days == 0)
			days = m->days;
	} else {
		sim::TraceFill f;
		f.gpus_per_node = gpn;
		if (load > 0) {
			// The time scale that offers 'load': the trace's GPU-hours per
			// hour of its span against the cluster's GPUs.
			sim::TraceFill all = f;
			all.size_scale = size_scale;
			all.skip_days = skip_days;
			auto t = sim::read_trace(trace_file, all, cluster->classes.all());
			if (!t) {
				std::fprintf(stderr, "loom sim: %s\n", t.error().str().c_str());
				return tool::exit_problems;
			}
			double work = 0;
			// A job longer than the run offers only the run's length of work.
			int64_t cap = days > 0 ? days * 86400 : INT64_MAX;
			for (const sim::Job &j : *t)
				work += static_cast<double>(j.gpus()) * static_cast<double>(std::min(j.work_s, cap));
			double span = t->empty() ? 0 : static_cast<double>(t->back().submit_s);
			if (!(work > 0 && span > 0)) {
				std::fprintf(stderr, "loom sim: --load: %s holds no work to scale\n", trace_file.c_str());
				return tool::exit_problems;
			}
			time_scale = load * static_cast<double>(gpus) * span / work;
		}
		f.time_scale = time_scale;
		f.size_scale = size_scale;
		f.days = days > 0 ? static_cast<int64_t>(static_cast<double>(days) * time_scale + 0.999) : 0;
		f.skip_days = skip_days;
		auto t = sim::read_trace(trace_file, f, cluster->classes.all());
		if (!t) {
			std::fprintf(stderr, "loom sim: %s\n", t.error().str().c_str());
			return tool::exit_problems;
		}
		jobs = std::move(*t);
		// A trace shorter than the days asked for (once scaled) repeats.
		int copies = 1;
		if (days > 0 && !jobs.empty() && (load > 0 || time_scale > 1)) {
			int64_t span = jobs.back().submit_s + 1;
			size_t n = jobs.size();
			while (span * copies < days * 86400) {
				for (size_t k = 0; k < n && jobs[k].submit_s + span * copies < days * 86400; k++) {
					sim::Job j = jobs[k];
					j.submit_s += span * copies;
					j.id = static_cast<uint32_t>(jobs.size() + 1);
					j.source += strprintf(" (copy %d)", copies + 1);
					jobs.push_back(std::move(j));
				}
				copies++;
			}
		}
		jobs_desc = strprintf("trace: %s (arrivals x%.4g, sizes x%g, from day %lld%s)", trace_file.c_str(), time_scale,
				      size_scale, static_cast<long long>(skip_days),
				      copies > 1 ? strprintf(", played %d times over", copies).c_str() : "");
		if (days == 0 && !jobs.empty())
			days = jobs.back().submit_s / 86400 + 1;
	}
	// Failures.
	sim::FailureModel fm = sim::default_failure_model();
	if (failures == "none") {
		fm.none = true;
	} else if (failures != "default") {
		auto m = sim::load_failure_model(failures);
		if (!m) {
			std::fprintf(stderr, "loom sim: %s\n", m.error().str().c_str());
			return tool::exit_problems;
		}
		fm = *m;
	}
	if (!weights_file.empty()) {
		auto w = place::load_weights_file(weights_file);
		if (!w) {
			std::fprintf(stderr, "loom sim: %s\n", w.error().str().c_str());
			return tool::exit_problems;
		}
		auto tiers = base.weights.tiers;
		base.weights = *w;
		base.weights.tiers = tiers;
	}
	if (base.weights.tiers && base.cost.class_speed.empty())
		for (const place::PerfClass &pc : base.weights.tiers->classes)
			base.cost.class_speed[pc.name] = pc.throughput;
	if (placers.empty()) {
		placers = {"loom", "tree", "firstfit"};
		if (!cluster->nvlink_domains.empty())
			placers.push_back("block");
	}
	if (auto st = place::check_spare_kinds(base.spares, topo::locality_kinds(*cluster)); !st) {
		std::fprintf(stderr, "loom sim: --spares: %s\n", st.error().str().c_str());
		return tool::exit_problems;
	}
	base.horizon_s = days * 86400;
	base.failures = fm;
	base.large_gpus = large;
	auto drawn = sim::draw_failures(fm, cluster->nodes.size(), base.horizon_s, static_cast<uint64_t>(seed));
	if (auto st = make_dirs(out_dir); !st) {
		std::fprintf(stderr, "loom sim: %s\n", st.error().str().c_str());
		return tool::exit_problems;
	}
	int64_t job_gpu_h = 0;
	for (const sim::Job &j : jobs)
		job_gpu_h += static_cast<int64_t>(j.gpus()) * j.work_s / 3600;
	std::string params = strprintf("cluster    %s\n           %zu nodes, %lld GPUs, %zu NVLink domains\n", cluster_desc.c_str(),
				       cluster->nodes.size(), static_cast<long long>(gpus), cluster->nvlink_domains.size());
	params += strprintf("jobs       %s\n           %zu jobs, %lld GPU-hours of work, %lld days simulated\n",
			    jobs_desc.c_str(), jobs.size(), static_cast<long long>(job_gpu_h), static_cast<long long>(days));
	params += strprintf("failures   %s           %zu failures drawn (seed %lld)\n",
			    sim::format_failure_model(fm).c_str(), drawn.size(), static_cast<long long>(seed));
	params += strprintf("checkpoint interval %s, cost %gs, restart %llds\n",
			    base.ckpt.interval_s ? format_duration(base.ckpt.interval_s).c_str() : "auto", base.ckpt.cost_s,
			    static_cast<long long>(base.ckpt.restart_s));
	if (!base.spares.empty() || base.migrate)
		params += strprintf("spares     %s, lent to jobs of up to %s, replacement %llds; migration %s\n",
				    base.spares.empty() ? "none" : spares_text.c_str(),
				    format_duration(base.spares.lend_max_s).c_str(), static_cast<long long>(base.replace_s),
				    base.migrate ? "on" : "off");
	if (base.cost.model != sim::CommModel::share || base.cost.rank_order || base.contention)
		params += strprintf("comm       %s model, %s rank order%s\n", sim::comm_model_name(base.cost.model),
				    base.cost.rank_order ? "loom's" : "Slurm's",
				    base.contention ? ", uplinks shared by the jobs across them" : "");
	if (base.weights.tiers) {
		std::string cls;
		for (const place::PerfClass &pc : base.weights.tiers->classes)
			cls += strprintf("%s%s x%g %.2f/GPU-h", cls.empty() ? "" : ", ", pc.name.c_str(), pc.throughput, pc.price);
		params += "classes    " + cls + "; jobs with a tier: " + base.tier_mode + "\n";
	}
	if (base.degraded_uplinks > 0)
		params += strprintf("degraded   %d leaf uplinks at %g of capacity; link marks on %g of their nodes\n",
				    base.degraded_uplinks, base.degraded_factor, base.link_marks);
	if (!quiet)
		std::fputs(params.c_str(), stdout);
	if (auto st = write_file_atomic(out_dir + "/params.txt", params); !st) {
		std::fprintf(stderr, "loom sim: %s\n", st.error().str().c_str());
		return tool::exit_problems;
	}
	if (auto st = write_file_atomic(out_dir + "/cluster.json", topo::write_cluster_json(*cluster)); !st) {
		std::fprintf(stderr, "loom sim: %s\n", st.error().str().c_str());
		return tool::exit_problems;
	}
	bool show = progress == "yes" || (progress == "auto" && isatty(2));
	std::vector<sim::RunResult> runs;
	for (const std::string &p : placers) {
		sim::RunConfig cfg = base;
		cfg.placer = p;
		if (dump_h >= 0) {
			cfg.dump_at_s = static_cast<int64_t>(dump_h * 3600);
			if (auto st = make_dirs(out_dir + "/" + p); !st) {
				std::fprintf(stderr, "loom sim: %s\n", st.error().str().c_str());
				return tool::exit_problems;
			}
			cfg.dump_prefix = out_dir + "/" + p + "/dump-";
		}
		auto last = std::chrono::steady_clock::now();
		if (show)
			cfg.progress = [&, p](int64_t now) {
				auto t = std::chrono::steady_clock::now();
				if (t - last < std::chrono::milliseconds(250))
					return;
				last = t;
				std::fprintf(stderr, "\rloom sim: %-8s day %6.1f of %lld (%3.0f%%)", p.c_str(), double(now) / 86400,
					     static_cast<long long>(days), 100.0 * double(now) / double(std::max<int64_t>(1, base.horizon_s)));
				std::fflush(stderr);
			};
		auto r = sim::simulate(*cluster, jobs, drawn, cfg);
		if (show)
			std::fprintf(stderr, "\r%60s\r", "");
		if (!r) {
			std::fprintf(stderr, "loom sim: %s: %s\n", p.c_str(), r.error().str().c_str());
			return tool::exit_problems;
		}
		runs.push_back(std::move(*r));
	}
	if (auto st = sim::write_outputs(out_dir, runs); !st) {
		std::fprintf(stderr, "loom sim: %s\n", st.error().str().c_str());
		return tool::exit_problems;
	}
	std::fputs(sim::summary_table(runs).c_str(), stdout);
	return tool::exit_ok;
}

loom::tool::Command sim_command{"sim", "simulate the cluster: a trace, failures and placers at 10k-100k GPUs", sim_main};

} // namespace
