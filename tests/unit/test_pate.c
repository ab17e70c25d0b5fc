/*
 * Unit tests of lib/mech/pate, without the CLI: pate_check_params
 * rejecting each bad field; the vote histograms against a brute-force
 * count; the noiseless mechanisms against the plain argmax and threshold;
 * the noisy ones' answer frequencies against the exact probabilities,
 * summed over the discrete Gaussian and Laplace distributions; the
 * ledger's RDP curves against the closed forms; the GNSS RDP against
 * Thm. 23 of Papernot et al. (2018); the data-dependent release on its
 * grid; and the teacher checks on hand-made metadata.
 *
 * Statistical checks use fixed seeds and |z| <= 5 (tests/unit/stat.h: a
 * false-failure rate below 1e-6 per check).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pate.h"
#include "pverr.h"
#include "rdp.h"
#include "tap.h"

#define ZMAX 5.0			/* |z| bound of tests/unit/stat.h */

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 20261125, item) != 0)
		abort();
	return r;
}

static struct pate_params
gnmax(double sigma)
{
	struct pate_params p = { .mech = PATE_GNMAX, .sigma = sigma };

	return p;
}

/* ---- parameters ---- */

static void
test_check_params(void)
{
	struct pate_params p = { .mech = PATE_LNMAX, .gamma = 0.5 }, b;

	ok(pate_check_params(&p) == NULL, "lnmax gamma 0.5 is accepted");
	b = p;
	b.gamma = INFINITY;
	ok(pate_check_params(&b) == NULL && pate_noise_off(&b),
	    "lnmax gamma inf is accepted, and adds no noise");
	b = p;
	b.gamma = 1e-7;
	ok(pate_check_params(&b) != NULL, "gamma below 1e-6 is refused");
	b.gamma = NAN;
	ok(pate_check_params(&b) != NULL, "gamma NaN is refused");
	b = p;
	b.has_max = 1;
	ok(pate_check_params(&b) != NULL, "max_answers is refused for lnmax");
	b = p;
	b.mech = 7;
	ok(pate_check_params(&b) != NULL, "an unknown mechanism is refused");
	b = gnmax(1e-4);
	ok(pate_check_params(&b) != NULL, "sigma 1e-4 is refused");
	b = gnmax(0);
	ok(pate_check_params(&b) == NULL && pate_noise_off(&b),
	    "sigma 0 is accepted, and adds no noise");
	b.audit = 3;
	ok(pate_check_params(&b) != NULL, "audit releases without noise are "
	    "refused");
	b = gnmax(0);
	b.half_noise = 1;
	ok(pate_check_params(&b) != NULL, "half noise without noise is refused");
	b = (struct pate_params){ .mech = PATE_CONFIDENT, .sigma = 1,
	    .sigma1 = 0, .threshold = 3 };
	ok(pate_check_params(&b) != NULL, "confident with sigma1 0 but sigma 1 "
	    "is refused");
	b.sigma1 = 2;
	ok(pate_check_params(&b) == NULL, "confident sigma 1, sigma1 2 is "
	    "accepted");
	b.threshold = 2e12;
	ok(pate_check_params(&b) != NULL, "a threshold beyond 1e12 is refused");

	b = gnmax(2);
	b.ddep = 1;
	b.ss_order = 2;
	b.ss_beta = 0.2;
	b.ss_sigma = 1;
	ok(pate_check_params(&b) == NULL, "a data-dependent gnmax is accepted");
	p = b;
	p.ss_order = 1.15;
	ok(pate_check_params(&p) != NULL && !pate_ss_order_ok(1.15) &&
	    pate_ss_order_ok(2) && pate_ss_order_ok(1024),
	    "an order outside rdp-account's defaults is refused");
	p = b;
	p.ss_beta = 0.25;
	ok(pate_check_params(&p) != NULL, "2 order beta = 1 is refused");
	p = b;
	p.ss_sigma = 0;
	ok(pate_check_params(&p) != NULL, "ss_sigma 0 is refused");
	p = b;
	p.audit = 2;
	ok(pate_check_params(&p) != NULL, "ddep with audit releases is refused");
	p = b;
	p.mech = PATE_LNMAX;
	p.gamma = 1;
	ok(pate_check_params(&p) != NULL, "ddep with lnmax is refused");
	p = gnmax(2);
	p.reveal = 1;
	ok(pate_check_params(&p) != NULL, "reveal without ddep is refused");
	ok(strcmp(pate_mechanism(&b), "pate_gnmax") == 0,
	    "the ledger names gnmax pate_gnmax");
}

