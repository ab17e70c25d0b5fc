/*
 * dpem.c: DP-EM (dpem.h): the noise plan, the start, the iterations and
 * the ledger entry.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "covnoise.h"
#include "dpem.h"
#include "fpsum.h"
#include "noise.h"
#include "rdp.h"

static const char *const part_name[DPEM_NPARTS] = { "counts", "sums",
    "second moments" };

struct dpem {
	struct dpem_params p;
	struct dpem_plan pl;
	size_t C, k, d, ml;
	struct gmm *g;			/* C mixtures */
	struct gmm_stats *st;		/* C statistics, at the origin */
	struct gmm_work *w;
	double *cnt, *sum, *mom;	/* the parts of all classes */
	int64_t *kbuf;
	double *trace;			/* stats: C x T x K x (1+d+ml) */
	double *ist;			/* init_dp: the released start
					 * statistics: C counts, C x d sums,
					 * C x d sums of squares */
	double *w_m, *w_v;		/* init_dp: d each, scratch */
	char msg[160];			/* detail of the last error */
};

const char *
dpem_part_name(int part)
{
	return part >= 0 && part < DPEM_NPARTS ? part_name[part] : NULL;
}

const char *
dpem_check_params(const struct dpem_params *p)
{
	if (p->k < 1 || p->k > GMM_MAX_K)
		return "k: components must be 1 .. GMM_MAX_K";
	if (gmm_cov_name(p->cov) == NULL)
		return "cov: not a covariance type";
	if (!(p->clip > 0) || !isfinite(p->clip))
		return "clip: the bound must be positive and finite";
	if (!(p->reg > 0) || !isfinite(p->reg))
		return "reg: must be positive and finite (the noisy "
		    "covariances need a floor)";
	if (p->iters < 1)
		return "iters: at least one iteration";
	if (p->calibrate) {
		if (!(p->epsilon > 0) || !isfinite(p->epsilon))
			return "epsilon: must be positive and finite";
		if (!(p->delta > 0 && p->delta < 1))
			return "delta: must be in (0, 1)";
	} else if (!(p->sigma > 0) || !isfinite(p->sigma)) {
		return "sigma: the multiplier must be positive and finite";
	}
	for (int i = 0; i < DPEM_NPARTS; i++)
		if (!(p->split[i] > 0) || !isfinite(p->split[i]))
			return "split: the weights must be positive and finite";
	if (!isfinite(p->split[0] + p->split[1] + p->split[2]))
		/* Issue 15: an infinite sum was an internal error (70). */
		return "split: the weights' sum overflows (they are relative: "
		    "scale them down)";
	return NULL;
}

/* The Gaussian mechanisms of one DP-EM run: the T iterations, and the
 * start of the DP start (one more release of the same sensitivities). */
size_t
dpem_releases(const struct dpem_params *p)
{
	return p->iters + (p->init_dp ? 1 : 0);
}

