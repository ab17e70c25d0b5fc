/*
 * gmmio.h: the Gaussian mixture model in a tensor stream, as gmm-fit
 * writes it and gmm-fit sample reads it: per class label c the tensors
 * "gmm/<c>/weights" (K), "gmm/<c>/means" (K x d) and "gmm/<c>/covs"
 * (K x d x d, K x d or K by the covariance type), all f64, and in the
 * stream metadata gmm.covariance, gmm.classes (the labels) and
 * gmm.priors (the class priors), comma-separated lists of numbers.  And
 * the drawing of labelled rows from such a model.
 *
 * Ownership: struct gmmio_model owns its mixtures, samplers and lists
 * (gmmio_free accepts a zeroed struct); tensors and metadata passed in
 * are the caller's and only read.  Error messages go into the caller's
 * err buffer.  Nothing here prints, exits or reads the environment.
 * Errors are PV_E_* values (pverr.h).
 */
#ifndef PRIVADA_GMMIO_H
#define PRIVADA_GMMIO_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "gmm.h"
#include "rng.h"
#include "tstream.h"

#define GMMIO_MAX_K 1024		/* components of a model */
#define GMMIO_MAX_D 4096		/* features */
#define GMMIO_MAX_CLASSES 1024		/* classes */

/* Parse s, a comma-separated list of at most cap finite numbers, into v.
 * @return the count (>= 1), or 0 with "more than N values" or "'s' is
 * not a list of numbers" in err. */
size_t gmmio_parse_list(const char *s, double *v, size_t cap, char *err,
    size_t errlen);

/* The type named name ("full", "diag", "spherical"), or -1. */
int gmmio_cov_parse(const char *name);

struct gmmio_model {
	int cov;			/* enum gmm_cov */
	size_t C, d;			/* classes, features */
	int32_t *labels;		/* C class labels */
	double *priors;			/* C, non-negative, positive sum */
	struct gmm *g;			/* C mixtures */
	struct gmm_work **wk;		/* C samplers (factored) */
	double *x;			/* d, scratch */
};

/*
 * Load the C classes of labels cls (whole numbers in 0 .. INT32_MAX) with
 * priors pri (non-negative, positive sum) from the nt tensors t, and
 * factor their covariances for sampling.
 * @return 0; PV_E_NOMEM; PV_E_FORMAT with a message in err ("no tensor
 * 'gmm/1/means'", "class 2: weight 0 is not a non-negative number", ...);
 * PV_E_NOTPD with "class c: component j: the covariance is not positive
 * definite".  On failure m is freed.
 */
int gmmio_load(struct gmmio_model *m, const struct tensor *t, size_t nt,
    int cov, const double *cls, const double *pri, size_t C, char *err,
    size_t errlen);
void gmmio_free(struct gmmio_model *m);

/* The class indices (0 .. C-1) of n rows, drawn with the priors. */
void gmmio_draw_classes(const struct gmmio_model *m, struct rng *r,
    int32_t *y, size_t n);
/* n rows (n x d, as floats) of the classes of indices y: per row a
 * component drawn with its class's weights, then a row of it. */
void gmmio_sample_rows(struct gmmio_model *m, struct rng *r,
    const int32_t *y, size_t n, float *out);

/* ---- the rows a model is fitted to ---- */

/* The n x d values of X (f32 or f64, 2 dimensions) as doubles in *out
 * (allocated, the caller frees).  A row with a non-finite value: with dp
 * it becomes the zero row (an error would tell about the row; counted in
 * *nonfinite), without dp it is an error.
 * @return 0; PV_E_NOMEM; PV_E_RANGE (X not f32/f64 of 2 dimensions, or
 * too large); PV_E_FORMAT with *bad the first non-finite row. */
int gmmio_rows(double **out, const struct tensor *X, int dp,
    uint64_t *nonfinite, size_t *bad);

/* The n labels of y (i32, i64 or u8, 1 dimension) as int32 in *out
 * (allocated), -1 (never a class) for a value outside 0 .. INT32_MAX.
 * @return 0, PV_E_NOMEM or PV_E_RANGE (not such a tensor). */
int gmmio_labels(int32_t **out, const struct tensor *y);

/* The classes the labels name, 0 .. max: max + 1 (0: none).  Without
 * privacy only: with it the classes must be public. */
size_t gmmio_classes_seen(const int32_t *y, size_t n);

/*
 * Group the n rows of *X (n x d) by class: classes 0 .. C-1, class c's
 * rows start[c] .. start[c+1]-1 (*start allocated, C + 1 values), in
 * their order.  A row with another label is dropped with dp (counted in
 * *dropped; the public class set is what bounds a row's influence),
 * without dp it is an error.  *X is replaced by the grouped rows.
 * @return 0; PV_E_NOMEM; PV_E_FORMAT with *bad the first row whose label
 * is not a class (nothing changed).
 */
int gmmio_group(double **X, size_t n, size_t d, const int32_t *y, size_t C,
    int dp, size_t **start, uint64_t *dropped, size_t *bad);

/* What a model's stream metadata says of it (gmmio_put_meta). */
struct gmmio_info {
	size_t C;			/* classes, labelled 0 .. C-1 */
	const double *priors;		/* C class priors */
	int cov;			/* enum gmm_cov */
	size_t k, d;			/* components, features */
	int has_clip;			/* rows were clipped to clip */
	double clip, reg;
	const char *label_source;	/* "public", "data" or NULL */
	const char *label_names;	/* publishable names, or NULL */
	int dp;				/* a DP release of iters iterations */
	size_t iters;
	double ll, bic, aic;		/* !dp: criteria of the whole model */
};

/* Set gmm.classes ("0,1,..."), gmm.priors (%.17g each), gmm.covariance,
 * gmm.components, gmm.features, gmm.clip, gmm.reg, gmm.label_source,
 * gmm.label_names, and gmm.iterations (dp) or gmm.log_likelihood,
 * gmm.bic, gmm.aic in m.  @return 0 or PV_E_NOMEM. */
int gmmio_put_meta(struct ts_meta *m, const struct gmmio_info *in);

/* Write f64 tensor base (with audit: base/rep) of ndim dims
 * and meta (merged, may be NULL).  @return 0 or a ts_write_tensor error
 * (PV_E_NOMEM, PV_E_RANGE for a bad header). */
int gmmio_put_tensor(struct ts_writer *w, const char *base, int audit,
    uint64_t rep, int ndim, const uint64_t *dims, const double *data,
    const struct ts_meta *meta);
/* Write the mixture of class label c (wmeta on its weights tensor). */
int gmmio_put_model(struct ts_writer *w, int c, int audit, uint64_t rep,
    const struct gmm *g, const struct ts_meta *wmeta);

#endif
