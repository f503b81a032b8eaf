// Unit tests for the checkpoint protocol: SHA-256, manifest, staging and
// commit, catalog with corruption and fallback, retention and the layout's
// names; and the suite, with the async writer (test_ckpt_async_writer.cpp)
// and a job's directory and restarts (test_ckpt_job_dir.cpp).
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/manifest.hpp"
#include "lib/ckpt/sha256.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/ckpt_protocol_fixture.hpp"

using namespace loom;
using namespace loom::ckpt;

namespace {

// Commit a checkpoint with one file "model.bin" holding 'content'.
std::string commit_one(const std::string &dir, int64_t step, const std::string &content)
{
	auto st = Staging::begin(dir, step);
	ck_assert_msg(st.has_value(), "%s", st ? "" : st.error().str().c_str());
	auto e = st->write_file("model.bin", content);
	ck_assert(e.has_value());
	auto e2 = st->write_file("opt/state.bin", "optimizer " + std::to_string(step));
	ck_assert(e2.has_value());
	auto p = st->commit(Manifest{});
	ck_assert_msg(p.has_value(), "%s", p ? "" : p.error().str().c_str());
	return *p;
}

void flip_byte(const std::string &path, off_t at)
{
	int fd = ::open(path.c_str(), O_RDWR);
	ck_assert_int_ge(fd, 0);
	char c;
	ck_assert_int_eq(::pread(fd, &c, 1, at), 1);
	c ^= 0x55;
	ck_assert_int_eq(::pwrite(fd, &c, 1, at), 1);
	::close(fd);
}

} // namespace

START_TEST(sha256_vectors)
{
	// FIPS 180-2 / NIST CAVP vectors, through libcrypto.
	ck_assert_sstr_eq(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	ck_assert_sstr_eq(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	std::string m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	ck_assert_sstr_eq(sha256_hex(m.data(), m.size()),
			  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	std::string m896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
			   "klmnopqrlmnopqrsmnopqrstnopqrstu";
	ck_assert_sstr_eq(sha256_hex(m896.data(), m896.size()),
			  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	std::string million(1000000, 'a');
	// Fed in odd pieces: the buffering must not matter.
	Sha256 h;
	for (size_t i = 0; i < million.size(); i += 777)
		h.update(million.data() + i, std::min<size_t>(777, million.size() - i));
	ck_assert_sstr_eq(h.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	// A finished digest is not reused: a second hex() is empty, never a made-up sum.
	ck_assert_sstr_eq(h.hex(), "");
	// A file, from a descriptor, larger than one read buffer (4 MiB).
	char path[] = "/tmp/loom-sha-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	std::string big(9u << 20, 'a');
	ck_assert_int_eq(write(fd, big.data(), big.size()), static_cast<ssize_t>(big.size()));
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	auto d = sha256_fd(fd, path);
	close(fd);
	unlink(path);
	ck_assert_msg(d.has_value(), "%s", d ? "" : d.error().str().c_str());
	ck_assert_int_eq(d->size, big.size());
	ck_assert_sstr_eq(d->sha256, sha256_hex(big.data(), big.size()));
}
END_TEST

START_TEST(manifest_round_trip_and_strictness)
{
	Manifest m;
	m.step = 1200;
	m.world_size = 8;
	m.created = 1700000000.25;
	m.write_seconds = 3.5;
	m.job_id = "42";
	m.restart_count = 2;
	m.files = {{"model.bin", 10, std::string(64, 'a')}, {"opt/state.bin", 0, std::string(64, 'b')}};
	auto back = manifest_parse(manifest_to_json(m), "m.json");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_int_eq(back->step, 1200);
	ck_assert_int_eq(back->world_size, 8);
	ck_assert(back->created == 1700000000.25);
	ck_assert_sstr_eq(back->job_id, "42");
	ck_assert_int_eq(back->files.size(), 2);
	ck_assert_sstr_eq(back->files[1].path, "opt/state.bin");
	ck_assert_int_eq(back->total_bytes(), 10);

	struct Bad {
		const char *json, *needle;
	} bad[] = {
		{R"({"format":"loom-ckpt/3","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[]})",
		 "unsupported format"},
		{R"({"format":"loom-ckpt/1","step":-1,"world_size":1,"created":1,"write_seconds":0,"files":[]})",
		 "$.step"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[],"extra":1})",
		 "extra"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[{"path":"../x","size":1,"sha256":"00"}]})",
		 "$.files[0].path"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[{"path":"x","size":1,"sha256":"00"}]})",
		 "$.files[0].sha256"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[{"path":"/etc/passwd","size":1,"sha256":"00"}]})",
		 "relative"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":0,"created":1,"write_seconds":0,"files":[]})",
		 "$.world_size"},
		{R"({"format":"loom-ckpt/1","step":1)", "m.json"},
	};
	for (const auto &b : bad) {
		auto r = manifest_parse(b.json, "m.json");
		ck_assert_msg(!r.has_value(), "accepted: %s", b.json);
		ck_assert_msg(r.error().str().find(b.needle) != std::string::npos, "'%s' lacks '%s'",
			      r.error().str().c_str(), b.needle);
	}
}
END_TEST

