/*
 * Unit tests of the RDP accountant (lib/dp/rdp.h) against the reference
 * tables in tests/data/accounting/ (README.md there defines every column:
 * values from Google's dp_accounting, Opacus, TF Privacy and an
 * independent 30-digit mpmath evaluation).  Every row of every table
 * used is checked; each TAP line covers one table and column and reports
 * the worst relative error.  extra_sgm_mpmath.csv holds further values
 * outside the reference grid (extreme q, sigma and orders), computed for
 * these tests by extra_sgm_mpmath.py (mpmath, 40 digits, quadrature of
 * the defining integral at fractional orders, exact sum at integer ones).
 *
 * Run from the repository root (tests/run does).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rdp.h"
#include "tap.h"

#define DIR "tests/data/accounting/"
#define MAXROWS 4096
#define MAXK 32		/* classes in a vote histogram */

/* ---- a CSV table: header, then rows of fields (no quoting) ---- */

struct tab {
	const char *name;
	int nc, nr;
	char *hdr[64];
	char **row[MAXROWS];
	char *buf;
};

static int
split(char *line, char **f, int max)
{
	int n = 0;

	for (char *p = line;;) {
		char *c = strchr(p, ',');

		if (n == max)
			return -1;
		f[n++] = p;
		if (c == NULL)
			break;
		*c = '\0';
		p = c + 1;
	}
	return n;
}

static struct tab *
tab_load(const char *name)
{
	char path[256];
	struct tab *t = calloc(1, sizeof(*t));
	FILE *fp;
	long len;
	char *line, *save = NULL;

	snprintf(path, sizeof(path), DIR "%s", name);
	t->name = name;
	if ((fp = fopen(path, "rb")) == NULL) {
		ok(0, "open %s", path);
		exit(tap_done());
	}
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	t->buf = malloc((size_t)len + 1);
	if (fread(t->buf, 1, (size_t)len, fp) != (size_t)len) {
		ok(0, "read %s", path);
		exit(tap_done());
	}
	t->buf[len] = '\0';
	fclose(fp);
	line = strtok_r(t->buf, "\n", &save);
	t->nc = split(line, t->hdr, 64);
	while ((line = strtok_r(NULL, "\n", &save)) != NULL &&
	    t->nr < MAXROWS) {
		char **f = calloc(64, sizeof(char *));

		if (split(line, f, 64) != t->nc) {
			ok(0, "%s: row %d has the wrong number of fields", name,
			    t->nr + 2);
			exit(tap_done());
		}
		t->row[t->nr++] = f;
	}
	return t;
}

static void
tab_free(struct tab *t)
{
	for (int r = 0; r < t->nr; r++)
		free(t->row[r]);
	free(t->buf);
	free(t);
}

static int
col(const struct tab *t, const char *c)
{
	for (int k = 0; k < t->nc; k++)
		if (strcmp(t->hdr[k], c) == 0)
			return k;
	ok(0, "%s has a column %s", t->name, c);
	exit(tap_done());
}

static const char *
str(const struct tab *t, int r, const char *c)
{
	return t->row[r][col(t, c)];
}

static double
num(const struct tab *t, int r, const char *c)
{
	char *end;
	const char *s = str(t, r, c);
	double v = strtod(s, &end);

	if (end == s || *end != '\0') {
		ok(0, "%s row %d column %s: '%s' is not a number", t->name,
		    r + 2, c, s);
		exit(tap_done());
	}
	return v;
}

/* A histogram "250;0;..." into c[]; returns the number of classes. */
static size_t
counts(const char *s, double *c)
{
	size_t k = 0;
	char *end;

	while (k < MAXK) {
		c[k++] = strtod(s, &end);
		if (*end != ';')
			break;
		s = end + 1;
	}
	return k;
}

/* The value of name=... in a "a=1;b=2" parameter list. */
static double
param(const char *s, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = s; p != NULL; p = strchr(p, ';')) {
		if (*p == ';')
			p++;
		if (strncmp(p, name, n) == 0 && p[n] == '=')
			return strtod(p + n + 1, NULL);
	}
	return NAN;
}

/* ---- comparisons: one TAP line per column ---- */

static double
relerr(double got, double want)
{
	if (got == want)
		return 0;
	if (isnan(got) || isnan(want) || isinf(got) || isinf(want))
		return INFINITY;
	if (want == 0)
		return fabs(got);
	return fabs(got - want) / fabs(want);
}

/* got[i] equals want[i] to tol relative, for the rows with use[i]. */
static void
check_rel(const char *what, int n, const double *got, const double *want,
    const int *use, double tol)
{
	double worst = 0;
	int wi = -1, m = 0;

	for (int i = 0; i < n; i++) {
		double e;

		if (use != NULL && !use[i])
			continue;
		m++;
		e = relerr(got[i], want[i]);
		if (e > worst || wi < 0) {
			worst = e;
			wi = i;
		}
	}
	ok(m > 0 && worst <= tol, "%s: %d rows, worst relative error %.3g "
	    "(tolerance %g)", what, m, worst, tol);
	if (wi >= 0)
		printf("#   worst: row %d, got %.17g, reference %.17g\n",
		    wi + 2, got[wi], want[wi]);
}

/* got[i] <= bound[i] (1 + tol) for every row with use[i]. */
static void
check_le(const char *what, int n, const double *got, const double *bound,
    const int *use, double tol)
{
	double worst = -INFINITY;
	int wi = -1, m = 0, bad = 0;

	for (int i = 0; i < n; i++) {
		double ex;

		if (use != NULL && !use[i])
			continue;
		m++;
		ex = bound[i] == 0 ? got[i] :
		    (got[i] - bound[i]) / fabs(bound[i]);
		if (isnan(got[i]))
			ex = INFINITY;
		if (ex > tol)
			bad++;
		if (ex > worst) {
			worst = ex;
			wi = i;
		}
	}
	ok(m > 0 && bad == 0, "%s: %d rows, %d violations, largest relative "
	    "excess %.3g (tolerance %g)", what, m, bad, worst, tol);
	if (wi >= 0)
		printf("#   largest: row %d, got %.17g, bound %.17g\n", wi + 2,
		    got[wi], bound[wi]);
}

/* Exact equality (orders, step counts). */
static void
check_eq(const char *what, int n, const double *got, const double *want,
    const int *use)
{
	int m = 0, bad = 0, first = -1;

	for (int i = 0; i < n; i++) {
		if (use != NULL && !use[i])
			continue;
		m++;
		if (got[i] != want[i]) {
			bad++;
			if (first < 0)
				first = i;
		}
	}
	ok(m > 0 && bad == 0, "%s: %d rows, %d differ", what, m, bad);
	if (first >= 0)
		printf("#   first: row %d, got %.17g, reference %.17g\n",
		    first + 2, got[first], want[first]);
}

