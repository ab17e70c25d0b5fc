/*
 * tune.c: private hyper-parameter tuning by repeat and select (tune.h).
 * The bounds of Papernot and Steinke (ICLR 2022) as Google's
 * dp_accounting states them (rdp_privacy_accountant.py,
 * _compute_rdp_repeat_and_select); our own code.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdp.h"
#include "tune.h"

double
tune_negbin_mean(double eta, double gamma)
{
	double lg;

	if (!(eta > -1) || !isfinite(eta) || !(gamma > 0) || !(gamma < 1))
		return NAN;
	lg = log(gamma);
	if (eta == 0)		/* logarithmic */
		return (1 - gamma) / (gamma * -lg);
	/* eta (1 - gamma) / (gamma (1 - gamma^eta)); 1 - gamma^eta is
	 * -expm1(eta log gamma), of eta's sign. */
	return eta * (1 - gamma) / (gamma * -expm1(eta * lg));
}

int
tune_dist_set(struct tune_dist *d, int kind, double eta, double mu)
{
	double lo = 0, hi = 1, mid;

	if (!(mu >= 1) || !(mu <= TUNE_MAX_MU))
		return PV_E_RANGE;
	memset(d, 0, sizeof *d);
	d->kind = kind;
	if (kind == TUNE_POISSON) {
		d->mu = mu;
		return 0;
	}
	if (kind != TUNE_NEGBIN || !(eta >= TUNE_MIN_ETA) ||
	    !(eta <= TUNE_MAX_ETA) || !(mu > 1))
		return PV_E_RANGE;
	d->eta = eta;
	if (eta == 1) {
		d->gamma = 1 / mu;
	} else {
		/* The mean falls from +inf at gamma -> 0 to 1 at gamma -> 1:
		 * bisect until the interval is two adjacent doubles. */
		for (;;) {
			mid = lo + (hi - lo) / 2;
			if (mid <= lo || mid >= hi)
				break;
			if (tune_negbin_mean(eta, mid) > mu)
				lo = mid;
			else
				hi = mid;
		}
		d->gamma = hi;
	}
	d->mu = tune_negbin_mean(eta, d->gamma);
	if (!(d->gamma > 0 && d->gamma < 1) || !isfinite(d->mu))
		return PV_E_RANGE;
	return 0;
}

/* A number of the whole field s (up to end), into *v. */
static int
num(const char *s, const char *end, double *v)
{
	char buf[64], *e;
	size_t n = (size_t)(end - s);

	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtod(buf, &e);
	return *e != '\0' || errno == ERANGE || !isfinite(*v) ? -1 : 0;
}

int
tune_dist_parse(const char *s, struct tune_dist *d, char *err,
    size_t errlen)
{
	const char *c = strchr(s, ':'), *c2;
	double eta = 0, mu;
	int kind = TUNE_NEGBIN;
	size_t n;

	if (c == NULL)
		goto bad;
	n = (size_t)(c - s);
	c2 = c + 1 + strcspn(c + 1, ":");
	if (n == 6 && strncmp(s, "negbin", 6) == 0) {
		if (*c2 != ':' || num(c + 1, c2, &eta) != 0 ||
		    num(c2 + 1, c2 + 1 + strlen(c2 + 1), &mu) != 0)
			goto bad;
	} else {
		if (*c2 != '\0' || num(c + 1, c2, &mu) != 0)
			goto bad;
		if (n == 7 && strncmp(s, "poisson", 7) == 0)
			kind = TUNE_POISSON;
		else if (n == 9 && strncmp(s, "geometric", 9) == 0)
			eta = 1;
		else if (n == 11 && strncmp(s, "logarithmic", 11) == 0)
			eta = 0;
		else
			goto bad;
	}
	if (tune_dist_set(d, kind, eta, mu) != 0) {
		snprintf(err, errlen, "'%s': the mean must be in %s%g, %g], "
		    "the shape in [%g, %g]", s, kind == TUNE_POISSON ? "[" :
		    "(", 1.0, TUNE_MAX_MU, TUNE_MIN_ETA, TUNE_MAX_ETA);
		return PV_E_OPTION;
	}
	return 0;
bad:
	snprintf(err, errlen, "'%s': expected poisson:MU, geometric:MU, "
	    "logarithmic:MU or negbin:ETA:MU", s);
	return PV_E_OPTION;
}

const char *
tune_dist_name(const struct tune_dist *d)
{
	if (d->kind == TUNE_POISSON)
		return "poisson";
	return d->eta == 1 ? "geometric" : d->eta == 0 ? "logarithmic" :
	    "negbin";
}

