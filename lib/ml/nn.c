/* nn.c: dense networks and the DP-SGD mechanism (see nn.h). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fpsum.h"
#include "la.h"
#include "nn.h"
#include "noise.h"
#include "noise_fast.h"
#include "simd.h"

const char *
nn_strerror(int code)
{
	switch (code) {
	case NN_OK:
		return "success";
	case NN_E_RANGE:
		return "argument out of range";
	case NN_E_NOMEM:
		return "out of memory";
	case NN_E_NOISE:
		return "the noise sampler failed";
	default:
		return "unknown error";
	}
}

/* ---- nets ---- */

size_t
nn_layer_params(const struct nn_layer *l)
{
	if (l->kind == NN_CONV)
		return conv_kd(&l->g) * l->g.co + l->g.co;
	if (l->kind == NN_GROUPNORM)
		return 2 * l->g.c;
	if (l->kind != NN_DENSE)
		return 0;
	return l->in * l->out + l->out;
}

void
nn_layer_wdims(const struct nn_layer *l, size_t *rows, size_t *cols)
{
	if (l->kind == NN_CONV) {
		*rows = conv_kd(&l->g);
		*cols = l->g.co;
	} else if (l->kind == NN_DENSE) {
		*rows = l->in;
		*cols = l->out;
	} else if (l->kind == NN_GROUPNORM) {
		*rows = 1;
		*cols = l->g.c;
	} else {
		*rows = *cols = 0;
	}
}

/*
 * Does convolution L take its norms by the ghost identity?  By the cost
 * of the whole DP step per example, in units of one SGEMM flop, with
 * streaming a float or double through memory (a pass outside a GEMM:
 * sums of squares, conversions, additions into a double sum) counted as
 * NN_COST_MEM of them and a DGEMM flop as two (half the SIMD lanes):
 *
 *   direct: 2 T kd co (the per-example SGEMM) + 3 M kd co (its gradient
 *     written, its squares summed, added into the clipped sum);
 *   ghost:  2 T^2 (kd + co) (the two Gram SGEMMs) + 2 T^2 (their double
 *     product) + 2 M T (kd + co) (A and G converted to double) + 4 T kd
 *     co (the clipped sum's DGEMM, which direct layers do not need).
 *
 * M = 12 fits measured DP CPU time per example (one thread, batch 256,
 * Fashion-MNIST, tests/bench/cnn.sh's settings; forced paths, ghost less
 * direct, measured / modelled at 1 unit = 1/30 ns): the Tramer-Boneh
 * CNN's conv 2 (T 25, kd 256, co 32; ghost by flops alone) +23 us /
 * +648k, so direct (DP 1.27x faster); c64k3s2 on 7x7x16 (T 9, kd 144,
 * co 64) -2.8 us / -87k and c64k4s3 (T 4, kd 256) -12 us / -418k, so
 * ghost; c64k7 on 7x7x16 (T 1, kd 784) -35 us / -1.6M, ghost (2.6x).
 * Ghost wins at few positions and large kd co (the direct gradient's
 * memory passes), and whenever the direct gradient would exceed
 * NN_CONV_DIRECT_MAX floats an example (its memory is what ghost
 * clipping exists to save).  L->path overrides (tests).
 */
#define NN_COST_MEM 12.0

int
nn_conv_ghost(const struct nn_layer *L)
{
	double T = (double)conv_positions(&L->g), kd = (double)conv_kd(&L->g);
	double co = (double)L->g.co, M = NN_COST_MEM, direct, ghost;

	if (L->path != NN_PATH_AUTO)
		return L->path == NN_PATH_GHOST;
	if (kd * co > (double)NN_CONV_DIRECT_MAX)
		return 1;
	direct = 2 * T * kd * co + 3 * M * kd * co;
	ghost = 2 * T * T * (kd + co) + 2 * T * T + 2 * M * T * (kd + co) +
	    4 * T * kd * co;
	return ghost < direct;
}

size_t
nn_net_tmax(const struct nn_net *net)
{
	size_t t = 0;

	for (size_t l = 0; l < net->nlayers; l++)
		if (net->layer[l].kind == NN_CONV &&
		    nn_conv_ghost(&net->layer[l]) &&
		    conv_positions(&net->layer[l].g) > t)
			t = conv_positions(&net->layer[l].g);
	return t;
}

/* Is l an image layer with parameters? */
#define IS_CONV(L) ((L)->kind == NN_CONV)
/* Has l no parameters (a pool)? */
#define IS_POOL(L) ((L)->kind == NN_AVGPOOL || (L)->kind == NN_MAXPOOL)
#define IS_GN(L) ((L)->kind == NN_GROUPNORM)

int
nn_net_init_spec(struct nn_net *net, size_t h, size_t w, size_t c,
    const struct nn_spec *sp, size_t n, int act, int act_last, size_t off,
    size_t *end)
{
	size_t flat = 0;

	memset(net, 0, sizeof *net);
	if (n == 0 || n > NN_MAX_LAYERS || sp[n - 1].kind != NN_DENSE)
		return NN_E_RANGE;
	for (size_t l = 0; l < n; l++) {
		struct nn_layer *L = &net->layer[l];
		size_t np;

		L->kind = sp[l].kind;
		if (sp[l].kind == NN_DENSE) {
			if (flat == 0)
				flat = h * w * c;
			if (sp[l].out == 0 || sp[l].out > NN_MAX_WIDTH ||
			    flat > NN_MAX_WIDTH)
				return NN_E_RANGE;
			L->in = flat;
			L->out = flat = sp[l].out;
		} else if (sp[l].kind == NN_GROUPNORM) {
			if (flat != 0 || sp[l].out == 0 || c % sp[l].out != 0 ||
			    h * w * c > NN_MAX_WIDTH)
				return NN_E_RANGE;
			L->g = (struct conv_geom){ h, w, c, sp[l].out, 1, 0,
			    h, w, c };
			L->in = L->out = h * w * c;
		} else {
			if (flat != 0 || conv_geom_init(&L->g, h, w, c,
			    sp[l].k, sp[l].s, sp[l].p, sp[l].out,
			    sp[l].kind != NN_CONV) != 0)
				return NN_E_RANGE;
			L->in = h * w * c;
			h = L->g.ho;
			w = L->g.wo;
			c = L->g.co;
			L->out = h * w * c;
			if (L->in > NN_MAX_WIDTH || L->out > NN_MAX_WIDTH)
				return NN_E_RANGE;
		}
		L->act = l + 1 == n ? act_last : IS_POOL(L) ?
		    NN_ACT_IDENTITY : act;
		L->ts[0] = L->ts[1] = 2.0f;	/* tanh until set */
		L->ts[2] = 1.0f;
		L->off = off;
		np = nn_layer_params(L);
		if (off > SIZE_MAX - np)
			return NN_E_RANGE;
		off += np;
	}
	/* A group norm after a convolution takes its activation. */
	for (size_t l = 0; l + 1 < n; l++)
		if (IS_CONV(&net->layer[l]) && IS_GN(&net->layer[l + 1]))
			net->layer[l].act = NN_ACT_IDENTITY;
	net->nlayers = n;
	if (end != NULL)
		*end = off;
	return 0;
}

int
nn_net_set_tsig(struct nn_net *net, float s, float t, float o)
{
	if (!(s > 0 && s <= NN_TSIG_MAX && t > 0 && t <= NN_TSIG_MAX &&
	    o >= -NN_TSIG_MAX && o <= NN_TSIG_MAX))
		return NN_E_RANGE;
	for (size_t l = 0; l < net->nlayers; l++)
		if (net->layer[l].act == NN_ACT_TSIG) {
			net->layer[l].ts[0] = s;
			net->layer[l].ts[1] = t;
			net->layer[l].ts[2] = o;
		}
	return 0;
}

int
nn_net_init(struct nn_net *net, const size_t *w, size_t nlayers,
    int act_last, size_t off, size_t *end)
{
	memset(net, 0, sizeof *net);
	if (nlayers == 0 || nlayers > NN_MAX_LAYERS)
		return NN_E_RANGE;
	for (size_t l = 0; l <= nlayers; l++)
		if (w[l] == 0 || w[l] > NN_MAX_WIDTH)
			return NN_E_RANGE;
	for (size_t l = 0; l < nlayers; l++) {
		struct nn_layer *L = &net->layer[l];
		size_t np;

		L->in = w[l];
		L->out = w[l + 1];
		L->act = l + 1 < nlayers ? NN_ACT_RELU : act_last;
		L->off = off;
		/* Widths are below 2^24, so in * out + out < 2^49 fits;
		 * the running offset is checked. */
		np = nn_layer_params(L);
		if (off > SIZE_MAX - np)
			return NN_E_RANGE;
		off += np;
	}
	net->nlayers = nlayers;
	if (end != NULL)
		*end = off;
	return 0;
}

size_t
nn_first_trained(const struct nn_net *net)
{
	size_t l = 0;

	while (l < net->nlayers && net->layer[l].frozen)
		l++;
	return l;
}

