#include "lib/util/admin_comment.hpp"

namespace loom {

namespace {

std::string_view trim_spaces(std::string_view s)
{
	while (!s.empty() && s.front() == ' ')
		s.remove_prefix(1);
	while (!s.empty() && s.back() == ' ')
		s.remove_suffix(1);
	return s;
}

} // namespace

std::vector<std::string_view> admin_comment_segments(std::string_view text)
{
	std::vector<std::string_view> out;
	while (true) {
		size_t at = text.find(admin_comment_separator);
		auto seg = trim_spaces(text.substr(0, at));
		if (!seg.empty())
			out.push_back(seg);
		if (at == std::string_view::npos)
			return out;
		text.remove_prefix(at + admin_comment_separator.size());
	}
}

std::string admin_comment_replace(std::string_view existing, std::string_view prefix, std::string_view segment)
{
	std::string out;
	bool placed = false;
	for (auto seg : admin_comment_segments(existing)) {
		bool ours = seg.substr(0, prefix.size()) == prefix;
		if (ours && placed)
			continue;
		if (!out.empty())
			out += admin_comment_separator;
		out += ours ? segment : seg;
		placed |= ours;
	}
	if (!placed)
		out += (out.empty() ? std::string() : std::string(admin_comment_separator)) + std::string(segment);
	return out;
}

} // namespace loom