/* ---- order grids of the reference libraries (README "Order grids") ---- */

static double opacus_orders[160], tfp_orders[80], pate_orders[300];
static size_t n_opacus, n_tfp, n_pate;

static void
make_orders(void)
{
	static const double tfp_lo[] = { 1.25, 1.5, 1.75, 2, 2.25, 2.5, 3,
		3.5, 4, 4.5 };
	double start = 2.0, stop = log10(500.0), step = (stop - start) / 99;

	for (int x = 1; x < 100; x++)
		opacus_orders[n_opacus++] = 1 + x / 10.0;
	for (int a = 12; a < 64; a++)
		opacus_orders[n_opacus++] = a;
	for (size_t k = 0; k < sizeof(tfp_lo) / sizeof(tfp_lo[0]); k++)
		tfp_orders[n_tfp++] = tfp_lo[k];
	for (int a = 5; a < 64; a++)
		tfp_orders[n_tfp++] = a;
	tfp_orders[n_tfp++] = 128;
	tfp_orders[n_tfp++] = 256;
	tfp_orders[n_tfp++] = 512;
	/* numpy: arange(2, 101, .5), then logspace(2, log10(500), 100) as
	 * 10 ** (i * step + start) with the last point exactly stop. */
	for (int k = 0; 2 + 0.5 * k < 101; k++)
		pate_orders[n_pate++] = 2 + 0.5 * k;
	for (int i = 0; i < 100; i++)
		pate_orders[n_pate++] = pow(10.0, i == 99 ? stop :
		    i * step + start);
}

/* Epsilon of T steps of the SGM at the given orders. */
static double
sgm_eps(double q, double sigma, double steps, double delta,
    const double *orders, size_t n, int conv, double *order)
{
	double e = NAN;
	int rc = rdp_sgm_epsilon(q, sigma, (uint64_t)steps, delta, orders, n,
	    conv, &e, order);

	return rc == 0 ? e : NAN;
}

/* ---- the tables ---- */

static double got[MAXROWS], want[MAXROWS], got2[MAXROWS], want2[MAXROWS];
static int use[MAXROWS], use2[MAXROWS];

static void
test_sgm_rdp(void)
{
	struct tab *t = tab_load("sgm_rdp_steps1.csv");
	int n = t->nr;

	for (int r = 0; r < n; r++) {
		double q = num(t, r, "q"), s = num(t, r, "sigma");
		double a = num(t, r, "order");

		if (rdp_sgm1(q, s, a, &got[r]) != 0)
			got[r] = NAN;
		want[r] = num(t, r, "rdp_mpmath");
		use[r] = a == floor(a);
		use2[r] = !use[r];
		want2[r] = num(t, r, "rdp_dp_accounting");
		got2[r] = num(t, r, "rdp_opacus");
	}
	check_rel("sgm_rdp_steps1 rdp_mpmath, integer orders", n, got, want,
	    use, 1e-9);
	check_rel("sgm_rdp_steps1 rdp_mpmath, fractional orders", n, got, want,
	    use2, 1e-6);
	check_le("sgm_rdp_steps1 rdp <= rdp_dp_accounting (an upper bound)",
	    n, got, want2, NULL, 1e-9);
	/* Opacus' signed series is accurate to a few 1e-7 here (README). */
	check_rel("sgm_rdp_steps1 rdp_opacus (signed series)", n, got, got2,
	    NULL, 1e-5);
	tab_free(t);
}

static void
test_sgm_rdp_extra(void)
{
	struct tab *t = tab_load("extra_sgm_mpmath.csv");
	int n = t->nr;

	for (int r = 0; r < n; r++) {
		double a = num(t, r, "order");

		if (rdp_sgm1(num(t, r, "q"), num(t, r, "sigma"), a,
		    &got[r]) != 0)
			got[r] = NAN;
		want[r] = num(t, r, "rdp_mpmath");
		use[r] = a == floor(a);
		use2[r] = !use[r];
	}
	check_rel("extra_sgm_mpmath rdp_mpmath, integer orders", n, got, want,
	    use, 1e-9);
	check_rel("extra_sgm_mpmath rdp_mpmath, fractional orders", n, got,
	    want, use2, 1e-6);
	tab_free(t);
}

static void
test_sgm_epsilon(void)
{
	struct tab *t = tab_load("sgm_epsilon_rdp.csv");
	int n = t->nr;
	static double o1[MAXROWS], o2[MAXROWS], o3[MAXROWS], w1[MAXROWS],
	    w2[MAXROWS], w3[MAXROWS], e2[MAXROWS], e3[MAXROWS], lim[MAXROWS];

	for (int r = 0; r < n; r++) {
		double q = num(t, r, "q"), s = num(t, r, "sigma");
		double T = num(t, r, "steps"), d = num(t, r, "delta");

		got[r] = sgm_eps(q, s, T, d, NULL, 0, RDP_CONV_IMPROVED,
		    &o1[r]);
		want[r] = num(t, r, "eps_exactrdp_dpacc");
		w1[r] = num(t, r, "order_exactrdp_dpacc");
		lim[r] = num(t, r, "eps_dp_accounting");
		/* Opacus: its grid, the same conversion without the KL
		 * shortcut and clamp, which never bind in this table. */
		e2[r] = sgm_eps(q, s, T, d, opacus_orders, n_opacus,
		    RDP_CONV_IMPROVED, &o2[r]);
		want2[r] = num(t, r, "eps_opacus");
		w2[r] = num(t, r, "order_opacus");
		e3[r] = sgm_eps(q, s, T, d, tfp_orders, n_tfp, RDP_CONV_CLASSIC,
		    &o3[r]);
		w3[r] = num(t, r, "order_tfp2020");
		got2[r] = num(t, r, "eps_tfp2020");
	}
	check_rel("sgm_epsilon_rdp eps_exactrdp_dpacc", n, got, want, NULL,
	    1e-6);
	check_eq("sgm_epsilon_rdp order_exactrdp_dpacc", n, o1, w1, NULL);
	check_le("sgm_epsilon_rdp eps <= eps_dp_accounting", n, got, lim, NULL,
	    1e-9);
	check_rel("sgm_epsilon_rdp eps_opacus (opacus orders)", n, e2, want2,
	    NULL, 1e-6);
	check_eq("sgm_epsilon_rdp order_opacus", n, o2, w2, NULL);
	check_rel("sgm_epsilon_rdp eps_tfp2020 (classic, TFP orders)", n, e3,
	    got2, NULL, 1e-6);
	check_eq("sgm_epsilon_rdp order_tfp2020", n, o3, w3, NULL);
	tab_free(t);

	t = tab_load("sgm_epsilon_pld.csv");
	n = t->nr;
	for (int r = 0; r < n; r++) {
		got[r] = sgm_eps(num(t, r, "q"), num(t, r, "sigma"),
		    num(t, r, "steps"), num(t, r, "delta"), NULL, 0,
		    RDP_CONV_IMPROVED, NULL);
		want[r] = num(t, r, "eps_rdp_dp_accounting");
	}
	check_le("sgm_epsilon_pld eps <= eps_rdp_dp_accounting", n, got, want,
	    NULL, 1e-9);
	tab_free(t);
}

