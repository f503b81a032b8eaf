#include "plugins/spank_ckpt/spank_options.hpp"

#include "plugins/common/slurm_log.hpp"

#include <cstring>

namespace loom::spank_ckpt {
namespace {

const char *const prefix = "spank_ckpt";

enum OptionId { opt_ckpt = 1, opt_dir, opt_interval, opt_signal, opt_keep, opt_max_restarts, opt_standby };
const char *option_name(int id)
{
	switch (id) {
	case opt_ckpt:
		return "ckpt";
	case opt_dir:
		return "ckpt-dir";
	case opt_interval:
		return "ckpt-interval";
	case opt_signal:
		return "ckpt-signal";
	case opt_keep:
		return "ckpt-keep";
	case opt_max_restarts:
		return "ckpt-max-restarts";
	case opt_standby:
		return "ckpt-standby";
	}
	return "?";
}

OptionTarget t;

int option_cb(int val, const char *optarg, int /*remote*/)
{
	try {
		if (!t.site || !*t.site) // the plugin arguments were refused: init said why
			return -1;
		// An option given without its optional argument (sbatch --ckpt) reaches
		// the steps of the job (srun inside it) through the environment, where
		// Slurm spells the absent argument "(null)".
		if (optarg && std::strcmp(optarg, "(null)") == 0)
			optarg = nullptr;
		auto st = ckpt::apply_option(*t.opts, **t.site, option_name(val), optarg);
		if (!st) {
			slurm_error("%s: %s", prefix, st.error().str().c_str());
			*t.bad = true;
			return -1;
		}
		return 0;
	} catch (...) {
		slurm_error("%s: --%s: unexpected failure", prefix, option_name(val));
		return -1;
	}
}

spank_option options[] = {
	{const_cast<char *>("ckpt"), const_cast<char *>("[signal|off]"),
	 const_cast<char *>("Checkpoint and requeue: the job is asked to checkpoint (signal) at the interval, "
			    "before its time limit and when its node turns suspect; it is requeued after failures "
			    "and resumes from its newest complete checkpoint (LOOM_CKPT_* in the environment)."),
	 2, opt_ckpt, option_cb},
	{const_cast<char *>("ckpt-dir"), const_cast<char *>("PATH"),
	 const_cast<char *>("Checkpoint directory (%u user, %U uid, %j job id), under the site's allowed roots."), 1,
	 opt_dir, option_cb},
	{const_cast<char *>("ckpt-interval"), const_cast<char *>("auto|DURATION"),
	 const_cast<char *>("Checkpoint interval: auto (Daly's formula from the measured checkpoint time and the "
			    "nodes' MTBF) or a duration such as 30min."),
	 1, opt_interval, option_cb},
	{const_cast<char *>("ckpt-signal"), const_cast<char *>("SIG"),
	 const_cast<char *>("Signal that asks the application to checkpoint (default USR2; NCCL catches USR1)."), 1,
	 opt_signal, option_cb},
	{const_cast<char *>("ckpt-keep"), const_cast<char *>("N"),
	 const_cast<char *>("Complete checkpoints to keep (the newest N)."), 1, opt_keep, option_cb},
	{const_cast<char *>("ckpt-max-restarts"), const_cast<char *>("N"),
	 const_cast<char *>("Restart budget: after N restarts the job is held instead of requeued."), 1,
	 opt_max_restarts, option_cb},
	{const_cast<char *>("ckpt-standby"), const_cast<char *>("N|auto"),
	 const_cast<char *>("Hold N idle nodes in the allocation (auto: enough for the expected node failures); "
			    "a failed node is replaced by one and the step starts again, no requeue "
			    "(needs JobSubmitPlugins=loom)."),
	 1, opt_standby, option_cb},
};

} // namespace

std::vector<spank_option> &ckpt_options(const OptionTarget &target)
{
	t = target;
	static std::vector<spank_option> all(std::begin(options), std::end(options));
	return all;
}

} // namespace loom::spank_ckpt