size_t
nn_trained_params(const struct nn_net *net)
{
	size_t n = 0;

	for (size_t l = 0; l < net->nlayers; l++)
		if (!net->layer[l].frozen)
			n += nn_layer_params(&net->layer[l]);
	return n;
}

void
nn_init_params(const struct nn_net *net, float *param, struct rng *r,
    int zero)
{
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		float *W = param + L->off;
		size_t fi, fo, nw;
		double a;

		nn_layer_wdims(L, &fi, &fo);
		nw = fi * fo;
		if (nw == 0)
			continue;
		if (IS_GN(L)) {		/* gamma 1, beta 0 */
			for (size_t j = 0; j < fo; j++) {
				W[j] = 1.0f;
				W[fo + j] = 0.0f;
			}
			continue;
		}
		a = L->act == NN_ACT_RELU ? sqrt(6.0 / (double)fi) :
		    sqrt(6.0 / (double)(fi + fo));

		for (size_t i = 0; i < nw; i++) {
			/* 24 uniform bits: u in [0, 1), exactly. */
			double u = ldexp((double)(rng_u64(r) >> 40), -24);
			W[i] = zero ? 0.0f : (float)((2 * u - 1) * a);
		}
		memset(W + nw, 0, fo * sizeof *W);
	}
}

/* ---- workspace ---- */

/* The convolutions' buffers: each one's unfolded input, one input
 * gradient scratch and one norm scratch of the largest (every size is
 * checked against overflow). */
static int
conv_ws_init(struct nn_ws *ws, const struct nn_net *net, size_t cap)
{
	size_t total = 0, dmax = 0, smax = 0, image = 0, pb = 0;

	for (size_t l = 0; l < net->nlayers; l++)
		image += net->layer[l].kind != NN_DENSE;
	if (image == 0)
		return 0;
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		size_t T, kd, c;

		if (IS_GN(L)) {		/* xhat, rstd; 2c doubles a row */
			total += cap * L->in + cap * L->g.k;
			pb += cap * 2 * L->g.c;
			continue;
		}
		if (!IS_CONV(L))
			continue;
		T = conv_positions(&L->g);
		kd = conv_kd(&L->g);
		c = L->g.co;
		if (T > SIZE_MAX / 8 / kd / cap || kd > SIZE_MAX / 8 / c ||
		    T > SIZE_MAX / 8 / T)
			return NN_E_NOMEM;
		if (cap * T * kd > dmax)
			dmax = cap * T * kd;
		if (kd * c > smax)
			smax = kd * c;
		if (2 * T * T > smax)
			smax = 2 * T * T;
		if (total > SIZE_MAX / 8 - cap * T * kd - cap * kd * c)
			return NN_E_NOMEM;
		total += cap * T * kd;
		if (!nn_conv_ghost(L)) {
			total += cap * kd * c;
			pb += cap * c;
		}
	}
	if (total > SIZE_MAX / 8 - dmax - smax)
		return NN_E_NOMEM;
	if ((ws->cbuf = malloc((total + dmax + smax + 1) * sizeof(float))) ==
	    NULL)
		return NN_E_NOMEM;
	total = 0;
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];

		if (IS_GN(L)) {
			ws->col[l] = ws->cbuf + total;
			total += cap * L->in;
			ws->rstd[l] = ws->cbuf + total;
			total += cap * L->g.k;
			continue;
		}
		if (!IS_CONV(L))
			continue;
		ws->col[l] = ws->cbuf + total;
		total += cap * conv_positions(&L->g) * conv_kd(&L->g);
		if (!nn_conv_ghost(L)) {
			ws->pex[l] = ws->cbuf + total;
			total += cap * conv_kd(&L->g) * L->g.co;
		}
	}
	ws->dcol = ws->cbuf + total;
	if (pb > 0) {
		if ((ws->pbuf = malloc(pb * sizeof *ws->pbuf)) == NULL)
			return NN_E_NOMEM;
		pb = 0;
		for (size_t l = 0; l < net->nlayers; l++)
			if (IS_GN(&net->layer[l])) {
				ws->pexb[l] = ws->pbuf + pb;
				pb += cap * 2 * net->layer[l].g.c;
			} else if (IS_CONV(&net->layer[l]) &&
			    !nn_conv_ghost(&net->layer[l])) {
				ws->pexb[l] = ws->pbuf + pb;
				pb += cap * net->layer[l].g.co;
			}
	}
	ws->nscr = ws->dcol + dmax;
	/* The max pools' indices (out < 2^24 per row, cap bounded by
	 * nn_ws_init). */
	total = 0;
	for (size_t l = 0; l < net->nlayers; l++)
		if (net->layer[l].kind == NN_MAXPOOL)
			total += cap * net->layer[l].out;
	if (total == 0)
		return 0;
	if ((ws->abuf = malloc(total * sizeof *ws->abuf)) == NULL)
		return NN_E_NOMEM;
	total = 0;
	for (size_t l = 0; l < net->nlayers; l++)
		if (net->layer[l].kind == NN_MAXPOOL) {
			ws->arg[l] = ws->abuf + total;
			total += cap * net->layer[l].out;
		}
	return 0;
}

int
nn_ws_init(struct nn_ws *ws, const struct nn_net *net, size_t cap)
{
	size_t total = 0, big = 0;

	memset(ws, 0, sizeof *ws);
	if (cap == 0 || cap > SIZE_MAX / 2 / NN_MAX_WIDTH / sizeof(float))
		return NN_E_NOMEM;
	/* Activations and gradients of every layer, plus the largest W for
	 * the f32 clipped sums.  Each term is below cap * 2^24 floats. */
	for (size_t l = 0; l < net->nlayers; l++) {
		size_t w, r, c;

		nn_layer_wdims(&net->layer[l], &r, &c);
		w = r * c;
		if (total > SIZE_MAX / sizeof(float) / 4 - 2 * cap *
		    net->layer[l].out)
			return NN_E_NOMEM;
		total += 2 * cap * net->layer[l].out;
		if (w > big)
			big = w;
	}
	if (total > SIZE_MAX / sizeof(float) / 2 - big)
		return NN_E_NOMEM;
	total += big;
	if ((ws->buf = malloc(total * sizeof(float))) == NULL)
		return NN_E_NOMEM;
	total = 0;
	for (size_t l = 0; l < net->nlayers; l++) {
		ws->a[l + 1] = ws->buf + total;
		total += cap * net->layer[l].out;
		ws->g[l] = ws->buf + total;
		total += cap * net->layer[l].out;
	}
	ws->sum32 = ws->buf + total;
	ws->cap = cap;
	ws->nlayers = net->nlayers;
	if (conv_ws_init(ws, net, cap) != 0) {
		nn_ws_free(ws);
		return NN_E_NOMEM;
	}
	return 0;
}

void
nn_ws_free(struct nn_ws *ws)
{
	if (ws == NULL)
		return;
	free(ws->buf);
	free(ws->cbuf);
	free(ws->abuf);
	free(ws->pbuf);
	free(ws->sum64);
	memset(ws, 0, sizeof *ws);
}

/* ---- forward, loss, backward ---- */

/*
 * Element-wise loops work on blocks of 8 copied into local arrays: in
 * that form GCC's -O2 vectoriser (which refuses loops needing an
 * epilogue or a branch) turns them into SIMD compares and masks; the
 * scalar tail handles the rest.  The results are the same either way.
 */
#define VB 8

/* z <- act(z + b) for one row of len values. */
static void
bias_act(float *z, const float *b, size_t len, int relu)
{
	size_t k = 0;

	for (; k + VB <= len; k += VB) {
		float v[VB], c[VB];

		memcpy(v, z + k, sizeof v);
		memcpy(c, b + k, sizeof c);
		for (size_t j = 0; j < VB; j++) {
			v[j] += c[j];
			if (relu)
				v[j] = v[j] > 0.0f ? v[j] : 0.0f;
		}
		memcpy(z + k, v, sizeof v);
	}
	for (; k < len; k++) {
		float v = z[k] + b[k];
		z[k] = relu && !(v > 0.0f) ? 0.0f : v;
	}
}

/* z <- tanh(z). */
static void
act_tanh(float *z, size_t len)
{
	for (size_t k = 0; k < len; k++)
		z[k] = tanhf(z[k]);
}

/*
 * The image layers' tanh: Eigen's rational approximation (its float
 * generic_fast_tanh: x P(x^2) / Q(x^2), P of degree 6 and Q of degree 3
 * in x^2, x clamped to +-7.90531110763549805; without Eigen's tanh x = x
 * below 0.0004: x (P/Q) keeps tiny x within an ulp), within 3e-7
 * absolute and relative of tanh (tests/unit/test_conv.c checks it
 * against libm's tanh in double on a grid).  Unlike libm's tanhf it has
 * no branch or call, so GCC's -O2 vectoriser runs it VB wide; a
 * convolution's T co outputs per example made tanhf a quarter of the
 * CNN's training time.  Dense layers keep tanhf (their seeded models
 * stay as they were).  With a, b, c it computes a tanh(b x) + c, the
 * tempered sigmoid s sigmoid(T x) - o = s/2 tanh(T x / 2) + s/2 - o.
 */
