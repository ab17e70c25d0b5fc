/* pate.c: PATE aggregation of teacher votes (see pate.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "noise.h"
#include "pate.h"
#include "pverr.h"
#include "rdp.h"

#define LAPLACE_BITS 32			/* the scale's numerator is <= 2^32 */

struct pate {
	struct pate_params p;
	int off;			/* no noise: NOT private */
	uint64_t lnum, lden;		/* lnmax: Laplace scale lnum / lden */
	struct noise_dg *g;		/* gnmax, confident answers: sigma */
	struct noise_dg *g1;		/* confident check: sigma1 */
};

static const char *const ledger_mech[] = { "pate_lnmax", "pate_gnmax",
    "pate_confident_gnmax" };

/* ---- parameters ---- */

/* Is a one of rdp-account's default orders (where every curve is)? */
int
pate_ss_order_ok(double a)
{
	size_t n;
	const double *ord = rdp_default_orders(&n);

	for (size_t i = 0; i < n; i++)
		if (ord[i] == a)
			return 1;
	return 0;
}

static int
sigma_ok(double s)
{
	return s == 0 || (s >= PATE_SIGMA_MIN && s <= PATE_SIGMA_MAX);
}

int
pate_noise_off(const struct pate_params *p)
{
	return p->mech == PATE_LNMAX ? isinf(p->gamma) : p->sigma == 0;
}

const char *
pate_mechanism(const struct pate_params *p)
{
	return p->mech >= PATE_LNMAX && p->mech <= PATE_CONFIDENT ?
	    ledger_mech[p->mech] : "pate";
}

const char *
pate_check_params(const struct pate_params *p)
{
	switch (p->mech) {
	case PATE_LNMAX:
		if (!(isinf(p->gamma) && p->gamma > 0) &&
		    !(p->gamma >= PATE_GAMMA_MIN && p->gamma <= PATE_GAMMA_MAX))
			return "gamma must lie in [1e-6, 1e6] or be inf";
		if (p->has_max)
			return "max_answers applies to confident-gnmax";
		break;
	case PATE_GNMAX:
		if (!sigma_ok(p->sigma))
			return "sigma must be 0 or lie in [1e-3, 1e9]";
		if (p->has_max)
			return "max_answers applies to confident-gnmax";
		break;
	case PATE_CONFIDENT:
		if (!sigma_ok(p->sigma) || !sigma_ok(p->sigma1))
			return "sigma and sigma1 must be 0 or lie in [1e-3, 1e9]";
		if ((p->sigma == 0) != (p->sigma1 == 0))
			return "sigma 0 and sigma1 0 go together (no noise at "
			    "all)";
		if (!(fabs(p->threshold) <= PATE_THRESHOLD_MAX))
			return "threshold must lie in [-1e12, 1e12]";
		break;
	default:
		return "unknown mechanism";
	}
	if (pate_noise_off(p) && (p->audit || p->half_noise || p->ddep))
		return "audit releases, half noise and the data-dependent "
		    "release need noise";
	if (!p->ddep)
		return p->reveal ? "reveal goes with the data-dependent "
		    "release" : NULL;
	if (p->mech == PATE_LNMAX)
		return "the data-dependent release applies to gnmax and "
		    "confident-gnmax";
	if (!pate_ss_order_ok(p->ss_order))
		return "ss_order must be one of rdp-account's default orders";
	if (!(p->ss_beta >= 1e-6 && p->ss_beta <= 0.5) ||
	    !(2 * p->ss_order * p->ss_beta < 1))
		return "ss_beta must lie in [1e-6, 0.5] with 2 ss_order ss_beta "
		    "< 1";
	if (!(p->ss_sigma >= PATE_SS_SIGMA_MIN &&
	    p->ss_sigma <= PATE_SS_SIGMA_MAX))
		return "ss_sigma must lie in [1e-3, 1e3]";
	if (p->audit || p->half_noise)
		return "the data-dependent release goes with neither audit "
		    "releases nor half noise";
	return NULL;
}

