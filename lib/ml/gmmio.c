/*
 * gmmio.c: Gaussian mixture models in tensor streams (gmmio.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmmio.h"

static int
fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

size_t
gmmio_parse_list(const char *s, double *v, size_t cap, char *err,
    size_t errlen)
{
	size_t n = 0;
	char *end;

	for (;;) {
		if (n == cap) {
			snprintf(err, errlen, "more than %zu values", cap);
			return 0;
		}
		errno = 0;
		v[n] = strtod(s, &end);
		if (end == s || errno == ERANGE || !isfinite(v[n]))
			break;
		n++;
		if (*end == '\0')
			return n;
		if (*end != ',')
			break;
		s = end + 1;
	}
	snprintf(err, errlen, "'%s' is not a list of numbers", s);
	return 0;
}

int
gmmio_cov_parse(const char *name)
{
	for (int i = GMM_FULL; i <= GMM_SPHERICAL; i++)
		if (strcmp(name, gmm_cov_name(i)) == 0)
			return i;
	return -1;
}

static const struct tensor *
find_tensor(const struct tensor *t, size_t nt, const char *name)
{
	for (size_t i = 0; i < nt; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

/* Load the mixture of class c from the model's tensors. */
static int
load_class(struct gmm *g, const struct tensor *t, size_t nt, int c,
    int cov, char *err, size_t errlen)
{
	static const char *const part[3] = { "weights", "means", "covs" };
	const struct tensor *tt[3], *w, *m, *v;
	char name[64];
	size_t k, d;
	double tot = 0;

	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof name, "gmm/%d/%s", c, part[i]);
		if ((tt[i] = find_tensor(t, nt, name)) == NULL)
			return fail(err, errlen, PV_E_FORMAT, "no tensor '%s'",
			    name);
	}
	w = tt[0];
	m = tt[1];
	v = tt[2];
	if (w->dtype != TS_F64 || m->dtype != TS_F64 || v->dtype != TS_F64)
		return fail(err, errlen, PV_E_FORMAT, "the tensors of class %d "
		    "must be f64", c);
	if (w->ndim != 1 || m->ndim != 2 || m->dims[0] != w->dims[0] ||
	    w->dims[0] == 0 || w->dims[0] > GMMIO_MAX_K || m->dims[1] == 0 ||
	    m->dims[1] > GMMIO_MAX_D)
		return fail(err, errlen, PV_E_FORMAT, "class %d: weights [K] "
		    "and means [K, d] do not fit", c);
	k = (size_t)w->dims[0];
	d = (size_t)m->dims[1];
	if (cov == GMM_FULL ? v->ndim != 3 || v->dims[0] != k ||
	    v->dims[1] != d || v->dims[2] != d : cov == GMM_DIAG ?
	    v->ndim != 2 || v->dims[0] != k || v->dims[1] != d :
	    v->ndim != 1 || v->dims[0] != k)
		return fail(err, errlen, PV_E_FORMAT, "class %d: tensor 'covs' "
		    "does not have the shape of %s covariances", c,
		    gmm_cov_name(cov));
	if (gmm_alloc(g, k, d, cov) != 0)
		return PV_E_NOMEM;
	memcpy(g->w, w->data, k * sizeof *g->w);
	memcpy(g->mu, m->data, k * d * sizeof *g->mu);
	memcpy(g->cov, v->data, k * gmm_cov_len(cov, d) * sizeof *g->cov);
	for (size_t j = 0; j < k; j++) {
		if (!(g->w[j] >= 0) || !isfinite(g->w[j]))
			return fail(err, errlen, PV_E_FORMAT, "class %d: "
			    "weight %zu is not a non-negative number", c, j);
		tot += g->w[j];
	}
	if (!(tot > 0))
		return fail(err, errlen, PV_E_FORMAT, "class %d: the weights "
		    "sum to 0", c);
	for (size_t j = 0; j < k * d; j++)
		if (!isfinite(g->mu[j]))
			return fail(err, errlen, PV_E_FORMAT, "class %d: a mean "
			    "is not finite", c);
	return 0;
}