static void
test_gaussian(void)
{
	struct tab *t = tab_load("gaussian_sigma.csv");
	int n = t->nr;
	static double g3[MAXROWS], w3[MAXROWS], g4[MAXROWS], w4[MAXROWS];

	for (int r = 0; r < n; r++) {
		double e = num(t, r, "epsilon"), d = num(t, r, "delta");

		if (rdp_agm_sigma(e, d, &got[r]) != 0)
			got[r] = NAN;
		want[r] = num(t, r, "sigma_analytic_dp_accounting");
		got2[r] = rdp_gaussian_sigma_classic(e, d);
		want2[r] = num(t, r, "sigma_classic");
		/* q = 1 and one step is the plain Gaussian mechanism. */
		if (rdp_sgm_solve_sigma(1, 1, d, e, NULL, 0, RDP_CONV_IMPROVED,
		    &g3[r]) != 0)
			g3[r] = NAN;
		w3[r] = num(t, r, "sigma_rdp_dp_accounting");
		if (rdp_agm_epsilon(want[r], d, &g4[r]) != 0)
			g4[r] = NAN;
		w4[r] = num(t, r, "epsilon_analytic_at_sigma_analytic");
	}
	check_rel("gaussian_sigma sigma_analytic_dp_accounting", n, got, want,
	    NULL, 1e-9);
	check_rel("gaussian_sigma sigma_classic", n, got2, want2, NULL, 1e-12);
	/* dp_accounting's bisection stops within 1e-9 of the root. */
	check_rel("gaussian_sigma sigma_rdp_dp_accounting", n, g3, w3, NULL,
	    1e-8);
	check_rel("gaussian_sigma epsilon_analytic_at_sigma_analytic", n, g4,
	    w4, NULL, 1e-9);
	tab_free(t);

	t = tab_load("gaussian_epsilon.csv");
	n = t->nr;
	for (int r = 0; r < n; r++) {
		double s = num(t, r, "sigma"), d = num(t, r, "delta");

		if (rdp_agm_epsilon(s, d, &got[r]) != 0)
			got[r] = NAN;
		want[r] = num(t, r, "eps_analytic_dp_accounting");
		got2[r] = sgm_eps(1, s, 1, d, NULL, 0, RDP_CONV_IMPROVED,
		    &g3[r]);
		want2[r] = num(t, r, "eps_rdp_dp_accounting");
		w3[r] = num(t, r, "order_rdp_dp_accounting");
	}
	check_rel("gaussian_epsilon eps_analytic_dp_accounting", n, got, want,
	    NULL, 1e-9);
	check_rel("gaussian_epsilon eps_rdp_dp_accounting", n, got2, want2,
	    NULL, 1e-9);
	check_eq("gaussian_epsilon order_rdp_dp_accounting", n, g3, w3, NULL);
	tab_free(t);
}

static void
test_laplace(void)
{
	struct tab *t = tab_load("laplace_rdp.csv");
	int n = t->nr;
	static double o[MAXROWS], wo[MAXROWS];

	for (int r = 0; r < n; r++) {
		got[r] = rdp_laplace(num(t, r, "order"), num(t, r, "b"));
		want[r] = num(t, r, "rdp_mpmath");
		want2[r] = num(t, r, "rdp_dp_accounting");
	}
	check_rel("laplace_rdp rdp_mpmath", n, got, want, NULL, 1e-9);
	check_rel("laplace_rdp rdp_dp_accounting", n, got, want2, NULL, 1e-9);
	tab_free(t);

	t = tab_load("laplace_epsilon.csv");
	n = t->nr;
	for (int r = 0; r < n; r++) {
		struct rdp_acct *a = rdp_acct_new(NULL, 0);
		double b = num(t, r, "b"), c = num(t, r, "count");

		got[r] = NAN;
		if (a != NULL && rdp_acct_add_laplace(a, b, c) == 0 &&
		    rdp_acct_epsilon(a, num(t, r, "delta"), RDP_CONV_IMPROVED,
		    &got[r], &o[r]) != 0)
			got[r] = NAN;
		rdp_acct_free(a);
		want[r] = num(t, r, "eps_rdp_dp_accounting");
		wo[r] = num(t, r, "order_rdp_dp_accounting");
		/* Basic composition of count pure (1/b)-DP releases. */
		got2[r] = c / b;
		want2[r] = num(t, r, "eps_basic_composition");
	}
	check_rel("laplace_epsilon eps_rdp_dp_accounting", n, got, want, NULL,
	    1e-9);
	check_eq("laplace_epsilon order_rdp_dp_accounting", n, o, wo, NULL);
	check_rel("laplace_epsilon eps_basic_composition", n, got2, want2,
	    NULL, 1e-15);
	tab_free(t);
}

