/*
 * Unit tests of lib/nn (layers, loss, ghost norms, clipping, noise,
 * Poisson sampling), lib/optim and lib/model.
 *
 * Gradients are checked against central finite differences of a
 * double-precision forward pass written here independently: f64 with
 * h = 1e-5 has truncation error about h^2 |L'''| < 1e-9 and cancellation
 * about 1e-16 / h = 1e-11, while the f32 backward pass is accurate to a
 * few units of 2^-24 times the depth (about 1e-6 relative), so a
 * tolerance of 1e-4 (1 + |fd|) separates rounding from a wrong formula
 * (which is off by O(1)).  Examples with a ReLU input within 1e-3 of its
 * kink are skipped (a step of h cannot cross it then).
 *
 * Statistical checks use the critical values of stat.h: a false-failure
 * rate of at most 1e-6 per check for a random seed; seeds are fixed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "nn.h"
#include "noise.h"
#include "noise_fast.h"
#include "optim.h"
#include "rng.h"
#include "stat.h"
#include "tap.h"
#include "tstream.h"

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 20260101, item) != 0)
		abort();
	return r;
}

static double
unif(struct rng *r, double a)
{
	return (2 * ldexp((double)(rng_u64(r) >> 11), -53) - 1) * a;
}

/* ---- an independent f64 forward pass ---- */

/* Loss of one example x (in of layer 0) with label y; *kink receives the
 * smallest |z| over ReLU units. */
static double
ref_loss(const struct nn_net *net, const double *p, const double *x, int y,
    double *kink)
{
	double a[64], z[64];
	size_t in = net->layer[0].in;

	*kink = INFINITY;
	memcpy(a, x, in * sizeof *a);
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		for (size_t k = 0; k < L->out; k++) {
			double s = p[L->off + L->in * L->out + k];
			for (size_t j = 0; j < L->in; j++)
				s += a[j] * p[L->off + j * L->out + k];
			z[k] = s;
		}
		for (size_t k = 0; k < L->out; k++) {
			if (L->act == NN_ACT_RELU) {
				if (fabs(z[k]) < *kink)
					*kink = fabs(z[k]);
				a[k] = z[k] > 0 ? z[k] : 0;
			} else {
				a[k] = z[k];
			}
		}
		in = L->out;
	}
	{
		double m = -INFINITY, s = 0;
		for (size_t k = 0; k < in; k++)
			if (a[k] > m)
				m = a[k];
		for (size_t k = 0; k < in; k++)
			s += exp(a[k] - m);
		return m + log(s) - a[y];
	}
}

#define NB 8

/* Finite-difference check of the per-example parameter and input
 * gradients of net (widths w, nl layers, the first nfrozen frozen). */
static void
check_gradients(const char *what, const size_t *w, size_t nl, size_t nfrozen)
{
	struct nn_model m;
	struct nn_ws ws;
	struct rng *r = seeded(what);
	size_t in = w[0], k = w[nl], np, skipped = 0, checked = 0;
	float x[NB * 16], g[NB * 16], gin[NB * 16], *grad;
	int32_t y[NB];
	double *p, *an, worst = 0, worst_in = 0, worst_sum = 0, worst_norm = 0;
	double sq[NB] = { 0 };

	if (model_init(&m, w, nl) != 0)
		abort();
	for (size_t l = 0; l < nfrozen; l++)
		m.net.layer[l].frozen = 1;
	np = m.nparam;
	for (size_t i = 0; i < np; i++)
		m.param[i] = (float)unif(r, 1);
	for (size_t i = 0; i < NB * in; i++)
		x[i] = (float)unif(r, 1);
	for (size_t i = 0; i < NB; i++)
		y[i] = (int32_t)rng_uniform_below(r, k);
	p = calloc(np, sizeof *p);
	an = calloc(np, sizeof *an);
	grad = calloc(np, sizeof *grad);
	for (size_t i = 0; i < np; i++)
		p[i] = m.param[i];
	if (nn_ws_init(&ws, &m.net, NB) != 0)
		abort();
	nn_forward(&m.net, m.param, &ws, x, NB);
	nn_softmax_xent(nn_output(&m.net, &ws), y, NB, k, g, NULL, NULL);
	nn_backward(&m.net, m.param, &ws, g, gin);
	nn_sqnorms(&m.net, &ws, sq);
	nn_grad_sum(&m.net, &ws, 0.5f, grad);
	{
		double *tot = calloc(np, sizeof *tot);

		for (size_t i = 0; i < NB; i++) {
			double xd[16], kink, nrm = 0;

			memset(an, 0, np * sizeof *an);
			nn_clip_contrib(&m.net, &ws, i, 1.0, an);
			for (size_t j = 0; j < np; j++) {
				tot[j] += an[j];
				nrm += an[j] * an[j];
			}
			if (fabs(nrm - sq[i]) > worst_norm * (1 + sq[i]))
				worst_norm = fabs(nrm - sq[i]) / (1 + sq[i]);
			for (size_t j = 0; j < in; j++)
				xd[j] = x[i * in + j];
			(void)ref_loss(&m.net, p, xd, y[i], &kink);
			if (kink < 1e-3) {
				skipped++;
				continue;
			}
			for (size_t l = 0; l < nl; l++) {
				const struct nn_layer *L = &m.net.layer[l];
				for (size_t j = L->off; j < L->off + nn_layer_params(L); j++) {
					double sv = p[j], lp, lm, fd, kk, want;

					p[j] = sv + 1e-5;
					lp = ref_loss(&m.net, p, xd, y[i], &kk);
					p[j] = sv - 1e-5;
					lm = ref_loss(&m.net, p, xd, y[i], &kk);
					p[j] = sv;
					fd = (lp - lm) / 2e-5;
					/* frozen layers: no gradient written */
					want = L->frozen ? 0 : fd;
					if (fabs(an[j] - want) / (1 + fabs(fd)) > worst)
						worst = fabs(an[j] - want) / (1 + fabs(fd));
					checked++;
				}
			}
			for (size_t j = 0; j < in; j++) {
				double sv = xd[j], lp, lm, fd, kk;

				xd[j] = sv + 1e-5;
				lp = ref_loss(&m.net, p, xd, y[i], &kk);
				xd[j] = sv - 1e-5;
				lm = ref_loss(&m.net, p, xd, y[i], &kk);
				xd[j] = sv;
				fd = (lp - lm) / 2e-5;
				if (fabs(gin[i * in + j] - fd) / (1 + fabs(fd)) > worst_in)
					worst_in = fabs(gin[i * in + j] - fd) / (1 + fabs(fd));
			}
		}
		for (size_t j = 0; j < np; j++)
			if (fabs(grad[j] - 0.5 * tot[j]) / (1 + fabs(tot[j])) > worst_sum)
				worst_sum = fabs(grad[j] - 0.5 * tot[j]) / (1 + fabs(tot[j]));
		free(tot);
	}
	ok(skipped <= 2 && checked > 0 && worst <= 1e-4,
	    "%s: parameter gradients match finite differences (worst %.3g, "
	    "%zu checked, %zu examples skipped)", what, worst, checked, skipped);
	ok(worst_in <= 1e-4, "%s: input gradients match finite differences "
	    "(worst %.3g)", what, worst_in);
	ok(worst_norm <= 1e-5, "%s: ghost norms equal the norms of the "
	    "materialised per-example gradients (worst %.3g)", what, worst_norm);
	ok(worst_sum <= 1e-5, "%s: nn_grad_sum is the scaled sum of the "
	    "per-example gradients (worst %.3g)", what, worst_sum);
	nn_ws_free(&ws);
	model_free(&m);
	free(p);
	free(an);
	free(grad);
	rng_free(r);
}

