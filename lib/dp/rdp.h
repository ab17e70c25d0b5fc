/*
 * rdp.h: Renyi differential privacy (RDP) accounting.
 *
 * RDP curves of the mechanisms privada uses (the Poisson-subsampled
 * Gaussian of DP-SGD, the Gaussian and Laplace mechanisms, the PATE
 * aggregators), their composition, and the conversions to (epsilon, delta)
 * and back, plus the analytic Gaussian mechanism (Balle and Wang 2018),
 * which is not an RDP bound but an exact (epsilon, delta) curve.
 *
 * Conventions.  Neighbouring datasets differ by adding or removing one
 * record.  A Gaussian "sigma" is the noise multiplier: the standard
 * deviation of the noise divided by the L2 sensitivity.  A Laplace "b" is
 * the scale divided by the L1 sensitivity.  An "order" alpha is a finite
 * real > 1 and at most RDP_MAX_ALPHA.  RDP values are in nats.
 *
 * Ownership: every array is the caller's; functions only read their inputs
 * and write their outputs.  An accountant (struct rdp_acct) is an opaque
 * handle from rdp_acct_new, released with rdp_acct_free (which accepts
 * NULL); it copies the order list it is given.  Nothing here prints,
 * exits, reads the environment or keeps hidden state: all functions are
 * safe to call from several threads.
 *
 * Errors are negative RDP_E_* values (pinned: never renumbered), named by
 * rdp_strerror.  On error the outputs are left unspecified.
 */
#ifndef PRIVADA_RDP_H
#define PRIVADA_RDP_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

enum rdp_error {
	RDP_OK = PV_OK,
	RDP_E_PARAM = PV_E_RANGE,	/* an argument is out of its documented range */
	RDP_E_NOMEM = PV_E_NOMEM,	/* out of memory */
	RDP_E_NUMERIC = PV_E_NUMERIC,	/* a computation did not converge (a bug) */
	RDP_E_NOROOT = PV_E_NOROOT	/* an inverse query has no solution in range */
};

/* RDP -> (epsilon, delta) conversions. */
enum rdp_conv {
	/* Balle et al. 2020 Thm. 21 / Canonne, Kamath, Steinke 2020 Prop. 12,
	 * exactly as Google's dp_accounting compute_epsilon: for each order
	 * eps = rdp + log1p(-1/a) - log(delta*a)/(a-1) when a > 1.01 (else
	 * infinity); 0 when delta^2 + expm1(-rdp) > 0 (the KL bound); the
	 * minimising order is reported and eps is clamped at 0.  Default. */
	RDP_CONV_IMPROVED = 0,
	/* Mironov 2017 Prop. 3: eps = rdp + log(1/delta)/(a-1). */
	RDP_CONV_CLASSIC = 1
};

#define RDP_MAX_ALPHA 65536.0	/* largest order accepted */
#define RDP_MAX_ORDERS 65536	/* longest order list accepted */
#define RDP_DEFAULT_NORDERS 156	/* entries of rdp_default_orders */

/* Name of an error code, e.g. "argument out of range". */
const char *rdp_strerror(int code);

/* ---- order lists ---- */

/* dp_accounting's DEFAULT_RDP_ORDERS, bit for bit: 1 + x/10.0 for
 * x = 1..99, then 11, 12, ..., 63, 128, 256, 512, 1024.  Static storage;
 * *n (if n is not NULL) receives RDP_DEFAULT_NORDERS. */
const double *rdp_default_orders(size_t *n);

/* Validate an order list: 1 <= n <= RDP_MAX_ORDERS, every order finite,
 * > 1 and <= RDP_MAX_ALPHA.  @return NULL if valid, else a static
 * message naming the problem. */
const char *rdp_check_orders(const double *orders, size_t n);

/* ---- RDP curves of single mechanisms ---- */

