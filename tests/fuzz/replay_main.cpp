// Replays fuzz inputs through a libFuzzer entry point without libFuzzer, so
// that `make check` runs every target's seed corpus with the normal compiler
// (and under ASan/UBSan in a --enable-sanitizers build).
//
//   replay_X FILE_OR_DIR...
#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	if (!in) {
		std::fprintf(stderr, "replay: cannot open %s\n", path.c_str());
		return 1;
	}
	std::vector<char> buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(buf.data()), buf.size());
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (::stat(argv[i], &st) != 0) {
			std::fprintf(stderr, "replay: %s: not found\n", argv[i]);
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			DIR *d = ::opendir(argv[i]);
			while (struct dirent *e = d ? ::readdir(d) : nullptr) {
				if (e->d_name[0] == '.')
					continue;
				failed += run_file(std::string(argv[i]) + "/" + e->d_name);
				files++;
			}
			if (d)
				::closedir(d);
		} else {
			failed += run_file(argv[i]);
			files++;
		}
	}
	if (files == 0) {
		std::fprintf(stderr, "replay: no inputs (an empty corpus tests nothing)\n");
		return 1;
	}
	std::printf("replayed %d inputs\n", files);
	return failed ? 1 : 0;
}
