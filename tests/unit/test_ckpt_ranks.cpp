// Unit tests for checkpoints of several ranks (doc/loom-ckpt-protocol.md
// section 7): the launcher's rank, world size and run id (lib/ckpt/ranks),
// shared staging names, loom-ckpt/2 manifests and parts, a rank's share of a
// save and rank 0's commit with its deadline, the job's check and the
// agreement of ranks on the step they restore.
#include "lib/ckpt/async_writer.hpp"
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/ckpt/commit_ranks.hpp"
#include "lib/ckpt/layout.hpp"
#include "lib/ckpt/manifest.hpp"
#include "lib/ckpt/ranks.hpp"
#include "lib/util/fs.hpp"

#include <condition_variable>
#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

// Check defines a fail() macro: include it after the C++ library headers.
#include "tests/unit/check_main.hpp"

using namespace loom;
using namespace loom::ckpt;

namespace {

std::string temp_dir()
{
	char tmpl[] = "/tmp/loom-test-ranks-XXXXXX";
	char *d = ::mkdtemp(tmpl);
	ck_assert_ptr_nonnull(d);
	return d;
}

Launch ranks_of(std::map<std::string, std::string> vars)
{
	auto l = launch_ranks(map_env(std::move(vars)));
	ck_assert_msg(l.has_value(), "%s", l ? "" : l.error().str().c_str());
	return *l;
}

std::string launch_error(std::map<std::string, std::string> vars)
{
	auto l = launch_ranks(map_env(std::move(vars)));
	ck_assert_msg(!l.has_value(), "accepted");
	return l.error().str();
}

bool is_dir(const std::string &p)
{
	struct stat st;
	return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// One rank's share of a save of 'step': a file holding 'text', then its part.
RankSave share(const std::string &dir, int64_t step, int64_t rank, int64_t world, const std::string &text)
{
	auto s = RankSave::begin(dir, step, {rank, world, "j7_r0_s0"}, 1);
	ck_assert_msg(s.has_value(), "%s", s ? "" : s.error().str().c_str());
	auto e = s->write_file("w.bin", text.data(), text.size());
	ck_assert_msg(e.has_value(), "%s", e ? "" : e.error().str().c_str());
	ck_assert_sstr_eq(e->path, rank_dir_name(rank) + "/w.bin");
	auto st = s->finish_part(0.5);
	ck_assert_msg(st.has_value(), "%s", st ? "" : st.error().str().c_str());
	return std::move(*s);
}

// Commit a checkpoint of 'world' ranks at 'step', rank r's w.bin holding "r<r>s<step>".
void commit_ranks(const std::string &dir, int64_t step, int64_t world)
{
	for (int64_t r = world - 1; r > 0; r--)
		(void)share(dir, step, r, world, "r" + std::to_string(r) + "s" + std::to_string(step));
	RankSave zero = share(dir, step, 0, world, "r0s" + std::to_string(step));
	auto p = zero.commit(Manifest{}, 5);
	ck_assert_msg(p.has_value(), "%s", p ? "" : p.error().str().c_str());
}

// An all-reduce minimum for ranks that are threads of this process.
class ThreadMin {
public:
	explicit ThreadMin(int n) : n_(n) {}
	int64_t operator()(int64_t v)
	{
		std::unique_lock<std::mutex> lock(mu_);
		uint64_t round = round_;
		acc_ = count_ == 0 ? v : std::min(acc_, v);
		if (++count_ == n_) {
			result_ = acc_;
			count_ = 0;
			round_++;
			cv_.notify_all();
		} else {
			cv_.wait(lock, [&] { return round_ != round; });
		}
		calls_++;
		return result_;
	}
	int calls() const { return calls_; }

private:
	int n_, count_ = 0, calls_ = 0;
	uint64_t round_ = 0;
	int64_t acc_ = 0, result_ = 0;
	std::mutex mu_;
	std::condition_variable cv_;
};

} // namespace

START_TEST(launcher_ranks)
{
	Launch none = ranks_of({});
	ck_assert_int_eq(none.rank, 0);
	ck_assert_int_eq(none.world_size, 1);
	ck_assert_sstr_eq(none.launcher, "");
	// torchrun inside srun: torchrun's variables are believed.
	Launch t = ranks_of({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}});
	ck_assert_int_eq(t.rank, 3);
	ck_assert_int_eq(t.world_size, 8);
	ck_assert_sstr_eq(t.launcher, "torchrun");
	Launch s = ranks_of({{"RANK", "3"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "0"}});
	ck_assert_int_eq(s.rank, 1);
	ck_assert_int_eq(s.world_size, 4);
	ck_assert_sstr_eq(s.launcher, "srun");
	// The step's tasks before the job's.
	ck_assert_int_eq(ranks_of({{"SLURM_PROCID", "1"},
				   {"SLURM_STEP_NUM_TASKS", "2"},
				   {"SLURM_NTASKS", "9"},
				   {"SLURM_STEP_ID", "3"}})
				 .world_size,
			 2);
	// A batch script (no step id): the program it runs is one process, not rank 0 of the job's 4 tasks.
	Launch b = ranks_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "7"}});
	ck_assert_int_eq(b.world_size, 1);
	ck_assert_sstr_eq(b.launcher, "");
	Launch o = ranks_of({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "6"}, {"PMIX_RANK", "0"}});
	ck_assert_int_eq(o.rank, 5);
	ck_assert_sstr_eq(o.launcher, "Open MPI");
	ck_assert_int_eq(ranks_of({{"PMIX_RANK", "2"}, {"PMIX_SIZE", "3"}}).world_size, 3);
	Launch p = ranks_of({{"PMIX_RANK", "2"}, {"PMI_SIZE", "4"}});
	ck_assert_int_eq(p.world_size, 4);
	ck_assert_sstr_eq(p.launcher, "PMI");
	// A rank without its world size is no launcher's: rank 0 of 1.
	ck_assert_int_eq(ranks_of({{"SLURM_PROCID", "2"}}).world_size, 1);
	std::string e = launch_error({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}, {"SLURM_STEP_ID", "0"}});
	ck_assert_msg(e.find("SLURM_PROCID=4") != std::string::npos && e.find("srun") != std::string::npos, "%s",
		      e.c_str());
	e = launch_error({{"RANK", "x"}, {"WORLD_SIZE", "2"}});
	ck_assert_msg(e.find("RANK=x") != std::string::npos, "%s", e.c_str());
	launch_error({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "0"}});
}
END_TEST

