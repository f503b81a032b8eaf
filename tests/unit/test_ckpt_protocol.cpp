// Unit tests for the checkpoint protocol: SHA-256, manifest, staging and
// commit, catalog with corruption and fallback, retention, the async writer
// (snapshot memory, reserve, parallel copy), safe directory creation and the
// restart budget.
#include "lib/ckpt/async_writer.hpp"
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/manifest.hpp"
#include "lib/ckpt/restart.hpp"
#include "lib/ckpt/safe_dir.hpp"
#include "lib/ckpt/sha256.hpp"
#include "lib/util/fs.hpp"

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

namespace {

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-test-ckpt-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return d;
}

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

// Bytes that differ from position to position and from 'seed' to 'seed'.
std::vector<char> pattern(size_t n, unsigned seed)
{
	std::vector<char> v(n);
	uint32_t x = 2463534242u + seed;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		v[i] = static_cast<char>(x);
	}
	return v;
}

// The newest checkpoint verifies and holds exactly these files.
void check_committed(const std::string &dir, int64_t step, const std::vector<BufferView> &files)
{
	auto f = find_latest(dir, Verify::full);
	ck_assert_msg(f.has_value() && f->has_value(), "no verified checkpoint in %s", dir.c_str());
	ck_assert_int_eq((*f)->entry.step, step);
	for (const auto &b : files) {
		auto body = read_file((*f)->entry.path + "/" + b.name);
		ck_assert_msg(body.has_value(), "%s", body ? "" : body.error().str().c_str());
		ck_assert_int_eq(body->size(), b.size);
		ck_assert_msg(b.size == 0 || std::memcmp(body->data(), b.data, b.size) == 0, "%s differs",
			      b.name.c_str());
	}
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
		{R"({"format":"loom-ckpt/3","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[]})", "unsupported format"},
		{R"({"format":"loom-ckpt/1","step":-1,"world_size":1,"created":1,"write_seconds":0,"files":[]})", "$.step"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[],"extra":1})", "extra"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[{"path":"../x","size":1,"sha256":"00"}]})", "$.files[0].path"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[{"path":"x","size":1,"sha256":"00"}]})", "$.files[0].sha256"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":1,"created":1,"write_seconds":0,"files":[{"path":"/etc/passwd","size":1,"sha256":"00"}]})", "relative"},
		{R"({"format":"loom-ckpt/1","step":1,"world_size":0,"created":1,"write_seconds":0,"files":[]})", "$.world_size"},
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

START_TEST(async_writer_commits_snapshot)
{
	std::string dir = temp_dir();
	WriterSettings s;
	s.dir = dir;
	s.keep = 2;
	AsyncWriter w(s);
	std::vector<char> weights(3 << 20, 1);
	for (int step = 1; step <= 3; step++) {
		std::fill(weights.begin(), weights.end(), static_cast<char>(step));
		ck_assert(w.save_async(step, {{"weights.bin", weights.data(), weights.size()}}).has_value());
		// Training goes on and changes its state: the snapshot must not see it.
		std::fill(weights.begin(), weights.end(), 0);
	}
	auto r = w.wait();
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->step, 3);
	ck_assert_int_eq(r->bytes, 3 << 20);
	auto f = find_latest(dir, Verify::full);
	ck_assert_int_eq((*f)->entry.step, 3);
	auto body = read_file((*f)->entry.path + "/weights.bin");
	ck_assert(*body == std::string(3 << 20, 3));
	ck_assert_int_eq(list_checkpoints(dir)->size(), 2);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(snapshot_memory_maps_and_moves)
{
	auto none = SnapshotMemory::map(0);
	ck_assert(none.has_value());
	ck_assert_ptr_null(none->data());
	auto small = SnapshotMemory::map(10);
	ck_assert(small.has_value());
	ck_assert_uint_ge(small->capacity(), 10);
	auto plain = SnapshotMemory::map((4u << 20) + 1);
	ck_assert(plain.has_value());
	ck_assert_uint_ge(plain->capacity(), (4u << 20) + 1);
	ck_assert_uint_lt(plain->capacity(), (4u << 20) + 8192);
	auto big = SnapshotMemory::map((4u << 20) + 1, true);
	ck_assert(big.has_value());
	ck_assert_uint_eq(big->capacity(), 6u << 20);
	ck_assert_uint_eq(reinterpret_cast<uintptr_t>(big->data()) % (2u << 20), 0); // huge page aligned
	big->prefault();
	for (size_t i = 0; i < big->capacity(); i += 4096)
		ck_assert_int_eq(big->data()[i], 0);
	big->data()[big->capacity() - 1] = 7;
	SnapshotMemory moved = std::move(*big);
	ck_assert_ptr_null(big->data());
	ck_assert_int_eq(moved.data()[moved.capacity() - 1], 7);
	moved = std::move(*small);
	ck_assert_uint_ge(moved.capacity(), 10);
	ck_assert_uint_lt(moved.capacity(), 1u << 20);
}
END_TEST

