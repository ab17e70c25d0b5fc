/* gmm.c: Gaussian mixtures, EM and DP-EM steps (see gmm.h). */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gmm.h"
#include "la.h"

#define CHUNK_MAX 512		/* rows of one E-step block, at most */
#define CHUNK_MIN 16		/* ... and at least */
#define Y_ELEMS (1u << 16)	/* doubles of whitened rows per block */
#define MROWS 1024		/* rows of the statistics' blocks, at least */
#define LOG_2PI 1.8378770664093454836
#define PIECES 4		/* column pieces of the whitening GEMM */
/* Centred (maximum likelihood) passes leave rows whose responsibility is
 * below this out of the second moments (see accumulate). */
#define RESP_SKIP 0x1p-50

struct slab {
	double *buf;			/* mchunk x d: scaled rows */
	double *Y[PIECES];		/* full: whitened rows, piece p holding
					 * columns cut[p] .. cut[p+1] - 1 of each
					 * component (chunk x k w_p) */
	double *lp;			/* mchunk x k: log terms, then resp */
	double *ll;			/* mchunk: log-densities */
	struct gmm_stats part;		/* slabs 1..: partial statistics */
	double llsum;
};

struct gmm_work {
	size_t k, d, chunk, mchunk, np, cut[PIECES + 1];
	int type, threads;
	double *U;			/* full: k x d x d Cholesky factors;
					 * diag: k x d, spherical: k scales */
	double *W[PIECES];		/* full: the inverse factors U_j^-1
					 * side by side, piece p their rows
					 * 0 .. cut[p+1] - 1 and columns cut[p]
					 * .. cut[p+1] - 1: cut[p+1] x k w_p */
	double *muW;			/* full: k x d, mu_j U_j^-1 */
	double *logc;			/* k: log w - (d log 2 pi + log det) / 2 */
	double *x;			/* d: a sampled row's normals */
	struct slab sl[GMM_SLABS];
};

const char *
gmm_strerror(int code)
{
	switch (code) {
	case GMM_OK:
		return "success";
	case GMM_E_RANGE:
		return "argument out of range";
	case GMM_E_NOMEM:
		return "out of memory";
	case GMM_E_NOTPD:
		return "a covariance is not positive definite";
	case GMM_E_NUMERIC:
		return "the log-likelihood is not finite";
	default:
		return "unknown error";
	}
}

const char *
gmm_cov_name(int cov)
{
	static const char *const names[] = { "full", "diag", "spherical" };

	return cov >= 0 && cov <= GMM_SPHERICAL ? names[cov] : NULL;
}

size_t
gmm_cov_len(int cov, size_t d)
{
	return cov == GMM_FULL ? d * d : cov == GMM_DIAG ? d : 1;
}

size_t
gmm_mom_len(int cov, size_t d)
{
	return cov == GMM_FULL ? d * (d + 1) / 2 : cov == GMM_DIAG ? d : 1;
}

static int
shape_ok(size_t k, size_t d, int cov)
{
	return k >= 1 && k <= GMM_MAX_K && d >= 1 && d <= GMM_MAX_D &&
	    cov >= GMM_FULL && cov <= GMM_SPHERICAL;
}

int
gmm_alloc(struct gmm *g, size_t k, size_t d, int cov)
{
	memset(g, 0, sizeof *g);
	if (!shape_ok(k, d, cov))
		return GMM_E_RANGE;
	g->k = k;
	g->d = d;
	g->type = cov;
	g->w = calloc(k, sizeof *g->w);
	g->mu = calloc(k * d, sizeof *g->mu);
	g->cov = calloc(k * gmm_cov_len(cov, d), sizeof *g->cov);
	if (g->w == NULL || g->mu == NULL || g->cov == NULL) {
		gmm_free(g);
		return GMM_E_NOMEM;
	}
	return 0;
}

void
gmm_free(struct gmm *g)
{
	free(g->w);
	free(g->mu);
	free(g->cov);
	memset(g, 0, sizeof *g);
}

void
gmm_copy(struct gmm *dst, const struct gmm *src)
{
	memcpy(dst->w, src->w, src->k * sizeof *dst->w);
	memcpy(dst->mu, src->mu, src->k * src->d * sizeof *dst->mu);
	memcpy(dst->cov, src->cov, src->k * gmm_cov_len(src->type, src->d) *
	    sizeof *dst->cov);
}

double
gmm_nparams(const struct gmm *g)
{
	double k = (double)g->k, d = (double)g->d;

	return k - 1 + k * d + k * (double)gmm_mom_len(g->type, g->d);
}

