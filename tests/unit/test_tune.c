/*
 * Unit tests of private tuning by repeat and select (lib/dp/tune.h):
 *  - the RDP bound against tests/data/tune/tune_ref.csv, written by
 *    tests/ref/tune_ref.py (numpy/scipy, from the paper's Theorems 2 and
 *    6), on a grid of distributions, means, per-trial curves and orders,
 *    to a relative 1e-12;
 *  - the mean of the truncated negative binomial and the gamma solved
 *    from it;
 *  - the sampler of K against each distribution's probabilities (the
 *    definition's product, in long double) by chi-square;
 *  - the parser, and the calibration of tune_solve_sigma.
 * Run from the repository root (tests/run does).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdp.h"
#include "rng.h"
#include "stat.h"
#include "tap.h"
#include "tune.h"

#define REF "tests/data/tune/tune_ref.csv"

static void
test_reference(void)
{
	const double *ord;
	double rdp[RDP_DEFAULT_NORDERS], out[RDP_DEFAULT_NORDERS];
	double worst = 0, eta, mu, p, order, want;
	char line[512], dist[32], curve[16];
	size_t no;
	long rows = 0, bad = 0;
	FILE *fp = fopen(REF, "r");

	ord = rdp_default_orders(&no);
	if (fp == NULL) {
		ok(0, "%s: cannot open", REF);
		return;
	}
	if (fgets(line, sizeof line, fp) == NULL)
		bad++;
	while (fgets(line, sizeof line, fp) != NULL) {
		struct tune_dist d;
		size_t i;
		double rel;

		if (sscanf(line, "%31[^,],%lf,%lf,%15[^,],%lf,%lf,%lf", dist,
		    &eta, &mu, curve, &p, &order, &want) != 7) {
			bad++;
			continue;
		}
		if (tune_dist_set(&d, strcmp(dist, "poisson") == 0 ?
		    TUNE_POISSON : TUNE_NEGBIN, eta, mu) != 0) {
			bad++;
			continue;
		}
		for (i = 0; i < no; i++)
			rdp[i] = strcmp(curve, "pure") == 0 ?
			    rdp_pure(ord[i], p) : rdp_gaussian(ord[i], p);
		if (tune_rdp(&d, ord, rdp, no, out) != 0) {
			bad++;
			continue;
		}
		for (i = 0; i < no && ord[i] != order; i++)
			;
		if (i == no) {
			bad++;
			continue;
		}
		rel = fabs(out[i] - want) / want;
		if (!(rel <= 1e-12)) {
			if (bad++ < 5)
				printf("# %s eta %g mu %g %s %g order %g: %.17g, "
				    "want %.17g\n", dist, eta, mu, curve, p,
				    order, out[i], want);
		}
		if (rel > worst)
			worst = rel;
		rows++;
	}
	fclose(fp);
	ok(bad == 0 && rows == 4608, "Theorems 2 and 6 match numpy/scipy on "
	    "%ld rows, worst relative error %.3g", rows, worst);
}

static void
test_mean(void)
{
	struct tune_dist d;
	double etas[] = { -0.5, -0.25, 0, 0.5, 1, 2, 7 };
	double mus[] = { 1.01, 2, 10, 100, 500 };
	double worst = 0;
	int good = 1;

	/* Closed forms at a few points. */
	ok(fabs(tune_negbin_mean(1, 0.25) - 4) < 1e-15 &&
	    fabs(tune_negbin_mean(0, 0.5) - 0.5 / (0.5 * log(2))) < 1e-15 &&
	    fabs(tune_negbin_mean(2, 0.5) - 2 * 0.5 / (0.5 * 0.75)) < 1e-15,
	    "the mean of D(eta, gamma) in closed form");
	for (size_t i = 0; i < sizeof etas / sizeof *etas; i++)
		for (size_t j = 0; j < sizeof mus / sizeof *mus; j++) {
			double rel;

			if (tune_dist_set(&d, TUNE_NEGBIN, etas[i], mus[j]) != 0) {
				good = 0;
				continue;
			}
			rel = fabs(d.mu - mus[j]) / mus[j];
			if (rel > worst)
				worst = rel;
		}
	ok(good && worst < 1e-13, "gamma solved from the mean: worst relative "
	    "error of the mean %.3g", worst);
	ok(tune_dist_set(&d, TUNE_NEGBIN, 1, 1) == PV_E_RANGE &&
	    tune_dist_set(&d, TUNE_NEGBIN, -0.6, 5) == PV_E_RANGE &&
	    tune_dist_set(&d, TUNE_POISSON, 0, 0.5) == PV_E_RANGE &&
	    tune_dist_set(&d, TUNE_POISSON, 0, TUNE_MAX_MU * 2) ==
	    PV_E_RANGE && tune_dist_set(&d, TUNE_POISSON, 0, 1) == 0,
	    "out-of-range distributions are refused");
}

