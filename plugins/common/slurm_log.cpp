#include "plugins/common/slurm_log.hpp"

#include "lib/util/log.hpp"

#include <atomic>

extern "C" {
#include <slurm/spank.h>
}

namespace loom::plugin {
namespace {

std::atomic<const char *> g_prefix{"loom"};

void slurm_sink(LogLevel level, const char *message)
{
	const char *p = g_prefix.load();
	switch (level) {
	case LogLevel::error:
		slurm_error("%s: %s", p, message);
		break;
	case LogLevel::warning:
		slurm_info("%s: warning: %s", p, message);
		break;
	case LogLevel::info:
		slurm_info("%s: %s", p, message);
		break;
	case LogLevel::debug:
		slurm_debug("%s: %s", p, message);
		break;
	}
}

} // namespace

void install_slurm_log_sink(const char *prefix)
{
	g_prefix.store(prefix);
	// Slurm filters by its own level; let everything through to it.
	log_set_level(LogLevel::debug);
	log_set_sink(slurm_sink);
}

void remove_slurm_log_sink() { log_set_sink(nullptr); }

} // namespace loom::plugin