void
gmmio_free(struct gmmio_model *m)
{
	for (size_t c = 0; c < m->C; c++) {
		if (m->g)
			gmm_free(&m->g[c]);
		if (m->wk)
			gmm_work_free(m->wk[c]);
	}
	free(m->g);
	free(m->wk);
	free(m->labels);
	free(m->priors);
	free(m->x);
	memset(m, 0, sizeof *m);
}

int
gmmio_load(struct gmmio_model *m, const struct tensor *t, size_t nt,
    int cov, const double *cls, const double *pri, size_t C, char *err,
    size_t errlen)
{
	double tot = 0;
	size_t bad;
	int rc;

	memset(m, 0, sizeof *m);
	for (size_t c = 0; c < C; c++) {
		if (cls[c] != floor(cls[c]) || cls[c] < 0 || cls[c] > INT32_MAX)
			return fail(err, errlen, PV_E_FORMAT, "gmm.classes: "
			    "'%.17g' is not a label", cls[c]);
		if (!(pri[c] >= 0))
			return fail(err, errlen, PV_E_FORMAT, "gmm.priors: a "
			    "prior is negative");
		tot += pri[c];
	}
	if (!(tot > 0))
		return fail(err, errlen, PV_E_FORMAT, "the priors sum to 0");
	m->cov = cov;
	if ((m->g = calloc(C ? C : 1, sizeof *m->g)) == NULL ||
	    (m->wk = calloc(C ? C : 1, sizeof *m->wk)) == NULL ||
	    (m->labels = calloc(C ? C : 1, sizeof *m->labels)) == NULL ||
	    (m->priors = calloc(C ? C : 1, sizeof *m->priors)) == NULL) {
		gmmio_free(m);
		return PV_E_NOMEM;
	}
	m->C = C;
	for (size_t c = 0; c < C; c++) {
		m->labels[c] = (int32_t)cls[c];
		m->priors[c] = pri[c];
		if ((rc = load_class(&m->g[c], t, nt, m->labels[c], cov, err,
		    errlen)) != 0)
			goto out;
		if (c > 0 && m->g[c].d != m->g[0].d) {
			rc = fail(err, errlen, PV_E_FORMAT, "the classes have "
			    "different numbers of features");
			goto out;
		}
		if ((rc = gmm_work_new(&m->wk[c], m->g[c].k, m->g[c].d, cov,
		    1)) != 0) {
			rc = PV_E_NOMEM;
			goto out;
		}
		if (gmm_sample_prepare(m->wk[c], &m->g[c], &bad) != 0) {
			rc = fail(err, errlen, PV_E_NOTPD, "class %d: component "
			    "%zu: the covariance is not positive definite",
			    (int)m->labels[c], bad);
			goto out;
		}
	}
	m->d = C ? m->g[0].d : 0;
	if ((m->x = calloc(m->d ? m->d : 1, sizeof *m->x)) == NULL) {
		rc = PV_E_NOMEM;
		goto out;
	}
	return 0;
out:
	gmmio_free(m);
	return rc;
}

void
gmmio_draw_classes(const struct gmmio_model *m, struct rng *r, int32_t *y,
    size_t n)
{
	for (size_t i = 0; i < n; i++)
		y[i] = (int32_t)gmm_draw_index(r, m->priors, m->C);
}

void
gmmio_sample_rows(struct gmmio_model *m, struct rng *r, const int32_t *y,
    size_t n, float *out)
{
	size_t d = m->d;

	for (size_t i = 0; i < n; i++) {
		size_t c = (size_t)y[i], j;

		j = gmm_draw_index(r, m->g[c].w, m->g[c].k);
		gmm_sample_row(m->wk[c], &m->g[c], r, j, m->x);
		for (size_t a = 0; a < d; a++)
			out[i * d + a] = (float)m->x[a];
	}
}