START_TEST(launcher_run_id)
{
	auto run = [](std::map<std::string, std::string> v) { return launch_run_id(map_env(std::move(v))); };
	ck_assert_sstr_eq(run({}), "");
	ck_assert_sstr_eq(run({{"SLURM_JOB_ID", "41"}, {"SLURM_STEP_ID", "0"}}), "j41_r0_s0");
	ck_assert_sstr_eq(run({{"SLURM_JOB_ID", "41"}, {"SLURM_STEP_ID", "2"}, {"SLURM_RESTART_COUNT", "3"}}),
			  "j41_r3_s2");
	ck_assert_sstr_eq(run({{"SLURM_JOB_ID", "41"},
			       {"SLURM_STEP_ID", "2"},
			       {"SLURM_RESTART_COUNT", "3"},
			       {"LOOM_RESTART_COUNT", "1"}}),
			  "j41_r1_s2");
	ck_assert_sstr_eq(run({{"SLURM_JOB_ID", "41"}}), "j41_r0_sbatch");
	ck_assert_sstr_eq(run({{"SLURM_JOB_ID", "41"}, {"SLURM_STEP_ID", "0"}, {"TORCHELASTIC_RESTART_COUNT", "2"}}),
			  "j41_r0_s0_e2");
	ck_assert_sstr_eq(run({{"PMIX_NAMESPACE", "prterun-n1-123@1"}, {"LOOM_CKPT_RUN_ID", "mine"}}),
			  "prterun-n1-123_1");
	ck_assert_sstr_eq(run({{"OMPI_MCA_orte_ess_jobid", "1234.5"}, {"LOOM_CKPT_RUN_ID", "mine"}}), "1234_5");
	ck_assert_sstr_eq(run({{"LOOM_CKPT_RUN_ID", "my run/1"}}), "my_run_1");
}
END_TEST

