/*
 * rng.c: ChaCha20 keystream generator (RFC 8439) seeded from getrandom(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rng.h"
#include "tstream.h"

/*
 * Keystream bytes per refill: 16 blocks.  RNG_BUF is part of the pinned
 * stream, not a tuning knob: rng_u64 skips the last 1 to 7 bytes of a
 * buffer when fewer than 8 remain, so after an odd-length rng_bytes the
 * values drawn depend on where the buffer ends.  Larger batches would
 * change seeded outputs.  16 blocks are one AVX-512 or two AVX2 calls.
 */
#define RNG_BLOCKS 16
#define RNG_BUF (64 * RNG_BLOCKS)
/* Blocks computed side by side by the portable code. */
#define RNG_LANES 4

/*
 * Block functions, chosen per handle when it is created (never a global
 * that threads would race on): AVX-512F, else AVX2, else the portable
 * code, all giving the same bytes (tests/unit/test_rng.c compares them).
 * PRIVADA_NO_SIMD at build time, a compiler without GCC's target
 * attribute, or another architecture leaves only the portable code.
 */
#if !defined(PRIVADA_NO_SIMD) && defined(__GNUC__) && \
    (defined(__x86_64__) || defined(__i386__))
#define RNG_HAVE_X86 1
#include <immintrin.h>
#else
#define RNG_HAVE_X86 0
#endif

/* Implementations (RNG_IMPL_* in rng.h): portable, AVX2 (8 blocks in
 * 256-bit vectors), AVX-512F (16 blocks in 512-bit vectors). */
#define RNG_IMPLS 3

struct rng {
	uint32_t key[8];
	uint64_t block;		/* index of the next block to generate */
	size_t pos;		/* next unread byte of buf */
	uint64_t bitbuf;	/* unused bits of one draw, for rng_bits */
	unsigned nbits;
	int seeded;
	int impl;		/* RNG_IMPL_* */
	unsigned char buf[RNG_BUF];
};

static const uint32_t sigma[4] = {
	0x61707865, 0x3320646e, 0x79622d32, 0x6b206574	/* "expand 32-byte k" */
};

static inline uint32_t
rotl(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

#define QR(a, b, c, d) do { \
	a += b; d ^= a; d = rotl(d, 16); \
	c += d; b ^= c; b = rotl(b, 12); \
	a += b; d ^= a; d = rotl(d, 8); \
	c += d; b ^= c; b = rotl(b, 7); \
} while (0)

static inline void
store32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline uint32_t
load32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static void
chacha_core(const uint32_t in[16], unsigned char out[64])
{
	uint32_t x[16];

	memcpy(x, in, sizeof x);
	for (int i = 0; i < 10; i++) {
		QR(x[0], x[4], x[8], x[12]);
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
	for (int i = 0; i < 16; i++)
		store32(out + 4 * i, x[i] + in[i]);
}

void
rng_chacha20_block(const uint32_t key[8], uint32_t counter,
    const uint32_t nonce[3], unsigned char out[64])
{
	uint32_t s[16];

	memcpy(s, sigma, sizeof sigma);
	memcpy(s + 4, key, 8 * sizeof *key);
	s[12] = counter;
	memcpy(s + 13, nonce, 3 * sizeof *nonce);
	chacha_core(s, out);
}

/*
 * RNG_LANES consecutive blocks computed lane by lane: every statement is a
 * loop over lanes, which GCC and Clang turn into vector instructions.  The
 * result is the same as calling chacha_core on each block.  Block b has
 * the 64-bit counter b in words 12-13 (low word first) and w14, w15 in
 * words 14-15: the handles use zeros there, the RFC vectors do not.
 */
static void
chacha_lanes(const uint32_t key[8], uint64_t block, uint32_t w14,
    uint32_t w15, unsigned char *out)
{
	uint32_t x[16][RNG_LANES], in[16][RNG_LANES];
	int i, l;

	for (l = 0; l < RNG_LANES; l++) {
		uint64_t b = block + (uint64_t)l;

		for (i = 0; i < 4; i++)
			in[i][l] = sigma[i];
		for (i = 0; i < 8; i++)
			in[4 + i][l] = key[i];
		in[12][l] = (uint32_t)b;
		in[13][l] = (uint32_t)(b >> 32);
		in[14][l] = w14;
		in[15][l] = w15;
	}
	memcpy(x, in, sizeof x);
#define VQR(a, b, c, d) do { \
	for (l = 0; l < RNG_LANES; l++) { \
		x[a][l] += x[b][l]; x[d][l] ^= x[a][l]; x[d][l] = rotl(x[d][l], 16); \
		x[c][l] += x[d][l]; x[b][l] ^= x[c][l]; x[b][l] = rotl(x[b][l], 12); \
		x[a][l] += x[b][l]; x[d][l] ^= x[a][l]; x[d][l] = rotl(x[d][l], 8); \
		x[c][l] += x[d][l]; x[b][l] ^= x[c][l]; x[b][l] = rotl(x[b][l], 7); \
	} \
} while (0)
	for (i = 0; i < 10; i++) {
		VQR(0, 4, 8, 12);
		VQR(1, 5, 9, 13);
		VQR(2, 6, 10, 14);
		VQR(3, 7, 11, 15);
		VQR(0, 5, 10, 15);
		VQR(1, 6, 11, 12);
		VQR(2, 7, 8, 13);
		VQR(3, 4, 9, 14);
	}
#undef VQR
	for (l = 0; l < RNG_LANES; l++)
		for (i = 0; i < 16; i++)
			store32(out + 64 * l + 4 * i, x[i][l] + in[i][l]);
}