/* ---- votes ---- */

static void
test_votes(void)
{
	enum { T = 7, Q = 5, K = 3 };
	struct pate_votes v = { .k = K };
	int32_t lab[T * Q];
	uint32_t want[Q * K] = { 0 };
	size_t bad = 99;
	int same = 1, rc;

	for (size_t t = 0; t < T; t++)
		for (size_t q = 0; q < Q; q++) {
			lab[t * Q + q] = (int32_t)((t * 3 + q * q) % K);
			want[q * K + (size_t)lab[t * Q + q]]++;
		}
	ok(pate_votes_alloc(&v, Q) == 0, "votes for 5 queries allocated");
	ok(pate_votes_add(&v, lab, 4, &bad) == 0 &&
	    pate_votes_add(&v, lab + 4 * Q, T - 4, &bad) == 0 && v.n == T,
	    "7 teachers added in two batches");
	for (size_t i = 0; i < Q * K; i++)
		same &= v.count[i] == want[i];
	ok(same, "the histograms equal a brute-force count");
	lab[2] = K;
	rc = pate_votes_add(&v, lab, 1, &bad);
	ok(rc == PV_E_RANGE && bad == 2 && v.n == T, "a label k is refused "
	    "(query 2, teacher %zu)", (size_t)v.n);
	pate_votes_free(&v);
	v = (struct pate_votes){ .k = 4 };
	ok(pate_votes_alloc(&v, PATE_MAX_COUNTS / 4 + 1) == PV_E_LIMIT,
	    "more than 2^31 counts are refused");
	v = (struct pate_votes){ .k = 2 };
	ok(pate_votes_alloc(&v, 0) == 0 && v.count != NULL,
	    "no queries: still an allocated histogram");
	pate_votes_free(&v);
}

/* Q identical queries with counts c[0..k-1]. */
static void
same_votes(struct pate_votes *v, size_t q, const uint32_t *c, size_t k)
{
	v->k = k;
	v->n = 0;
	if (pate_votes_alloc(v, q) != 0)
		abort();
	for (size_t i = 0; i < q; i++)
		for (size_t j = 0; j < k; j++) {
			v->count[i * k + j] = c[j];
			if (i == 0)
				v->n += c[j];
		}
}

/* ---- noiseless mechanisms ---- */

static void
test_noiseless(void)
{
	struct pate_params p = { .mech = PATE_LNMAX, .gamma = INFINITY };
	struct pate_votes v = { .k = 4 };
	struct pate *pt;
	struct rng *r = seeded("pate/noiseless");
	int32_t y[64];
	uint8_t ans[64];
	size_t tie[2] = { 0 }, n = 4000;
	int right = 1;

	if (pate_votes_alloc(&v, 64) != 0)
		abort();
	for (size_t q = 0; q < 64; q++)
		v.count[q * 4 + (q % 4)] = 5 + (uint32_t)q % 3;
	for (size_t q = 0; q < 64; q++)
		v.count[q * 4 + ((q + 1) % 4)] = 2;
	ok(pate_new(&pt, &p) == 0, "noiseless lnmax built");
	ok(pate_run(pt, r, &v, y, ans, NULL) == 0, "noiseless release");
	for (size_t q = 0; q < 64; q++)
		right &= y[q] == (int32_t)(q % 4) && ans[q] == 1;
	ok(right, "without noise every query gets its plurality label");
	pate_free(pt);
	pate_votes_free(&v);

	/* Two tied classes: uniform tie breaking. */
	same_votes(&v, 1, (const uint32_t[]){ 3, 3, 1 }, 3);
	p = gnmax(0);
	if (pate_new(&pt, &p) != 0)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (pate_run(pt, r, &v, y, ans, NULL) != 0 || y[0] > 1)
			break;
		tie[y[0]]++;
	}
	ok(tie[0] + tie[1] == n && fabs((double)tie[0] - n / 2.0) <=
	    ZMAX * sqrt(n / 4.0), "ties are broken uniformly (%zu of %zu)",
	    tie[0], n);
	pate_free(pt);
	pate_votes_free(&v);

	/* Confident without noise: answer iff the top count >= t, at most
	 * max_answers answers. */
	p = (struct pate_params){ .mech = PATE_CONFIDENT, .sigma = 0,
	    .sigma1 = 0, .threshold = 4, .has_max = 1, .max_answers = 3 };
	v = (struct pate_votes){ .k = 2 };
	if (pate_votes_alloc(&v, 8) != 0 || pate_new(&pt, &p) != 0)
		abort();
	for (size_t q = 0; q < 8; q++)
		v.count[q * 2] = (uint32_t)q;
	ok(pate_run(pt, r, &v, y, ans, NULL) == 0 && !ans[3] && ans[4] &&
	    ans[5] && ans[6] && !ans[7] && y[7] == -1 && y[4] == 0,
	    "confident answers counts 4, 5, 6, then stops at max_answers 3");
	pate_free(pt);
	pate_votes_free(&v);
	rng_free(r);
}