static void
test_gradients(void)
{
	static const size_t mlp[] = { 6, 5, 4, 3 }, lr[] = { 7, 4 },
	    deep[] = { 3, 9, 7, 5, 2 };

	check_gradients("mlp 6-5-4-3", mlp, 3, 0);
	check_gradients("logreg 7-4", lr, 1, 0);
	check_gradients("mlp 3-9-7-5-2, first two layers frozen", deep, 4, 2);
}

static void
test_softmax(void)
{
	float z[] = { 0, 0, 1000, 1001, 1, 2, NAN, 0 }, g[8];
	int32_t y[] = { 0, 1, 3, 0 };
	double loss[4], tot;
	size_t bad;

	tot = nn_softmax_xent(z, y, 4, 2, g, loss, &bad);
	ok(fabs(loss[0] - log(2.0)) < 1e-12 && g[0] == -0.5f && g[1] == 0.5f,
	    "softmax cross-entropy of equal logits is log 2, gradient -1/2, 1/2");
	ok(fabs(loss[1] - log1p(exp(-1.0))) < 1e-9 && isfinite(g[2]) &&
	    fabs(g[2] - 1 / (1 + exp(1.0))) < 1e-7,
	    "large logits (1000, 1001) do not overflow: log(1 + e^-1)");
	ok(bad == 2 && loss[2] == 0 && loss[3] == 0 && g[4] == 0 && g[5] == 0 &&
	    g[6] == 0 && g[7] == 0, "a label out of range and a NaN logit "
	    "give a zero gradient and are counted");
	ok(fabs(tot - loss[0] - loss[1]) < 1e-12, "the total is the sum of "
	    "the valid losses");
}

/* ---- clipping ---- */

#define NC 12

static double
l2(const double *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i] * v[i];
	return sqrt(s);
}

/* Forward, loss and backward of the rows x[0..n-1], then the clipped sum
 * (sum zeroed first). */
static void
clipped_sum(const struct nn_clip *cp, struct nn_model *m, struct nn_ws *ws,
    float *x, const int32_t *y, size_t n, double *sum, double *wt)
{
	float g[NC * 3];
	double sq[NC] = { 0 };

	memset(sum, 0, m->nparam * sizeof *sum);
	nn_forward(&m->net, m->param, ws, x, n);
	nn_softmax_xent(nn_output(&m->net, ws), y, n, 3, g, NULL, NULL);
	nn_backward(&m->net, m->param, ws, g, NULL);
	nn_sqnorms(&m->net, ws, sq);
	nn_clip_weights(cp, sq, n, wt);
	if (nn_clip_sum(cp, &m->net, ws, wt, n, sum) != 0)
		abort();
}