START_TEST(shared_staging_names)
{
	ck_assert_sstr_eq(shared_staging_name(6, "j41_r0_s0", 3), "step-000000000006.run-j41_r0_s0.3");
	ck_assert(!parse_staging_name("step-000000000006.run-j41_r0_s0.3").has_value());
	// A host called run-x still owns its staging.
	auto o = parse_staging_name("step-000000000006.run-x.123.4");
	ck_assert(o.has_value());
	ck_assert_sstr_eq(o->host, "run-x");
	ck_assert_int_eq(o->pid, 123);
	ck_assert_sstr_eq(rank_dir_name(7), "rank-00007");
	ck_assert_sstr_eq(rank_dir_name(123456), "rank-123456");
	ck_assert_sstr_eq(part_file_name(1), "rank-00001.json");
}
END_TEST

START_TEST(manifest_v2_round_trip_and_paths)
{
	Manifest m;
	m.version = 2;
	m.layout = layout_ranks;
	m.step = 4;
	m.world_size = 2;
	m.created = 1700000000;
	std::string h(64, 'a');
	m.ranks.push_back({1, 4, "n2", 0.25, {{"rank-00001/w.bin", 3, h}}});
	m.ranks.push_back({0, 4, "", -1, {{"rank-00000/w.bin", 2, h}, {"rank-00000/o/s.bin", 1, h}}});
	auto back = manifest_parse(manifest_to_json(m), "m.json");
	ck_assert_msg(back.has_value(), "%s", back ? "" : back.error().str().c_str());
	ck_assert_int_eq(back->version, 2);
	ck_assert_int_eq(back->ranks.size(), 2);
	ck_assert_sstr_eq(back->ranks[0].host, "n2");
	ck_assert(back->ranks[1].write_seconds < 0);
	ck_assert_int_eq(back->files.size(), 3); // every part's
	ck_assert_int_eq(back->total_bytes(), 6);
	auto mine = rank_files(*back, 0);
	ck_assert_int_eq(mine.size(), 2);
	ck_assert_sstr_eq(mine[1].path, "o/s.bin");
	ck_assert_sstr_eq(rank_files_dir("/c/step-000000000004", *back, 0), "/c/step-000000000004/rank-00000");

	std::string head = R"({"format":"loom-ckpt/2","step":4,"world_size":2,"created":1,"write_seconds":0,)";
	std::string f = R"("sha256":")" + h + R"("})";
	struct Bad {
		std::string tail;
		const char *needle;
	} bad[] = {
		{R"("layout":"flat","ranks":[]})", "$.layout"},
		{R"("layout":"ranks","ranks":[{"rank":0,"step":4,"files":[]},{"rank":1,"step":4,"files":[]},{"rank":1,"step":4,"files":[]}]})",
		 "$.ranks: 3 parts"},
		{R"("layout":"ranks","ranks":[{"rank":0,"step":4,"files":[]},{"rank":0,"step":4,"files":[]}]})",
		 "$.ranks[1].rank"},
		{R"("layout":"ranks","ranks":[{"rank":2,"step":4,"files":[]}]})", "$.ranks[0].rank"},
		{R"("layout":"ranks","ranks":[{"rank":0,"step":4,"files":[{"path":"rank-00001/w","size":1,)" + f +
			 "]}]}",
		 "$.ranks[0].files[0].path"},
		{R"("layout":"ranks","ranks":[{"rank":0,"step":4,"files":[{"path":"rank-0/w","size":1,)" + f + "]}]}",
		 "$.ranks[0].files[0].path"},
		{R"("layout":"dcp","ranks":[{"rank":0,"step":4,"files":[{"path":"a","size":1,)" + f +
			 R"(]},{"rank":1,"step":4,"files":[{"path":"a","size":1,)" + f + "]}]}",
		 "$.ranks[1].files[0]: file 'a' listed twice"},
		{R"("layout":"ranks","ranks":[{"rank":0,"step":4,"write_seconds":-1,"files":[]}]})",
		 "$.ranks[0].write_seconds"},
		{R"("layout":"ranks","ranks":[{"rank":0,"step":4,"files":[],"extra":1}]})", "$.ranks[0].extra"},
		{R"("layout":"ranks","ranks":[],"files":[]})", "$.files: unknown field"},
		{R"("files":[]})", "'layout'"},
	};
	for (const auto &b : bad) {
		std::string json = head + b.tail;
		auto r = manifest_parse(json, "m.json");
		ck_assert_msg(!r.has_value(), "accepted: %s", json.c_str());
		ck_assert_msg(r.error().str().find(b.needle) != std::string::npos, "'%s' lacks '%s'",
			      r.error().str().c_str(), b.needle);
	}
	// A part of the layout "dcp" has DCP's own names.
	std::string dcp = head +
			  R"("layout":"dcp","ranks":[{"rank":1,"step":4,"files":[{"path":"__1_0.distcp","size":1,)" +
			  f + "]}]}";
	ck_assert(manifest_parse(dcp, "m.json").has_value());
}
END_TEST

