// Unit tests for lib/util's readers of Slurm's text: host lists, GRES
// requests and counts, and the AdminComment segments each writer owns.
#include "lib/util/admin_comment.hpp"
#include "lib/util/gres.hpp"
#include "lib/util/hostlist.hpp"

#include <algorithm>
#include <string>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;

START_TEST(hostlists)
{
	auto h = hostlist_expand("gpu[08-10,12],login1,r[1-2]n[1-2]");
	ck_assert(h.has_value());
	ck_assert_int_eq(h->size(), 9);
	ck_assert_sstr_eq((*h)[0], "gpu08");
	ck_assert_sstr_eq((*h)[3], "gpu12");
	ck_assert_sstr_eq((*h)[6], "r1n2");
	ck_assert_sstr_eq(hostlist_compress(*hostlist_expand("n[01-04],n07,x")), "n[01-04,07],x");
	// Mixed padding folds differently but names the same nodes.
	auto mixed = *hostlist_expand("n[01-04],n07,x,n[1-10]");
	auto back = hostlist_expand(hostlist_compress(mixed));
	ck_assert(back.has_value());
	std::sort(mixed.begin(), mixed.end());
	std::sort(back->begin(), back->end());
	ck_assert(mixed == *back);
	ck_assert(!hostlist_expand("n[1-"));
	ck_assert(!hostlist_expand("n[3-1]"));
	ck_assert(!hostlist_expand("n[1-99999999]"));
	ck_assert(!hostlist_expand("a,,b"));
	// The forms SLURM_JOB_NODELIST takes (spank_ckpt reads it with this
	// expander): several bracket groups in a name, a suffix after the range,
	// a padded lower bound.
	auto job = hostlist_expand("rack[1-2]-gpu[01-02],n[7]x");
	ck_assert(job.has_value());
	std::vector<std::string> want = {"rack1-gpu01", "rack1-gpu02", "rack2-gpu01", "rack2-gpu02", "n7x"};
	ck_assert(*job == want);
	ck_assert(!hostlist_expand("n[1-999999999]", 1000));
	auto err = hostlist_expand("n[1-3", 1000);
	ck_assert(!err);
	ck_assert_msg(err.error().str().find("n[1-3") != std::string::npos, "%s", err.error().str().c_str());
	// Counting checks the same syntax and builds nothing: a range of a
	// trillion names is counted, not expanded.
	ck_assert_int_eq(*hostlist_count("gpu[08-10,12],login1,r[1-2]n[1-2]"), 9);
	ck_assert_int_eq(*hostlist_count("n[0-999999999999]"), 1000000000000ULL);
	ck_assert_int_eq(*hostlist_count("a[0-999999999999999999]b[0-999999999999999999]"), SIZE_MAX);
	ck_assert(!hostlist_count("n[1-"));
	ck_assert(!hostlist_count("a,,b"));
	// A file's budget: each expression fits on its own, not all together.
	HostlistBudget budget(10, "nodes");
	ck_assert_int_eq(budget.expand("a[1-6]")->size(), 6);
	ck_assert_int_eq(budget.expand("")->size(), 0);
	auto over = budget.expand("b[1-5]");
	ck_assert(!over);
	ck_assert_sstr_eq(over.error().str(),
			  "the file names more than 10 nodes in all (one file describes at most 10)");
	ck_assert_int_eq(budget.expand("b[1-4]")->size(), 4);
}
END_TEST

START_TEST(gres_gpu_request_forms)
{
	struct Case {
		const char *tres;
		bool gpus;
		const char *type;
	} cases[] = {
		{"gres/gpu:h100=8", true, "h100"},
		{"gres:gpu:h100:8", true, "h100"},
		{"gres/gpu:h100:8", true, "h100"},
		{"gres:gpu:8", true, ""},
		{"gres/gpu=8", true, ""},
		{"gres/gpu", true, ""},
		{"gres/nic:1,gres/gpu:a100:2", true, "a100"},
		{"", false, ""},
		{"gres/nic:1", false, ""},
		{"gres/mygpu:2", false, ""},
		{"gres/gpumem=40G", false, ""},
		{"gres/gpumem=40G,gres/gpu:2", true, ""},
		{"gres/gpu_x:1", false, ""},
		{"gpu:h100:8", true, "h100"},
	};
	for (const Case &k : cases) {
		GresGpu g = gres_gpu(k.tres);
		ck_assert_msg(g.gpus == k.gpus, "%s", k.tres);
		ck_assert_msg(g.type == k.type, "%s: type '%s'", k.tres, g.type.c_str());
	}
	// A node's Gres= as scontrol shows it (tests/data/health/scontrol/).
	ck_assert_int_eq(gres_gpu_count("gpu:8"), 8);
	ck_assert_int_eq(gres_gpu_count("gpu:h100:8(S:0-1)"), 8);
	ck_assert_int_eq(gres_gpu_count("gpu:h100:4(S:0),gpu:a100:4(S:1),nic:2"), 8);
	ck_assert_int_eq(gres_gpu_count("gpu"), 1);
	ck_assert_int_eq(gres_gpu_count("(null)"), -1);
	ck_assert_int_eq(gres_gpu_count(""), -1);
	ck_assert_int_eq(gres_gpu_count("nic:2"), -1);
	ck_assert_int_eq(gres_gpu_count("gpu:h100"), -1); // no count: none we can read
	ck_assert_int_eq(gres_gpu_count("gpumem:80G"), -1);
}
END_TEST

START_TEST(admin_comment_segments_have_one_owner_each)
{
	// Each writer replaces its own segment and keeps the others', an
	// admin's own text included; spaces around " | " are not part of one.
	std::string ckpt = "loom ckpt: /ckpt/a/1: step 3, 1.0 KiB, committed 2026-12-06T10:00:00";
	std::string both = loom::admin_comment_replace("ticket 42 | " + ckpt, loom::admin_prefix_health,
						       "loom: restarted on spares n1 -> n2");
	std::string want = "ticket 42 | " + ckpt + " | loom: restarted on spares n1 -> n2";
	ck_assert_str_eq(both.c_str(), want.c_str());
	std::string again = loom::admin_comment_replace(both, loom::admin_prefix_health, "loom: moved off n2");
	want = "ticket 42 | " + ckpt + " | loom: moved off n2";
	ck_assert_str_eq(again.c_str(), want.c_str());
	std::string newer =
		loom::admin_comment_replace(again, loom::admin_prefix_ckpt, "loom ckpt: /ckpt/a/1: no checkpoint yet");
	ck_assert_str_eq(newer.c_str(), "ticket 42 | loom ckpt: /ckpt/a/1: no checkpoint yet | loom: moved off n2");
	std::string alone = loom::admin_comment_replace("", loom::admin_prefix_health, "loom: x");
	ck_assert_str_eq(alone.c_str(), "loom: x");
	auto segs = loom::admin_comment_segments("  a |  | loom: b | ");
	ck_assert_int_eq(segs.size(), 2);
	ck_assert(segs[0] == "a" && segs[1] == "loom: b");
	// "loom ckpt: " is not a "loom: " segment, nor the reverse.
	std::string apart = loom::admin_comment_replace(ckpt, loom::admin_prefix_health, "loom: y");
	want = ckpt + " | loom: y";
	ck_assert_str_eq(apart.c_str(), want.c_str());
}
END_TEST

TCase *util_slurm_text_tests()
{
	TCase *tc = tcase_create("slurm_text");
	tcase_add_test(tc, hostlists);
	tcase_add_test(tc, gres_gpu_request_forms);
	tcase_add_test(tc, admin_comment_segments_have_one_owner_each);
	return tc;
}
