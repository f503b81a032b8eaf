#include "lib/ckpt/request.hpp"

#include "lib/ckpt/coordinator.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json.hpp"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <json-c/json.h>
#include <sys/stat.h>
#include <unistd.h>

namespace loom::ckpt {
namespace {

// A unix time, as the manifest's "created".
bool is_unix_time(double t) { return std::isfinite(t) && t >= 0 && t < 1e11; }

bool is_reason_word(const std::string &s)
{
	if (s.empty() || s.size() > 32)
		return false;
	for (char c : s)
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	return true;
}

const char *kind_of(mode_t mode)
{
	return S_ISDIR(mode)                    ? "a directory"
	       : S_ISFIFO(mode)                 ? "a FIFO"
	       : S_ISSOCK(mode)                 ? "a socket"
	       : S_ISLNK(mode)                  ? "a symlink"
	       : S_ISCHR(mode) || S_ISBLK(mode) ? "a device"
						: "not a regular file";
}

// The file's bytes, at most max_bytes; 'fd' is a regular file.
expected<std::string> read_small(int fd, const std::string &path, size_t max_bytes)
{
	std::string text;
	char buf[1024];
	for (;;) {
		ssize_t n = ::read(fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return unexpected(path, std::string("cannot read: ") + std::strerror(errno));
		if (n == 0)
			return text;
		text.append(buf, static_cast<size_t>(n));
		if (text.size() > max_bytes)
			return unexpected(path, "larger than " + std::to_string(max_bytes) + " bytes: refused");
	}
}

} // namespace

const char *request_reason(Ask a)
{
	switch (a) {
	case Ask::none:
		return "none";
	case Ask::interval:
		return "interval";
	case Ask::time_limit:
		return "time_limit";
	case Ask::suspect:
		return "suspect";
	}
	return "unknown";
}

expected<Request> parse_request(std::string_view text, const std::string &source)
{
	auto doc = json_parse(text, source, 4);
	if (!doc)
		return unexpected(doc.error());
	ObjectReader r(doc->get(), "$");
	if (!r.ok())
		return unexpected(r.error().within(source));
	auto fail = [&](const Error &e) { return unexpected(e.within(source)); };
	Request q;
	auto seq = r.integer("seq", 1, request_max_seq);
	if (!seq)
		return fail(seq.error());
	auto reason = r.str("reason");
	if (!reason)
		return fail(reason.error());
	auto time = r.number("time");
	if (!time)
		return fail(time.error());
	if (!is_unix_time(*time))
		return fail(Error(r.field_path("time"), "expected a unix time"));
	if (auto st = r.finish(); !st)
		return fail(st.error());
	q.seq = *seq, q.reason = *reason, q.time = *time;
	return q;
}

std::string format_request(const Request &r)
{
	Json o = Json::object();
	o.set("seq", Json::integer(r.seq));
	o.set("reason", Json::string(r.reason));
	o.set("time", Json::number(r.time));
	return o.dump(false);
}

expected<std::string> read_small_file(const std::string &path, size_t max_bytes, int *errnum)
{
	if (errnum)
		*errnum = 0;
	// lstat first: a device or a FIFO is never opened (opening some has effects).
	struct stat sb;
	if (::lstat(path.c_str(), &sb) != 0) {
		if (errnum)
			*errnum = errno;
		return unexpected(path, std::string("cannot read: ") + std::strerror(errno));
	}
	if (!S_ISREG(sb.st_mode))
		return unexpected(path, std::string("is ") + kind_of(sb.st_mode) + ", not a file: refused");
	int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		if (errnum)
			*errnum = e;
		if (e == ELOOP)
			return unexpected(path, "is a symlink, not a file: refused");
		return unexpected(path, std::string("cannot open: ") + std::strerror(e));
	}
	// Replaced between lstat and open: judge what was opened.
	if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		::close(fd);
		return unexpected(path, "not a regular file: refused");
	}
	auto text = read_small(fd, path, max_bytes); // stops past max_bytes, whatever st_size says
	::close(fd);
	return text;
}

expected<Request> read_request(const std::string &dir, int *errnum)
{
	std::string path = path_join(dir, request_name);
	auto text = read_small_file(path, request_max_bytes, errnum);
	if (!text)
		return unexpected(text.error());
	return parse_request(*text, path);
}

expected<int64_t> write_request(const std::string &dir, const std::string &reason, double now)
{
	std::string path = path_join(dir, request_name);
	if (!is_reason_word(reason))
		return unexpected(path, "reason '" + shown(reason) +
						"': expected a lower-case word ([a-z0-9_], 1 to 32 bytes)");
	if (!is_unix_time(now))
		return unexpected(path, "time " + std::to_string(now) + ": expected a unix time");
	int e = 0;
	Request q{1, reason, now};
	auto current = read_request(dir, &e);
	if (current) {
		if (current->seq == request_max_seq)
			return unexpected(path, "seq " + std::to_string(current->seq) + " cannot grow");
		q.seq = current->seq + 1;
	} else if (e != ENOENT) {
		const Error &why = current.error();
		return unexpected(why.where, why.message + " (the next request cannot be numbered)");
	}
	if (auto st = write_file_atomic(path, format_request(q), 0644); !st)
		return unexpected(st.error());
	return q.seq;
}

} // namespace loom::ckpt
