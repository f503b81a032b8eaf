// loom: one logging sink for the whole library.
//
// lib/ never prints by itself: it calls loom::log_*(), which go to the sink
// installed by whoever hosts the library. Tools keep the default sink (stderr,
// prefixed with the program name); plugins install a sink that routes to
// Slurm's error()/info()/debug() so that messages land in slurmctld's log.
#pragma once

#include <cstdarg>
#include <string>

namespace loom {

enum class LogLevel { error = 0, warning = 1, info = 2, debug = 3 };

// A sink receives one complete, formatted message without trailing newline.
using LogSink = void (*)(LogLevel level, const char *message);

// Install a sink (nullptr restores the default stderr sink). Thread-safe.
void log_set_sink(LogSink sink);
// Messages above this level are dropped before formatting (default: info).
void log_set_level(LogLevel level);
LogLevel log_level();
// Prefix used by the default stderr sink ("loom" unless set).
void log_set_program(const char *name);

void log_msg(LogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(LogLevel level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#define LOOM_LOG_FN(name, lvl)                                                                                         \
	__attribute__((format(printf, 1, 2))) inline void name(const char *fmt, ...)                                   \
	{                                                                                                              \
		if (static_cast<int>(lvl) > static_cast<int>(log_level()))                                             \
			return;                                                                                        \
		va_list ap;                                                                                            \
		va_start(ap, fmt);                                                                                     \
		log_vmsg(lvl, fmt, ap);                                                                                \
		va_end(ap);                                                                                            \
	}
LOOM_LOG_FN(log_error, LogLevel::error)
LOOM_LOG_FN(log_warning, LogLevel::warning)
LOOM_LOG_FN(log_info, LogLevel::info)
LOOM_LOG_FN(log_debug, LogLevel::debug)
#undef LOOM_LOG_FN

// printf into a std::string.
std::string strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace loom