static void
test_inverse(void)
{
	struct tab *t = tab_load("inverse_noise.csv");
	int n = t->nr;
	static double g3[MAXROWS], w3[MAXROWS], ea[MAXROWS], eb[MAXROWS],
	    tg[MAXROWS];

	for (int r = 0; r < n; r++) {
		double q = num(t, r, "q"), T = num(t, r, "steps");
		double d = num(t, r, "delta"), e = num(t, r, "target_epsilon");
		double theirs = num(t, r, "sigma_rdp_dp_accounting");

		if (rdp_sgm_solve_sigma(q, (uint64_t)T, d, e, NULL, 0,
		    RDP_CONV_IMPROVED, &got[r]) != 0)
			got[r] = NAN;
		want[r] = theirs;
		/* Where dp_accounting's loose fractional orders do not bind,
		 * its epsilon at its sigma is ours, and the roots agree. */
		use[r] = relerr(sgm_eps(q, theirs, T, d, NULL, 0,
		    RDP_CONV_IMPROVED, NULL), num(t, r, "eps_at_sigma_rdp")) <
		    1e-9;
		/* Opacus' exact RDP on its grid, bisected to 1e-9 in eps. */
		if (rdp_sgm_solve_sigma(q, (uint64_t)T, d, e, opacus_orders,
		    n_opacus, RDP_CONV_IMPROVED, &g3[r]) != 0)
			g3[r] = NAN;
		w3[r] = num(t, r, "sigma_opacus_rdp_tol1e-9");
		ea[r] = sgm_eps(q, got[r], T, d, NULL, 0, RDP_CONV_IMPROVED,
		    NULL);
		eb[r] = sgm_eps(q, got[r] * (1 - 1e-10), T, d, NULL, 0,
		    RDP_CONV_IMPROVED, NULL);
		tg[r] = e;
	}
	check_rel("inverse_noise sigma_rdp_dp_accounting (where its bound "
	    "is exact)", n, got, want, use, 1e-6);
	check_le("inverse_noise sigma <= sigma_rdp_dp_accounting", n, got, want,
	    NULL, 1e-9);
	check_rel("inverse_noise sigma_opacus_rdp_tol1e-9 (opacus orders)", n,
	    g3, w3, NULL, 1e-6);
	check_le("inverse_noise eps(sigma) <= target", n, ea, tg, NULL, 0);
	for (int r = 0; r < n; r++)
		use2[r] = !(eb[r] > tg[r]);
	{
		int bad = 0;

		for (int r = 0; r < n; r++)
			bad += use2[r];
		ok(bad == 0, "inverse_noise eps(sigma (1 - 1e-10)) > target: "
		    "%d of %d rows fail", bad, n);
	}
	tab_free(t);

	t = tab_load("inverse_steps.csv");
	n = t->nr;
	for (int r = 0; r < n; r++) {
		double q = num(t, r, "q"), s = num(t, r, "sigma");
		double d = num(t, r, "delta"), e = num(t, r, "target_epsilon");
		double theirs = num(t, r, "max_steps_rdp_dp_accounting");
		uint64_t T = 0;

		if (rdp_sgm_solve_steps(q, s, d, e, NULL, 0, RDP_CONV_IMPROVED,
		    &T) != 0)
			T = UINT64_MAX;
		got[r] = (double)T;
		want[r] = theirs;
		ea[r] = T == 0 ? 0 : sgm_eps(q, s, (double)T, d, NULL, 0,
		    RDP_CONV_IMPROVED, NULL);
		eb[r] = sgm_eps(q, s, (double)T + 1, d, NULL, 0,
		    RDP_CONV_IMPROVED, NULL);
		tg[r] = e;
		/* dp_accounting's values at T and T + 1 are exact when the
		 * optimal orders there are integers: then T must agree. */
		use[r] = relerr(theirs == 0 ? 0 : sgm_eps(q, s, theirs, d, NULL,
		    0, RDP_CONV_IMPROVED, NULL),
		    num(t, r, "eps_at_max_steps_rdp")) < 1e-9 &&
		    relerr(sgm_eps(q, s, theirs + 1, d, NULL, 0,
		    RDP_CONV_IMPROVED, NULL),
		    num(t, r, "eps_at_max_steps_plus1_rdp")) < 1e-9;
		g3[r] = -got[r];	/* ours >= theirs */
		w3[r] = -theirs;
	}
	check_eq("inverse_steps max_steps_rdp_dp_accounting (where its bound "
	    "is exact)", n, got, want, use);
	check_le("inverse_steps max_steps >= max_steps_rdp_dp_accounting", n,
	    g3, w3, NULL, 0);
	check_le("inverse_steps eps(T) <= target", n, ea, tg, NULL, 0);
	check_le("inverse_steps target < eps(T + 1)", n, tg, eb, NULL, -1e-15);
	tab_free(t);
}

static void
test_pate2018(void)
{
	struct tab *t = tab_load("pate2018_rdp.csv");
	int n = t->nr;
	static double lq[MAXROWS], wlq[MAXROWS];

	for (int r = 0; r < n; r++) {
		double c[MAXK], a = num(t, r, "order");
		size_t k = counts(str(t, r, "counts"), c);
		const char *m = str(t, r, "mechanism");
		const char *p = str(t, r, "params");

		if (strcmp(m, "gnmax") == 0) {
			double s = param(p, "sigma");

			lq[r] = rdp_pate_logq_gaussian(c, k, s);
			got[r] = rdp_pate_gnmax_dep(a, lq[r], s);
			got2[r] = rdp_pate_gnmax(a, s);
		} else if (strcmp(m, "gnmax_conf") == 0) {
			double s1 = param(p, "sigma1"), s2 = param(p, "sigma2");
			double lp = rdp_pate_logpr_answered(c, k, param(p, "t"),
			    s1);

			lq[r] = rdp_pate_logq_gaussian(c, k, s2);
			got[r] = rdp_pate_threshold_dep(a, lp, s1) +
			    exp(lp) * rdp_pate_gnmax_dep(a, lq[r], s2);
			got2[r] = rdp_gaussian(a, s1) + rdp_pate_gnmax(a, s2);
		} else {
			double l = param(p, "lambda");

			lq[r] = rdp_pate_logq_laplace(c, k, l);
			got[r] = rdp_pate_pure_dep(a, lq[r], 2 / l);
			got2[r] = rdp_pate_lnmax(a, l);
		}
		wlq[r] = num(t, r, "logq");
		want[r] = num(t, r, "rdp_data_dependent");
		want2[r] = num(t, r, "rdp_data_independent");
	}
	check_rel("pate2018_rdp logq", n, lq, wlq, NULL, 1e-9);
	check_rel("pate2018_rdp rdp_data_dependent", n, got, want, NULL, 1e-9);
	check_rel("pate2018_rdp rdp_data_independent", n, got2, want2, NULL,
	    1e-9);
	tab_free(t);
}

/* Per-query RDP curves of one pate2018 row at the PATE orders. */
static void
pate2018_curves(const struct tab *t, int r, double *dep, double *ind)
{
	double c[MAXK];
	size_t k = counts(str(t, r, "counts"), c);
	const char *m = str(t, r, "mechanism"), *p = str(t, r, "params");

	for (size_t j = 0; j < n_pate; j++) {
		double a = pate_orders[j];

		if (strcmp(m, "gnmax") == 0) {
			double s = param(p, "sigma");

			dep[j] = rdp_pate_gnmax_dep(a,
			    rdp_pate_logq_gaussian(c, k, s), s);
			ind[j] = rdp_pate_gnmax(a, s);
		} else if (strcmp(m, "gnmax_conf") == 0) {
			double s1 = param(p, "sigma1"), s2 = param(p, "sigma2");
			double lp = rdp_pate_logpr_answered(c, k, param(p, "t"),
			    s1);

			dep[j] = rdp_pate_threshold_dep(a, lp, s1) + exp(lp) *
			    rdp_pate_gnmax_dep(a, rdp_pate_logq_gaussian(c, k,
			    s2), s2);
			ind[j] = rdp_gaussian(a, s1) + rdp_pate_gnmax(a, s2);
		} else {
			double l = param(p, "lambda");

			dep[j] = rdp_pate_pure_dep(a,
			    rdp_pate_logq_laplace(c, k, l), 2 / l);
			ind[j] = rdp_pate_lnmax(a, l);
		}
	}
}

