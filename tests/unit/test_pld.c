/*
 * Unit tests of the PLD accountant (lib/dp/pld.h).
 *
 * Known answers:
 *  - q = 1 is the Gaussian mechanism, whose privacy loss is N(mu, 2 mu),
 *    mu = 1/(2 sigma^2), and T steps are one Gaussian with sigma/sqrt(T):
 *    the exact epsilon(delta) and delta(eps) are the analytic Gaussian
 *    mechanism's (Balle and Wang 2018; lib/dp/rdp.h rdp_agm_*);
 *  - one step of the subsampled Gaussian has a closed-form delta(eps),
 *    written out again here from the definitions (not from lib/dp/pld.c):
 *    connect the dots must reproduce it at every grid point and never
 *    fall below it between them;
 *  - tests/data/accounting/sgm_epsilon_pld.csv (README.md there):
 *    Google dp_accounting's PLDAccountant (grid 1e-4, connect the dots)
 *    and Opacus' PRV accountant (within 0.01 above the true value), for
 *    every row whose PLD status is ok; also the RDP bound (lib/dp/rdp.h).
 *
 * Run from the repository root (tests/run does).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pld.h"
#include "rdp.h"
#include "tap.h"

#define CSV "tests/data/accounting/sgm_epsilon_pld.csv"
#define MAXROWS 1024

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the reference table ---- */

struct row {
	double q, sigma, delta, pld, prv, rdp;
	uint64_t steps;
	int ok;			/* pld_status == ok */
};

static int
col(char **f, int nf, const char *name)
{
	for (int i = 0; i < nf; i++)
		if (strcmp(f[i], name) == 0)
			return i;
	return -1;
}

static int
split(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	for (char *p = line; n < max;) {
		char *c = strchr(p, ',');

		f[n++] = p;
		if (c == NULL)
			return n;
		*c = '\0';
		p = c + 1;
	}
	return -1;
}

static int
load(struct row *r, int max)
{
	FILE *fp = fopen(CSV, "r");
	char line[1024], *f[16];
	int n = 0, nf, iq, is, it, id, ip, iv, ir, ist;

	if (fp == NULL || fgets(line, sizeof(line), fp) == NULL)
		return -1;
	nf = split(line, f, 16);
	iq = col(f, nf, "q");
	is = col(f, nf, "sigma");
	it = col(f, nf, "steps");
	id = col(f, nf, "delta");
	ip = col(f, nf, "eps_pld_dp_accounting");
	iv = col(f, nf, "eps_prv_opacus");
	ir = col(f, nf, "eps_rdp_dp_accounting");
	ist = col(f, nf, "pld_status");
	if (iq < 0 || is < 0 || it < 0 || id < 0 || ip < 0 || iv < 0 ||
	    ir < 0 || ist < 0)
		return -1;
	while (n < max && fgets(line, sizeof(line), fp) != NULL) {
		if (split(line, f, 16) != nf)
			return -1;
		r[n].q = strtod(f[iq], NULL);
		r[n].sigma = strtod(f[is], NULL);
		r[n].steps = strtoull(f[it], NULL, 10);
		r[n].delta = strtod(f[id], NULL);
		r[n].pld = strtod(f[ip], NULL);
		r[n].prv = strtod(f[iv], NULL);
		r[n].rdp = strtod(f[ir], NULL);
		r[n].ok = strcmp(f[ist], "ok") == 0;
		n++;
	}
	fclose(fp);
	return n;
}

/* ---- independent closed forms ---- */

static double
Phic(double z)			/* 1 - Phi(z) */
{
	return 0.5 * erfc(z / sqrt(2.0));
}

/*
 * delta(eps) of one step, the larger of the two directions.  Remove:
 * P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2).  The loss exceeds eps
 * iff x > x_eps with exp((2x-1)/(2 s^2)) = (e^eps - 1 + q)/q, so
 * delta = P(X > x) - e^eps Q(X > x).  Add direction: P, Q swapped, the
 * loss exceeds eps iff x < x' with exp((2x'-1)/(2 s^2)) =
 * (e^-eps - 1 + q)/q.
 */