/* P[K = k] by the definition, for k = 0..kmax. */
static void
pmf(const struct tune_dist *d, int kmax, long double *p)
{
	for (int k = 0; k <= kmax; k++) {
		long double v;

		if (d->kind == TUNE_POISSON) {
			v = expl(-(long double)d->mu + k * logl(d->mu) -
			    lgammal(k + 1.0L));
		} else if (k == 0) {
			v = 0;
		} else if (d->eta == 0) {
			v = powl(1 - (long double)d->gamma, k) /
			    (k * logl(1 / (long double)d->gamma));
		} else {
			v = powl(1 - (long double)d->gamma, k) /
			    (powl(d->gamma, -d->eta) - 1);
			for (int l = 0; l < k; l++)
				v *= (l + (long double)d->eta) / (l + 1);
		}
		p[k] = v;
	}
}

static void
test_sampler(void)
{
	static const struct { int kind; double eta, mu; } cs[] = {
		{ TUNE_POISSON, 0, 7 }, { TUNE_POISSON, 0, 1 },
		{ TUNE_NEGBIN, 1, 5 }, { TUNE_NEGBIN, 0, 3 },
		{ TUNE_NEGBIN, -0.5, 4 }, { TUNE_NEGBIN, 2, 10 }
	};
	enum { N = 400000, NB = 48 };

	for (size_t c = 0; c < sizeof cs / sizeof *cs; c++) {
		struct tune_dist d;
		struct rng *r = NULL;
		long obs[NB + 1] = { 0 }, ob2[NB + 1];
		long double p[NB + 1], pb[NB + 1], tail = 1;
		double sum = 0, stat;
		int nb = 0, kmax;
		char item[32];

		snprintf(item, sizeof item, "tune/%zu", c);
		if (tune_dist_set(&d, cs[c].kind, cs[c].eta, cs[c].mu) != 0 ||
		    rng_new_seeded(&r, 20261125, item) != 0) {
			ok(0, "setup");
			continue;
		}
		for (long i = 0; i < N; i++) {
			uint64_t k;

			if (tune_sample(&d, r, &k) != 0)
				break;
			sum += (double)k;
			obs[k < NB ? k : NB]++;
		}
		rng_free(r);
		pmf(&d, NB - 1, p);
		/* Bins with expected counts >= 20, the tail lumped. */
		kmax = NB - 1;
		for (int k = 0; k < NB; k++)
			tail -= p[k];
		{
			long double acc = 0;
			long oacc = 0;

			for (int k = 0; k < NB; k++) {
				acc += p[k];
				oacc += obs[k];
				if (acc * N >= 20) {
					pb[nb] = acc;
					ob2[nb++] = oacc;
					acc = 0;
					oacc = 0;
				}
			}
			acc += tail;
			oacc += obs[NB];
			if (acc * N >= 20 || nb == 0) {
				pb[nb] = acc;
				ob2[nb++] = oacc;
			} else if (nb > 0) {
				pb[nb - 1] += acc;
				ob2[nb - 1] += oacc;
			}
		}
		(void)kmax;
		stat = chi2_stat(ob2, pb, nb, N);
		ok(stat < chi2_crit(nb - 1) &&
		    fabs(sum / N - d.mu) < 5 * d.mu, "K ~ %s (eta %g, mean %g): "
		    "chi-square %.1f < %.1f on %d bins, mean %.4f",
		    tune_dist_name(&d), d.eta, d.mu, stat, chi2_crit(nb - 1),
		    nb, sum / N);
	}
}