static void
test_clipping(void)
{
	static const size_t w[] = { 4, 8, 3 };
	static const double scale[NC] = { 1, 1, 1, 1e3, 1e6, 1e30, 1, 1, 1,
		-1e4, 1e-30, 1 };
	struct nn_model m;
	struct nn_ws ws;
	struct nn_clip cp;
	struct rng *r = seeded("clip");
	float x[NC * 4], xc[NC * 4];
	int32_t y[NC];
	double C = 0.5, wt[NC], *c, *sum, *sum2, maxn = 0, err = 0, sens = 0;
	double sq[NC] = { 0 };
	float g[NC * 3];
	int finite = 1;

	if (model_init(&m, w, 2) != 0 || nn_ws_init(&ws, &m.net, NC) != 0)
		abort();
	nn_init_params(&m.net, m.param, r, 0);
	for (size_t i = 0; i < NC; i++) {
		y[i] = (int32_t)rng_uniform_below(r, 3);
		for (size_t j = 0; j < 4; j++)
			x[i * 4 + j] = (float)(unif(r, 1) * scale[i]);
	}
	x[6 * 4 + 1] = INFINITY;
	x[7 * 4 + 2] = NAN;
	y[8] = 7;			/* a label out of range */
	ok(nn_clip_plan(&cp, C, NC, 100, NC) == 0 && cp.clip_row < C &&
	    cp.margin > 0 && cp.margin < 0x1p-7,
	    "the plan clips rows at C' < C (margin %.3g)", cp.margin);
	c = calloc(m.nparam, sizeof *c);
	sum = calloc(m.nparam, sizeof *sum);
	sum2 = calloc(m.nparam, sizeof *sum2);
	memcpy(xc, x, sizeof x);
	nn_forward(&m.net, m.param, &ws, xc, NC);
	nn_softmax_xent(nn_output(&m.net, &ws), y, NC, 3, g, NULL, NULL);
	nn_backward(&m.net, m.param, &ws, g, NULL);
	nn_sqnorms(&m.net, &ws, sq);
	nn_clip_weights(&cp, sq, NC, wt);
	{
		double *tot = calloc(m.nparam, sizeof *tot);

		for (size_t i = 0; i < NC; i++) {
			memset(c, 0, m.nparam * sizeof *c);
			nn_clip_contrib(&m.net, &ws, i, wt[i], c);
			if (l2(c, m.nparam) > maxn)
				maxn = l2(c, m.nparam);
			for (size_t j = 0; j < m.nparam; j++)
				tot[j] += c[j];
		}
		ok(maxn <= C && maxn > 0.9 * C, "with huge outliers, every "
		    "per-example contribution has norm <= C (largest %.17g, "
		    "C = %g)", maxn, C);
		ok(wt[5] == 0 && wt[6] == 0 && wt[7] == 0 && wt[3] < 1 &&
		    wt[9] < 1, "rows with activations beyond 2^50 or not finite "
		    "get weight 0, large rows a weight below 1");
		if (nn_clip_sum(&cp, &m.net, &ws, wt, NC, sum) != 0)
			abort();
		for (size_t j = 0; j < m.nparam; j++) {
			finite &= isfinite(sum[j]);
			if (fabs(sum[j] - tot[j]) > err)
				err = fabs(sum[j] - tot[j]);
		}
		ok(finite && err < 1e-6, "the clipped sum is finite and equals "
		    "the sum of the contributions (error %.3g)", err);
		free(tot);
	}
	/* Sensitivity: the batch with and without each row. */
	for (size_t out = 0; out < NC; out++) {
		float xa[NC * 4], xb[NC * 4];
		int32_t ya[NC], yb[NC];
		double d = 0;
		size_t k = 0;

		for (size_t i = 0; i < NC; i++) {
			memcpy(xa + 4 * i, x + 4 * i, 4 * sizeof *x);
			ya[i] = y[i];
			if (i != out) {
				memcpy(xb + 4 * k, x + 4 * i, 4 * sizeof *x);
				yb[k++] = y[i];
			}
		}
		clipped_sum(&cp, &m, &ws, xa, ya, NC, sum, wt);
		clipped_sum(&cp, &m, &ws, xb, yb, NC - 1, sum2, wt);
		for (size_t j = 0; j < m.nparam; j++)
			d += (sum[j] - sum2[j]) * (sum[j] - sum2[j]);
		if (sqrt(d) > sens)
			sens = sqrt(d);
	}
	ok(sens <= C, "removing any one row moves the clipped sum by at most "
	    "C (largest %.17g)", sens);
	/* The f64 path gives the same sum (a batch "larger" than nmax). */
	memcpy(xc, x, sizeof x);
	clipped_sum(&cp, &m, &ws, xc, y, NC, sum, wt);
	{
		float g2[NC * 3];
		double sq2[NC] = { 0 };

		memcpy(xc, x, sizeof x);
		memset(sum2, 0, m.nparam * sizeof *sum2);
		nn_forward(&m.net, m.param, &ws, xc, NC);
		nn_softmax_xent(nn_output(&m.net, &ws), y, NC, 3, g2, NULL, NULL);
		nn_backward(&m.net, m.param, &ws, g2, NULL);
		nn_sqnorms(&m.net, &ws, sq2);
		nn_clip_weights(&cp, sq2, NC, wt);
		ok(nn_clip_sum(&cp, &m.net, &ws, wt, cp.nmax + 1, sum2) == 0,
		    "the f64 path runs");
		err = 0;
		finite = 1;
		for (size_t j = 0; j < m.nparam; j++) {
			finite &= isfinite(sum2[j]);
			if (fabs(sum[j] - sum2[j]) > err)
				err = fabs(sum[j] - sum2[j]);
		}
		ok(finite && err < 1e-6, "the f64 path agrees with the f32 path "
		    "(difference %.3g)", err);
	}
	/* The test can fail: without clipping the outliers exceed C. */
	cp.unclipped = 1;
	memcpy(xc, x, sizeof x);
	clipped_sum(&cp, &m, &ws, xc, y, NC, sum, wt);
	memset(sq, 0, sizeof sq);
	memcpy(xc, x, sizeof x);
	nn_forward(&m.net, m.param, &ws, xc, NC);
	nn_softmax_xent(nn_output(&m.net, &ws), y, NC, 3, g, NULL, NULL);
	nn_backward(&m.net, m.param, &ws, g, NULL);
	nn_sqnorms(&m.net, &ws, sq);
	nn_clip_weights(&cp, sq, NC, wt);
	maxn = 0;
	for (size_t i = 0; i < NC; i++) {
		memset(c, 0, m.nparam * sizeof *c);
		nn_clip_contrib(&m.net, &ws, i, wt[i], c);
		if (l2(c, m.nparam) > maxn)
			maxn = l2(c, m.nparam);
	}
	ok(maxn > 100 * C, "the unclipped test mode lets an outlier exceed C "
	    "(norm %.3g): the check above can fail", maxn);
	ok(nn_clip_plan(&cp, 0, 10, 100, 10) == NN_E_RANGE &&
	    nn_clip_plan(&cp, 1, 10, NN_MAX_RECORDS + 1, 10) == NN_E_RANGE &&
	    nn_clip_plan(&cp, 1, 10, 100, 0) == NN_E_RANGE,
	    "the plan refuses C = 0, too many records and cap 0");
	ok(nn_clip_plan(&cp, 1, 256, 60000, 512) == 0 && cp.nmax >= 400 &&
	    cp.margin < 0.008, "batch 256 of 60000: f32 path up to %zu rows "
	    "in chunks of %zu, margin %.3g", cp.nmax, cp.chunk, cp.margin);
	free(c);
	free(sum);
	free(sum2);
	nn_ws_free(&ws);
	model_free(&m);
	rng_free(r);
}

/* ---- noise ---- */

/* The blocks nn_noise_release_each hands over: contiguous, in order,
 * each already equal to the reference release. */
struct each_log {
	size_t next, calls;
	int ok;
	const double *x, *want;
};

static void
each_check(void *arg, double *x, size_t lo, size_t hi)
{
	struct each_log *lg = arg;

	lg->ok &= x == lg->x && lo == lg->next && hi > lo &&
	    memcmp(x + lo, lg->want + lo, (hi - lo) * sizeof *x) == 0;
	lg->next = hi;
	lg->calls++;
}

