// Unit tests for the checkpoint async writer: a snapshot training cannot
// change, snapshot memory (huge pages, moves), the parallel copy, and
// reserving memory before, during and after saves.
#include "lib/ckpt/async_writer.hpp"
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/util/fs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/ckpt_protocol_fixture.hpp"

using namespace loom;
using namespace loom::ckpt;

namespace {

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
	parallel_copy({{da.data(), a.data(), 1},
		       {nullptr, nullptr, 0},
		       {db.data(), b.data(), b.size()},
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
	ck_assert(first.has_value() && first->size() == a.size() &&
		  std::memcmp(first->data(), a.data(), a.size()) == 0);
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

TCase *ckpt_async_writer_tests()
{
	TCase *tc = tcase_create("async_writer");
	tcase_add_test(tc, async_writer_commits_snapshot);
	tcase_add_test(tc, snapshot_memory_maps_and_moves);
	tcase_add_test(tc, parallel_copy_is_byte_identical);
	tcase_add_test(tc, async_writer_parallel_copy_odd_sizes);
	tcase_add_test(tc, async_writer_reserve_then_save);
	tcase_add_test(tc, async_writer_reserve_smaller_then_larger_save);
	tcase_add_test(tc, async_writer_save_while_reserve_in_flight);
	return tc;
}
