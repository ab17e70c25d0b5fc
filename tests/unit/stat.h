/*
 * stat.h: goodness-of-fit helpers for the sampler unit tests.
 *
 * Every statistical test uses critical values with a false-failure rate
 * of at most 1e-6 for a random seed (the seeds are fixed, so a run is
 * deterministic; the rate says how unlucky a fixed seed could be):
 *  - chi-square: the Wilson-Hilferty approximation of the upper quantile
 *    at z = 5,  k (1 - 2/(9k) + 5 sqrt(2/(9k)))^3.  Checked against the
 *    exact chi-square tail (scipy.stats.chi2.sf): at most 2.84e-7 for
 *    every k in 1..1000.
 *  - normal z-scores (binomial counts, means, variances): |z| <= 5, a
 *    two-sided rate of 5.7e-7 under the normal approximation, which is
 *    accurate at the sample sizes used (>= 1e4 with expected counts of
 *    hundreds or more).
 */
#ifndef STAT_H
#define STAT_H
#include <math.h>
#include <stddef.h>

#define STAT_Z 5.0

static double
chi2_crit(int k)
{
	double a = 2.0 / (9.0 * k), b = 1.0 - a + STAT_Z * sqrt(a);

	return k * b * b * b;
}

/* Pearson's statistic of observed counts against probabilities p over
 * nb bins (p sums to 1), for N draws. */
static double
chi2_stat(const long *obs, const long double *p, int nb, long N)
{
	long double s = 0;

	for (int i = 0; i < nb; i++) {
		long double e = p[i] * N, d = obs[i] - e;

		s += d * d / e;
	}
	return (double)s;
}
#endif
