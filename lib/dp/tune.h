/*
 * tune.h: private hyper-parameter tuning by repeat and select (Papernot
 * and Steinke, "Hyperparameter tuning with Renyi differential privacy",
 * ICLR 2022, arXiv:2110.03620v2).
 *
 * A mechanism Q (one trial: train with some configuration, score the
 * result with noise) is run K times, K drawn from a distribution that
 * does not depend on the data, and only the best trial's output is
 * released.  The RDP of the whole is Q's RDP plus an overhead that grows
 * with log E[K], not E[K] times Q's.  K's distributions:
 *   - Poisson(mu): K = 0 is possible (probability e^-mu), when nothing is
 *     released; Theorem 6: at order l, with Q (epsh, deltah)-DP for
 *     epsh = log(1 + 1/(l - 1)),
 *       eps'(l) = eps(l) + mu deltah + log(mu) / (l - 1);
 *   - the truncated negative binomial D(eta, gamma), eta > -1, 0 < gamma
 *     < 1, on k >= 1: P[K = k] = (1 - gamma)^k / (gamma^-eta - 1)
 *     prod_{j<k} (j + eta) / (j + 1) (eta = 1: the geometric
 *     distribution; eta = 0: the logarithmic one, P[K = k] = (1 -
 *     gamma)^k / (k log(1/gamma))); Theorem 2: at order l, for every order
 *     lh of the list,
 *       eps'(l) = eps(l) + (1 + eta) ((1 - 1/lh) eps(lh) + log(1/gamma)/lh)
 *                 + log(E[K]) / (l - 1),
 *     minimised over lh.
 * Both bounds then use that RDP is non-decreasing in the order: the
 * value at an order is the least bound at it or any larger order.  This
 * is what Google's dp_accounting computes for a RepeatAndSelectDpEvent
 * (rdp_privacy_accountant.py, _compute_rdp_repeat_and_select), with one
 * difference: gamma is solved from the mean to full double precision and
 * E[K] is then the mean of that gamma (dp_accounting keeps the requested
 * mean and a gamma 1e-9 below).
 *
 * Nothing here prints or exits; functions return 0 or a PV_E_* code.
 */
#ifndef PRIVADA_TUNE_H
#define PRIVADA_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "pverr.h"
#include "rng.h"

#define TUNE_MAX_MU 500.0	/* largest mean number of trials */
#define TUNE_MIN_ETA -0.5	/* negbin shapes below make K's tail
				 * too heavy to draw (see tune_sample) */
#define TUNE_MAX_ETA 1000.0

enum tune_kind { TUNE_POISSON = 1, TUNE_NEGBIN = 2 };

struct tune_dist {
	int kind;		/* enum tune_kind */
	double eta;		/* negbin: the shape (1 geometric, 0
				 * logarithmic) */
	double gamma;		/* negbin: the halting parameter */
	double mu;		/* E[K] (for negbin: the mean of gamma) */
};

/* The mean of the truncated negative binomial D(eta, gamma), or NaN for
 * parameters out of range. */
double tune_negbin_mean(double eta, double gamma);

/* Set d to Poisson(mu) (kind TUNE_POISSON, eta ignored) or to the
 * truncated negative binomial of shape eta whose mean is mu (gamma by
 * bisection to the last bit; d->mu is then the mean of that gamma).
 * 1 <= mu <= TUNE_MAX_MU; TUNE_MIN_ETA <= eta <= TUNE_MAX_ETA.
 * @return 0 or PV_E_RANGE. */
int tune_dist_set(struct tune_dist *d, int kind, double eta, double mu);

/* Parse "poisson:MU", "negbin:ETA:MU", "geometric:MU" (negbin:1:MU) or
 * "logarithmic:MU" (negbin:0:MU) into d.  @return 0, or PV_E_OPTION with
 * a message in err. */
int tune_dist_parse(const char *s, struct tune_dist *d, char *err,
    size_t errlen);

/* The canonical name of d ("poisson", "geometric", "logarithmic",
 * "negbin"). */
const char *tune_dist_name(const struct tune_dist *d);

/*
 * The RDP curve of repeat and select: out[i] bounds the RDP at orders[i]
 * of the best of K ~ d trials of a mechanism whose RDP curve is
 * rdp[0..n-1] at the same orders (rdp_check_orders; rdp >= 0, +inf
 * allowed).  out may not alias rdp.
 * @return 0, PV_E_RANGE (bad orders, rdp or d) or PV_E_NOMEM.
 */
int tune_rdp(const struct tune_dist *d, const double *orders,
    const double *rdp, size_t n, double *out);

/*
 * Draw K ~ d from r by inversion: a uniform U of 53 bits, then the
 * probabilities p(1), p(2), ... (p(0), ... for Poisson) by their
 * ratios (1 - gamma)(k + eta)/(k + 1), resp. mu/(k + 1), subtracted from
 * U until U < p(k).  Exact up to double rounding: the distribution drawn
 * differs from d by at most about 2^-53 per step of the walk in each
 * probability (the walk is E[K] + a few standard deviations long), and
 * the tail beyond the point where p(k) underflows (mass below 1e-300) is
 * never drawn.  The walk's length, and so the time, depends on K.
 * @return 0 with *k set, or PV_E_RANGE.
 */
int tune_sample(const struct tune_dist *d, struct rng *r, uint64_t *k);

/*
 * The RDP curve of one trial of DP-SGD tuning at the n orders: the
 * pointwise largest, over the nconf configurations a trial may draw, of
 * steps[c] subsampled Gaussian steps (q[c], noise multiplier sigma),
 * plus the Gaussian score with noise multiplier score_sigma (sensitivity
 * 1): alpha / (2 score_sigma^2).  A trial that draws its configuration
 * at random, independently of the data, is a mixture of mechanisms, and
 * the Renyi divergence of mixtures with common weights is at most the
 * largest of the parts'.  @return 0 or an RDP_E_* / PV_E_* code.
 */
int tune_trial_sgm(size_t nconf, const double *q, const uint64_t *steps,
    double sigma, double score_sigma, const double *orders, size_t n,
    double *out);

/*
 * The smallest noise multiplier sigma (one for every configuration) with
 * which the tuning of tune_trial_sgm under d costs at most target
 * epsilon at delta (the default orders, the improved conversion), by
 * bisection on log sigma over [1e-3, 1e6] to a relative width of 1e-10,
 * returned on the private side.  *eps receives the epsilon reached.
 * @return 0, PV_E_NOROOT (even sigma = 1e6 is over: the score's noise
 * alone may be), PV_E_RANGE or PV_E_NOMEM.
 */
int tune_solve_sigma(const struct tune_dist *d, size_t nconf,
    const double *q, const uint64_t *steps, double score_sigma,
    double delta, double target, double *sigma, double *eps);

#endif
