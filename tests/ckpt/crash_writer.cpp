// Crash-safety writer: resumes from the newest checkpoint like a real
// application and then writes checkpoints as fast as it can through the C++
// SDK, alternating async and synchronous saves, with retention on. After
// each commit it prints "C <step>" (unbuffered). The test kills it with
// SIGKILL at random moments.
//
//   crash_writer DIR
#include "sdk/cpp/loom/ckpt.hpp"
#include "tests/ckpt/crash_pattern.hpp"

#include <cstdio>
#include <string>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: crash_writer DIR\n");
		return 2;
	}
	loom::sdk::Config cfg;
	cfg.dir = argv[1];
	cfg.keep = 3;
	loom::sdk::Checkpointer ck(cfg, false);
	auto r = ck.restore();
	if (!r.error.empty()) {
		std::fprintf(stderr, "crash_writer: %s\n", r.error.c_str());
		return 1;
	}
	int64_t step = r.found ? r.step + 1 : 1;
	// Sizes vary from step to step (up to 384 KiB a file): reserve the largest,
	// in the background, while the first checkpoints are being prepared.
	std::string err;
	if (!ck.reserve(std::vector<size_t>(loom::test::crash_files, 384u * 1024u), &err)) {
		std::fprintf(stderr, "crash_writer: reserve: %s\n", err.c_str());
		return 1;
	}
	for (int n = 0; n < 100000; n++, step++) {
		std::vector<std::vector<char>> data;
		std::vector<loom::sdk::Buffer> bufs;
		for (int i = 0; i < loom::test::crash_files; i++)
			data.push_back(loom::test::crash_content(step, i));
		for (int i = 0; i < loom::test::crash_files; i++)
			bufs.push_back({loom::test::crash_file_name(i), data[i].data(), data[i].size()});
		bool okay = n % 2 ? ck.save(step, bufs, &err) : (ck.save_async(step, bufs, &err) && ck.wait(&err));
		if (!okay) {
			std::fprintf(stderr, "crash_writer: step %lld: %s\n", static_cast<long long>(step),
				     err.c_str());
			return 1;
		}
		std::string line = "C " + std::to_string(step) + "\n";
		if (::write(1, line.data(), line.size()) < 0)
			return 1;
	}
	return 0;
}