/* ---- the votes ---- */

int
pate_votes_alloc(struct pate_votes *v, uint64_t q)
{
	if (v->k == 0 || q > PATE_MAX_COUNTS / v->k)
		return PV_E_LIMIT;
	v->q = (size_t)q;
	/* Never NULL, even without queries: a count array means "allocated". */
	v->count = calloc(v->q > 0 ? v->q * v->k : 1, sizeof *v->count);
	return v->count ? 0 : PV_E_NOMEM;
}

int
pate_votes_add(struct pate_votes *v, const int32_t *lab, size_t rows,
    size_t *bad_q)
{
	for (size_t r = 0; r < rows; r++) {
		if (v->n == PATE_MAX_TEACHERS)
			return PV_E_LIMIT;
		for (size_t q = 0; q < v->q; q++) {
			int32_t c = lab[r * v->q + q];
			if (c < 0 || (uint64_t)c >= v->k) {
				*bad_q = q;
				return PV_E_RANGE;
			}
			v->count[q * v->k + (size_t)c]++;
		}
		v->n++;
	}
	return 0;
}

void
pate_votes_free(struct pate_votes *v)
{
	free(v->count);
	v->count = NULL;
}

/* ---- the samplers ---- */

/*
 * The discrete Laplace scale b = num / den used for gamma g: the exact
 * 1/g when g times 2^k is an integer for some k <= LAPLACE_BITS, else
 * num = 2^LAPLACE_BITS and den = floor(g num), so b >= 1/g: at least the
 * noise claimed (the privacy of a scale-b discrete Laplace on integer
 * counts of L1 sensitivity D is D/b, which only falls as b grows).  The
 * numerator stays small so that the sampler's U + num V never overflows.
 */
static void
laplace_scale(double g, int half, uint64_t *num, uint64_t *den)
{
	int k = 0;
	double d = g;

	while (k < LAPLACE_BITS && d != floor(d)) {
		d *= 2;
		k++;
	}
	*num = UINT64_C(1) << k;
	*den = (uint64_t)floor(d);	/* g >= 1e-6 keeps it >= 1 */
	if (half)
		*den *= 2;	/* g <= 1e6: den < 2^53, no overflow */
}

int
pate_new(struct pate **out, const struct pate_params *p)
{
	struct pate *pt = calloc(1, sizeof *pt);
	int rc = 0;

	*out = NULL;
	if (pt == NULL)
		return PV_E_NOMEM;
	pt->p = *p;
	pt->off = pate_noise_off(p);
	if (!pt->off && p->mech == PATE_LNMAX)
		laplace_scale(p->gamma, p->half_noise, &pt->lnum, &pt->lden);
	if (!pt->off && p->mech != PATE_LNMAX) {
		rc = noise_dg_new_sigma(&pt->g, p->half_noise ? p->sigma / 2 :
		    p->sigma);
		if (rc == 0 && p->mech == PATE_CONFIDENT)
			rc = noise_dg_new_sigma(&pt->g1, p->half_noise ?
			    p->sigma1 / 2 : p->sigma1);
	}
	if (rc != 0) {
		pate_free(pt);
		return rc;
	}
	*out = pt;
	return 0;
}

void
pate_free(struct pate *pt)
{
	if (pt == NULL)
		return;
	noise_dg_free(pt->g);
	noise_dg_free(pt->g1);
	free(pt);
}

/* ---- the mechanisms ---- */

/*
 * Report noisy max over the k counts: each count gets independent noise
 * (discrete Laplace for lnmax, discrete Gaussian otherwise), and the
 * largest noisy count wins, ties broken uniformly at random, by reservoir
 * sampling over the tied classes with the generator.
 */
