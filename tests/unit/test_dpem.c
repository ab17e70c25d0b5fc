/*
 * Unit tests of lib/mech/dpem, called directly: the validator rejects
 * each bad field; the plan's sensitivities, shares and multiplier against
 * the formulas of the sensitivity proof and of jgauss; the ledger curve
 * against T alpha mu^2 / 2; with negligible noise a run recovers the
 * plain statistics (k = 1: the sample mean and covariance of every
 * class, the DP start's count, sums and squares); with unit noise the
 * released counts and sums have the planned variance over many runs
 * (fixed seeds; each check fails by chance with probability below
 * 1e-6); same seed, same bytes; the row bound; the progress callback.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpem.h"
#include "fpsum.h"
#include "jgauss.h"
#include "rdp.h"
#include "rng.h"
#include "tap.h"

#define D 3
#define N0 150			/* rows of class 0 */
#define N1 90			/* rows of class 1 */

static struct rng *
seeded(uint64_t seed, const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, seed, item) != 0)
		abort();
	return r;
}

static struct dpem_params
base(void)
{
	struct dpem_params p = { .k = 2, .cov = GMM_FULL, .clip = 3,
	    .reg = 1e-6, .iters = 4, .calibrate = 0, .sigma = 2,
	    .split = { 1, 1, 1 } };
	return p;
}