static void
tanh_block(float *v, float a, float b, float c)
{
	const float lim = 7.90531110763549805f;

	/* Two loops: GCC's -O2 if-conversion handles the clamps alone,
	 * not clamps whose result feeds more arithmetic.  NaN stays NaN
	 * (both compares are false). */
	for (size_t j = 0; j < VB; j++) {
		float x = b * v[j];

		x = x > lim ? lim : x;
		v[j] = x < -lim ? -lim : x;
	}
	for (size_t j = 0; j < VB; j++) {
		float x = v[j], x2 = x * x, p, q;

		p = -2.76076847742355e-16f;
		p = p * x2 + 2.00018790482477e-13f;
		p = p * x2 + -8.60467152213735e-11f;
		p = p * x2 + 5.12229709037114e-08f;
		p = p * x2 + 1.48572235717979e-05f;
		p = p * x2 + 6.37261928875436e-04f;
		p = p * x2 + 4.89352455891786e-03f;
		q = 1.19825839466702e-06f;
		q = q * x2 + 1.18534705686654e-04f;
		q = q * x2 + 2.26843463243900e-03f;
		q = q * x2 + 4.89352518554385e-03f;
		v[j] = a * (x * (p / q)) + c;
	}
}

void
nn_tanh_fast(float *z, size_t len, float a, float b, float c)
{
	size_t k = 0;
	float v[VB] = { 0 };

	for (; k + VB <= len; k += VB) {
		memcpy(v, z + k, sizeof v);
		tanh_block(v, a, b, c);
		memcpy(z + k, v, sizeof v);
	}
	if (k < len) {
		memcpy(v, z + k, (len - k) * sizeof *v);
		tanh_block(v, a, b, c);
		memcpy(z + k, v, (len - k) * sizeof *v);
	}
}

/* The tempered sigmoid of layer L on z[0..len-1]: s sigmoid(T z) - o
 * = s/2 tanh(T/2 z) + s/2 - o. */
static void
act_tsig(const struct nn_layer *L, float *z, size_t len)
{
	float h = L->ts[0] / 2;

	nn_tanh_fast(z, len, h, L->ts[1] / 2, h - L->ts[2]);
}

/* Forward of image layer l (W its parameters) on n rows. */
static void
image_forward(const struct nn_layer *L, const float *W, struct nn_ws *ws,
    size_t l, size_t n)
{
	float *z = ws->a[l + 1];
	size_t T = conv_positions(&L->g), kd = conv_kd(&L->g), co = L->g.co;

	if (IS_POOL(L)) {
		conv_pool_fwd(&L->g, L->kind == NN_MAXPOOL, ws->a[l], n, z,
		    ws->arg[l]);
		return;
	}
	if (IS_GN(L)) {
		conv_gn_fwd(&L->g, ws->a[l], n, W, W + L->g.c, z, ws->col[l],
		    ws->rstd[l]);
		if (L->act == NN_ACT_RELU)
			for (size_t k = 0; k < n * L->out; k++)
				z[k] = z[k] > 0.0f ? z[k] : 0.0f;
		else if (L->act == NN_ACT_TANH)
			nn_tanh_fast(z, n * L->out, 1.0f, 1.0f, 0.0f);
		else if (L->act == NN_ACT_TSIG)
			act_tsig(L, z, n * L->out);
		return;
	}
	conv_im2col(&L->g, ws->a[l], n, ws->col[l]);
	la_sgemm(0, 0, n * T, co, kd, 1.0f, ws->col[l], W, 0.0f, z);
	for (size_t r = 0; r < n * T; r++)
		bias_act(z + r * co, W + kd * co, co, L->act == NN_ACT_RELU);
	if (L->act == NN_ACT_TANH)
		nn_tanh_fast(z, n * L->out, 1.0f, 1.0f, 0.0f);
	else if (L->act == NN_ACT_TSIG)
		act_tsig(L, z, n * L->out);
}

void
nn_forward_to(const struct nn_net *net, const float *param,
    struct nn_ws *ws, float *x, size_t n, size_t upto)
{
	ws->a[0] = x;
	ws->n = n;
	for (size_t l = 0; l < upto && l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		const float *W = param + L->off, *b = W + L->in * L->out;
		float *z = ws->a[l + 1];

		if (L->kind != NN_DENSE) {
			image_forward(L, W, ws, l, n);
			continue;
		}
		la_sgemm(0, 0, n, L->out, L->in, 1.0f, ws->a[l], W, 0.0f, z);
		for (size_t i = 0; i < n; i++)
			bias_act(z + i * L->out, b, L->out,
			    L->act == NN_ACT_RELU);
		if (L->act == NN_ACT_TANH)
			act_tanh(z, n * L->out);
		else if (L->act == NN_ACT_TSIG)
			act_tsig(L, z, n * L->out);
	}
}

void
nn_forward(const struct nn_net *net, const float *param, struct nn_ws *ws,
    float *x, size_t n)
{
	nn_forward_to(net, param, ws, x, n, net->nlayers);
}

float *
nn_output(const struct nn_net *net, const struct nn_ws *ws)
{
	return ws->a[net->nlayers];
}

double
nn_softmax_xent(const float *z, const int32_t *y, size_t n, size_t k,
    float *g, double *loss, size_t *bad)
{
	double total = 0;
	size_t nbad = 0;

	for (size_t i = 0; i < n; i++) {
		const float *zi = z + i * k;
		float *gi = g + i * k;
		double m = -INFINITY, s = 0, li = 0;
		int ok = y[i] >= 0 && (size_t)y[i] < k;

		for (size_t j = 0; ok && j < k; j++) {
			if (!isfinite(zi[j]))
				ok = 0;
			else if (zi[j] > m)
				m = zi[j];
		}
		if (!ok) {
			memset(gi, 0, k * sizeof *gi);
			nbad++;
		} else {
			/* log-sum-exp with the maximum subtracted: every
			 * exponent is <= 0, so nothing overflows. */
			for (size_t j = 0; j < k; j++)
				s += exp((double)zi[j] - m);
			li = m + log(s) - zi[y[i]];
			for (size_t j = 0; j < k; j++)
				gi[j] = (float)(exp((double)zi[j] - m) / s);
			gi[y[i]] -= 1.0f;
			total += li;
		}
		if (loss != NULL)
			loss[i] = li;
	}
	if (bad != NULL)
		*bad = nbad;
	return total;
}

/* g <- g * relu'(a), where a = relu(z) is the layer's output (a > 0
 * exactly when z > 0). */
static void
relu_mask(float *g, const float *a, size_t len)
{
	size_t k = 0;

	for (; k + VB <= len; k += VB) {
		float v[VB], c[VB];

		memcpy(v, g + k, sizeof v);
		memcpy(c, a + k, sizeof c);
		for (size_t j = 0; j < VB; j++)
			v[j] = c[j] > 0.0f ? v[j] : 0.0f;
		memcpy(g + k, v, sizeof v);
	}
	for (; k < len; k++)
		if (!(a[k] > 0.0f))
			g[k] = 0.0f;
}

/* s[0..len-1] += scale * x[0..len-1]. */
static void
axpy(float *s, float scale, const float *x, size_t len)
{
	size_t k = 0;

	for (; k + VB <= len; k += VB) {
		float v[VB], c[VB];

		memcpy(v, s + k, sizeof v);
		memcpy(c, x + k, sizeof c);
		for (size_t j = 0; j < VB; j++)
			v[j] += scale * c[j];
		memcpy(s + k, v, sizeof v);
	}
	for (; k < len; k++)
		s[k] += scale * x[k];
}

/* g <- g * act'(z), a = act(z) the output of layer L.  The tempered
 * sigmoid a = h tanh(b z) + h - o (h = s/2, b = T/2) has the derivative
 * h b (1 - u^2), u = (a - h + o) / h its tanh. */
static void
act_back(const struct nn_layer *L, float *g, const float *a, size_t len)
{
	if (L->act == NN_ACT_RELU)
		relu_mask(g, a, len);
	else if (L->act == NN_ACT_TANH)
		for (size_t k = 0; k < len; k++)
			g[k] *= 1.0f - a[k] * a[k];
	else if (L->act == NN_ACT_TSIG) {
		float h = L->ts[0] / 2, hb = h * (L->ts[1] / 2);
		float c = h - L->ts[2];

		for (size_t k = 0; k < len; k++) {
			float u = (a[k] - c) / h;

			g[k] *= hb * (1.0f - u * u);
		}
	}
}

/* gin (n x in) = the gradient of layer l's input from g (n x out, the
 * gradient of its pre-activation output). */