/* ---- noisy mechanisms: exact probabilities ---- */

/* P(winner 0) for counts (c0, c1), independent noise of pmf w[z + M]
 * (z in [-M, M]), ties broken by a fair coin. */
static double
p_first(const double *w, int M, double d)
{
	double s = 0;

	for (int a = -M; a <= M; a++)
		for (int b = -M; b <= M; b++) {
			double x = d + a - b;
			s += w[a + M] * w[b + M] * (x > 0 ? 1 : x == 0 ? 0.5 :
			    0);
		}
	return s;
}

/* The pmf of the discrete Gaussian (laplace 0) or Laplace of scale s. */
static double *
pmf(int laplace, double s, int M)
{
	double *w = malloc((size_t)(2 * M + 1) * sizeof *w), t = 0;

	for (int z = -M; z <= M; z++) {
		w[z + M] = laplace ? exp(-abs(z) / s) :
		    exp(-z * z / (2 * s * s));
		t += w[z + M];
	}
	for (int z = -M; z <= M; z++)
		w[z + M] /= t;
	return w;
}

static void
freq_check(const struct pate_params *p, const uint32_t c[2], double want,
    const char *what)
{
	enum { N = 20000 };
	struct pate_votes v;
	struct pate *pt;
	struct rng *r = seeded(what);
	int32_t *y = malloc(N * sizeof *y);
	uint8_t *ans = malloc(N);
	size_t hit = 0;
	double z;

	same_votes(&v, N, c, 2);
	if (pate_new(&pt, p) != 0 || pate_run(pt, r, &v, y, ans, NULL) != 0)
		abort();
	for (size_t q = 0; q < N; q++)
		hit += y[q] == 0;
	z = ((double)hit - N * want) / sqrt(N * want * (1 - want));
	ok(fabs(z) <= ZMAX, "%s: P(plurality wins) %.4f, expected %.4f "
	    "(z %.2f)", what, (double)hit / N, want, z);
	pate_free(pt);
	pate_votes_free(&v);
	free(y);
	free(ans);
	rng_free(r);
}

static void
test_noisy(void)
{
	enum { M = 200 };
	struct pate_params p = gnmax(2);
	double *w = pmf(0, 2, M);
	uint32_t c[2] = { 3, 1 };

	freq_check(&p, c, p_first(w, M, 2), "gnmax sigma 2, counts 3:1");
	free(w);
	/* Half the noise: sigma 1 (tests only); the mechanism must follow. */
	p.half_noise = 1;
	w = pmf(0, 1, M);
	freq_check(&p, c, p_first(w, M, 2), "gnmax half noise, counts 3:1");
	free(w);
	/* lnmax gamma 0.5: discrete Laplace of scale 2. */
	p = (struct pate_params){ .mech = PATE_LNMAX, .gamma = 0.5 };
	w = pmf(1, 2, M);
	freq_check(&p, c, p_first(w, M, 2), "lnmax gamma 0.5, counts 3:1");
	free(w);

	/* The confident check: P(answered) = P(3 + Z >= 4), sigma1 1.5. */
	{
		enum { N = 20000 };
		struct pate_params cp = { .mech = PATE_CONFIDENT, .sigma = 1,
		    .sigma1 = 1.5, .threshold = 4 };
		struct pate_votes v;
		struct pate *pt;
		struct rng *r = seeded("pate/confident");
		int32_t *y = malloc(N * sizeof *y);
		uint8_t *ans = malloc(N);
		double want = 0, zs;
		size_t n = 0;

		w = pmf(0, 1.5, M);
		for (int z = 1; z <= M; z++)
			want += w[z + M];
		same_votes(&v, N, (const uint32_t[]){ 3, 0 }, 2);
		if (pate_new(&pt, &cp) != 0 || pate_run(pt, r, &v, y, ans,
		    NULL) != 0)
			abort();
		for (size_t q = 0; q < N; q++)
			n += ans[q];
		zs = ((double)n - N * want) / sqrt(N * want * (1 - want));
		ok(fabs(zs) <= ZMAX, "confident: P(answered) %.4f, expected "
		    "%.4f (z %.2f)", (double)n / N, want, zs);
		pate_free(pt);
		pate_votes_free(&v);
		free(w);
		free(y);
		free(ans);
		rng_free(r);
	}
}