static int
noisy_argmax(const struct pate *pt, struct rng *r, const uint32_t *c,
    size_t k, int32_t *out)
{
	int laplace = pt->p.mech == PATE_LNMAX;
	int64_t best = 0, v, z = 0;
	uint64_t ties = 0;
	size_t arg = 0;
	int rc = 0;

	for (size_t j = 0; j < k; j++) {
		if (!pt->off)
			rc = laplace ? noise_dlaplace(r, pt->lnum, pt->lden,
			    &z) : noise_dg_sample(pt->g, r, &z);
		if (rc != 0)
			return rc;
		if (__builtin_add_overflow((int64_t)c[j], z, &v))
			return NOISE_E_OVERFLOW;
		if (j == 0 || v > best) {
			best = v;
			arg = j;
			ties = 1;
		} else if (v == best && rng_uniform_below(r, ++ties) == 0) {
			arg = j;
		}
	}
	*out = (int32_t)arg;
	return 0;
}

/* The confident-GNMax check: max count + N_Z(0, sigma1^2) >= t.
 * @return 1, 0 or a noise code. */
static int
passes(const struct pate *pt, struct rng *r, const uint32_t *c, size_t k)
{
	uint32_t m = 0;
	int64_t z = 0, s;
	int rc;

	for (size_t j = 0; j < k; j++)
		m = c[j] > m ? c[j] : m;
	if (!pt->off && (rc = noise_dg_sample(pt->g1, r, &z)) != 0)
		return rc;
	if (__builtin_add_overflow((int64_t)m, z, &s))
		return NOISE_E_OVERFLOW;
	/* The comparison with a double threshold is exact for |s| < 2^53;
	 * beyond, both sides are far past any threshold accepted. */
	return (double)s >= pt->p.threshold;
}

static int
release(const struct pate *pt, struct rng *r, const struct pate_votes *v,
    int32_t *y, uint8_t *ans)
{
	const struct pate_params *p = &pt->p;
	uint64_t answered = 0;
	int rc;

	for (size_t q = 0; q < v->q; q++) {
		const uint32_t *c = v->count + q * v->k;

		if (p->progress != NULL && q % 256 == 0)
			p->progress(p->progress_ctx, q, v->q);
		y[q] = -1;
		ans[q] = 0;
		if (p->mech == PATE_CONFIDENT) {
			/* Once max-answers are given, the rest is neither
			 * checked nor answered (the Renyi filter's budget). */
			if (p->has_max && answered == p->max_answers)
				continue;
			if ((rc = passes(pt, r, c, v->k)) < 0)
				return rc;
			if (!rc)
				continue;
		}
		if ((rc = noisy_argmax(pt, r, c, v->k, &y[q])) != 0)
			return rc;
		ans[q] = 1;
		answered++;
	}
	if (p->progress != NULL)
		p->progress(p->progress_ctx, v->q, v->q);
	return 0;
}

/* ---- the data-dependent release (Papernot et al. 2018) ---- */

