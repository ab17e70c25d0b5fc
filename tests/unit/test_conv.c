/*
 * Unit tests of the image layers (lib/ml/conv.c and their use in
 * lib/ml/nn.c): forward and backward of convolution, average and max
 * pooling, tanh, the tempered sigmoid and ReLU against central finite
 * differences of a
 * double-precision forward pass written here from the definitions in
 * conv.h (direct loops, no im2col); per-example gradient norms (direct
 * and ghost) against the materialised per-example gradients; the clipped
 * sum against the sum of the per-example contributions; the sensitivity
 * of the clipped sum; the clip plan with convolutions.
 *
 * Tolerances as in test_nn.c: f64 central differences with h = 1e-5
 * are accurate to about 1e-9, the f32 backward pass to about 1e-6
 * relative, so 1e-4 (1 + |fd|) separates rounding from a wrong formula.
 * Examples within 1e-4 of a ReLU kink or of a tie in a max-pool window
 * are skipped.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv.h"
#include "nn.h"
#include "rng.h"
#include "tap.h"

#define NB 16
#define H0 6
#define W0 6
#define C0 2
#define D0 (H0 * W0 * C0)
#define K 3

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 20261125, item) != 0)
		abort();
	return r;
}

static double
unif(struct rng *r, double a)
{
	return (2 * ldexp((double)(rng_u64(r) >> 11), -53) - 1) * a;
}

/* conv c4 k3 s1 p1 (T 36, kd 18: direct), group norm of 2 groups (it
 * takes the conv's activation), max 2 stride 1 (overlapping windows), conv
 * c8 k3 s2 (T 4, kd 36, co 8: ghost), avg 2, dense 5, dense 3. */
static const struct nn_spec spec[] = {
	{ NN_CONV, 4, 3, 1, 1 },
	{ NN_GROUPNORM, 2, 0, 0, 0 },
	{ NN_MAXPOOL, 0, 2, 1, 0 },
	{ NN_CONV, 8, 3, 2, 0 },
	{ NN_AVGPOOL, 0, 2, 0, 0 },
	{ NN_DENSE, 5, 0, 0, 0 },
	{ NN_DENSE, K, 0, 0, 0 },
};
#define NL (sizeof spec / sizeof spec[0])

/* ---- an independent f64 forward pass ---- */

static double
act(const struct nn_layer *L, double z, double *kink)
{
	if (L->act == NN_ACT_RELU) {
		if (fabs(z) < *kink)
			*kink = fabs(z);
		return z > 0 ? z : 0;
	}
	if (L->act == NN_ACT_TSIG)	/* s sigmoid(T z) - o */
		return L->ts[0] / (1 + exp(-(double)L->ts[1] * z)) - L->ts[2];
	return L->act == NN_ACT_TANH ? tanh(z) : z;
}

/* The loss of example x (D0 values) with label y; *kink receives the
 * smallest distance to a ReLU kink or a max-pool tie. */