static void
layer_back(const struct nn_layer *L, const float *param, struct nn_ws *ws,
    size_t l, const float *g, float *gin)
{
	size_t n = ws->n;

	if (L->kind == NN_DENSE)
		la_sgemm(0, 1, n, L->in, L->out, 1.0f, g, param + L->off,
		    0.0f, gin);
	else if (IS_GN(L))
		conv_gn_bwd(&L->g, ws->col[l], ws->rstd[l], param + L->off, g,
		    n, gin);
	else if (IS_POOL(L))
		conv_pool_bwd(&L->g, L->kind == NN_MAXPOOL, ws->arg[l], g, n,
		    gin);
	else {
		la_sgemm(0, 1, n * conv_positions(&L->g), conv_kd(&L->g),
		    L->g.co, 1.0f, g, param + L->off, 0.0f, ws->dcol);
		conv_col2im(&L->g, ws->dcol, n, gin);
	}
}

void
nn_backward(const struct nn_net *net, const float *param, struct nn_ws *ws,
    const float *gout, float *gin)
{
	size_t L = net->nlayers, n = ws->n, lo = gin ? 0 :
	    nn_first_trained(net);
	const struct nn_layer *top = &net->layer[L - 1];

	if (lo >= L)
		return;
	if (gout != ws->g[L - 1])
		memcpy(ws->g[L - 1], gout, n * top->out * sizeof *gout);
	act_back(top, ws->g[L - 1], ws->a[L], n * top->out);
	for (size_t l = L - 1; l > lo; l--) {
		const struct nn_layer *Ly = &net->layer[l];

		/* g_{l-1} = (g_l W_l^T) * act'_{l-1}(a_l) */
		layer_back(Ly, param, ws, l, ws->g[l], ws->g[l - 1]);
		act_back(&net->layer[l - 1], ws->g[l - 1], ws->a[l],
		    n * Ly->in);
	}
	if (gin != NULL)
		layer_back(&net->layer[0], param, ws, 0, ws->g[0], gin);
}

void
nn_grad_sum(const struct nn_net *net, struct nn_ws *ws, float scale,
    float *grad)
{
	size_t n = ws->n;

	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		float *dW = grad + L->off, *db = dW + L->in * L->out;
		const float *g = ws->g[l];

		if (L->frozen || IS_POOL(L))
			continue;
		if (IS_GN(L)) {
			size_t c = L->g.c;
			double *d = ws->pexb[l];

			for (size_t i = 0; i < n; i++) {
				conv_gn_pgrad(&L->g, ws->col[l] + i * L->in, g +
				    i * L->in, d, d + c);
				for (size_t j = 0; j < c; j++) {
					dW[j] += scale * (float)d[j];
					dW[c + j] += scale * (float)d[c + j];
				}
			}
			continue;
		}
		if (IS_CONV(L)) {
			size_t T = conv_positions(&L->g), kd = conv_kd(&L->g);

			db = dW + kd * L->g.co;
			la_sgemm(1, 0, kd, L->g.co, n * T, scale, ws->col[l],
			    g, 1.0f, dW);
			for (size_t r = 0; r < n * T; r++)
				axpy(db, scale, g + r * L->g.co, L->g.co);
			continue;
		}
		la_sgemm(1, 0, L->in, L->out, n, scale, ws->a[l], g, 1.0f, dW);
		for (size_t i = 0; i < n; i++)
			axpy(db, scale, g + i * L->out, L->out);
	}
}

/* ---- DP-SGD: norms ---- */

/* Sum of squares of x[0..n-1] in double.  Eight partial sums keep the
 * loop fast; any order of summation is within the error bound used by
 * nn_clip_plan (gamma_n relative, about 2^-29 for n < 2^24). */
PV_CLONES static double
sumsq(const float *x, size_t n)
{
	double s[8] = { 0 };
	size_t i = 0;

	for (; i + 8 <= n; i += 8)
		for (size_t j = 0; j < 8; j++)
			s[j] += (double)x[i + j] * (double)x[i + j];
	for (; i < n; i++)
		s[0] += (double)x[i] * (double)x[i];
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

double
nn_row_sqnorm(const float *x, size_t d)
{
	return sumsq(x, d);
}

/*
 * Convolutions.  Example i's gradient of a convolution is A_i^T G_i
 * (weights) and 1^T G_i (bias), A_i (T x kd) its unfolded input and G_i
 * (T x co) its output gradient.  conv_sqnorms takes each layer's norms one
 * of two ways, as nn_conv_ghost's cost model chooses (Bu et al. 2022):
 *
 * direct: the per-example gradient x_i = (D_i,
 *   b_i), D_i = fl(A_i^T G_i) by SGEMM and b_i the bias sums in double, is
 *   formed and kept: x_i as computed is the example's contribution, its
 *   squared norm is computed from it (exact squares, double sums), and
 *   clip_sum_conv adds wt_i x_i in double -- n terms per entry, exactly
 *   the dense argument below, and no cheaper: the sum costs n kd co, the
 *   norm already cost n T kd co.
 * ghost: s_i = sum_{t,t'} (P + 1) Q with P = fl(A_i A_i^T), Q = fl(G_i
 *   G_i^T) by SGEMM (the 1 is the bias) and the sum in double.  Nothing
 *   per example is formed, so the contribution is the exact w_i (A_i^T
 *   G_i, 1^T G_i) and s_i must bound its squared norm from above: with
 *   |dP_tt'| <= gamma_kd ||a_t|| ||a_t'|| and |dQ_tt'| <= gamma_co ||g_t||
 *   ||g_t'|| (Higham 2002, 3.5), |Q| <= ||g_t|| ||g_t'|| and |P + 1| <=
 *   sqrt(||a_t||^2 + 1) sqrt(||a_t'||^2 + 1), summing gives an error of
 *   at most (gamma_kd + gamma_co + gamma_kd gamma_co + gamma_(T^2+3)(f64))
 *   m_i, m_i = (||A_i||^2 + T) ||G_i||^2 (the norms are double sums of
 *   exact squares, relative error below 2^-28 as for dense layers;
 *   ||A_i||^2 is taken from the layer's input, each pixel's square times
 *   the number of patches over it, conv_unfold_sqnorm: nonnegative terms,
 *   integer counts, h + w + c + 2 double roundings at most), so
 *   conv_sqnorms adds max(s_i, 0) + that + 2^-200 (underflow).
 *   The clipped sum is then one DGEMM A^T diag(w) G over the n T rows
 *   (i, t), whose error per entry is relative to sum_i w_i sum_t |a_it|
 *   |g_it|, not to the clipped contributions: by Minkowski and
 *   Cauchy-Schwarz its L2 norm is at most gamma_h sum_i w_i sqrt(m_i).
 *   conv_sqnorms therefore adds max(bound, m_i / rho^2) (rho =
 *   NN_CONV_RHO), so that w_i sqrt(m_i) <= rho C' for every example, and
 *   nn_clip_plan_conv charges the DGEMM's error 2 gamma_h(f64) (N + 1) rho
 *   C' (h = cap T + N + 8: a term passes through at most cap T products
 *   and additions in its call's DGEMM and bias sum, and one addition per
 *   call after it), with T the most positions of a ghost layer.
 */

/* gamma_h for unit roundoff u, rounded up generously. */
static double
gam(double h, double u)
{
	return fpsum_gamma(h, u) * (1 + 0x1p-20);
}

static void
conv_sqnorms(const struct nn_layer *L, const struct nn_ws *ws, size_t l,
    double *sq)
{
	size_t T = conv_positions(&L->g), kd = conv_kd(&L->g), co = L->g.co;
	int ghost = nn_conv_ghost(L);
	double rho2 = NN_CONV_RHO * NN_CONV_RHO, dT = (double)T;

	for (size_t i = 0; i < ws->n; i++) {
		const float *A = ws->col[l] + i * T * kd;
		const float *G = ws->g[l] + i * T * co;
		float *S = ghost ? ws->nscr : ws->pex[l] + i * kd * co;
		double *bs = ghost ? NULL : ws->pexb[l] + i * co;
		double na = conv_unfold_sqnorm(&L->g, ws->a[l] + i * L->in);
		double ng = sumsq(G, T * co);
		double m = (na + dT) * ng, v = 0;

		if (!(na <= NN_ACT_BOUND2)) {		/* also NaN */
			sq[i] = INFINITY;
			continue;
		}
		if (!(m <= DBL_MAX)) {			/* G not finite */
			sq[i] = INFINITY;
			continue;
		}
		if (ghost) {
			const float *P = S, *Q = S + T * T;

			la_sgemm(0, 1, T, T, kd, 1.0f, A, A, 0.0f, S);
			la_sgemm(0, 1, T, T, co, 1.0f, G, G, 0.0f, S + T * T);
			for (size_t k = 0; k < T * T; k++)
				v += ((double)P[k] + 1) * (double)Q[k];
			v = (v > 0 ? v : 0) + (gam((double)kd, 0x1p-24) +
			    gam((double)co, 0x1p-24) + gam((double)kd, 0x1p-24) *
			    gam((double)co, 0x1p-24) + gam(dT * dT + 3,
			    0x1p-53)) * m;
		} else {
			/* The example's gradient as computed is its
			 * contribution (clip_sum_conv sums these). */
			la_sgemm(1, 0, kd, co, T, 1.0f, A, G, 0.0f, S);
			v = sumsq(S, kd * co);
			/* The bias sums, each over t in order as before,
			 * the co of them side by side (vectorised). */
			memset(bs, 0, co * sizeof *bs);
			for (size_t t = 0; t < T; t++)
				for (size_t o = 0; o < co; o++)
					bs[o] += (double)G[t * co + o];
			for (size_t o = 0; o < co; o++)
				v += bs[o] * bs[o];
			sq[i] += v;
			continue;
		}
		v += 0x1p-200;
		sq[i] += v > m / rho2 ? v : m / rho2;
	}
}

void
nn_sqnorms_cached(const struct nn_net *net, const struct nn_ws *ws,
    const double *in_sq, double *sq)
{
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];

		if (L->frozen || IS_POOL(L))
			continue;
		if (IS_CONV(L)) {
			conv_sqnorms(L, ws, l, sq);
			continue;
		}
		if (IS_GN(L)) {
			/* The per-example gradients of gamma and beta, kept:
			 * as computed, they are the contribution. */
			for (size_t i = 0; i < ws->n; i++) {
				double *d = ws->pexb[l] + i * 2 * L->g.c, v = 0;

				conv_gn_pgrad(&L->g, ws->col[l] + i * L->in,
				    ws->g[l] + i * L->in, d, d + L->g.c);
				for (size_t j = 0; j < 2 * L->g.c; j++)
					v += d[j] * d[j];
				sq[i] += v;
			}
			continue;
		}
		for (size_t i = 0; i < ws->n; i++) {
			double na = l == 0 && in_sq != NULL &&
			    L->kind == NN_DENSE ? in_sq[i] :
			    sumsq(ws->a[l] + i * L->in, L->in);
			double ng = sumsq(ws->g[l] + i * L->out, L->out);

			if (!(na <= NN_ACT_BOUND2))	/* also NaN */
				sq[i] = INFINITY;
			else
				sq[i] += (na + 1) * ng;
		}
	}
}