/*
 * The data-dependent bound of Papernot et al. (2018) depends on the vote
 * histograms, so publishing it is itself a release.  It is published
 * only with the smooth-sensitivity mechanism of their Appendix C (GNSS):
 *  - f(D) = the data-dependent RDP at the order a = ss_order of every
 *    checked query's threshold step (Thm. 6 with sqrt(2) sigma1 and q
 *    the probability of the less likely outcome, their section 4.2) and
 *    of every answered query's GNMax step (rdp_pate_gnmax_dep: Thm. 6,
 *    Prop. 10's mu1, mu2, q~ from the union bound of Prop. 7); which
 *    queries were answered is part of the released output.  The paper's
 *    q are for continuous Gaussian noise; ours is the discrete Gaussian,
 *    whose tails are slightly heavier on the integers, so q~ and the
 *    threshold's q are the bounds for it (rdp_pate_logq_dgauss,
 *    rdp_pate_threshold_dep_dgauss: the gaps less 1, times a factor C
 *    within 1e-4 of 1 for sigma >= 1), and Prop. 13's bounds become C
 *    bl(q/C), C bu(q/C);
 *  - LS(d), the local sensitivity of f at the histograms d teachers away,
 *    bounded by the sum over queries of the per-query bounds of their
 *    Algorithms 3-5 (Prop. 13: one teacher's vote moves in every query's
 *    histogram) and of the threshold step's bound;
 *  - SS = max_d e^(-beta d) LS(d), the beta-smooth sensitivity (Nissim,
 *    Raskhodnikova and Smith 2007), raised to at least 2^-12 and by a
 *    relative 2^-20 (the floating-point error of LS);
 *  - the release f~ = h (round(f / h) + Z), h = 2^-32, Z an exact
 *    discrete Gaussian of standard deviation sigma_s SS / h (lib/dp/noise.h).
 * The continuous GNSS f + SS N(0, sigma_s^2) is (a', e)-RDP for 1 < a' <
 * 1/(2 beta) with e = a' e^(2 beta) / sigma_s^2 + (beta a' - log(1 - 2 a'
 * beta) / 2) / (a' - 1) (their Thm. 23).  On the grid, the two centres
 * differ by at most |f(D) - f(D')| / h + 1 <= (1 + h / 2^-12) SS / h,
 * which multiplies the first term by (1 + 2^-20)^2, and by Poisson
 * summation each normaliser sum_z exp(-(z - c)^2 / (2 s^2)) lies within a
 * factor 1 +- tau(s), tau(s) = 2 sum_k exp(-2 pi^2 k^2 s^2), of its
 * integral, which adds (log(1 + tau(s*)) + (a' - 1) log(1 + tau(s)) -
 * a' log(1 - tau(s))) / (a' - 1) with s >= sigma_s 2^20 and s* >= s /
 * sqrt(a') (zero in double precision for sigma_s >= 1e-3).  The noise's
 * scale is rounded up, so its smoothness is beta + 2^-50.
 */

static double
gnss_tau(double s)
{
	double e = exp(-2 * M_PI * M_PI * s * s);

	return e < 1 ? 2 * e / (1 - e) : INFINITY;
}

double
pate_gnss_rdp(double a, double beta, double sigma_s)
{
	double b = beta + ldexp(1, -50), infl = 1 + ldexp(1,
	    -(PATE_SS_GRID_BITS - PATE_SS_FLOOR_BITS)), s, ss, c;

	if (!(2 * a * b < 1))
		return INFINITY;
	s = sigma_s * ldexp(1, PATE_SS_GRID_BITS - PATE_SS_FLOOR_BITS);
	ss = s / sqrt(a);
	c = (log1p(gnss_tau(ss)) + (a - 1) * log1p(gnss_tau(s)) -
	    a * log1p(-gnss_tau(s))) / (a - 1);
	return a * exp(2 * b) * infl * infl / (sigma_s * sigma_s) +
	    (b * a - 0.5 * log1p(-2 * a * b)) / (a - 1) + c;
}

/* Decided from the parameters alone: a unanimous histogram is the most
 * favourable for GNMax, and every largest count 0..n for the threshold
 * step. */
int
pate_ddep_plan(const struct pate_params *p, const struct pate_votes *v,
    struct pate_dd *dd)
{
	double a = p->ss_order, *c = calloc(v->k ? v->k : 1, sizeof *c), lq;
	int th = 0;