static int
rel(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

static void
test_check(void)
{
	struct dpem_params p = base();

	ok(dpem_check_params(&p) == NULL, "check: the base params pass");
#define BAD(field, value) do { \
	struct dpem_params q = base(); \
	q.field = value; \
	ok(dpem_check_params(&q) != NULL, "check rejects " #field " = " \
	    #value); \
} while (0)
	BAD(k, 0);
	BAD(k, GMM_MAX_K + 1);
	BAD(cov, 3);
	BAD(cov, -1);
	BAD(clip, 0);
	BAD(clip, -1);
	BAD(clip, NAN);
	BAD(clip, INFINITY);
	BAD(reg, 0);
	BAD(reg, NAN);
	BAD(iters, 0);
	BAD(sigma, 0);
	BAD(sigma, NAN);
	BAD(split[0], 0);
	BAD(split[1], -1);
	BAD(split[2], INFINITY);
#undef BAD
	p.calibrate = 1;
	p.epsilon = 1;
	p.delta = 1e-5;
	p.sigma = 0;
	ok(dpem_check_params(&p) == NULL, "check: calibrated params pass "
	    "without sigma");
	p.epsilon = 0;
	ok(dpem_check_params(&p) != NULL, "check rejects epsilon 0");
	p.epsilon = 1;
	p.delta = 1;
	ok(dpem_check_params(&p) != NULL, "check rejects delta 1");
	p.delta = 0;
	ok(dpem_check_params(&p) != NULL, "check rejects delta 0");
}

static void
test_plan(void)
{
	struct dpem_params p = base();
	struct dpem_plan pl, pu;
	double B = p.clip, want[3] = { 1, 3, 9 }, mu2 = 0;
	size_t C = 3, d = 4;
	int good = 1;

	p.split[0] = 1;
	p.split[1] = 2;
	p.split[2] = 5;
	ok(dpem_plan(&pl, &p, C, d) == 0, "plan: sigma 2 plans");
	{
		/* e = 2 n gamma_(n + k + d + 8), gamma_m = m u / (1 - m u) */
		double n = (double)FPSUM_MAX_ROWS, m = n + 2 + (double)d + 8;
		double u = 0x1p-53, e = 2 * n * m * u / (1 - m * u);
		ok(pl.fp_margin >= e && rel(pl.fp_margin, e, 1e-6), "plan: the "
		    "float margin %.6g is 2 n gamma_(n + k + d + 8)",
		    pl.fp_margin);
	}
	for (int i = 0; i < 3; i++) {
		double lo = want[i] * (1 + pl.fp_margin);
		good &= pl.delta2_true[i] >= lo &&
		    pl.delta2_true[i] <= lo * (1 + 1e-15);
		good &= pl.p[i].sens >= pl.delta2_true[i];
		mu2 += pow(pl.p[i].sens / pl.p[i].sigma, 2);
	}
	ok(good, "plan: sensitivities 1, B, B^2 times 1 + margin, widened "
	    "by the grid (B = %g)", B);
	ok(pl.p[0].nent == C * 2 && pl.p[1].nent == C * 2 * d &&
	    pl.p[2].nent == C * 2 * d * (d + 1) / 2, "plan: values noised: "
	    "C k, C k d, C k d(d+1)/2");
	ok(rel(pl.mu * pl.mu, mu2, 1e-12), "plan: mu^2 = sum (sens/sigma)^2");
	ok(pl.mu * pl.z <= 1 && pl.mu * pl.z > 1 - 1e-6, "plan: mu z = %.12g "
	    "meets the multiplier, just", pl.mu * pl.z);
	good = 1;
	for (int i = 0; i < 3; i++)
		good &= rel(pow(pl.p[i].sens / pl.p[i].sigma, 2) / mu2,
		    p.split[i] / 8, 1e-6);
	ok(good, "plan: the parts' shares of mu^2 are the split 1:2:5");

	p.unsafe_moments_b = 1;
	ok(dpem_plan(&pu, &p, C, d) == 0 && pu.p[2].delta2 == B &&
	    pu.p[2].sigma < pl.p[2].sigma / 2, "plan: the unsafe variant "
	    "calibrates the moments to B, less noise");

	p = base();
	p.calibrate = 1;
	p.epsilon = 1;
	p.delta = 1e-5;
	p.iters = 5;
	p.init_dp = 1;
	ok(dpem_releases(&p) == 6, "releases: T + 1 with the DP start");
	ok(dpem_plan(&pl, &p, 1, 2) == 0, "plan: epsilon 1, delta 1e-5");
	{
		double e6 = jgauss_rdp_eps(pl.mu, 1e-5, 6);
		ok(e6 <= 1 && e6 > 0.999, "plan: 6 releases cost epsilon %.6f "
		    "<= 1, just", e6);
	}
	p.init_dp = 0;
	ok(dpem_plan(&pu, &p, 1, 2) == 0 && pu.z < pl.z, "plan: one release "
	    "fewer, a smaller multiplier");
	p.epsilon = 1e-6;
	p.delta = 1e-10;
	p.iters = 100000;
	ok(dpem_plan(&pl, &p, 1, 2) == PV_E_NOROOT, "plan: an unreachable "
	    "epsilon gives PV_E_NOROOT");
}

static void
test_ledger(void)
{
	struct dpem_params p = base();
	struct dpem_plan pl;
	struct ledger_entry le;
	const double *ord;
	size_t no;
	int good = 1;
	const char *v;

	p.init_dp = 1;
	p.repeats = 7;
	if (dpem_plan(&pl, &p, 2, 3) != 0)
		abort();
	memset(&le, 0, sizeof le);
	ok(dpem_ledger(&le, &p, &pl) == 0, "ledger: filled");
	ord = rdp_default_orders(&no);
	ok(le.norders == no && no == RDP_DEFAULT_NORDERS, "ledger: the "
	    "default orders");
	for (size_t i = 0; i < no; i++)
		good &= le.orders[i] == ord[i] && rel(le.rdp[i], 7.0 * 5 *
		    ord[i] * pl.mu * pl.mu / 2, 1e-12);
	ok(good, "ledger: rdp = repeats (T + 1) alpha mu^2 / 2");
	v = ts_meta_get(&le.params, "sigma_count");
	ok(v && strtod(v, NULL) == pl.p[0].sigma, "ledger: sigma_count");
	v = ts_meta_get(&le.params, "l2_sensitivity");
	ok(v && strtod(v, NULL) == pl.p[2].sens, "ledger: l2_sensitivity of "
	    "the moments");
	v = ts_meta_get(&le.params, "steps");
	ok(v && strcmp(v, "4") == 0, "ledger: steps");
	v = ts_meta_get(&le.params, "init_releases");
	ok(v && strcmp(v, "1") == 0, "ledger: init_releases");
	v = ts_meta_get(&le.params, "audit_releases");
	ok(v && strcmp(v, "7") == 0, "ledger: audit_releases");
	ok(ts_meta_get(&le.params, "unsafe_test_moments_b") == NULL,
	    "ledger: no unsafe mark on a safe plan");
	ts_meta_free(&le.params);
	p.repeats = 0;
	memset(&le, 0, sizeof le);
	(void)dpem_ledger(&le, &p, &pl);
	ok(ts_meta_get(&le.params, "audit_releases") == NULL &&
	    rel(le.rdp[0], 5 * ord[0] * pl.mu * pl.mu / 2, 1e-12),
	    "ledger: one release without repeats");
	ts_meta_free(&le.params);
}

/* Rows of two classes inside the ball of radius 10. */
static void
make_rows(double *X, size_t *start)
{
	struct rng *r = seeded(3, "dpem-rows");
	static const double off[2][D] = { { 1, 2, -1 }, { -2, 0.5, 1.5 } };

	start[0] = 0;
	start[1] = N0;
	start[2] = N0 + N1;
	for (size_t i = 0; i < N0 + N1; i++)
		for (size_t a = 0; a < D; a++)
			X[i * D + a] = off[i >= N0][a] + 4 * ((double)rng_bits(r, 53) * 0x1p-53 -
			    0.5) * (double)(a + 1) / 3;
	rng_free(r);
}

/* The sample mean and biased covariance of rows lo .. hi-1. */
static void
moments(const double *X, size_t lo, size_t hi, double *m, double *S)
{
	double n = (double)(hi - lo);

	memset(m, 0, D * sizeof *m);
	memset(S, 0, D * D * sizeof *S);
	for (size_t i = lo; i < hi; i++)
		for (size_t a = 0; a < D; a++)
			m[a] += X[i * D + a] / n;
	for (size_t i = lo; i < hi; i++)
		for (size_t a = 0; a < D; a++)
			for (size_t b = 0; b < D; b++)
				S[a * D + b] += (X[i * D + a] - m[a]) *
				    (X[i * D + b] - m[b]) / n;
}

static size_t nprog;
static double last_done, last_total;

static void
progress(void *ctx, double done, double total)
{
	(void)ctx;
	nprog++;
	last_done = done;
	last_total = total;
}

/* With noise of sd about 1e-5 and k = 1 (every responsibility 1), an
 * iteration's M-step is the sample mean and covariance of each class. */
static void
test_recovery(const double *X, const size_t *start)
{
	for (int type = GMM_FULL; type <= GMM_SPHERICAL; type++) {
		for (int init_dp = 0; init_dp <= 1; init_dp++) {
			struct dpem_params p = base();
			struct dpem_plan pl;
			struct dpem *e;
			struct rng *r = seeded(11, "dpem-recovery");
			double em = 0, ec = 0, pri[2];
			int rc;

			p.k = 1;
			p.cov = type;
			p.clip = 10;
			p.sigma = 1e-7;
			p.iters = 2;
			p.init_dp = init_dp;
			p.stats = 1;
			p.progress = progress;
			nprog = 0;
			if (dpem_plan(&pl, &p, 2, D) != 0 ||
			    dpem_new(&e, &p, &pl, 2, D, 2) != 0)
				abort();
			rc = dpem_run(e, r, X, start, NULL);
			ok(rc == 0, "run %s%s: 0", gmm_cov_name(type),
			    init_dp ? " (DP start)" : "");
			for (size_t c = 0; c < 2; c++) {
				const struct gmm *g = dpem_model(e, c);
				double m[D], S[D * D], tr = 0;

				moments(X, start[c], start[c + 1], m, S);
				for (size_t a = 0; a < D; a++) {
					em = fmax(em, fabs(g->mu[a] - m[a]));
					tr += S[a * D + a] / D;
				}
				for (size_t a = 0; a < D; a++)
					for (size_t b = 0; b < D; b++) {
						double want = S[a * D + b] +
						    (a == b ? p.reg : 0), got;
						if (type == GMM_FULL)
							got = g->cov[a * D + b];
						else if (a != b)
							continue;
						else if (type == GMM_DIAG)
							got = g->cov[a];
						else
							got = g->cov[0], want =
							    tr + p.reg;
						ec = fmax(ec, fabs(got - want));
					}
				ok(g->w[0] == 1, "run: one component, weight 1");
			}
			ok(em < 1e-4 && ec < 1e-3, "run %s: the means (%.2g) "
			    "and covariances (%.2g) of each class", 
			    gmm_cov_name(type), em, ec);
			dpem_priors(e, pri);
			ok(fabs(pri[0] - (double)N0 / (N0 + N1)) < 1e-6 &&
			    fabs(pri[0] + pri[1] - 1) < 1e-15, "run: the priors "
			    "are the classes' shares");
			ok(nprog == 2 && last_done == 2 && last_total == 2,
			    "run: progress after each iteration");
			if (init_dp) {
				double v[1 + 2 * D], s = 0, q = 0;

				dpem_init_stats(e, 1, v);
				for (size_t i = start[1]; i < start[2]; i++) {
					s += X[i * D];
					q += X[i * D + 2] * X[i * D + 2];
				}
				ok(fabs(v[0] - N1) < 1e-4 &&
				    fabs(v[1] - s) < 1e-3 &&
				    fabs(v[1 + D + 2] - q) < 1e-3,
				    "DP start: count, sums, squares of class 1");
			}
			{
				const double *tr = dpem_trace(e, 0);
				ok(tr && fabs(tr[(1 + D + gmm_mom_len(type,
				    D))] - N0) < 1e-4, "stats: the count of "
				    "iteration 2");
			}
			dpem_free(e);
			rng_free(r);
		}
	}
}

/* Released counts and sums, k = 1, one class of 5 rows: count = 5 +
 * noise, sums = sum x + noise, with the planned sd, over R runs. */
static void
test_variance(void)
{
	enum { R = 6000, NR = 5 };
	struct dpem_params p = base();
	struct dpem_plan pl;
	struct dpem *e;
	struct rng *r = seeded(17, "dpem-variance");
	double X[NR] = { 0.5, -0.25, 1, 0.75, -1 }, sx = 1;
	size_t start[2] = { 0, NR };
	double m[2] = { 0, 0 }, v[2] = { 0, 0 }, sd[2];

	p.k = 1;
	p.clip = 1;
	p.sigma = 1;
	p.iters = 1;
	p.stats = 1;
	if (dpem_plan(&pl, &p, 1, 1) != 0 ||
	    dpem_new(&e, &p, &pl, 1, 1, 1) != 0)
		abort();
	sd[0] = pl.p[0].sigma;
	sd[1] = pl.p[1].sigma;
	for (int t = 0; t < R; t++) {
		const double *tr;
		double z[2];

		if (dpem_run(e, r, X, start, NULL) != 0)
			abort();
		tr = dpem_trace(e, 0);
		z[0] = tr[0] - NR;
		z[1] = tr[1] - sx;
		for (int i = 0; i < 2; i++) {
			m[i] += z[i] / R;
			v[i] += z[i] * z[i] / R;
		}
	}
	for (int i = 0; i < 2; i++) {
		/* mean: 5 sd / sqrt(R); variance: 5 sqrt(2 / R) relative */
		ok(fabs(m[i]) < 5 * sd[i] / sqrt(R), "noise of the %s: mean "
		    "%.3g (sd %.3g)", dpem_part_name(i), m[i], sd[i]);
		ok(fabs(v[i] / (sd[i] * sd[i]) - 1) < 5 * sqrt(2.0 / R),
		    "noise of the %s: variance / sigma^2 = %.4f",
		    dpem_part_name(i), v[i] / (sd[i] * sd[i]));
	}
	dpem_free(e);
	rng_free(r);
}

static void
test_same_seed(const double *X, const size_t *start)
{
	struct dpem_params p = base();
	struct dpem_plan pl;
	struct dpem *e1, *e2;
	struct rng *r1 = seeded(5, "dpem-same"), *r2 = seeded(5, "dpem-same");
	struct rng *r3 = seeded(6, "dpem-same");
	const struct gmm *g1, *g2;
	size_t big[3] = { 0, 0, FPSUM_MAX_ROWS + 1 };

	p.clip = 10;
	if (dpem_plan(&pl, &p, 2, D) != 0 ||
	    dpem_new(&e1, &p, &pl, 2, D, 1) != 0 ||
	    dpem_new(&e2, &p, &pl, 2, D, 4) != 0)
		abort();
	ok(dpem_run(e1, r1, X, start, NULL) == 0 &&
	    dpem_run(e2, r2, X, start, NULL) == 0, "same seed: two runs");
	g1 = dpem_model(e1, 1);
	g2 = dpem_model(e2, 1);
	ok(memcmp(g1->mu, g2->mu, 2 * D * sizeof *g1->mu) == 0 &&
	    memcmp(g1->cov, g2->cov, 2 * D * D * sizeof *g1->cov) == 0,
	    "same seed, 1 and 4 threads: the same bytes");
	ok(dpem_run(e2, r3, X, start, NULL) == 0 &&
	    memcmp(g1->mu, dpem_model(e2, 1)->mu, 2 * D * sizeof *g1->mu) != 0,
	    "another seed: other means");
	ok(dpem_run(e1, r1, NULL, big, NULL) == PV_E_LIMIT, "more than "
	    "FPSUM_MAX_ROWS rows: PV_E_LIMIT");
	ok(dpem_model(e1, 2) == NULL, "no class 2");
	dpem_free(e1);
	dpem_free(e2);
	dpem_free(NULL);
	rng_free(r1);
	rng_free(r2);
	rng_free(r3);
}

int
main(void)
{
	double *X = malloc((N0 + N1) * D * sizeof *X);
	size_t start[3];

	make_rows(X, start);
	test_check();
	test_plan();
	test_ledger();
	test_recovery(X, start);
	test_variance();
	test_same_seed(X, start);
	free(X);
	return tap_done();
}