/*
 * RDP of one step of the Poisson-subsampled Gaussian mechanism (sampling
 * probability q, noise multiplier sigma) at each of the n orders
 * (Mironov, Talwar, Zhang 2019).  Integer orders use the exact finite
 * binomial sum (relative error about 1e-14); fractional orders the
 * two-sided series with erfc terms, summed in log space with its
 * alternating tail accelerated (about 1e-13 for sigma <= 8; the series
 * cancels like sigma^2, so about 3e-10 at sigma = 300).  q = 0 gives 0
 * and q = 1 gives a/(2 sigma^2).  One call shares work between its
 * orders: prefer it to repeated rdp_sgm1 calls.
 * @param q      sampling probability, 0 <= q <= 1
 * @param sigma  noise multiplier, finite, > 0
 * @param orders n orders (rdp_check_orders)
 * @param rdp    out: n values (may be +inf only if the true value overflows)
 * @return 0, RDP_E_PARAM, or RDP_E_NUMERIC.
 */
int rdp_sgm(double q, double sigma, const double *orders, size_t n,
    double *rdp);

/* The same at a single order alpha; *rdp receives the value. */
int rdp_sgm1(double q, double sigma, double alpha, double *rdp);

/* RDP of the Gaussian mechanism with noise multiplier sigma at order
 * alpha: alpha / (2 sigma^2).  No checks (NaN in, NaN out). */
double rdp_gaussian(double alpha, double sigma);

/* RDP of the Laplace mechanism with b = scale / L1 sensitivity at order
 * alpha > 1 (Mironov 2017 Prop. 6):
 * log(a/(2a-1) e^((a-1)/b) + (a-1)/(2a-1) e^(-a/b)) / (a-1),
 * evaluated without cancellation.  NaN if alpha <= 1 or b <= 0. */
double rdp_laplace(double alpha, double b);

/* RDP at order alpha implied by pure eps-DP: min(eps, alpha eps^2 / 2)
 * (Bun and Steinke 2016: eps-DP implies eps^2/2-zCDP). */
double rdp_pure(double alpha, double eps);

/* ---- conversions ---- */

/*
 * Smallest epsilon at which the RDP curve rdp[0..n-1] (at orders[]) gives
 * (epsilon, delta)-DP, under conversion conv; *order receives the
 * minimising order (the first one on ties), or 0 when delta is 0.
 * delta = 0 gives epsilon 0 if every rdp is 0, else +inf.  Orders whose
 * rdp is +inf are skipped (epsilon +inf if all are).
 * @param delta  0 <= delta <= 1
 * @param order  may be NULL
 * @return 0 or RDP_E_PARAM (bad orders, negative or NaN rdp, bad delta,
 *         unknown conv).
 */
int rdp_to_epsilon(const double *orders, const double *rdp, size_t n,
    double delta, int conv, double *eps, double *order);

/*
 * Smallest delta at which the RDP curve gives (eps, delta)-DP.  Improved:
 * per order min(sqrt(1 - exp(-rdp)) (KL), exp((a-1)(rdp - eps +
 * log1p(-1/a)) - log a) for a > 1.01); classic: exp((a-1)(rdp - eps)).
 * The result is clamped at 1.  *order as in rdp_to_epsilon.
 * @param eps  >= 0, finite
 * @return 0 or RDP_E_PARAM.
 */
int rdp_to_delta(const double *orders, const double *rdp, size_t n,
    double eps, int conv, double *delta, double *order);

/* ---- the subsampled Gaussian: epsilon and inverse queries ---- */

/*
 * Epsilon of `steps` compositions of the subsampled Gaussian (q, sigma)
 * at delta over the given orders (NULL and 0: the default orders).
 * @return 0, RDP_E_PARAM or RDP_E_NOMEM (more than 1024 orders allocate).
 */
int rdp_sgm_epsilon(double q, double sigma, uint64_t steps, double delta,
    const double *orders, size_t n, int conv, double *eps, double *order);

