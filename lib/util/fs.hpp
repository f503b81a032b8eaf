// loom: small, careful file helpers shared by every part.
#pragma once

#include "lib/util/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace loom {

// What read_file_bounded may read, and for how long.
//
// The file is stat()ed before it is opened (opening some devices has side
// effects: /dev/watchdog arms, a tape rewinds), then opened with
// O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_NOCTTY and fstat()ed again. Refused, with an
// error naming the path: directories, FIFOs and sockets ("is a FIFO, not a
// file: refused": a recorded kernel log that is a FIFO would block a reader
// until a writer comes, that is forever), block devices, and character
// devices unless allow_char_device. Regular files are read to EOF whatever
// st_size says (sysfs reports 4096, procfs 0). A device is read without
// blocking, what is there now, until EAGAIN or EOF (EAGAIN from a procfs file
// ends its read the same way); EPIPE from a character device (/dev/kmsg: a
// record overwritten before it was read) is skipped over. A device cannot be
// read from its end: keep_tail keeps its head.
//
// Limitation: O_NONBLOCK does nothing for regular files. A read() of a file
// on a hung NFS server (or a wedged disk) sleeps in the kernel and cannot be
// interrupted from here, and neither can the stat() or open() of such a
// path; the deadline is checked between read() calls only. Bounding those is
// the caller's watchdog's job (loom health check has an overall --timeout).
struct ReadBounds {
	uint64_t max_bytes = 256ull << 20;
	// Content longer than max_bytes: an error naming the path and the cap
	// (the default), or keep its first or its last max_bytes.
	enum class Over { error, keep_head, keep_tail } over = Over::error;
	bool allow_char_device = false; // /dev/kmsg, read without blocking
	// Zero: no deadline. Otherwise reading for longer is an error naming the
	// path and the deadline (a device that does not stop, a crawling server).
	// (Milliseconds as a number: <chrono> brings <ios>, whose fail() clashes
	// with Check's macro in the unit tests.)
	uint32_t deadline_ms = 0;
};

// The file's content within 'bounds'. On failure, *errnum (when given) is the
// errno that caused it (ENOENT: no such file; EIO, ENODATA...: the driver
// refused the read), 0 for a refusal of ours (a FIFO, the cap, the deadline).
expected<std::string> read_file_bounded(const std::string &path, const ReadBounds &bounds, int *errnum = nullptr);
// Whole file into memory, by read_file_bounded's rules with no deadline and
// no devices: files larger than max_bytes, FIFOs, sockets and devices are
// refused, so that a configuration file that is a FIFO cannot hang a daemon.
expected<std::string> read_file(const std::string &path, uint64_t max_bytes = 256ull << 20);
// Write text to path atomically: a temporary file beside it, fsync, rename,
// fsync of the directory. Readers see the old content or the new, never half.
// mkdir -p: each missing directory of an absolute or relative path made with
// mode; a component that exists and is not a directory (or a link to one) is
// an error naming it.
status make_dirs(const std::string &dir, unsigned mode = 0755);
status write_file_atomic(const std::string &path, std::string_view text, unsigned mode = 0644);
// How write_file_atomic writes, where the defaults do not fit.
struct AtomicWrite {
	unsigned mode = 0644;
	// The temporary file (the path, ".tmp.", the pid: a name others can
	// guess) must be new (O_EXCL). In a directory others may write (/tmp),
	// a file planted under that name is then refused, never written through
	// and renamed into place as the writer's. Off, one left by a writer that
	// died is reused.
	bool exclusive = false;
	// fsync of the file and its directory, so that the new content survives
	// a crash; a scratch file that dies with its job does without.
	bool durable = true;
};
status write_file_atomic(const std::string &path, std::string_view text, const AtomicWrite &how);
// Join path pieces with single slashes.
std::string path_join(std::string_view a, std::string_view b);
// Names in a directory, sorted, without '.'-prefixed entries; empty when the
// directory cannot be read.
std::vector<std::string> list_dir(const std::string &dir);
// The same, but only a directory that is not there (ENOENT, ENOTDIR) is empty:
// one that exists and cannot be read (EACCES, EIO) is an error naming it.
expected<std::vector<std::string>> list_dir_checked(const std::string &dir);
// Split text into lines (without the newline characters).
std::vector<std::string> split_lines(std::string_view text);
// Trim ASCII whitespace on both ends.
std::string_view trim(std::string_view s);
// Text from a file for a message: at most 'max' bytes, control and non-ASCII
// bytes as \xNN, so that what a user sees is what the file holds.
std::string shown(std::string_view s, size_t max = 40);
// ASCII lower case.
std::string lower(std::string_view s);
// The words with 'sep' between them.
std::string join(const std::vector<std::string> &words, std::string_view sep);

} // namespace loom