static double
ref_loss(const struct nn_net *net, const double *p, const double *x, int y,
    double *kink)
{
	double a[512], z[512], m, s;
	size_t h = H0, w = W0, c = C0;

	*kink = INFINITY;
	memcpy(a, x, D0 * sizeof *a);
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		const struct conv_geom *g = &L->g;
		const double *W = p + L->off;

		if (L->kind == NN_CONV) {
			size_t kd = g->k * g->k * g->c;

			for (size_t ty = 0; ty < g->ho; ty++)
			for (size_t tx = 0; tx < g->wo; tx++)
			for (size_t o = 0; o < g->co; o++) {
				double v = W[kd * g->co + o];

				for (size_t ky = 0; ky < g->k; ky++)
				for (size_t kx = 0; kx < g->k; kx++)
				for (size_t ci = 0; ci < g->c; ci++) {
					long yy = (long)(ty * g->s + ky) -
					    (long)g->p;
					long xx = (long)(tx * g->s + kx) -
					    (long)g->p;

					if (yy < 0 || xx < 0 || yy >= (long)h ||
					    xx >= (long)w)
						continue;
					v += a[((size_t)yy * w + (size_t)xx) *
					    c + ci] * W[((ky * g->k + kx) *
					    g->c + ci) * g->co + o];
				}
				z[(ty * g->wo + tx) * g->co + o] = v;
			}
		} else if (L->kind == NN_GROUPNORM) {
			size_t cg = c / g->k;

			for (size_t q = 0; q < g->k; q++) {
				double mu = 0, var = 0, cnt = (double)(h * w *
				    cg);

				for (size_t pp = 0; pp < h * w; pp++)
					for (size_t j = 0; j < cg; j++)
						mu += a[pp * c + q * cg + j];
				mu /= cnt;
				for (size_t pp = 0; pp < h * w; pp++)
					for (size_t j = 0; j < cg; j++) {
						double d = a[pp * c + q * cg +
						    j] - mu;

						var += d * d;
					}
				var /= cnt;
				for (size_t pp = 0; pp < h * w; pp++)
					for (size_t j = 0; j < cg; j++) {
						size_t k = pp * c + q * cg + j;

						z[k] = W[q * cg + j] * (a[k] -
						    mu) / sqrt(var + 1e-5) +
						    W[c + q * cg + j];
					}
			}
		} else if (L->kind != NN_DENSE) {
			for (size_t ty = 0; ty < g->ho; ty++)
			for (size_t tx = 0; tx < g->wo; tx++)
			for (size_t ci = 0; ci < c; ci++) {
				double best = -INFINITY, second = -INFINITY;
				double sum = 0;

				for (size_t ky = 0; ky < g->k; ky++)
				for (size_t kx = 0; kx < g->k; kx++) {
					double v = a[((ty * g->s + ky) * w +
					    tx * g->s + kx) * c + ci];

					sum += v;
					if (v > best) {
						second = best;
						best = v;
					} else if (v > second) {
						second = v;
					}
				}
				/* A tie of ReLU zeros is harmless: every unit
				 * in it has derivative 0. */
				if (L->kind == NN_MAXPOOL && best - second <
				    *kink && best != 0)
					*kink = best - second;
				z[(ty * g->wo + tx) * c + ci] = L->kind ==
				    NN_MAXPOOL ? best : sum / (double)(g->k *
				    g->k);
			}
		} else {
			for (size_t k = 0; k < L->out; k++) {
				double v = W[L->in * L->out + k];

				for (size_t j = 0; j < L->in; j++)
					v += a[j] * W[j * L->out + k];
				z[k] = v;
			}
		}
		for (size_t k = 0; k < L->out; k++)
			a[k] = act(L, z[k], kink);
		if (L->kind != NN_DENSE) {
			h = g->ho;
			w = g->wo;
			c = g->co;
		}
	}
	m = a[0];
	for (size_t k = 1; k < K; k++)
		if (a[k] > m)
			m = a[k];
	s = 0;
	for (size_t k = 0; k < K; k++)
		s += exp(a[k] - m);
	return m + log(s) - a[y];
}

static double
l2(const double *x, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += x[i] * x[i];
	return sqrt(s);
}

/* Swap the convolutions' paths (conv 1 ghost, conv 2 direct)? */
static int swapped;

static void
build(struct nn_net *net, int a, size_t *np)
{
	if (nn_net_init_spec(net, H0, W0, C0, spec, NL, a, NN_ACT_IDENTITY, 0,
	    np) != 0)
		abort();
	/* Each path forced (the cost model may pick either for these small
	 * layers): direct for conv 1, ghost for conv 2, or swapped. */
	net->layer[0].path = swapped ? NN_PATH_GHOST : NN_PATH_DIRECT;
	net->layer[3].path = swapped ? NN_PATH_DIRECT : NN_PATH_GHOST;
	/* A tempered sigmoid that is not tanh (s 1.7, T 3, o 0.4). */
	if (a == NN_ACT_TSIG && nn_net_set_tsig(net, 1.7f, 3.0f, 0.4f) != 0)
		abort();
}