int
gmmio_put_tensor(struct ts_writer *w, const char *base, int audit,
    uint64_t rep, int ndim, const uint64_t *dims, const double *data,
    const struct ts_meta *meta)
{
	struct tensor t;
	char name[TS_MAX_NAME + 1];
	int rc;

	if (audit)
		snprintf(name, sizeof name, "%s/%llu", base,
		    (unsigned long long)rep);
	else
		snprintf(name, sizeof name, "%s", base);
	if (tensor_init(&t, name, TS_F64, ndim, dims) != 0)
		return PV_E_RANGE;
	if (meta && ts_meta_merge(&t.meta, meta, "", NULL) != 0) {
		tensor_free(&t);
		return PV_E_NOMEM;
	}
	t.data = (void *)(uintptr_t)data;	/* only read by the writer */
	rc = ts_write_tensor(w, &t);
	t.data = NULL;
	tensor_free(&t);
	return rc;
}

int
gmmio_put_model(struct ts_writer *w, int c, int audit, uint64_t rep,
    const struct gmm *g, const struct ts_meta *wmeta)
{
	char base[64];
	uint64_t dims[3] = { g->k, g->d, g->d };
	int nd = g->type == GMM_FULL ? 3 : g->type == GMM_DIAG ? 2 : 1, rc;

	snprintf(base, sizeof base, "gmm/%d/weights", c);
	if ((rc = gmmio_put_tensor(w, base, audit, rep, 1, dims, g->w,
	    wmeta)) != 0)
		return rc;
	snprintf(base, sizeof base, "gmm/%d/means", c);
	if ((rc = gmmio_put_tensor(w, base, audit, rep, 2, dims, g->mu,
	    NULL)) != 0)
		return rc;
	snprintf(base, sizeof base, "gmm/%d/covs", c);
	return gmmio_put_tensor(w, base, audit, rep, nd, dims, g->cov, NULL);
}

int
gmmio_put_meta(struct ts_meta *m, const struct gmmio_info *in)
{
	size_t len = in->C * 26 + 1, off = 0;
	char *cl = malloc(len), *pr = malloc(len);
	int rc = PV_E_NOMEM;

	if (cl == NULL || pr == NULL)
		goto out;
	cl[0] = pr[0] = '\0';
	for (size_t c = 0; c < in->C; c++)
		off += (size_t)snprintf(cl + off, len - off, "%s%zu",
		    c ? "," : "", c);
	off = 0;
	for (size_t c = 0; c < in->C; c++)
		off += (size_t)snprintf(pr + off, len - off, "%s%.17g",
		    c ? "," : "", in->priors[c]);
	if (ts_meta_set(m, "gmm.classes", cl) != 0 ||
	    ts_meta_set(m, "gmm.priors", pr) != 0 ||
	    ts_meta_set(m, "gmm.covariance", gmm_cov_name(in->cov)) != 0 ||
	    ts_meta_setf(m, "gmm.components", "%.0f", (double)in->k) != 0 ||
	    ts_meta_setf(m, "gmm.features", "%.0f", (double)in->d) != 0 ||
	    (in->has_clip &&
	    ts_meta_setf(m, "gmm.clip", "%.17g", in->clip) != 0) ||
	    ts_meta_setf(m, "gmm.reg", "%.17g", in->reg) != 0 ||
	    (in->label_source && ts_meta_set(m, "gmm.label_source",
	    in->label_source) != 0) ||
	    (in->label_names && ts_meta_set(m, "gmm.label_names",
	    in->label_names) != 0))
		goto out;
	if (in->dp) {
		if (ts_meta_setf(m, "gmm.iterations", "%.0f",
		    (double)in->iters) != 0)
			goto out;
	} else if (ts_meta_setf(m, "gmm.log_likelihood", "%.17g",
	    in->ll) != 0 || ts_meta_setf(m, "gmm.bic", "%.17g", in->bic) != 0 ||
	    ts_meta_setf(m, "gmm.aic", "%.17g", in->aic) != 0) {
		goto out;
	}
	rc = 0;
out:
	free(cl);
	free(pr);
	return rc;
}

