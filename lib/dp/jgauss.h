/*
 * jgauss.h: one Gaussian mechanism released in several parts, each part
 * with its own noise scale (covest: the second moments, the sum and the
 * count; gmm-fit: the counts, sums and second moments of every EM
 * iteration).
 *
 * Part p moves by at most delta2_p in L2 norm when one record is added or
 * removed (or replaced, with the caller's delta2), and each of its nent_p
 * values gets discrete Gaussian noise of standard deviation sigma_p on
 * the grid gamma_p = noise_grid(sigma_p) (noise_add_dgauss, covnoise),
 * which widens its sensitivity to sens_p = noise_sens_l2(delta2_p,
 * gamma_p, nent_p).  A record moves all parts at once, by v = (v_1, ...,
 * v_P); dividing part p by sigma_p makes the noise standard normal and
 * moves its mean by sqrt(sum_p ||v_p||^2 / sigma_p^2) <= mu with
 *   mu^2 = sum_p (sens_p / sigma_p)^2,
 * so the parts together are one Gaussian mechanism with noise multiplier
 * 1 / mu (its privacy loss depends on the shift in units of the noise
 * only), equivalently their RDP curves alpha (sens_p / sigma_p)^2 / 2
 * add up.  Part p gets the share w_p of mu^2: sigma_p is z sens_p /
 * sqrt(w_p) for the joint multiplier z, the grid included (a fixed point:
 * the grid depends on sigma_p).
 *
 * Curves here are at the default orders of rdp.h; `count` identical
 * releases compose to count times the curve.
 *
 * Ownership: the caller's arrays only.  Nothing here prints, exits or
 * reads the environment.
 */
#ifndef PRIVADA_JGAUSS_H
#define PRIVADA_JGAUSS_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

enum jgauss_error {
	JGAUSS_OK = PV_OK,
	JGAUSS_E_RANGE = PV_E_RANGE,	/* a part's noise or grid is out of range */
	JGAUSS_E_NOROOT = PV_E_NOROOT	/* no multiplier in range meets the target */
};

/* What a plan must meet. */
enum jgauss_target {
	JGAUSS_MU = 0,		/* mu z <= 1: the multiplier z is given */
	JGAUSS_RDP = 1		/* jgauss_rdp_eps(mu, delta, count) <= eps */
};

struct jgauss_part {
	double w;		/* in: share of mu^2 (weights sum to 1); 0:
				 * the part is not released */
	double delta2;		/* in: L2 sensitivity before the grid */
	uint64_t nent;		/* in: values noised */
	double sigma;		/* out: noise standard deviation */
	double grid;		/* out: rounding grid of the sampler */
	double sens;		/* out: sensitivity charged (delta2 + grid) */
};

/* The RDP curve of count compositions of the Gaussian mechanism with
 * mu = sensitivity / noise sd at the RDP_DEFAULT_NORDERS default orders:
 * rdp[i] = count * (orders[i] * mu * mu / 2). */
void jgauss_rdp_curve(double mu, double count, double *rdp);

/* A ledger entry's curve: e's orders set to the default ones and its rdp
 * to jgauss_rdp_curve(mu, count). */
struct ledger_entry;
void jgauss_entry_curve(struct ledger_entry *e, double mu, double count);

/* Epsilon at delta of that curve (RDP_CONV_IMPROVED), or NaN when it
 * cannot be converted (bad mu, count or delta). */
double jgauss_rdp_eps(double mu, double delta, double count);

/* The smallest noise multiplier z in [1e-3, 1e6] (bisection to a
 * relative width of 1e-12, returned on the private side) such that
 * jgauss_rdp_eps(1 / z, delta, count) <= eps.
 * @return 0, or JGAUSS_E_NOROOT when even z = 1e6 exceeds eps (*z is
 * then 1e6). */
int jgauss_calibrate_rdp(double eps, double delta, double count, double *z);

/* Set sigma, grid and sens of the np parts for the joint multiplier z,
 * inflating z by factors 1 + 1e-9 until the plan meets target (with eps,
 * delta and count for JGAUSS_RDP; ignored for JGAUSS_MU), so that the
 * recorded curve never exceeds what was asked for, rounding included.
 * *mu receives the plan's mu.  @return 0, or JGAUSS_E_RANGE with *bad the
 * first part whose grid underflows or sensitivity is not finite (or np
 * when the RDP curve cannot be converted: bad delta or count). */
int jgauss_plan(struct jgauss_part *p, size_t np, double z, int target,
    double eps, double delta, double count, double *mu, size_t *bad);

#endif