static void
test_geometry(void)
{
	struct conv_geom g;
	struct nn_net net;
	size_t np;
	static const struct nn_spec bad1[] = { { NN_CONV, 4, 7, 1, 0 },
		{ NN_DENSE, 2, 0, 0, 0 } };
	static const struct nn_spec bad2[] = { { NN_DENSE, 4, 0, 0, 0 },
		{ NN_CONV, 4, 1, 1, 0 }, { NN_DENSE, 2, 0, 0, 0 } };
	static const struct nn_spec bad3[] = { { NN_CONV, 4, 3, 1, 0 } };

	ok(conv_geom_init(&g, 28, 28, 1, 8, 2, 3, 16, 0) == 0 && g.ho == 14 &&
	    g.wo == 14 && g.co == 16, "28x28x1, k8 s2 p3: 14x14x16");
	ok(conv_geom_init(&g, 7, 7, 16, 2, 0, 0, 0, 1) == 0 && g.ho == 3 &&
	    g.s == 2 && g.co == 16, "pool 2 of 7x7x16: 3x3x16 (the last row "
	    "and column dropped)");
	ok(conv_geom_init(&g, 5, 5, 1, 3, 1, 3, 4, 0) != 0 &&
	    conv_geom_init(&g, 5, 5, 1, 3, 0, 0, 4, 0) != 0 &&
	    conv_geom_init(&g, 0, 5, 1, 3, 1, 0, 4, 0) != 0,
	    "padding >= k, stride 0 and empty images are refused");
	ok(nn_net_init_spec(&net, H0, W0, C0, bad1, 2, NN_ACT_RELU, 0, 0,
	    &np) != 0 && nn_net_init_spec(&net, H0, W0, C0, bad2, 3,
	    NN_ACT_RELU, 0, 0, &np) != 0 && nn_net_init_spec(&net, H0, W0, C0,
	    bad3, 1, NN_ACT_RELU, 0, 0, &np) != 0, "a kernel larger than the "
	    "image, an image layer after a dense one, and no dense last layer "
	    "are refused");
	build(&net, NN_ACT_RELU, &np);
	ok(np == 9 * 2 * 4 + 4 + 2 * 4 + 36 * 8 + 8 + 8 * 5 + 5 + 5 * 3 + 3 &&
	    net.layer[1].out == 144 && net.layer[2].out == 100 &&
	    net.layer[3].out == 32 && net.layer[4].out == 8 &&
	    nn_net_tmax(&net) == 4 && net.layer[0].act == NN_ACT_IDENTITY &&
	    net.layer[1].act == NN_ACT_RELU, "the test net has %zu "
	    "parameters, group norm 6x6x4 (with the conv's activation), "
	    "max-pool 5x5x4, conv 2x2x8, avg-pool 1x1x8, the ghost layer has "
	    "T = 4", np);
}

/* Gradients (per example, through nn_clip_contrib with weight 1) and
 * input gradients against finite differences; norms against the
 * materialised per-example gradients; the clipped sum against their sum. */