int
gmm_stats_alloc(struct gmm_stats *st, size_t k, size_t d, int cov,
    int centred)
{
	memset(st, 0, sizeof *st);
	if (!shape_ok(k, d, cov))
		return GMM_E_RANGE;
	st->k = k;
	st->d = d;
	st->type = cov;
	st->n = calloc(k, sizeof *st->n);
	st->s = calloc(k * d, sizeof *st->s);
	st->S = calloc(k * gmm_cov_len(cov, d), sizeof *st->S);
	if (centred)
		st->c = calloc(k * d, sizeof *st->c);
	if (st->n == NULL || st->s == NULL || st->S == NULL ||
	    (centred && st->c == NULL)) {
		gmm_stats_free(st);
		return GMM_E_NOMEM;
	}
	return 0;
}

void
gmm_stats_free(struct gmm_stats *st)
{
	free(st->n);
	free(st->s);
	free(st->S);
	free(st->c);
	memset(st, 0, sizeof *st);
}

static void
stats_zero(struct gmm_stats *st)
{
	memset(st->n, 0, st->k * sizeof *st->n);
	memset(st->s, 0, st->k * st->d * sizeof *st->s);
	memset(st->S, 0, st->k * gmm_cov_len(st->type, st->d) * sizeof *st->S);
}

int
gmm_work_new(struct gmm_work **out, size_t k, size_t d, int cov, int threads)
{
	struct gmm_work *w;

	*out = NULL;
	if (!shape_ok(k, d, cov) || threads < 1)
		return GMM_E_RANGE;
	if ((w = calloc(1, sizeof *w)) == NULL)
		return GMM_E_NOMEM;
	w->k = k;
	w->d = d;
	w->type = cov;
	w->threads = threads > GMM_SLABS ? GMM_SLABS : threads;
	/* Blocks small enough for the cache, large enough for BLAS. */
	w->chunk = Y_ELEMS / (k * d);
	w->chunk = w->chunk < CHUNK_MIN ? CHUNK_MIN : w->chunk > CHUNK_MAX ?
	    CHUNK_MAX : w->chunk;
	/* The statistics take several E-step blocks at once: the rows of
	 * a component with a non-zero responsibility are gathered for
	 * SYRK, which wants many of them. */
	w->mchunk = (MROWS + w->chunk - 1) / w->chunk * w->chunk;
	w->U = calloc(k * gmm_cov_len(cov, d), sizeof *w->U);
	w->logc = calloc(k, sizeof *w->logc);
	w->x = calloc(d, sizeof *w->x);
	if (w->U == NULL || w->logc == NULL || w->x == NULL)
		goto fail;
	if (cov == GMM_FULL) {
		/* Pieces of at least 8 columns. */
		w->np = d / 8 < 1 ? 1 : d / 8 > PIECES ? PIECES : d / 8;
		for (size_t p = 0; p <= w->np; p++)
			w->cut[p] = d * p / w->np;
		for (size_t p = 0; p < w->np; p++) {
			w->W[p] = calloc(w->cut[p + 1] * k * (w->cut[p + 1] -
			    w->cut[p]), sizeof *w->W[p]);
			if (w->W[p] == NULL)
				goto fail;
		}
		w->muW = calloc(k * d, sizeof *w->muW);
		if (w->muW == NULL)
			goto fail;
	}
	for (int i = 0; i < GMM_SLABS; i++) {
		struct slab *s = &w->sl[i];
		s->buf = calloc(w->mchunk * d, sizeof *s->buf);
		s->lp = calloc(w->mchunk * k, sizeof *s->lp);
		s->ll = calloc(w->mchunk, sizeof *s->ll);
		if (s->buf == NULL || s->lp == NULL || s->ll == NULL)
			goto fail;
		for (size_t p = 0; cov == GMM_FULL && p < w->np; p++)
			if ((s->Y[p] = calloc(w->chunk * k * (w->cut[p + 1] -
			    w->cut[p]), sizeof *s->Y[p])) == NULL)
				goto fail;
	}
	*out = w;
	return 0;
fail:
	gmm_work_free(w);
	return GMM_E_NOMEM;
}

void
gmm_work_free(struct gmm_work *w)
{
	if (w == NULL)
		return;
	free(w->U);
	for (int p = 0; p < PIECES; p++)
		free(w->W[p]);
	free(w->muW);
	free(w->logc);
	free(w->x);
	for (int i = 0; i < GMM_SLABS; i++) {
		free(w->sl[i].buf);
		for (int p = 0; p < PIECES; p++)
			free(w->sl[i].Y[p]);
		free(w->sl[i].lp);
		free(w->sl[i].ll);
		gmm_stats_free(&w->sl[i].part);
	}
	free(w);
}

/* ---- the E-step ---- */

/*
 * The whitening of component j: W_j = U_j^-1 (upper triangular) and
 * mu_j W_j.  A row's Mahalanobis term is ||x W_j - mu_j W_j||^2, and x W
 * for all components is a GEMM per block of rows (scikit-learn computes
 * the same difference, X prec_chol - mu prec_chol, one component at a
 * time).  Since W_j is upper triangular, columns c .. c' - 1 of x W_j
 * only involve the first c' values of x: cutting the columns into P
 * equal pieces, piece p is one GEMM of c_{p+1} rows of W, which skips the
 * zero blocks below the diagonal and needs (P + 1) / (2 P) of the flops
 * of a full product (5/8 for P = 4).
 */
