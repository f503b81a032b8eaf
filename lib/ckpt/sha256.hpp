// loom ckpt: SHA-256 for checkpoint file checksums.
//
// Uses the x86 SHA extensions when the CPU has them (about 1.5 GB/s, enough to
// hash a checkpoint while it is written), else a portable implementation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loom::ckpt {

class Sha256 {
public:
	Sha256();
	void update(const void *data, size_t size);
	void update(std::string_view s) { update(s.data(), s.size()); }
	std::array<uint8_t, 32> digest();
	// Lower-case hex of the digest (64 characters).
	std::string hex();

	// Force the portable code path (tests compare both paths).
	static void force_portable(bool on);
	static bool hardware_accelerated();

private:
	void blocks(const uint8_t *p, size_t n);
	uint32_t state_[8];
	uint8_t buf_[64];
	size_t buf_len_ = 0;
	uint64_t total_ = 0;
};

// Hex SHA-256 of a buffer.
std::string sha256_hex(const void *data, size_t size);

} // namespace loom::ckpt