void
nn_sqnorms(const struct nn_net *net, const struct nn_ws *ws, double *sq)
{
	nn_sqnorms_cached(net, ws, NULL, sq);
}

/*
 * The clipped sum and its sensitivity.
 *
 * Notation: u = 2^-24 (float) or 2^-53 (double) unit roundoff, gamma_h =
 * h u / (1 - h u).  Example i contributes x_i = (a_l,i, 1) x g'_l,i for
 * each trained layer l, where g'_l,i is w_i g_l,i rounded to float (f32
 * path) or to double (f64 path).
 *
 * 1. Each contribution has norm at most C' (1 + 2^-22) (1 + 2^-26) plus an
 *    absolute term below 2^-81.  The squared norm sq_i is computed in
 *    double from float inputs: squares are exact, the sums of at most
 *    2^24 terms and the few products and additions over at most 64
 *    layers have relative error below 2^-28, so w_i sqrt(true sq_i) <=
 *    C' (1 + 2^-27).  Rounding w_i g to float adds a relative 2^-24 +
 *    2^-53 per entry, and an absolute 2^-150 per entry when it
 *    underflows; times ||(a, 1)|| <= 2^51 (the NN_ACT_BOUND2 rule) and
 *    sqrt(out) <= 2^12 that is at most 2^-87 per layer.
 * 2. The computed sum differs from the exact sum of the x_i by at most
 *    gamma_h sum_i ||x_i|| in L2 norm, whatever the summation order
 *    (Higham, Accuracy and Stability of Numerical Algorithms, 2002,
 *    section 4.2: a term passing through at most h rounded operations
 *    carries a relative error of at most gamma_h), plus absolute
 *    underflow terms below 2^-100.  Per entry the bound is gamma_h sum_i
 *    |x_i entry|, and by Minkowski's inequality the L2 norm over all
 *    entries of all layers of sum_i |x_i| is at most sum_i ||x_i||.  On
 *    the f32 path a term passes through its chunk's dot product (at most
 *    chunk roundings, FMA or not) and the chunk accumulations (at most
 *    ceil(rows / chunk) + 1), and the float result is then added to the
 *    double sum (a double rounding per call, at most N + 1 of them): h =
 *    chunk + ceil(min(nmax, cap) / chunk) + 2 in float plus a gamma_(N+2)
 *    in double.  On the f64 path h <= N + 8 in double.
 * 3. Let M bound every ||x_i||.  Neighbouring batches S (n rows) and
 *    S + {x} differ in their exact sums by x, and their computed sums
 *    each carry an error of at most gamma_h n M and gamma_h (n + 1) M,
 *    so the computed sums differ by at most M (1 + e), with
 *    e = max(2 gamma_h(f32) nmax, 2 gamma_(N+8)(f64) (N + 1)): the path
 *    of each batch depends on its size only, so the mixed case (one
 *    batch of nmax rows on the f32 path, the other on the f64 path) is
 *    covered by the maximum.  (The double additions of the f32 path's
 *    per-call results add at most 2 gamma_(N+2)(f64) (N + 1) < 2^-28 on
 *    top of e32.)
 * So with C' = C (1 - 2^-20) / ((1 + 2^-22) (1 + e)) the two computed
 * sums differ by at most C: the (1 - 2^-20) absorbs the 2^-26, 2^-27 and
 * 2^-28 terms and the absolute ones (C >= 2^-40 makes 2^-81 < 2^-40 C').
 * Overflow cannot happen: |x_i entries| <= C' <= 2^40 and n < 2^25.
 * Activations above the bound, non-finite values, and the rows of
 * examples with weight 0 are zeroed before the products, so 0 * inf never
 * makes a NaN.
 */
int
nn_clip_plan(struct nn_clip *p, double clip, double expected,
    uint64_t nrecords, size_t cap)
{
	return nn_clip_plan_conv(p, clip, expected, nrecords, cap, 0);
}

int
nn_clip_plan_conv(struct nn_clip *p, double clip, double expected,
    uint64_t nrecords, size_t cap, size_t tmax)
{
	static const size_t chunks[] = { 256, 128, 64, 32, 16 };
	double N1, e32 = 0, e64, e, nmax;

	memset(p, 0, sizeof *p);
	if (!(clip >= NN_CLIP_MIN && clip <= NN_CLIP_MAX) ||
	    nrecords > NN_MAX_RECORDS || cap == 0 || !(expected >= 0) ||
	    !isfinite(expected))
		return NN_E_RANGE;
	N1 = (double)nrecords + 1;
	/* The f32 path serves batches up to nmax: the expected size plus
	 * ten standard deviations (a bigger batch is a rare event, and
	 * takes the exact-enough f64 path; privacy never depends on it). */
	nmax = ceil(expected + 10 * sqrt(expected) + 16);
	if (nmax > N1)
		nmax = N1;
	p->chunk = 0;
	for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
		double rows = nmax < (double)cap ? nmax : (double)cap;
		double h = (double)chunks[c] + ceil(rows / (double)chunks[c]) + 2;

		e32 = 2 * fpsum_gamma(h, 0x1p-24) * nmax;
		if (e32 <= 0x1p-7) {
			p->chunk = chunks[c];
			break;
		}
	}
	if (p->chunk == 0) {		/* f64 path only */
		nmax = 0;
		e32 = 0;
		p->chunk = chunks[0];
	}
	/* The double rounding of each call's f32 result, and the f64 path
	 * (fpsum.h: 2 gamma_(N1 + 8) N1). */
	e64 = fpsum_margin(N1, 8, 0x1p-53);
	e = e32 > e64 ? e32 : e64;
	/* Convolutions (see "Convolutions" above). */
	if (tmax > 0)
		e += NN_CONV_RHO * 2 * gam((double)cap * (double)tmax + N1 + 8,
		    0x1p-53) * N1;
	p->clip = clip;
	p->clip_row = nextafter(clip * (1 - 0x1p-20) / ((1 + 0x1p-22) *
	    (1 + e)), 0);
	p->margin = clip / p->clip_row - 1;
	p->nmax = (size_t)nmax;
	p->cap = cap;
	p->nrecords = nrecords + 1;
	return 0;
}

void
nn_clip_weights(const struct nn_clip *p, const double *sq, size_t n,
    double *wt)
{
	for (size_t i = 0; i < n; i++) {
		double nrm;

		if (!isfinite(sq[i]))
			wt[i] = 0;
		else if (p->unclipped || (nrm = sqrt(sq[i])) <= p->clip_row)
			wt[i] = 1;
		else
			wt[i] = p->clip_row / nrm;
	}
}

/* Make the f64 scratch hold len doubles. */
static int
sum64_reserve(struct nn_ws *ws, size_t len)
{
	double *p;

	if (ws->sum64_len >= len)
		return 0;
	if (len > SIZE_MAX / sizeof(double) ||
	    (p = realloc(ws->sum64, len * sizeof(double))) == NULL)
		return NN_E_NOMEM;
	ws->sum64 = p;
	ws->sum64_len = len;
	return 0;
}

/* d[0..n-1] += a (double)s[0..n-1], in VB blocks (vectorised; each
 * entry's product and sum rounded as the scalar loop's). */