static int
prepare_inverse(struct gmm_work *w, const struct gmm *g, size_t j)
{
	size_t d = g->d, k = g->k;
	double *T, *Uj = w->U + j * d * d;

	/* Invert a copy of the factor in the row buffer of slab 0 (free
	 * between passes) when it is large enough. */
	if (w->mchunk * d < d * d) {
		if ((T = malloc(d * d * sizeof *T)) == NULL)
			return -1;
	} else {
		T = w->sl[0].buf;
	}
	for (size_t a = 0; a < d; a++)
		for (size_t b = 0; b < d; b++)
			T[a * d + b] = b < a ? 0 : Uj[a * d + b];
	if (la_tri_inv_upper(d, T) != 0) {
		if (T != w->sl[0].buf)
			free(T);
		return -1;
	}
	for (size_t a = 0; a < d; a++)
		for (size_t b = 0; b < d; b++) {
			double v = b < a ? 0 : T[a * d + b];
			size_t p = 0, wp;

			while (b >= w->cut[p + 1])
				p++;
			/* Rows below the piece's last column are 0. */
			if (a >= w->cut[p + 1])
				continue;
			wp = w->cut[p + 1] - w->cut[p];
			w->W[p][a * k * wp + j * wp + b - w->cut[p]] = v;
		}
	for (size_t b = 0; b < d; b++) {
		double v = 0;
		for (size_t a = 0; a <= b; a++)
			v += g->mu[j * d + a] * T[a * d + b];
		w->muW[j * d + b] = v;
	}
	if (T != w->sl[0].buf)
		free(T);
	return 0;
}

/* Sum of squares of x - y over n values, with four partial sums (which
 * the compiler keeps in flight at once). */
static double
sqdist(const double *x, const double *y, size_t n)
{
	double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	size_t a = 0;

	for (; a + 4 <= n; a += 4) {
		double d0 = x[a] - y[a], d1 = x[a + 1] - y[a + 1];
		double d2 = x[a + 2] - y[a + 2], d3 = x[a + 3] - y[a + 3];
		s0 += d0 * d0;
		s1 += d1 * d1;
		s2 += d2 * d2;
		s3 += d3 * d3;
	}
	for (; a < n; a++)
		s0 += (x[a] - y[a]) * (x[a] - y[a]);
	return (s0 + s1) + (s2 + s3);
}

/* The same, each difference scaled by sc[a]. */
static double
sqdist_scaled(const double *x, const double *y, const double *sc, size_t n)
{
	double s0 = 0, s1 = 0;
	size_t a = 0;

	for (; a + 2 <= n; a += 2) {
		double d0 = (x[a] - y[a]) * sc[a];
		double d1 = (x[a + 1] - y[a + 1]) * sc[a + 1];
		s0 += d0 * d0;
		s1 += d1 * d1;
	}
	for (; a < n; a++)
		s0 += ((x[a] - y[a]) * sc[a]) * ((x[a] - y[a]) * sc[a]);
	return s0 + s1;
}

int
gmm_prepare(struct gmm_work *w, const struct gmm *g, size_t *bad)
{
	size_t k = g->k, d = g->d, cl = gmm_cov_len(g->type, d);

	if (g->k != w->k || g->d != w->d || g->type != w->type)
		return GMM_E_RANGE;
	for (size_t j = 0; j < k; j++) {
		const double *C = g->cov + j * cl;
		double *U = w->U + j * cl, logdet = 0;

		if (g->type == GMM_FULL) {
			memcpy(U, C, d * d * sizeof *U);
			if (la_chol(d, U) != 0)
				goto notpd;
			for (size_t a = 0; a < d; a++) {
				double u = U[a * d + a];
				if (!(u > 0) || !isfinite(u))
					goto notpd;
				logdet += 2 * log(u);
			}
			/* A non-finite entry off the diagonal would pass
			 * the factorisation unnoticed. */
			for (size_t a = 0; a < d * d; a++)
				if (!isfinite(C[a]))
					goto notpd;
			if (prepare_inverse(w, g, j) != 0)
				goto notpd;
		} else {
			for (size_t a = 0; a < cl; a++) {
				if (!(C[a] > 0) || !isfinite(C[a]))
					goto notpd;
				U[a] = 1 / sqrt(C[a]);
				logdet += log(C[a]);
			}
			if (g->type == GMM_SPHERICAL)
				logdet *= (double)d;
		}
		w->logc[j] = (g->w[j] > 0 ? log(g->w[j]) : -INFINITY) -
		    0.5 * ((double)d * LOG_2PI + logdet);
		continue;
notpd:
		*bad = j;
		return GMM_E_NOTPD;
	}
	return 0;
}

/* Log-densities (into ll) and responsibilities (into lp, m x k) of m
 * <= chunk rows, with the whitening scratch of slab s. */
