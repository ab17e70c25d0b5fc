/*
 * covnoise.h: the exact discrete Gaussian noise of noise_add_dgauss
 * (noise.h) in two steps, drawn before the values it is added to exist.
 *
 * noise_add_dgauss(r, x, n, sigma, 0) rounds each x_i to the grid
 * gamma = noise_grid(sigma) and adds k_i ~ N_Z(0, S^2) grid steps,
 * S = ceil(sigma / gamma).  Rounding consumes no randomness, so drawing
 * every k_i first (covnoise_draw) and applying them later
 * (covnoise_apply) gives exactly the same output for the same generator.
 * The draws do not depend on the data: a tool can draw them while it is
 * still reading its input, which is the point.  Accounting is that of
 * noise_add_dgauss: charge noise_sens_l2(delta2, gamma, n).
 *
 * Ownership: every array is the caller's; a struct rng is not
 * thread-safe, so one thread per generator.  Nothing here prints, exits or
 * reads the environment.  Functions return 0 or a negative NOISE_E_* code
 * (noise.h), which depends on the random draws and the parameters only.
 */
#ifndef PRIVADA_COVNOISE_H
#define PRIVADA_COVNOISE_H

#include <stddef.h>
#include <stdint.h>

#include "noise_fast.h"
#include "rng.h"

/* Draw the integer noise of n values of scale sigma into k[0..n-1], in
 * the order noise_add_dgauss draws it.  @return 0, NOISE_E_RANGE (sigma
 * not finite and positive, or its grid underflows), NOISE_E_NOMEM or
 * NOISE_E_OVERFLOW. */
int covnoise_draw(struct rng *r, double sigma, int64_t *k, size_t n);

/* The same integer noise from the fast sampler: h from
 * noise_fast_new_grid(&h, sigma) has the grid gamma = noise_grid(sigma)
 * and the scale S = ceil(sigma / gamma) of covnoise_draw, so the k_i are
 * grid steps within total variation noise_fast_tv(h) each of those of
 * covnoise_draw, and covnoise_apply adds them unchanged.  *tv (required)
 * is increased by n noise_fast_tv(h), rounded up; the release must charge
 * it on delta (noise_fast.h).  @return 0 or NOISE_E_RANGE (a handle
 * without a grid, tv NULL). */
int covnoise_draw_fast(const struct noise_fast *h, struct rng *r,
    int64_t *k, size_t n, double *tv);

/* x_i <- (round(x_i / gamma) + k_i) gamma, rounding to nearest, ties to
 * even, gamma = noise_grid(sigma).  Each x_i is first clamped to +-2^61
 * grid steps, so that no value of the data can make this fail; clamping
 * moves two values no further apart, so it never widens the sensitivity.
 * @return 0, NOISE_E_RANGE (bad sigma, a NaN x_i) or NOISE_E_OVERFLOW
 * (|k_i| near 2^62: impossible for draws of covnoise_draw). */
int covnoise_apply(double *x, size_t n, double sigma, const int64_t *k);

#endif