static void
test_grad(int a, const char *what)
{
	struct nn_net net;
	struct nn_ws ws;
	struct nn_clip cp;
	struct rng *r = seeded(what);
	size_t np, skipped = 0, checked = 0;
	float *param, x[NB * D0], xc[NB * D0], g[NB * K], gin[NB * D0];
	int32_t y[NB];
	double *p, *c, *tot, *sum, sq[NB] = { 0 }, wt[NB];
	double worst = 0, worst_in = 0, nlo = INFINITY, nhi = 0, serr = 0;

	build(&net, a, &np);
	param = calloc(np, sizeof *param);
	p = calloc(np, sizeof *p);
	c = calloc(np, sizeof *c);
	tot = calloc(np, sizeof *tot);
	sum = calloc(np, sizeof *sum);
	nn_init_params(&net, param, r, 0);
	for (size_t i = 0; i < np; i++) {
		param[i] += (float)unif(r, 0.1);
		p[i] = param[i];
	}
	for (size_t i = 0; i < NB * D0; i++)
		x[i] = (float)unif(r, 1);
	for (size_t i = 0; i < NB; i++)
		y[i] = (int32_t)rng_uniform_below(r, K);
	memcpy(xc, x, sizeof x);
	if (nn_ws_init(&ws, &net, NB) != 0)
		abort();
	nn_forward(&net, param, &ws, xc, NB);
	nn_softmax_xent(nn_output(&net, &ws), y, NB, K, g, NULL, NULL);
	nn_backward(&net, param, &ws, g, gin);
	nn_sqnorms(&net, &ws, sq);
	for (size_t i = 0; i < NB; i++) {
		double xd[D0], kink, n2;

		memset(c, 0, np * sizeof *c);
		nn_clip_contrib(&net, &ws, i, 1.0, c);
		n2 = l2(c, np) * l2(c, np);
		if (sq[i] / n2 < nlo)
			nlo = sq[i] / n2;
		if (sq[i] / n2 > nhi)
			nhi = sq[i] / n2;
		for (size_t j = 0; j < D0; j++)
			xd[j] = x[i * D0 + j];
		(void)ref_loss(&net, p, xd, y[i], &kink);
		if (kink < 1e-4) {
			skipped++;
			continue;
		}
		checked++;
		for (size_t j = 0; j < np; j++) {
			double sv = p[j], lp, lm, fd, kk;

			p[j] = sv + 1e-5;
			lp = ref_loss(&net, p, xd, y[i], &kk);
			p[j] = sv - 1e-5;
			lm = ref_loss(&net, p, xd, y[i], &kk);
			p[j] = sv;
			fd = (lp - lm) / 2e-5;
			if (fabs(fd - c[j]) / (1 + fabs(fd)) > worst)
				worst = fabs(fd - c[j]) / (1 + fabs(fd));
		}
		for (size_t j = 0; j < D0; j++) {
			double sv = xd[j], lp, lm, fd, kk;

			xd[j] = sv + 1e-5;
			lp = ref_loss(&net, p, xd, y[i], &kk);
			xd[j] = sv - 1e-5;
			lm = ref_loss(&net, p, xd, y[i], &kk);
			xd[j] = sv;
			fd = (lp - lm) / 2e-5;
			if (fabs(fd - gin[i * D0 + j]) / (1 + fabs(fd)) >
			    worst_in)
				worst_in = fabs(fd - gin[i * D0 + j]) /
				    (1 + fabs(fd));
		}
	}
	ok(checked >= 4 && worst < 1e-4, "%s: every parameter's gradient "
	    "(conv, pools, dense) matches finite differences of an f64 "
	    "reference (worst %.3g, %zu examples, %zu near a kink skipped)",
	    what, worst, checked, skipped);
	ok(checked >= 4 && worst_in < 1e-4, "%s: the input gradient "
	    "matches finite differences (worst %.3g)", what, worst_in);
	ok(nlo >= 1 - 1e-9 && nhi < 1 + 1e-3, "%s: the per-example squared "
	    "norms (direct for conv 1, ghost for conv 2) bound the "
	    "materialised gradients' from above, tightly (ratio %.9f..%.9f)",
	    what, nlo, nhi);
	/* The clipped sum with weights below 1 equals the sum of the
	 * contributions. */
	if (nn_clip_plan_conv(&cp, 0.05, NB, 100, NB, nn_net_tmax(&net)) != 0)
		abort();
	nn_clip_weights(&cp, sq, NB, wt);
	memset(tot, 0, np * sizeof *tot);
	for (size_t i = 0; i < NB; i++) {
		memset(c, 0, np * sizeof *c);
		nn_clip_contrib(&net, &ws, i, wt[i], c);
		ok(l2(c, np) <= 0.05, "%s: example %zu's clipped gradient has "
		    "norm %.6g <= C", what, i, l2(c, np));
		for (size_t j = 0; j < np; j++)
			tot[j] += c[j];
	}
	if (nn_clip_sum(&cp, &net, &ws, wt, NB, sum) != 0)
		abort();
	for (size_t j = 0; j < np; j++)
		if (fabs(sum[j] - tot[j]) > serr)
			serr = fabs(sum[j] - tot[j]);
	ok(serr < 1e-6, "%s: the clipped sum equals the sum of the clipped "
	    "per-example gradients (error %.3g)", what, serr);
	nn_ws_free(&ws);
	free(param);
	free(p);
	free(c);
	free(tot);
	free(sum);
	rng_free(r);
}