static void
test_noise(void)
{
	double sigma = 1.3, C = 0.7, sens, gamma, s;
	size_t d = 50000;
	struct rng *r = seeded("noise"), *r2 = seeded("noise");
	struct rng *r3 = seeded("noise");
	struct nn_noise *h, *h2;
	double *x = malloc(d * sizeof *x), *x2 = malloc(d * sizeof *x2);
	double *x3 = malloc(d * sizeof *x3), m1 = 0, m2 = 0, var, z;
	long M = 0;
	int same = 1, same2 = 1;

	s = nn_noise_std(sigma, C, d, &sens, &gamma);
	ok(s >= sigma * sens && s / (sigma * C) - 1 < 1e-4 && sens > C &&
	    gamma == noise_grid(s), "noise std %.17g is sigma C up to the "
	    "grid's charge, and covers sigma times the charged sensitivity", s);
	ok(isnan(nn_noise_std(0, 1, 10, NULL, NULL)) &&
	    isnan(nn_noise_std(1, 1, 0, NULL, NULL)),
	    "nn_noise_std refuses sigma 0 and d 0");
	if (nn_noise_new(&h, &r, 1, s, d, 1, 0) != 0 ||
	    nn_noise_new(&h2, &r3, 1, s, d, 1, 1) != 0)
		abort();
	for (int rep = 0; rep < 4; rep++) {
		for (size_t i = 0; i < d; i++)
			x[i] = x3[i] = rep == 0 ? 0.001 * (double)i - 17.3 : 0;
		memcpy(x2, x, d * sizeof *x);
		if (nn_noise_release(h, x) != 0 || nn_noise_release(h2, x3) != 0)
			abort();
		/* the same stream through lib/noise directly */
		if (noise_add_dgauss(r2, x2, d, s, 0) != 0)
			abort();
		same &= memcmp(x, x2, d * sizeof *x) == 0;
		same2 &= memcmp(x, x3, d * sizeof *x) == 0;
		if (rep == 0)
			continue;
		for (size_t i = 0; i < d; i++) {
			m1 += x[i];
			m2 += x[i] * x[i];
			M++;
		}
	}
	ok(same, "nn_noise_release gives bit for bit what noise_add_dgauss "
	    "gives on the same stream");
	ok(same2, "the threaded noise handle gives the same bytes");
	m1 /= (double)M;
	var = m2 / (double)M - m1 * m1;
	z = (var - s * s) / (s * s * sqrt(2.0 / (double)M));
	ok(fabs(m1) / (s / sqrt((double)M)) <= STAT_Z && fabs(z) <= STAT_Z,
	    "the noise has mean 0 and standard deviation sigma C (%ld draws: "
	    "sd %.6g for %.6g, z %.2f)", M, sqrt(var), s, z);
	ok(nn_noise_tv(h) == 0, "the exact sampler has no TV charge");
	nn_noise_free(h);
	nn_noise_free(h2);
	/* The fast sampler through nn_noise, against noise_fast_add. */
	{
		struct noise_fast *f;
		struct rng *ra = seeded("fast"), *rb = seeded("fast");
		double tv = 0;

		if (nn_noise_new(&h, &ra, 1, s, d, 0, 1) != 0 ||
		    noise_fast_new_grid(&f, s) != 0)
			abort();
		same = 1;
		m1 = m2 = 0;
		M = 0;
		for (int rep = 0; rep < 4; rep++) {
			for (size_t i = 0; i < d; i++)
				x[i] = x2[i] = rep == 0 ? 3.7 - 0.002 * (double)i : 0;
			if (nn_noise_release(h, x) != 0 ||
			    noise_fast_add(f, rb, x2, d, &tv) != 0)
				abort();
			same &= memcmp(x, x2, d * sizeof *x) == 0;
			if (rep == 0)
				continue;
			for (size_t i = 0; i < d; i++) {
				m1 += x[i];
				m2 += x[i] * x[i];
				M++;
			}
		}
		ok(same && nn_noise_tv(h) >= tv && tv > 0, "with the fast "
		    "sampler, the same bytes as noise_fast_add and its TV bound "
		    "(%.3g)", nn_noise_tv(h));
		m1 /= (double)M;
		var = m2 / (double)M - m1 * m1;
		z = (var - s * s) / (s * s * sqrt(2.0 / (double)M));
		ok(fabs(m1) / (s / sqrt((double)M)) <= STAT_Z && fabs(z) <= STAT_Z,
		    "the fast noise has mean 0 and standard deviation sigma C "
		    "(sd %.6g for %.6g, z %.2f)", sqrt(var), s, z);
		nn_noise_free(h);
		noise_fast_free(f);
		rng_free(ra);
		rng_free(rb);
	}
	/* Released in blocks (nn_noise_release_each): the bytes of
	 * noise_fast_add again, each block handed over once, in order,
	 * after its release, with a block size that does not divide d. */
	{
		struct noise_fast *f;
		struct rng *ra = seeded("each"), *rb = seeded("each");
		struct each_log lg = { 0, 0, 1, NULL, NULL };
		double tv = 0;

		if (nn_noise_new(&h, &ra, 1, s, d, 0, 0) != 0 ||
		    noise_fast_new_grid(&f, s) != 0)
			abort();
		same = 1;
		for (int rep = 0; rep < 3; rep++) {
			for (size_t i = 0; i < d; i++)
				x[i] = x2[i] = 1.25 - 0.001 * (double)i +
				    (double)rep;
			lg.next = 0;
			lg.x = x;
			lg.want = x2;
			if (noise_fast_add(f, rb, x2, d, &tv) != 0 ||
			    nn_noise_release_each(h, x, 999, each_check, &lg) !=
			    0)
				abort();
			same &= lg.next == d &&
			    memcmp(x, x2, d * sizeof *x) == 0;
		}
		ok(same && lg.ok && lg.calls == 3 * ((d + 998) / 999) &&
		    nn_noise_tv(h) >= tv && tv > 0, "nn_noise_release_each: "
		    "the bytes of noise_fast_add, in %zu blocks handed over in "
		    "order", lg.calls);
		ok(nn_noise_release_each(h, x, 0, each_check, &lg) ==
		    NN_E_RANGE, "nn_noise_release_each refuses blocks of 0");
		nn_noise_free(h);
		noise_fast_free(f);
		rng_free(ra);
		rng_free(rb);
	}
	/* Two segments, each from its own stream, threaded or not. */
	{
		struct rng *sa[2] = { seeded("seg/0"), seeded("seg/1") };
		struct rng *sb[2] = { seeded("seg/0"), seeded("seg/1") };
		struct rng *sc[2] = { seeded("seg/0"), seeded("seg/1") };
		struct nn_noise *ha, *hb;
		size_t half = d / 2;

		if (nn_noise_new(&ha, sa, 2, s, d, 0, 1) != 0 ||
		    nn_noise_new(&hb, sb, 2, s, d, 0, 0) != 0)
			abort();
		same = 1;
		for (int rep = 0; rep < 3; rep++) {
			double tv = 0;
			for (size_t i = 0; i < d; i++)
				x[i] = x2[i] = x3[i] = 0.5 * (double)i;
			if (nn_noise_release(ha, x) != 0 ||
			    nn_noise_release(hb, x2) != 0 ||
			    noise_fast_add_dgauss(sc[0], x3, half, s, &tv) != 0 ||
			    noise_fast_add_dgauss(sc[1], x3 + half, d - half, s,
			    &tv) != 0)
				abort();
			same &= memcmp(x, x2, d * sizeof *x) == 0 &&
			    memcmp(x, x3, d * sizeof *x) == 0;
		}
		ok(same, "two noise segments: threaded and unthreaded give the "
		    "bytes of noise_fast_add on each half with its stream");
		nn_noise_free(ha);
		nn_noise_free(hb);
		for (int j = 0; j < 2; j++) {
			rng_free(sa[j]);
			rng_free(sb[j]);
			rng_free(sc[j]);
		}
	}
	/* Many releases in quick succession: the caller draws a segment's
	 * next vector itself whenever its worker has not started it, so both
	 * hands fill vectors here; the bytes and the TV bound must not depend
	 * on which did. */
	{
		struct rng *sa[3] = { seeded("many/0"), seeded("many/1"),
		    seeded("many/2") };
		struct rng *sb[3] = { seeded("many/0"), seeded("many/1"),
		    seeded("many/2") };
		struct nn_noise *ha, *hb;
		const size_t dm = d < 3000 ? d : 3000;

		if (nn_noise_new(&ha, sa, 3, s, dm, 0, 1) != 0 ||
		    nn_noise_new(&hb, sb, 3, s, dm, 0, 0) != 0)
			abort();
		same = 1;
		for (int rep = 0; rep < 400; rep++) {
			for (size_t i = 0; i < dm; i++)
				x[i] = x2[i] = 0.25 * (double)i - (double)rep;
			if (nn_noise_release(ha, x) != 0 ||
			    nn_noise_release(hb, x2) != 0)
				abort();
			same &= memcmp(x, x2, dm * sizeof *x) == 0;
		}
		ok(same && nn_noise_tv(ha) == nn_noise_tv(hb), "400 threaded "
		    "releases (caller and workers drawing) equal the unthreaded "
		    "ones, TV bound included");
		nn_noise_free(ha);
		nn_noise_free(hb);
		for (int j = 0; j < 3; j++) {
			rng_free(sa[j]);
			rng_free(sb[j]);
		}
	}
	free(x);
	free(x2);
	free(x3);
	rng_free(r);
	rng_free(r2);
	rng_free(r3);
}

