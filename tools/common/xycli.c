/* xycli.c: the labelled rows a trainer reads (see xycli.h). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "nn.h"
#include "tensor.h"
#include "xycli.h"

/* Read X and y of a stream into d. */
/* A positive integer value of key in meta (at most 2^20), or 0. */
static size_t
meta_dim(const struct ts_meta *meta, const char *key)
{
	const char *v = ts_meta_get(meta, key);
	char *end;
	unsigned long long x;

	if (v == NULL)
		return 0;
	x = strtoull(v, &end, 10);
	return end == v || *end != '\0' || x > (1u << 20) ? 0 : (size_t)x;
}

/* features.shape of meta, C,H,W of positive integers (at most 2^20), into
 * s; zeros when absent or malformed. */
static void
meta_shape(const struct ts_meta *meta, size_t *s)
{
	const char *v = ts_meta_get(meta, "features.shape");
	char *end;

	memset(s, 0, 3 * sizeof *s);
	for (int i = 0; v != NULL && i < 3; i++) {
		unsigned long long x = strtoull(v, &end, 10);

		if (end == v || x == 0 || x > (1u << 20) ||
		    *end != (i < 2 ? ',' : '\0')) {
			memset(s, 0, 3 * sizeof *s);
			return;
		}
		s[i] = (size_t)x;
		v = end + 1;
	}
}

void
xy_read(struct xyset *dt, FILE *fp, const char *label, int need_y)
{
	struct ts_reader *r = cli_reader(fp, label);
	struct tensor *t = NULL, *X = NULL, *y = NULL;
	size_t nt = 0;
	int rc;

	memset(dt, 0, sizeof *dt);
	dt->label = label;
	if ((rc = ts_read_all(r, &t, &nt)) != 0)
		cli_rdie(r, rc);
	for (size_t i = 0; i < nt; i++) {
		if (strcmp(t[i].name, "X") == 0)
			X = &t[i];
		else if (strcmp(t[i].name, "y") == 0)
			y = &t[i];
	}
	if (X == NULL)
		cli_die(EX_DATAERR, "%s: no tensor 'X'", label);
	if (X->ndim != 2 || (X->dtype != TS_F32 && X->dtype != TS_F64))
		cli_die(EX_DATAERR, "%s: tensor 'X': expected f32 or f64 of 2 "
		    "dimensions, got %s of %d", label,
		    ts_dtype_name(X->dtype), X->ndim);
	if (X->dims[0] == 0 || X->dims[1] == 0)
		cli_die(EX_DATAERR, "%s: tensor 'X' is empty", label);
	if (X->dims[1] > NN_MAX_WIDTH)
		cli_die(EX_DATAERR, "%s: tensor 'X': %llu features exceed %u",
		    label, (unsigned long long)X->dims[1], NN_MAX_WIDTH);
	dt->n = (size_t)X->dims[0];
	dt->d = (size_t)X->dims[1];
	dt->img_h = meta_dim(&X->meta, "image.height");
	dt->img_w = meta_dim(&X->meta, "image.width");
	meta_shape(&X->meta, dt->fshape);
	dt->fhwc = ts_meta_get(&X->meta, "features.layout") != NULL &&
	    strcmp(ts_meta_get(&X->meta, "features.layout"), "hwc") == 0;
	if (X->dtype == TS_F32) {
		dt->X = X->data;
		X->data = NULL;
	} else {
		const double *src = X->data;
		dt->X = cli_reallocarray(NULL, dt->n * dt->d, sizeof *dt->X);
		/* Values beyond the float range become infinities: their
		 * rows are then zeroed like any non-finite row. */
		for (size_t i = 0; i < dt->n * dt->d; i++)
			dt->X[i] = (float)src[i];
	}
	if (y == NULL) {
		if (need_y)
			cli_die(EX_DATAERR, "%s: no tensor 'y' of labels", label);
	} else {
		if (y->ndim != 1 || (y->dtype != TS_I32 && y->dtype != TS_I64 &&
		    y->dtype != TS_U8))
			cli_die(EX_DATAERR, "%s: tensor 'y': expected i32, i64 "
			    "or u8 of 1 dimension", label);
		if (y->dims[0] != X->dims[0])
			cli_die(EX_DATAERR, "%s: tensor 'y' has %llu rows, 'X' "
			    "%llu", label, (unsigned long long)y->dims[0],
			    (unsigned long long)X->dims[0]);
		dt->y = cli_reallocarray(NULL, dt->n, sizeof *dt->y);
		for (size_t i = 0; i < dt->n; i++) {
			int64_t v = y->dtype == TS_I32 ?
			    ((int32_t *)y->data)[i] : y->dtype == TS_I64 ?
			    ((int64_t *)y->data)[i] : ((uint8_t *)y->data)[i];
			/* -1 is never a class: out-of-range labels stay so. */
			dt->y[i] = v < 0 || v > INT32_MAX ? -1 : (int32_t)v;
		}
		{
			char err[256];
			if (label_get(&y->meta, &dt->lset, err, sizeof err) != 0)
				cli_die(EX_DATAERR, "%s: tensor 'y': %s", label,
				    err);
			if (dt->lset.names != NULL)
				dt->lset.names = dt->label_names =
				    cli_strdup(dt->lset.names);
		}
	}
	if (ts_meta_merge(&dt->meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	dt->digest = ts_reader_digest(r);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	ts_reader_close(r);
}

void
xy_free(struct xyset *dt)
{
	free(dt->X);
	free(dt->y);
	free(dt->label_names);
	ts_meta_free(&dt->meta);
}

/* Labels of public data (validation) or of a run without privacy must
 * be classes. */
void
xy_check_labels(const struct xyset *dt, size_t K)
{
	for (size_t i = 0; i < dt->n; i++)
		if (dt->y[i] < 0 || (size_t)dt->y[i] >= K)
			cli_die(EX_DATAERR, "%s: tensor 'y': row %zu: label "
			    "outside [0, %zu)", dt->label, i, K);
}

/* --mode assoc: rows with a negative label (-1: queries teacher-vote
 * left unanswered) take no part in the labelled loss; they are dropped. */
void
xy_drop_unlabelled(struct xyset *dt, int verbose)
{
	size_t k = 0;

	for (size_t i = 0; i < dt->n; i++) {
		if (dt->y[i] < 0)
			continue;
		if (k != i) {
			memcpy(dt->X + k * dt->d, dt->X + i * dt->d, dt->d *
			    sizeof *dt->X);
			dt->y[k] = dt->y[i];
		}
		k++;
	}
	if (k == 0)
		cli_die(EX_DATAERR, "%s: tensor 'y': no row has a label (all "
		    "are -1)", dt->label);
	if (verbose && k < dt->n)
		fprintf(stderr, "%s: %s: %zu rows without a label (-1) left "
		    "out\n", cli_prog(), dt->label, dt->n - k);
	dt->n = k;
}

/* Zero the non-finite rows of a training input; their count is shown
 * only when the input is trained on without privacy. */
void
xy_zero_rows(struct xyset *dt, int dp)
{
	size_t z = nn_zero_nonfinite_rows(dt->X, dt->n, dt->d);

	if (z && !dp)
		cli_warn("%s: %zu rows with non-finite values were taken as "
		    "zero rows", dt->label, z);
}