static void
test_pate2018_eps(void)
{
	struct tab *t = tab_load("pate2018_epsilon.csv");
	int n = t->nr;
	static double o1[MAXROWS], w1[MAXROWS], o2[MAXROWS], w2[MAXROWS];
	double dep[300], ind[300];

	for (int r = 0; r < n; r++) {
		double nq = num(t, r, "queries"), d = num(t, r, "delta");

		pate2018_curves(t, r, dep, ind);
		for (size_t j = 0; j < n_pate; j++) {
			dep[j] *= nq;
			ind[j] *= nq;
		}
		if (rdp_to_epsilon(pate_orders, dep, n_pate, d,
		    RDP_CONV_CLASSIC, &got[r], &o1[r]) != 0)
			got[r] = NAN;
		if (rdp_to_epsilon(pate_orders, ind, n_pate, d,
		    RDP_CONV_CLASSIC, &got2[r], &o2[r]) != 0)
			got2[r] = NAN;
		want[r] = num(t, r, "eps_data_dependent");
		w1[r] = num(t, r, "order_data_dependent");
		want2[r] = num(t, r, "eps_data_independent");
		w2[r] = num(t, r, "order_data_independent");
	}
	/* The logspace orders differ from numpy's in the last bit on some
	 * machines (numpy may evaluate 10**y with SIMD code, not libm). */
	check_rel("pate2018_epsilon eps_data_dependent", n, got, want, NULL,
	    1e-9);
	check_rel("pate2018_epsilon order_data_dependent", n, o1, w1, NULL,
	    1e-15);
	check_rel("pate2018_epsilon eps_data_independent", n, got2, want2,
	    NULL, 1e-9);
	check_rel("pate2018_epsilon order_data_independent", n, o2, w2, NULL,
	    1e-15);
	tab_free(t);
}

static void
test_pate2017(void)
{
	struct tab *t = tab_load("pate2017_logmgf.csv");
	int n = t->nr;
	static double qn[MAXROWS], wq[MAXROWS], l1[MAXROWS], w1[MAXROWS],
	    l2[MAXROWS], w2[MAXROWS];

	for (int r = 0; r < n; r++) {
		double c[MAXK], g = num(t, r, "gamma");
		size_t k = counts(str(t, r, "counts"), c);
		int l = (int)num(t, r, "moment_l");

		qn[r] = exp(rdp_pate_logq_laplace(c, k, 1 / g));
		wq[r] = num(t, r, "q_noisy_max");
		l1[r] = rdp_pate2017_logmgf(qn[r], 2 * g, l);
		w1[r] = num(t, r, "logmgf_data_dependent");
		l2[r] = rdp_pate2017_logmgf(1, 2 * g, l);
		w2[r] = num(t, r, "logmgf_data_independent");
	}
	check_rel("pate2017_logmgf q_noisy_max", n, qn, wq, NULL, 1e-9);
	check_rel("pate2017_logmgf logmgf_data_dependent", n, l1, w1, NULL,
	    1e-9);
	check_rel("pate2017_logmgf logmgf_data_independent", n, l2, w2, NULL,
	    1e-9);
	tab_free(t);

	t = tab_load("pate2017_epsilon.csv");
	n = t->nr;
	for (int r = 0; r < n; r++) {
		double c[MAXK], g = num(t, r, "gamma"), ld[8], li[8];
		size_t k = counts(str(t, r, "counts"), c);
		double q = exp(rdp_pate_logq_laplace(c, k, 1 / g));
		double nq = num(t, r, "queries"), d = num(t, r, "delta");
		int b1 = 0, b2 = 0;

		qn[r] = q;
		wq[r] = num(t, r, "q_noisy_max");
		for (int l = 1; l <= 8; l++) {
			ld[l - 1] = rdp_pate2017_logmgf(q, 2 * g, l);
			li[l - 1] = rdp_pate2017_logmgf(1, 2 * g, l);
		}
		if (rdp_pate2017_epsilon(ld, 8, nq, d, &got[r], &b1) != 0)
			got[r] = NAN;
		if (rdp_pate2017_epsilon(li, 8, nq, d, &got2[r], &b2) != 0)
			got2[r] = NAN;
		l1[r] = b1;
		l2[r] = b2;
		want[r] = num(t, r, "eps_data_dependent");
		w1[r] = num(t, r, "best_l_data_dependent");
		want2[r] = num(t, r, "eps_data_independent");
		w2[r] = num(t, r, "best_l_data_independent");
	}
	check_rel("pate2017_epsilon q_noisy_max", n, qn, wq, NULL, 1e-9);
	check_rel("pate2017_epsilon eps_data_dependent", n, got, want, NULL,
	    1e-9);
	check_eq("pate2017_epsilon best_l_data_dependent", n, l1, w1, NULL);
	check_rel("pate2017_epsilon eps_data_independent", n, got2, want2,
	    NULL, 1e-9);
	check_eq("pate2017_epsilon best_l_data_independent", n, l2, w2, NULL);
	tab_free(t);
}

/* The DPDA conventions: q and steps from N, batch and epochs. */
static void
dpda_qT(const char *conv, double N, double B, double E, double *q,
    double *T)
{
	if (strcmp(conv, "tfp") == 0) {
		*q = B / N;
		*T = ceil(E * N / B);
	} else {
		double nb = ceil(N / B);

		*q = 1 / nb;
		*T = E * nb;
	}
}

/* Largest epochs E with eps <= target under one accountant. */
static double
dpda_max_epochs(const char *conv, double N, double B, double s, double d,
    double target, const double *orders, size_t n, int cv)
{
	double lo = 0, hi = 1, q, T;

	for (;;) {	/* eps(lo) <= target (or lo = 0) < eps(hi) */
		dpda_qT(conv, N, B, hi, &q, &T);
		if (sgm_eps(q, s, T, d, orders, n, cv, NULL) > target)
			break;
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > 1) {
		double mid = floor((lo + hi) / 2);

		dpda_qT(conv, N, B, mid, &q, &T);
		if (sgm_eps(q, s, T, d, orders, n, cv, NULL) > target)
			hi = mid;
		else
			lo = mid;
	}
	return lo;
}