static void
estep(struct gmm_work *w, const struct gmm *g, const double *X, size_t m,
    struct slab *s, double *lp, double *ll)
{
	size_t k = g->k, d = g->d, cl = gmm_cov_len(g->type, d);

	for (size_t p = 0; g->type == GMM_FULL && p < w->np; p++) {
		size_t kw = k * (w->cut[p + 1] - w->cut[p]);
		la_gemm_ld(0, 0, m, kw, w->cut[p + 1], 1.0, X, d, w->W[p], kw,
		    0.0, s->Y[p], kw);
	}
	for (size_t i = 0; i < m; i++) {
		const double *x = X + i * d;

		for (size_t j = 0; j < k; j++) {
			const double *U = w->U + j * cl;
			double q;

			if (g->type == GMM_FULL) {
				q = 0;
				for (size_t p = 0; p < w->np; p++) {
					size_t wp = w->cut[p + 1] - w->cut[p];
					q += sqdist(s->Y[p] + (i * k + j) * wp,
					    w->muW + j * d + w->cut[p], wp);
				}
			}
			else if (g->type == GMM_DIAG)
				q = sqdist_scaled(x, g->mu + j * d, U, d);
			else
				q = sqdist(x, g->mu + j * d, d) * U[0] * U[0];
			lp[i * k + j] = w->logc[j] - 0.5 * q;
		}
	}
	/* log-sum-exp per row; the responsibilities replace the terms. */
	for (size_t i = 0; i < m; i++) {
		double *r = lp + i * k, mx = -INFINITY, sum = 0;

		for (size_t j = 0; j < k; j++)
			mx = fmax(mx, r[j]);
		if (!isfinite(mx)) {
			/* No component gives the row a finite density:
			 * keep the responsibilities defined (uniform); the
			 * pass reports the log-likelihood as not finite. */
			for (size_t j = 0; j < k; j++)
				r[j] = 1 / (double)k;
			ll[i] = isnan(mx) ? mx : -INFINITY;
			continue;
		}
		for (size_t j = 0; j < k; j++) {
			/* Below -746 the exponential is 0: skip libm's slow
			 * underflow path, which most terms take. */
			r[j] = r[j] - mx < -746 ? 0 : exp(r[j] - mx);
			sum += r[j];
		}
		ll[i] = mx + log(sum);
		for (size_t j = 0; j < k; j++)
			r[j] /= sum;
	}
}

void
gmm_estep_rows(struct gmm_work *w, const struct gmm *g, const double *X,
    size_t m, double *resp, double *ll)
{
	struct slab *s = &w->sl[0];

	for (size_t i0 = 0; i0 < m; i0 += w->chunk) {
		size_t c = m - i0 < w->chunk ? m - i0 : w->chunk;
		estep(w, g, X + i0 * g->d, c, s, resp + i0 * g->k, ll + i0);
	}
}

/*
 * Add the statistics of m rows with responsibilities resp (m x k) to t,
 * centred on c (NULL: the origin), except that t->s receives the plain
 * sums sum r x (one GEMM; gmm_pass subtracts n c at the end).  Rows
 * whose responsibility is exactly 0 add nothing and are skipped: in a
 * fitted mixture many are (the exponential underflows).
 *
 * Centred on c (the maximum likelihood passes, c the current means), the
 * second moments also leave out the rows with r < RESP_SKIP = 2^-50; in
 * a fitted mixture a third or more of the (row, component) pairs are
 * such (Fashion-MNIST, K = 10), and gathering them for SYRK took a
 * quarter of an iteration.  What they would add is negligible: r_ij <
 * 2^-50 means component j's density at x_i is below 2^-50 of the
 * mixture's, so (the Gaussian tail) r_ij times the squared Mahalanobis
 * distance of x_i from mu_j is below about 2^-50 x 70; summed over n
 * rows, below n 2^-44 in units of the covariance, against n_j: a
 * relative change of about 2^-44 n / n_j, far below the EM tolerance.
 * The counts and sums keep every row.  Passes at the origin (DP-EM) are
 * unchanged: every row with r > 0 enters all three parts.
 */
static void
accumulate(struct gmm_stats *t, const double *c, const double *X, size_t m,
    const double *resp, double *buf)
{
	size_t k = t->k, d = t->d, cl = gmm_cov_len(t->type, d);

	la_gemm(1, 0, k, d, m, 1.0, resp, X, 1.0, t->s);
	for (size_t j = 0; j < k; j++) {
		const double *cj = c ? c + j * d : NULL;
		double *Sj = t->S + j * cl, nj = 0;
		size_t nb = 0;

		for (size_t i = 0; i < m; i++) {
			const double *x = X + i * d;
			double r = resp[i * k + j], sr, q = 0;
			double *b = buf + nb * d;

			if (r == 0)
				continue;
			nj += r;
			if (cj && r < RESP_SKIP)
				continue;
			sr = sqrt(r);
			for (size_t a = 0; a < d; a++) {
				double v = cj ? x[a] - cj[a] : x[a];
				if (t->type == GMM_FULL)
					b[a] = sr * v;
				else if (t->type == GMM_DIAG)
					Sj[a] += r * v * v;
				else
					q += v * v;
			}
			if (t->type == GMM_SPHERICAL)
				Sj[0] += r * q;
			nb++;
		}
		if (t->type == GMM_FULL)
			la_syrk_acc(nb, d, buf, Sj);
		t->n[j] += nj;
	}
}

