/*
 * Unit tests of lib/subspace: random partitions and PRIMA's forward
 * selection on covariances whose answers are known in closed form.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "subspace.h"
#include "tap.h"

#define D 12

int
main(void)
{
	size_t perm[D], sizes[D], nb, order[D];
	double cov[D * D];
	struct rng *r;
	int seen[D] = { 0 }, okp = 1;

	if (rng_new_seeded(&r, 5, "subspace") != 0)
		return 1;
	subspace_permute(r, D, perm);
	for (size_t i = 0; i < D; i++)
		okp &= perm[i] < D && !seen[perm[i]]++;
	ok(okp, "subspace_permute gives a permutation");
	rng_free(r);

	ok(subspace_equal_sizes(D, 5, sizes) == 0 && sizes[0] == 3 &&
	    sizes[1] == 3 && sizes[2] == 2 && sizes[3] == 2 && sizes[4] == 2,
	    "12 features in 5 blocks: 3 3 2 2 2");
	ok(subspace_equal_sizes(D, 13, sizes) == SUBSPACE_E_RANGE &&
	    subspace_equal_sizes(D, 0, sizes) == SUBSPACE_E_RANGE,
	    "more blocks than features, or none, is refused");
	{
		size_t idx[6] = { 5, 1, 3, 9, 0, 4 }, sz[2] = { 3, 3 };
		subspace_sort_blocks(idx, sz, 2);
		ok(idx[0] == 1 && idx[1] == 3 && idx[2] == 5 && idx[3] == 0 &&
		    idx[4] == 4 && idx[5] == 9, "each block is sorted on its own");
	}

	/* Independent unit-variance features: each explains exactly 1. */
	memset(cov, 0, sizeof cov);
	for (size_t i = 0; i < D; i++) {
		cov[i * D + i] = 1;
		order[i] = D - 1 - i;
	}
	ok(subspace_forward_select(D, cov, order, 0.999, 0, 0, sizes, &nb) ==
	    0 && nb == 1 && sizes[0] == D, "a gain above tau keeps one block");
	ok(subspace_forward_select(D, cov, order, 1.001, 0, 0, sizes, &nb) ==
	    0 && nb == D, "a gain below tau gives singletons");
	ok(subspace_forward_select(D, cov, order, 0.5, 0, 5, sizes, &nb) ==
	    0 && nb == 3 && sizes[0] == 5 && sizes[1] == 5 && sizes[2] == 2,
	    "maxk bounds the blocks");

	/* Two groups of 6 perfectly correlated features (rank 2), visited
	 * alternately: a block takes one of each group (the second explains
	 * the 6 variances of its group), then the next feature is in the
	 * span of the block, explains nothing and opens a new block. */
	for (size_t i = 0; i < D; i++)
		for (size_t j = 0; j < D; j++)
			cov[i * D + j] = (i < 6) == (j < 6) ? 1 : 0;
	for (size_t i = 0; i < D; i++)
		order[i] = i % 2 ? 6 + i / 2 : i / 2;	/* 0 6 1 7 2 8 ... */
	ok(subspace_forward_select(D, cov, order, 1, 0, 0, sizes, &nb) == 0 &&
	    nb == 6 && sizes[0] == 2 && sizes[5] == 2,
	    "features in the span of the block reduce nothing");
	ok(subspace_forward_select(D, cov, order, 5.5, 0, 0, sizes, &nb) == 0 &&
	    nb == 6 && sizes[3] == 2, "a gain of 6 passes tau = 5.5");
	ok(subspace_forward_select(D, cov, order, 6.5, 0, 0, sizes, &nb) == 0 &&
	    nb == D, "a gain of 6 fails tau = 6.5");
	cov[0] = NAN;
	ok(subspace_forward_select(D, cov, order, 1, 0, 0, sizes, &nb) ==
	    SUBSPACE_E_RANGE, "a non-finite covariance is refused");
	return tap_done();
}