/* The clipped sum of a batch with and without each example moves by at
 * most C, with outliers; and the unclipped mode can exceed it. */
static void
test_sensitivity(void)
{
	static const double scale[NB] = { 1, 1e3, 1e6, 1, 1e-20, 30, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 0.1 };
	struct nn_net net;
	struct nn_ws ws;
	struct nn_clip cp;
	struct rng *r = seeded("sens");
	size_t np;
	float *param, x[NB * D0], xa[NB * D0], g[NB * K];
	int32_t y[NB], ya[NB];
	double *s1, *s2, sq[NB], wt[NB], C = 0.5, sens = 0, big = 0;

	build(&net, NN_ACT_RELU, &np);
	param = calloc(np, sizeof *param);
	s1 = calloc(np, sizeof *s1);
	s2 = calloc(np, sizeof *s2);
	nn_init_params(&net, param, r, 0);
	for (size_t i = 0; i < NB; i++) {
		y[i] = (int32_t)rng_uniform_below(r, K);
		for (size_t j = 0; j < D0; j++)
			x[i * D0 + j] = (float)(unif(r, 1) * scale[i]);
	}
	if (nn_ws_init(&ws, &net, NB) != 0 ||
	    nn_clip_plan_conv(&cp, C, NB, 100, NB, nn_net_tmax(&net)) != 0)
		abort();
	{
		struct nn_clip dense;

		if (nn_clip_plan(&dense, C, NB, 100, NB) != 0)
			abort();
		ok(cp.margin > dense.margin && cp.margin < dense.margin + 1e-6,
		    "the convolutions add %.3g to the dense plan's margin "
		    "%.3g for 100 records", cp.margin - dense.margin,
		    dense.margin);
	}
	for (int unclipped = 0; unclipped < 2; unclipped++) {
		cp.unclipped = unclipped;
		for (size_t out = 0; out <= NB; out++) {
			double d = 0;

			for (int pass = 0; pass < 2; pass++) {
				size_t k = 0;
				double *s = pass ? s2 : s1;

				for (size_t i = 0; i < NB; i++) {
					if (pass && i == out)
						continue;
					memcpy(xa + k * D0, x + i * D0,
					    D0 * sizeof *x);
					ya[k++] = y[i];
				}
				memset(s, 0, np * sizeof *s);
				memset(sq, 0, sizeof sq);
				nn_forward(&net, param, &ws, xa, k);
				nn_softmax_xent(nn_output(&net, &ws), ya, k, K,
				    g, NULL, NULL);
				nn_backward(&net, param, &ws, g, NULL);
				nn_sqnorms(&net, &ws, sq);
				nn_clip_weights(&cp, sq, k, wt);
				if (nn_clip_sum(&cp, &net, &ws, wt, k, s) != 0)
					abort();
			}
			for (size_t j = 0; j < np; j++)
				d += (s1[j] - s2[j]) * (s1[j] - s2[j]);
			if (!unclipped && sqrt(d) > sens)
				sens = sqrt(d);
			if (unclipped && sqrt(d) > big)
				big = sqrt(d);
		}
	}
	ok(sens <= C && sens > 0.5 * C, "removing any one example moves the "
	    "clipped sum by at most C (largest %.17g)", sens);
	ok(big > 10 * C, "without clipping an outlier moves it by %.3g: the "
	    "check above can fail", big);
	{
		struct nn_clip dense;

		ok(nn_clip_plan_conv(&cp, 1, 256, 60000, 256, 196) == 0 &&
		    nn_clip_plan(&dense, 1, 256, 60000, 256) == 0 &&
		    cp.margin < 0.008 && cp.margin - dense.margin < 1e-3,
		    "batch 256 of 60000, T 196: margin %.3g (dense %.3g)",
		    cp.margin, dense.margin);
	}
	nn_ws_free(&ws);
	free(param);
	free(s1);
	free(s2);
	rng_free(r);
}