/* ---- Poisson sampling ---- */

/* DRAWS samples of n indices at rate q: batch sizes against
 * Binomial(n, q) and the indices chosen against the uniform, both by
 * chi-square. */
static void
check_poisson(const char *item, int NN, double q, int DRAWS)
{
	struct rng *r = seeded(item);
	uint64_t *idx = malloc(NN * sizeof *idx);
	long *hist = calloc(NN + 1, sizeof *hist), *per = calloc(NN, sizeof *per);
	long *obs = calloc(NN + 1, sizeof *obs), total = 0;
	long double *pmf = calloc(NN + 2, sizeof *pmf), *p = calloc(NN + 1,
	    sizeof *p), lp = NN * logl(1 - (long double)q), accp = 0;
	int sorted = 1, nb = 0;
	long acco = 0;

	for (int t = 0; t < DRAWS; t++) {
		size_t n = nn_poisson(r, NN, q, idx);

		hist[n]++;
		for (size_t i = 0; i < n; i++) {
			sorted &= idx[i] < (uint64_t)NN && (i == 0 || idx[i] > idx[i - 1]);
			per[idx[i]]++;
			total++;
		}
	}
	ok(sorted, "Poisson (n %d, q %g): increasing indices in range", NN, q);
	/* Binomial(N, q) pmf in long double, bins with expected count below
	 * 5 merged into the two tails. */
	for (int k = 0; k <= NN; k++) {
		pmf[k] = expl(lp);
		if (k < NN)
			lp += logl((long double)(NN - k) / (k + 1)) +
			    logl((long double)q / (1 - (long double)q));
	}
	for (int k = 0; k <= NN; k++) {
		accp += pmf[k];
		acco += hist[k];
		if (accp * DRAWS >= 5 && (k == NN || pmf[k + 1] * DRAWS >= 5 ||
		    nb == 0)) {
			p[nb] = accp;
			obs[nb++] = acco;
			accp = 0;
			acco = 0;
		}
	}
	p[nb - 1] += accp;
	obs[nb - 1] += acco;
	ok(chi2_stat(obs, p, nb, DRAWS) <= chi2_crit(nb - 1),
	    "batch sizes follow Binomial(%d, %g): chi-square %.1f over %d bins "
	    "(critical %.1f)", NN, q, chi2_stat(obs, p, nb, DRAWS), nb,
	    chi2_crit(nb - 1));
	for (int i = 0; i < NN; i++)
		p[i] = 1.0L / NN;
	ok(chi2_stat(per, p, NN, total) <= chi2_crit(NN - 1),
	    "every index is equally likely (chi-square %.1f, critical %.1f)",
	    chi2_stat(per, p, NN, total), chi2_crit(NN - 1));
	free(idx);
	free(hist);
	free(per);
	free(obs);
	free(pmf);
	free(p);
	rng_free(r);
}

static void
test_poisson(void)
{
	struct rng *r = seeded("poisson");
	uint64_t idx[1003];

	check_poisson("poisson/a", 1003, 0.05, 20000);
	check_poisson("poisson/b", 5003, 0.004, 20000);	/* top byte 1 */
	check_poisson("poisson/c", 203, 0.7, 20000);	/* top byte >= 128 */
	check_poisson("poisson/d", 37, 1.0 / 256, 200000); /* m = 2^56 */
	ok(nn_poisson(r, 1003, 1, idx) == 1003 && idx[1002] == 1002 &&
	    nn_poisson(r, 1003, 0, idx) == 0,
	    "q = 1 takes every index and q = 0 none");
	rng_free(r);
}

static void
test_zero_rows(void)
{
	float x[] = { 1, 2, INFINITY, 4, NAN, 6, -0.0f, 1e38f, 3e38f };
	size_t z = nn_zero_nonfinite_rows(x, 3, 3);

	ok(z == 2 && x[0] == 0 && x[2] == 0 && x[3] == 0 && x[5] == 0 &&
	    x[7] == 1e38f, "rows with an infinity or a NaN are zeroed, "
	    "finite rows kept");
}

/* ---- optimisers ---- */