static double
delta_one(double q, double s, double eps)
{
	double dr, da, c, x;

	c = expm1(eps) + q;
	if (c <= 0) {
		dr = -expm1(eps);
	} else {
		x = s * s * log(c / q) + 0.5;
		dr = (1 - q) * Phic(x / s) + q * Phic((x - 1) / s) -
		    exp(eps) * Phic(x / s);
	}
	c = expm1(-eps) + q;
	if (c <= 0) {
		da = 0;
	} else {
		x = s * s * log(c / q) + 0.5;
		da = Phic(-x / s) - exp(eps) * ((1 - q) * Phic(-x / s) +
		    q * Phic((1 - x) / s));
	}
	return dr > da ? dr : da;
}

/* ---- tests ---- */

static void
test_params(void)
{
	struct pld *p = NULL;
	double e;

	ok(pld_sgm_epsilon(-0.1, 1, 10, 1e-5, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(1.01, 1, 10, 1e-5, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(NAN, 1, 10, 1e-5, 0, &e) == PLD_E_PARAM,
	    "q outside [0, 1] is rejected");
	ok(pld_sgm_epsilon(0.1, 0, 10, 1e-5, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, 0.04, 10, 1e-5, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, INFINITY, 10, 1e-5, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, NAN, 10, 1e-5, 0, &e) == PLD_E_PARAM,
	    "sigma below PLD_MIN_SIGMA or not finite is rejected");
	ok(pld_sgm_epsilon(0.1, 1, 10, -1e-5, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, 1, 10, 1.5, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, 1, 10, NAN, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_delta(0.1, 1, 10, -1, 0, &e) == PLD_E_PARAM &&
	    pld_sgm_delta(0.1, 1, 10, NAN, 0, &e) == PLD_E_PARAM,
	    "delta outside [0, 1] or a negative eps is rejected");
	ok(pld_sgm_epsilon(0.1, 1, 10, 1e-5, -1e-4, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, 1, 10, 1e-5, 5e-10, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, 1, 10, 1e-5, 2, &e) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, 1, 10, 1e-5, NAN, &e) == PLD_E_PARAM,
	    "a grid outside [PLD_MIN_GRID, 1] (other than 0) is rejected");
	ok(pld_sgm_epsilon(0.1, 1, PLD_MAX_STEPS + 1, 1e-5, 0, &e) ==
	    PLD_E_PARAM && pld_sgm_new(0.1, 1, 10, 0, NULL) == PLD_E_PARAM &&
	    pld_sgm_epsilon(0.1, 1, 10, 1e-5, 0, NULL) == PLD_E_PARAM,
	    "too many steps or a NULL output is rejected");
	ok(pld_sgm_epsilon(0.01, 1.1, 10000, 1e-5, 1e-9, &e) == PLD_E_SIZE &&
	    pld_sgm_epsilon(1, 0.5, 10000, 1e-5, 1e-5, &e) == PLD_E_SIZE,
	    "an explicit grid too fine for PLD_MAX_POINTS gives PLD_E_SIZE");
	ok(strcmp(pld_strerror(PLD_E_SIZE), "loss grid too fine: too many "
	    "points") == 0 && strcmp(pld_strerror(PLD_E_PARAM),
	    "argument out of range") == 0 &&
	    strcmp(pld_strerror(42), "unknown error") == 0,
	    "pld_strerror names the codes");
	pld_free(NULL);
	ok(pld_sgm_new(0, 1, 10, 0, &p) == 0 && pld_epsilon(p, 0, &e) == 0 &&
	    e == 0, "q = 0 costs nothing, even at delta = 0");
	pld_free(p);
	ok(pld_sgm_epsilon(0.3, 1, 0, 1e-6, 0, &e) == 0 && e == 0,
	    "zero steps cost nothing");
	ok(pld_sgm_epsilon(0.01, 1, 100, 0, 0, &e) == 0 && isinf(e) &&
	    pld_sgm_epsilon(0.01, 1, 100, 1, 0, &e) == 0 && e == 0,
	    "delta = 0 gives infinity (the truncated tail), delta = 1 gives 0");
}

/* q = 1, one step: the analytic Gaussian mechanism. */
static void
test_gaussian_one(void)
{
	static const double sig[] = { 0.5, 0.8, 1, 2, 4, 8, 30 };
	static const double del[] = { 1e-2, 1e-5, 1e-6, 1e-10 };
	double worst = 0, worst_below = 0, wd = 0;
	int bad = 0;

	for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
		struct pld *p;
		double h;

		if (pld_sgm_new(1, sig[i], 1, 0, &p) != 0) {
			bad++;
			continue;
		}
		h = pld_grid(p);
		for (size_t j = 0; j < sizeof(del) / sizeof(del[0]); j++) {
			double e, ea;

			if (pld_epsilon(p, del[j], &e) != 0 ||
			    rdp_agm_epsilon(sig[i], del[j], &ea) != 0) {
				bad++;
				continue;
			}
			if (fabs(e - ea) > worst)
				worst = fabs(e - ea);
			if (ea - e > worst_below)
				worst_below = ea - e;
			/* Between grid points connect the dots is a chord:
			 * its error is second order, h^2/8 times delta''/
			 * delta', which is at most about z / (loss std)
			 * = 7 sigma for delta >= 1e-10. */
			if (fabs(e - ea) > h * h * (1 + sig[i]) + 1e-9 * ea)
				bad++;
		}
		for (double eps = 0; eps < 12; eps += 0.77) {
			double d, da;

			if (pld_delta(p, eps, &d) != 0 ||
			    rdp_agm_delta(sig[i], eps, &da) != 0) {
				bad++;
				continue;
			}
			if (da > 1e-300 && da - d > wd * da)
				wd = (da - d) / da;
			if (d < da * (1 - 1e-9) - 1e-15 ||
			    d > da + h * h + 1e-15)
				bad++;
		}
		pld_free(p);
	}
	ok(bad == 0 && worst_below < 1e-9,
	    "q = 1, one step: epsilon and delta equal the analytic Gaussian "
	    "mechanism's within h^2 (1 + sigma), never below (%d failures)",
	    bad);
	printf("# q=1, T=1: worst |eps - agm| %.3g, worst shortfall %.3g, "
	    "worst relative delta shortfall %.3g\n", worst, worst_below, wd);
}

/* q = 1, T steps: one Gaussian with sigma / sqrt(T).  Connect the dots
 * moves each step's mean loss up by u (h - u) / 2 <= h^2 / 8 (u: the
 * loss's offset in its bucket) and adds at most h^2 / 4 to its variance,
 * so epsilon ~ mean + z std grows by at most about T h^2 / 8 + z sqrt(T)
 * sigma h^2 / 8, plus the chord error of one step (above). */
static void
test_gaussian_composed(void)
{
	static const double sig[] = { 0.8, 2, 8 };
	static const uint64_t st[] = { 2, 10, 1000, 10000 };
	double worst = 0, worst_below = 0;
	int bad = 0;

	for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
		for (size_t j = 0; j < sizeof(st) / sizeof(st[0]); j++) {
			struct pld *p;
			double e, ea, h, T = (double)st[j];

			if (pld_sgm_new(1, sig[i], st[j], 0, &p) != 0) {
				bad++;
				continue;
			}
			h = pld_grid(p);
			if (pld_epsilon(p, 1e-6, &e) != 0 ||
			    rdp_agm_epsilon(sig[i] / sqrt(T), 1e-6, &ea) != 0) {
				bad++;
				pld_free(p);
				continue;
			}
			if (e < ea - 1e-9 * ea || e > ea + h * h *
			    (T / 4 + sig[i] * sqrt(T) + 1 + sig[i]) + 1e-9 * ea)
				bad++;
			if (fabs(e - ea) / ea > worst)
				worst = fabs(e - ea) / ea;
			if ((ea - e) / ea > worst_below)
				worst_below = (ea - e) / ea;
			pld_free(p);
		}
	}
	ok(bad == 0, "q = 1, T steps: epsilon equals the analytic Gaussian "
	    "mechanism's at sigma/sqrt(T) within the discretisation error, "
	    "never below (%d failures)", bad);
	printf("# q=1 composed: worst relative error %.3g, worst relative "
	    "shortfall %.3g\n", worst, worst_below);
}