struct pass {
	struct gmm_work *w;
	const struct gmm *g;
	const double *X;
	size_t n;
	struct gmm_stats *st;
	int first;			/* the slab this thread starts at */
};

static void *
pass_worker(void *arg)
{
	struct pass *p = arg;
	struct gmm_work *w = p->w;
	size_t d = p->g->d;

	for (int si = p->first; si < GMM_SLABS; si += w->threads) {
		struct slab *s = &w->sl[si];
		size_t lo = p->n * (size_t)si / GMM_SLABS;
		size_t hi = p->n * (size_t)(si + 1) / GMM_SLABS;
		struct gmm_stats *t = si == 0 ? p->st : &s->part;

		s->llsum = 0;
		if (p->st)
			stats_zero(t);
		for (size_t i0 = lo; i0 < hi; i0 += w->mchunk) {
			size_t m = hi - i0 < w->mchunk ? hi - i0 : w->mchunk;
			const double *X = p->X + i0 * d;

			for (size_t e = 0; e < m; e += w->chunk)
				estep(w, p->g, X + e * d, m - e < w->chunk ?
				    m - e : w->chunk, s, s->lp + e * p->g->k,
				    s->ll + e);
			for (size_t i = 0; i < m; i++)
				s->llsum += s->ll[i];
			if (p->st)
				accumulate(t, p->st->c, X, m, s->lp, s->buf);
		}
	}
	return NULL;
}

int
gmm_pass(struct gmm_work *w, const struct gmm *g, const double *X, size_t n,
    struct gmm_stats *st, double *ll, size_t *bad)
{
	struct pass p[GMM_SLABS];
	pthread_t th[GMM_SLABS];
	int started[GMM_SLABS] = { 0 }, rc, blas;
	size_t cl = gmm_cov_len(g->type, g->d);

	if ((rc = gmm_prepare(w, g, bad)) != 0)
		return rc;
	if (st && (st->k != g->k || st->d != g->d || st->type != g->type))
		return GMM_E_RANGE;
	for (int i = 1; i < GMM_SLABS && st; i++)
		if (w->sl[i].part.n == NULL && gmm_stats_alloc(&w->sl[i].part,
		    g->k, g->d, g->type, 0) != 0)
			return GMM_E_NOMEM;
	/* BLAS on one thread inside the pass: the slabs are the
	 * parallelism, and the sums do not depend on the thread count. */
	blas = la_blas_threads();
	if (blas != 1)
		la_set_threads(1);
	for (int t = 0; t < w->threads; t++) {
		p[t] = (struct pass){ w, g, X, n, st, t };
		if (t > 0)
			started[t] = pthread_create(&th[t], NULL, pass_worker,
			    &p[t]) == 0;
	}
	pass_worker(&p[0]);
	for (int t = 1; t < w->threads; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else
			pass_worker(&p[t]);
	}
	if (blas != 1)
		la_set_threads(blas);
	*ll = 0;
	for (int i = 0; i < GMM_SLABS; i++)
		*ll += w->sl[i].llsum;
	for (int i = 1; i < GMM_SLABS && st; i++) {
		const struct gmm_stats *q = &w->sl[i].part;
		for (size_t j = 0; j < g->k; j++)
			st->n[j] += q->n[j];
		for (size_t j = 0; j < g->k * g->d; j++)
			st->s[j] += q->s[j];
		for (size_t j = 0; j < g->k * cl; j++)
			st->S[j] += q->S[j];
	}
	/* The sums about the centres: sum r (x - c) = sum r x - n c. */
	if (st && st->c)
		for (size_t j = 0; j < g->k; j++)
			for (size_t a = 0; a < g->d; a++)
				st->s[j * g->d + a] -= st->n[j] *
				    st->c[j * g->d + a];
	return isfinite(*ll) ? 0 : GMM_E_NUMERIC;
}

/* ---- M-steps ---- */

