#include "lib/exchange/suspect_mark.hpp"

namespace loom::exchange {

std::string suspect_mark(std::string_view check, std::string_view evidence, size_t max_len)
{
	std::string m = "loom:suspect:" + std::string(check) + ":" + std::string(evidence);
	// One line, no quotes: it travels on scontrol's command line and is shown by sinfo.
	for (char &ch : m)
		if (ch == '\n' || ch == '\r' || ch == '"' || ch == '\'' || static_cast<unsigned char>(ch) < 0x20)
			ch = ' ';
	if (m.size() > max_len)
		m = m.substr(0, max_len - 3) + "...";
	return m;
}

bool is_loom_suspect_mark(std::string_view text) { return text.rfind("loom:suspect", 0) == 0; }

bool is_link_check(std::string_view check)
{
	// Every check name health::judge_network (lib/health/rules_host.cpp) gives a finding.
	for (const char *c : {"ib_hw_counter", "ib_port_count", "ib_port", "ib_rate", "ib_errors", "link_flaps"})
		if (check == c)
			return true;
	return false;
}

bool is_link_suspect_mark(std::string_view text)
{
	constexpr std::string_view head = "loom:suspect:";
	if (text.rfind(head, 0) != 0)
		return false;
	std::string_view rest = text.substr(head.size());
	return is_link_check(rest.substr(0, rest.find(':')));
}

} // namespace loom::exchange