/*
 * Small deltas: the FFT's rounding noise (about 1e-16 relative, raised
 * to the power T) swamps the true tail masses below some delta.  Before
 * the noise was charged, epsilon fell below the exact value there (by
 * 0.0015 at delta = 1e-11 for sigma = 2, T = 1000); now it must stay
 * above it for every delta, becoming infinite when delta is below the
 * noise or PLD_TAIL_MASS.
 */
static void
test_small_delta(void)
{
	static const double sig[] = { 2, 8, 30 };
	static const uint64_t st[] = { 1000, 10000, 100000 };
	int bad = 0, ninf = 0;
	double floor_d = 0;

	for (size_t i = 0; i < sizeof(sig) / sizeof(sig[0]); i++) {
		struct pld *p;
		double se = sig[i] / sqrt((double)st[i]);

		if (pld_sgm_new(1, sig[i], st[i], 0, &p) != 0) {
			bad++;
			continue;
		}
		for (double lg = -3; lg > -16.1; lg -= 0.25) {
			double d = pow(10, lg), e, ea;

			if (pld_epsilon(p, d, &e) != 0 ||
			    rdp_agm_epsilon(se, d, &ea) != 0) {
				bad++;
				continue;
			}
			if (isinf(e)) {
				ninf++;
				if (d > floor_d)
					floor_d = d;
			} else if (e < ea - 1e-9 * ea) {
				bad++;
			}
		}
		pld_free(p);
	}
	ok(bad == 0 && ninf > 0, "q = 1, delta from 1e-3 to 1e-16: epsilon "
	    "never below the analytic Gaussian's (%d below)", bad);
	printf("# largest delta with an infinite epsilon: %.3g\n", floor_d);
}

