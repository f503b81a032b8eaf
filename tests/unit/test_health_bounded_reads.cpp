// Unit tests: every read of loom health is bounded (read_file_bounded in
// lib/util/fs): FIFOs, sockets and devices refused, caps, errnos and tails,
// and the collectors' readers through them. FIFOs are made with mkfifo; each
// test that makes one arms alarm() first, so that a regression (a blocking
// open or read) kills the test instead of hanging `make check`. The suite,
// with garbage in sysfs (test_health_sysfs_garbage.cpp).
#include "lib/health/gather.hpp"
#include "lib/health/host_sysfs.hpp"
#include "lib/health/infiniband.hpp"
#include "lib/health/kernel_log.hpp"
#include "lib/health/nvidia_smi.hpp"
#include "lib/util/fs.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

// Last: check.h defines a fail() macro that clashes with <ios>.
#include "tests/unit/bounded_reads_fixture.hpp"

using namespace loom;
using namespace loom::health;
using namespace loom::health::testing;

START_TEST(fifo_socket_and_devices_are_refused)
{
	::alarm(20);
	std::string root = temp_dir();
	fifo(root, "log.fifo");
	auto t0 = std::chrono::steady_clock::now();
	auto r = read_file(root + "/log.fifo");
	ck_assert(!r);
	ck_assert_sstr_eq(r.error().str(), root + "/log.fifo: is a FIFO, not a file: refused");
	ck_assert(seconds_since(t0) < 1.0);
	// A socket, a directory, a device: refused by default, naming the path.
	std::string sock = root + "/s.sock";
	int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {};
	sa.sun_family = AF_UNIX;
	std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock.c_str());
	ck_assert_int_eq(::bind(fd, reinterpret_cast<struct sockaddr *>(&sa), sizeof sa), 0);
	ck_assert_sstr_eq(read_file(sock).error().str(), sock + ": is a socket, not a file: refused");
	::close(fd);
	ck_assert_sstr_eq(read_file(root).error().str(), root + ": is a directory");
	ck_assert_sstr_eq(read_file("/dev/null").error().str(),
			  "/dev/null: is a character device, not a file: refused");
	// Allowed, a device is read without blocking, and within the cap.
	ReadBounds dev;
	dev.allow_char_device = true;
	ck_assert_sstr_eq(*read_file_bounded("/dev/null", dev), "");
	dev.max_bytes = 100;
	auto zero = read_file_bounded("/dev/zero", dev);
	ck_assert_sstr_eq(zero.error().str(), "/dev/zero: larger than the 100-byte cap: refused");
	dev.over = ReadBounds::Over::keep_head;
	ck_assert_int_eq(read_file_bounded("/dev/zero", dev)->size(), 100);
	// keep_tail cannot seek a device's end: it keeps the head too.
	dev.over = ReadBounds::Over::keep_tail;
	ck_assert_int_eq(read_file_bounded("/dev/zero", dev)->size(), 100);
	// A device that does not stop within the deadline.
	dev.max_bytes = 1ull << 40;
	dev.over = ReadBounds::Over::error;
	dev.deadline_ms = 50;
	auto endless = read_file_bounded("/dev/urandom", dev);
	ck_assert(!endless);
	ck_assert_sstr_eq(endless.error().str(), "/dev/urandom: no end of file within 50 ms: refused");
	remove_tree(root);
	::alarm(0);
}
END_TEST

START_TEST(caps_errnos_and_tails)
{
	std::string root = temp_dir();
	put(root, "big", std::string(1000, 'a') + "\nlast line\n");
	auto big = read_file(root + "/big", 100);
	ck_assert_sstr_eq(big.error().str(), root + "/big: larger than the 100-byte cap: refused");
	ReadBounds b;
	b.max_bytes = 10;
	b.over = ReadBounds::Over::keep_tail;
	ck_assert_sstr_eq(*read_file_bounded(root + "/big", b), "last line\n");
	b.over = ReadBounds::Over::keep_head;
	ck_assert_sstr_eq(*read_file_bounded(root + "/big", b), "aaaaaaaaaa");
	int errnum = 0;
	auto missing = read_file_bounded(root + "/missing", b, &errnum);
	ck_assert(!missing);
	ck_assert_int_eq(errnum, ENOENT);
	ck_assert(has(missing.error().str(), root + "/missing: cannot open: "));
	// procfs says st_size 0 and is read to EOF; /proc/self/mem at offset 0 is EIO.
	ck_assert(has(*read_file("/proc/self/status"), "PPid:"));
	ck_assert(!read_file_bounded("/proc/self/mem", b, &errnum));
	ck_assert_int_eq(errnum, EIO);
	remove_tree(root);
}
END_TEST