static void
test_dpda(void)
{
	struct tab *t = tab_load("dpda_epsilon.csv");
	int n = t->nr;
	static double gq[MAXROWS], wq[MAXROWS], gT[MAXROWS], wT[MAXROWS],
	    e3[MAXROWS], w3[MAXROWS];

	for (int r = 0; r < n; r++) {
		double q, T, s = num(t, r, "sigma"), d = num(t, r, "delta");

		dpda_qT(str(t, r, "convention"), num(t, r, "N"),
		    num(t, r, "batch"), num(t, r, "epochs"), &q, &T);
		gq[r] = q;
		gT[r] = T;
		wq[r] = num(t, r, "q");
		wT[r] = num(t, r, "steps");
		got[r] = sgm_eps(q, s, T, d, NULL, 0, RDP_CONV_IMPROVED, NULL);
		want[r] = num(t, r, "eps_rdp_dp_accounting");
		got2[r] = sgm_eps(q, s, T, d, opacus_orders, n_opacus,
		    RDP_CONV_IMPROVED, NULL);
		want2[r] = num(t, r, "eps_rdp_opacus");
		e3[r] = sgm_eps(q, s, T, d, tfp_orders, n_tfp, RDP_CONV_CLASSIC,
		    NULL);
		w3[r] = num(t, r, "eps_rdp_tfp2020");
	}
	check_rel("dpda_epsilon q (conventions)", n, gq, wq, NULL, 1e-15);
	check_eq("dpda_epsilon steps (conventions)", n, gT, wT, NULL);
	check_le("dpda_epsilon eps <= eps_rdp_dp_accounting", n, got, want,
	    NULL, 1e-9);
	check_rel("dpda_epsilon eps_rdp_opacus (opacus orders)", n, got2,
	    want2, NULL, 1e-6);
	check_rel("dpda_epsilon eps_rdp_tfp2020 (classic, TFP orders)", n, e3,
	    w3, NULL, 1e-6);
	tab_free(t);

	t = tab_load("dpda_max_epochs.csv");
	n = t->nr;
	for (int r = 0; r < n; r++) {
		const char *cv = str(t, r, "convention");
		double N = num(t, r, "N"), B = num(t, r, "batch");
		double s = num(t, r, "sigma"), d = num(t, r, "delta");
		double e = num(t, r, "target_epsilon");

		got[r] = -dpda_max_epochs(cv, N, B, s, d, e, NULL, 0,
		    RDP_CONV_IMPROVED);
		want[r] = -num(t, r, "max_epochs_rdp_dp_accounting");
		got2[r] = dpda_max_epochs(cv, N, B, s, d, e, opacus_orders,
		    n_opacus, RDP_CONV_IMPROVED);
		want2[r] = num(t, r, "max_epochs_rdp_opacus");
		e3[r] = dpda_max_epochs(cv, N, B, s, d, e, tfp_orders, n_tfp,
		    RDP_CONV_CLASSIC);
		w3[r] = num(t, r, "max_epochs_rdp_tfp2020");
	}
	check_le("dpda_max_epochs max_epochs >= max_epochs_rdp_dp_accounting",
	    n, got, want, NULL, 0);
	check_eq("dpda_max_epochs max_epochs_rdp_opacus (opacus orders)", n,
	    got2, want2, NULL);
	check_eq("dpda_max_epochs max_epochs_rdp_tfp2020 (classic, TFP orders)",
	    n, e3, w3, NULL);
	tab_free(t);
}

/* ---- API behaviour ---- */