/*
 * The sensitivity of one iteration.  Adding or removing a row x (clipped,
 * ||x|| <= B) with responsibilities r_1 .. r_K (r_j >= 0, sum 1) changes
 * the counts by the vector r, the sums by r_j x and the second moments by
 * r_j x x^T (component j), and nothing else: with classes the row only
 * enters its own class's statistics.  The responsibilities are computed
 * from the parameters of the previous iteration, which are released
 * values (post-processing), so the other rows' contributions do not move.
 * Since sum_j r_j^2 <= (sum_j r_j)^2 = 1, the parts move by at most
 *   counts:  ||r|| <= 1
 *   sums:    sqrt(sum_j r_j^2 ||x||^2) <= B
 *   moments: sqrt(sum_j r_j^2 ||m(x)||^2) <= B^2
 * where m(x) are the values released of x x^T: its upper triangle, of
 * squared norm (||x||^4 + sum_a x_a^4) / 2 <= ||x||^4; its diagonal,
 * sum_a x_a^4 <= ||x||^4; or its trace ||x||^2.  Together: the joint
 * sensitivity sqrt(1 + B^2 + B^4) of Park et al. (2017) when all parts
 * share one noise scale, and in general mu^2 = sum_p (D_p / sigma_p)^2
 * (jgauss.h).  The iterations compose in RDP: T times the Gaussian curve.
 *
 * Floating point (fpsum.h; Casacuberta et al. 2022): the statistics are
 * computed sums, in an order GEMM, SYRK and the slabs leave open (and the
 * slab boundaries move with n), so neighbouring computed sums may differ
 * by more than the bounds above.  Each term r_j x, r_j x x^T (or its
 * diagonal, or r_j ||x||^2) comes from the row and the exponentials of
 * the E-step with at most k + d + 8 roundings: the k - 1 additions and
 * the division normalising r (the exact ratios sum to 1, so the bounds
 * above hold for them), the square root, the products, and the d - 1
 * additions of a spherical trace.  With at most n rows, the computed sums
 * of neighbours then differ by at most D_p (1 + e), e = 2 n gamma_(n + k
 * + d + 8) (fpsum_margin), which is charged.  n is a public bound, not
 * the number of rows (private under add/remove): FPSUM_MAX_ROWS, and
 * larger inputs are refused.  The DP start sums the rows one by one
 * (counts exactly), within the same bound.
 */
int
dpem_plan(struct dpem_plan *pl, const struct dpem_params *p, size_t nclass,
    size_t d)
{
	double B = p->clip, wsum = 0;
	size_t ck = nclass * p->k;
	int rc;

	memset(pl, 0, sizeof *pl);
	pl->fp_margin = fpsum_margin((double)FPSUM_MAX_ROWS, (double)(p->k +
	    d + 8), 0x1p-53);
	if (!isfinite(pl->fp_margin))
		return PV_E_OVERFLOW;
	pl->delta2_true[DPEM_CNT] = 1;
	pl->delta2_true[DPEM_SUM] = B;
	pl->delta2_true[DPEM_MOM] = B * B;
	for (int i = 0; i < DPEM_NPARTS; i++)
		pl->delta2_true[i] = nextafter(pl->delta2_true[i] *
		    (1 + pl->fp_margin), INFINITY);
	for (int i = 0; i < DPEM_NPARTS; i++) {
		pl->p[i].w = p->split[i];
		wsum += pl->p[i].w;
		pl->p[i].delta2 = pl->delta2_true[i];
	}
	for (int i = 0; i < DPEM_NPARTS; i++)
		pl->p[i].w /= wsum;
	/* The broken variant of the audit: the second moments calibrated
	 * as if one row moved them by B, not B^2. */
	if (p->unsafe_moments_b)
		pl->p[DPEM_MOM].delta2 = B;
	pl->p[DPEM_CNT].nent = ck;
	pl->p[DPEM_SUM].nent = (uint64_t)ck * d;
	pl->p[DPEM_MOM].nent = (uint64_t)ck * gmm_mom_len(p->cov, d);
	if (!p->calibrate)
		pl->z = p->sigma;
	else if (jgauss_calibrate_rdp(p->epsilon, p->delta,
	    (double)dpem_releases(p), &pl->z) != 0)
		return PV_E_NOROOT;
	rc = jgauss_plan(pl->p, DPEM_NPARTS, pl->z, p->calibrate ?
	    JGAUSS_RDP : JGAUSS_MU, p->epsilon, p->delta,
	    (double)dpem_releases(p), &pl->mu, &pl->bad);
	if (rc != 0 && pl->bad >= DPEM_NPARTS)
		return PV_E_NUMERIC;
	if (rc != 0)
		return PV_E_RANGE;
	return 0;
}