/*
 * The smallest x in [lo, hi] (0 < lo < hi) with f(x) <= target, for an f
 * that does not increase with x (epsilon as a function of a noise
 * multiplier), by bisection on log x (geometric midpoints) to a relative
 * width of 1e-12, returned on the private side: f(*x) <= target.  f
 * stores its value and returns 0 or an error code, which is passed on.
 * Every noise-multiplier solver (rdp_sgm_solve_sigma, rdp-account store
 * solve, dpsgd-train --tune) uses this one search.
 * @return 0 (*x = lo when f(lo) <= target already); RDP_E_NOROOT if
 *         f(hi) > target; f's error code.
 */
int rdp_solve_decreasing(double lo, double hi, double target,
    int (*f)(double x, void *arg, double *val), void *arg, double *x);

/*
 * Smallest noise multiplier sigma with eps(q, sigma, steps, delta) <=
 * target, found by bisection to a relative width of 1e-12 and returned on
 * the private side (the returned sigma satisfies the target).  The search
 * covers 1e-3 <= sigma <= 1e6.
 * @return 0; RDP_E_NOROOT if even sigma = 1e6 exceeds the target;
 *         RDP_E_PARAM, RDP_E_NOMEM.  If sigma = 1e-3 already satisfies
 *         the target, *sigma = 1e-3.
 */
int rdp_sgm_solve_sigma(double q, uint64_t steps, double delta,
    double target, const double *orders, size_t n, int conv, double *sigma);

/*
 * Largest number of steps T with eps(q, sigma, T, delta) <= target
 * (0 if one step already exceeds it; UINT64_MAX if T would be 2^63 or
 * more, or unbounded, e.g. q = 0).  Exact: solved per order in closed
 * form, then settled with the epsilon function itself.
 * @return 0, RDP_E_PARAM or RDP_E_NOMEM.
 */
int rdp_sgm_solve_steps(double q, double sigma, double delta, double target,
    const double *orders, size_t n, int conv, uint64_t *steps);

/*
 * Largest sampling probability q with eps(q, sigma, steps, delta) <=
 * target, by bisection on log q over [1e-12, 1] to a relative width of
 * 1e-12, returned on the private side.  *q = 1 if q = 1 satisfies the
 * target.  @return 0; RDP_E_NOROOT if even q = 1e-12 exceeds it;
 * RDP_E_PARAM, RDP_E_NOMEM.
 */
int rdp_sgm_solve_q(double sigma, uint64_t steps, double delta,
    double target, const double *orders, size_t n, int conv, double *q);

/* ---- the Gaussian mechanism without RDP (Balle and Wang 2018) ---- */

/* Exact delta of the Gaussian mechanism with noise multiplier sigma at
 * eps >= 0: Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s), computed in
 * log space.  @return 0 or RDP_E_PARAM. */
int rdp_agm_delta(double sigma, double eps, double *delta);

/* Smallest eps >= 0 with rdp_agm_delta(sigma, eps) <= delta (0 if delta
 * is already met at eps = 0), to full double precision.
 * @param delta  0 < delta < 1
 * @return 0, RDP_E_PARAM, or RDP_E_NOROOT (eps would exceed 1e6). */
int rdp_agm_epsilon(double sigma, double delta, double *eps);

/* Smallest noise multiplier sigma giving (eps, delta)-DP exactly, to full
 * double precision (bisection on log sigma).
 * @param eps  > 0, finite; delta: 0 < delta < 1
 * @return 0, RDP_E_PARAM, or RDP_E_NOROOT (sigma outside [1e-6, 1e9]). */
int rdp_agm_sigma(double eps, double delta, double *sigma);

/* The classic calibration sqrt(2 log(1.25/delta)) / eps (Dwork and Roth
 * Thm. A.1), a valid (eps, delta) guarantee only for eps < 1.
 * NaN for eps <= 0 or delta outside (0, 1). */
double rdp_gaussian_sigma_classic(double eps, double delta);

/* ---- PATE (Papernot et al. 2017, 2018) ----
 * counts[0..k-1] is a vote histogram (k >= 2, counts >= 0, finite); its
 * argmax is the first maximal index. */

