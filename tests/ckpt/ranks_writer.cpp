// One rank of a job that checkpoints through the C++ SDK, for
// tests/ckpt/ranks_sdk.sh: the rank and world size come from the launcher's
// variables (the script sets SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_ID,
// SLURM_STEP_ID), the directory from LOOM_CKPT_DIR.
//
//   ranks_writer save FIRST LAST   save steps FIRST..LAST, this rank's own
//                                  bytes each time (async and sync in turn)
//   ranks_writer restore STEP      restore: STEP (or "none") and this rank's bytes
//   ranks_writer check DIR STEP WORLD
//                                  step-N is committed: loom-ckpt/2, WORLD parts
//                                  in rank order, every file verified
//   ranks_writer agree MAX         should_checkpoint(step) every step (of about
//                                  1 ms) until it says yes, then save that step
//                                  and print "saved STEP"; "ready" to the FIFO
//                                  at step 50
//   ranks_writer crash FIRST LAST  for tests/ckpt/crash_ranks.sh: save steps
//                                  FIRST..LAST, files a.bin and b.bin of
//                                  crash_bytes(), printing "saved STEP" after
//                                  each (rank 0: once it is committed); with
//                                  LOOM_TEST_FIFO, "ready" to it first
//
// With LOOM_TEST_STOP_RANK=r and LOOM_TEST_FIFO=PATH, rank r writes "ready"
// to the FIFO before it saves step LAST and then waits to be killed. In crash
// mode, with LOOM_TEST_HOLD_RANK=r, LOOM_TEST_HOLD_STEP=s, LOOM_TEST_FIFO and
// LOOM_TEST_GO=PATH (a FIFO), rank r writes "held" to the FIFO before it
// saves step s, waits for a line on LOOM_TEST_GO, saves, and writes "saved".
// Exit 0 when all is as expected, 1 (saying why on stderr) otherwise.
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/layout.hpp"
#include "sdk/cpp/loom/ckpt.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// Bytes that differ between ranks and steps, and in size too.
std::string content(int64_t rank, int64_t step)
{
	std::string s;
	for (int64_t i = 0; i <= rank * 37 + step % 5; i++)
		s += "rank " + std::to_string(rank) + " step " + std::to_string(step) + "; ";
	return s;
}

int fail(const std::string &why)
{
	std::fprintf(stderr, "ranks_writer: %s\n", why.c_str());
	return 1;
}

// Tell the script this rank is about to save, then wait for its kill -9.
void stop_here(int64_t rank)
{
	const char *stop = std::getenv("LOOM_TEST_STOP_RANK"), *fifo = std::getenv("LOOM_TEST_FIFO");
	if (!stop || !fifo || std::to_string(rank) != stop)
		return;
	int fd = ::open(fifo, O_WRONLY | O_CLOEXEC); // blocks until the script reads
	if (fd < 0 || ::write(fd, "ready\n", 6) != 6)
		std::exit(fail(std::string("cannot tell ") + fifo));
	::close(fd);
	while (true)
		::pause();
}

// One line to the script's FIFO (LOOM_TEST_FIFO; it keeps the FIFO open).
void tell(const char *what)
{
	const char *fifo = std::getenv("LOOM_TEST_FIFO");
	std::string line = std::string(what) + "\n";
	int fd = fifo ? ::open(fifo, O_WRONLY | O_CLOEXEC) : -1;
	if (fd < 0 || ::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
		std::exit(fail(std::string("cannot tell ") + (fifo ? fifo : "LOOM_TEST_FIFO (not set)")));
	::close(fd);
}

// Wait for the script's line on LOOM_TEST_GO.
void wait_go()
{
	const char *go = std::getenv("LOOM_TEST_GO");
	int fd = go ? ::open(go, O_RDONLY | O_CLOEXEC) : -1; // blocks until the script writes
	char c = 0;
	if (fd < 0 || ::read(fd, &c, 1) != 1)
		std::exit(fail(std::string("cannot wait on ") + (go ? go : "LOOM_TEST_GO (not set)")));
	::close(fd);
}

int save(int64_t first, int64_t last)
{
	loom::sdk::Checkpointer ck(loom::sdk::Config::from_env(), false);
	int64_t rank = ck.config().rank;
	std::string err;
	for (int64_t step = first; step <= last; step++) {
		if (step == last)
			stop_here(rank);
		std::string data = content(rank, step);
		std::vector<loom::sdk::Buffer> b{{"state.bin", data.data(), data.size()}};
		bool ok = step % 2 ? ck.save_async(step, b, &err) && ck.wait(&err) : ck.save(step, b, &err);
		if (!ok)
			return fail("rank " + std::to_string(rank) + " step " + std::to_string(step) + ": " + err);
	}
	return 0;
}

// Until the ranks agree on a step (the request file, a signal to rank 0),
// then save it; every rank must print the same step.
int agree(int64_t max_steps)
{
	loom::sdk::Checkpointer ck;
	int64_t rank = ck.config().rank;
	std::string who = "rank " + std::to_string(rank) + ": ";
	if (ck.should_checkpoint())
		return fail(who + "should_checkpoint() without a step said yes");
	for (int64_t step = 1; step <= max_steps; step++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1)); // the training step
		if (step == 50) // the step time is known: a stamp leads by LOOM_CKPT_STAMP_LEAD
			tell("ready");
		if (!ck.should_checkpoint(step))
			continue;
		std::string data = content(rank, step), err;
		if (!ck.save(step, {{"state.bin", data.data(), data.size()}}, &err))
			return fail(who + "step " + std::to_string(step) + ": " + err);
		std::printf("saved %lld\n", static_cast<long long>(step));
		return 0;
	}
	return fail(who + "no agreed step in " + std::to_string(max_steps) + " steps");
}