void
dpem_free(struct dpem *e)
{
	if (e == NULL)
		return;
	for (size_t c = 0; c < e->C; c++) {
		if (e->g)
			gmm_free(&e->g[c]);
		if (e->st)
			gmm_stats_free(&e->st[c]);
	}
	gmm_work_free(e->w);
	free(e->g);
	free(e->st);
	free(e->cnt);
	free(e->sum);
	free(e->mom);
	free(e->kbuf);
	free(e->trace);
	free(e->ist);
	free(e->w_m);
	free(e->w_v);
	free(e);
}

/* calloc of a * b * c elements of size s, checked. */
static void *
alloc3(size_t a, size_t b, size_t c, size_t s)
{
	if (b && a > SIZE_MAX / b)
		return NULL;
	if (c && a * b > SIZE_MAX / c)
		return NULL;
	return calloc(a * b * c > 0 ? a * b * c : 1, s);
}

int
dpem_new(struct dpem **out, const struct dpem_params *p,
    const struct dpem_plan *pl, size_t nclass, size_t d, int threads)
{
	struct dpem *e;
	size_t k = p->k, ml;
	int rc;

	*out = NULL;
	if (dpem_check_params(p) != NULL || nclass < 1 || d < 1 ||
	    d > GMM_MAX_D)
		return PV_E_RANGE;
	if ((e = calloc(1, sizeof *e)) == NULL)
		return PV_E_NOMEM;
	e->p = *p;
	e->pl = *pl;
	e->k = k;
	e->d = d;
	e->ml = ml = gmm_mom_len(p->cov, d);
	if ((e->g = calloc(nclass, sizeof *e->g)) == NULL ||
	    (e->st = calloc(nclass, sizeof *e->st)) == NULL) {
		free(e->g);
		free(e);
		return PV_E_NOMEM;
	}
	e->C = nclass;
	for (size_t c = 0; c < nclass; c++)
		if ((rc = gmm_alloc(&e->g[c], k, d, p->cov)) != 0 ||
		    (rc = gmm_stats_alloc(&e->st[c], k, d, p->cov, 0)) != 0)
			goto fail;
	if ((rc = gmm_work_new(&e->w, k, d, p->cov, threads)) != 0)
		goto fail;
	rc = PV_E_NOMEM;
	if ((e->cnt = alloc3(nclass, k, 1, sizeof *e->cnt)) == NULL ||
	    (e->sum = alloc3(nclass, k, d, sizeof *e->sum)) == NULL ||
	    (e->mom = alloc3(nclass, k, ml, sizeof *e->mom)) == NULL ||
	    (e->kbuf = alloc3(nclass, k, ml > d ? ml : d,
	    sizeof *e->kbuf)) == NULL)
		goto fail;
	if (p->stats && (e->trace = alloc3(nclass * p->iters, k, 1 + d + ml,
	    sizeof *e->trace)) == NULL)
		goto fail;
	if (p->init_dp && ((e->ist = alloc3(nclass, 1 + 2 * d, 1,
	    sizeof *e->ist)) == NULL ||
	    (e->w_m = calloc(d, sizeof *e->w_m)) == NULL ||
	    (e->w_v = calloc(d, sizeof *e->w_v)) == NULL))
		goto fail;
	*out = e;
	return 0;
fail:
	dpem_free(e);
	return rc;
}

/* Noise one part in place: x_i rounded to the grid plus integer noise
 * (covnoise: the exact discrete Gaussian of noise_add_dgauss). */
static int
add_noise(struct dpem *e, struct rng *rng, int part, double *x, size_t n)
{
	double sigma = e->pl.p[part].sigma;
	int rc;

	if ((rc = covnoise_draw(rng, sigma, e->kbuf, n)) == 0)
		rc = covnoise_apply(x, n, sigma, e->kbuf);
	if (rc == NOISE_E_NOMEM)
		return PV_E_NOMEM;
	if (rc != 0) {
		snprintf(e->msg, sizeof e->msg, "noise of the %s: %s: nothing "
		    "was released", part_name[part], noise_strerror(rc));
		return PV_E_NOISE;
	}
	return 0;
}