/* Pooling of 11 channels (a block of 8 and a tail of 3 in conv.c) with
 * overlapping windows and ties, against loops written here. */
static void
test_pool(void)
{
	struct conv_geom g;
	struct rng *r = seeded("pool");
	float x[2 * 7 * 6 * 11], y[2 * 5 * 4 * 11];
	uint32_t arg[2 * 5 * 4 * 11];
	size_t bad = 0, c = 11, in = 7 * 6 * 11, out = 5 * 4 * 11;

	if (conv_geom_init(&g, 7, 6, c, 3, 1, 0, 0, 1) != 0)
		abort();
	/* Values on a grid of 5: many ties. */
	for (size_t k = 0; k < 2 * in; k++)
		x[k] = (float)floor(unif(r, 2.5));
	for (int max = 0; max < 2; max++) {
		conv_pool_fwd(&g, max, x, 2, y, max ? arg : NULL);
		for (size_t i = 0; i < 2; i++)
			for (size_t t = 0; t < 20; t++)
				for (size_t j = 0; j < c; j++) {
					size_t ty = t / 4, tx = t % 4, at = 0;
					double m = -INFINITY, sum = 0;

					for (size_t ky = 0; ky < 3; ky++)
						for (size_t kx = 0; kx < 3; kx++) {
							size_t q = ((ty + ky) * 6 +
							    tx + kx) * c + j;

							sum += x[i * in + q];
							if (x[i * in + q] > m) {
								m = x[i * in + q];
								at = q;
							}
						}
					if (max ? y[i * out + t * c + j] != m ||
					    arg[i * out + t * c + j] != at :
					    fabs(y[i * out + t * c + j] - sum /
					    9) > 1e-6)
						bad++;
				}
	}
	ok(bad == 0, "max and average pooling of 11 channels (3x3 windows "
	    "at stride 1, ties) equal direct loops: %zu differ", bad);
	rng_free(r);
}

/* The image layers' tanh (and a tanh(b x) + c, the tempered sigmoid)
 * against libm's tanh and exp in double, on every 2^-10 from -12 to 12,
 * tiny values, and the specials. */
static void
test_tanh_fast(void)
{
	size_t n = 24 * 1024 + 1 + 6;
	float *z = malloc(n * sizeof *z), *u = malloc(n * sizeof *u);
	double abs_err = 0, rel_err = 0, sig_err = 0;

	if (z == NULL || u == NULL)
		abort();
	for (size_t k = 0; k + 6 < n; k++)
		z[k] = (float)ldexp((double)k, -10) - 12.0f;
	z[n - 6] = 1e-30f;
	z[n - 5] = -3e-4f;
	z[n - 4] = 1e-38f;
	z[n - 3] = INFINITY;
	z[n - 2] = -INFINITY;
	z[n - 1] = NAN;
	memcpy(u, z, n * sizeof *z);
	nn_tanh_fast(z, n, 1.0f, 1.0f, 0.0f);
	/* s sigmoid(T x) - o with s 3, T 1.5, o 0.5 */
	nn_tanh_fast(u, n, 1.5f, 0.75f, 1.0f);
	for (size_t k = 0; k + 3 < n; k++) {
		double x = k + 6 < n ? ldexp((double)k, -10) - 12 :
		    k == n - 6 ? 1e-30 : k == n - 5 ? -3e-4 : 1e-38;
		double t = tanh((double)(float)x), e = fabs(z[k] - t);
		double sg = 3 / (1 + exp(-1.5 * (double)(float)x)) - 0.5;

		abs_err = e > abs_err ? e : abs_err;
		if (t != 0 && e / fabs(t) > rel_err)
			rel_err = e / fabs(t);
		if (fabs(u[k] - sg) > sig_err)
			sig_err = fabs(u[k] - sg);
	}
	ok(abs_err < 5e-7 && rel_err < 5e-7, "fast tanh within %.3g absolute, "
	    "%.3g relative of tanh on [-12, 12] and tiny values", abs_err,
	    rel_err);
	ok(sig_err < 3e-6, "3 sigmoid(1.5 x) - 0.5 as 1.5 tanh(0.75 x) + 1 "
	    "within %.3g", sig_err);
	ok(z[n - 3] == 1.0f && z[n - 2] == -1.0f && isnan(z[n - 1]),
	    "fast tanh: +-inf give +-1, NaN stays NaN");
	free(z);
	free(u);
}