#if RNG_HAVE_X86
/*
 * Eight consecutive blocks with AVX2, the same layout as chacha_lanes:
 * 32-bit lane l of vector x[i] is word i of block `block + l`.  The
 * rotations by 16 and 8 move whole bytes, so they are byte shuffles; 12
 * and 7 are two shifts.  The counter words are computed in 64 bits and
 * split, which carries from word 12 into word 13 exactly as in
 * chacha_lanes.  At the end an 8x8 transpose of 32-bit words (twice, for
 * words 0-7 and 8-15) turns lanes into blocks; x86 is little-endian, so
 * storing a vector writes its words in the RFC's byte order.
 */
#define AVX2_FN __attribute__((target("avx2")))

AVX2_FN static inline __m256i
rot16_avx2(__m256i v)
{
	const __m256i r = _mm256_set_epi8(13, 12, 15, 14, 9, 8, 11, 10,
	    5, 4, 7, 6, 1, 0, 3, 2, 13, 12, 15, 14, 9, 8, 11, 10,
	    5, 4, 7, 6, 1, 0, 3, 2);

	return _mm256_shuffle_epi8(v, r);
}

AVX2_FN static inline __m256i
rot8_avx2(__m256i v)
{
	const __m256i r = _mm256_set_epi8(14, 13, 12, 15, 10, 9, 8, 11,
	    6, 5, 4, 7, 2, 1, 0, 3, 14, 13, 12, 15, 10, 9, 8, 11,
	    6, 5, 4, 7, 2, 1, 0, 3);

	return _mm256_shuffle_epi8(v, r);
}

#define ROTL_AVX2(v, n) \
	_mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - (n)))

#define QR_AVX2(a, b, c, d) do { \
	x[a] = _mm256_add_epi32(x[a], x[b]); \
	x[d] = rot16_avx2(_mm256_xor_si256(x[d], x[a])); \
	x[c] = _mm256_add_epi32(x[c], x[d]); \
	x[b] = _mm256_xor_si256(x[b], x[c]); x[b] = ROTL_AVX2(x[b], 12); \
	x[a] = _mm256_add_epi32(x[a], x[b]); \
	x[d] = rot8_avx2(_mm256_xor_si256(x[d], x[a])); \
	x[c] = _mm256_add_epi32(x[c], x[d]); \
	x[b] = _mm256_xor_si256(x[b], x[c]); x[b] = ROTL_AVX2(x[b], 7); \
} while (0)

/* Write words v[0..7] (lane l of v[i] is word i of block l) to the first
 * or second half (off 0 or 32) of the eight 64-byte blocks at out. */