/*
 * The DP start, one release of the same three parts as an iteration: per
 * class, the count of its rows, their sum and the sums of their squared
 * coordinates (sum_i x_ia^2, a = 1..d).  Adding or removing a row x
 * (||x|| <= B) moves them by 1, ||x|| <= B and sqrt(sum_a x_a^4) <=
 * ||x||^2 <= B^2, in its own class only: the sensitivities of an
 * iteration, so the same noise gives the same mu-GDP.  Post-processing:
 * the mean m = s / max(n, 1) pulled into the ball of radius B, the
 * variances v = q / max(n, 1) - m^2 clamped to [0, B^2]; with K = 1 the
 * mean is m, with K > 1 the means are m + sqrt(v) z_j (z_j standard
 * normal from the generator), pulled into the ball; the weights 1 / K and
 * the covariances diag(v) + reg (spherical: the mean of v, plus reg).
 */
static int
dp_start(struct dpem *e, struct rng *rng, const double *X,
    const size_t *start)
{
	const struct dpem_params *p = &e->p;
	size_t C = e->C, k = e->k, d = e->d, row = 1 + 2 * d;
	double B = p->clip, *cnt = e->ist, *sum, *sq;
	int rc;

	sum = cnt + C;
	sq = sum + C * d;
	memset(e->ist, 0, C * row * sizeof *e->ist);
	for (size_t c = 0; c < C; c++)
		for (size_t i = start[c]; i < start[c + 1]; i++) {
			const double *x = X + i * d;
			cnt[c] += 1;
			for (size_t a = 0; a < d; a++) {
				sum[c * d + a] += x[a];
				sq[c * d + a] += x[a] * x[a];
			}
		}
	if ((rc = add_noise(e, rng, DPEM_CNT, cnt, C)) != 0 ||
	    (rc = add_noise(e, rng, DPEM_SUM, sum, C * d)) != 0 ||
	    (rc = add_noise(e, rng, DPEM_MOM, sq, C * d)) != 0)
		return rc;
	for (size_t c = 0; c < C; c++) {
		struct gmm *g = &e->g[c];
		size_t cl = gmm_cov_len(p->cov, d);
		double n = fmax(cnt[c], 1), *m = e->w_m, *v = e->w_v;
		double nm = 0, vbar = 0;

		for (size_t a = 0; a < d; a++) {
			m[a] = sum[c * d + a] / n;
			nm += m[a] * m[a];
		}
		nm = sqrt(nm);
		for (size_t a = 0; a < d && nm > B; a++)
			m[a] *= B / nm;
		for (size_t a = 0; a < d; a++) {
			v[a] = sq[c * d + a] / n - m[a] * m[a];
			v[a] = v[a] < 0 ? 0 : v[a] > B * B ? B * B : v[a];
			vbar += v[a] / (double)d;
		}
		for (size_t j = 0; j < k; j++) {
			double *mu = g->mu + j * d, nr = 0;

			g->w[j] = 1 / (double)k;
			if (k > 1)
				gmm_normals(rng, mu, d);
			for (size_t a = 0; a < d; a++) {
				mu[a] = m[a] + (k > 1 ? sqrt(v[a]) * mu[a] : 0);
				nr += mu[a] * mu[a];
			}
			nr = sqrt(nr);
			for (size_t a = 0; a < d && nr > B; a++)
				mu[a] *= B / nr;
			for (size_t a = 0; a < cl; a++)
				g->cov[j * cl + a] = 0;
			for (size_t a = 0; a < d; a++) {
				if (p->cov == GMM_FULL)
					g->cov[j * cl + a * (d + 1)] = v[a] +
					    p->reg;
				else if (p->cov == GMM_DIAG)
					g->cov[j * cl + a] = v[a] + p->reg;
			}
			if (p->cov == GMM_SPHERICAL)
				g->cov[j * cl] = vbar + p->reg;
		}
	}
	return 0;
}

/* The data-independent start: weights 1/k, the public means or points
 * uniform in the ball, and the covariance of rows spread over the ball. */