START_TEST(rank_save_commits_once_every_part_is_there)
{
	std::string dir = temp_dir();
	commit_ranks(dir, 3, 3);
	ck_assert(!is_dir(dir + "/.staging/step-000000000003.run-j7_r0_s0.1"));
	auto l = find_latest(dir, Verify::full, Job{3, 2});
	ck_assert_msg(l.has_value() && l->has_value(), "no checkpoint");
	const Manifest &m = *(*l)->entry.manifest;
	ck_assert_int_eq(m.version, 2);
	ck_assert_int_eq(m.ranks.size(), 3);
	for (int64_t r = 0; r < 3; r++)
		ck_assert_int_eq(m.ranks[r].rank, r); // in rank order
	ck_assert(!is_dir((*l)->entry.path + "/.parts"));
	auto body = read_file(rank_files_dir((*l)->entry.path, m, 2) + "/w.bin");
	ck_assert(body.has_value());
	ck_assert_sstr_eq(*body, "r2s3");
	ck_assert_sstr_eq(read_latest(dir).value_or(""), "step-000000000003");
	// Another world: refused, named; a process of its own: refused too.
	Problem why;
	auto st = check_job((*l)->entry.path, m, Job{2, 0}, &why);
	ck_assert(!st.has_value() && why == Problem::world_size_mismatch);
	ck_assert_msg(st.error().str().find("written by 3 ranks, this job has 2 ranks") != std::string::npos, "%s",
		      st.error().str().c_str());
	auto none = find_latest(dir, Verify::full, Job{1, 0});
	ck_assert(none.has_value() && !none->has_value());
	ck_assert(find_latest(dir, Verify::full).value_or(std::nullopt).has_value()); // retention's view
	(void)remove_tree(dir);
}
END_TEST

START_TEST(rank_save_times_out_naming_the_ranks)
{
	std::string dir = temp_dir();
	(void)share(dir, 5, 2, 4, "r2");
	RankSave zero = share(dir, 5, 0, 4, "r0");
	auto p = zero.commit(Manifest{}, 0.2);
	ck_assert(!p.has_value());
	ck_assert_msg(p.error().str().find("ranks 1 and 3 of 4 did not finish") != std::string::npos, "%s",
		      p.error().str().c_str());
	ck_assert(!is_dir(dir + "/step-000000000005"));
	// The shared staging is debris for prune's clock, not a dead pid's.
	auto pr = prune(dir, 1, 86400, true);
	ck_assert(pr.has_value() && pr->staging_removed.empty());
	pr = prune(dir, 1, -1, true);
	ck_assert(pr.has_value() && pr->staging_removed.size() == 1);
	// A part of another save in its place is refused by name.
	std::string parts = dir + "/.staging/step-000000000005.run-j7_r0_s0.1/.parts/";
	RankPart other{1, 4, "", -1, {}};
	ck_assert(write_file_atomic(parts + "rank-00001.json", part_to_json(other, 4), 0600).has_value());
	ck_assert(write_file_atomic(parts + "rank-00003.json", part_to_json({3, 5, "", -1, {}}, 4), 0600).has_value());
	auto w = wait_for_parts(dir + "/.staging/step-000000000005.run-j7_r0_s0.1", 5, 4, 1);
	ck_assert(!w.has_value());
	ck_assert_msg(w.error().str().find("rank-00001.json: is the part of rank 1 of 4 at step 4") !=
			      std::string::npos,
		      "%s", w.error().str().c_str());
	(void)remove_tree(dir);
}
END_TEST

