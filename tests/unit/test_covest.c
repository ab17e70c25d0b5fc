/*
 * Unit tests of lib/mech/covest, without the CLI: the validator refuses
 * each bad field, the noise plan against the sensitivity formulas, the
 * release without noise against a brute-force covariance, clipping, and
 * the noise of many seeded releases against its planned variance.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "covest.h"
#include "fpsum.h"
#include "rdp.h"
#include "tap.h"
#include "tstream.h"

/* A stream holding the n x d f64 rows x as tensor X. */
static char *
rows_stream(const double *x, size_t n, size_t d, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	struct ts_writer *w = ts_writer_open(fp, "mem", 1, 0);
	uint64_t dims[2] = { n, d };
	struct tensor t;
	int rc;

	tensor_init(&t, "X", TS_F64, 2, dims);
	t.data = (void *)(uintptr_t)x;
	rc = ts_write_tensor(w, &t);
	t.data = NULL;
	tensor_free(&t);
	if (rc == 0)
		rc = ts_writer_finish(w);
	ts_writer_close(w);
	fclose(fp);
	return rc == 0 ? buf : NULL;
}

struct out {
	struct tensor *t;
	size_t n;
	struct covest *c;
};

/* Run p on the rows, releasing into memory; the tensors into o.
 * @return 0 or the first error. */
static int
run(const struct covest_params *p, const double *x, size_t n, size_t d,
    struct out *o)
{
	size_t len, olen;
	char *in = rows_stream(x, n, d, &len), *obuf = NULL;
	FILE *ifp = fmemopen(in, len, "rb"), *ofp, *rfp;
	struct ts_reader *r = ts_reader_open(ifp, "mem"), *rr;
	struct ts_writer *w;
	struct tensor hdr;
	struct rng *rng;
	size_t dd;
	int rc;

	memset(o, 0, sizeof *o);
	if (rng_new_seeded(&rng, p->seed, COVEST_WORK_ITEM) != 0 ||
	    covest_new(&o->c, p) != 0)
		return PV_E_NOMEM;
	ofp = open_memstream(&obuf, &olen);
	w = ts_writer_open(ofp, "out", 1, 0);
	if ((rc = covest_open_rows(o->c, r, "X", &hdr, &dd)) == 0 &&
	    (rc = covest_partition(o->c, rng, NULL)) == 0 &&
	    (rc = covest_plan(o->c)) == 0 &&
	    (rc = covest_accumulate(o->c, r, &hdr, rng)) == 0 &&
	    (rc = covest_finish_reading(o->c)) == 0) {
		for (uint64_t i = 0; rc == 0 && i < (p->audit ? p->audit : 1);
		    i++)
			rc = covest_release(o->c, w, rng, i);
		tensor_free(&hdr);
	}
	if (rc == 0)
		rc = ts_writer_finish(w);
	ts_writer_close(w);
	fclose(ofp);
	if (rc == 0) {
		rfp = fmemopen(obuf, olen, "rb");
		rr = ts_reader_open(rfp, "out");
		rc = ts_read_all(rr, &o->t, &o->n);
		ts_reader_close(rr);
		fclose(rfp);
	}
	ts_reader_close(r);
	fclose(ifp);
	free(in);
	free(obuf);
	rng_free(rng);
	return rc;
}

static void
out_free(struct out *o)
{
	for (size_t i = 0; i < o->n; i++)
		tensor_free(&o->t[i]);
	free(o->t);
	covest_free(o->c);
}

static const double *
get(const struct out *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->t[i].name, name) == 0)
			return o->t[i].data;
	return NULL;
}

static struct covest_params
base(void)
{
	struct covest_params p = { .relation = LEDGER_ADD_REMOVE,
	    .has_sigma = 1, .sigma = 1, .has_clip = 1, .clip = 1,
	    .threads = 2, .seeded = 1, .seed = 42 };

	return p;
}

