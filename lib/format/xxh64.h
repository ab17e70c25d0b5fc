/*
 * xxh64.h: the XXH64 hash (public algorithm by Yann Collet), streaming
 * and in one call: the input digests of prov.input.N.xxh64 and the
 * checks of the test vectors.  Nothing here allocates, prints or exits.
 */
#ifndef PRIVADA_XXH64_H
#define PRIVADA_XXH64_H

#include <stddef.h>
#include <stdint.h>

/* XXH64 (public algorithm by Yann Collet), streaming. */
struct ts_xxh64 {
	uint64_t v[4], total;
	unsigned char buf[32];
	size_t buflen;
	uint64_t seed;
};
void ts_xxh64_init(struct ts_xxh64 *s, uint64_t seed);
void ts_xxh64_update(struct ts_xxh64 *s, const void *p, size_t n);
uint64_t ts_xxh64_final(const struct ts_xxh64 *s);
/* XXH64 of the n bytes at p in one call. */
uint64_t ts_xxh64(const void *p, size_t n, uint64_t seed);

#endif