void
gmm_mstep(struct gmm *g, const struct gmm_stats *st, double reg)
{
	size_t k = g->k, d = g->d, cl = gmm_cov_len(g->type, d);
	double tot = 0;

	for (size_t j = 0; j < k; j++)
		tot += st->n[j] + 10 * DBL_EPSILON;
	for (size_t j = 0; j < k; j++) {
		double nk = st->n[j] + 10 * DBL_EPSILON;
		/* sum r (x - mu)(x - mu)^T = S - (2 nk - n) dl dl^T for
		 * dl = mu - c = s / nk: exact, also for nk != n. */
		double f = 2 - st->n[j] / nk, q = 0;
		const double *s = st->s + j * d, *S = st->S + j * cl;
		const double *c = st->c ? st->c + j * d : NULL;
		double *mu = g->mu + j * d, *C = g->cov + j * cl;

		g->w[j] = nk / tot;
		for (size_t a = 0; a < d; a++)
			mu[a] = (c ? c[a] : 0) + s[a] / nk;
		if (g->type == GMM_FULL) {
			for (size_t a = 0; a < d; a++)
				for (size_t b = a; b < d; b++) {
					C[a * d + b] = S[a * d + b] / nk -
					    f * (s[a] / nk) * (s[b] / nk);
					C[b * d + a] = C[a * d + b];
				}
			for (size_t a = 0; a < d; a++)
				C[a * d + a] += reg;
		} else if (g->type == GMM_DIAG) {
			for (size_t a = 0; a < d; a++)
				C[a] = S[a] / nk - f * (s[a] / nk) *
				    (s[a] / nk) + reg;
		} else {
			for (size_t a = 0; a < d; a++)
				q += (s[a] / nk) * (s[a] / nk);
			C[0] = (S[0] / nk - f * q) / (double)d + reg;
		}
	}
}

int
gmm_mstep_dp(struct gmm *g, const struct gmm_stats *st, double reg,
    double bound)
{
	size_t k = g->k, d = g->d, cl = gmm_cov_len(g->type, d);
	double tot = 0, b2 = bound * bound, *V = NULL, *ev = NULL, *wk = NULL;
	int rc = 0, blas = la_blas_threads();

	/* One BLAS thread, so that the eigensolver's results do not depend
	 * on the thread count. */
	if (blas != 1)
		la_set_threads(1);

	if (g->type == GMM_FULL) {
		V = malloc(d * d * sizeof *V);
		ev = malloc(d * sizeof *ev);
		wk = malloc(d * d * sizeof *wk);
		if (V == NULL || ev == NULL || wk == NULL) {
			rc = GMM_E_NOMEM;
			goto out;
		}
	}
	for (size_t j = 0; j < k; j++)
		tot += fmax(st->n[j], 1);
	for (size_t j = 0; j < k; j++) {
		double nk = fmax(st->n[j], 1), nrm = 0;
		const double *s = st->s + j * d, *S = st->S + j * cl;
		double *mu = g->mu + j * d, *C = g->cov + j * cl;

		g->w[j] = nk / tot;
		for (size_t a = 0; a < d; a++) {
			mu[a] = s[a] / nk;
			nrm += mu[a] * mu[a];
		}
		nrm = sqrt(nrm);
		if (nrm > bound)
			for (size_t a = 0; a < d; a++)
				mu[a] *= bound / nrm;
		if (g->type == GMM_FULL) {
			for (size_t a = 0; a < d; a++)
				for (size_t b = a; b < d; b++)
					V[a * d + b] = S[a * d + b] / nk -
					    mu[a] * mu[b];
			if (la_eigh(d, V, ev) != 0) {
				rc = GMM_E_NUMERIC;
				goto out;
			}
			for (size_t a = 0; a < d; a++)
				ev[a] = fmin(fmax(ev[a], 0), b2);
			la_sym_from_eig(d, V, ev, C, wk);
			for (size_t a = 0; a < d; a++)
				C[a * d + a] += reg;
		} else if (g->type == GMM_DIAG) {
			for (size_t a = 0; a < d; a++)
				C[a] = fmin(fmax(S[a] / nk - mu[a] * mu[a], 0),
				    b2) + reg;
		} else {
			double q = 0;
			for (size_t a = 0; a < d; a++)
				q += mu[a] * mu[a];
			C[0] = fmin(fmax((S[0] / nk - q) / (double)d, 0), b2) +
			    reg;
		}
	}
out:
	if (blas != 1)
		la_set_threads(blas);
	free(V);
	free(ev);
	free(wk);
	return rc;
}

void
gmm_stats_pack(const struct gmm_stats *st, double *cnt, double *sum,
    double *mom)
{
	size_t k = st->k, d = st->d, cl = gmm_cov_len(st->type, d);
	size_t ml = gmm_mom_len(st->type, d);

	memcpy(cnt, st->n, k * sizeof *cnt);
	memcpy(sum, st->s, k * d * sizeof *sum);
	for (size_t j = 0; j < k; j++) {
		const double *S = st->S + j * cl;
		double *o = mom + j * ml;

		if (st->type == GMM_FULL) {
			for (size_t a = 0; a < d; a++)
				for (size_t b = a; b < d; b++)
					*o++ = S[a * d + b];
		} else {
			memcpy(o, S, ml * sizeof *o);
		}
	}
}