START_TEST(parallel_copy_is_byte_identical)
{
	// Odd sizes, odd offsets at both ends, and as many threads as chunks or more.
	for (size_t n : {size_t{1}, size_t{3}, (size_t{8} << 20) + 1, (size_t{64} << 20) + 3}) {
		auto src = pattern(n + 1, static_cast<unsigned>(n));
		auto mem = SnapshotMemory::map(n + 5);
		ck_assert(mem.has_value());
		for (int threads : {1, 2, 3, 4, 16}) {
			std::memset(mem->data(), 0x5a, n + 5);
			parallel_copy({{mem->data() + 3, src.data() + 1, n}}, threads);
			ck_assert_msg(std::memcmp(mem->data() + 3, src.data() + 1, n) == 0, "%zu bytes, %d threads", n,
				      threads);
			for (size_t i : {size_t{0}, size_t{1}, size_t{2}, n + 3, n + 4}) // nothing around it touched
				ck_assert_int_eq(mem->data()[i], 0x5a);
		}
	}
	// Several pieces, empty ones among them.
	auto a = pattern(1, 1), b = pattern((size_t{17} << 20) + 3, 2), c = pattern(4097, 3);
	std::vector<char> da(1), db(b.size()), dc(c.size());
	parallel_copy({{da.data(), a.data(), 1}, {nullptr, nullptr, 0}, {db.data(), b.data(), b.size()},
		       {dc.data(), c.data(), c.size()}},
		      3);
	ck_assert(da == a && db == b && dc == c);
	WriterSettings s;
	ck_assert_int_eq(copy_threads_for(s, (64u << 20) - 1), 1);
	ck_assert_int_ge(copy_threads_for(s, 64u << 20), 1);
	ck_assert_int_le(copy_threads_for(s, 64u << 20), 4);
	s.copy_threads = 3;
	ck_assert_int_eq(copy_threads_for(s, 1u << 30), 3);
}
END_TEST

START_TEST(async_writer_parallel_copy_odd_sizes)
{
	std::string dir = temp_dir();
	WriterSettings s;
	s.dir = dir;
	s.keep = 0;
	s.parallel_copy_min = 0; // every snapshot copied by 3 threads
	s.copy_threads = 3;
	s.huge_pages = true;
	AsyncWriter w(s);
	auto one = pattern(1, 1), big = pattern((size_t{17} << 20) + 3, 2), page = pattern(4097, 3);
	std::vector<BufferView> files = {{"one.bin", one.data(), one.size()},
					 {"empty.bin", nullptr, 0},
					 {"big.bin", big.data(), big.size()},
					 {"page.bin", page.data(), page.size()}};
	ck_assert(w.save_async(1, files).has_value());
	auto r = w.wait();
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->bytes, 1 + big.size() + page.size());
	check_committed(dir, 1, files);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(async_writer_reserve_then_save)
{
	std::string dir = temp_dir();
	WriterSettings s;
	s.dir = dir;
	s.keep = 2;
	AsyncWriter w(s);
	auto weights = pattern(3u << 20, 1), opt = pattern(1001, 2);
	std::vector<BufferView> files = {{"weights.bin", weights.data(), weights.size()},
					 {"opt.bin", opt.data(), opt.size()}};
	ck_assert(w.reserve(files).has_value());
	ck_assert(w.wait().has_value()); // the reserve is done: nothing was saved, nothing failed
	ck_assert_int_eq(list_checkpoints(dir)->size(), 0);
	size_t cap = w.snapshot_capacity();
	ck_assert_uint_ge(cap, snapshot_bytes({weights.size(), opt.size()}));
	ck_assert(w.save_async(5, files).has_value());
	std::vector<BufferView> expect = files;
	auto saved_weights = weights, saved_opt = opt;
	expect[0].data = saved_weights.data();
	expect[1].data = saved_opt.data();
	std::fill(weights.begin(), weights.end(), 0); // training goes on
	auto r = w.wait();
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->step, 5);
	check_committed(dir, 5, expect);
	ck_assert_uint_eq(w.snapshot_capacity(), cap); // the reserved memory was used, not replaced
	(void)remove_tree(dir);
}
END_TEST