START_TEST(async_writer_saves_again_in_a_new_staging)
{
	// Rank 0 of 2 alone: each save times out, and the second save of the
	// same step is the launch's save 2, never a return to save 1's debris.
	std::string dir = temp_dir();
	WriterSettings s;
	s.dir = dir;
	s.world_size = 2;
	s.run = "j9_r0_s0";
	s.commit_timeout_s = 0.05;
	AsyncWriter w(s);
	std::string data = "rank 0";
	for (int i = 0; i < 2; i++) {
		auto r = w.save(5, {{"w.bin", data.data(), data.size()}});
		ck_assert(!r.has_value());
		ck_assert_msg(r.error().str().find("rank 1 of 2 did not finish its part of step 5") !=
				      std::string::npos,
			      "save %d: %s", i + 1, r.error().str().c_str());
	}
	auto staged = list_dir(dir + "/.staging");
	ck_assert_int_eq(staged.size(), 2);
	ck_assert_sstr_eq(staged[1], "step-000000000005.run-j9_r0_s0.2");
	ck_assert(!is_dir(dir + "/step-000000000005"));
	(void)remove_tree(dir);
}
END_TEST

START_TEST(ranks_agree_on_the_step_all_accept)
{
	std::string dir = temp_dir();
	commit_ranks(dir, 2, 2);
	commit_ranks(dir, 3, 2);
	// Rank 1's file of step 3 keeps its size, not its bytes: rank 1 hashes
	// it and refuses step 3, rank 0 checks its size only and accepts it.
	std::string f = dir + "/step-000000000003/rank-00001/w.bin";
	ck_assert(write_file_atomic(f, "R1s3", 0600).has_value());
	ThreadMin min(2);
	std::optional<Latest> got[2];
	std::thread t([&] { got[1] = find_latest_agreed(dir, Job{2, 1}, std::ref(min)).value_or(std::nullopt); });
	got[0] = find_latest_agreed(dir, Job{2, 0}, std::ref(min)).value_or(std::nullopt);
	t.join();
	for (int r = 0; r < 2; r++) {
		ck_assert_msg(got[r].has_value(), "rank %d restores nothing", r);
		ck_assert_int_eq(got[r]->entry.step, 2);
		ck_assert_int_eq(got[r]->skipped.size(), 1);
	}
	ck_assert(got[1]->skipped[0].reason == Problem::hash_mismatch);
	ck_assert(got[0]->skipped[0].reason == Problem::none);
	(void)remove_tree(dir);
}
END_TEST

static Suite *make_suite()
{
	Suite *s = suite_create("ckpt_ranks");
	TCase *tc = tcase_create("ranks");
	tcase_add_test(tc, launcher_ranks);
	tcase_add_test(tc, launcher_run_id);
	tcase_add_test(tc, shared_staging_names);
	tcase_add_test(tc, manifest_v2_round_trip_and_paths);
	tcase_add_test(tc, rank_save_commits_once_every_part_is_there);
	tcase_add_test(tc, rank_save_times_out_naming_the_ranks);
	tcase_add_test(tc, async_writer_saves_again_in_a_new_staging);
	tcase_add_test(tc, ranks_agree_on_the_step_all_accept);
	suite_add_tcase(s, tc);
	return s;
}

LOOM_CHECK_MAIN(make_suite)