PV_CLONES static void
axpy_f32(double *d, double a, const float *s, size_t n)
{
	size_t i = 0;

	for (; i + VB <= n; i += VB) {
		double v[VB];
		float w[VB];

		memcpy(v, d + i, sizeof v);
		memcpy(w, s + i, sizeof w);
		for (size_t j = 0; j < VB; j++)
			v[j] += a * (double)w[j];
		memcpy(d + i, v, sizeof v);
	}
	for (; i < n; i++)
		d[i] += a * (double)s[i];
}

/* Layer l of the f64 path: sum += A^T diag(wt) G in double (DGEMM). */
static int
clip_sum_f64(const struct nn_layer *L, struct nn_ws *ws, float *A,
    const float *G, const double *wt, size_t n, double *sum)
{
	double *dA, *dG, *db = sum + L->in * L->out;
	int rc;

	if ((rc = sum64_reserve(ws, n * (L->in + L->out))) != 0)
		return rc;
	dA = ws->sum64;
	dG = dA + n * L->in;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < L->in; j++)
			dA[i * L->in + j] = wt[i] == 0 ? 0 :
			    (double)A[i * L->in + j];
		for (size_t k = 0; k < L->out; k++) {
			dG[i * L->out + k] = wt[i] == 0 ? 0 :
			    wt[i] * (double)G[i * L->out + k];
			db[k] += dG[i * L->out + k];
		}
	}
	la_gemm(1, 0, L->in, L->out, n, 1.0, dA, dG, 1.0, sum);
	return 0;
}

/* Convolution l: sum += A^T diag(wt) G and the bias sums, in double
 * (one DGEMM over the n T rows; the bias summed per call first). */
static int
clip_sum_conv(const struct nn_layer *L, struct nn_ws *ws, size_t l,
    const double *wt, size_t n, double *sum)
{
	size_t T = conv_positions(&L->g), kd = conv_kd(&L->g), co = L->g.co;
	size_t rows = n * T;
	double *dA, *dG, *bs, *db = sum + kd * co;
	int rc;

	if (!nn_conv_ghost(L)) {
		/* Direct norms: the per-example gradients conv_sqnorms
		 * formed, summed in double (n terms, as a dense layer). */
		for (size_t i = 0; i < n; i++) {
			const float *D = ws->pex[l] + i * kd * co;
			const double *b = ws->pexb[l] + i * co;

			if (wt[i] == 0)
				continue;
			axpy_f32(sum, wt[i], D, kd * co);
			for (size_t k = 0; k < co; k++)
				db[k] += wt[i] * b[k];
		}
		return 0;
	}
	if ((rc = sum64_reserve(ws, rows * (kd + co) + co)) != 0)
		return rc;
	dA = ws->sum64;
	dG = dA + rows * kd;
	bs = dG + rows * co;
	memset(bs, 0, co * sizeof *bs);
	for (size_t i = 0; i < n; i++)
		for (size_t t = 0; t < T; t++) {
			size_t r = i * T + t;
			const float *a = ws->col[l] + r * kd;
			const float *g = ws->g[l] + r * co;

			for (size_t j = 0; j < kd; j++)
				dA[r * kd + j] = wt[i] == 0 ? 0 : (double)a[j];
			for (size_t k = 0; k < co; k++) {
				dG[r * co + k] = wt[i] == 0 ? 0 :
				    wt[i] * (double)g[k];
				bs[k] += dG[r * co + k];
			}
		}
	if (rows > 0)
		la_gemm(1, 0, kd, co, rows, 1.0, dA, dG, 1.0, sum);
	for (size_t k = 0; k < co; k++)
		db[k] += bs[k];
	return 0;
}

int
nn_clip_sum(const struct nn_clip *p, const struct nn_net *net,
    struct nn_ws *ws, const double *wt, size_t nbatch, double *sum)
{
	size_t n = ws->n;
	int f32 = nbatch <= p->nmax, rc;

	if (n > p->cap)
		return NN_E_RANGE;
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		float *A = ws->a[l], *G = ws->g[l], *S = ws->sum32;
		double *dW = sum + L->off, *db = dW + L->in * L->out;
		size_t nw = L->in * L->out;

		if (L->frozen || IS_POOL(L))
			continue;
		if (IS_CONV(L)) {
			if ((rc = clip_sum_conv(L, ws, l, wt, n, dW)) != 0)
				return rc;
			continue;
		}
		if (IS_GN(L)) {
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; wt[i] != 0 && j < 2 * L->g.c;
				    j++)
					dW[j] += wt[i] * ws->pexb[l][i * 2 *
					    L->g.c + j];
			continue;
		}
		if (!f32) {
			if ((rc = clip_sum_f64(L, ws, A, G, wt, n, dW)) != 0)
				return rc;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			float *gi = G + i * L->out;
			if (wt[i] == 0) {
				memset(A + i * L->in, 0, L->in * sizeof *A);
				memset(gi, 0, L->out * sizeof *gi);
				continue;
			}
			for (size_t k = 0; k < L->out; k++) {
				gi[k] = (float)(wt[i] * (double)gi[k]);
				db[k] += (double)gi[k];
			}
		}
		if (n == 0)
			continue;
		for (size_t r = 0; r < n; r += p->chunk) {
			size_t m = n - r < p->chunk ? n - r : p->chunk;
			la_sgemm_ld(1, 0, L->in, L->out, m, 1.0f,
			    A + r * L->in, L->in, G + r * L->out, L->out,
			    r == 0 ? 0.0f : 1.0f, S, L->out);
		}
		axpy_f32(dW, 1.0, S, nw);	/* 1.0 * x is exact */
	}
	return 0;
}

/* Example i's clipped contribution to convolution l, as clip_sum_conv
 * adds it: sum_t a_t x wt g_t and sum_t wt g_t, in double. */
static void
conv_contrib(const struct nn_layer *L, const struct nn_ws *ws, size_t l,
    size_t i, double wt, double *W)
{
	size_t T = conv_positions(&L->g), kd = conv_kd(&L->g), co = L->g.co;
	double *b = W + kd * co;

	memset(W, 0, (kd * co + co) * sizeof *W);
	if (wt == 0)
		return;
	if (!nn_conv_ghost(L)) {
		const float *D = ws->pex[l] + i * kd * co;

		for (size_t j = 0; j < kd * co; j++)
			W[j] = wt * (double)D[j];
		for (size_t k = 0; k < co; k++)
			b[k] = wt * ws->pexb[l][i * co + k];
		return;
	}
	for (size_t t = 0; t < T; t++) {
		const float *a = ws->col[l] + (i * T + t) * kd;
		const float *g = ws->g[l] + (i * T + t) * co;

		for (size_t k = 0; k < co; k++) {
			double gk = wt * (double)g[k];

			b[k] += gk;
			for (size_t j = 0; j < kd; j++)
				W[j * co + k] += (double)a[j] * gk;
		}
	}
}

void
nn_clip_contrib(const struct nn_net *net, const struct nn_ws *ws, size_t i,
    double wt, double *out)
{
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		const float *a = ws->a[l] + i * L->in, *g = ws->g[l] + i * L->out;
		double *W = out + L->off, *b = W + L->in * L->out;

		if (L->frozen || IS_POOL(L))
			continue;
		if (IS_CONV(L)) {
			conv_contrib(L, ws, l, i, wt, out + L->off);
			continue;
		}
		if (IS_GN(L)) {
			for (size_t j = 0; j < 2 * L->g.c; j++)
				W[j] = wt == 0 ? 0 : wt * ws->pexb[l][i * 2 *
				    L->g.c + j];
			continue;
		}
		for (size_t k = 0; k < L->out; k++) {
			float gk = wt == 0 ? 0.0f : (float)(wt * (double)g[k]);
			b[k] = gk;
			for (size_t j = 0; j < L->in; j++)
				W[j * L->out + k] = wt == 0 ? 0 :
				    (double)a[j] * (double)gk;
		}
	}
}

/* ---- sampling ---- */

/* Nonzero when some byte of x is below n (n <= 128): the classic
 * "hasless" bit trick. */
#define HASLESS(x, n) (((x) - UINT64_C(0x0101010101010101) * (n)) & ~(x) & \
    UINT64_C(0x8080808080808080))

