/*
 * aesctr.c: AES-256-CTR keystream (FIPS 197, SP 800-38A), portable and
 * with the AES-NI and VAES instructions.
 */
#include <pthread.h>
#include <string.h>

#include "aesctr.h"

#if !defined(PRIVADA_NO_SIMD) && defined(__GNUC__) && defined(__x86_64__)
#define AES_HAVE_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define AES_HAVE_X86 0
#endif

#define NR 14			/* rounds of AES-256 */

/* ---- portable code ---- */

static unsigned char sbox[256];
/* te[x]: the column (S(x), 0, 0, 0) after MixColumns, bytes (2 S, S, S,
 * 3 S) as a little-endian word; rows 1-3 are its rotations. */
static uint32_t te[256];
static pthread_once_t sbox_once = PTHREAD_ONCE_INIT;

static unsigned char
rotl8(unsigned char x, int k)
{
	return (unsigned char)((x << k) | (x >> (8 - k)));
}

/*
 * The S-box from its definition (FIPS 197 section 5.1.1): the inverse in
 * GF(2^8) modulo x^8 + x^4 + x^3 + x + 1, then the affine map.  p runs
 * over the powers of the generator 3 and q over those of its inverse, so
 * q = 1/p at every step.
 */
static void
sbox_init(void)
{
	unsigned p = 1, q = 1;

	do {
		p = (p ^ (p << 1) ^ (p & 0x80 ? 0x1b : 0)) & 0xff;
		q ^= q << 1;
		q ^= q << 2;
		q ^= q << 4;
		q &= 0xff;
		if (q & 0x80)
			q ^= 0x09;
		sbox[p] = (unsigned char)(q ^ rotl8((unsigned char)q, 1) ^
		    rotl8((unsigned char)q, 2) ^ rotl8((unsigned char)q, 3) ^
		    rotl8((unsigned char)q, 4) ^ 0x63);
	} while (p != 1);
	sbox[0] = 0x63;
	for (int x = 0; x < 256; x++) {
		uint32_t v = sbox[x], v2 = (uint32_t)((v << 1) ^
		    (v & 0x80 ? 0x1b : 0)) & 0xff;

		te[x] = v2 | v << 8 | v << 16 | (v2 ^ v) << 24;
	}
}

static unsigned char
xtime(unsigned char a)
{
	return (unsigned char)((a << 1) ^ (a & 0x80 ? 0x1b : 0));
}

/* FIPS 197 section 5.2 for Nk = 8: 60 words, 4 bytes each. */
static void
expand(unsigned char rk[15 * 16], const unsigned char key[32])
{
	unsigned char rcon = 1;

	memcpy(rk, key, 32);
	for (int i = 8; i < 4 * (NR + 1); i++) {
		unsigned char t[4];

		memcpy(t, rk + 4 * (i - 1), 4);
		if (i % 8 == 0) {
			unsigned char t0 = t[0];

			t[0] = (unsigned char)(sbox[t[1]] ^ rcon);
			t[1] = sbox[t[2]];
			t[2] = sbox[t[3]];
			t[3] = sbox[t0];
			rcon = xtime(rcon);
		} else if (i % 8 == 4) {
			for (int j = 0; j < 4; j++)
				t[j] = sbox[t[j]];
		}
		for (int j = 0; j < 4; j++)
			rk[4 * i + j] = rk[4 * (i - 8) + j] ^ t[j];
	}
}

static uint32_t
rotl32(uint32_t x, int k)
{
	return x << k | x >> (32 - k);
}

static uint32_t
le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/*
 * One block.  Byte r + 4c of the state is row r of column c; column c is
 * kept as the little-endian word w[c].  A round's column c takes row r
 * from column c + r (ShiftRows), each byte through the S-box and
 * MixColumns at once: te[] for row 0 and its rotations for rows 1-3.
 */
static void
enc_words(const uint32_t *rk, const unsigned char in[16],
    unsigned char out[16])
{
	uint32_t w[4], t[4];

	for (int c = 0; c < 4; c++)
		w[c] = le32(in + 4 * c) ^ rk[c];
	for (int round = 1; round < NR; round++) {
		for (int c = 0; c < 4; c++)
			t[c] = te[w[c] & 0xff] ^
			    rotl32(te[w[(c + 1) & 3] >> 8 & 0xff], 8) ^
			    rotl32(te[w[(c + 2) & 3] >> 16 & 0xff], 16) ^
			    rotl32(te[w[(c + 3) & 3] >> 24], 24) ^
			    rk[4 * round + c];
		memcpy(w, t, sizeof w);
	}
	for (int c = 0; c < 4; c++) {
		t[c] = ((uint32_t)sbox[w[c] & 0xff] |
		    (uint32_t)sbox[w[(c + 1) & 3] >> 8 & 0xff] << 8 |
		    (uint32_t)sbox[w[(c + 2) & 3] >> 16 & 0xff] << 16 |
		    (uint32_t)sbox[w[(c + 3) & 3] >> 24] << 24) ^
		    rk[4 * NR + c];
		for (int b = 0; b < 4; b++)
			out[4 * c + b] = (unsigned char)(t[c] >> (8 * b));
	}
}

