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

/* Keystream blocks generated per refill.  Four blocks are computed side by
 * side so the compiler can keep them in vector registers. */
#define RNG_LANES 4
#define RNG_REFILLS 4
#define RNG_BUF (64 * RNG_LANES * RNG_REFILLS)

struct rng {
	uint32_t key[8];
	uint64_t block;		/* index of the next block to generate */
	size_t pos;		/* next unread byte of buf */
	uint64_t bitbuf;	/* unused bits of one draw, for rng_bits */
	unsigned nbits;
	int seeded;
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
 * result is the same as calling chacha_core on each block.
 */
static void
chacha_lanes(const uint32_t key[8], uint64_t block, unsigned char *out)
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
		in[14][l] = 0;
		in[15][l] = 0;
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

static void
refill(struct rng *r)
{
	/* The 64-bit block counter cannot wrap: 2^64 blocks are 2^70 bytes. */
	for (int i = 0; i < RNG_REFILLS; i++) {
		chacha_lanes(r->key, r->block, r->buf + 64 * RNG_LANES * i);
		r->block += RNG_LANES;
	}
	r->pos = 0;
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
static int
entropy(void *buf, size_t n)
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
	if (entropy(k, sizeof k) != 0) {
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

uint64_t
rng_u64(struct rng *r)
{
	uint64_t v;

	if (r->pos > RNG_BUF - 8)
		refill(r);
	v = (uint64_t)load32(r->buf + r->pos) |
	    (uint64_t)load32(r->buf + r->pos + 4) << 32;
	r->pos += 8;
	return v;
}

void
rng_bytes(struct rng *r, void *buf, size_t n)
{
	unsigned char *p = buf;

	while (n > 0) {
		size_t k;

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

uint64_t
rng_bits(struct rng *r, unsigned k)
{
	uint64_t v;

	if (k == 0)
		return 0;
	if (k >= 64)
		return rng_u64(r);
	if (r->nbits < k) {
		/* Leftover bits are discarded: every bit handed out is still
		 * an independent uniform keystream bit. */
		r->bitbuf = rng_u64(r);
		r->nbits = 64;
	}
	v = r->bitbuf & ((UINT64_C(1) << k) - 1);
	r->bitbuf >>= k;
	r->nbits -= k;
	return v;
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
		uint64_t m = rng_bits(r, 32) * n;
		uint32_t lo = (uint32_t)m;

		if (lo < n) {
			uint32_t t = (uint32_t)((UINT64_C(1) << 32) % n);

			while (lo < t) {
				m = rng_bits(r, 32) * n;
				lo = (uint32_t)m;
			}
		}
		return m >> 32;
	} else {
		__extension__ typedef unsigned __int128 u128;
		u128 m = (u128)rng_u64(r) * n;
		uint64_t lo = (uint64_t)m;

		if (lo < n) {
			uint64_t t = (0 - n) % n;

			while (lo < t) {
				m = (u128)rng_u64(r) * n;
				lo = (uint64_t)m;
			}
		}
		return (uint64_t)(m >> 64);
	}
}