int
gmmio_rows(double **out, const struct tensor *X, int dp, uint64_t *nonfinite,
    size_t *bad)
{
	size_t n, d;
	uint64_t ne;
	double *R;

	*out = NULL;
	if (X->ndim != 2 || (X->dtype != TS_F32 && X->dtype != TS_F64) ||
	    tensor_elems(X, &ne) != 0 || ne > SIZE_MAX / sizeof(double))
		return PV_E_RANGE;
	n = (size_t)X->dims[0];
	d = (size_t)X->dims[1];
	if ((R = malloc(ne ? (size_t)ne * sizeof *R : 1)) == NULL)
		return PV_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		double *x = R + i * d;
		int nf = 0;

		for (size_t a = 0; a < d; a++) {
			size_t e = i * d + a;
			x[a] = X->dtype == TS_F64 ? ((const double *)X->data)[e] :
			    ((const float *)X->data)[e];
			nf |= !isfinite(x[a]);
		}
		if (!nf)
			continue;
		/* Under privacy an error would tell about the row: it
		 * becomes the zero row, as in covest. */
		if (!dp) {
			free(R);
			*bad = i;
			return PV_E_FORMAT;
		}
		memset(x, 0, d * sizeof *x);
		(*nonfinite)++;
	}
	*out = R;
	return 0;
}

int
gmmio_labels(int32_t **out, const struct tensor *y)
{
	size_t n;
	int32_t *v;

	*out = NULL;
	if (y->ndim != 1 || (y->dtype != TS_I32 && y->dtype != TS_I64 &&
	    y->dtype != TS_U8) || y->dims[0] > SIZE_MAX / sizeof *v)
		return PV_E_RANGE;
	n = (size_t)y->dims[0];
	if ((v = malloc(n ? n * sizeof *v : 1)) == NULL)
		return PV_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		int64_t l = y->dtype == TS_I32 ? ((const int32_t *)y->data)[i] :
		    y->dtype == TS_I64 ? ((const int64_t *)y->data)[i] :
		    ((const uint8_t *)y->data)[i];
		/* -1 is never a class. */
		v[i] = l < 0 || l > INT32_MAX ? -1 : (int32_t)l;
	}
	*out = v;
	return 0;
}

size_t
gmmio_classes_seen(const int32_t *y, size_t n)
{
	size_t C = 0;

	for (size_t i = 0; i < n; i++)
		if (y[i] >= 0 && (size_t)y[i] + 1 > C)
			C = (size_t)y[i] + 1;
	return C;
}

int
gmmio_group(double **X, size_t n, size_t d, const int32_t *y, size_t C,
    int dp, size_t **start, uint64_t *dropped, size_t *bad)
{
	size_t *cnt = NULL, *st = NULL, *pos = NULL;
	double *G = NULL;
	uint64_t drop = 0;
	int rc = PV_E_NOMEM;

	*start = NULL;
	if ((cnt = calloc(C + 1, sizeof *cnt)) == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (y[i] >= 0 && (size_t)y[i] < C) {
			cnt[y[i]]++;
		} else if (!dp) {
			*bad = i;
			rc = PV_E_FORMAT;
			goto out;
		} else {
			drop++;
		}
	}
	if ((st = calloc(C + 1, sizeof *st)) == NULL ||
	    (pos = calloc(C ? C : 1, sizeof *pos)) == NULL)
		goto out;
	for (size_t c = 0; c < C; c++)
		st[c + 1] = st[c] + cnt[c];
	if ((G = malloc(st[C] ? st[C] * d * sizeof *G : 1)) == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		int32_t c = y[i];
		if (c < 0 || (size_t)c >= C)
			continue;
		memcpy(G + (st[c] + pos[c]++) * d, *X + i * d, d * sizeof *G);
	}
	free(*X);
	*X = G;
	*start = st;
	st = NULL;
	*dropped += drop;
	rc = 0;
out:
	free(cnt);
	free(st);
	free(pos);
	return rc;
}