static void
ball_start(struct dpem *e, struct rng *rng, const double *init)
{
	size_t k = e->k, d = e->d, cl = gmm_cov_len(e->p.cov, d);
	double B = e->p.clip;

	for (size_t c = 0; c < e->C; c++) {
		struct gmm *g = &e->g[c];

		for (size_t j = 0; j < k; j++) {
			g->w[j] = 1 / (double)k;
			if (init)
				memcpy(g->mu + j * d, init + j * d,
				    d * sizeof *g->mu);
			else
				gmm_ball(rng, d, B, g->mu + j * d);
			for (size_t a = 0; a < cl; a++)
				g->cov[j * cl + a] = e->p.cov == GMM_FULL ?
				    (a % (d + 1) == 0 ? B * B / (double)d : 0) :
				    B * B / (double)d;
		}
	}
}

int
dpem_run(struct dpem *e, struct rng *rng, const double *X,
    const size_t *start, const double *init)
{
	const struct dpem_params *p = &e->p;
	size_t C = e->C, k = e->k, d = e->d, ml = e->ml, bad = 0;
	size_t row = 1 + d + ml;
	double B = p->clip;
	int rc;

	e->msg[0] = '\0';
	if ((uint64_t)start[C] > FPSUM_MAX_ROWS) {
		snprintf(e->msg, sizeof e->msg, "more than %llu rows, the "
		    "public bound of the floating-point error charged",
		    (unsigned long long)FPSUM_MAX_ROWS);
		return PV_E_LIMIT;
	}
	if (p->init_dp) {
		if ((rc = dp_start(e, rng, X, start)) != 0)
			return rc;
	} else {
		ball_start(e, rng, init);
	}
	for (size_t t = 0; t < p->iters; t++) {
		for (size_t c = 0; c < C; c++) {
			size_t n = start[c + 1] - start[c];
			double ll;

			rc = gmm_pass(e->w, &e->g[c], X + start[c] * d, n,
			    &e->st[c], &ll, &bad);
			/* The covariances are released values with
			 * eigenvalues >= reg > 0, so they factor; the
			 * log-likelihood is not used (and not released), so
			 * GMM_E_NUMERIC is no failure here. */
			if (rc == GMM_E_NOMEM)
				return PV_E_NOMEM;
			if (rc != 0 && rc != GMM_E_NUMERIC) {
				snprintf(e->msg, sizeof e->msg, "DP-EM: class "
				    "%zu: %s", c, gmm_strerror(rc));
				return rc;
			}
			gmm_stats_pack(&e->st[c], e->cnt + c * k,
			    e->sum + c * k * d, e->mom + c * k * ml);
		}
		/* The release of iteration t: counts, sums, moments. */
		if ((rc = add_noise(e, rng, DPEM_CNT, e->cnt, C * k)) != 0 ||
		    (rc = add_noise(e, rng, DPEM_SUM, e->sum, C * k * d)) != 0 ||
		    (rc = add_noise(e, rng, DPEM_MOM, e->mom, C * k * ml)) != 0)
			return rc;
		for (size_t c = 0; c < C; c++) {
			gmm_stats_unpack(&e->st[c], e->cnt + c * k,
			    e->sum + c * k * d, e->mom + c * k * ml);
			if (e->trace) {
				double *tr = e->trace + ((c * p->iters + t) *
				    k) * row;
				for (size_t j = 0; j < k; j++) {
					tr[j * row] = e->cnt[c * k + j];
					memcpy(tr + j * row + 1, e->sum +
					    (c * k + j) * d, d * sizeof *tr);
					memcpy(tr + j * row + 1 + d, e->mom +
					    (c * k + j) * ml, ml * sizeof *tr);
				}
			}
			if (gmm_mstep_dp(&e->g[c], &e->st[c], p->reg, B) != 0) {
				snprintf(e->msg, sizeof e->msg, "DP-EM: class "
				    "%zu: the eigensolver failed", c);
				return PV_E_NUMERIC;
			}
		}
		if (p->progress)
			p->progress(p->ctx, (double)(t + 1), (double)p->iters);
	}
	return 0;
}