size_t
nn_poisson(struct rng *r, uint64_t n, double q, uint64_t *idx)
{
	uint64_t m, bits = 0;
	unsigned top;
	size_t count = 0;
	int left = 0;

	if (!(q > 0))
		return 0;
	if (q >= 1) {
		for (uint64_t i = 0; i < n; i++)
			idx[count++] = i;
		return count;
	}
	/* q < 1 is a double, so q 2^64 <= 2^64 - 2^11 is exact and m is its
	 * floor. */
	m = (uint64_t)ldexp(q, 64);
	top = (unsigned)(m >> 56);
	for (uint64_t i = 0; i < n;) {
		/* Include i when a uniform 64-bit U is below m, comparing U
		 * to m a byte at a time from the top: the first byte that
		 * differs decides, so about one byte is drawn per index.
		 * Eight first bytes come from one draw; when none of them is
		 * at or below m's top byte (the common case for small q),
		 * all eight indices are out at once. */
		uint64_t w = rng_u64(r);

		if (top < 128 && !HASLESS(w, top + 1) && n - i >= 8) {
			i += 8;
			continue;
		}
		for (int k = 0; k < 8 && i < n; k++, i++) {
			unsigned b = (unsigned)(w >> (8 * k)) & 0xff;

			if (b < top) {
				idx[count++] = i;
				continue;
			}
			if (b > top)
				continue;
			/* equal top bytes: the next bytes decide */
			for (int sh = 48; sh >= 0; sh -= 8) {
				unsigned c, mb = (unsigned)(m >> sh) & 0xff;

				if (left == 0) {
					bits = rng_u64(r);
					left = 8;
				}
				c = (unsigned)(bits & 0xff);
				bits >>= 8;
				left--;
				if (c < mb) {
					idx[count++] = i;
					break;
				}
				if (c > mb)
					break;
			}
		}
	}
	return count;
}

size_t
nn_zero_nonfinite_rows(float *x, size_t n, size_t d)
{
	size_t z = 0;

	for (size_t i = 0; i < n; i++) {
		float *xi = x + i * d, acc = 0.0f;

		/* x * 0 is NaN exactly for infinities and NaNs. */
		for (size_t j = 0; j < d; j++)
			acc += xi[j] * 0.0f;
		if (acc != acc) {
			memset(xi, 0, d * sizeof *xi);
			z++;
		}
	}
	return z;
}

/* ---- noise ---- */

double
nn_noise_std(double sigma, double clip, uint64_t d, double *sens,
    double *gamma)
{
	double s, g = 0, need = NAN;

	if (!(sigma > 0) || !isfinite(sigma) || !(clip > 0) ||
	    !isfinite(clip) || d == 0)
		return NAN;
	/* The grid depends on s only through its binade, so this settles
	 * in two or three rounds; each round only raises s. */
	s = sigma * clip;
	for (int it = 0; it < 16; it++) {
		if ((g = noise_grid(s)) == 0)
			return NAN;
		need = sigma * noise_sens_l2(clip, g, d);
		if (s >= need)
			break;
		s = nextafter(need, INFINITY);
	}
	if (!(s >= need))
		return NAN;
	if (sens != NULL)
		*sens = noise_sens_l2(clip, g, d);
	if (gamma != NULL)
		*gamma = g;
	return s;
}

#define NN_NOISE_MAXSEG 8

/* One segment of the noise vector: its own rng and, when threaded, its
 * own worker, so that several cores draw noise.  Its vectors are filled
 * one at a time, in order (fill f into z[f & 1], drawn from r after fills
 * 0..f-1), by the worker or, when the caller needs fill f and nobody has
 * started it, by the caller itself: on a busy machine the caller does not
 * wait for a worker that is not running, and the values do not depend on
 * who drew them. */
struct noise_seg {
	struct nn_noise *h;
	struct rng *r;
	size_t lo, hi;
	double tv[2];		/* TV bounds of its part of z[0], z[1] */
	uint64_t claimed;	/* fills started */
	uint64_t produced;	/* fills finished */
	int busy;		/* a fill is under way */
	pthread_t th;
	int started;
};

struct nn_noise {
	double s, gamma, inv, tv;	/* inv = 1 / gamma, exactly */
	int exact, threaded;
	size_t d, nseg;
	struct noise_fast *fast;	/* NULL: the exact sampler */
	double *z[2];		/* noise vectors, k_i gamma */
	struct noise_seg seg[NN_NOISE_MAXSEG];
	int cur;		/* the buffer the next release uses */
	uint64_t nrel;		/* releases made (threaded) */
	int rc;			/* a worker's error */
	int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* Draw segment g of buffer b: exactly the noise noise_add_dgauss (or
 * noise_fast_add) adds to x, drawn on a zero vector (round(0 / gamma) =
 * 0, so z_i = k_i gamma). */
static int
noise_fill(struct nn_noise *h, struct noise_seg *g, int b)
{
	double *z = h->z[b] + g->lo;
	size_t n = g->hi - g->lo;
	int rc;

	g->tv[b] = 0;
	if (n == 0)
		return 0;
	if (h->fast != NULL)
		rc = noise_fast_grid_noise(h->fast, g->r, z, n, &g->tv[b]);
	else {
		memset(z, 0, n * sizeof *z);
		rc = noise_add_dgauss(g->r, z, n, h->s, 0);
	}
	return rc == 0 ? 0 : NN_E_NOISE;
}

/* With h->mu held and g->busy clear: make fill number g->claimed (into
 * z[claimed & 1]), releasing the lock while drawing.  @return 0 or the
 * fill's error (also left in h->rc). */
static int
seg_fill_locked(struct nn_noise *h, struct noise_seg *g)
{
	int rc;

	g->busy = 1;
	rc = (int)(g->claimed++ & 1);
	pthread_mutex_unlock(&h->mu);
	rc = noise_fill(h, g, rc);
	pthread_mutex_lock(&h->mu);
	g->busy = 0;
	if (rc != 0)
		h->rc = rc;
	else
		g->produced++;
	pthread_cond_broadcast(&h->cv);
	return rc;
}

/* A worker keeps its segment's next two vectors filled: fill f may start
 * once release f - 2 has used its buffer. */
static void *
noise_worker(void *arg)
{
	struct noise_seg *g = arg;
	struct nn_noise *h = g->h;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		while (!h->stop && h->rc == 0 && (g->busy ||
		    g->claimed >= h->nrel + 2))
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->stop || h->rc != 0)
			break;
		if (seg_fill_locked(h, g) != 0)
			break;
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

int
nn_noise_new(struct nn_noise **out, struct rng *const *r, size_t nr,
    double s, size_t d, int exact, int threaded)
{
	struct nn_noise *h;
	int e;

	*out = NULL;
	if (!(s > 0) || !isfinite(s) || d == 0 || noise_grid(s) == 0 ||
	    nr == 0 || nr > NN_NOISE_MAXSEG)
		return NN_E_RANGE;
	if (d > SIZE_MAX / 2 / sizeof(double) ||
	    (h = calloc(1, sizeof *h)) == NULL)
		return NN_E_NOMEM;
	h->s = s;
	h->gamma = noise_grid(s);
	(void)frexp(h->gamma, &e);
	h->inv = ldexp(1.0, 1 - e);	/* gamma = 2^(e-1) */
	h->d = d;
	h->exact = exact;
	h->nseg = nr;
	for (size_t j = 0; j < nr; j++) {
		h->seg[j].h = h;
		h->seg[j].r = r[j];
		h->seg[j].lo = d * j / nr;
		h->seg[j].hi = d * (j + 1) / nr;
	}
	if (!exact && noise_fast_new_grid(&h->fast, s) != 0) {
		free(h);
		return NN_E_NOISE;
	}
	h->z[0] = malloc(d * sizeof(double));
	h->z[1] = malloc(d * sizeof(double));
	if (h->z[0] == NULL || h->z[1] == NULL) {
		nn_noise_free(h);
		return NN_E_NOMEM;
	}
	if (threaded) {
		if (pthread_mutex_init(&h->mu, NULL) != 0) {
			nn_noise_free(h);
			return NN_E_NOMEM;
		}
		if (pthread_cond_init(&h->cv, NULL) != 0) {
			pthread_mutex_destroy(&h->mu);
			nn_noise_free(h);
			return NN_E_NOMEM;
		}
		h->threaded = 1;
		for (size_t j = 0; j < nr; j++) {
			if (pthread_create(&h->seg[j].th, NULL, noise_worker,
			    &h->seg[j]) != 0) {
				nn_noise_free(h);
				return NN_E_NOMEM;
			}
			h->seg[j].started = 1;
		}
	}
	*out = h;
	return 0;
}

/*
 * Rounding to the grid.  For |v| < 2^51, (v + 1.5 2^52) - 1.5 2^52 is v
 * rounded to the nearest integer with ties to even: the sum lies in
 * [2^52, 2^53), where doubles are exactly the integers, so the addition
 * rounds v (in the default rounding mode, round to nearest even, which
 * privada never changes) and the subtraction is exact.  That is how
 * lib/noise rounds (floor, then the fraction decides, ties to even), done
 * without branches, in blocks the vectoriser takes.
 */
#define ROUND_MAGIC 0x1.8p52

/* x_i <- round(x_i / gamma) gamma + z_i; @return the number of |x_i /
 * gamma| >= 2^51 (or NaN) seen, which must be 0. */
PV_CLONES static size_t
grid_add(double *x, const double *z, size_t n, double inv, double gamma)
{
	size_t bad = 0, i = 0;

	for (; i + VB <= n; i += VB) {
		double v[VB], c[VB];

		memcpy(v, x + i, sizeof v);
		memcpy(c, z + i, sizeof c);
		for (size_t j = 0; j < VB; j++) {
			v[j] *= inv;
			bad += !(fabs(v[j]) < 0x1p51);
			v[j] = ((v[j] + ROUND_MAGIC) - ROUND_MAGIC) * gamma + c[j];
		}
		memcpy(x + i, v, sizeof v);
	}
	for (; i < n; i++) {
		double v = x[i] * inv;

		bad += !(fabs(v) < 0x1p51);
		x[i] = ((v + ROUND_MAGIC) - ROUND_MAGIC) * gamma + z[i];
	}
	return bad;
}

/* Wait until buffer h->cur holds the next release's noise (drawing it
 * here when no worker has started it).  @return 0 or a fill's error. */
static int
noise_ready(struct nn_noise *h)
{
	int rc = 0;

	if (h->threaded) {
		uint64_t c = h->nrel;

		pthread_mutex_lock(&h->mu);
		for (size_t j = 0; j < h->nseg && h->rc == 0; j++) {
			struct noise_seg *g = &h->seg[j];

			while (h->rc == 0 && g->produced <= c) {
				/* Fill c not started: draw it here. */
				if (!g->busy && g->claimed == c)
					(void)seg_fill_locked(h, g);
				else
					pthread_cond_wait(&h->cv, &h->mu);
			}
		}
		rc = h->rc;
		pthread_mutex_unlock(&h->mu);
	} else
		for (size_t j = 0; j < h->nseg && rc == 0; j++)
			rc = noise_fill(h, &h->seg[j], h->cur);
	return rc;
}

/* The release of buffer h->cur is over (rc its result): charge its TV
 * bound, hand the buffer back to the workers, use the other one next. */
static int
noise_done(struct nn_noise *h, int rc)
{
	int b = h->cur;
	double tv = 0;

	for (size_t j = 0; j < h->nseg; j++)
		tv += h->seg[j].tv[b];
	if (rc == 0 && tv > 0)		/* a bound: round up */
		h->tv = nextafter(h->tv + tv, INFINITY);
	if (h->threaded) {
		pthread_mutex_lock(&h->mu);
		h->nrel++;		/* buffer b is free again */
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
	}
	h->cur ^= 1;
	return rc;
}

int
nn_noise_release(struct nn_noise *h, double *x)
{
	int rc;

	if ((rc = noise_ready(h)) != 0)
		return rc;
	/* x / gamma is exact (a power of two; an underflow is far below
	 * 1/2 and rounds to 0 either way), so is r gamma for an integer
	 * |r| < 2^51, and so is r gamma + k gamma = (r + k) gamma while
	 * |r + k| < 2^53: the value noise_add_dgauss stores. */
	if (grid_add(x, h->z[h->cur], h->d, h->inv, h->gamma) != 0)
		rc = NN_E_NOISE;
	return noise_done(h, rc);
}

int
nn_noise_release_each(struct nn_noise *h, double *x, size_t blk,
    void (*each)(void *arg, double *x, size_t lo, size_t hi), void *arg)
{
	const double *z;
	int rc;

	if (blk == 0)
		return NN_E_RANGE;
	if ((rc = noise_ready(h)) != 0)
		return rc;
	z = h->z[h->cur];
	/* The same values as nn_noise_release, block by block. */
	for (size_t lo = 0; lo < h->d && rc == 0; lo += blk) {
		size_t hi = h->d - lo < blk ? h->d : lo + blk;

		if (grid_add(x + lo, z + lo, hi - lo, h->inv, h->gamma) != 0)
			rc = NN_E_NOISE;
		else
			each(arg, x, lo, hi);
	}
	return noise_done(h, rc);
}

int
nn_noise_set_rng(struct nn_noise *h, struct rng *r)
{
	if (h->threaded || h->nseg != 1)
		return NN_E_RANGE;
	h->seg[0].r = r;
	return 0;
}

double
nn_noise_tv(const struct nn_noise *h)
{
	return h->tv;
}

void
nn_noise_free(struct nn_noise *h)
{
	if (h == NULL)
		return;
	if (h->threaded) {
		pthread_mutex_lock(&h->mu);
		h->stop = 1;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
		for (size_t j = 0; j < h->nseg; j++)
			if (h->seg[j].started)
				pthread_join(h->seg[j].th, NULL);
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->mu);
	}
	if (h->z[0] != NULL)
		memset(h->z[0], 0, h->d * sizeof(double));
	if (h->z[1] != NULL)
		memset(h->z[1], 0, h->d * sizeof(double));
	free(h->z[0]);
	free(h->z[1]);
	noise_fast_free(h->fast);
	free(h);
}