static void
test_api(void)
{
	const double *ord;
	size_t n;
	double r, e = NAN, o = NAN, d, s, q, curve[RDP_DEFAULT_NORDERS];
	double bad_orders[2] = { 2, 1 };
	uint64_t T;
	struct rdp_acct *a;
	int good;

	ord = rdp_default_orders(&n);
	ok(n == 156 && ord[0] == 1.1 && ord[98] == 10.9 && ord[99] == 11 &&
	    ord[151] == 63 && ord[155] == 1024, "default orders are "
	    "dp_accounting's 156");
	good = 1;
	for (int x = 1; x < 100; x++)
		good &= ord[x - 1] == 1 + x / 10.0;
	ok(good, "default fractional orders are 1 + x/10.0 bit for bit");
	ok(rdp_check_orders(ord, n) == NULL &&
	    rdp_check_orders(bad_orders, 2) != NULL &&
	    rdp_check_orders(ord, 0) != NULL, "rdp_check_orders");
	ok(rdp_sgm1(0, 1, 2.5, &r) == 0 && r == 0, "q = 0 gives 0");
	ok(rdp_sgm1(1, 2, 2.5, &r) == 0 && r == 2.5 / 8, "q = 1 gives "
	    "alpha/(2 sigma^2)");
	ok(rdp_sgm1(-0.1, 1, 2, &r) == RDP_E_PARAM &&
	    rdp_sgm1(0.1, 0, 2, &r) == RDP_E_PARAM &&
	    rdp_sgm1(0.1, 1, 1, &r) == RDP_E_PARAM &&
	    rdp_sgm1(0.1, NAN, 2, &r) == RDP_E_PARAM &&
	    rdp_sgm1(0.1, 1, 1e9, &r) == RDP_E_PARAM,
	    "invalid q, sigma or order give RDP_E_PARAM");
	ok(strcmp(rdp_strerror(RDP_E_NOROOT), "no solution in the search "
	    "range") == 0, "rdp_strerror names codes");

	/* The accountant composes like the sum of curves. */
	a = rdp_acct_new(NULL, 0);
	rdp_sgm(0.01, 1.1, ord, n, curve);
	good = a != NULL && rdp_acct_add_sgm(a, 0.01, 1.1, 6000) == 0 &&
	    rdp_acct_add_sgm(a, 0.01, 1.1, 4000) == 0 &&
	    rdp_acct_epsilon(a, 1e-5, RDP_CONV_IMPROVED, &e, &o) == 0;
	ok(good && relerr(e, sgm_eps(0.01, 1.1, 10000, 1e-5, NULL, 0,
	    RDP_CONV_IMPROVED, NULL)) < 1e-14 && o == 4.7,
	    "accountant: 6000 + 4000 steps equal 10000 (eps %.17g)", e);
	rdp_acct_add_gaussian(a, 10, 2);
	rdp_acct_add_laplace(a, 20, 3);
	rdp_acct_add_pure(a, 0.1, 1);
	good = 1;
	for (size_t k = 0; k < n; k++) {
		double want1 = 10000 * curve[k] + 2 * ord[k] / 200 +
		    3 * rdp_laplace(ord[k], 20) + rdp_pure(ord[k], 0.1);

		good &= relerr(rdp_acct_curve(a)[k], want1) < 1e-14;
	}
	ok(good, "accountant: mixed events add up per order");
	/* delta(eps(delta)) = delta, and the optimal orders agree. */
	rdp_acct_epsilon(a, 1e-6, RDP_CONV_IMPROVED, &e, &o);
	rdp_acct_delta(a, e, RDP_CONV_IMPROVED, &d, &r);
	ok(relerr(d, 1e-6) < 1e-9 && r == o, "improved conversion round trip: "
	    "delta %.17g at order %g (eps at order %g)", d, r, o);
	rdp_acct_epsilon(a, 1e-6, RDP_CONV_CLASSIC, &e, &o);
	rdp_acct_delta(a, e, RDP_CONV_CLASSIC, &d, &r);
	ok(relerr(d, 1e-6) < 1e-9 && r == o, "classic conversion round trip");
	ok(rdp_acct_add_gaussian(a, -1, 1) == RDP_E_PARAM &&
	    rdp_acct_add_curve(a, curve, -1) == RDP_E_PARAM &&
	    rdp_acct_epsilon(a, 2, RDP_CONV_IMPROVED, &e, &o) == RDP_E_PARAM &&
	    rdp_acct_epsilon(a, 1e-5, 7, &e, &o) == RDP_E_PARAM,
	    "accountant rejects bad arguments");
	rdp_acct_free(a);
	rdp_acct_free(NULL);
	ok(rdp_acct_new(bad_orders, 2) == NULL, "accountant rejects bad "
	    "orders");

	/* Conversion corner cases. */
	for (size_t k = 0; k < n; k++)
		curve[k] = 0;
	ok(rdp_to_epsilon(ord, curve, n, 1e-5, RDP_CONV_IMPROVED, &e, &o) ==
	    0 && e == 0, "zero RDP gives eps 0");
	ok(rdp_to_epsilon(ord, curve, n, 0, RDP_CONV_IMPROVED, &e, &o) == 0 &&
	    e == 0, "delta 0 and zero RDP give eps 0");
	curve[3] = 1e-3;
	ok(rdp_to_epsilon(ord, curve, n, 0, RDP_CONV_IMPROVED, &e, &o) == 0 &&
	    isinf(e), "delta 0 and nonzero RDP give eps inf");
	curve[3] = -1;
	ok(rdp_to_epsilon(ord, curve, n, 1e-5, RDP_CONV_IMPROVED, &e, &o) ==
	    RDP_E_PARAM, "negative RDP is rejected");
	/* KL shortcut: tiny RDP with delta^2 above 1 - exp(-rdp). */
	for (size_t k = 0; k < n; k++)
		curve[k] = 1e-12;
	ok(rdp_to_epsilon(ord, curve, n, 1e-5, RDP_CONV_IMPROVED, &e, &o) ==
	    0 && e == 0 && o == 1.1, "KL shortcut gives eps 0 at the first "
	    "order");

	/* Inverse queries: q and steps. */
	ok(rdp_sgm_solve_q(1.1, 10000, 1e-5, 2, NULL, 0, RDP_CONV_IMPROVED,
	    &q) == 0 && sgm_eps(q, 1.1, 10000, 1e-5, NULL, 0,
	    RDP_CONV_IMPROVED, NULL) <= 2 && sgm_eps(q * (1 + 1e-10), 1.1,
	    10000, 1e-5, NULL, 0, RDP_CONV_IMPROVED, NULL) > 2,
	    "solve q: eps(q) <= 2 < eps(q (1 + 1e-10)), q = %.17g", q);
	ok(rdp_sgm_solve_q(1.1, 10, 1e-5, 1000, NULL, 0, RDP_CONV_IMPROVED,
	    &q) == 0 && q == 1, "solve q: a loose target gives q = 1");
	/* Classic: eps >= log(1/delta)/1023 > 0.011 whatever q is. */
	ok(rdp_sgm_solve_q(0.5, 100000, 1e-5, 1e-4, NULL, 0,
	    RDP_CONV_CLASSIC, &q) == RDP_E_NOROOT, "solve q: an impossible "
	    "target gives RDP_E_NOROOT");
	ok(rdp_sgm_solve_steps(0, 1, 1e-5, 1, NULL, 0, RDP_CONV_IMPROVED, &T)
	    == 0 && T == UINT64_MAX, "solve steps: q = 0 never spends");
	ok(rdp_sgm_solve_sigma(0.01, 1000, 1e-5, 1, NULL, 0,
	    RDP_CONV_CLASSIC, &s) == 0 && sgm_eps(0.01, s, 1000, 1e-5, NULL,
	    0, RDP_CONV_CLASSIC, NULL) <= 1, "solve sigma, classic conversion");

	/* Analytic Gaussian: delta(eps(sigma, delta)) = delta. */
	rdp_agm_epsilon(1.3, 1e-7, &e);
	rdp_agm_delta(1.3, e, &d);
	ok(relerr(d, 1e-7) < 1e-12, "analytic Gaussian round trip: "
	    "delta %.17g", d);
	rdp_agm_epsilon(0.05, 1e-10, &e);
	rdp_agm_delta(0.05, e, &d);
	ok(relerr(d, 1e-10) < 1e-9 && e > 100, "analytic Gaussian at small "
	    "sigma (eps %.6g, log space)", e);
	ok(rdp_agm_epsilon(1000, 0.5, &e) == 0 && e == 0, "analytic "
	    "Gaussian: a met delta gives eps 0");

	/* Laplace in the limits. */
	ok(relerr(rdp_laplace(2, 1e4), 2 / (2 * 1e8)) < 1e-3,
	    "Laplace at large b is about alpha/(2b^2)");
	ok(relerr(rdp_laplace(1e4, 0.5), 2) < 1e-3 && rdp_laplace(1e4, 0.5) <
	    2 && isnan(rdp_laplace(1, 1)), "Laplace tends to 1/b below it");
}

/*
 * Properties that tie the integer and the fractional evaluations
 * together: RDP is nondecreasing in the order, (a-1) RDP(a) = log A_a is
 * convex in a (Hoelder), RDP grows with q and falls with sigma.
 */