/* One step, q < 1: delta(eps) exact at grid points, never below between
 * them, both directions. */
static void
test_one_step(void)
{
	static const double qs[] = { 0.001, 0.01, 0.2, 0.5, 0.9 };
	static const double sig[] = { 0.5, 1, 4 };
	double worst_on = 0, worst_off = 0;
	int bad = 0;

	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		for (size_t j = 0; j < sizeof(sig) / sizeof(sig[0]); j++) {
			struct pld *p;
			double h;

			if (pld_sgm_new(qs[i], sig[j], 1, 0, &p) != 0) {
				bad++;
				continue;
			}
			h = pld_grid(p);
			for (int k = 0; k < 40000; k += 397) {
				double eps = k * h, d, dx;

				pld_delta(p, eps, &d);
				dx = delta_one(qs[i], sig[j], eps);
				if (dx < 1e-12)
					break;
				if (fabs(d - dx) / dx > worst_on)
					worst_on = fabs(d - dx) / dx;
				if (fabs(d - dx) > 1e-9 * dx)
					bad++;
				/* A third of the way to the next point. */
				pld_delta(p, eps + h / 3, &d);
				dx = delta_one(qs[i], sig[j], eps + h / 3);
				if ((dx - d) / dx > worst_off)
					worst_off = (dx - d) / dx;
				if (d < dx * (1 - 1e-9))
					bad++;
			}
			pld_free(p);
		}
	}
	ok(bad == 0, "one step: delta(eps) is exact at grid points and "
	    "never below the truth between them (%d failures)", bad);
	printf("# one step: worst relative delta error at grid points %.3g, "
	    "worst shortfall between them %.3g\n", worst_on, worst_off);
}

/*
 * The reference table, every row whose PLD value exists (all steps:
 * the default grid keeps each query under about 0.1 s).
 *
 * dp_accounting's get_epsilon_for_delta sums exp(-loss) p(loss) over the
 * tail; above a loss of about 745 that underflows to 0 and it returns
 * the loss at which the tail mass reaches delta, about 1 more than the
 * hockey-stick solution.  So where its value exceeds 700 we are below
 * it by up to about 1 (at q = 1 we match the exact analytic Gaussian
 * there: test_gaussian_composed), which the 1% tolerance covers.  Below
 * 700 both compute the same connect-the-dots PLD, and a second, tight
 * check asserts where our default grid is dp_accounting's 1e-4 that we
 * are never below it by more than 1e-6 relative, nor above it by more
 * than 1e-5 relative (the rounding noise we charge moves epsilon by up to
 * about 2e-6 at 10^5 steps).  Where our grid h is coarser (large
 * epsilon), we may exceed it by the extra discretisation cost, under
 * T (h^2 - 1e-8) / 4 (measured: up to 1.9 times T (h^2 - 1e-8) / 12, as
 * test_gaussian_composed explains).  Where it is finer (one step's loss
 * narrower than 4e-4: q = 0.001 with sigma >= 4), we must not exceed it:
 * there dp_accounting's grid inflates the loss's spread, and we are up
 * to 9% lower (but never below Opacus, see below).
 */
