// loom ckpt: a request to checkpoint from outside the program (protocol 7.5).
//
// The file <dir>/.loom-request holds one JSON object
//   {"seq": n, "reason": "time_limit", "time": t}
// seq: an integer from 1 to 2^53 - 1, one more than the request before (the first is 1);
// reason: why (request_reason of the coordinator's ask: interval,
// time_limit, suspect);
// time: when, seconds since the epoch. Every rank of a job sees it, where a
// signal reaches only the processes it is sent to. spank_ckpt writes it as
// the job's user (loom-ckpt-helper request); the SDKs read it and take a seq
// larger than the one seen when the program started as a request.
//
// This is the one C++ definition of the file: writer and strict reader.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::ckpt {

inline constexpr const char *request_name = ".loom-request";
// A request file is one small object: a larger one is refused unread.
inline constexpr size_t request_max_bytes = 4096;
// The largest seq: 2^53 - 1, the largest integer every JSON reader holds
// exactly (RFC 8259 section 6); json-c would clamp a larger one silently.
inline constexpr int64_t request_max_seq = 9007199254740991;

enum class Ask; // lib/ckpt/coordinator.hpp

// The reason written for what the coordinator asks for: "interval",
// "time_limit", "suspect" ("none" for Ask::none).
const char *request_reason(Ask a);

struct Request {
	int64_t seq = 0;
	std::string reason;
	double time = 0;
};

// The text of the request file: exactly the three fields, or an error naming
// 'source' and the field ($.seq) that is wrong.
expected<Request> parse_request(std::string_view text, const std::string &source);
// The text written for a request (compact JSON, one line).
std::string format_request(const Request &r);

// The bytes of a small regular file (at most max_bytes): never through a
// symlink, never opening a device or a FIFO. errnum, when given, is the
// errno of a failed lstat or open (ENOENT: absent), else 0. The request file
// and the stamped step of section 7.5 are read with it.
expected<std::string> read_small_file(const std::string &path, size_t max_bytes, int *errnum = nullptr);

// Read <dir>/.loom-request. Opened with O_NOFOLLOW and O_NONBLOCK: a symlink,
// a FIFO (never waited on), a directory or a device is refused, and so is a
// file over request_max_bytes. Errors name the file. *errnum (when given) is
// the errno of a failed open (ENOENT: there is no request yet), else 0.
expected<Request> read_request(const std::string &dir, int *errnum = nullptr);

// Write the next request atomically (.loom-request.tmp.<pid> 0644, fsync,
// rename, fsync of dir): seq is the current one plus one, 1 when there is no
// file. A request file that cannot be read or parsed is an error naming it,
// and nothing is written (a seq that went backwards would be no request).
// 'reason' is a lower-case word ([a-z0-9_], at most 32 bytes). Returns the
// new seq.
expected<int64_t> write_request(const std::string &dir, const std::string &reason, double now);

} // namespace loom::ckpt