/* The round keys as little-endian words. */
static void
key_words(const unsigned char *rkb, uint32_t rk[4 * (NR + 1)])
{
	for (int i = 0; i < 4 * (NR + 1); i++)
		rk[i] = le32(rkb + 4 * i);
}

static void
enc_portable(const unsigned char *rkb, const unsigned char in[16],
    unsigned char out[16])
{
	uint32_t rk[4 * (NR + 1)];

	key_words(rkb, rk);
	enc_words(rk, in, out);
}

/* Counter block i: 8 zero bytes, then i big-endian. */
static void
ctr_block(uint64_t i, unsigned char b[16])
{
	memset(b, 0, 8);
	for (int k = 0; k < 8; k++)
		b[15 - k] = (unsigned char)(i >> (8 * k));
}

static void
ctr_portable(const unsigned char *rk, uint64_t ctr, unsigned char *out,
    size_t n)
{
	uint32_t w[4 * (NR + 1)];
	unsigned char b[16];

	key_words(rk, w);
	for (size_t i = 0; i < n; i++, out += 16) {
		ctr_block(ctr + i, b);
		enc_words(w, b, out);
	}
}

/* ---- AES-NI and VAES ---- */

#if AES_HAVE_X86
#define AESNI_FN __attribute__((target("aes,sse4.1")))
#define VAES_FN __attribute__((target("aes,sse4.1,avx512f,vaes")))

AESNI_FN static inline __m128i
ctr_vec(uint64_t i)
{
	return _mm_set_epi64x((long long)__builtin_bswap64(i), 0);
}

/* Four blocks side by side (named variables, kept in registers), then
 * one at a time. */
AESNI_FN static void
ctr_aesni(const unsigned char *rk, uint64_t ctr, unsigned char *out,
    size_t n)
{
	__m128i k[NR + 1];
	size_t i = 0;

	for (int r = 0; r <= NR; r++)
		k[r] = _mm_loadu_si128((const __m128i *)(rk + 16 * r));
	for (; i + 4 <= n; i += 4) {
		__m128i b0 = _mm_xor_si128(ctr_vec(ctr + i), k[0]);
		__m128i b1 = _mm_xor_si128(ctr_vec(ctr + i + 1), k[0]);
		__m128i b2 = _mm_xor_si128(ctr_vec(ctr + i + 2), k[0]);
		__m128i b3 = _mm_xor_si128(ctr_vec(ctr + i + 3), k[0]);

		for (int r = 1; r < NR; r++) {
			b0 = _mm_aesenc_si128(b0, k[r]);
			b1 = _mm_aesenc_si128(b1, k[r]);
			b2 = _mm_aesenc_si128(b2, k[r]);
			b3 = _mm_aesenc_si128(b3, k[r]);
		}
		_mm_storeu_si128((__m128i *)(out + 16 * i),
		    _mm_aesenclast_si128(b0, k[NR]));
		_mm_storeu_si128((__m128i *)(out + 16 * i + 16),
		    _mm_aesenclast_si128(b1, k[NR]));
		_mm_storeu_si128((__m128i *)(out + 16 * i + 32),
		    _mm_aesenclast_si128(b2, k[NR]));
		_mm_storeu_si128((__m128i *)(out + 16 * i + 48),
		    _mm_aesenclast_si128(b3, k[NR]));
	}
	for (; i < n; i++) {
		__m128i b = _mm_xor_si128(ctr_vec(ctr + i), k[0]);

		for (int r = 1; r < NR; r++)
			b = _mm_aesenc_si128(b, k[r]);
		_mm_storeu_si128((__m128i *)(out + 16 * i),
		    _mm_aesenclast_si128(b, k[NR]));
	}
}

/* Four blocks per 512-bit vector, four vectors side by side (named
 * variables, so that they stay in registers); the last n mod 16 blocks by
 * ctr_aesni. */
VAES_FN static inline __m512i
ctr4(uint64_t c, __m512i k0)
{
	return _mm512_xor_si512(_mm512_set_epi64(
	    (long long)__builtin_bswap64(c + 3), 0,
	    (long long)__builtin_bswap64(c + 2), 0,
	    (long long)__builtin_bswap64(c + 1), 0,
	    (long long)__builtin_bswap64(c), 0), k0);
}

