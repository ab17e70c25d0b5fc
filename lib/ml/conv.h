/*
 * conv.h: the image layers of lib/ml/nn.h: 2-D convolution, average and
 * max pooling, on examples stored as rows of H x W x C floats, channel
 * last (the value of channel c at row y, column x is at (y W + x) C + c;
 * a one-channel image is its pixels in row-major order).  A layer's output
 * is again H' x W' x C', so a dense layer after it reads the volume
 * flattened (the row as stored).
 *
 * Convolution (cross-correlation, as in every deep learning library) of
 * kernel k, stride s, zero padding p, c -> co channels:
 *   H' = (H + 2p - k) / s + 1 (floor), W' likewise,  T = H' W' positions,
 *   z[t, o] = b[o] + sum over (ky, kx, ci) of x[y, x, ci] W[(ky k + kx) c + ci, o]
 * with y = ty s - p + ky, x = tx s - p + kx (0 outside the image).  W is
 * the kd x co matrix (kd = k k c) of the parameter layout, so with the
 * unfolded input A (im2col: one row of kd values per position, n T rows)
 * the layer is the GEMM Z = A W, and its gradient A^T G.
 *
 * Pooling of size k takes k x k windows at stride s (default k; no
 * padding; rows and columns beyond the last whole window are dropped),
 * channel by channel:
 * their mean (average pooling) or maximum (max pooling; the gradient goes
 * to the first maximal element of the window).  Pool layers have no
 * parameters.
 *
 * Nothing here prints, exits or allocates.
 */
#ifndef PRIVADA_CONV_H
#define PRIVADA_CONV_H

#include <stddef.h>
#include <stdint.h>

#define CONV_MAX_DIM 4096		/* most rows, columns, channels, k */

struct conv_geom {
	size_t h, w, c;			/* input */
	size_t k, s, p;			/* kernel or window, stride, padding */
	size_t ho, wo, co;		/* output */
};

/* Fill g for a convolution (pool 0) or a pool of window k (pool 1: s =
 * k when s is 0, p = 0, co = c).  @return 0, or -1 when a size is 0 or above
 * CONV_MAX_DIM, p >= k, or the window does not fit (H + 2p < k). */
int conv_geom_init(struct conv_geom *g, size_t h, size_t w, size_t c,
    size_t k, size_t s, size_t p, size_t co, int pool);

/* Positions T = ho wo, unfolded width kd = k k c, inputs h w c, outputs
 * T co of one example. */
size_t conv_positions(const struct conv_geom *g);
size_t conv_kd(const struct conv_geom *g);

/* Unfold the n examples x (n x h w c) into col (n T x kd). */
void conv_im2col(const struct conv_geom *g, const float *x, size_t n,
    float *col);
/* Fold back: x (n x h w c) = the sum of col's entries onto the inputs they
 * were copied from (the adjoint of conv_im2col). */
void conv_col2im(const struct conv_geom *g, const float *col, size_t n,
    float *x);

/* The squared Frobenius norm of one example's unfolded input (the T x kd
 * rows conv_im2col makes of x, h w c values) without unfolding it: each
 * pixel appears in r(y) c(x) patches, r and c the counts of kernel rows
 * and columns over it, so the norm is the sum over pixels of r(y) c(x)
 * x^2 (in double: exact squares, their row sums times the counts; pixels
 * no patch covers are left out, as in the unfolding). */
double conv_unfold_sqnorm(const struct conv_geom *g, const float *x);

/* Pooling forward: y (n x ho wo c) from x; max pooling also stores in
 * arg (n x ho wo c) the index in its example's row of x of each maximum
 * (the first, in window order; NULL for average pooling).  Backward: gx
 * (n x h w c) = the gradient of gy through it (arg as the forward left
 * it). */
void conv_pool_fwd(const struct conv_geom *g, int max, const float *x,
    size_t n, float *y, uint32_t *arg);
void conv_pool_bwd(const struct conv_geom *g, int max, const uint32_t *arg,
    const float *gy, size_t n, float *gx);

/*
 * Group normalisation (Wu and He 2018), per example, so it does not
 * couple the examples of a batch (BatchNorm would: it is not allowed under
 * DP): the c channels are cut into G = g->k groups of c / G consecutive
 * channels; each example's group of h w c / G values is standardised with
 * its own mean and variance (+ CONV_GN_EPS), then channel j is scaled by
 * gamma[j] and shifted by beta[j].  g->h, w, c are the input, ho, wo, co
 * the same.  xhat (n x h w c) and rstd (n x G) keep what backward needs.
 */
#define CONV_GN_EPS 1e-5
void conv_gn_fwd(const struct conv_geom *g, const float *x, size_t n,
    const float *gamma, const float *beta, float *y, float *xhat,
    float *rstd);
/* gx (n x h w c) = the gradient of gy through it. */
void conv_gn_bwd(const struct conv_geom *g, const float *xhat,
    const float *rstd, const float *gamma, const float *gy, size_t n,
    float *gx);
/* One example's gradients of gamma and beta (c each, in double) from its
 * xhat and gy. */
void conv_gn_pgrad(const struct conv_geom *g, const float *xhat,
    const float *gy, double *dgamma, double *dbeta);

#endif