static void
test_parse(void)
{
	struct tune_dist d;
	char err[256];

	ok(tune_dist_parse("geometric:10", &d, err, sizeof err) == 0 &&
	    d.kind == TUNE_NEGBIN && d.eta == 1 && fabs(d.gamma - 0.1) < 1e-16,
	    "geometric:10");
	ok(tune_dist_parse("negbin:-0.5:4", &d, err, sizeof err) == 0 &&
	    d.eta == -0.5 && fabs(d.mu - 4) < 1e-12, "negbin:-0.5:4");
	ok(tune_dist_parse("poisson:3", &d, err, sizeof err) == 0 &&
	    d.kind == TUNE_POISSON && d.mu == 3 &&
	    tune_dist_parse("logarithmic:3", &d, err, sizeof err) == 0 &&
	    d.eta == 0, "poisson:3, logarithmic:3");
	ok(tune_dist_parse("poisson", &d, err, sizeof err) == PV_E_OPTION &&
	    tune_dist_parse("negbin:1", &d, err, sizeof err) == PV_E_OPTION &&
	    tune_dist_parse("geometric:x", &d, err, sizeof err) ==
	    PV_E_OPTION && tune_dist_parse("uniform:3", &d, err, sizeof err) ==
	    PV_E_OPTION && tune_dist_parse("geometric:0.5", &d, err,
	    sizeof err) == PV_E_OPTION, "bad distributions are refused");
}

static void
test_solve(void)
{
	struct tune_dist d;
	double q[2] = { 0.01, 0.02 }, sigma, eps, eps2;
	uint64_t steps[2] = { 1000, 500 };
	const double *ord;
	double trial[RDP_DEFAULT_NORDERS], tuned[RDP_DEFAULT_NORDERS];
	size_t no;

	ord = rdp_default_orders(&no);
	tune_dist_set(&d, TUNE_NEGBIN, 1, 10);
	ok(tune_solve_sigma(&d, 2, q, steps, 20, 1e-5, 3, &sigma, &eps) == 0 &&
	    eps <= 3 && eps > 3 - 1e-6, "tune_solve_sigma: sigma %.6g gives "
	    "the tuned epsilon %.9g <= 3", sigma, eps);
	/* Just below the sigma found, the target is missed. */
	tune_trial_sgm(2, q, steps, sigma * (1 - 1e-8), 20, ord, no, trial);
	tune_rdp(&d, ord, trial, no, tuned);
	rdp_to_epsilon(ord, tuned, no, 1e-5, RDP_CONV_IMPROVED, &eps2, NULL);
	ok(eps2 > 3, "a slightly smaller sigma misses the target (%.9g)", eps2);
	/* The trial curve is the larger configuration's plus the score's. */
	{
		double a[RDP_DEFAULT_NORDERS], b[RDP_DEFAULT_NORDERS];
		int good = 1;

		rdp_sgm(q[0], 1.5, ord, no, a);
		rdp_sgm(q[1], 1.5, ord, no, b);
		tune_trial_sgm(2, q, steps, 1.5, 20, ord, no, trial);
		for (size_t i = 0; i < no; i++) {
			double w = fmax(1000 * a[i], 500 * b[i]) +
			    ord[i] / 800.0;

			if (fabs(trial[i] - w) > 1e-14 * w)
				good = 0;
		}
		ok(good, "tune_trial_sgm: the pointwise maximum plus the score");
	}
	ok(tune_solve_sigma(&d, 2, q, steps, 0.01, 1e-5, 3, &sigma, &eps) ==
	    PV_E_NOROOT, "a score too noisy-free for the target: no sigma");
}

int
main(void)
{
	test_reference();
	test_mean();
	test_sampler();
	test_parse();
	test_solve();
	return tap_done();
}