	memset(dd, 0, sizeof *dd);
	if (c == NULL)
		return PV_E_NOMEM;
	c[0] = (double)v->n;
	lq = rdp_pate_logq_dgauss(c, v->k, p->sigma);
	dd->gn = rdp_pate_gnmax_dep(a, lq, p->sigma) <
	    rdp_pate_gnmax(a, p->sigma);
	if (p->mech == PATE_CONFIDENT) {
		double ind = a / (2 * p->sigma1 * p->sigma1);
		for (uint64_t m = 0; m <= v->n && !th; m++) {
			c[0] = (double)m;
			th = rdp_pate_threshold_dep_dgauss(a, c[0],
			    p->threshold, p->sigma1) < ind;
		}
	}
	free(c);
	if (!dd->gn && !th)
		return 1;
	if (dd->gn && !rdp_pate_gnmax_ss_conditions(a, p->sigma, v->k, 1))
		return 2;
	return 0;
}

/* f (the data-dependent RDP at ss_order) and its smooth sensitivity. */
static int
ddep_compute(const struct pate_params *p, const struct pate_votes *v,
    const uint8_t *ans, struct pate_dd *dd)
{
	size_t n1 = (size_t)v->n + 1, ns = n1 > v->k ? n1 : v->k;
	double *c = calloc(v->k ? v->k : 1, sizeof *c);
	double *ls = calloc(n1, sizeof *ls), *tot = calloc(n1, sizeof *tot);
	double *scr = calloc(ns, sizeof *scr);
	double a = p->ss_order, logq0 = NAN, f = 0;
	uint64_t na = 0;
	int rc = 0;

	if (c == NULL || ls == NULL || tot == NULL || scr == NULL) {
		rc = PV_E_NOMEM;
		goto out;
	}
	if (dd->gn)
		logq0 = rdp_pate_gnmax_logq0(a, p->sigma);
	for (size_t q = 0; q < v->q; q++) {
		double mx = 0;

		/* After max-answers answers nothing is checked (release). */
		if (p->mech == PATE_CONFIDENT && p->has_max &&
		    na == p->max_answers)
			break;
		na += ans[q];

		for (size_t j = 0; j < v->k; j++) {
			c[j] = v->count[q * v->k + j];
			mx = c[j] > mx ? c[j] : mx;
		}
		if (p->mech == PATE_CONFIDENT) {
			f += rdp_pate_threshold_dep_dgauss(a, mx, p->threshold,
			    p->sigma1);
			if (rdp_pate_threshold_ls(mx, v->n, p->threshold,
			    p->sigma1, a, 1, ls, scr) != 0) {
				rc = PV_E_USAGE;
				goto out;
			}
			for (size_t d = 0; d < n1; d++)
				tot[d] += ls[d];
			if (!ans[q])
				continue;
		}
		if (!dd->gn) {
			/* Data-independent for every histogram: LS 0. */
			f += rdp_pate_gnmax(a, p->sigma);
			continue;
		}
		f += rdp_pate_gnmax_dep(a, rdp_pate_logq_dgauss(c, v->k,
		    p->sigma), p->sigma);
		if (rdp_pate_gnmax_ls(c, v->k, v->n, p->sigma, a, logq0, 1, ls,
		    scr) != 0) {
			rc = PV_E_USAGE;
			goto out;
		}
		for (size_t d = 0; d < n1; d++)
			tot[d] += ls[d];
	}
	dd->f = f;
	dd->ss = rdp_smooth_max(tot, v->n, p->ss_beta) * (1 + ldexp(1, -20));
out:
	free(c);
	free(ls);
	free(tot);
	free(scr);
	return rc;
}

/* The GNSS release of f with smooth sensitivity ss (see above). */
static int
gnss_release(struct rng *r, double f, double ss, double sigma_s,
    double *out)
{
	double h = ldexp(1, -PATE_SS_GRID_BITS);
	double fl = ldexp(1, -PATE_SS_FLOOR_BITS);
	double s = ss > fl ? ss : fl, centre, scale;
	struct noise_dg *g;
	int64_t z;
	int rc;

	if (!(ss >= 0) || !isfinite(ss))
		return PV_E_NUMERIC;
	if (!(f >= 0 && f <= PATE_SS_MAX_RDP))
		return PV_E_LIMIT;
	centre = nearbyint(f / h);
	scale = nextafter(sigma_s * s / h, INFINITY);
	if ((rc = noise_dg_new_sigma(&g, scale)) != 0)
		return rc;
	rc = noise_dg_sample(g, r, &z);
	noise_dg_free(g);
	if (rc != 0)
		return rc;
	if (llabs(z) > (INT64_C(1) << 53) - (INT64_C(1) << 52))
		return NOISE_E_OVERFLOW;
	*out = h * (centre + (double)z);
	return 0;
}