AVX2_FN static inline void
transpose_store_avx2(const __m256i v[8], unsigned char *out, size_t off)
{
	__m256i t[8], u[8];

	for (int i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
	}
	/* t[0]: words 0,1 of blocks 0,1 | 4,5; t[1]: of blocks 2,3 | 6,7;
	 * likewise t[2], t[3] for words 2,3. */
	for (int i = 0; i < 8; i += 4) {
		u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	/* u[k], k < 4: words 0-3 of block k (low half) and k + 4 (high
	 * half); u[4 + k]: words 4-7 of the same blocks. */
	for (int k = 0; k < 4; k++) {
		_mm256_storeu_si256((__m256i *)(void *)(out + 64 * k + off),
		    _mm256_permute2x128_si256(u[k], u[4 + k], 0x20));
		_mm256_storeu_si256((__m256i *)(void *)(out + 64 * (k + 4) + off),
		    _mm256_permute2x128_si256(u[k], u[4 + k], 0x31));
	}
}

AVX2_FN static void
chacha8_avx2(const uint32_t key[8], uint64_t block, uint32_t w14,
    uint32_t w15, unsigned char *out)
{
	__m256i x[16], in[16];
	uint32_t lo[8], hi[8];
	int i;

	for (i = 0; i < 4; i++)
		in[i] = _mm256_set1_epi32((int)sigma[i]);
	for (i = 0; i < 8; i++)
		in[4 + i] = _mm256_set1_epi32((int)key[i]);
	for (i = 0; i < 8; i++) {
		uint64_t b = block + (uint64_t)i;

		lo[i] = (uint32_t)b;
		hi[i] = (uint32_t)(b >> 32);
	}
	in[12] = _mm256_loadu_si256((const __m256i *)(const void *)lo);
	in[13] = _mm256_loadu_si256((const __m256i *)(const void *)hi);
	in[14] = _mm256_set1_epi32((int)w14);
	in[15] = _mm256_set1_epi32((int)w15);
	for (i = 0; i < 16; i++)
		x[i] = in[i];
	for (i = 0; i < 10; i++) {
		QR_AVX2(0, 4, 8, 12);
		QR_AVX2(1, 5, 9, 13);
		QR_AVX2(2, 6, 10, 14);
		QR_AVX2(3, 7, 11, 15);
		QR_AVX2(0, 5, 10, 15);
		QR_AVX2(1, 6, 11, 12);
		QR_AVX2(2, 7, 8, 13);
		QR_AVX2(3, 4, 9, 14);
	}
	for (i = 0; i < 16; i++)
		x[i] = _mm256_add_epi32(x[i], in[i]);
	transpose_store_avx2(x, out, 0);
	transpose_store_avx2(x + 8, out, 32);
}
#undef QR_AVX2
#undef ROTL_AVX2

/*
 * Sixteen consecutive blocks with AVX-512F, as chacha8_avx2 but with 16
 * lanes, native rotations and 32 registers (no spills).  The transpose
 * first treats each 128-bit chunk like the AVX2 code: chunk c of u[g][k]
 * holds words 4g..4g+3 of block 4c + k.  Block 4c + k is then chunk c of
 * u[0][k], ..., u[3][k], a 4x4 transpose of 128-bit chunks done with two
 * rounds of _mm512_shuffle_i32x4.
 */
#define AVX512_FN __attribute__((target("avx512f")))

#define QR_AVX512(a, b, c, d) do { \
	x[a] = _mm512_add_epi32(x[a], x[b]); \
	x[d] = _mm512_rol_epi32(_mm512_xor_si512(x[d], x[a]), 16); \
	x[c] = _mm512_add_epi32(x[c], x[d]); \
	x[b] = _mm512_rol_epi32(_mm512_xor_si512(x[b], x[c]), 12); \
	x[a] = _mm512_add_epi32(x[a], x[b]); \
	x[d] = _mm512_rol_epi32(_mm512_xor_si512(x[d], x[a]), 8); \
	x[c] = _mm512_add_epi32(x[c], x[d]); \
	x[b] = _mm512_rol_epi32(_mm512_xor_si512(x[b], x[c]), 7); \
} while (0)

