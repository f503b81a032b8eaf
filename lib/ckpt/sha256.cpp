#include "lib/ckpt/sha256.hpp"

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace loom::ckpt {
namespace {

constexpr uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void blocks_portable(uint32_t s[8], const uint8_t *p, size_t n)
{
	for (; n > 0; n--, p += 64) {
		uint32_t w[64];
		for (int i = 0; i < 16; i++)
			w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 |
			       uint32_t(p[4 * i + 3]);
		for (int i = 16; i < 64; i++) {
			uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
			uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
			w[i] = w[i - 16] + s0 + w[i - 7] + s1;
		}
		uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
		for (int i = 0; i < 64; i++) {
			uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
			uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
			h = g;
			g = f;
			f = e;
			e = d + t1;
			d = c;
			c = b;
			b = a;
			a = t1 + t2;
		}
		s[0] += a, s[1] += b, s[2] += c, s[3] += d, s[4] += e, s[5] += f, s[6] += g, s[7] += h;
	}
}

#if defined(__x86_64__)
bool cpu_has_sha()
{
	unsigned a, b, c, d;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	bool sha = (b >> 29) & 1;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	bool sse41 = (c >> 19) & 1, ssse3 = (c >> 9) & 1;
	return sha && sse41 && ssse3;
}

// The SHA-NI schedule: four message vectors rotate through the 16 groups of
// four rounds; msg1 prepares a vector three groups ahead, msg2 finishes it.
__attribute__((target("sha,sse4.1,ssse3"))) void blocks_shani(uint32_t s[8], const uint8_t *p, size_t n)
{
	const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&s[0]));
	__m128i st1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(&s[4]));
	tmp = _mm_shuffle_epi32(tmp, 0xB1);          // CDAB
	st1 = _mm_shuffle_epi32(st1, 0x1B);          // EFGH
	__m128i st0 = _mm_alignr_epi8(tmp, st1, 8); // ABEF
	st1 = _mm_blend_epi16(st1, tmp, 0xF0);       // CDGH
	for (; n > 0; n--, p += 64) {
		const __m128i save0 = st0, save1 = st1;
		__m128i m[4];
#pragma GCC unroll 4
		for (int i = 0; i < 4; i++)
			m[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p + 16 * i)), mask);
#pragma GCC unroll 16
		for (int g = 0; g < 16; g++) {
			__m128i &cur = m[g & 3], &next = m[(g + 1) & 3], &prev = m[(g + 3) & 3];
			__m128i msg = _mm_add_epi32(cur, _mm_loadu_si128(reinterpret_cast<const __m128i *>(&K[4 * g])));
			st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
			if (g >= 3 && g <= 14) {
				next = _mm_add_epi32(next, _mm_alignr_epi8(cur, prev, 4));
				next = _mm_sha256msg2_epu32(next, cur);
			}
			msg = _mm_shuffle_epi32(msg, 0x0E);
			st0 = _mm_sha256rnds2_epu32(st0, st1, msg);
			if (g >= 1 && g <= 12)
				prev = _mm_sha256msg1_epu32(prev, cur);
		}
		st0 = _mm_add_epi32(st0, save0);
		st1 = _mm_add_epi32(st1, save1);
	}
	tmp = _mm_shuffle_epi32(st0, 0x1B);    // FEBA
	st1 = _mm_shuffle_epi32(st1, 0xB1);    // DCHG
	st0 = _mm_blend_epi16(tmp, st1, 0xF0); // DCBA
	st1 = _mm_alignr_epi8(st1, tmp, 8);    // ABEF
	_mm_storeu_si128(reinterpret_cast<__m128i *>(&s[0]), st0);
	_mm_storeu_si128(reinterpret_cast<__m128i *>(&s[4]), st1);
}
const bool g_have_sha = cpu_has_sha();
#else
const bool g_have_sha = false;
#endif

std::atomic<bool> g_force_portable{false};

} // namespace

Sha256::Sha256()
{
	static constexpr uint32_t init[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	std::memcpy(state_, init, sizeof(state_));
}

void Sha256::force_portable(bool on) { g_force_portable.store(on); }
bool Sha256::hardware_accelerated() { return g_have_sha && !g_force_portable.load(); }

void Sha256::blocks(const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
	if (hardware_accelerated()) {
		blocks_shani(state_, p, n);
		return;
	}
#endif
	blocks_portable(state_, p, n);
}

void Sha256::update(const void *data, size_t size)
{
	const uint8_t *p = static_cast<const uint8_t *>(data);
	total_ += size;
	if (buf_len_ > 0) {
		size_t take = std::min(size, 64 - buf_len_);
		std::memcpy(buf_ + buf_len_, p, take);
		buf_len_ += take;
		p += take;
		size -= take;
		if (buf_len_ < 64)
			return;
		blocks(buf_, 1);
		buf_len_ = 0;
	}
	if (size >= 64) {
		blocks(p, size / 64);
		p += size / 64 * 64;
		size %= 64;
	}
	std::memcpy(buf_, p, size);
	buf_len_ = size;
}

std::array<uint8_t, 32> Sha256::digest()
{
	uint64_t bits = total_ * 8;
	uint8_t pad[72] = {0x80};
	size_t padlen = (buf_len_ < 56 ? 56 : 120) - buf_len_;
	for (int i = 0; i < 8; i++)
		pad[padlen + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
	update(pad, padlen + 8);
	std::array<uint8_t, 32> out;
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = static_cast<uint8_t>(state_[i] >> (24 - 8 * j));
	return out;
}

std::string Sha256::hex()
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	for (uint8_t b : digest()) {
		s += digits[b >> 4];
		s += digits[b & 15];
	}
	return s;
}

std::string sha256_hex(const void *data, size_t size)
{
	Sha256 h;
	h.update(data, size);
	return h.hex();
}

} // namespace loom::ckpt