int
pate_run(const struct pate *pt, struct rng *r, const struct pate_votes *v,
    int32_t *y, uint8_t *ans, struct pate_dd *dd)
{
	int rc;

	if ((rc = release(pt, r, v, y, ans)) != 0)
		return rc;
	if (!pt->p.ddep || dd == NULL)
		return 0;
	dd->answered = 0;
	for (size_t q = 0; q < v->q; q++)
		dd->answered += ans[q];
	if ((rc = ddep_compute(&pt->p, v, ans, dd)) != 0)
		return rc;
	return gnss_release(r, dd->f, dd->ss, pt->p.ss_sigma, &dd->released);
}

/* ---- the ledger ---- */

static int
param(struct ledger_entry *e, const char *key, double v)
{
	return ts_meta_setf(&e->params, key, "%.17g", v) != 0 ? PV_E_NOMEM : 0;
}

/*
 * The data-independent RDP of the whole release at each order.  One
 * teacher's vote moving from class a to class b changes two counts by 1:
 * L1 sensitivity 2, L2 sensitivity sqrt(2), and the largest count by at
 * most 1.  Removing or adding a teacher changes one count by 1, which is
 * covered.
 *  - lnmax: discrete Laplace of scale b >= 1/gamma on integer counts is
 *    (2 gamma)-DP (the ratio of its probabilities at integer points z and
 *    z + d is at most exp(|d|/b): Canonne, Kamath and Steinke 2020;
 *    Dwork and Roth 2014, report noisy max), as RDP min(eps, alpha
 *    eps^2 / 2) (rdp_pate_lnmax, as in Papernot et al. 2018);
 *  - gnmax: the discrete Gaussian of variance sigma^2 per count gives
 *    alpha ||d||^2 / (2 sigma^2) = alpha / sigma^2 (CKS 2020; Papernot et
 *    al. 2018 section 4);
 *  - confident-gnmax: every query's check is a Gaussian mechanism on the
 *    largest count, sensitivity 1: alpha / (2 sigma1^2) (Papernot et al.
 *    2018, Algorithm 1), and every answer a gnmax with sigma.  Whether a
 *    query is answered depends on the check's outcome, so the answers'
 *    costs are chosen adaptively; their sum is at most A alpha / sigma^2
 *    with A the max_answers cap (else the number of queries), and by
 *    the Renyi filter of Feldman and Zrnic (2021, Thm. 3.1) the whole
 *    release is then (alpha, Q alpha / (2 sigma1^2) + A alpha /
 *    sigma^2)-RDP at every order.
 * Post-processing (the argmax, tie breaking) is free.
 */
int
pate_ledger(const struct pate *pt, const struct pate_votes *v, int relation,
    struct ledger_entry *e)
{
	const struct pate_params *p = &pt->p;
	const double *ord;
	double reps = p->audit ? (double)p->audit : 1, nq = (double)v->q;
	double na = nq;
	size_t no;
	int rc = 0;