static void
test_check(void)
{
	struct covest_params p = base(), q;

	ok(covest_check_params(&p) == NULL, "a good set passes");
#define BAD(field_change, what) do { \
	q = p; field_change; \
	ok(covest_check_params(&q) != NULL, "refused: %s", what); \
} while (0)
	BAD(q.has_eps = 1; q.epsilon = 1, "--epsilon without --delta");
	BAD(q.has_eps = 1; q.has_delta = 1; q.epsilon = 1; q.delta = 1e-6,
	    "--epsilon with --sigma");
	BAD(q.has_sigma = 0, "no privacy parameter");
	BAD(q.has_cal = 1; q.calibration = COVEST_CAL_AGM,
	    "--calibration with --sigma");
	BAD(q.has_clip = 0, "no clip with noise");
	BAD(q.clip = 0, "a zero clip");
	BAD(q.sigma = 1e-9, "a tiny sigma");
	BAD(q.select_public = 1, "public selection without select");
	BAD(q.unsafe_per_block = 1, "per-block clipping without random");
	BAD(q.sigma = 0; q.audit = 3, "audit without noise");
	BAD(q.has_count = 1; q.count_public = 5,
	    "a public count under add-remove");
	BAD(q.has_split = 1; q.split[0] = 1; q.split[1] = 1,
	    "split: a released count with weight 0");
	BAD(q.mean = COVEST_MEAN_ZERO; q.has_split = 1; q.split[0] = 1;
	    q.split[1] = 1; q.split[2] = 1, "split: an unreleased sum weighed");
	BAD(q.subspaces = COVEST_SUB_RANDOM; q.m = 0, "random:0");
	BAD(q.threads = 0, "no thread");
	BAD(q.relation = 7, "an unknown relation");
#undef BAD
	q = p;
	q.sigma = 0;
	q.has_clip = 0;
	ok(covest_check_params(&q) == NULL, "sigma 0 needs no clip");
	q = p;
	q.has_count = 1;
	q.count_public = 3;
	q.relation = LEDGER_REPLACE_ONE;
	ok(covest_check_params(&q) == NULL, "a public count under "
	    "replace-one passes");
}

static void
test_plan(void)
{
	struct covest_params p = base();
	struct covest_plan pl;
	char msg[256];
	double c = 2, c2 = 4, fp, mu2 = 0;
	int good = 1;

	p.clip = c;
	p.sigma = 3;
	ok(covest_plan_noise(&pl, &p, 4, 10, msg, sizeof msg) == 0,
	    "plan: --sigma 3 --clip 2");
	fp = fpsum_margin((double)FPSUM_MAX_ROWS, 2, 0x1p-53);
	ok(pl.noisy && pl.fp_margin == fp && pl.rows_bound ==
	    (double)FPSUM_MAX_ROWS, "float margin of FPSUM_MAX_ROWS rows");
	ok(pl.delta2[COVEST_COV] == nextafter(c2 + fp * c2, INFINITY) &&
	    pl.delta2[COVEST_SUM] == nextafter(c + fp * c, INFINITY) &&
	    pl.delta2[COVEST_CNT] == 1, "add-remove: C^2, C and 1 plus the "
	    "margin");
	ok(fabs(pl.w[0] - 0.8) < 1e-15 && fabs(pl.w[1] - 0.1) < 1e-15 &&
	    fabs(pl.w[2] - 0.1) < 1e-15, "default split 0.8 0.1 0.1");
	ok(pl.nent[0] == 10 && pl.nent[1] == 4 && pl.nent[2] == 1,
	    "values noised per part");
	for (int i = 0; i < COVEST_NPARTS; i++) {
		double r = pl.sens[i] / pl.sigma[i];
		mu2 += r * r;
		/* each part gets its share of mu^2 */
		good &= fabs(r * r / (pl.mu * pl.mu) - pl.w[i]) < 1e-6;
		good &= pl.sens[i] >= pl.delta2[i];
	}
	ok(good, "each part's (sens / sigma)^2 is its share of mu^2");
	ok(fabs(sqrt(mu2) - pl.mu) < 1e-9 * pl.mu && pl.mu * 3 <= 1 &&
	    pl.mu * 3 > 1 - 1e-6, "joint mu = 1 / z, z = 3");

	p.has_count = 1;
	p.count_public = 1000;
	p.relation = LEDGER_REPLACE_ONE;
	ok(covest_plan_noise(&pl, &p, 4, 10, msg, sizeof msg) == 0 &&
	    pl.w[COVEST_CNT] == 0 && pl.rows_bound == 1000,
	    "replace-one with a public count: no count noise");
	fp = fpsum_margin(1000, 2, 0x1p-53);
	ok(pl.delta2[COVEST_COV] == nextafter(sqrt(2.0) * c2 * (1 + 0x1p-50) +
	    fp * c2, INFINITY) && pl.delta2[COVEST_SUM] == nextafter(2 * c +
	    fp * c, INFINITY), "replace-one: sqrt(2) C^2 and 2 C");

	p = base();
	p.has_sigma = 0;
	p.has_eps = p.has_delta = 1;
	p.epsilon = 1;
	p.delta = 1e-6;
	ok(covest_plan_noise(&pl, &p, 4, 10, msg, sizeof msg) == 0,
	    "plan: --epsilon 1 --delta 1e-6");
	{
		const double *ord;
		size_t no;
		double best = INFINITY;

		ord = rdp_default_orders(&no);
		for (size_t i = 0; i < no; i++) {
			/* Balle et al. 2020, Theorem 21 */
			double a = ord[i], e = rdp_gaussian(a, 1 / pl.mu) +
			    log((a - 1) / a) - (log(p.delta) + log(a)) /
			    (a - 1);
			best = e < best ? e : best;
		}
		ok(best <= 1 + 1e-9 && best > 0.99, "the RDP curve converts to at most "
		    "epsilon 1 (%.6g)", best);
	}
	p = base();
	p.sigma = 0;
	ok(covest_plan_noise(&pl, &p, 4, 10, msg, sizeof msg) == 0 &&
	    !pl.noisy, "--sigma 0: no noise");
}