START_TEST(async_writer_reserve_smaller_then_larger_save)
{
	std::string dir = temp_dir();
	WriterSettings s;
	s.dir = dir;
	AsyncWriter w(s);
	ck_assert(w.reserve(std::vector<size_t>{1000}).has_value());
	ck_assert(w.wait().has_value());
	ck_assert_uint_lt(w.snapshot_capacity(), 1u << 20);
	auto weights = pattern((5u << 20) + 7, 3);
	std::vector<BufferView> files = {{"weights.bin", weights.data(), weights.size()}};
	ck_assert(w.save_async(1, files).has_value());
	auto r = w.wait();
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	check_committed(dir, 1, files);
	ck_assert_uint_ge(w.snapshot_capacity(), weights.size());
	// A smaller reserve afterwards keeps the larger memory.
	size_t cap = w.snapshot_capacity();
	ck_assert(w.reserve(std::vector<size_t>{10}).has_value());
	ck_assert(w.wait().has_value());
	ck_assert_uint_eq(w.snapshot_capacity(), cap);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(async_writer_save_while_reserve_in_flight)
{
	std::string dir = temp_dir();
	WriterSettings s;
	s.dir = dir;
	s.keep = 0;
	AsyncWriter w(s);
	auto a = pattern((32u << 20) + 1, 4);
	std::vector<BufferView> files = {{"a.bin", a.data(), a.size()}};
	// No wait: save_async finds the reserve still faulting memory in (most likely) and waits for the rest.
	ck_assert(w.reserve(files).has_value());
	ck_assert(w.save_async(1, files).has_value());
	// A reserve while that save is being written, and a larger save right after it.
	auto b = pattern((40u << 20) + 5, 5);
	std::vector<BufferView> more = {{"a.bin", a.data(), a.size()}, {"b.bin", b.data(), b.size()}};
	ck_assert(w.reserve(more).has_value());
	ck_assert(w.busy());
	ck_assert(w.save_async(2, more).has_value());
	auto r = w.wait();
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	ck_assert_int_eq(r->step, 2);
	check_committed(dir, 2, more);
	auto list = list_checkpoints(dir);
	ck_assert_int_eq(list->size(), 2);
	auto first = read_file((*list)[1].path + "/a.bin");
	ck_assert(first.has_value() && first->size() == a.size() && std::memcmp(first->data(), a.data(), a.size()) == 0);
	// A large reserve cut short by a save that fits in it: the copy faults in what the reserve did not.
	AsyncWriter w2(s);
	ck_assert(w2.reserve(std::vector<size_t>{512u << 20}).has_value());
	std::vector<BufferView> small = {{"a.bin", a.data(), a.size()}};
	ck_assert(w2.save_async(3, small).has_value());
	r = w2.wait();
	ck_assert_msg(r.has_value(), "%s", r ? "" : r.error().str().c_str());
	check_committed(dir, 3, small);
	ck_assert_uint_ge(w2.snapshot_capacity(), 512u << 20);
	(void)remove_tree(dir);
}
END_TEST

START_TEST(safe_dir_refuses_symlinks_and_foreign_dirs)
{
	std::string root = temp_dir();
	ck_assert(make_checkpoint_dir(root, root + "/alice/42").has_value());
	struct stat sb;
	ck_assert_int_eq(::stat((root + "/alice/42").c_str(), &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0700);
	// A symlink planted below the root is refused, not followed.
	std::string outside = temp_dir();
	ck_assert_int_eq(::symlink(outside.c_str(), (root + "/evil").c_str()), 0);
	auto st = make_checkpoint_dir(root, root + "/evil/43");
	ck_assert(!st.has_value());
	ck_assert_msg(st.error().str().find("symlink") != std::string::npos, "%s", st.error().str().c_str());
	ck_assert_int_ne(::stat((outside + "/43").c_str(), &sb), 0);
	ck_assert(!make_checkpoint_dir(root, "/etc/x").has_value());
	// A directory that belongs to someone else is refused (as a user).
	if (::geteuid() == 0) {
		ck_assert_int_eq(::mkdir((root + "/bob").c_str(), 0777), 0);
		ck_assert_int_eq(::chown((root + "/bob").c_str(), 4242, 4242), 0);
		::chmod(root.c_str(), 0777);
		Credentials alice{4343, 4343, {}};
		auto r = run_as(alice, [&]() -> expected<std::string> {
			auto s2 = make_checkpoint_dir(root, root + "/bob/44");
			if (!s2)
				return unexpected(s2.error());
			return std::string("made");
		});
		ck_assert(!r.has_value());
		ck_assert_msg(r.error().str().find("belongs to uid 4242") != std::string::npos, "%s",
			      r.error().str().c_str());
		auto made = run_as(alice, [&]() -> expected<std::string> {
			auto s2 = make_checkpoint_dir(root, root + "/alice2/1");
			if (!s2)
				return unexpected(s2.error());
			return std::to_string(::geteuid());
		});
		ck_assert_msg(made.has_value(), "%s", made ? "" : made.error().str().c_str());
		ck_assert_sstr_eq(*made, "4343");
		ck_assert_int_eq(::stat((root + "/alice2/1").c_str(), &sb), 0);
		ck_assert_int_eq(sb.st_uid, 4343);
	}
	(void)remove_tree(root);
	(void)remove_tree(outside);
}
END_TEST

START_TEST(restart_budget_and_progress)
{
	std::vector<StartRecord> none;
	ck_assert(decide_start(0, 3, -1, none).verdict == StartVerdict::run);
	ck_assert(decide_start(1, 3, -1, {{0, -1, 1, "9"}}).verdict == StartVerdict::run);
	auto d = decide_start(4, 3, 500, {{3, 400, 1, "9"}});
	ck_assert(d.verdict == StartVerdict::hold_budget);
	ck_assert_msg(d.reason.find("--ckpt-max-restarts=3") != std::string::npos, "%s", d.reason.c_str());
	// Restart 2 after restart 1 found step 400 and nothing newer was written.
	d = decide_start(2, 10, 400, {{0, -1, 1, "9"}, {1, 400, 2, "9"}});
	ck_assert(d.verdict == StartVerdict::hold_no_progress);
	ck_assert_msg(d.reason.find("since restart 1") != std::string::npos, "%s", d.reason.c_str());
	ck_assert(decide_start(2, 10, 500, {{0, -1, 1, "9"}, {1, 400, 2, "9"}}).verdict == StartVerdict::run);
	// Held at restart 2, released (the hold's requeue counted restart 3): it runs.
	std::vector<StartRecord> held = {{0, -1, 1, "9"}, {1, 400, 2, "9"}, {2, 400, 3, "9", true}};
	ck_assert(decide_start(3, 10, 400, held).verdict == StartVerdict::run);
	// Released without a restart counted (same count as the held start): it runs.
	ck_assert(decide_start(2, 10, 400, held).verdict == StartVerdict::run);
	// The released run failed again without a checkpoint: held again, naming that run.
	held.push_back({3, 400, 4, "9"});
	d = decide_start(4, 10, 400, held);
	ck_assert(d.verdict == StartVerdict::hold_no_progress);
	ck_assert_msg(d.reason.find("since restart 3") != std::string::npos, "%s", d.reason.c_str());
	// Released after the budget was used up: one more run; failing again, held again.
	ck_assert(decide_start(5, 3, 500, {{4, 500, 1, "9", true}}).verdict == StartVerdict::run);
	ck_assert(decide_start(6, 3, 600, {{4, 500, 1, "9", true}, {5, 500, 2, "9"}}).verdict ==
		  StartVerdict::hold_budget);

	std::string dir = temp_dir();
	ck_assert(record_start(dir, {0, -1, 1, "9"}).has_value());
	ck_assert(record_start(dir, {1, 400, 2, "9"}).has_value());
	auto again = record_start(dir, {1, 400, 3, "9"});
	ck_assert_int_eq(again->size(), 2);
	auto text = read_file(dir + "/" + starts_name);
	auto parsed = parse_starts(*text, "starts");
	ck_assert_int_eq(parsed->size(), 2);
	ck_assert_int_eq((*parsed)[1].newest_step, 400);
	ck_assert(!(*parsed)[1].held);
	ck_assert(text->find("held") == std::string::npos); // written only when true
	auto with_hold = record_start(dir, {2, 400, 4, "9", true});
	ck_assert_int_eq(with_hold->size(), 3);
	auto reread = parse_starts(*read_file(dir + "/" + starts_name), "starts");
	ck_assert(reread.has_value() && (*reread)[2].held && !(*reread)[1].held);
	ck_assert(!parse_starts(R"({"format":"loom-starts/1","starts":[{"restart_count":1,"newest_step":1,"time":1,"held":"yes"}]})",
				"s")
			   .has_value());
	// Another job reusing the directory starts a fresh record.
	ck_assert_int_eq(record_start(dir, {0, 400, 5, "10"})->size(), 1);
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
	tcase_add_test(tc, async_writer_commits_snapshot);
	tcase_add_test(tc, snapshot_memory_maps_and_moves);
	tcase_add_test(tc, parallel_copy_is_byte_identical);
	tcase_add_test(tc, async_writer_parallel_copy_odd_sizes);
	tcase_add_test(tc, async_writer_reserve_then_save);
	tcase_add_test(tc, async_writer_reserve_smaller_then_larger_save);
	tcase_add_test(tc, async_writer_save_while_reserve_in_flight);
	tcase_add_test(tc, safe_dir_refuses_symlinks_and_foreign_dirs);
	tcase_add_test(tc, restart_budget_and_progress);
	tcase_add_test(tc, layout_names);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
