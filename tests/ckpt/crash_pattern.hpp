// The content the crash-safety writer puts into each checkpoint: a pure
// function of (step, file index), so the checker can tell a torn or mixed
// checkpoint from a whole one without trusting the manifest.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom::test {

inline constexpr int crash_files = 3;

inline std::string crash_file_name(int i) { return "shard" + std::to_string(i) + ".bin"; }

inline std::vector<char> crash_content(int64_t step, int i)
{
	uint64_t size = (static_cast<uint64_t>(step) * 7919u + static_cast<uint64_t>(i) * 104729u) % (384u * 1024u) + 1;
	std::vector<char> out(size);
	uint64_t x = static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 1;
	for (uint64_t k = 0; k < size; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		out[k] = static_cast<char>(x);
	}
	return out;
}

} // namespace loom::test