static void
test_exact(void)
{
	enum { N = 7, D = 4 };
	double x[N * D], mean[D] = { 0 }, cov[D * D] = { 0 }, err = 0;
	struct covest_params p = base();
	struct out o;
	const double *cv, *mv, *cnt;
	int rc;

	for (size_t i = 0; i < N * D; i++)
		x[i] = sin((double)i * 1.7) * 3 + (double)(i % D);
	for (size_t i = 0; i < N; i++)
		for (size_t j = 0; j < D; j++)
			mean[j] += x[i * D + j] / N;
	for (size_t i = 0; i < N; i++)
		for (size_t a = 0; a < D; a++)
			for (size_t b = 0; b < D; b++)
				cov[a * D + b] += (x[i * D + a] - mean[a]) *
				    (x[i * D + b] - mean[b]) / N;
	p.sigma = 0;
	p.has_clip = 0;
	rc = run(&p, x, N, D, &o);
	ok(rc == 0, "release without noise: %s", rc ? covest_errmsg(o.c) : "");
	cv = get(&o, "cov/0");
	mv = get(&o, "mean/0");
	cnt = get(&o, "count");
	ok(cv && mv && cnt && *cnt == N, "count, mean/0 and cov/0 released");
	for (size_t i = 0; cv && mv && i < D * D; i++)
		err = fmax(err, fabs(cv[i] - cov[i]));
	for (size_t j = 0; cv && mv && j < D; j++)
		err = fmax(err, fabs(mv[j] - mean[j]));
	ok(cv && err < 1e-12, "the covariance and mean of the rows "
	    "(max error %.3g)", err);
	out_free(&o);

	/* Two random blocks: each is the covariance of its features. */
	p.subspaces = COVEST_SUB_RANDOM;
	p.m = 2;
	rc = run(&p, x, N, D, &o);
	{
		const double *s0 = get(&o, "subspace/0");
		const int64_t *i0 = (const int64_t *)s0;
		const int64_t *i1 = (const int64_t *)get(&o, "subspace/1");
		const double *c0 = get(&o, "cov/0"), *c1 = get(&o, "cov/1");
		int seen[D] = { 0 }, good = rc == 0 && i0 && i1 && c0 && c1;

		err = 0;
		for (size_t a = 0; good && a < 2; a++) {
			seen[i0[a]]++;
			seen[i1[a]]++;
			for (size_t b = 0; b < 2; b++) {
				err = fmax(err, fabs(c0[a * 2 + b] -
				    cov[i0[a] * D + i0[b]]));
				err = fmax(err, fabs(c1[a * 2 + b] -
				    cov[i1[a] * D + i1[b]]));
			}
		}
		for (size_t j = 0; j < D; j++)
			good &= seen[j] == 1;
		ok(good && err < 1e-12, "random:2: two blocks partition the "
		    "features, each the covariance of its own");
	}
	out_free(&o);
}