static void
test_optim(void)
{
	struct optim_cfg c;
	struct optim *o;
	float p[2] = { 1, -2 }, g[2] = { 0.5f, 0.25f };

	optim_defaults(&c);
	o = optim_new(&c, 2);
	optim_update(o, p, g, 0, 2);
	ok(fabsf(p[0] - 0.95f) < 1e-7 && fabsf(p[1] + 2.025f) < 1e-7,
	    "SGD: p - lr g");
	optim_free(o);
	c.momentum = 0.9;
	p[0] = 1;
	o = optim_new(&c, 2);
	optim_update(o, p, g, 0, 1);
	optim_next(o);
	optim_update(o, p, g, 0, 1);
	ok(fabsf(p[0] - (1 - 0.05f - 0.1f * 0.95f)) < 1e-6 && p[1] != -2.0f,
	    "momentum: the second step moves by lr (1 + mu) g");
	optim_free(o);
	optim_defaults(&c);
	c.kind = OPTIM_ADAM;
	c.lr = 0.01;
	p[0] = 1;
	p[1] = -2;
	o = optim_new(&c, 2);
	optim_update(o, p, g, 0, 2);
	ok(fabsf(p[0] - 0.99f) < 1e-6 && fabsf(p[1] + 2.01f) < 1e-6,
	    "Adam: the first step is lr sign(g)");
	optim_free(o);
	optim_defaults(&c);
	c.weight_decay = 0.1;
	p[0] = 1;
	o = optim_new(&c, 2);
	optim_update(o, p, g, 0, 1);
	ok(fabsf(p[0] - (1 - 0.1f * 0.6f)) < 1e-7, "weight decay adds wd p");
	optim_free(o);
	optim_defaults(&c);
	c.sched = OPTIM_STEP;
	c.every = 10;
	c.gamma = 0.5;
	ok(optim_lr(&c, 9) == 0.1 && fabs(optim_lr(&c, 25) - 0.025) < 1e-15,
	    "step schedule: lr gamma^floor(t / every)");
	c.sched = OPTIM_COSINE;
	c.total = 100;
	ok(optim_lr(&c, 0) == 0.1 && fabs(optim_lr(&c, 50) - 0.05) < 1e-15 &&
	    optim_lr(&c, 100) == 0, "cosine schedule: lr, lr/2 half-way, 0");
	c.lr = 0;
	ok(optim_check(&c) != NULL && optim_new(&c, 2) == NULL,
	    "a zero learning rate is refused");
}

/* ---- model streams ---- */

static void
test_model(void)
{
	static const size_t w[] = { 3, 4, 2 };
	struct nn_model m, m2;
	struct ts_meta meta = { 0 };
	struct tensor *t = NULL;
	size_t nt = 0, ww[70], nl;
	char arch[MODEL_MAX_ARCH], err[256];
	FILE *fp = tmpfile();
	struct ts_writer *wr;
	struct ts_reader *rd;
	int rc;

	if (fp == NULL || model_init(&m, w, 2) != 0)
		abort();
	for (size_t i = 0; i < m.nparam; i++)
		m.param[i] = (float)i / 7.0f - 1;
	model_arch(&m, arch, sizeof arch);
	ok(strcmp(arch, "mlp:3-4-2") == 0 && m.nparam == 3 * 4 + 4 + 4 * 2 + 2,
	    "model.arch of a 3-4-2 MLP is mlp:3-4-2 (%zu parameters)", m.nparam);
	wr = ts_writer_open(fp, "tmp", 1, 0);
	model_put_meta(&m, &meta);
	rc = model_write(wr, &m);
	rc |= ts_write_meta(wr, &meta);
	rc |= ts_writer_finish(wr);
	ts_writer_close(wr);
	rewind(fp);
	rd = ts_reader_open(fp, "tmp");
	rc |= ts_read_all(rd, &t, &nt);
	ok(rc == 0 && nt == 4 && strcmp(t[0].name, "model/fc1/W") == 0 &&
	    strcmp(t[3].name, "model/fc2/b") == 0 && t[0].dims[0] == 3 &&
	    t[0].dims[1] == 4, "the model is written as model/fc<k>/W, b");
	rc = model_read(&m2, ts_reader_meta(rd), t, nt, err, sizeof err);
	ok(rc == 0 && m2.nparam == m.nparam && memcmp(m.param, m2.param,
	    m.nparam * sizeof(float)) == 0, "and read back exactly");
	model_free(&m2);
	t[2].dims[0] = 5;
	ok(model_read(&m2, ts_reader_meta(rd), t, nt, err, sizeof err) == -1 &&
	    strstr(err, "model/fc2/W") != NULL, "a wrong shape is refused, "
	    "naming the tensor: %s", err);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	ts_reader_close(rd);
	fclose(fp);
	ts_meta_free(&meta);
	ok(model_parse_arch("logreg:784-10", ww, &nl, err, sizeof err) == 0 &&
	    nl == 1 && ww[0] == 784 && ww[1] == 10 &&
	    model_parse_arch("mlp:3", ww, &nl, err, sizeof err) == -1 &&
	    model_parse_arch("cnn:3-4", ww, &nl, err, sizeof err) == -1 &&
	    model_parse_arch("logreg:3-4-5", ww, &nl, err, sizeof err) == -1 &&
	    model_parse_arch("mlp:3-0", ww, &nl, err, sizeof err) == -1 &&
	    model_parse_arch("mlp:3--4", ww, &nl, err, sizeof err) == -1 &&
	    model_parse_arch("mlp:3-99999999999999999999", ww, &nl, err,
	    sizeof err) == -1, "model.arch parsing refuses malformed values");
	model_free(&m);
}

/* ---- domain-adversarial training ---- */

#define ND 6

/* A net of F's layers followed by D's (the domain loss's path). */
static void
concat_nets(struct nn_net *out, const struct nn_net *a, const struct nn_net *b)
{
	memset(out, 0, sizeof *out);
	for (size_t l = 0; l < a->nlayers; l++)
		out->layer[out->nlayers++] = a->layer[l];
	for (size_t l = 0; l < b->nlayers; l++)
		out->layer[out->nlayers++] = b->layer[l];
}

/* A classifier 5-6-4-3 split into F (5-6-4) and H (4-3), and D 4-5-2,
 * in one parameter vector *param of *np values. */
static void
dann_setup(struct nn_model *m, struct nn_dann *d, float **param, size_t *np)
{
	static const size_t w[] = { 5, 6, 4, 3 }, dh[] = { 5 };

	if (model_init(m, w, 3) != 0 ||
	    nn_dann_init(d, &m->net, 2, dh, 1, m->nparam, np) != 0 ||
	    (*param = calloc(*np, sizeof **param)) == NULL)
		abort();
}

