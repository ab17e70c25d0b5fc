/*
 * Unit tests of lib/ml/gmmio: the list parser (good lists, each kind of
 * bad one, the cap); a model written by gmmio_put_model/gmmio_put_meta
 * and read back through a real stream loads the same numbers; each kind
 * of malformed model is refused with its message; drawn classes follow
 * the priors and drawn rows have the component's mean and covariance
 * (fixed seed; each check fails by chance with probability below 1e-6);
 * the rows: non-finite rows zeroed with privacy, refused without; labels
 * outside int32 never a class; grouping by class keeps the row order and
 * drops (with privacy) or refuses (without) a row of another label.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmmio.h"
#include "rng.h"
#include "tap.h"

static void
test_lists(void)
{
	double v[4];
	char err[128];

	ok(gmmio_parse_list("0,1,2", v, 4, err, sizeof err) == 3 &&
	    v[2] == 2, "list: 0,1,2");
	ok(gmmio_parse_list("0.25,-1e3", v, 4, err, sizeof err) == 2 &&
	    v[0] == 0.25 && v[1] == -1000, "list: 0.25,-1e3");
	ok(gmmio_parse_list("1,,2", v, 4, err, sizeof err) == 0 &&
	    strcmp(err, "',2' is not a list of numbers") == 0,
	    "list: an empty field is refused: %s", err);
	ok(gmmio_parse_list("1,2 ", v, 4, err, sizeof err) == 0,
	    "list: trailing space refused");
	ok(gmmio_parse_list("", v, 4, err, sizeof err) == 0, "list: empty "
	    "refused");
	ok(gmmio_parse_list("nan", v, 4, err, sizeof err) == 0 &&
	    gmmio_parse_list("1e999", v, 4, err, sizeof err) == 0,
	    "list: NaN and overflow refused");
	ok(gmmio_parse_list("1,2,3,4,5", v, 4, err, sizeof err) == 0 &&
	    strcmp(err, "more than 4 values") == 0, "list: the cap: %s", err);
	ok(gmmio_cov_parse("diag") == GMM_DIAG &&
	    gmmio_cov_parse("spherical") == GMM_SPHERICAL &&
	    gmmio_cov_parse("Full") == -1, "covariance names");
}

/* Two classes, labels 0 and 1, k = 2 in d = 2, full covariances. */
static void
make(struct gmm *g)
{
	static const double w[2][2] = { { 0.25, 0.75 }, { 1, 0 } };
	static const double mu[2][4] = { { 1, -2, 3, 0.5 }, { 0, 0, 9, 9 } };
	static const double cv[8] = { 2, 0.6, 0.6, 0.5, 1, 0, 0, 1 };

	for (int c = 0; c < 2; c++) {
		if (gmm_alloc(&g[c], 2, 2, GMM_FULL) != 0)
			abort();
		memcpy(g[c].w, w[c], sizeof w[c]);
		memcpy(g[c].mu, mu[c], sizeof mu[c]);
		memcpy(g[c].cov, cv, sizeof cv);
	}
}

static char *
write_model(const struct gmm *g, size_t *len)
{
	char *buf = NULL;
	FILE *fp = open_memstream(&buf, len);
	struct ts_writer *w = ts_writer_open(fp, "mem", 1, 0);
	struct ts_meta m = { 0 };
	double pri[2] = { 0.4, 0.6 };
	struct gmmio_info gi = { .C = 2, .priors = pri, .cov = GMM_FULL,
	    .k = 2, .d = 2, .reg = 1e-6, .dp = 1, .iters = 3 };
	int rc = 0;

	for (int c = 0; c < 2; c++)
		rc |= gmmio_put_model(w, c, 0, 0, &g[c], NULL);
	rc |= gmmio_put_meta(&m, &gi);
	rc |= ts_write_meta(w, &m);
	rc |= ts_writer_finish(w);
	ts_writer_close(w);
	fclose(fp);
	ts_meta_free(&m);
	return rc == 0 ? buf : NULL;
}