VAES_FN static void
ctr_vaes(const unsigned char *rk, uint64_t ctr, unsigned char *out,
    size_t n)
{
	__m512i k[NR + 1];
	size_t i = 0;

	for (int r = 0; r <= NR; r++)
		k[r] = _mm512_broadcast_i32x4(_mm_loadu_si128(
		    (const __m128i *)(rk + 16 * r)));
	for (; i + 16 <= n; i += 16) {
		__m512i b0 = ctr4(ctr + i, k[0]), b1 = ctr4(ctr + i + 4, k[0]);
		__m512i b2 = ctr4(ctr + i + 8, k[0]);
		__m512i b3 = ctr4(ctr + i + 12, k[0]);

		for (int r = 1; r < NR; r++) {
			b0 = _mm512_aesenc_epi128(b0, k[r]);
			b1 = _mm512_aesenc_epi128(b1, k[r]);
			b2 = _mm512_aesenc_epi128(b2, k[r]);
			b3 = _mm512_aesenc_epi128(b3, k[r]);
		}
		_mm512_storeu_si512((void *)(out + 16 * i),
		    _mm512_aesenclast_epi128(b0, k[NR]));
		_mm512_storeu_si512((void *)(out + 16 * i + 64),
		    _mm512_aesenclast_epi128(b1, k[NR]));
		_mm512_storeu_si512((void *)(out + 16 * i + 128),
		    _mm512_aesenclast_epi128(b2, k[NR]));
		_mm512_storeu_si512((void *)(out + 16 * i + 192),
		    _mm512_aesenclast_epi128(b3, k[NR]));
	}
	if (i < n)
		ctr_aesni(rk, ctr + i, out + 16 * i, n - i);
}

/* CPUID leaf 7, ECX bit 9 (VAES).  Not __builtin_cpu_supports("vaes"):
 * clang 14 does not know that name.  The OS's saving of the vector
 * registers is checked by __builtin_cpu_supports("avx512f"). */
static int
has_vaes(void)
{
	unsigned a, b, c, d;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return 0;
	return (c >> 9) & 1;
}

static int
impl_supported(int impl)
{
	switch (impl) {
	case AESCTR_IMPL_PORTABLE:
		return 1;
	case AESCTR_IMPL_AESNI:
		return __builtin_cpu_supports("aes") &&
		    __builtin_cpu_supports("sse4.1");
	case AESCTR_IMPL_VAES:
		return __builtin_cpu_supports("aes") &&
		    __builtin_cpu_supports("sse4.1") &&
		    __builtin_cpu_supports("avx512f") && has_vaes();
	default:
		return 0;
	}
}
#else
static int
impl_supported(int impl)
{
	return impl == AESCTR_IMPL_PORTABLE;
}
#endif

/* ---- interface ---- */

/* The fastest implementation, found once: CPUID traps to the hypervisor
 * in a virtual machine (microseconds), and noise_fast keys every 64 KiB. */
static int best_impl;

static void
init_once(void)
{
	sbox_init();
	best_impl = AESCTR_IMPL_VAES;
	while (!impl_supported(best_impl))
		best_impl--;
}

void
aesctr_key(struct aesctr *a, const unsigned char key[32])
{
	(void)pthread_once(&sbox_once, init_once);
	expand(a->rk, key);
	a->ctr = 0;
	a->impl = best_impl;
}

void
aesctr_key_rng(struct aesctr *a, struct rng *r)
{
	unsigned char key[32];

	rng_bytes(r, key, sizeof key);
	aesctr_key(a, key);
	memset(key, 0, sizeof key);
	__asm__ __volatile__("" : : "r"(key) : "memory");
}

void
aesctr_blocks(struct aesctr *a, unsigned char *out, size_t nblocks)
{
#if AES_HAVE_X86
	if (a->impl == AESCTR_IMPL_VAES)
		ctr_vaes(a->rk, a->ctr, out, nblocks);
	else if (a->impl == AESCTR_IMPL_AESNI)
		ctr_aesni(a->rk, a->ctr, out, nblocks);
	else
#endif
		ctr_portable(a->rk, a->ctr, out, nblocks);
	a->ctr += nblocks;
}

int
aesctr_hw(void)
{
	(void)pthread_once(&sbox_once, init_once);
	return best_impl >= AESCTR_IMPL_AESNI;
}

void
aesctr_wipe(struct aesctr *a)
{
	memset(a, 0, sizeof *a);
	__asm__ __volatile__("" : : "r"(a) : "memory");
}

void
aesctr_encrypt_block(const struct aesctr *a, const unsigned char in[16],
    unsigned char out[16])
{
	enc_portable(a->rk, in, out);
}

int
aesctr_test_force(struct aesctr *a, int impl)
{
	int prev = a->impl;

	if (impl < AESCTR_IMPL_PORTABLE || impl > AESCTR_IMPL_VAES ||
	    !impl_supported(impl))
		return -1;
	a->impl = impl;
	return prev;
}