int
tune_rdp(const struct tune_dist *d, const double *orders, const double *rdp,
    size_t n, double *out)
{
	double c = INFINITY, lgam, lmu, dh, best;
	int rc;

	if (rdp_check_orders(orders, n) != NULL || !(d->mu >= 1) ||
	    !isfinite(d->mu))
		return PV_E_RANGE;
	for (size_t i = 0; i < n; i++)
		if (!(rdp[i] >= 0))
			return PV_E_RANGE;
	lmu = log(d->mu);
	if (d->kind == TUNE_POISSON) {
		/* Theorem 6 at each order l, with epsh = log(1 + 1/(l - 1))
		 * and deltah from the curve (the improved conversion). */
		for (size_t i = 0; i < n; i++) {
			if ((rc = rdp_to_delta(orders, rdp, n,
			    log1p(1 / (orders[i] - 1)), RDP_CONV_IMPROVED, &dh,
			    NULL)) != 0)
				return rc;
			out[i] = rdp[i] + d->mu * dh + lmu / (orders[i] - 1);
		}
	} else if (d->kind == TUNE_NEGBIN) {
		if (!(d->gamma > 0 && d->gamma < 1) || !(d->eta > -1))
			return PV_E_RANGE;
		/* Theorem 2, its lh-term minimised over the list. */
		lgam = -log(d->gamma);
		for (size_t j = 0; j < n; j++) {
			double t = (1 - 1 / orders[j]) * rdp[j] +
			    lgam / orders[j];

			if (t < c)
				c = t;
		}
		c *= 1 + d->eta;
		for (size_t i = 0; i < n; i++)
			out[i] = rdp[i] + c + lmu / (orders[i] - 1);
	} else {
		return PV_E_RANGE;
	}
	/* RDP does not decrease with the order: a bound at a larger order
	 * holds at a smaller one. */
	for (size_t i = 0; i < n; i++) {
		best = out[i];
		for (size_t j = 0; j < n; j++)
			if (orders[j] >= orders[i] && out[j] < best)
				best = out[j];
		out[i] = best;
	}
	return 0;
}

int
tune_sample(const struct tune_dist *d, struct rng *r, uint64_t *k)
{
	double u = (double)(rng_u64(r) >> 11) * 0x1p-53, p, lg;
	uint64_t j;

	if (d->kind == TUNE_POISSON) {
		if (!(d->mu >= 1 && d->mu <= TUNE_MAX_MU))
			return PV_E_RANGE;
		j = 0;
		p = exp(-d->mu);
		while (u >= p && p > 0) {
			u -= p;
			j++;
			p *= d->mu / (double)j;
		}
	} else if (d->kind == TUNE_NEGBIN) {
		if (!(d->gamma > 0 && d->gamma < 1) || !(d->eta > -1))
			return PV_E_RANGE;
		lg = log(d->gamma);
		j = 1;
		p = d->eta == 0 ? (1 - d->gamma) / -lg :
		    (1 - d->gamma) * d->eta / expm1(-d->eta * lg);
		while (u >= p && p > 0) {
			u -= p;
			p *= (1 - d->gamma) * ((double)j + d->eta) /
			    ((double)j + 1);
			j++;
		}
	} else {
		return PV_E_RANGE;
	}
	*k = j;
	return 0;
}

int
tune_trial_sgm(size_t nconf, const double *q, const uint64_t *steps,
    double sigma, double score_sigma, const double *orders, size_t n,
    double *out)
{
	double *c;
	int rc = 0;

	if (nconf == 0 || !(score_sigma > 0) || n == 0)
		return PV_E_RANGE;
	if ((c = malloc(n * sizeof *c)) == NULL)
		return PV_E_NOMEM;
	for (size_t j = 0; j < n; j++)
		out[j] = 0;
	for (size_t i = 0; i < nconf && rc == 0; i++) {
		if ((rc = rdp_sgm(q[i], sigma, orders, n, c)) != 0)
			break;
		for (size_t j = 0; j < n; j++)
			if ((double)steps[i] * c[j] > out[j])
				out[j] = (double)steps[i] * c[j];
	}
	for (size_t j = 0; j < n && rc == 0; j++)
		out[j] += rdp_gaussian(orders[j], score_sigma);
	free(c);
	return rc;
}

/* The tuned epsilon at delta with noise multiplier sigma. */
static int
tuned_eps(const struct tune_dist *d, size_t nconf, const double *q,
    const uint64_t *steps, double score_sigma, double delta, double sigma,
    double *trial, double *tuned, double *eps)
{
	const double *ord;
	size_t n;
	int rc;

	ord = rdp_default_orders(&n);
	if ((rc = tune_trial_sgm(nconf, q, steps, sigma, score_sigma, ord, n,
	    trial)) != 0 || (rc = tune_rdp(d, ord, trial, n, tuned)) != 0)
		return rc;
	return rdp_to_epsilon(ord, tuned, n, delta, RDP_CONV_IMPROVED, eps,
	    NULL);
}

struct tuned_query {
	const struct tune_dist *d;
	size_t nconf;
	const double *q;
	const uint64_t *steps;
	double score_sigma, delta;
	double trial[RDP_DEFAULT_NORDERS], tuned[RDP_DEFAULT_NORDERS];
};

static int
tuned_eps_at(double sigma, void *arg, double *eps)
{
	struct tuned_query *a = arg;

	return tuned_eps(a->d, a->nconf, a->q, a->steps, a->score_sigma,
	    a->delta, sigma, a->trial, a->tuned, eps);
}

int
tune_solve_sigma(const struct tune_dist *d, size_t nconf, const double *q,
    const uint64_t *steps, double score_sigma, double delta, double target,
    double *sigma, double *eps)
{
	struct tuned_query a = { d, nconf, q, steps, score_sigma, delta,
	    { 0 }, { 0 } };
	int rc;

	if (!(target > 0) || !(delta > 0 && delta < 1))
		return PV_E_RANGE;
	if ((rc = rdp_solve_decreasing(1e-3, 1e6, target, tuned_eps_at, &a,
	    sigma)) != 0)
		return rc;
	return tuned_eps_at(*sigma, &a, eps);
}