static void
test_clip(void)
{
	enum { N = 5, D = 3 };
	double x[N * D], tr = 0;
	struct covest_params p = base();
	struct out o;
	const double *cv;

	for (size_t i = 0; i < N * D; i++)
		x[i] = 10 + (double)i;
	p.sigma = 0;
	p.clip = 1.5;
	p.mean = COVEST_MEAN_ZERO;
	ok(run(&p, x, N, D, &o) == 0 && (cv = get(&o, "cov/0")) != NULL,
	    "release of clipped rows");
	for (size_t j = 0; cv && j < D; j++)
		tr += cv[j * D + j];
	/* Uncentred: trace(S / n) is the mean squared norm, C^2 when every
	 * row is longer than C. */
	ok(tr <= 1.5 * 1.5 && tr > 1.5 * 1.5 * (1 - 1e-12),
	    "rows are clipped to at most C (mean squared norm %.17g)", tr);
	out_free(&o);
}

static void
test_noise(void)
{
	enum { D = 20, REPS = 60 };
	double x[D] = { 0 }, s2 = 0, s1 = 0, sigma;
	struct covest_params p = base();
	struct ledger_entry e;
	struct out o;
	size_t cnt = 0, no;
	const double *ord;
	int good = 1;

	p.mean = COVEST_MEAN_ZERO;
	p.has_count = 1;
	p.count_public = 1;
	p.relation = LEDGER_REPLACE_ONE;
	p.audit = REPS;
	p.sigma = 2;
	ok(run(&p, x, 1, D, &o) == 0, "%d seeded releases of one zero row",
	    REPS);
	sigma = covest_get_plan(o.c)->sigma[COVEST_COV];
	for (int r = 0; r < REPS; r++) {
		char name[32];
		const double *cv;

		snprintf(name, sizeof name, "cov/0/%d", r);
		if ((cv = get(&o, name)) == NULL) {
			good = 0;
			continue;
		}
		for (size_t a = 0; a < D; a++)
			for (size_t b = a; b < D; b++) {
				s1 += cv[a * D + b];
				s2 += cv[a * D + b] * cv[a * D + b];
				cnt++;
				good &= cv[a * D + b] == cv[b * D + a];
			}
	}
	ok(good && cnt == (size_t)REPS * D * (D + 1) / 2,
	    "every release has a symmetric cov/0");
	/* 12600 draws: the sample variance is within 5% of sigma^2 with
	 * probability far above 1 - 1e-6 (its sd is about 1.3%); the seed
	 * is fixed. */
	ok(fabs(s2 / (double)cnt / (sigma * sigma) - 1) < 0.05 &&
	    fabs(s1 / (double)cnt) < 0.05 * sigma,
	    "noise variance %.6g against sigma^2 %.6g, mean %.3g",
	    s2 / (double)cnt, sigma * sigma, s1 / (double)cnt);
	memset(&e, 0, sizeof e);
	ok(covest_ledger_entry(o.c, &e) == 0, "ledger entry filled");
	ord = rdp_default_orders(&no);
	good = e.norders == no && e.relation == LEDGER_REPLACE_ONE;
	for (size_t i = 0; good && i < no; i++)
		good &= fabs(e.rdp[i] - REPS * rdp_gaussian(ord[i], 1 /
		    covest_get_plan(o.c)->mu)) <= 1e-12 * e.rdp[i];
	ok(good, "its RDP curve is %d Gaussian releases of mu", REPS);
	ok(ts_meta_get(&e.params, "sigma") != NULL &&
	    ts_meta_get(&e.params, "audit_releases") != NULL &&
	    ts_meta_get(&e.params, "sigma_count") == NULL &&
	    ts_meta_get(&e.params, "sigma_sum") == NULL,
	    "its parameters name the parts released only");
	ts_meta_free(&e.params);
	out_free(&o);
}

static void
test_errors(void)
{
	enum { N = 3, D = 2 };
	double x[N * D] = { 1, 2, 3, 4, 5, 6 };
	struct covest_params p = base();
	struct out o;
	int rc;

	p.has_count = 1;
	p.count_public = 4;
	p.relation = LEDGER_REPLACE_ONE;
	rc = run(&p, x, N, D, &o);
	ok(rc == PV_E_FORMAT && strstr(covest_errmsg(o.c), "--count-public")
	    != NULL, "rows other than the public count are refused: %s",
	    covest_errmsg(o.c));
	out_free(&o);
	p = base();
	p.subspaces = COVEST_SUB_RANDOM;
	p.m = 3;
	rc = run(&p, x, N, D, &o);
	ok(rc == PV_E_OPTION, "more blocks than features is refused");
	out_free(&o);
}

int
main(void)
{
	test_check();
	test_plan();
	test_exact();
	test_clip();
	test_noise();
	test_errors();
	return tap_done();
}