/* Every example's whole contribution (F, D, and H for source rows) at
 * weight wt[i] (NULL: 1) into c (ND x np), from the workspaces of the
 * last nn_dann_fwd_bwd. */
static void
dann_contribs(const struct nn_dann *d, const struct nn_dann_ws *ws,
    int labelled, size_t n, const double *wt, size_t np, double *c)
{
	memset(c, 0, n * np * sizeof *c);
	for (size_t i = 0; i < n; i++) {
		double w = wt ? wt[i] : 1;

		nn_clip_contrib(&d->feat, &ws->f, i, w, c + i * np);
		if (labelled)
			nn_clip_contrib(&d->head, &ws->h, i, w, c + i * np);
		nn_clip_contrib(&d->dom, &ws->d, i, w, c + i * np);
	}
}

static void
test_dann_gradients(void)
{
	struct nn_model m;
	struct nn_dann d;
	struct nn_dann_ws ws;
	struct nn_net ny, nd;
	struct rng *r = seeded("dann");
	float *param, x[ND * 5];
	int32_t y[ND];
	double lambda = 0.7, *p, *c, worst = 0, worst_norm = 0, rev = 0;
	double worst_loss = 0, ly, ld, kk;
	size_t np, checked = 0, skipped = 0, fend, dlo;

	dann_setup(&m, &d, &param, &np);
	fend = d.head.layer[0].off;
	dlo = d.dom.layer[0].off;
	concat_nets(&ny, &d.feat, &d.head);
	concat_nets(&nd, &d.feat, &d.dom);
	for (size_t j = 0; j < np; j++)
		param[j] = (float)unif(r, 1);
	p = calloc(np, sizeof *p);
	c = calloc(ND * np, sizeof *c);
	for (size_t j = 0; j < np; j++)
		p[j] = param[j];
	if (nn_dann_ws_init(&ws, &d, ND) != 0)
		abort();
	for (int dom = 0; dom < 2; dom++) {
		double sq[ND] = { 0 }, sly = 0, sld = 0;

		for (size_t i = 0; i < ND * 5; i++)
			x[i] = (float)unif(r, 1);
		for (size_t i = 0; i < ND; i++)
			y[i] = (int32_t)rng_uniform_below(r, 3);
		ly = nn_dann_fwd_bwd(&d, param, &ws, x, dom ? NULL : y, ND,
		    dom, lambda, &ld);
		nn_sqnorms(&d.feat, &ws.f, sq);
		if (!dom)
			nn_sqnorms(&d.head, &ws.h, sq);
		nn_sqnorms(&d.dom, &ws.d, sq);
		dann_contribs(&d, &ws, !dom, ND, NULL, np, c);
		for (size_t i = 0; i < ND; i++) {
			double xd[5], k1, k2, nrm = 0, *ci = c + i * np;

			for (size_t j = 0; j < np; j++)
				nrm += ci[j] * ci[j];
			if (fabs(nrm - sq[i]) / (1 + sq[i]) > worst_norm)
				worst_norm = fabs(nrm - sq[i]) / (1 + sq[i]);
			for (size_t j = 0; j < 5; j++)
				xd[j] = x[i * 5 + j];
			sly += ref_loss(&ny, p, xd, y[i], &k1);
			sld += ref_loss(&nd, p, xd, dom, &k2);
			if (k1 < 1e-3 || k2 < 1e-3) {
				skipped++;
				continue;
			}
			for (size_t j = 0; j < np; j++) {
				double sv = p[j], gy, gd, want;

				p[j] = sv + 1e-5;
				gy = ref_loss(&ny, p, xd, y[i], &kk);
				gd = ref_loss(&nd, p, xd, dom, &kk);
				p[j] = sv - 1e-5;
				gy -= ref_loss(&ny, p, xd, y[i], &kk);
				gd -= ref_loss(&nd, p, xd, dom, &kk);
				p[j] = sv;
				gy /= 2e-5;
				gd /= 2e-5;
				/* F: label gradient minus lambda times the domain
				 * gradient (the GRL); H: the label gradient of
				 * source rows only; D: the domain gradient. */
				if (j < fend) {
					want = (dom ? 0 : gy) - lambda * gd;
					if (fabs(lambda * gd) > rev)
						rev = fabs(lambda * gd);
				} else if (j < dlo) {
					want = dom ? 0 : gy;
				} else {
					want = gd;
				}
				if (fabs(ci[j] - want) / (1 + fabs(want)) > worst)
					worst = fabs(ci[j] - want) /
					    (1 + fabs(want));
				checked++;
			}
		}
		if (fabs(ly - (dom ? 0 : sly)) + fabs(ld - sld) > worst_loss)
			worst_loss = fabs(ly - (dom ? 0 : sly)) + fabs(ld - sld);
	}
	ok(skipped <= 3 && checked > 0 && worst <= 1e-4, "DANN: the "
	    "per-example gradients through the gradient reversal layer match "
	    "finite differences: F gets dLy - lambda dLd, H dLy, D dLd (worst "
	    "%.3g, %zu checked, %zu skipped)", worst, checked, skipped);
	ok(rev > 1e-2, "DANN: the reversed part is checked with power "
	    "(largest lambda dLd/dF %.3g; a wrong sign would be off by twice "
	    "that)", rev);
	ok(worst_norm <= 1e-5, "DANN: ghost norms over F, H and D equal the "
	    "norms of the materialised joint gradients (worst %.3g)",
	    worst_norm);
	ok(worst_loss <= 1e-4, "DANN: the label and domain losses are the "
	    "reference's (error %.3g)", worst_loss);
	ok(nn_grl_lambda(0, 2) == 0 &&
	    fabs(nn_grl_lambda(0.5, 1) - (2 / (1 + exp(-5.0)) - 1)) < 1e-15 &&
	    fabs(nn_grl_lambda(1, 2) - 2 * (2 / (1 + exp(-10.0)) - 1)) <
	    1e-15 && nn_grl_lambda(7, 1) < 1,
	    "Ganin's schedule: lambda_p = max (2 / (1 + exp(-10 p)) - 1)");
	{
		struct nn_dann bad;
		size_t e;
		ok(nn_dann_init(&bad, &m.net, 0, NULL, 0, 0, &e) == NN_E_RANGE &&
		    nn_dann_init(&bad, &m.net, 3, NULL, 0, 0, &e) ==
		    NN_E_RANGE, "nn_dann_init refuses a split with no feature "
		    "extractor or no head");
	}
	nn_dann_ws_free(&ws);
	model_free(&m);
	free(param);
	free(p);
	free(c);
	rng_free(r);
}

