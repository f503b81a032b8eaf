#include "lib/util/log.hpp"

#include <atomic>
#include <cstdio>
#include <vector>

namespace loom {
namespace {

std::atomic<LogSink> g_sink{nullptr};
std::atomic<int> g_level{static_cast<int>(LogLevel::info)};
std::atomic<const char *> g_program{"loom"};

void stderr_sink(LogLevel level, const char *message)
{
	static const char *const names[] = {"error", "warning", "", ""};
	const char *tag = names[static_cast<int>(level)];
	if (*tag)
		std::fprintf(stderr, "%s: %s: %s\n", g_program.load(), tag, message);
	else
		std::fprintf(stderr, "%s: %s\n", g_program.load(), message);
}

std::string vformat(const char *fmt, va_list ap)
{
	char small[512];
	va_list copy;
	va_copy(copy, ap);
	int n = std::vsnprintf(small, sizeof(small), fmt, copy);
	va_end(copy);
	if (n < 0)
		return fmt;
	if (static_cast<size_t>(n) < sizeof(small))
		return std::string(small, static_cast<size_t>(n));
	std::vector<char> big(static_cast<size_t>(n) + 1);
	std::vsnprintf(big.data(), big.size(), fmt, ap);
	return std::string(big.data(), static_cast<size_t>(n));
}

} // namespace

void log_set_sink(LogSink sink) { g_sink.store(sink); }
void log_set_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }
void log_set_program(const char *name) { g_program.store(name ? name : "loom"); }

void log_vmsg(LogLevel level, const char *fmt, va_list ap)
{
	if (static_cast<int>(level) > g_level.load())
		return;
	std::string msg = vformat(fmt, ap);
	LogSink sink = g_sink.load();
	(sink ? sink : stderr_sink)(level, msg.c_str());
}

void log_msg(LogLevel level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

std::string strprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::string s = vformat(fmt, ap);
	va_end(ap);
	return s;
}

} // namespace loom