static void
test_properties(void)
{
	static const double qs[] = { 1e-4, 0.01, 0.3, 0.5, 0.9 };
	static const double ss[] = { 0.6, 1.1, 4, 20 };
	static double ord[1500], r[1500];
	int n = 0, bad_mono = 0, bad_cvx = 0, bad_q = 0, bad_s = 0;

	for (int k = 0; k < 1450; k++)
		ord[n++] = 1.02 + 0.02 * k;	/* 1.02..30, with integers */
	for (size_t a = 0; a < 5; a++) {
		for (size_t b = 0; b < 4; b++) {
			if (rdp_sgm(qs[a], ss[b], ord, (size_t)n, r) != 0) {
				bad_mono++;
				continue;
			}
			for (int k = 1; k < n; k++)
				if (r[k] < r[k - 1] * (1 - 1e-9))
					bad_mono++;
			for (int k = 1; k + 1 < n; k++) {
				double l0 = (ord[k - 1] - 1) * r[k - 1];
				double l1 = (ord[k] - 1) * r[k];
				double l2 = (ord[k + 1] - 1) * r[k + 1];

				if (l0 + l2 - 2 * l1 < -1e-9 * l1)
					bad_cvx++;
			}
		}
	}
	ok(bad_mono == 0, "RDP is nondecreasing in the order (20 curves, "
	    "orders 1.02..30 step 0.02): %d violations", bad_mono);
	ok(bad_cvx == 0, "(a-1) RDP(a) is convex in the order: %d "
	    "violations", bad_cvx);
	for (int a = 0; a < 3; a++) {
		double al = a == 0 ? 1.5 : a == 1 ? 7 : 12.3, prev = 0, cur;

		for (int k = 1; k <= 999; k++) {
			rdp_sgm1(k / 1000.0, 1.3, al, &cur);
			if (cur < prev)
				bad_q++;
			prev = cur;
		}
		prev = INFINITY;
		for (int k = 1; k <= 400; k++) {
			rdp_sgm1(0.05, 0.3 + 0.05 * k, al, &cur);
			if (cur > prev)
				bad_s++;
			prev = cur;
		}
	}
	ok(bad_q == 0, "RDP grows with q: %d violations", bad_q);
	ok(bad_s == 0, "RDP falls as sigma grows: %d violations", bad_s);
}

/* CPU time of one epsilon query, minimum over repetitions. */
static void
bench(void)
{
	double best = INFINITY, e = 0;

	for (int k = 0; k < 30; k++) {
		struct timespec t0, t1;
		double dt;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		rdp_sgm_epsilon(0.01, 1.1, 10000, 1e-5, NULL, 0,
		    RDP_CONV_IMPROVED, &e, NULL);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
		dt = (double)(t1.tv_sec - t0.tv_sec) +
		    1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
		if (dt < best)
			best = dt;
	}
	printf("# sgm epsilon query (q=0.01, sigma=1.1, T=10000, delta=1e-5, "
	    "156 orders): %.3f ms CPU (best of 30), eps %.15g\n", best * 1e3,
	    e);
}

/*
 * PATE smooth sensitivity helpers: the discrete-Gaussian bound on the
 * error probability against an exact lattice sum, bl(bu(q)) = q, the
 * local sensitivity's shape, and Thm. 23 at a point.
 */
static void
test_pate_ss(void)
{
	const double sig[] = { 0.6, 1, 2.5, 7 };
	int bad = 0;

	for (size_t si = 0; si < 4; si++) {
		double s = sig[si], norm = 0, *p;
		int R = (int)ceil(40 * s) + 2, W = 2 * R + 1;

		p = calloc((size_t)W, sizeof *p);
		for (int z = -R; z <= R; z++)
			norm += p[z + R] = exp(-(double)z * z / (2 * s * s));
		for (int z = 0; z < W; z++)
			p[z] /= norm;
		for (int g = 1; g <= 12; g++) {
			/* Pr[Z_1 - Z_0 >= g], ties included: counts (g, 0). */
			double ex = 0, c[2] = { (double)g, 0 }, b;
			for (int a = 0; a < W; a++)
				for (int bb = 0; bb < W; bb++)
					if (bb - a >= g)
						ex += p[a] * p[bb];
			b = rdp_pate_logq_dgauss(c, 2, s);
			if (!(log(ex) <= b + 1e-12))
				bad++;
			/* The threshold step: Pr[Z >= g] (largest count t - g),
			 * the less likely outcome, is within its bound: the
			 * RDP is at most the one of the exact probability. */
			ex = 0;
			for (int z = g; z <= R; z++)
				ex += p[z + R];
			if (!(rdp_pate_threshold_dep_dgauss(8, 0, g, s) >=
			    rdp_pate_gnmax_dep(8, log(ex), sqrt(2) * s) - 1e-12))
				bad++;
		}
		free(p);
	}
	ok(bad == 0, "discrete-Gaussian error bound >= the exact lattice "
	    "sum (%d violations)", bad);
	{
		double lq = -30, bu = rdp_pate_gnmax_logbu(lq, 40, 10, 0);
		double back = rdp_pate_gnmax_logbl(bu, 40, 10, 0);
		ok(fabs(back - lq) < 1e-9 && bu > lq, "bl(bu(q)) = q (%.15g)",
		    back);
		bu = rdp_pate_gnmax_logbu(lq, 40, 10, 1);
		back = rdp_pate_gnmax_logbl(bu, 40, 10, 1);
		ok(fabs(back - lq) < 1e-9, "discrete: bl(bu(q)) = q (%.15g)",
		    back);
	}
	{
		double w = 16 * exp(2 * 0.025) / 100 + (0.025 * 16 -
		    0.5 * log(1 - 2 * 16 * 0.025)) / 15;
		ok(fabs(rdp_pate_gnss(16, 0.025, 10) - w) < 1e-15 * w &&
		    rdp_pate_gnss(20, 0.025, 10) == INFINITY &&
		    isnan(rdp_pate_gnss(1, 0.025, 10)), "GNSS RDP (Thm. 23)");
	}
	{
		double c[10] = { 250 }, ls[251], scr[10], q0;
		int mono = 1;
		q0 = rdp_pate_gnmax_logq0(16, 40);
		ok(rdp_pate_gnmax_ls(c, 10, 250, 40, 16, q0, 1, ls, scr) == 0 &&
		    ls[0] >= 0, "gnmax local sensitivity at a unanimous vote");
		for (int d = 1; d <= 250; d++)
			mono &= ls[d] >= ls[d - 1];
		ok(mono && ls[250] > ls[0], "local sensitivity grows with the "
		    "distance (%g to %g)", ls[0], ls[250]);
		ok(rdp_smooth_max(ls, 250, 0) == ls[250] &&
		    rdp_smooth_max(ls, 250, 1e3) == ls[0], "smooth maximum");
		ok(rdp_pate_gnmax_ss_conditions(16, 40, 10, 1) &&
		    !rdp_pate_gnmax_ss_conditions(8, 1, 4, 1),
		    "conditions C5-C6: hold for sigma 40 at order 16, fail for "
		    "sigma 1 at order 8");
	}
}

int
main(void)
{
	make_orders();
	test_api();
	test_sgm_rdp();
	test_sgm_rdp_extra();
	test_properties();
	test_sgm_epsilon();
	test_gaussian();
	test_laplace();
	test_inverse();
	test_pate2018();
	test_pate_ss();
	test_pate2018_eps();
	test_pate2017();
	test_dpda();
	bench();
	return tap_done();
}
