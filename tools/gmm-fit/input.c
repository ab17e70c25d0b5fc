/* input.c: gmm-fit's rows, classes and --init-means (gmm-fit.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gmm-fit.h"
#include "gmmio.h"
#include "labels.h"
#include "tensor.h"
#include "tstream.h"

/* Read the rows of tensor X (and y with need_y) into memory: EM visits
 * them once per iteration, which a stream on stdin cannot replay. */
void
read_input(struct ts_reader *r, struct data *dt, int need_y, int dp)
{
	struct tensor t, X = { 0 }, y = { 0 };
	int rc, haveX = 0, havey = 0;
	uint64_t ne;
	size_t bad = 0;

	while ((rc = ts_read_next(r, &t)) == 1) {
		if (strcmp(t.name, "X") == 0 && !haveX) {
			if (t.ndim != 2 || (t.dtype != TS_F32 &&
			    t.dtype != TS_F64))
				cli_die(EX_DATAERR, "%s: tensor 'X': expected f32 "
				    "or f64 of 2 dimensions, got %s of %d",
				    dt->label, ts_dtype_name(t.dtype), t.ndim);
			if (t.dims[1] == 0 || t.dims[1] > MAX_FEATURES)
				cli_die(EX_DATAERR, "%s: tensor 'X' has %llu "
				    "columns: gmm-fit takes 1 to %d", dt->label,
				    (unsigned long long)t.dims[1], MAX_FEATURES);
			if ((rc = ts_read_data(r, &t)) != 0)
				cli_rdie(r, rc);
			X = t;
			haveX = 1;
		} else if (strcmp(t.name, "y") == 0 && need_y && !havey) {
			if (t.ndim != 1 || (t.dtype != TS_I32 &&
			    t.dtype != TS_I64 && t.dtype != TS_U8))
				cli_die(EX_DATAERR, "%s: tensor 'y': expected i32, "
				    "i64 or u8 of 1 dimension", dt->label);
			if ((rc = ts_read_data(r, &t)) != 0)
				cli_rdie(r, rc);
			y = t;
			havey = 1;
		} else {
			tensor_free(&t);
		}
	}
	if (rc < 0)
		cli_rdie(r, rc);
	if (!haveX)
		cli_die(EX_DATAERR, "%s: no tensor 'X'", dt->label);
	if (need_y && !havey)
		cli_die(EX_DATAERR, "%s: no tensor 'y' of labels (--by-label)",
		    dt->label);
	dt->d = (size_t)X.dims[1];
	if (tensor_elems(&X, &ne) != 0 || ne > SIZE_MAX / sizeof(double))
		cli_die(EX_DATAERR, "%s: tensor 'X' is too large", dt->label);
	dt->n = (size_t)X.dims[0];
	if (havey && y.dims[0] != X.dims[0])
		cli_die(EX_DATAERR, "%s: tensor 'y' has %llu rows, 'X' %llu",
		    dt->label, (unsigned long long)y.dims[0],
		    (unsigned long long)X.dims[0]);
	rc = gmmio_rows(&dt->X, &X, dp, &dt->nonfinite, &bad);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: tensor 'X': row %zu has a non-finite "
		    "value", dt->label, bad);
	tensor_free(&X);
	if (havey) {
		char err[256];

		if (gmmio_labels(&dt->y, &y) != 0)
			cli_die(EX_OSERR, "out of memory");
		if (label_get(&y.meta, &dt->lset, err, sizeof err) != 0)
			cli_die(EX_DATAERR, "%s: tensor 'y': %s", dt->label, err);
		if (dt->lset.names != NULL)
			dt->lset.names = dt->label_names =
			    cli_strdup(dt->lset.names);
		tensor_free(&y);
	}
}

/* Group the rows by class: classes 0 .. nclass-1 with --by-label (rows
 * with other labels dropped under privacy, an error without), else one
 * class of every row. */
void
group_rows(struct data *dt, const struct opts *o)
{
	size_t n = dt->n, C, bad = 0;
	char err[256];
	int rc;

	if (!o->by_label) {
		dt->nclass = 1;
		dt->start = cli_calloc(2, sizeof *dt->start);
		dt->start[1] = n;
		return;
	}
	/* Under privacy the classes are public: --classes or a label
	 * set declared public, never one learnt from the rows. */
	rc = label_classes(&dt->lset, o->dp, o->has_classes ? o->classes : 0,
	    &C, &dt->names_ok, err, sizeof err);
	if (rc == LABEL_E_USAGE)
		cli_usage_error("%s: %s", dt->label, err);
	if (rc != LABEL_OK)
		cli_die(EX_DATAERR, "%s: %s", dt->label, err);
	if (C == 0 && (C = gmmio_classes_seen(dt->y, n)) == 0)
		cli_die(EX_DATAERR, "%s: tensor 'y' holds no class", dt->label);
	if (C > MAX_CLASSES)
		cli_die(EX_DATAERR, "%s: %zu classes: gmm-fit takes at most %d",
		    dt->label, C, MAX_CLASSES);
	rc = gmmio_group(&dt->X, n, dt->d, dt->y, C, o->dp, &dt->start,
	    &dt->dropped, &bad);
	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: tensor 'y': row %zu: label %d is not a "
		    "class 0 .. %zu", dt->label, bad, (int)dt->y[bad], C - 1);
	dt->nclass = C;
}

/* The initial means of --init-means: the first tensor, K x d values. */
double *
read_init_means(struct ts_reader *r, const char *label, size_t k, size_t d)
{
	struct tensor t;
	uint64_t ne;
	double *m;
	int rc;

	if ((rc = ts_read_next(r, &t)) < 0)
		cli_rdie(r, rc);
	if (rc == 0)
		cli_die(EX_DATAERR, "%s: --init-means: the stream holds no "
		    "tensor", label);
	if (t.dtype != TS_F32 && t.dtype != TS_F64)
		cli_die(EX_DATAERR, "%s: --init-means: tensor '%s' is %s: "
		    "expected f32 or f64", label, t.name,
		    ts_dtype_name(t.dtype));
	if (t.ndim != 2 || t.dims[1] != d ||
	    (t.dims[0] != TS_UNKNOWN_ROWS && t.dims[0] != k))
		cli_die(EX_DATAERR, "%s: --init-means: tensor '%s' must be "
		    "%zu x %zu (components x features)", label, t.name, k, d);
	if ((rc = ts_read_data(r, &t)) != 0)
		cli_rdie(r, rc);
	if (tensor_elems(&t, &ne) != 0 || ne != (uint64_t)k * d)
		cli_die(EX_DATAERR, "%s: --init-means: tensor '%s' must be "
		    "%zu x %zu (components x features)", label, t.name, k, d);
	m = cli_reallocarray(NULL, k * d, sizeof *m);
	for (size_t j = 0; j < k * d; j++) {
		m[j] = t.dtype == TS_F64 ? ((double *)t.data)[j] :
		    ((float *)t.data)[j];
		if (!isfinite(m[j]))
			cli_die(EX_DATAERR, "%s: --init-means: value %zu is not "
			    "finite", label, j);
	}
	tensor_free(&t);
	while ((rc = ts_read_next(r, &t)) == 1)
		tensor_free(&t);
	if (rc < 0)
		cli_rdie(r, rc);
	return m;
}
