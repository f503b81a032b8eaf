#include "lib/ckpt/ranks.hpp"

#include "lib/util/config.hpp"

#include <cstdlib>
#include <utility>

namespace loom::ckpt {
namespace {

struct Launcher {
	const char *name, *rank, *world;
	const char *within = nullptr; // believed only where this is set too
};
// A batch script has SLURM_PROCID=0 and the job's SLURM_NTASKS but no
// SLURM_STEP_ID: a program it runs itself is one process, not rank 0 of N.
constexpr Launcher launchers[] = {
	{"torchrun", "RANK", "WORLD_SIZE"},
	{"srun", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_ID"},
	{"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_ID"},
	{"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
	{"PMIx", "PMIX_RANK", "PMIX_SIZE"},
	{"PMI", "PMIX_RANK", "PMI_SIZE"},
};

std::string non_empty(const EnvLookup &env, const char *name)
{
	auto v = env(name);
	return v ? *v : std::string();
}

} // namespace

EnvLookup process_env()
{
	return [](const std::string &name) -> std::optional<std::string> {
		const char *v = std::getenv(name.c_str());
		return v ? std::optional<std::string>(v) : std::nullopt;
	};
}

EnvLookup map_env(std::map<std::string, std::string> vars)
{
	return [vars = std::move(vars)](const std::string &name) -> std::optional<std::string> {
		auto it = vars.find(name);
		return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
	};
}

expected<Launch> launch_ranks(const EnvLookup &env)
{
	for (const auto &l : launchers) {
		auto r = env(l.rank), w = env(l.world);
		if (!r || !w || (l.within && !env(l.within)))
			continue;
		std::string what = std::string(l.rank) + "=" + *r + ", " + l.world + "=" + *w;
		auto rank = parse_int(*r, 0, INT64_MAX), world = parse_int(*w, 1, INT64_MAX);
		if (!rank || !world)
			return unexpected(what, std::string("not a rank and a world size (") + l.name + ")");
		if (*rank >= *world)
			return unexpected(what, std::string("not a rank of that world (") + l.name + ")");
		return Launch{*rank, *world, l.name};
	}
	return Launch{};
}

std::string launch_run_id(const EnvLookup &env)
{
	std::string run;
	if (std::string job = non_empty(env, "SLURM_JOB_ID"); !job.empty()) {
		std::string restarts = non_empty(env, "LOOM_RESTART_COUNT");
		if (restarts.empty())
			restarts = non_empty(env, "SLURM_RESTART_COUNT");
		auto step = env("SLURM_STEP_ID");
		run = "j" + job + "_r" + (restarts.empty() ? "0" : restarts) + "_s" + (step ? *step : "batch");
		if (std::string e = non_empty(env, "TORCHELASTIC_RESTART_COUNT"); !e.empty())
			run += "_e" + e;
	} else {
		for (const char *name : {"PMIX_NAMESPACE", "OMPI_MCA_orte_ess_jobid", "LOOM_CKPT_RUN_ID"})
			if (run = non_empty(env, name); !run.empty())
				break;
	}
	for (char &c : run) {
		bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
		if (!word && c != '-')
			c = '_';
	}
	return run;
}

} // namespace loom::ckpt