/* im2col against the definition in conv.h, and col2im as its adjoint
 * (<im2col x, u> = <x, col2im u>), with padding on every side, a stride,
 * a kernel row cut by the padding and channels 1 and 3. */
static void
test_im2col(void)
{
	static const size_t geo[][6] = {	/* h w c k s p */
		{ 7, 6, 3, 4, 2, 2 }, { 9, 9, 1, 8, 2, 3 }, { 5, 8, 3, 3, 1, 1 },
		{ 10, 9, 2, 3, 3, 0 },	/* rows and columns no patch covers */
	};
	struct rng *r = seeded("im2col");

	for (size_t e = 0; e < sizeof geo / sizeof geo[0]; e++) {
		const size_t *q = geo[e];
		struct conv_geom g;
		size_t n = 2, in, T, kd, bad = 0;
		float *x, *col, *u, *xu;
		double lhs = 0, rhs = 0;

		if (conv_geom_init(&g, q[0], q[1], q[2], q[3], q[4], q[5], 2,
		    0) != 0)
			abort();
		in = q[0] * q[1] * q[2];
		T = conv_positions(&g);
		kd = conv_kd(&g);
		x = malloc(n * in * sizeof *x);
		xu = malloc(n * in * sizeof *x);
		col = malloc(n * T * kd * sizeof *col);
		u = malloc(n * T * kd * sizeof *col);
		if (x == NULL || xu == NULL || col == NULL || u == NULL)
			abort();
		for (size_t k = 0; k < n * in; k++)
			x[k] = (float)unif(r, 1);
		for (size_t k = 0; k < n * T * kd; k++)
			u[k] = (float)unif(r, 1);
		conv_im2col(&g, x, n, col);
		conv_col2im(&g, u, n, xu);
		for (size_t i = 0; i < n; i++)
			for (size_t t = 0; t < T; t++)
				for (size_t j = 0; j < kd; j++) {
					long yy = (long)((t / g.wo) * g.s) -
					    (long)g.p + (long)(j / (g.k * g.c));
					long xx = (long)((t % g.wo) * g.s) -
					    (long)g.p + (long)(j / g.c % g.k);
					size_t ci = j % g.c, k = (i * T + t) * kd + j;
					float want = yy < 0 || xx < 0 ||
					    yy >= (long)g.h || xx >= (long)g.w ?
					    0.0f : x[i * in + ((size_t)yy * g.w +
					    (size_t)xx) * g.c + ci];

					bad += col[k] != want;
					lhs += (double)col[k] * u[k];
				}
		for (size_t k = 0; k < n * in; k++)
			rhs += (double)x[k] * xu[k];
		for (size_t i = 0; i < n; i++) {
			double a2 = 0, f = conv_unfold_sqnorm(&g, x + i * in);

			for (size_t k = 0; k < T * kd; k++)
				a2 += (double)col[i * T * kd + k] *
				    col[i * T * kd + k];
			ok(fabs(f - a2) <= 1e-13 * a2, "im2col %zux%zux%zu k%zu "
			    "s%zu p%zu: example %zu's unfolded squared norm from "
			    "the image %.17g, unfolded %.17g", q[0], q[1], q[2],
			    q[3], q[4], q[5], i, f, a2);
		}
		ok(bad == 0 && fabs(lhs - rhs) <= 1e-5 * (1 + fabs(lhs)),
		    "im2col %zux%zux%zu k%zu s%zu p%zu: %zu entries differ "
		    "from the definition; <A x, u> %.9g, <x, A^T u> %.9g",
		    q[0], q[1], q[2], q[3], q[4], q[5], bad, lhs, rhs);
		free(x);
		free(xu);
		free(col);
		free(u);
	}
	rng_free(r);
}