/* ---- domain-adversarial training ---- */

int
nn_dann_init(struct nn_dann *d, const struct nn_net *clf, size_t nfeat,
    const size_t *dh, size_t ndh, size_t off, size_t *end)
{
	size_t w[NN_MAX_LAYERS + 1];

	memset(d, 0, sizeof *d);
	if (nfeat == 0 || nfeat >= clf->nlayers || ndh + 1 > NN_MAX_LAYERS)
		return NN_E_RANGE;
	for (size_t l = 0; l < nfeat; l++)
		d->feat.layer[l] = clf->layer[l];
	d->feat.nlayers = nfeat;
	for (size_t l = nfeat; l < clf->nlayers; l++)
		d->head.layer[l - nfeat] = clf->layer[l];
	d->head.nlayers = clf->nlayers - nfeat;
	/* The layers of a classifier are ReLU but for the last, so F ends
	 * in a ReLU: the features are its activations. */
	w[0] = clf->layer[nfeat - 1].out;
	for (size_t l = 0; l < ndh; l++)
		w[l + 1] = dh[l];
	w[ndh + 1] = 2;
	return nn_net_init(&d->dom, w, ndh + 1, NN_ACT_IDENTITY, off, end);
}

double
nn_grl_lambda(double p, double lambda_max)
{
	p = p < 0 ? 0 : p > 1 ? 1 : p;
	return lambda_max * (2 / (1 + exp(-10 * p)) - 1);
}

int
nn_dann_ws_init(struct nn_dann_ws *ws, const struct nn_dann *d, size_t cap)
{
	size_t fw = d->feat.layer[d->feat.nlayers - 1].out;

	memset(ws, 0, sizeof *ws);
	/* nn_ws_init bounds cap * width (cap * 2^24 floats fits). */
	if (nn_ws_init(&ws->f, &d->feat, cap) != 0 ||
	    nn_ws_init(&ws->h, &d->head, cap) != 0 ||
	    nn_ws_init(&ws->d, &d->dom, cap) != 0 ||
	    (ws->gf = malloc(cap * fw * sizeof *ws->gf)) == NULL ||
	    (ws->gd = malloc(cap * fw * sizeof *ws->gd)) == NULL ||
	    (ws->dom = malloc(cap * sizeof *ws->dom)) == NULL) {
		nn_dann_ws_free(ws);
		return NN_E_NOMEM;
	}
	return 0;
}

void
nn_dann_ws_free(struct nn_dann_ws *ws)
{
	if (ws == NULL)
		return;
	nn_ws_free(&ws->f);
	nn_ws_free(&ws->h);
	nn_ws_free(&ws->d);
	free(ws->gf);
	free(ws->gd);
	free(ws->dom);
	memset(ws, 0, sizeof *ws);
}

double
nn_dann_fwd_bwd(const struct nn_dann *d, const float *param,
    struct nn_dann_ws *ws, float *x, const int32_t *y, size_t n,
    int32_t dom, double lambda, double *dloss)
{
	size_t fw = d->feat.layer[d->feat.nlayers - 1].out;
	size_t K = d->head.layer[d->head.nlayers - 1].out;
	size_t nd = d->dom.nlayers, nh = d->head.nlayers;
	float *f, nl = (float)-lambda;
	double ly = 0, ld;

	nn_forward(&d->feat, param, &ws->f, x, n);
	f = nn_output(&d->feat, &ws->f);
	/* The GRL is the identity forward: D and H read F's output. */
	nn_forward(&d->dom, param, &ws->d, f, n);
	for (size_t i = 0; i < n; i++)
		ws->dom[i] = dom;
	ld = nn_softmax_xent(nn_output(&d->dom, &ws->d), ws->dom, n, 2,
	    ws->d.g[nd - 1], NULL, NULL);
	nn_backward(&d->dom, param, &ws->d, ws->d.g[nd - 1], ws->gd);
	if (y != NULL) {
		nn_forward(&d->head, param, &ws->h, f, n);
		ly = nn_softmax_xent(nn_output(&d->head, &ws->h), y, n, K,
		    ws->h.g[nh - 1], NULL, NULL);
		nn_backward(&d->head, param, &ws->h, ws->h.g[nh - 1], ws->gf);
		/* backward through the GRL: dLy/df - lambda dLd/df */
		for (size_t i = 0; i < n * fw; i++)
			ws->gf[i] += nl * ws->gd[i];
	} else {
		for (size_t i = 0; i < n * fw; i++)
			ws->gf[i] = nl * ws->gd[i];
	}
	nn_backward(&d->feat, param, &ws->f, ws->gf, NULL);
	if (dloss != NULL)
		*dloss = ld;
	return ly;
}