/* PATE 2018 Prop. 7 (and PATE 2017's compute_q_noisy_max): upper bound on
 * log Pr[LNMax answer != argmax] with Laplace scale lambda (gamma =
 * 1/lambda): log sum over j != i* of (2 + g_j)/4 exp(-g_j), g_j =
 * (c_i* - c_j)/lambda, capped at log(1 - 1/k).  NaN on bad arguments. */
double rdp_pate_logq_laplace(const double *counts, size_t k, double lambda);

/* Union bound on log Pr[GNMax answer != argmax] with Gaussian sigma:
 * log sum over j != i* of Phi_c((c_i* - c_j) / (sqrt(2) sigma)), capped at
 * log(1 - 1/k).  NaN on bad arguments. */
double rdp_pate_logq_gaussian(const double *counts, size_t k, double sigma);

/* log Pr[max(counts) + N(0, sigma^2) >= t] (the confident-GNMax
 * threshold check answers).  NaN on bad arguments. */
double rdp_pate_logpr_answered(const double *counts, size_t k, double t,
    double sigma);

/* Data-independent RDP per query: LNMax is pure (2/lambda)-DP, so
 * rdp_pure(alpha, 2/lambda); GNMax has L2 sensitivity sqrt(2):
 * alpha / sigma^2. */
double rdp_pate_lnmax(double alpha, double lambda);
double rdp_pate_gnmax(double alpha, double sigma);

/*
 * Data-dependent RDP of GNMax at order alpha given logq = log of an upper
 * bound on Pr[answer != argmax] (Papernot et al. 2018 Thm. 6 with the
 * mu1, mu2 of Prop. 10): used where its conditions hold (mu1 > alpha,
 * mu2 > 1, q small enough), else the data-independent alpha/sigma^2, and
 * never above it.  This value depends on the data: releasing it (or an
 * epsilon computed from it) is not private without the smooth-sensitivity
 * release of Papernot et al. 2018.
 */
double rdp_pate_gnmax_dep(double alpha, double logq, double sigma);

/* Data-dependent RDP at order alpha of a pure eps-DP mechanism whose
 * outcome differs from the argmax with probability exp(logq) (Papernot et
 * al. 2018 Prop. 8), never above rdp_pure(alpha, eps).  Same caveat. */
double rdp_pate_pure_dep(double alpha, double logq, double eps);

/* Data-dependent RDP of the confident-GNMax threshold step with
 * log answer probability logpr and threshold noise sigma1:
 * rdp_pate_gnmax_dep(alpha, min(logpr, log(1-exp(logpr))), sqrt(2)
 * sigma1).  Its data-independent bound is alpha/(2 sigma1^2). */
double rdp_pate_threshold_dep(double alpha, double logpr, double sigma1);

/* ---- PATE smooth sensitivity (Papernot et al. 2018, Appendix B.4, C) ----
 * The data-dependent RDP of GNMax at order alpha, as a function of the
 * histogram, has a local sensitivity that the paper bounds at every
 * distance d from the histogram (Algorithms 3 to 5, Prop. 13), and so a
 * smooth sensitivity SS_beta = max_d e^(-beta d) LS(d) that makes the
 * value releasable with Gaussian noise scaled by SS_beta (the GNSS
 * mechanism, Thm. 23).  Distances count teachers whose vote changes
 * (replace-one neighbours of a histogram of n teachers).  The bound on
 * the answer's error used throughout is rdp_pate_logq_gaussian, and the
 * RDP as a function of log q is rdp_pate_gnmax_dep. */

/* log q0: above it the bound of GNMax is taken as the data-independent
 * alpha/sigma^2 (the paper's compute_logq0_gnmax): min(-(1 + 1/sigma)^2,
 * -((alpha - .99)/sigma)^2, -1/sigma^2) if the data-dependent bound is
 * already below alpha/sigma^2 there, else the point where it reaches it
 * (bisection).  NaN if no log q >= -1e5 has a bound below it. */
double rdp_pate_gnmax_logq0(double alpha, double sigma);