static void
test_roundtrip(void)
{
	struct gmm g[2];
	struct gmmio_model gm;
	struct ts_reader *r;
	struct tensor *t;
	size_t len, nt, C;
	double cls[8], pri[8];
	char *buf, err[256];
	const char *cs, *ps;
	FILE *fp;
	int rc;

	make(g);
	buf = write_model(g, &len);
	ok(buf != NULL, "write: a model stream");
	fp = fmemopen(buf, len, "rb");
	r = ts_reader_open(fp, "mem");
	ok(ts_read_all(r, &t, &nt) == 0 && nt == 6, "read: 6 tensors");
	cs = ts_meta_get(ts_reader_meta(r), "gmm.classes");
	ps = ts_meta_get(ts_reader_meta(r), "gmm.priors");
	ok(cs && strcmp(cs, "0,1") == 0 && ps && strcmp(ps,
	    "0.40000000000000002,0.59999999999999998") == 0 &&
	    strcmp(ts_meta_get(ts_reader_meta(r), "gmm.iterations"),
	    "3") == 0 &&
	    ts_meta_get(ts_reader_meta(r), "gmm.clip") == NULL,
	    "meta: classes, priors (%%.17g), iterations, no clip");
	C = gmmio_parse_list(cs, cls, 8, err, sizeof err);
	(void)gmmio_parse_list(ps, pri, 8, err, sizeof err);
	rc = gmmio_load(&gm, t, nt, GMM_FULL, cls, pri, C, err, sizeof err);
	ok(rc == 0 && gm.C == 2 && gm.d == 2 && gm.labels[1] == 1,
	    "load: two classes in 2 dimensions");
	ok(rc == 0 && memcmp(gm.g[0].mu, g[0].mu, 4 * sizeof(double)) == 0 &&
	    memcmp(gm.g[1].cov, g[1].cov, 8 * sizeof(double)) == 0 &&
	    gm.g[0].w[1] == 0.75, "load: the same numbers");

	/* Sampling: class frequencies and class 0 component 1's rows. */
	if (rc == 0) {
		enum { M = 40000 };
		struct rng *rg;
		int32_t *y = malloc(M * sizeof *y);
		float *x = malloc(2 * M * sizeof *x);
		double f1 = 0, m[2] = { 0, 0 }, S[3] = { 0, 0, 0 };

		if (rng_new_seeded(&rg, 4, "gmmio") != 0)
			abort();
		gmmio_draw_classes(&gm, rg, y, M);
		for (size_t i = 0; i < M; i++)
			f1 += y[i] == 1;
		f1 /= M;
		/* sd of f1: sqrt(0.24 / M) = 0.00245 */
		ok(fabs(f1 - 0.6) < 5 * 0.00245, "draw: class 1 with prior 0.6 "
		    "(%.4f)", f1);
		/* Class 1 has weights (1, 0): every row from its component
		 * 0, mean (0, 0), covariance [2 0.6; 0.6 0.5]. */
		for (size_t i = 0; i < M; i++)
			y[i] = 1;
		gmmio_sample_rows(&gm, rg, y, M, x);
		for (size_t i = 0; i < M; i++) {
			m[0] += x[2 * i] / M;
			m[1] += x[2 * i + 1] / M;
		}
		for (size_t i = 0; i < M; i++) {
			double a = x[2 * i] - m[0], b = x[2 * i + 1] - m[1];
			S[0] += a * a / M;
			S[1] += a * b / M;
			S[2] += b * b / M;
		}
		ok(fabs(m[0]) < 0.035 && fabs(m[1]) < 0.018, "sample: mean (0, 0)"
		    " (%.4f, %.4f)", m[0], m[1]);
		ok(fabs(S[0] - 2) < 0.07 && fabs(S[1] - 0.6) < 0.03 &&
		    fabs(S[2] - 0.5) < 0.02, "sample: covariance of component 0 (%.3f "
		    "%.3f "
		    "%.3f)", S[0], S[1], S[2]);
		free(y);
		free(x);
		rng_free(rg);
	}
	gmmio_free(&gm);

	/* Malformed models. */
	cls[1] = 1.5;
	ok(gmmio_load(&gm, t, nt, GMM_FULL, cls, pri, 2, err, sizeof err) ==
	    PV_E_FORMAT && strstr(err, "is not a label"), "load: a label "
	    "1.5 refused: %s", err);
	cls[1] = 2;
	ok(gmmio_load(&gm, t, nt, GMM_FULL, cls, pri, 2, err, sizeof err) ==
	    PV_E_FORMAT && strcmp(err, "no tensor 'gmm/2/weights'") == 0,
	    "load: a missing class refused: %s", err);
	cls[1] = 1;
	ok(gmmio_load(&gm, t, nt, GMM_DIAG, cls, pri, 2, err, sizeof err) ==
	    PV_E_FORMAT && strstr(err, "shape of diag"), "load: the wrong "
	    "covariance type refused: %s", err);
	pri[0] = -0.1;
	ok(gmmio_load(&gm, t, nt, GMM_FULL, cls, pri, 2, err, sizeof err) ==
	    PV_E_FORMAT, "load: a negative prior refused");
	pri[0] = 0.4;
	((double *)t[2].data)[7] = -1;	/* class 0's second covariance */
	ok(gmmio_load(&gm, t, nt, GMM_FULL, cls, pri, 2, err, sizeof err) ==
	    PV_E_NOTPD && strstr(err, "component 1"), "load: a covariance "
	    "not positive definite refused: %s", err);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	ts_reader_close(r);
	fclose(fp);
	free(buf);
	gmm_free(&g[0]);
	gmm_free(&g[1]);
}