static void
test_reference(void)
{
	static struct row r[MAXROWS];
	int n = load(r, MAXROWS), cnt = 0, bad_ref = 0, bad_prv = 0;
	int bad_tight = 0, bad_rdp = 0, fail = 0, nprv = 0, ntight = 0;
	double w_rel = 0, w_tight = 0, w_prv = 1e300, w_rdp = -1e300, t = 0;
	double tmax = 0;
	int i_rel = -1, i_tight = -1, i_prv = -1, i_rdp = -1, i_t = -1;
	int nb = 0, nfine = 0;
	double w_abs = 0, w_fine = 0;
	struct pld *p = NULL;
	double pq = -1, ps = -1;
	uint64_t pt = 0;

	ok(n > 300, "read %d rows of %s", n, CSV);
	for (int i = 0; i < n; i++) {
		double e, ep, er, t0, dt, err, h, slack;

		if (!r[i].ok)
			continue;
		cnt++;
		/* Rows differing only in delta share one PLD. */
		if (p == NULL || r[i].q != pq || r[i].sigma != ps ||
		    r[i].steps != pt) {
			pld_free(p);
			p = NULL;
			t0 = cpu_now();
			if (pld_sgm_new(r[i].q, r[i].sigma, r[i].steps, 0,
			    &p) != 0) {
				fail++;
				continue;
			}
			dt = cpu_now() - t0;
			nb++;
			t += dt;
			if (dt > tmax) {
				tmax = dt;
				i_t = i;
			}
			pq = r[i].q;
			ps = r[i].sigma;
			pt = r[i].steps;
		}
		if (pld_epsilon(p, r[i].delta, &e) != 0 ||
		    pld_epsilon(p, r[i].delta * (1 - 1e-3), &ep) != 0) {
			fail++;
			continue;
		}
		h = pld_grid(p);
		err = fabs(e - r[i].pld);
		if (err > fmax(0.01, 0.01 * r[i].pld))
			bad_ref++;
		if (err / r[i].pld > w_rel) {
			w_rel = err / r[i].pld;
			i_rel = i;
		}
		if (err > w_abs)
			w_abs = err;
		if (r[i].pld < 700) {
			ntight++;
			slack = h > 1e-4 ? (double)r[i].steps *
			    (h * h - 1e-8) / 4 : 0;
			if ((h >= 1e-4 &&
			    e < r[i].pld - 1e-6 * fmax(1, r[i].pld)) ||
			    e > r[i].pld + 1e-5 * fmax(1, r[i].pld) + slack)
				bad_tight++;
			if (h == 1e-4 && err / r[i].pld > w_tight) {
				w_tight = err / r[i].pld;
				i_tight = i;
			}
			if (h < 1e-4) {
				nfine++;
				if ((r[i].pld - e) / r[i].pld > w_fine)
					w_fine = (r[i].pld - e) / r[i].pld;
			}
		}
		/*
		 * Opacus' PRV value is an upper bound within eps_error =
		 * 0.01 of the true epsilon at delta - delta_error, with
		 * delta_error = delta/1000 (Gopi et al. 2021); ep, our
		 * value there, bounds that truth from above, so ep should
		 * not be below prv - 0.01.  With delta itself the check
		 * fails where epsilon is large (at q = 1, sigma = 1,
		 * T = 1000, PRV exceeds the exact analytic-Gaussian value
		 * by 0.0169, 0.0073 of it from the delta shift), and even
		 * so PRV overshoots by up to 0.01096 where epsilon is tiny
		 * (q = 0.001, sigma = 2, T = 1: 0.0125 against 0.0015,
		 * where dp_accounting agrees with us to 1e-9): allow 0.012.
		 */
		if (isfinite(r[i].prv)) {
			nprv++;
			if (ep < r[i].prv - 0.012)
				bad_prv++;
			if (ep - r[i].prv < w_prv) {
				w_prv = ep - r[i].prv;
				i_prv = i;
			}
		}
		if (rdp_sgm_epsilon(r[i].q, r[i].sigma, r[i].steps,
		    r[i].delta, NULL, 0, RDP_CONV_IMPROVED, &er, NULL) != 0) {
			fail++;
			continue;
		}
		if (e > er + 1e-3)
			bad_rdp++;
		if (e - er > w_rdp) {
			w_rdp = e - er;
			i_rdp = i;
		}
	}
	pld_free(p);
	ok(fail == 0, "all %d rows with a PLD value computed", cnt);
	ok(bad_ref == 0, "epsilon within max(0.01, 1%%) of dp_accounting's "
	    "PLD value (%d outside)", bad_ref);
	ok(bad_tight == 0, "below 700, epsilon within -1e-6/+1e-5 relative "
	    "of dp_accounting's PLD value, plus the cost of a coarser grid, "
	    "minus the gain of a finer one (%d of %d outside)", bad_tight,
	    ntight);
	ok(bad_prv == 0, "epsilon at delta (1 - 1e-3) never below Opacus' "
	    "PRV value - 0.012 (%d of %d below)", bad_prv, nprv);
	ok(bad_rdp == 0, "epsilon never above the RDP epsilon + 1e-3 "
	    "(%d above)", bad_rdp);
	if (i_rel >= 0)
		printf("# worst relative difference from dp_accounting PLD: "
		    "%.3g (q=%g sigma=%g T=%llu delta=%g, eps %.6g); worst "
		    "absolute %.3g\n", w_rel, r[i_rel].q, r[i_rel].sigma,
		    (unsigned long long)r[i_rel].steps, r[i_rel].delta,
		    r[i_rel].pld, w_abs);
	if (i_tight >= 0)
		printf("# ... where its eps < 700 and our grid is 1e-4 too: "
		    "%.3g (q=%g sigma=%g T=%llu delta=%g)\n", w_tight,
		    r[i_tight].q, r[i_tight].sigma,
		    (unsigned long long)r[i_tight].steps, r[i_tight].delta);
	printf("# %d rows on a finer grid, up to %.3g relative below "
	    "dp_accounting\n", nfine, w_fine);
	if (i_prv >= 0)
		printf("# smallest eps(0.999 delta) - eps_prv_opacus: %.4g "
		    "(q=%g sigma=%g T=%llu delta=%g)\n", w_prv, r[i_prv].q,
		    r[i_prv].sigma, (unsigned long long)r[i_prv].steps,
		    r[i_prv].delta);
	if (i_rdp >= 0)
		printf("# largest eps - eps_rdp: %.4g (q=%g sigma=%g T=%llu "
		    "delta=%g)\n", w_rdp, r[i_rdp].q, r[i_rdp].sigma,
		    (unsigned long long)r[i_rdp].steps, r[i_rdp].delta);
	if (nb > 0 && i_t >= 0)
		printf("# CPU time per PLD (%d built): mean %.3f s, max %.3f s "
		    "(q=%g sigma=%g T=%llu)\n", nb, t / nb, tmax, r[i_t].q,
		    r[i_t].sigma, (unsigned long long)r[i_t].steps);
}

