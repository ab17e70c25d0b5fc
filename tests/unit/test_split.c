/*
 * Unit tests of lib/format/split: part sizes against their definition,
 * the keyed permutation against an independent computation (XXH64 of 8
 * bytes written out from the algorithm's description, as
 * tests/data/tns/keyperm.py does, and a selection sort), and the split.*
 * keys split_mark writes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "split.h"
#include "tap.h"
#include "xxh64.h"

#define P1 UINT64_C(11400714785074694791)
#define P2 UINT64_C(14029467366897019727)
#define P3 UINT64_C(1609587929392839161)
#define P4 UINT64_C(9650029242287828579)
#define P5 UINT64_C(2870177450012600261)

static uint64_t
rotl(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

/* XXH64 of the 8 little-endian bytes of v (an input shorter than 32). */
static uint64_t
xxh64_u64(uint64_t v, uint64_t seed)
{
	uint64_t h = seed + P5 + 8;

	h ^= rotl(v * P2, 31) * P1;
	h = rotl(h, 27) * P1 + P4;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

/* The order by (key, index), by selection: quadratic and obvious. */
static void
brute_order(uint64_t n, uint64_t seed, uint64_t *out)
{
	char *used = calloc(n ? n : 1, 1);

	for (uint64_t k = 0; k < n; k++) {
		uint64_t best = UINT64_MAX;
		for (uint64_t i = 0; i < n; i++) {
			if (used[i])
				continue;
			if (best == UINT64_MAX || xxh64_u64(i, seed) <
			    xxh64_u64(best, seed))
				best = i;	/* ties keep the lower index */
		}
		used[best] = 1;
		out[k] = best;
	}
	free(used);
}

static int
is_perm(const uint64_t *p, uint64_t n)
{
	char *seen = calloc(n ? n : 1, 1);
	int okp = 1;

	for (uint64_t i = 0; i < n; i++) {
		if (p[i] >= n || seen[p[i]])
			okp = 0;
		else
			seen[p[i]] = 1;
	}
	free(seen);
	return okp;
}

int
main(void)
{
	static const uint64_t seeds[] = { 0, 1, 42, UINT64_MAX };
	uint64_t size[8], sum, *perm, want[300];
	struct ts_meta m = { 0 };
	const char *bad;
	int same;

	/* Equal parts: sizes differ by at most one, larger ones first. */
	split_sizes(10, 3, NULL, size);
	ok(size[0] == 4 && size[1] == 3 && size[2] == 3, "10 rows in 3 parts: "
	    "4 3 3");
	split_sizes(2, 4, NULL, size);
	ok(size[0] == 1 && size[1] == 1 && size[2] == 0 && size[3] == 0,
	    "2 rows in 4 parts: 1 1 0 0");
	/* Fractions: floor(f * rows), the last part the rest. */
	split_sizes(10, 3, (double[]){ 0.25, 0.25, 0.5 }, size);
	ok(size[0] == 2 && size[1] == 2 && size[2] == 6,
	    "fractions .25 .25 .5 of 10 rows: 2 2 6 (floors, rest last)");
	split_sizes(7, 2, (double[]){ 1.0, 1e-9 }, size);
	ok(size[0] == 7 && size[1] == 0, "a part never takes more than remain");
	for (uint64_t rows = 0; rows < 50; rows += 7) {
		split_sizes(rows, 3, (double[]){ 0.3, 0.3, 0.4 }, size);
		sum = size[0] + size[1] + size[2];
		ok(sum == rows, "fraction sizes of %llu rows sum to it",
		    (unsigned long long)rows);
	}

	/* The independent XXH64 agrees with the library's on 8 bytes. */
	{
		unsigned char b[8] = { 5, 0, 0, 0, 0, 0, 0, 0 };
		ok(ts_xxh64(b, 8, 42) == xxh64_u64(5, 42),
		    "XXH64 of 8 bytes written out equals ts_xxh64");
	}
	for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
		uint64_t n = s == 3 ? 300 : 37 + s;
		ok(split_permutation(n, seeds[s], &perm) == 0 &&
		    is_perm(perm, n), "seed %llu: a permutation of %llu rows",
		    (unsigned long long)seeds[s], (unsigned long long)n);
		brute_order(n, seeds[s], want);
		same = memcmp(perm, want, n * sizeof *perm) == 0;
		ok(same, "seed %llu: the order by key then index",
		    (unsigned long long)seeds[s]);
		free(perm);
	}
	ok(split_permutation(0, 1, &perm) == 0, "0 rows is fine");
	free(perm);
	{
		uint64_t *a, *b2;
		split_permutation(100, 7, &a);
		split_permutation(100, 8, &b2);
		ok(memcmp(a, b2, 100 * sizeof *a) != 0,
		    "another seed gives another order");
		free(a);
		free(b2);
	}

	/* split_mark: raw marks copied, the four split keys written. */
	ts_meta_set(&m, "dp.raw.iris", "row-local");
	ts_meta_set(&m, "data.name", "iris");
	ok(split_mark(&m, 2, 5, "seed", UINT64_C(0xab), UINT64_C(0x1234),
	    &bad) == 0, "split_mark succeeds");
	ok(ts_meta_get(&m, "split.raw.iris") != NULL &&
	    strcmp(ts_meta_get(&m, "split.raw.iris"), "row-local") == 0,
	    "dp.raw.iris is recorded as split.raw.iris");
	ok(strcmp(ts_meta_get(&m, "split.part"), "2/5") == 0 &&
	    strcmp(ts_meta_get(&m, "split.seed_source"), "seed") == 0 &&
	    strcmp(ts_meta_get(&m, "split.parent"), "00000000000000ab") == 0 &&
	    strcmp(ts_meta_get(&m, "split.id"), "0000000000001234") == 0,
	    "split.part, seed_source, parent and id (16 hex digits)");
	ok(ts_meta_get(&m, "split.raw.name") == NULL,
	    "keys outside dp.raw. are not copied");
	ts_meta_free(&m);
	{
		char key[TS_MAX_KEY + 1];
		memset(key, 'a', sizeof key - 1);
		memcpy(key, "dp.raw.", 7);
		key[TS_MAX_KEY - 1] = '\0';	/* 254 bytes: fits, split.raw. won't */
		ts_meta_set(&m, key, "row-local");
		ok(split_mark(&m, 0, 2, "seed", 1, 2, &bad) == PV_E_LIMIT &&
		    bad != NULL && strncmp(bad, "dp.raw.", 7) == 0,
		    "a raw key too long for split.raw is refused and named");
		ts_meta_free(&m);
	}
	{
		uint64_t p1, i1, p2, i2;
		ok(split_new_ids(&p1, &i1) == 0 && split_new_ids(&p2, &i2) == 0 &&
		    (p1 != p2 || i1 != i2), "fresh ids differ between calls");
	}
	return tap_done();
}