AVX512_FN static void
chacha16_avx512(const uint32_t key[8], uint64_t block, uint32_t w14,
    uint32_t w15, unsigned char *out)
{
	__m512i x[16], in[16], u[4][4];
	uint32_t lo[16], hi[16];
	int i;

	for (i = 0; i < 4; i++)
		in[i] = _mm512_set1_epi32((int)sigma[i]);
	for (i = 0; i < 8; i++)
		in[4 + i] = _mm512_set1_epi32((int)key[i]);
	for (i = 0; i < 16; i++) {
		uint64_t b = block + (uint64_t)i;

		lo[i] = (uint32_t)b;
		hi[i] = (uint32_t)(b >> 32);
	}
	in[12] = _mm512_loadu_si512((const void *)lo);
	in[13] = _mm512_loadu_si512((const void *)hi);
	in[14] = _mm512_set1_epi32((int)w14);
	in[15] = _mm512_set1_epi32((int)w15);
	for (i = 0; i < 16; i++)
		x[i] = in[i];
	for (i = 0; i < 10; i++) {
		QR_AVX512(0, 4, 8, 12);
		QR_AVX512(1, 5, 9, 13);
		QR_AVX512(2, 6, 10, 14);
		QR_AVX512(3, 7, 11, 15);
		QR_AVX512(0, 5, 10, 15);
		QR_AVX512(1, 6, 11, 12);
		QR_AVX512(2, 7, 8, 13);
		QR_AVX512(3, 4, 9, 14);
	}
	for (i = 0; i < 16; i++)
		x[i] = _mm512_add_epi32(x[i], in[i]);
	for (int g = 0; g < 4; g++) {
		const __m512i *v = x + 4 * g;
		__m512i t0 = _mm512_unpacklo_epi32(v[0], v[1]);
		__m512i t1 = _mm512_unpackhi_epi32(v[0], v[1]);
		__m512i t2 = _mm512_unpacklo_epi32(v[2], v[3]);
		__m512i t3 = _mm512_unpackhi_epi32(v[2], v[3]);

		u[g][0] = _mm512_unpacklo_epi64(t0, t2);
		u[g][1] = _mm512_unpackhi_epi64(t0, t2);
		u[g][2] = _mm512_unpacklo_epi64(t1, t3);
		u[g][3] = _mm512_unpackhi_epi64(t1, t3);
	}
	for (int k = 0; k < 4; k++) {
		/* a = [u0.c0 u0.c1 u1.c0 u1.c1], b = [u0.c2 u0.c3 u1.c2 u1.c3],
		 * c and d likewise from u2, u3. */
		__m512i a = _mm512_shuffle_i32x4(u[0][k], u[1][k], 0x44);
		__m512i b = _mm512_shuffle_i32x4(u[0][k], u[1][k], 0xee);
		__m512i c = _mm512_shuffle_i32x4(u[2][k], u[3][k], 0x44);
		__m512i d = _mm512_shuffle_i32x4(u[2][k], u[3][k], 0xee);

		_mm512_storeu_si512((void *)(out + 64 * k),
		    _mm512_shuffle_i32x4(a, c, 0x88));
		_mm512_storeu_si512((void *)(out + 64 * (4 + k)),
		    _mm512_shuffle_i32x4(a, c, 0xdd));
		_mm512_storeu_si512((void *)(out + 64 * (8 + k)),
		    _mm512_shuffle_i32x4(b, d, 0x88));
		_mm512_storeu_si512((void *)(out + 64 * (12 + k)),
		    _mm512_shuffle_i32x4(b, d, 0xdd));
	}
}
#undef QR_AVX512

/* __builtin_cpu_supports also checks that the kernel saves the vector
 * registers (XCR0), not only the CPUID bits. */
static int
impl_supported(int impl)
{
	switch (impl) {
	case RNG_IMPL_PORTABLE:
		return 1;
	case RNG_IMPL_AVX2:
		return __builtin_cpu_supports("avx2") != 0;
	case RNG_IMPL_AVX512:
		return __builtin_cpu_supports("avx512f") != 0;
	default:
		return 0;
	}
}
#else
static int
impl_supported(int impl)
{
	return impl == RNG_IMPL_PORTABLE;
}
#endif

/* nblocks consecutive blocks from `block` with implementation impl,
 * nblocks a multiple of RNG_BLOCKS (16). */
static void
chacha_blocks(int impl, const uint32_t key[8], uint64_t block, uint32_t w14,
    uint32_t w15, unsigned char *out, size_t nblocks)
{
	for (size_t i = 0; i < nblocks; i += 16, block += 16, out += 1024) {
#if RNG_HAVE_X86
		if (impl == RNG_IMPL_AVX512) {
			chacha16_avx512(key, block, w14, w15, out);
			continue;
		}
		if (impl == RNG_IMPL_AVX2) {
			chacha8_avx2(key, block, w14, w15, out);
			chacha8_avx2(key, block + 8, w14, w15, out + 512);
			continue;
		}
#endif
		(void)impl;
		for (int j = 0; j < 16; j += RNG_LANES)
			chacha_lanes(key, block + (uint64_t)j, w14, w15,
			    out + 64 * j);
	}
}

static void
refill(struct rng *r)
{
	/* The 64-bit block counter cannot wrap: 2^64 blocks are 2^70 bytes. */
	chacha_blocks(r->impl, r->key, r->block, 0, 0, r->buf, RNG_BLOCKS);
	r->block += RNG_BLOCKS;
	r->pos = 0;
}

/* The fastest implementation this build and CPU support. */
static int
default_impl(void)
{
	int impl = RNG_IMPLS - 1;

	while (!impl_supported(impl))
		impl--;
	return impl;
}