/* Monotonicity and the handle API. */
static void
test_handle(void)
{
	struct pld *p;
	double e1, e2, e3, d, t0, dt;
	int good;

	t0 = cpu_now();
	good = pld_sgm_new(0.01, 1.1, 10000, 0, &p) == 0;
	dt = cpu_now() - t0;
	ok(good, "the flagship query builds (q=0.01, sigma=1.1, T=10^4)");
	if (!good)
		return;
	printf("# flagship: %.3f s CPU, grid %g, %zu points\n", dt,
	    pld_grid(p), pld_points(p));
	pld_epsilon(p, 1e-5, &e1);
	pld_epsilon(p, 1e-6, &e2);
	pld_delta(p, e1, &d);
	ok(e2 > e1 && fabs(d - 1e-5) < 1e-12,
	    "epsilon grows as delta shrinks; delta(epsilon(1e-5)) = 1e-5 "
	    "(%.17g)", d);
	pld_free(p);
	pld_sgm_epsilon(0.01, 1.1, 10000, 1e-5, 5e-5, &e3);
	ok(e3 <= e1 + 1e-6 && e1 - e3 < 1e-3,
	    "a finer grid gives a slightly smaller epsilon (%.9g vs %.9g)",
	    e3, e1);
	pld_sgm_epsilon(0.01, 1.1, 10001, 1e-5, 0, &e2);
	ok(e2 > e1, "one more step costs more");
}

int
main(void)
{
	test_params();
	test_gaussian_one();
	test_gaussian_composed();
	test_small_delta();
	test_one_step();
	test_handle();
	test_reference();
	return tap_done();
}