	if (p->mech == PATE_CONFIDENT && p->has_max &&
	    (double)p->max_answers < nq)
		na = (double)p->max_answers;
	e->relation = relation;
	ord = rdp_default_orders(&no);
	e->norders = no;
	for (size_t i = 0; i < no; i++) {
		double a = ord[i], c;

		switch (p->mech) {
		case PATE_LNMAX:
			c = nq * rdp_pate_lnmax(a, 1 / p->gamma);
			break;
		case PATE_GNMAX:
			c = nq * rdp_pate_gnmax(a, p->sigma);
			break;
		default:
			c = nq * rdp_gaussian(a, p->sigma1) +
			    na * rdp_pate_gnmax(a, p->sigma);
		}
		e->orders[i] = a;
		e->rdp[i] = reps * c;
	}
	if (p->mech == PATE_LNMAX) {
		rc |= param(e, "gamma", p->gamma);
		rc |= param(e, "scale", (double)pt->lnum / (double)pt->lden);
		rc |= param(e, "l1_sensitivity", 2);
	} else {
		rc |= param(e, "sigma", p->sigma);
		rc |= param(e, "l2_sensitivity", sqrt(2));
	}
	if (p->mech == PATE_CONFIDENT) {
		rc |= param(e, "sigma1", p->sigma1);
		rc |= param(e, "threshold", p->threshold);
		rc |= param(e, "threshold_sensitivity", 1);
		rc |= param(e, "answers_charged", na);
		if (p->has_max)
			rc |= param(e, "max_answers", (double)p->max_answers);
	}
	rc |= param(e, "queries", nq);
	rc |= param(e, "teachers", (double)v->n);
	rc |= param(e, "classes", (double)v->k);
	if (p->audit)
		rc |= param(e, "audit_releases", reps);
	if (p->half_noise)
		rc |= param(e, "unsafe_test_half_noise", 1);
	return rc ? PV_E_NOMEM : 0;
}

int
pate_gnss_ledger(const struct pate_params *p, const struct pate_votes *v,
    const struct pate_dd *dd, struct ledger_entry *e)
{
	const double *ord;
	size_t no;
	int rc = 0;

	e->relation = LEDGER_REPLACE_ONE;
	e->data_dependent = 1;
	ord = rdp_default_orders(&no);
	e->norders = no;
	for (size_t i = 0; i < no; i++) {
		e->orders[i] = ord[i];
		e->rdp[i] = pate_gnss_rdp(ord[i], p->ss_beta, p->ss_sigma);
	}
	rc |= param(e, "order", p->ss_order);
	rc |= param(e, "rdp_released", dd->released);
	rc |= param(e, "beta", p->ss_beta);
	rc |= param(e, "sigma", p->ss_sigma);
	rc |= param(e, "grid", ldexp(1, -PATE_SS_GRID_BITS));
	rc |= param(e, "ss_floor", ldexp(1, -PATE_SS_FLOOR_BITS));
	rc |= param(e, "queries", (double)v->q);
	if (p->mech == PATE_CONFIDENT)
		rc |= param(e, "answered", dd->answered);
	rc |= param(e, "teachers", (double)v->n);
	rc |= param(e, "classes", (double)v->k);
	if (p->reveal) {
		rc |= param(e, "unsafe_test_rdp_data_dependent", dd->f);
		rc |= param(e, "unsafe_test_smooth_sensitivity", dd->ss);
	}
	return rc ? PV_E_NOMEM : 0;
}

/* ---- the teachers ---- */

/* The raw marks of the queries a teacher answered (predict.raw.*), as
 * one string to compare. */
static char *
query_marks(const struct ts_meta *m)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "predict.raw.", 12) == 0)
			len += strlen(m->kv[i].key) + strlen(m->kv[i].val) + 2;
	if ((s = malloc(len)) == NULL)
		return NULL;
	*s = '\0';
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "predict.raw.", 12) == 0) {
			strcat(s, m->kv[i].key + 12);
			strcat(s, "=");
			strcat(s, m->kv[i].val);
			strcat(s, ";");
		}
	return s;
}