START_TEST(commit_is_invisible_until_renamed)
{
	std::string dir = temp_dir();
	{
		auto st = Staging::begin(dir, 7);
		ck_assert(st.has_value());
		ck_assert(st->write_file("model.bin", "half written").has_value());
		auto list = list_checkpoints(dir);
		ck_assert(list.has_value());
		ck_assert_int_eq(list->size(), 0);
		auto latest = find_latest(dir, Verify::full);
		ck_assert(latest.has_value() && !latest->has_value());
		// Going out of scope without commit removes the staging directory.
	}
	struct stat sb;
	ck_assert_int_eq(::stat(path_join(dir, ".staging").c_str(), &sb), 0);
	std::string p = commit_one(dir, 7, "weights at 7");
	ck_assert_sstr_eq(p, dir + "/step-000000000007");
	auto latest = read_latest(dir);
	ck_assert(latest.has_value());
	ck_assert_sstr_eq(*latest, "step-000000000007");
	auto found = find_latest(dir, Verify::full);
	ck_assert(found.has_value() && found->has_value());
	ck_assert_int_eq((*found)->entry.step, 7);
	auto body = read_file(p + "/model.bin");
	ck_assert_sstr_eq(*body, "weights at 7");
	ck_assert_int_eq((*found)->entry.manifest->files.size(), 2);
	ck_assert((*found)->entry.manifest->created > 1.6e9);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(corrupt_newest_falls_back)
{
	std::string dir = temp_dir();
	commit_one(dir, 100, std::string(5000, 'x'));
	commit_one(dir, 200, std::string(5000, 'y'));
	std::string newest = commit_one(dir, 300, std::string(5000, 'z'));
	// A flipped byte: same size, so only the checksum catches it.
	flip_byte(newest + "/model.bin", 4000);
	auto quick = find_latest(dir, Verify::quick);
	ck_assert_int_eq((*quick)->entry.step, 300);
	auto full = find_latest(dir, Verify::full);
	ck_assert(full.has_value() && full->has_value());
	ck_assert_int_eq((*full)->entry.step, 200);
	ck_assert_int_eq((*full)->skipped.size(), 1);
	ck_assert_msg((*full)->skipped[0].problem.find("checksum") != std::string::npos, "%s",
		      (*full)->skipped[0].problem.c_str());
	// Truncated file at 200: quick verification catches the size.
	ck_assert_int_eq(::truncate((dir + "/step-000000000200/model.bin").c_str(), 10), 0);
	quick = find_latest(dir, Verify::quick);
	ck_assert_int_eq((*quick)->entry.step, 300);
	full = find_latest(dir, Verify::full);
	ck_assert_int_eq((*full)->entry.step, 100);
	// A checkpoint without its manifest does not count; a symlink named like one is not followed.
	ck_assert_int_eq(::unlink((dir + "/step-000000000100/MANIFEST.json").c_str()), 0);
	ck_assert_int_eq(::symlink("/etc", (dir + "/step-000000000900").c_str()), 0);
	full = find_latest(dir, Verify::full);
	ck_assert(full.has_value() && !full->has_value());
	(void)remove_tree(dir);
}
END_TEST

START_TEST(recommit_same_step_replaces)
{
	std::string dir = temp_dir();
	std::string p = commit_one(dir, 5, "first");
	flip_byte(p + "/model.bin", 0);
	commit_one(dir, 5, "second");
	auto f = find_latest(dir, Verify::full);
	ck_assert((*f)->entry.step == 5);
	ck_assert_sstr_eq(*read_file(p + "/model.bin"), "second");
	auto names = list_checkpoints(dir);
	ck_assert_int_eq(names->size(), 1);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(retention_keeps_newest_complete)
{
	std::string dir = temp_dir();
	for (int s = 1; s <= 6; s++)
		commit_one(dir, s * 10, "w" + std::to_string(s));
	// 30 is broken: it does not count as one of the kept, and is older than them.
	ck_assert_int_eq(::truncate((dir + "/step-000000000030/model.bin").c_str(), 0), 0);
	// A staging directory of a dead writer on this host.
	std::string dead = dir + "/.staging/step-000000000070.x.999999999.0";
	char host[256] = "";
	::gethostname(host, sizeof(host) - 1);
	std::string h = host;
	for (char &c : h)
		if (c == '.')
			c = '_';
	dead = dir + "/.staging/step-000000000070." + h + ".999999999.0";
	ck_assert_int_eq(::mkdir(dead.c_str(), 0700), 0);
	auto r = prune(dir, 2);
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->kept.size(), 2);
	ck_assert_sstr_eq(r->kept[0], "step-000000000060");
	ck_assert_sstr_eq(r->kept[1], "step-000000000050");
	auto list = list_checkpoints(dir);
	ck_assert_int_eq(list->size(), 2);
	ck_assert_int_eq(r->staging_removed.size(), 1);
	struct stat sb;
	ck_assert_int_ne(::stat(dead.c_str(), &sb), 0);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(layout_names)
{
	ck_assert_sstr_eq(checkpoint_name(1200), "step-000000001200");
	ck_assert_int_eq(*parse_checkpoint_name("step-000000001200"), 1200);
	ck_assert(!parse_checkpoint_name("step-00000000120x"));
	ck_assert(!parse_checkpoint_name("step-1200"));
	auto o = parse_staging_name("step-000000001200.node_a.123.4");
	ck_assert(o.has_value());
	ck_assert_sstr_eq(o->host, "node_a");
	ck_assert_int_eq(o->pid, 123);
	for (const char *bad : {"", "/x", "a/../b", "a//b", "./a", "MANIFEST.json", "a\nb"})
		ck_assert_msg(!check_relative_name(bad).has_value(), "accepted '%s'", bad);
	ck_assert(check_relative_name("shard/rank0.bin").has_value());
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_protocol");
	TCase *tc = tcase_create("protocol");
	tcase_add_test(tc, sha256_vectors);
	tcase_add_test(tc, manifest_round_trip_and_strictness);
	tcase_add_test(tc, commit_is_invisible_until_renamed);
	tcase_add_test(tc, corrupt_newest_falls_back);
	tcase_add_test(tc, recommit_same_step_replaces);
	tcase_add_test(tc, retention_keeps_newest_complete);
	tcase_add_test(tc, layout_names);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, ckpt_async_writer_tests());
	suite_add_tcase(s, ckpt_job_dir_tests());
	return s;
}

LOOM_CHECK_MAIN(make_suite)