/* Union bound on log Pr[GNMax answer != argmax] when the noise is the
 * discrete Gaussian N_Z(0, sigma^2) (lib/dp/noise.h) and ties count as
 * errors: for integer gaps g >= 0 of independent discrete Gaussians,
 * Pr[Z_j - Z_i >= g] <= C Phi_c((g - 1) / (sqrt(2) sigma)) with C = (1 +
 * tau(sigma/sqrt 2)) / (1 - tau(sigma))^2, tau(s) = 2 sum_{j>=1}
 * exp(-2 pi^2 j^2 s^2) (the lattice sum over {b - a = m} is at most
 * sqrt(pi) sigma (1 + tau(sigma/sqrt 2)) e^(-m^2/(4 sigma^2)) by Poisson
 * summation, the normaliser at least sqrt(2 pi) sigma (1 - tau(sigma)),
 * and the sum over m >= g >= 1 at most the integral from g - 1; for
 * g = 0 the bound exceeds 1/2, where the bound of GNMax is the
 * data-independent one anyway).  Capped at log(1 - 1/k) as the paper's.
 * NaN on bad arguments. */
double rdp_pate_logq_dgauss(const double *counts, size_t k, double sigma);

/* log bl(q) and log bu(q) (bu capped at 1): the bounds on q of a
 * histogram one teacher away, for k classes (Papernot et al. 2018,
 * Prop. 13: (k-1)/2 erfc(erfcinv(2q/(k-1)) +- 1/sigma)); with discrete
 * set, for q = rdp_pate_logq_dgauss: C bl(q/C), C bu(q/C). */
double rdp_pate_gnmax_logbl(double logq, double sigma, size_t k,
    int discrete);
double rdp_pate_gnmax_logbu(double logq, double sigma, size_t k,
    int discrete);

/* The numeric check of the paper's conditions C5 (the bound beta(q) is
 * non-decreasing on (0, q0)) and C6 (beta(bu(q)) - beta(q) is
 * non-decreasing on (0, bl(q0))) on a grid of 2000 points in log q down
 * to log q0 - 200 (the paper checks them by numeric minimisation of the
 * derivative).  @return 1 if they hold at every point, else 0. */
int rdp_pate_gnmax_ss_conditions(double alpha, double sigma, size_t k,
    int discrete);

/* Local sensitivity of the data-dependent RDP of one GNMax query at
 * order alpha (q from rdp_pate_logq_dgauss if discrete, else
 * rdp_pate_logq_gaussian), at every distance d = 0..n from counts[0..k-1] (n
 * teachers, counts summing to n): ls[d] >= the largest local sensitivity
 * of a histogram at most d teachers away (Algorithms 3-5; the walk moves
 * votes between the two largest counts; a running maximum keeps ls
 * non-decreasing).  logq0 from rdp_pate_gnmax_logq0.  scratch holds k
 * doubles.  @return 0 or RDP_E_PARAM. */
int rdp_pate_gnmax_ls(const double *counts, size_t k, uint64_t n,
    double sigma, double alpha, double logq0, int discrete, double *ls,
    double *scratch);

/* The same for the confident-GNMax threshold step (its data-dependent
 * RDP, rdp_pate_threshold_dep_dgauss if discrete, else
 * rdp_pate_threshold_dep, depends on the largest count v only: the
 * paper's compute_local_sensitivity_bounds_threshold), as the maximum
 * over v in [max - d, max + d] of |r(v) - r(v +- 1)|.  scratch holds
 * n + 1 doubles.  @return 0 or RDP_E_PARAM. */
int rdp_pate_threshold_ls(double maxcount, uint64_t n, double t,
    double sigma1, double alpha, int discrete, double *ls, double *scratch);

/* The threshold step's data-dependent RDP for the discrete Gaussian
 * N_Z(0, sigma1^2) on the largest count: the less likely outcome needs
 * Z >= m = ceil(t - maxcount) (answer) or Z >= 1 - m (no answer), an
 * integer >= 1 for one of them, with probability at most min(1/2,
 * Phi_c((m - 1)/sigma1) / (1 - tau(sigma1))) (each term of the lattice
 * sum at most the integral over [z - 1, z]); then Thm. 6 as
 * rdp_pate_threshold_dep. */