/* The clipped sum of a stream's rows over all the nets they reach. */
static void
dann_clipped_sum(const struct nn_clip *cp, const struct nn_dann *d,
    const float *param, struct nn_dann_ws *ws, float *x, const int32_t *y,
    size_t n, int dom, double *sum, size_t np, double *wt)
{
	double sq[NC] = { 0 };

	memset(sum, 0, np * sizeof *sum);
	nn_dann_fwd_bwd(d, param, ws, x, dom ? NULL : y, n, dom, 0.8, NULL);
	nn_sqnorms(&d->feat, &ws->f, sq);
	if (!dom)
		nn_sqnorms(&d->head, &ws->h, sq);
	nn_sqnorms(&d->dom, &ws->d, sq);
	nn_clip_weights(cp, sq, n, wt);
	if (nn_clip_sum(cp, &d->feat, &ws->f, wt, n, sum) != 0 ||
	    (!dom && nn_clip_sum(cp, &d->head, &ws->h, wt, n, sum) != 0) ||
	    nn_clip_sum(cp, &d->dom, &ws->d, wt, n, sum) != 0)
		abort();
}

static void
test_dann_clipping(void)
{
	static const double scale[NC] = { 1, 1, 1, 1e3, 30, 100, 1, 1, 1,
		-1e4, 1e-30, 3 };
	struct nn_model m;
	struct nn_dann d;
	struct nn_dann_ws ws;
	struct nn_clip cp;
	struct rng *r = seeded("dann clip");
	float *param, x[NC * 5], xc[NC * 5];
	int32_t y[NC];
	double C = 0.5, wt[NC], *c, *sum, *sum2, joint[2] = { 0 };
	double group[2] = { 0 }, sens[2] = { 0 };
	size_t np;

	dann_setup(&m, &d, &param, &np);
	nn_init_params(&m.net, param, r, 0);
	nn_init_params(&d.dom, param, r, 0);
	if (nn_dann_ws_init(&ws, &d, NC) != 0 ||
	    nn_clip_plan(&cp, C, NC, 100, NC) != 0)
		abort();
	c = calloc(NC * np, sizeof *c);
	sum = calloc(np, sizeof *sum);
	sum2 = calloc(np, sizeof *sum2);
	for (int dom = 0; dom < 2; dom++) {
		double sq[NC] = { 0 };
		const struct nn_net *nets[3] = { &d.feat, &d.dom, &d.head };
		const struct nn_ws *wss[3] = { &ws.f, &ws.d, &ws.h };

		for (size_t i = 0; i < NC; i++) {
			y[i] = (int32_t)rng_uniform_below(r, 3);
			for (size_t j = 0; j < 5; j++)
				x[i * 5 + j] = (float)(unif(r, 1) * scale[i]);
		}
		/* The sound rule: one norm over every net the example
		 * reaches. */
		memcpy(xc, x, sizeof x);
		nn_dann_fwd_bwd(&d, param, &ws, xc, dom ? NULL : y, NC, dom,
		    0.8, NULL);
		for (size_t k = 0; k < (dom ? 2u : 3u); k++)
			nn_sqnorms(nets[k], wss[k], sq);
		nn_clip_weights(&cp, sq, NC, wt);
		dann_contribs(&d, &ws, !dom, NC, wt, np, c);
		for (size_t i = 0; i < NC; i++)
			if (l2(c + i * np, np) > joint[dom])
				joint[dom] = l2(c + i * np, np);
		/* The paper's rule: each parameter group clipped to C by
		 * itself. */
		memset(c, 0, NC * np * sizeof *c);
		for (size_t k = 0; k < (dom ? 2u : 3u); k++) {
			double sqk[NC] = { 0 }, wk[NC];

			nn_sqnorms(nets[k], wss[k], sqk);
			nn_clip_weights(&cp, sqk, NC, wk);
			for (size_t i = 0; i < NC; i++)
				nn_clip_contrib(nets[k], wss[k], i, wk[i],
				    c + i * np);
		}
		for (size_t i = 0; i < NC; i++)
			if (l2(c + i * np, np) > group[dom])
				group[dom] = l2(c + i * np, np);
		/* Sensitivity of the whole clipped sum: the batch with and
		 * without each row. */
		for (size_t out = 0; out < NC; out++) {
			float xa[NC * 5], xb[NC * 5];
			int32_t ya[NC], yb[NC];
			double dd = 0;
			size_t k = 0;

			for (size_t i = 0; i < NC; i++) {
				memcpy(xa + 5 * i, x + 5 * i, 5 * sizeof *x);
				ya[i] = y[i];
				if (i != out) {
					memcpy(xb + 5 * k, x + 5 * i,
					    5 * sizeof *x);
					yb[k++] = y[i];
				}
			}
			dann_clipped_sum(&cp, &d, param, &ws, xa, ya, NC, dom,
			    sum, np, wt);
			dann_clipped_sum(&cp, &d, param, &ws, xb, yb, NC - 1,
			    dom, sum2, np, wt);
			for (size_t j = 0; j < np; j++)
				dd += (sum[j] - sum2[j]) * (sum[j] - sum2[j]);
			if (sqrt(dd) > sens[dom])
				sens[dom] = sqrt(dd);
		}
	}
	ok(joint[0] <= C && joint[0] > 0.9 * C && joint[1] <= C &&
	    joint[1] > 0.9 * C, "DANN with huge outliers: every source "
	    "example's joint contribution to F, H and D, and every target "
	    "example's to F and D, has norm <= C (largest %.17g and %.17g, "
	    "C = %g)", joint[0], joint[1], C);
	ok(sens[0] <= C && sens[1] <= C, "DANN: removing any one row moves "
	    "the clipped sum over all nets by at most C (%.17g, %.17g)",
	    sens[0], sens[1]);
	ok(group[0] > 1.2 * C && group[1] > 1.2 * C, "clipping each "
	    "parameter group to C by itself (paper 000) lets one example move "
	    "the sum by more than C (%.3g and %.3g): the joint rule is needed",
	    group[0], group[1]);
	nn_dann_ws_free(&ws);
	model_free(&m);
	free(param);
	free(c);
	free(sum);
	free(sum2);
	rng_free(r);
}

int
main(void)
{
	test_gradients();
	test_softmax();
	test_clipping();
	test_dann_gradients();
	test_dann_clipping();
	test_noise();
	test_poisson();
	test_zero_rows();
	test_optim();
	test_model();
	return tap_done();
}
