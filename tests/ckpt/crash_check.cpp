// Crash-safety checker: after the writer was killed, a restore must find a
// whole checkpoint (contents checked against the pattern, not only the
// manifest) that is at least as new as the last one the writer reported
// committed, and the latest pointer must name a checkpoint that verifies.
//
//   crash_check DIR LAST_COMMITTED     (-1: none reported)
#include "lib/ckpt/catalog.hpp"
#include "lib/ckpt/commit.hpp"
#include "lib/util/fs.hpp"
#include "tests/ckpt/crash_pattern.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace loom;

int main(int argc, char **argv)
{
	if (argc != 3) {
		std::fprintf(stderr, "usage: crash_check DIR LAST_COMMITTED\n");
		return 2;
	}
	std::string dir = argv[1];
	long long last = std::atoll(argv[2]);
	auto l = ckpt::find_latest(dir, ckpt::Verify::full);
	if (!l) {
		std::fprintf(stderr, "crash_check: %s\n", l.error().str().c_str());
		return 1;
	}
	if (!l->has_value()) {
		if (last >= 0) {
			std::fprintf(stderr, "crash_check: no checkpoint found, but step %lld was committed\n", last);
			return 1;
		}
		return 0;
	}
	const auto &e = (*l)->entry;
	if (e.step < last) {
		std::fprintf(stderr, "crash_check: restore found step %lld, older than committed step %lld\n",
			     static_cast<long long>(e.step), last);
		return 1;
	}
	if (e.manifest->files.size() != static_cast<size_t>(test::crash_files)) {
		std::fprintf(stderr, "crash_check: %s has %zu files\n", e.path.c_str(), e.manifest->files.size());
		return 1;
	}
	for (int i = 0; i < test::crash_files; i++) {
		auto body = read_file(path_join(e.path, test::crash_file_name(i)));
		auto want = test::crash_content(e.step, i);
		if (!body || body->size() != want.size() || std::memcmp(body->data(), want.data(), want.size()) != 0) {
			std::fprintf(stderr, "crash_check: %s/%s is torn or mixed\n", e.path.c_str(),
				     test::crash_file_name(i).c_str());
			return 1;
		}
	}
	auto latest = ckpt::read_latest(dir);
	if (!latest) {
		std::fprintf(stderr, "crash_check: %s\n", latest.error().str().c_str());
		return 1;
	}
	if (!latest->empty()) {
		auto m = ckpt::manifest_read(path_join(dir, *latest));
		if (!m || !ckpt::verify_checkpoint(path_join(dir, *latest), *m, ckpt::Verify::full)) {
			std::fprintf(stderr, "crash_check: latest names %s, which does not verify\n", latest->c_str());
			return 1;
		}
	}
	std::printf("%lld\n", static_cast<long long>(e.step));
	return 0;
}