/* ---- the ledger ---- */

static int
param_is(const struct ledger_entry *e, const char *key, double want)
{
	const char *s = ts_meta_get(&e->params, key);

	return s != NULL && strtod(s, NULL) == want;
}

static void
test_ledger(void)
{
	struct pate_votes v;
	struct pate *pt;
	struct ledger_entry e;
	struct pate_params p;
	double worst = 0;

	same_votes(&v, 10, (const uint32_t[]){ 4, 2, 1 }, 3);

	/* lnmax: (2 gamma)-DP per query, as min(eps, a eps^2 / 2). */
	p = (struct pate_params){ .mech = PATE_LNMAX, .gamma = 0.3,
	    .audit = 2 };
	memset(&e, 0, sizeof e);
	if (pate_new(&pt, &p) != 0 || pate_ledger(pt, &v, LEDGER_ADD_REMOVE,
	    &e) != 0)
		abort();
	for (size_t i = 0; i < e.norders; i++) {
		double a = e.orders[i], eps = 2 * 0.3;
		double want = 2 * 10 * fmin(eps, a * eps * eps / 2);
		worst = fmax(worst, fabs(e.rdp[i] - want) / want);
	}
	ok(e.norders == RDP_DEFAULT_NORDERS && worst < 1e-12 &&
	    e.relation == LEDGER_ADD_REMOVE, "lnmax: 2 releases x 10 queries x "
	    "min(2g, a (2g)^2 / 2) at every order (worst %.2g)", worst);
	{
		const char *s = ts_meta_get(&e.params, "scale");
		double b = s ? strtod(s, NULL) : 0;
		ok(b >= 1 / 0.3 && b <= (1 / 0.3) * (1 + 1e-9) &&
		    param_is(&e, "l1_sensitivity", 2) &&
		    param_is(&e, "audit_releases", 2),
		    "lnmax: the Laplace scale %.17g is at least 1/gamma, within "
		    "1e-9", b);
	}
	ts_meta_free(&e.params);
	pate_free(pt);

	/* gnmax: a / sigma^2 per query (L2 sensitivity sqrt 2). */
	p = gnmax(3);
	memset(&e, 0, sizeof e);
	if (pate_new(&pt, &p) != 0 || pate_ledger(pt, &v, LEDGER_REPLACE_ONE,
	    &e) != 0)
		abort();
	worst = 0;
	for (size_t i = 0; i < e.norders; i++) {
		double want = 10 * e.orders[i] / 9;
		worst = fmax(worst, fabs(e.rdp[i] - want) / want);
	}
	ok(worst < 1e-12 && param_is(&e, "l2_sensitivity", sqrt(2)) &&
	    param_is(&e, "teachers", 7) && param_is(&e, "classes", 3),
	    "gnmax: 10 a / sigma^2 at every order (worst %.2g)", worst);
	ts_meta_free(&e.params);
	pate_free(pt);

	/* confident: Q a / (2 sigma1^2) + min(A, Q) a / sigma^2. */
	p = (struct pate_params){ .mech = PATE_CONFIDENT, .sigma = 3,
	    .sigma1 = 5, .threshold = 4, .has_max = 1, .max_answers = 4 };
	memset(&e, 0, sizeof e);
	if (pate_new(&pt, &p) != 0 || pate_ledger(pt, &v, LEDGER_REPLACE_ONE,
	    &e) != 0)
		abort();
	worst = 0;
	for (size_t i = 0; i < e.norders; i++) {
		double a = e.orders[i], want = 10 * a / 50 + 4 * a / 9;
		worst = fmax(worst, fabs(e.rdp[i] - want) / want);
	}
	ok(worst < 1e-12 && param_is(&e, "answers_charged", 4),
	    "confident: Q a/(2 s1^2) + A a/s^2 with A = max_answers (worst "
	    "%.2g)", worst);
	ts_meta_free(&e.params);
	pate_free(pt);
	pate_votes_free(&v);
}

