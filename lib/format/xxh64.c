/*
 * xxh64.c: the XXH64 hash (algorithm by Yann Collet, specified in
 * xxhash_spec.md of the xxHash project), used for input digests in prov.
 * Written from the specification; tested against its published values.
 */
#include <endian.h>
#include <string.h>

#include "xxh64.h"

#define P1 UINT64_C(0x9E3779B185EBCA87)
#define P2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define P3 UINT64_C(0x165667B19E3779F9)
#define P4 UINT64_C(0x85EBCA77C2B2AE63)
#define P5 UINT64_C(0x27D4EB2F165667C5)

static uint64_t
rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* A little-endian 64-bit word (one load where the host is little-endian,
 * the same value either way). */
static uint64_t
rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return le64toh(v);
}

static uint32_t
rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
round1(uint64_t acc, uint64_t lane)
{
	acc += lane * P2;
	acc = rotl(acc, 31);
	return acc * P1;
}

static uint64_t
merge(uint64_t acc, uint64_t v)
{
	acc ^= round1(0, v);
	return acc * P1 + P4;
}

void
ts_xxh64_init(struct ts_xxh64 *s, uint64_t seed)
{
	memset(s, 0, sizeof *s);
	s->seed = seed;
	s->v[0] = seed + P1 + P2;
	s->v[1] = seed + P2;
	s->v[2] = seed;
	s->v[3] = seed - P1;
}

static void
stripe(uint64_t *v, const unsigned char *p)
{
	for (int i = 0; i < 4; i++)
		v[i] = round1(v[i], rd64(p + 8 * i));
}

void
ts_xxh64_update(struct ts_xxh64 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->total += n;
	if (s->buflen + n < 32) {
		memcpy(s->buf + s->buflen, p, n);
		s->buflen += n;
		return;
	}
	if (s->buflen) {
		size_t k = 32 - s->buflen;
		memcpy(s->buf + s->buflen, p, k);
		stripe(s->v, s->buf);
		p += k;
		n -= k;
		s->buflen = 0;
	}
	if (n >= 32) {
		/* The accumulators in registers over the whole run. */
		uint64_t v0 = s->v[0], v1 = s->v[1], v2 = s->v[2],
		    v3 = s->v[3];

		do {
			v0 = round1(v0, rd64(p));
			v1 = round1(v1, rd64(p + 8));
			v2 = round1(v2, rd64(p + 16));
			v3 = round1(v3, rd64(p + 24));
			p += 32;
			n -= 32;
		} while (n >= 32);
		s->v[0] = v0;
		s->v[1] = v1;
		s->v[2] = v2;
		s->v[3] = v3;
	}
	memcpy(s->buf, p, n);
	s->buflen = n;
}

uint64_t
ts_xxh64_final(const struct ts_xxh64 *s)
{
	const unsigned char *p = s->buf, *end = s->buf + s->buflen;
	uint64_t h;

	if (s->total >= 32) {
		const uint64_t *v = s->v;
		h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18);
		for (int i = 0; i < 4; i++)
			h = merge(h, v[i]);
	} else {
		h = s->seed + P5;
	}
	h += s->total;
	while (end - p >= 8) {
		h ^= round1(0, rd64(p));
		h = rotl(h, 27) * P1 + P4;
		p += 8;
	}
	if (end - p >= 4) {
		h ^= (uint64_t)rd32(p) * P1;
		h = rotl(h, 23) * P2 + P3;
		p += 4;
	}
	while (p < end) {
		h ^= (*p++) * P5;
		h = rotl(h, 11) * P1;
	}
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}