// The crash test's bytes: a header naming the file, rank, step and body
// size, then "<rank>/<step>/<file>|" over and over, cut at that size. It
// tells whose bytes a file holds and whether it is whole without the
// manifest (tests/ckpt/crash_ranks_check.cpp reads it); the size varies
// with the rank, the step and the file.
std::string crash_bytes(int64_t rank, int64_t step, const std::string &file)
{
	uint64_t body = (static_cast<uint64_t>(step) * 7919u + static_cast<uint64_t>(rank) * 104729u +
			 (file == "a.bin" ? 0u : 15485863u)) %
				(40u * 1024u) +
			1;
	std::string r = std::to_string(rank), s = std::to_string(step);
	std::string out =
		"loom crash-ranks file=" + file + " rank=" + r + " step=" + s + " body=" + std::to_string(body) + "\n";
	std::string unit = r + "/" + s + "/" + file + "|";
	size_t size = out.size() + body;
	while (out.size() < size)
		out += unit;
	out.resize(size);
	return out;
}

// Whether this rank holds before saving this step (crash_ranks.sh's kill of
// rank 0 between the parts and the commit).
bool held(int64_t rank, int64_t step)
{
	const char *r = std::getenv("LOOM_TEST_HOLD_RANK"), *s = std::getenv("LOOM_TEST_HOLD_STEP");
	return r && s && std::to_string(rank) == r && std::to_string(step) == s;
}

int crash(int64_t first, int64_t last)
{
	loom::sdk::Checkpointer ck(loom::sdk::Config::from_env(), false);
	int64_t rank = ck.config().rank;
	std::string err;
	if (std::getenv("LOOM_TEST_FIFO"))
		tell("ready");
	for (int64_t step = first; step <= last; step++) {
		bool hold = held(rank, step);
		if (hold) {
			tell("held");
			wait_go();
		}
		std::string a = crash_bytes(rank, step, "a.bin"), b = crash_bytes(rank, step, "b.bin");
		std::vector<loom::sdk::Buffer> buf{{"a.bin", a.data(), a.size()}, {"b.bin", b.data(), b.size()}};
		bool ok = step % 2 ? ck.save_async(step, buf, &err) && ck.wait(&err) : ck.save(step, buf, &err);
		if (!ok)
			return fail("rank " + std::to_string(rank) + " step " + std::to_string(step) + ": " + err);
		std::printf("saved %lld\n", static_cast<long long>(step));
		std::fflush(stdout);
		if (hold)
			tell("saved");
	}
	return 0;
}

int restore(const std::string &want)
{
	loom::sdk::Checkpointer ck(loom::sdk::Config::from_env(), false);
	int64_t rank = ck.config().rank;
	auto r = ck.restore();
	std::string who = "rank " + std::to_string(rank) + ": ";
	if (!r.error.empty())
		return fail(who + r.error);
	std::string got = r.found ? std::to_string(r.step) : "none";
	if (got != want)
		return fail(who + "restored " + got + ", expected " + want);
	if (!r.found)
		return 0;
	if (r.files != std::vector<std::string>{"state.bin"})
		return fail(who + "restores " + std::to_string(r.files.size()) + " files, expected state.bin only");
	std::vector<char> data;
	std::string err;
	if (!r.read("state.bin", &data, &err))
		return fail(who + err);
	if (std::string(data.begin(), data.end()) != content(rank, r.step))
		return fail(who + "state.bin is not this rank's bytes of step " + got);
	std::printf("rank %lld restored step %s\n", static_cast<long long>(rank), got.c_str());
	return 0;
}

int check(const std::string &dir, int64_t step, int64_t world)
{
	std::string path = dir + "/" + loom::ckpt::checkpoint_name(step);
	auto m = loom::ckpt::manifest_read(path);
	if (!m)
		return fail(m.error().str());
	if (m->version != 2 || m->world_size != world || m->ranks.size() != static_cast<size_t>(world))
		return fail(path + ": not a loom-ckpt/2 checkpoint of " + std::to_string(world) + " parts");
	for (int64_t r = 0; r < world; r++)
		if (m->ranks[r].rank != r || m->ranks[r].step != step || m->ranks[r].files.size() != 1)
			return fail(path + ": part " + std::to_string(r) + " is not rank " + std::to_string(r) +
				    "'s one file of step " + std::to_string(step));
	if (auto st = loom::ckpt::verify_checkpoint(path, *m, loom::ckpt::Verify::full); !st)
		return fail(st.error().str());
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> a(argv + 1, argv + argc);
	if (a.size() == 3 && a[0] == "save")
		return save(std::stoll(a[1]), std::stoll(a[2]));
	if (a.size() == 2 && a[0] == "restore")
		return restore(a[1]);
	if (a.size() == 4 && a[0] == "check")
		return check(a[1], std::stoll(a[2]), std::stoll(a[3]));
	if (a.size() == 2 && a[0] == "agree")
		return agree(std::stoll(a[1]));
	if (a.size() == 3 && a[0] == "crash")
		return crash(std::stoll(a[1]), std::stoll(a[2]));
	std::fprintf(stderr, "usage: ranks_writer save FIRST LAST | restore STEP | check DIR STEP WORLD | "
			     "agree MAX | crash FIRST LAST\n");
	return 2;
}