double rdp_pate_threshold_dep_dgauss(double alpha, double maxcount,
    double t, double sigma1);

/* max over d = 0..n of e^(-beta d) ls[d] (ls has n + 1 entries, and is
 * constant beyond n, where every histogram is reachable). */
double rdp_smooth_max(const double *ls, uint64_t n, double beta);

/* RDP at order alpha of the GNSS release f(D) + SS_beta(D) N(0, sigma^2)
 * (Papernot et al. 2018, Thm. 23 of arXiv:1802.08908): alpha e^(2 beta) /
 * sigma^2 + (beta alpha - log(1 - 2 alpha beta) / 2) / (alpha - 1) for
 * 1 < alpha < 1/(2 beta); +inf at larger orders.  NaN on bad arguments. */
double rdp_pate_gnss(double alpha, double beta, double sigma);

/* PATE 2017 moments accountant, the l-th log moment of one query of a
 * (priv_eps)-DP noisy max whose outcome differs from the argmax with
 * probability q (Papernot et al. 2017 Thm. 3, as analysis.py
 * logmgf_exact): min(priv_eps^2 l(l+1)/2, log((1-q)((1-q)/(1 - e^eps
 * q))^l + q e^(eps l)), priv_eps l); the middle term is used only for
 * q < 1/2.  With q = 1 this is the data-independent bound.  For LNMax
 * with Laplace noise 1/gamma, priv_eps = 2 gamma and q =
 * exp(rdp_pate_logq_laplace(counts, k, 1/gamma)).  NaN on bad args. */
double rdp_pate2017_logmgf(double q, double priv_eps, int l);

/* PATE 2017 epsilon of `queries` identical queries: min over l = 1..L of
 * (queries * logmgf[l-1] - log delta) / l; *best_l receives the
 * minimising l (first on ties).  @return 0 or RDP_E_PARAM. */
int rdp_pate2017_epsilon(const double *logmgf, int L, double queries,
    double delta, double *eps, int *best_l);

/* ---- the accountant: composition at a fixed order list ---- */

struct rdp_acct;

/* A new accountant with all RDP at 0 over a copy of orders (NULL: the
 * default orders, n ignored).  @return NULL if the orders are invalid
 * (rdp_check_orders says why) or memory runs out. */
struct rdp_acct *rdp_acct_new(const double *orders, size_t n);
void rdp_acct_free(struct rdp_acct *a);

/* The accountant's orders and accumulated curve (valid until it is freed). */
const double *rdp_acct_orders(const struct rdp_acct *a, size_t *n);
const double *rdp_acct_curve(const struct rdp_acct *a);

/* Add count times an RDP curve given at the accountant's orders
 * (count >= 0; rdp values >= 0, +inf allowed).  @return 0, RDP_E_PARAM. */
int rdp_acct_add_curve(struct rdp_acct *a, const double *rdp, double count);
/* Compose `steps` subsampled Gaussian steps.  @return 0 or an RDP_E_*. */
int rdp_acct_add_sgm(struct rdp_acct *a, double q, double sigma,
    uint64_t steps);
/* Compose count Gaussian releases with noise multiplier sigma. */
int rdp_acct_add_gaussian(struct rdp_acct *a, double sigma, double count);
/* Compose count Laplace releases with b = scale / L1 sensitivity. */
int rdp_acct_add_laplace(struct rdp_acct *a, double b, double count);
/* Compose count pure eps-DP releases (as RDP: rdp_pure). */
int rdp_acct_add_pure(struct rdp_acct *a, double eps, double count);

/* Convert the accumulated curve (rdp_to_epsilon, rdp_to_delta). */
int rdp_acct_epsilon(const struct rdp_acct *a, double delta, int conv,
    double *eps, double *order);
int rdp_acct_delta(const struct rdp_acct *a, double eps, int conv,
    double *delta, double *order);

#endif