static void
test_rows(void)
{
	float xf[8] = { 1, 2, 3, 4, NAN, 6, 7, 8 };
	int64_t yl[5] = { 1, -5, 0, (int64_t)1 << 40, 1 };
	double xd[10] = { 0, 0, 1, 1, 2, 2, 3, 3, 4, 4 }, *R, *G;
	uint64_t dims[2] = { 4, 2 }, nf = 0, dropped = 0;
	struct tensor X, y;
	int32_t *lab, yy[5] = { 1, 0, 1, -1, 0 };
	size_t bad = 99, *st;
	int rc;

	if (tensor_init(&X, "X", TS_F32, 2, dims) != 0)
		abort();
	X.data = xf;
	rc = gmmio_rows(&R, &X, 1, &nf, &bad);
	ok(rc == 0 && nf == 1 && R[4] == 0 && R[5] == 0 && R[6] == 7 &&
	    R[1] == 2, "rows: with privacy the non-finite row 2 is zeroed");
	free(R);
	rc = gmmio_rows(&R, &X, 0, &nf, &bad);
	ok(rc == PV_E_FORMAT && bad == 2 && R == NULL, "rows: without, row 2 "
	    "is refused");
	X.data = NULL;
	tensor_free(&X);
	dims[0] = 5;
	if (tensor_init(&y, "y", TS_I64, 1, dims) != 0)
		abort();
	y.data = yl;
	ok(gmmio_labels(&lab, &y) == 0 && lab[0] == 1 && lab[1] == -1 &&
	    lab[3] == -1 && lab[4] == 1, "labels: negative and 2^40 are no "
	    "class");
	ok(gmmio_classes_seen(lab, 5) == 2 && gmmio_classes_seen(lab + 1, 1)
	    == 0, "labels: the classes seen");
	free(lab);
	y.data = NULL;
	tensor_free(&y);

	G = malloc(sizeof xd);
	memcpy(G, xd, sizeof xd);
	rc = gmmio_group(&G, 5, 2, yy, 2, 0, &st, &dropped, &bad);
	ok(rc == PV_E_FORMAT && bad == 3 && memcmp(G, xd, sizeof xd) == 0,
	    "group: without privacy, row 3's label -1 is refused");
	rc = gmmio_group(&G, 5, 2, yy, 2, 1, &st, &dropped, &bad);
	ok(rc == 0 && dropped == 1 && st[0] == 0 && st[1] == 2 && st[2] == 4,
	    "group: with privacy it is dropped; classes of 2 and 2 rows");
	ok(rc == 0 && G[0] == 1 && G[2] == 4 && G[4] == 0 && G[6] == 2,
	    "group: class 0 rows 1, 4 then class 1 rows 0, 2, in order");
	free(st);
	free(G);
}

int
main(void)
{
	test_rows();
	test_lists();
	test_roundtrip();
	return tap_done();
}