/* ---- the data-dependent release ---- */

static void
test_gnss(void)
{
	double a = 2, beta = 0.1, s = 1, b = beta + ldexp(1, -50);
	double cont = a * exp(2 * b) / (s * s) + (b * a - 0.5 * log1p(-2 * a *
	    b)) / (a - 1), got = pate_gnss_rdp(a, beta, s);

	ok(got >= cont && got <= cont * (1 + 1e-5), "GNSS RDP %.17g is Thm. "
	    "23's %.17g, inflated by less than 1e-5", got, cont);
	ok(isinf(pate_gnss_rdp(2.5, 0.2, 1)), "GNSS RDP is inf at 2 a beta = 1");
	ok(pate_gnss_rdp(2, 0.1, 2) < got, "more GNSS noise, less RDP");
}

static void
test_ddep(void)
{
	enum { Q = 40 };
	struct pate_params p = gnmax(6);
	struct pate_votes v;
	struct pate_dd dd;
	struct pate *pt;
	struct rng *r = seeded("pate/ddep");
	int32_t y[Q];
	uint8_t ans[Q];
	double f = 0, h = ldexp(1, -PATE_SS_GRID_BITS), c[3];
	int rc;

	p.ddep = 1;
	p.ss_order = 2;
	p.ss_beta = 0.2;
	p.ss_sigma = 1;
	same_votes(&v, Q, (const uint32_t[]){ 1, 0, 0 }, 3);
	ok(pate_ddep_plan(&p, &v, &dd) == 1, "one teacher: the data-dependent "
	    "bound cannot beat the data-independent one");
	pate_votes_free(&v);

	same_votes(&v, Q, (const uint32_t[]){ 70, 20, 10 }, 3);
	rc = pate_ddep_plan(&p, &v, &dd);
	ok(rc == 0 && dd.gn, "100 teachers, sigma 6: the GNMax bound can "
	    "fall below (rc %d)", rc);
	if (pate_new(&pt, &p) != 0)
		abort();
	rc = pate_run(pt, r, &v, y, ans, &dd);
	c[0] = 70;
	c[1] = 20;
	c[2] = 10;
	for (size_t q = 0; q < Q; q++)
		f += rdp_pate_gnmax_dep(2, rdp_pate_logq_dgauss(c, 3, 6), 6);
	ok(rc == 0 && dd.answered == Q && fabs(dd.f - f) <= 1e-12 * f,
	    "f = the sum over the queries of the data-dependent GNMax RDP "
	    "(%.6g, expected %.6g)", dd.f, f);
	ok(f < Q * rdp_pate_gnmax(2, 6), "on a consensus f is below the "
	    "data-independent bound");
	ok(dd.ss > 0 && isfinite(dd.ss) && dd.released == h *
	    nearbyint(dd.released / h) && fabs(dd.released - dd.f) <= 6 *
	    fmax(dd.ss, ldexp(1, -PATE_SS_FLOOR_BITS)) + h,
	    "the release %.6g lies on the grid 2^-32, within 6 smooth "
	    "sensitivities (%.3g) of f", dd.released, dd.ss);
	pate_free(pt);
	pate_votes_free(&v);
	rng_free(r);
}

/* ---- the teachers ---- */

static void
meta_teacher(struct ts_meta *m, const char *part, const char *parent,
    const char *digest)
{
	memset(m, 0, sizeof *m);
	if (part)
		ts_meta_set(m, "split.part", part);
	if (parent)
		ts_meta_set(m, "split.parent", parent);
	ts_meta_set(m, "prov.tool", "predict");
	if (digest)
		ts_meta_set(m, "prov.input.0.xxh64", digest);
	ts_meta_set(m, "dp.raw.d", "aggregate");
}

