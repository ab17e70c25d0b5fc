/*
 * subspace.h: feature subspaces for block-diagonal covariance estimates
 * (the random subspace ensemble of PRIMA, Wang et al., IJCAI 2021).
 *
 * The d features are split into disjoint blocks that cover them all.  A
 * partition is described by an index array idx[0..d-1] and block sizes
 * sizes[0..nb-1]: block i holds idx[o_i .. o_i + sizes[i] - 1], where o_i
 * is the sum of the sizes before it.
 *
 * Random partitions depend only on the random bits they are given, never
 * on data.  Forward selection (subspace_forward_select) reads a
 * covariance matrix: give it a released (noisy) covariance or one of
 * data declared public, never a private one.
 *
 * Ownership: every array is the caller's.  Nothing here prints, exits or
 * reads the environment.  Functions return 0 or a negative SUBSPACE_E_*.
 */
#ifndef PRIVADA_SUBSPACE_H
#define PRIVADA_SUBSPACE_H

#include "pverr.h"

#include <stddef.h>

#include "rng.h"

enum subspace_error {
	SUBSPACE_OK = PV_OK,
	SUBSPACE_E_RANGE = PV_E_RANGE,	/* an argument outside its domain */
	SUBSPACE_E_NOMEM = PV_E_NOMEM	/* out of memory */
};

/* A uniformly random permutation of 0..d-1 into perm (Fisher-Yates with
 * the exactly unbiased rng_uniform_below). */
void subspace_permute(struct rng *r, size_t d, size_t *perm);

/* Sizes of m near-equal blocks of d features: the first d mod m blocks
 * get floor(d/m) + 1, the others floor(d/m).  1 <= m <= d.
 * @return 0 or SUBSPACE_E_RANGE. */
int subspace_equal_sizes(size_t d, size_t m, size_t *sizes);

/* Sort the indices of each block ascending (blocks stay in their order). */
void subspace_sort_blocks(size_t *idx, const size_t *sizes, size_t nb);

/*
 * Forward selection of block sizes (PRIMA, section 4.2, criterion (3)),
 * read on a covariance matrix cov (d x d, row-major, symmetric; both
 * triangles are read).  The features are visited in the given order; each
 * block starts empty and takes the next feature f while
 *
 *     E(B + f) <= E(B),   E(B) = tr(cov - cov[:,B] cov[B,B]^-1 cov[B,:])
 *                                + |B| tau,
 *
 * i.e. while the reduction of the reconstruction error of all d features
 * from the span of the block's features (Farahat et al. 2013: the trace of
 * the residual covariance, the per-row mean of ||X - P_B X||_F^2) is at
 * least the growth tau of the noise error; the first feature of a block is
 * always taken, and a block is closed at maxk features (0: no bound).
 * The reduction for f is ||r||^2 / r_ff, r the column f of the residual
 * covariance, kept through a partial Cholesky factor of cov[B,B] (one
 * matrix-vector product per candidate, no n x n projection).  A feature
 * whose residual variance r_ff is at most max(floor, 1e-12 max_j cov_jj)
 * reduces nothing: it is (numerically) in the span of the block, or, on a
 * noisy covariance with floor set to the noise level, its residual
 * variance is not evidence of anything (a non-positive one means cov is
 * not PSD there).
 * @param tau    the noise error of one more feature, >= 0 and finite
 * @param floor  residual variances up to floor count as 0, >= 0
 * @param sizes  out: block sizes (up to d entries), in visiting order
 * @param nb     out: the number of blocks
 * @return 0, SUBSPACE_E_RANGE (bad tau or floor, d == 0, a non-finite cov
 *         entry),
 *         or SUBSPACE_E_NOMEM.
 */
int subspace_forward_select(size_t d, const double *cov, const size_t *order,
    double tau, double floor, size_t maxk, size_t *sizes, size_t *nb);

#endif