void
gmm_stats_unpack(struct gmm_stats *st, const double *cnt, const double *sum,
    const double *mom)
{
	size_t k = st->k, d = st->d, cl = gmm_cov_len(st->type, d);
	size_t ml = gmm_mom_len(st->type, d);

	memcpy(st->n, cnt, k * sizeof *cnt);
	memcpy(st->s, sum, k * d * sizeof *sum);
	for (size_t j = 0; j < k; j++) {
		double *S = st->S + j * cl;
		const double *o = mom + j * ml;

		if (st->type == GMM_FULL) {
			for (size_t a = 0; a < d; a++)
				for (size_t b = a; b < d; b++) {
					S[a * d + b] = *o++;
					S[b * d + a] = S[a * d + b];
				}
		} else {
			memcpy(S, o, ml * sizeof *S);
		}
	}
}

size_t
gmm_clip_rows(double *X, size_t n, size_t d, double bound)
{
	double lim = bound * (1 - (double)(d + 8) * 0x1p-52);
	size_t nc = 0;

	for (size_t i = 0; i < n; i++) {
		double *x = X + i * d, sc = 0, ss = 0, nrm;

		for (size_t a = 0; a < d; a++)
			sc = fmax(sc, fabs(x[a]));
		if (sc == 0 || !isfinite(sc))
			continue;
		for (size_t a = 0; a < d; a++)
			ss += (x[a] / sc) * (x[a] / sc);
		nrm = sc * sqrt(ss);
		if (nrm > lim) {
			double f = lim / nrm;
			for (size_t a = 0; a < d; a++)
				x[a] *= f;
			nc++;
		}
	}
	return nc;
}

/* ---- initialisation ---- */

/* Uniform in [0, 1) with 53 random bits. */
static double
unif(struct rng *r)
{
	return (double)(rng_u64(r) >> 11) * 0x1p-53;
}

static double
dist2(const double *a, const double *b, size_t d)
{
	double s = 0;

	for (size_t i = 0; i < d; i++)
		s += (a[i] - b[i]) * (a[i] - b[i]);
	return s;
}

void
gmm_kmeanspp(struct rng *r, const double *X, size_t n, size_t d, size_t k,
    double *centers)
{
	double *D = malloc(n * sizeof *D);
	size_t pick = (size_t)rng_uniform_below(r, n);

	memcpy(centers, X + pick * d, d * sizeof *centers);
	if (D == NULL) {
		/* Without room for the distances, uniform rows: still a
		 * valid start. */
		for (size_t j = 1; j < k; j++)
			memcpy(centers + j * d, X + (size_t)rng_uniform_below(r,
			    n) * d, d * sizeof *centers);
		return;
	}
	for (size_t i = 0; i < n; i++)
		D[i] = dist2(X + i * d, centers, d);
	for (size_t j = 1; j < k; j++) {
		double tot = 0, u, acc = 0;

		for (size_t i = 0; i < n; i++)
			tot += D[i];
		if (!(tot > 0) || !isfinite(tot)) {
			pick = (size_t)rng_uniform_below(r, n);
		} else {
			u = unif(r) * tot;
			pick = n - 1;
			for (size_t i = 0; i < n; i++) {
				acc += D[i];
				if (u < acc && D[i] > 0) {
					pick = i;
					break;
				}
			}
			/* Rounding may leave u above the last sum: take
			 * the last row at a positive distance. */
			while (D[pick] == 0 && pick > 0)
				pick--;
		}
		memcpy(centers + j * d, X + pick * d, d * sizeof *centers);
		for (size_t i = 0; i < n; i++)
			D[i] = fmin(D[i], dist2(X + i * d, centers + j * d, d));
	}
	free(D);
}

int
gmm_init_centers(struct gmm *g, const double *X, size_t n,
    const double *centers, double reg)
{
	size_t k = g->k, d = g->d, cl = gmm_cov_len(g->type, d);
	struct gmm_stats st;
	double *buf;
	int rc;

	if ((rc = gmm_stats_alloc(&st, k, d, g->type, 1)) != 0)
		return rc;
	if ((buf = malloc(d * sizeof *buf)) == NULL) {
		gmm_stats_free(&st);
		return GMM_E_NOMEM;
	}
	memcpy(st.c, centers, k * d * sizeof *st.c);
	for (size_t i = 0; i < n; i++) {
		const double *x = X + i * d;
		size_t best = 0;
		double bd = dist2(x, centers, d), *S;

		for (size_t j = 1; j < k; j++) {
			double dj = dist2(x, centers + j * d, d);
			if (dj < bd) {
				bd = dj;
				best = j;
			}
		}
		st.n[best] += 1;
		S = st.S + best * cl;
		for (size_t a = 0; a < d; a++) {
			buf[a] = x[a] - centers[best * d + a];
			st.s[best * d + a] += buf[a];
		}
		if (g->type == GMM_FULL) {
			for (size_t a = 0; a < d; a++)
				for (size_t b = a; b < d; b++)
					S[a * d + b] += buf[a] * buf[b];
		} else if (g->type == GMM_DIAG) {
			for (size_t a = 0; a < d; a++)
				S[a] += buf[a] * buf[a];
		} else {
			for (size_t a = 0; a < d; a++)
				S[0] += buf[a] * buf[a];
		}
	}
	gmm_mstep(g, &st, reg);
	memcpy(g->mu, centers, k * d * sizeof *g->mu);
	free(buf);
	gmm_stats_free(&st);
	return 0;
}

