#include "lib/ckpt/layout.hpp"

#include "lib/util/log.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <unistd.h>

namespace loom::ckpt {

std::string checkpoint_name(int64_t step) { return strprintf("step-%012lld", static_cast<long long>(step)); }

std::optional<int64_t> parse_checkpoint_name(std::string_view name)
{
	if (name.size() != 17 || name.substr(0, 5) != "step-")
		return std::nullopt;
	int64_t v = 0;
	for (char c : name.substr(5)) {
		if (c < '0' || c > '9')
			return std::nullopt;
		v = v * 10 + (c - '0');
	}
	return v;
}

std::string staging_host()
{
	char host[256] = "localhost";
	if (::gethostname(host, sizeof(host) - 1) != 0)
		std::snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	for (char *c = host; *c; c++)
		if (*c == '.' || *c == '/')
			*c = '_';
	return host;
}

std::string staging_name(int64_t step)
{
	static std::atomic<unsigned> seq{0};
	return checkpoint_name(step) + "." + staging_host() + "." + std::to_string(::getpid()) + "." +
	       std::to_string(seq.fetch_add(1));
}

std::string shared_staging_name(int64_t step, const std::string &run, uint64_t seq)
{
	return checkpoint_name(step) + ".run-" + run + "." + std::to_string(seq);
}

std::string rank_dir_name(int64_t rank) { return strprintf("rank-%05lld", static_cast<long long>(rank)); }

std::string part_file_name(int64_t rank) { return rank_dir_name(rank) + ".json"; }

std::optional<StagingOwner> parse_staging_name(std::string_view name)
{
	// step-NNNNNNNNNNNN.<host>.<pid>.<seq>
	if (name.size() < 18 || !parse_checkpoint_name(name.substr(0, 17)) || name[17] != '.')
		return std::nullopt;
	std::string_view rest = name.substr(18);
	// step-N.run-<run>.<seq>: shared by several ranks, no owner (a run has no '.').
	if (rest.substr(0, 4) == "run-" && rest.find('.') == rest.rfind('.'))
		return std::nullopt;
	size_t last = rest.rfind('.');
	if (last == std::string_view::npos)
		return std::nullopt;
	std::string_view head = rest.substr(0, last);
	size_t mid = head.rfind('.');
	if (mid == std::string_view::npos || mid == 0)
		return std::nullopt;
	StagingOwner o;
	o.host = std::string(head.substr(0, mid));
	std::string_view pid = head.substr(mid + 1);
	if (pid.empty() || pid.size() > 9)
		return std::nullopt;
	for (char c : pid) {
		if (c < '0' || c > '9')
			return std::nullopt;
		o.pid = o.pid * 10 + (c - '0');
	}
	return o;
}

bool is_utf8(std::string_view s)
{
	size_t i = 0;
	while (i < s.size()) {
		auto c = static_cast<unsigned char>(s[i]);
		size_t n;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07;
		} else {
			return false;
		}
		if (s.size() - i <= n) // the continuation bytes run past the end
			return false;
		for (size_t k = 1; k <= n; k++) {
			auto d = static_cast<unsigned char>(s[i + k]);
			if ((d & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (d & 0x3f);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return false;
		i += n + 1;
	}
	return true;
}

status check_relative_name(std::string_view name)
{
	if (name.empty())
		return unexpected("empty file name");
	if (name.size() > 4096)
		return unexpected("file name longer than 4096 characters");
	if (name.front() == '/')
		return unexpected(std::string(name), "file name must be relative");
	for (unsigned char c : name)
		if (c < 0x20 || c == 0x7f)
			return unexpected("file name contains a control character");
	if (!is_utf8(name))
		return unexpected("file name is not valid UTF-8");
	size_t start = 0;
	while (start <= name.size()) {
		size_t slash = name.find('/', start);
		if (slash == std::string_view::npos)
			slash = name.size();
		std::string_view comp = name.substr(start, slash - start);
		if (comp.empty() || comp == "." || comp == "..")
			return unexpected(std::string(name), "file name has an empty, '.' or '..' component");
		start = slash + 1;
	}
	if (name == manifest_name)
		return unexpected(std::string(name), "file name is reserved for the manifest");
	return ok();
}

bool is_loom_entry(std::string_view name)
{
	auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
	return starts("step-") || name == latest_name || starts(std::string(latest_name) + ".tmp.") ||
	       name == staging_dir_name || name == trash_dir_name || starts(".loom-");
}

} // namespace loom::ckpt
