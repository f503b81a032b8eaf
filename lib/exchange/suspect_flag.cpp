#include "lib/exchange/suspect_flag.hpp"

#include "lib/util/config.hpp"
#include "lib/util/fs.hpp"

#include <cmath>

namespace loom::exchange {

std::string suspect_flag_text(const SuspectFlag &f)
{
	std::string reason = f.reason;
	for (char &c : reason)
		if (c == '\n' || c == '\r')
			c = ' ';
	std::string out = reason + "\n";
	if (f.eta_s > 0)
		out += "eta_s=" + std::to_string(static_cast<long long>(std::ceil(f.eta_s))) + "\n";
	return out;
}

SuspectFlag parse_suspect_flag(std::string_view text)
{
	SuspectFlag f;
	bool first = true;
	for (const std::string &l : split_lines(text)) {
		std::string_view t = trim(l);
		if (first) {
			f.reason = std::string(t);
			first = false;
			continue;
		}
		if (t.rfind("eta_s=", 0) == 0)
			if (auto v = parse_real(t.substr(6), 0, 1e9); v && *v > 0)
				f.eta_s = *v;
	}
	return f;
}

} // namespace loom::exchange