const char *
dpem_errmsg(const struct dpem *e)
{
	return e->msg[0] ? e->msg : "no error";
}

const struct gmm *
dpem_model(const struct dpem *e, size_t c)
{
	return c < e->C ? &e->g[c] : NULL;
}

void
dpem_priors(const struct dpem *e, double *priors)
{
	double tot = 0;

	for (size_t c = 0; c < e->C; c++) {
		priors[c] = 0;
		for (size_t j = 0; j < e->k; j++)
			priors[c] += fmax(e->cnt[c * e->k + j], 1);
		tot += priors[c];
	}
	for (size_t c = 0; c < e->C; c++)
		priors[c] /= tot;
}

const double *
dpem_trace(const struct dpem *e, size_t c)
{
	if (e->trace == NULL || c >= e->C)
		return NULL;
	return e->trace + c * e->p.iters * e->k * (1 + e->d + e->ml);
}

void
dpem_init_stats(const struct dpem *e, size_t c, double *v)
{
	size_t C = e->C, d = e->d;

	if (e->ist == NULL || c >= C)
		return;
	/* count, sums, sums of squares */
	v[0] = e->ist[c];
	memcpy(v + 1, e->ist + C + c * d, d * sizeof *v);
	memcpy(v + 1 + d, e->ist + C + C * d + c * d, d * sizeof *v);
}

static int
param(struct ledger_entry *le, const char *key, double v)
{
	return ts_meta_setf(&le->params, key, "%.17g", v) != 0 ? PV_E_NOMEM :
	    0;
}

int
dpem_ledger(struct ledger_entry *le, const struct dpem_params *p,
    const struct dpem_plan *pl)
{
	static const char *const sig[DPEM_NPARTS] = { "sigma_count",
	    "sigma_sum", "sigma" };
	static const char *const sen[DPEM_NPARTS] = { "l2_sensitivity_count",
	    "l2_sensitivity_sum", "l2_sensitivity" };
	static const char *const grd[DPEM_NPARTS] = { "grid_count",
	    "grid_sum", "grid" };
	static const char *const wgt[DPEM_NPARTS] = { "weight_count",
	    "weight_sum", "weight_moments" };
	double reps = p->repeats ? (double)p->repeats : 1;
	int rc = 0;

	/* T iterations of one Gaussian mechanism each, per release. */
	jgauss_entry_curve(le, pl->mu, (double)dpem_releases(p) * reps);
	for (int i = 0; i < DPEM_NPARTS && rc == 0; i++)
		if ((rc = param(le, sig[i], pl->p[i].sigma)) != 0 ||
		    (rc = param(le, sen[i], pl->p[i].sens)) != 0 ||
		    (rc = param(le, grd[i], pl->p[i].grid)) != 0 ||
		    (rc = param(le, wgt[i], pl->p[i].w)) != 0)
			return rc;
	if ((rc = param(le, "clip", p->clip)) != 0 ||
	    (rc = param(le, "noise_multiplier", 1 / pl->mu)) != 0 ||
	    (rc = param(le, "fp_margin", pl->fp_margin)) != 0 ||
	    (rc = param(le, "rows_bound", (double)FPSUM_MAX_ROWS)) != 0 ||
	    (rc = param(le, "steps", (double)p->iters)) != 0 ||
	    (rc = param(le, "init_releases", p->init_dp ? 1 : 0)) != 0 ||
	    (rc = param(le, "components", (double)p->k)) != 0)
		return rc;
	if (p->repeats && (rc = param(le, "audit_releases", reps)) != 0)
		return rc;
	if (p->unsafe_moments_b &&
	    (rc = param(le, "unsafe_test_moments_b", 1)) != 0)
		return rc;
	return 0;
}