/* The cost model's choices (nn_conv_ghost), as measured (nn.c): both of
 * the Tramer-Boneh CNN's convolutions direct (conv 2, T 25, was ghost by
 * flops alone and is faster direct: tests/bench/cnn.sh), T 9 and one
 * position with a large kernel ghost, a gradient above NN_CONV_DIRECT_MAX ghost whatever the cost,
 * and the path field overriding. */
static void
test_cost(void)
{
	static const struct nn_spec tb[] = { { NN_CONV, 16, 8, 2, 3 },
		{ NN_MAXPOOL, 0, 2, 1, 0 }, { NN_CONV, 32, 4, 2, 0 },
		{ NN_MAXPOOL, 0, 2, 1, 0 }, { NN_DENSE, 32, 0, 0, 0 },
		{ NN_DENSE, 10, 0, 0, 0 } };
	static const struct nn_spec one[] = { { NN_CONV, 64, 4, 1, 0 },
		{ NN_DENSE, 2, 0, 0, 0 } };
	static const struct nn_spec t9[] = { { NN_CONV, 64, 3, 2, 0 },
		{ NN_DENSE, 2, 0, 0, 0 } };
	static const struct nn_spec big[] = { { NN_CONV, 128, 3, 1, 1 },
		{ NN_DENSE, 2, 0, 0, 0 } };
	struct nn_net net;
	size_t np;

	if (nn_net_init_spec(&net, 28, 28, 1, tb, 6, NN_ACT_TANH,
	    NN_ACT_IDENTITY, 0, &np) != 0)
		abort();
	ok(conv_positions(&net.layer[0].g) == 196 &&
	    conv_positions(&net.layer[2].g) == 25 &&
	    !nn_conv_ghost(&net.layer[0]) && !nn_conv_ghost(&net.layer[2]) &&
	    nn_net_tmax(&net) == 0, "Tramer-Boneh CNN: conv 1 (T 196) and "
	    "conv 2 (T 25) take direct norms");
	net.layer[2].path = NN_PATH_GHOST;
	ok(nn_conv_ghost(&net.layer[2]) && nn_net_tmax(&net) == 25,
	    "forced ghost, conv 2 counts in tmax");
	if (nn_net_init_spec(&net, 4, 4, 32, one, 2, NN_ACT_TANH,
	    NN_ACT_IDENTITY, 0, &np) != 0)
		abort();
	ok(nn_conv_ghost(&net.layer[0]), "T 1, kd 512, co 64: ghost");
	net.layer[0].path = NN_PATH_DIRECT;
	ok(!nn_conv_ghost(&net.layer[0]), "forced direct");
	if (nn_net_init_spec(&net, 7, 7, 16, t9, 2, NN_ACT_TANH,
	    NN_ACT_IDENTITY, 0, &np) != 0)
		abort();
	ok(conv_positions(&net.layer[0].g) == 9 && nn_conv_ghost(&net.layer[0]),
	    "T 9, kd 144, co 64: ghost (measured 10%% faster than direct)");
	if (nn_net_init_spec(&net, 8, 8, 64, big, 2, NN_ACT_TANH,
	    NN_ACT_IDENTITY, 0, &np) != 0)
		abort();
	ok(conv_kd(&net.layer[0].g) * 128 > NN_CONV_DIRECT_MAX &&
	    nn_conv_ghost(&net.layer[0]), "T 64, kd 576, co 128: above the "
	    "memory cap, ghost");
}

int
main(void)
{
	test_geometry();
	test_im2col();
	test_pool();
	test_tanh_fast();
	test_grad(NN_ACT_RELU, "relu");
	test_grad(NN_ACT_TANH, "tanh");
	test_grad(NN_ACT_TSIG, "tsigmoid:1.7:3:0.4");
	test_sensitivity();
	swapped = 1;		/* conv 1 ghost (T 36), conv 2 direct */
	test_grad(NN_ACT_TANH, "tanh, paths swapped");
	test_sensitivity();
	test_cost();
	return tap_done();
}