int
pate_teacher_read(struct pate_teacher *t, const struct ts_meta *m,
    const char *dataset)
{
	char key[16 + LEDGER_MAX_NAME];
	const char *s, *tool;

	memset(t, 0, sizeof *t);
	snprintf(key, sizeof key, "dp.raw.%s", dataset);
	s = ts_meta_get(m, key);
	if (s != NULL && strcmp(s, "row-local") == 0)
		return PATE_T_ROW_LOCAL;
	snprintf(key, sizeof key, "predict.raw.%s", dataset);
	if (ts_meta_get(m, key) != NULL)
		return PATE_T_QUERIES_RAW;
	snprintf(key, sizeof key, "split.raw.%s", dataset);
	s = ts_meta_get(m, key);
	if (s != NULL && strcmp(s, "aggregate") == 0)
		return PATE_T_PART_AGGREGATE;
	switch (part_read(&t->sp, m)) {
	case PART_OK:
		break;
	case PART_NONE:
		return PATE_T_NO_PART;
	case PART_MIXED:
		return PATE_T_MIXED;
	case PART_BAD:
		return PATE_T_BAD_PART;
	case PART_NO_PARENT:
		return PATE_T_NO_PARENT;
	default:
		return PATE_T_NOMEM;
	}
	tool = ts_meta_get(m, "prov.tool");
	t->predicted = tool && strcmp(tool, "predict") == 0;
	s = t->predicted ? ts_meta_get(m, "prov.input.0.xxh64") : NULL;
	if ((s != NULL && (t->queries = strdup(s)) == NULL) ||
	    (t->qraw = query_marks(m)) == NULL) {
		pate_teacher_free(t);
		return PATE_T_NOMEM;
	}
	return PATE_T_OK;
}

void
pate_teacher_free(struct pate_teacher *t)
{
	part_free(&t->sp);
	free(t->queries);
	free(t->qraw);
	t->queries = t->qraw = NULL;
}

/*
 * The teachers must be trained on disjoint data: parts of one split (the
 * same parent, the same number of parts and, when tns split records it,
 * the same split.id) with distinct indices (lib/dp/parts.h), and they must
 * answer the same queries: the same digest where predict wrote one.  It
 * writes none of queries carrying a raw mark (section 10.2 of the
 * format: a digest of protected rows is a membership test); then the
 * queries must at least carry the same marks (and number, as read).
 * With and without a digest, they differ.
 */
int
pate_teachers_check(const struct pate_teacher *t, size_t n, size_t *a,
    size_t *b)
{
	const struct split_part **pp = calloc(n ? n : 1, sizeof *pp);
	size_t sa = 0, sb = 0;
	int all_queries = 1, rc;

	if (pp == NULL)
		return PATE_TS_NOMEM;
	for (size_t i = 0; i < n; i++)
		pp[i] = &t[i].sp;
	rc = parts_disjoint(pp, n, &sa, &sb);
	free(pp);
	*a = sa;
	*b = sb;
	switch (rc) {
	case PARTS_DISJOINT:
	case PARTS_SAME:		/* reported after the queries */
		break;
	case PARTS_PARENT:
		return PATE_TS_PARENT;
	case PARTS_COUNT:
		return PATE_TS_COUNT;
	case PARTS_ID:
		return PATE_TS_ID;
	default:
		return PATE_TS_NOMEM;
	}
	for (size_t i = 0; i < n; i++)
		all_queries &= t[i].queries != NULL;
	for (size_t i = 1; i < n; i++) {
		if (!t[0].predicted || !t[i].predicted)
			continue;
		*a = 0;
		*b = i;
		if (all_queries && strcmp(t[i].queries, t[0].queries) != 0)
			return PATE_TS_DIGEST;
		if ((t[i].queries == NULL) != (t[0].queries == NULL) ||
		    strcmp(t[i].qraw, t[0].qraw) != 0)
			return PATE_TS_MARKS;
	}
	if (rc == PARTS_SAME) {
		*a = sa;
		*b = sb;
		return PATE_TS_SAME;
	}
	return PATE_TS_OK;
}