/*
 * Test hooks (declared in tests/unit/test_rng.c, not in rng.h): they
 * force one implementation so that tests can compare them.
 *
 * rng_test_blocks writes nblocks (any number) consecutive blocks starting
 * at the 64-bit counter `block`, with w14 and w15 in words 14-15, using
 * impl (0 portable, 1 AVX2, 2 AVX-512).  rng_test_force makes handle r
 * use impl from its next refill on (a negative impl keeps the current
 * one), and when block is not UINT64_MAX also empties its buffer and
 * moves it to that block.  rng_test_blocks returns 0, rng_test_force the
 * implementation the handle used before the call; both return -1,
 * changing nothing, when impl is unknown or not supported by this build
 * and CPU.
 */

int
rng_test_blocks(int impl, const uint32_t key[8], uint64_t block,
    uint32_t w14, uint32_t w15, unsigned char *out, size_t nblocks)
{
	unsigned char tmp[RNG_BUF];

	if (!impl_supported(impl))
		return -1;
	while (nblocks > 0) {
		size_t k = nblocks < RNG_BLOCKS ? nblocks : RNG_BLOCKS;

		chacha_blocks(impl, key, block, w14, w15, tmp, RNG_BLOCKS);
		memcpy(out, tmp, 64 * k);
		out += 64 * k;
		block += k;
		nblocks -= k;
	}
	return 0;
}

int
rng_test_force(struct rng *r, int impl, uint64_t block)
{
	int prev = r->impl;

	if (impl >= 0 && !impl_supported(impl))
		return -1;
	if (impl >= 0)
		r->impl = impl;
	if (block != UINT64_MAX) {
		r->block = block;
		r->pos = RNG_BUF;
		r->nbits = 0;
	}
	return prev;
}

const char *
rng_strerror(int code)
{
	switch (code) {
	case RNG_OK:
		return "success";
	case RNG_E_ENTROPY:
		return "cannot get secure randomness from getrandom(2) or /dev/urandom";
	case RNG_E_NOMEM:
		return "out of memory";
	default:
		return "unknown rng error";
	}
}

int
rng_read_device(const char *path, void *buf, size_t n)
{
	unsigned char *p = buf;
	struct stat st;
	int fd, saved;

	do
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return RNG_E_ENTROPY;
	if (fstat(fd, &st) != 0)
		goto fail;
	if (!S_ISCHR(st.st_mode)) {
		/* A regular file or a FIFO planted at the path is not entropy. */
		errno = EINVAL;
		goto fail;
	}
	while (n > 0) {
		ssize_t got = read(fd, p, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO;
			goto fail;
		}
		p += got;
		n -= (size_t)got;
	}
	close(fd);
	return 0;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return RNG_E_ENTROPY;
}

/* getrandom(2) blocks until the kernel pool is initialised, which is what
 * we want; it returns at most 33554431 bytes per call and may be
 * interrupted, so loop. */