START_TEST(fifo_kernel_log_nvidia_smi_and_sysfs)
{
	::alarm(20);
	std::string root = temp_dir();
	fifo(root, "var/log/kern.log");
	fifo(root, "var/log/syslog");
	fifo(root, "nvidia-smi-q.txt");
	fifo(root, "ibstat.txt");
	fifo(root, "sys/class/hwmon/hwmon0/temp1_input");
	fifo(root, "sys/devices/system/edac/mc/mc0/ce_count");
	auto t0 = std::chrono::steady_clock::now();
	auto k = read_kernel_log(root, "var/log/kern.log");
	ck_assert_sstr_eq(k.error().str(), root + "/var/log/kern.log: is a FIFO, not a file: refused");
	auto smi = read_nvidia_smi_q(root + "/nvidia-smi-q.txt");
	ck_assert_sstr_eq(smi.error().str(), root + "/nvidia-smi-q.txt: is a FIFO, not a file: refused");
	auto ibstat = read_ibstat(root + "/ibstat.txt");
	ck_assert_sstr_eq(ibstat.error().str(), root + "/ibstat.txt: is a FIFO, not a file: refused");
	std::vector<Error> problems;
	ck_assert_int_eq(read_hwmon(root + "/sys/class/hwmon", problems).size(), 0);
	std::string temp = root + "/sys/class/hwmon/hwmon0/temp1_input";
	ck_assert_sstr_eq(problem_for(problems, temp), temp + ": is a FIFO, not a file: refused");
	// gather() reads them all through the same readers: each an error, no wait.
	GatherOptions opt;
	opt.root = root;
	opt.kernel_logs = {"var/log/kern.log"};
	opt.syslog = "var/log/syslog";
	NodeSample s = gather(opt);
	std::string all;
	for (const auto &e : s.errors)
		all += e.collector + ": " + e.message + "\n";
	ck_assert_msg(has(all, "kernel_log: " + root + "/var/log/kern.log: is a FIFO"), "%s", all.c_str());
	ck_assert_msg(has(all, "syslog: " + root + "/var/log/syslog: is a FIFO"), "%s", all.c_str());
	ck_assert_msg(has(all, "gpu: " + root + "/nvidia-smi-q.txt: is a FIFO"), "%s", all.c_str());
	ck_assert_msg(has(all, "hwmon: " + temp + ": is a FIFO"), "%s", all.c_str());
	ck_assert_msg(has(all, "edac: " + root + "/sys/devices/system/edac/mc/mc0/ce_count: is a FIFO"), "%s",
		      all.c_str());
	ck_assert(seconds_since(t0) < 1.0);
	remove_tree(root);
	::alarm(0);
}
END_TEST

START_TEST(kernel_log_tail_from_a_whole_line)
{
	std::string root = temp_dir();
	put(root, "kern.log", "first line\nsecond line\nthird line\n");
	// The last 15 bytes start inside "second line": the log starts after it.
	ck_assert_sstr_eq(*read_kernel_log(root, "kern.log", nullptr, 15), "third line\n");
	ck_assert_sstr_eq(*read_kernel_log(root, "kern.log"), "first line\nsecond line\nthird line\n");
	auto none = read_kernel_log(root, "missing.log");
	ck_assert(!none);
	ck_assert(has(none.error().str(), root + "/missing.log: cannot read kernel log: "));
	remove_tree(root);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("health_bounded_reads");
	TCase *tc = tcase_create("bounded_reads");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, fifo_socket_and_devices_are_refused);
	tcase_add_test(tc, caps_errnos_and_tails);
	tcase_add_test(tc, fifo_kernel_log_nvidia_smi_and_sysfs);
	tcase_add_test(tc, kernel_log_tail_from_a_whole_line);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, health_sysfs_garbage_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
