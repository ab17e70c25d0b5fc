/*
 * aesctr.c: AES-256-CTR keystream (FIPS 197, SP 800-38A), portable and
 * with the AES-NI and VAES instructions.
 */
#include <pthread.h>
#include <string.h>

#include "aesctr.h"

#if !defined(PRIVADA_NO_SIMD) && defined(__GNUC__) && defined(__x86_64__)
#define AES_HAVE_X86 1
#include <immintrin.h>
#else
#define AES_HAVE_X86 0
#endif

#define NR 14			/* rounds of AES-256 */

/* ---- portable code ---- */

static unsigned char sbox[256];
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

/* One block: byte r + 4c of the state is row r, column c. */
static void
enc_portable(const unsigned char *rk, const unsigned char in[16],
    unsigned char out[16])
{
	unsigned char s[16], t[16];

	for (int i = 0; i < 16; i++)
		s[i] = in[i] ^ rk[i];
	for (int round = 1; round <= NR; round++) {
		/* SubBytes and ShiftRows: row r moves left by r. */
		for (int c = 0; c < 4; c++)
			for (int r = 0; r < 4; r++)
				t[r + 4 * c] = sbox[s[r + 4 * ((c + r) & 3)]];
		if (round < NR) {
			for (int c = 0; c < 4; c++) {
				unsigned char *a = t + 4 * c, a0 = a[0],
				    a1 = a[1], a2 = a[2], a3 = a[3];
				unsigned char all = a0 ^ a1 ^ a2 ^ a3;

				/* 2 a_i + 3 a_{i+1} + a_{i+2} + a_{i+3} */
				a[0] ^= all ^ xtime(a0 ^ a1);
				a[1] ^= all ^ xtime(a1 ^ a2);
				a[2] ^= all ^ xtime(a2 ^ a3);
				a[3] ^= all ^ xtime(a3 ^ a0);
			}
		}
		for (int i = 0; i < 16; i++)
			s[i] = t[i] ^ rk[16 * round + i];
	}
	memcpy(out, s, 16);
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
	unsigned char b[16];

	for (size_t i = 0; i < n; i++, out += 16) {
		ctr_block(ctr + i, b);
		enc_portable(rk, b, out);
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

/* Eight blocks side by side, then one at a time. */
AESNI_FN static void
ctr_aesni(const unsigned char *rk, uint64_t ctr, unsigned char *out,
    size_t n)
{
	__m128i k[NR + 1];
	size_t i = 0;

	for (int r = 0; r <= NR; r++)
		k[r] = _mm_loadu_si128((const __m128i *)(rk + 16 * r));
	for (; i + 8 <= n; i += 8) {
		__m128i b[8];

		for (size_t j = 0; j < 8; j++)
			b[j] = _mm_xor_si128(ctr_vec(ctr + i + j), k[0]);
		for (int r = 1; r < NR; r++)
			for (int j = 0; j < 8; j++)
				b[j] = _mm_aesenc_si128(b[j], k[r]);
		for (size_t j = 0; j < 8; j++)
			_mm_storeu_si128((__m128i *)(out + 16 * (i + j)),
			    _mm_aesenclast_si128(b[j], k[NR]));
	}
	for (; i < n; i++) {
		__m128i b = _mm_xor_si128(ctr_vec(ctr + i), k[0]);

		for (int r = 1; r < NR; r++)
			b = _mm_aesenc_si128(b, k[r]);
		_mm_storeu_si128((__m128i *)(out + 16 * i),
		    _mm_aesenclast_si128(b, k[NR]));
	}
}

/* Four blocks per 512-bit vector, four vectors side by side; the last
 * n mod 16 blocks by ctr_aesni. */
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
		__m512i b[4];

		for (int j = 0; j < 4; j++) {
			uint64_t c = ctr + i + 4 * (uint64_t)j;

			b[j] = _mm512_xor_si512(_mm512_set_epi64(
			    (long long)__builtin_bswap64(c + 3), 0,
			    (long long)__builtin_bswap64(c + 2), 0,
			    (long long)__builtin_bswap64(c + 1), 0,
			    (long long)__builtin_bswap64(c), 0), k[0]);
		}
		for (int r = 1; r < NR; r++)
			for (int j = 0; j < 4; j++)
				b[j] = _mm512_aesenc_epi128(b[j], k[r]);
		for (int j = 0; j < 4; j++)
			_mm512_storeu_si512((void *)(out + 16 * (i + 4 *
			    (size_t)j)), _mm512_aesenclast_epi128(b[j], k[NR]));
	}
	if (i < n)
		ctr_aesni(rk, ctr + i, out + 16 * i, n - i);
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
		    __builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("vaes");
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

void
aesctr_key(struct aesctr *a, const unsigned char key[32])
{
	(void)pthread_once(&sbox_once, sbox_init);
	expand(a->rk, key);
	a->ctr = 0;
	a->impl = AESCTR_IMPL_VAES;
	while (!impl_supported(a->impl))
		a->impl--;
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
