#include "lib/ckpt/sha256.hpp"

#include <cerrno>
#include <cstring>
#include <new>
#include <openssl/evp.h>
#include <unistd.h>
#include <vector>

namespace loom::ckpt {
namespace {

// Fetched once (an explicit fetch: EVP_sha256() would look the algorithm up
// again on every init).
const EVP_MD *sha256_md()
{
	static const EVP_MD *md = [] {
		const EVP_MD *m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
		return m ? m : EVP_sha256();
	}();
	return md;
}

EVP_MD_CTX *ctx_of(void *p) { return static_cast<EVP_MD_CTX *>(p); }

} // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new())
{
	if (!ctx_)
		throw std::bad_alloc();
	ok_ = EVP_DigestInit_ex(ctx_of(ctx_), sha256_md(), nullptr) == 1;
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_of(ctx_)); }

void Sha256::update(const void *data, size_t size)
{
	if (ok_ && !done_ && size > 0)
		ok_ = EVP_DigestUpdate(ctx_of(ctx_), data, size) == 1;
}

bool Sha256::digest(std::array<uint8_t, 32> &out)
{
	if (done_ || !ok_)
		return false;
	done_ = true;
	unsigned int len = 0;
	ok_ = EVP_DigestFinal_ex(ctx_of(ctx_), out.data(), &len) == 1 && len == out.size();
	return ok_;
}

std::string Sha256::hex()
{
	std::array<uint8_t, 32> d{};
	if (!digest(d))
		return {};
	static const char digits[] = "0123456789abcdef";
	std::string s(64, '0');
	for (size_t i = 0; i < d.size(); i++) {
		s[2 * i] = digits[d[i] >> 4];
		s[2 * i + 1] = digits[d[i] & 15];
	}
	return s;
}

std::string sha256_hex(const void *data, size_t size)
{
	Sha256 h;
	h.update(data, size);
	return h.hex();
}

expected<FileDigest> sha256_fd(int fd, const std::string &what)
{
	Sha256 h;
	FileDigest d;
	std::vector<char> buf(4u << 20);
	while (true) {
		ssize_t n = ::read(fd, buf.data(), buf.size());
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return unexpected(what, std::string("read error: ") + std::strerror(errno));
		if (n == 0)
			break;
		h.update(buf.data(), static_cast<size_t>(n));
		d.size += static_cast<uint64_t>(n);
	}
	d.sha256 = h.hex();
	if (d.sha256.empty())
		return unexpected(what, "SHA-256 failed (libcrypto)");
	return d;
}

} // namespace loom::ckpt