int
rng_entropy(void *buf, size_t n)
{
	unsigned char *p = buf;
	size_t left = n;

	while (left > 0) {
		ssize_t got = getrandom(p, left, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return rng_read_device("/dev/urandom", buf, n);
		p += got;
		left -= (size_t)got;
	}
	return 0;
}

int
rng_new(struct rng **out)
{
	unsigned char k[32];
	struct rng *r;

	*out = NULL;
	if (rng_entropy(k, sizeof k) != 0) {
		explicit_bzero(k, sizeof k);
		return RNG_E_ENTROPY;
	}
	if ((r = calloc(1, sizeof *r)) == NULL) {
		explicit_bzero(k, sizeof k);
		errno = ENOMEM;
		return RNG_E_NOMEM;
	}
	for (int i = 0; i < 8; i++)
		r->key[i] = load32(k + 4 * i);
	explicit_bzero(k, sizeof k);
	r->pos = RNG_BUF;
	r->impl = default_impl();
	*out = r;
	return 0;
}

int
rng_new_seeded(struct rng **out, uint64_t seed, const char *work_item)
{
	static const char label[16] = "privada/rng/v1\0";
	unsigned char k0[32] = { 0 }, blk[64];
	uint32_t key0[8], nonce[3];
	struct ts_xxh64 h;
	uint64_t d;
	struct rng *r;

	*out = NULL;
	if (work_item == NULL)
		work_item = "";
	for (int i = 0; i < 8; i++)
		k0[i] = (unsigned char)(seed >> (8 * i));
	memcpy(k0 + 8, label, sizeof label);
	for (int i = 0; i < 8; i++)
		key0[i] = load32(k0 + 4 * i);
	ts_xxh64_init(&h, 0);
	ts_xxh64_update(&h, work_item, strlen(work_item));
	d = ts_xxh64_final(&h);
	nonce[0] = 0;
	nonce[1] = (uint32_t)d;
	nonce[2] = (uint32_t)(d >> 32);
	rng_chacha20_block(key0, 0, nonce, blk);
	if ((r = calloc(1, sizeof *r)) == NULL) {
		errno = ENOMEM;
		return RNG_E_NOMEM;
	}
	for (int i = 0; i < 8; i++)
		r->key[i] = load32(blk + 4 * i);
	r->pos = RNG_BUF;
	r->seeded = 1;
	r->impl = default_impl();
	*out = r;
	return 0;
}

void
rng_free(struct rng *r)
{
	if (r == NULL)
		return;
	explicit_bzero(r, sizeof *r);
	free(r);
}

int
rng_is_seeded(const struct rng *r)
{
	return r->seeded;
}

/* rng_u64, inlined into the other draws of this file. */
static inline uint64_t
u64_draw(struct rng *r)
{
	uint64_t v;

	if (__builtin_expect(r->pos > RNG_BUF - 8, 0))
		refill(r);
	v = (uint64_t)load32(r->buf + r->pos) |
	    (uint64_t)load32(r->buf + r->pos + 4) << 32;
	r->pos += 8;
	return v;
}

uint64_t
rng_u64(struct rng *r)
{
	return u64_draw(r);
}

void
rng_bytes(struct rng *r, void *buf, size_t n)
{
	unsigned char *p = buf;

	while (n > 0) {
		size_t k;

		if (r->pos == RNG_BUF && n >= RNG_BUF) {
			/* Whole buffers go straight to the caller: the same
			 * bytes, and the buffer is left empty as if they had
			 * been copied out of it. */
			size_t nb = n / RNG_BUF;

			chacha_blocks(r->impl, r->key, r->block, 0, 0, p,
			    nb * RNG_BLOCKS);
			r->block += nb * RNG_BLOCKS;
			p += nb * RNG_BUF;
			n -= nb * RNG_BUF;
			continue;
		}
		if (r->pos == RNG_BUF)
			refill(r);
		k = RNG_BUF - r->pos;
		if (k > n)
			k = n;
		memcpy(p, r->buf + r->pos, k);
		r->pos += k;
		p += k;
		n -= k;
	}
}

/* rng_bits for 0 < k < 64, inlined into rng_uniform_below. */
static inline uint64_t
bits_draw(struct rng *r, unsigned k)
{
	uint64_t v;

	if (r->nbits < k) {
		/* Leftover bits are discarded: every bit handed out is still
		 * an independent uniform keystream bit. */
		r->bitbuf = u64_draw(r);
		r->nbits = 64;
	}
	v = r->bitbuf & ((UINT64_C(1) << k) - 1);
	r->bitbuf >>= k;
	r->nbits -= k;
	return v;
}

uint64_t
rng_bits(struct rng *r, unsigned k)
{
	if (k == 0)
		return 0;
	if (k >= 64)
		return u64_draw(r);
	return bits_draw(r, k);
}

/*
 * Lemire's multiply-and-reject ("Fast random integer generation in an
 * interval", 2019): for a uniform w-bit x, the high word of x*n is uniform
 * on [0, n) once draws whose low word falls below 2^w mod n are rejected,
 * since exactly floor(2^w / n) values of x then map to each result.
 */
uint64_t
rng_uniform_below(struct rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	if (n <= UINT64_C(1) << 32) {
		uint64_t m = bits_draw(r, 32) * n;
		uint32_t lo = (uint32_t)m;

		if (lo < n) {
			uint32_t t = (uint32_t)((UINT64_C(1) << 32) % n);

			while (lo < t) {
				m = bits_draw(r, 32) * n;
				lo = (uint32_t)m;
			}
		}
		return m >> 32;
	} else {
		__extension__ typedef unsigned __int128 u128;
		u128 m = (u128)u64_draw(r) * n;
		uint64_t lo = (uint64_t)m;

		if (lo < n) {
			uint64_t t = (0 - n) % n;

			while (lo < t) {
				m = (u128)u64_draw(r) * n;
				lo = (uint64_t)m;
			}
		}
		return (uint64_t)(m >> 64);
	}
}