static void
test_teachers(void)
{
	struct ts_meta m;
	struct pate_teacher t[3];
	size_t a = 9, b = 9;
	int rc;

	meta_teacher(&m, "0/3", "p", "aa");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_OK && t[0].predicted &&
	    strcmp(t[0].queries, "aa") == 0 && t[0].sp.i == 0 &&
	    t[0].sp.n == 3, "a teacher of part 0/3 is read");
	ts_meta_free(&m);
	meta_teacher(&m, "1/3", "p", "aa");
	(void)pate_teacher_read(&t[1], &m, "d");
	ts_meta_free(&m);
	meta_teacher(&m, "2/3", "p", "aa");
	(void)pate_teacher_read(&t[2], &m, "d");
	ts_meta_free(&m);
	ok(pate_teachers_check(t, 3, &a, &b) == PATE_TS_OK,
	    "three parts of one split answering the same queries pass");
	pate_teacher_free(&t[2]);
	meta_teacher(&m, "1/3", "p", "aa");
	(void)pate_teacher_read(&t[2], &m, "d");
	ts_meta_free(&m);
	rc = pate_teachers_check(t, 3, &a, &b);
	ok(rc == PATE_TS_SAME && a == 1 && b == 2, "part 1/3 twice is refused, "
	    "naming teachers 1 and 2");
	pate_teacher_free(&t[2]);
	meta_teacher(&m, "2/3", "q", "aa");
	(void)pate_teacher_read(&t[2], &m, "d");
	ts_meta_free(&m);
	ok(pate_teachers_check(t, 3, &a, &b) == PATE_TS_PARENT,
	    "a part of another split is refused");
	pate_teacher_free(&t[2]);
	meta_teacher(&m, "2/3", "p", "bb");
	(void)pate_teacher_read(&t[2], &m, "d");
	ts_meta_free(&m);
	rc = pate_teachers_check(t, 3, &a, &b);
	ok(rc == PATE_TS_DIGEST && a == 0 && b == 2, "predictions on other "
	    "queries are refused");
	pate_teacher_free(&t[2]);
	meta_teacher(&m, "2/3", "p", NULL);
	ts_meta_set(&m, "predict.raw.e", "row-local");
	(void)pate_teacher_read(&t[2], &m, "d");
	ts_meta_free(&m);
	ok(pate_teachers_check(t, 3, &a, &b) == PATE_TS_MARKS,
	    "queries with other raw marks (and no digest) are refused");
	for (int i = 0; i < 3; i++)
		pate_teacher_free(&t[i]);

	meta_teacher(&m, "0/3", "p", "aa");
	ts_meta_set(&m, "dp.raw.d", "row-local");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_ROW_LOCAL,
	    "row-local predictions are refused");
	ts_meta_free(&m);
	meta_teacher(&m, "0/3", "p", "aa");
	ts_meta_set(&m, "predict.raw.d", "row-local");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_QUERIES_RAW,
	    "queries from the protected dataset are refused");
	ts_meta_free(&m);
	meta_teacher(&m, "0/3", "p", "aa");
	ts_meta_set(&m, "split.raw.d", "aggregate");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_PART_AGGREGATE,
	    "a part already aggregate when split is refused");
	ts_meta_free(&m);
	meta_teacher(&m, NULL, NULL, "aa");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_NO_PART,
	    "a teacher without split.part is refused");
	ts_meta_free(&m);
	meta_teacher(&m, "mixed", "p", "aa");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_MIXED,
	    "a mixed teacher is refused");
	ts_meta_free(&m);
	meta_teacher(&m, "3/3", "p", "aa");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_BAD_PART,
	    "split.part 3/3 is refused");
	ts_meta_free(&m);
	meta_teacher(&m, "0/3", NULL, "aa");
	ok(pate_teacher_read(&t[0], &m, "d") == PATE_T_NO_PARENT,
	    "split.part without split.parent is refused");
	ts_meta_free(&m);
}

int
main(void)
{
	test_check_params();
	test_votes();
	test_noiseless();
	test_noisy();
	test_ledger();
	test_gnss();
	test_ddep();
	test_teachers();
	return tap_done();
}