void
gmm_normals(struct rng *r, double *z, size_t n)
{
	for (size_t i = 0; i < n; i += 2) {
		/* u1 in (0, 1], so the logarithm is finite. */
		double u1 = ((double)(rng_u64(r) >> 11) + 1) * 0x1p-53;
		double u2 = unif(r), rad = sqrt(-2 * log(u1));

		z[i] = rad * cos(2 * M_PI * u2);
		if (i + 1 < n)
			z[i + 1] = rad * sin(2 * M_PI * u2);
	}
}

void
gmm_ball(struct rng *r, size_t d, double rad, double *x)
{
	double nrm;

	do {
		nrm = 0;
		gmm_normals(r, x, d);
		for (size_t a = 0; a < d; a++)
			nrm += x[a] * x[a];
	} while (!(nrm > 0));
	nrm = rad * pow(((double)(rng_u64(r) >> 11) + 1) * 0x1p-53,
	    1 / (double)d) / sqrt(nrm);
	for (size_t a = 0; a < d; a++)
		x[a] *= nrm;
}

/* ---- EM ---- */

int
gmm_em(struct gmm *g, struct gmm_work *w, const double *X, size_t n,
    const struct gmm_em_opts *o, struct gmm_em_result *res)
{
	struct gmm_stats st;
	double prev = -INFINITY, ll;
	int rc;

	memset(res, 0, sizeof *res);
	if (n == 0)
		return GMM_E_RANGE;
	if ((rc = gmm_stats_alloc(&st, g->k, g->d, g->type, 1)) != 0)
		return rc;
	for (size_t it = 1; it <= o->max_iter; it++) {
		memcpy(st.c, g->mu, g->k * g->d * sizeof *st.c);
		if ((rc = gmm_pass(w, g, X, n, &st, &ll, &res->bad)) != 0)
			break;
		ll /= (double)n;
		if (o->on_iter)
			o->on_iter(o->arg, it, ll);
		gmm_mstep(g, &st, o->reg);
		res->iters = it;
		res->ll = ll;
		/* scikit-learn's test: the change of the mean
		 * log-likelihood between consecutive E-steps. */
		if (!o->fixed && fabs(ll - prev) < o->tol) {
			res->converged = 1;
			break;
		}
		prev = ll;
	}
	gmm_stats_free(&st);
	return rc;
}

/* ---- sampling ---- */

int
gmm_sample_prepare(struct gmm_work *w, const struct gmm *g, size_t *bad)
{
	size_t d = g->d, cl = gmm_cov_len(g->type, d);

	if (g->k != w->k || g->d != w->d || g->type != w->type)
		return GMM_E_RANGE;
	for (size_t j = 0; j < g->k; j++) {
		const double *C = g->cov + j * cl;
		double *U = w->U + j * cl;

		for (size_t a = 0; a < cl; a++)
			if (!isfinite(C[a])) {
				*bad = j;
				return GMM_E_NOTPD;
			}
		if (g->type == GMM_FULL) {
			memcpy(U, C, d * d * sizeof *U);
			if (la_chol(d, U) != 0) {
				*bad = j;
				return GMM_E_NOTPD;
			}
			/* Only the upper triangle is the factor. */
			for (size_t a = 0; a < d; a++)
				for (size_t b = 0; b < a; b++)
					U[a * d + b] = 0;
		} else {
			for (size_t a = 0; a < cl; a++) {
				if (!(C[a] >= 0)) {
					*bad = j;
					return GMM_E_NOTPD;
				}
				U[a] = sqrt(C[a]);
			}
		}
	}
	return 0;
}

void
gmm_sample_row(struct gmm_work *w, const struct gmm *g, struct rng *r,
    size_t j, double *x)
{
	size_t d = g->d, cl = gmm_cov_len(g->type, d);
	const double *mu = g->mu + j * d, *U = w->U + j * cl;
	double *z = w->x;

	gmm_normals(r, z, d);
	for (size_t b = 0; b < d; b++) {
		double v = mu[b];

		if (g->type == GMM_FULL) {
			for (size_t a = 0; a <= b; a++)
				v += z[a] * U[a * d + b];
		} else {
			v += z[b] * U[g->type == GMM_DIAG ? b : 0];
		}
		x[b] = v;
	}
}

size_t
gmm_draw_index(struct rng *r, const double *w, size_t k)
{
	double tot = 0, u, acc = 0;

	for (size_t j = 0; j < k; j++)
		tot += w[j];
	u = unif(r) * tot;
	for (size_t j = 0; j + 1 < k; j++) {
		acc += w[j];
		if (u < acc)
			return j;
	}
	return k - 1;
}
