// loom ckpt: SHA-256 for checkpoint file checksums, by libcrypto (OpenSSL 3),
// which uses the CPU's SHA instructions on every architecture that has them
// (x86 SHA-NI, ARMv8 crypto extensions, POWER8 and later).
#pragma once

#include "lib/util/expected.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loom::ckpt {

class Sha256 {
public:
	Sha256();
	~Sha256();
	Sha256(const Sha256 &) = delete;
	Sha256 &operator=(const Sha256 &) = delete;

	void update(const void *data, size_t size);
	void update(std::string_view s) { update(s.data(), s.size()); }
	// The digest; false where libcrypto failed (no digest is ever made up).
	bool digest(std::array<uint8_t, 32> &out);
	// Lower-case hex of the digest (64 characters); empty where libcrypto
	// failed, which no manifest accepts.
	std::string hex();

private:
	void *ctx_; // EVP_MD_CTX
	bool ok_;
	bool done_ = false;
};

// Hex SHA-256 of a buffer (empty where libcrypto failed).
std::string sha256_hex(const void *data, size_t size);

// Read an open file from its current offset to the end: its size and hex
// SHA-256. `what` names the file in errors.
struct FileDigest {
	uint64_t size = 0;
	std::string sha256;
};
expected<FileDigest> sha256_fd(int fd, const std::string &what);

} // namespace loom::ckpt
