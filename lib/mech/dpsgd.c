/*
 * dpsgd.c: the DP-SGD trainer and its privacy plan (dpsgd.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpus.h"
#include "dpsgd.h"
#include "la.h"
#include "noise_fast.h"
#include "rdp.h"
#include "simd.h"
#include "tensor.h"
#include "tstream.h"
#include "uda.h"

#define THREAD_MIN 2048			/* noise dimension worth a thread */
#define NOISE_STREAMS 2			/* noise segments (and threads) of a
					 * large model: fixed, so that seeded
					 * output does not depend on the
					 * machine */

struct dpsgd;
struct assoc;
struct gmmuda;

/*
 * A stream of examples feeding every step: a dataset, how its batches
 * are drawn (Poisson at rate q with clipping and noise, or shuffled
 * batches without privacy) and how its loss reaches the parameters (the
 * fwd_bwd callback, which leaves per-example gradients in the workspaces
 * of its nets).  A classifier has one stream, the labelled rows; --mode
 * dann has two, the labelled source rows (through the feature extractor,
 * the label head and the domain classifier) and the unlabelled target
 * rows (feature extractor and domain classifier), each with its own q,
 * clip plan, noise and ledger entry when it is protected.  The noise of
 * a stream covers the parameter ranges [rlo, rhi), which must hold every
 * trained parameter its nets touch: an example's whole contribution is
 * clipped (one norm over all its nets) and noised.
 */
struct stream {
	const char *name;
	const struct dpsgd_data *dt;
	int dp;				/* clipped and noised */
	int domain;			/* dann: 0 source, 1 target */
	double q;			/* Poisson sampling rate (dp): B / the
					 * declared public size */
	uint64_t npub;			/* that size (dp) */
	size_t batch;			/* B: divides the noisy sum (dp) or the
					 * shuffled batch size */
	size_t nr, rlo[2], rhi[2];	/* the parameters its noise covers */
	size_t dim;			/* their number */
	double *pk;			/* them packed (nr > 1) */
	double (*fwd_bwd)(struct dpsgd *, struct stream *,
	    const uint64_t *rows, size_t k);
	size_t nnets;
	const struct nn_net *net[4];
	struct nn_ws *ws[4];
	struct nn_dann_ws dws;		/* dann: the workspaces of its nets */
	struct nn_clip clip;
	struct nn_noise *noise;		/* NULL: no noise (--sigma 0) */
	struct rng *nrng[NOISE_STREAMS];	/* the noise's streams */
	size_t nseg;
	double sigma, eps, tv;		/* multiplier, epsilon (or -1), TV */
	double noise_std, sens, gamma;	/* the noise plan (dp) */
	size_t cap;			/* rows per fwd_bwd call */
	uint64_t *idx;			/* batch rows, or the shuffle */
	size_t pos;			/* next shuffled row */
	float *xb;			/* gathered rows */
	int32_t *yb;
	double *sq, *wt;
	double *in_sq, *in_sqb;		/* ||x_i||^2 of the rows, of a batch */
};

/* Everything a training run reads and the buffers it reuses. */
struct dpsgd {
	const struct dpsgd_params *o;
	int mode;
	char err[256];			/* the last error's message */
	struct nn_model *m;
	const struct dpsgd_data *va;
	size_t K, lo, hi;		/* classes, trained range */
	size_t np;			/* parameters (with a domain head) */
	uint64_t steps, steps_per_epoch;
	struct stream st[2];		/* st[0]: the labelled stream */
	size_t nst;
	int dann;			/* --mode dann */
	struct nn_dann nets;		/* dann: F, H and D */
	double lambda;			/* dann, gmm-uda: the GRL coefficient */
	struct assoc *as;		/* --mode assoc */
	struct gmmuda *gu;		/* --mode gmm-uda */
	size_t nrange, rlo[2], rhi[2];	/* the ranges the optimiser moves */
	struct nn_ws ws;		/* the classifier's workspace */
	float *grad, *best;
	double *sum;
	double best_acc;
	uint64_t best_epoch, epochs_run;
};

#define ALLOC(p, n) (((p) = reallocarray(NULL, (n), sizeof *(p))) == NULL)

/* Set t's message; @return rc. */
static int
fail(struct dpsgd *t, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof t->err, fmt, ap);
	va_end(ap);
	return rc;
}

static int
nomem(struct dpsgd *t)
{
	return fail(t, PV_E_NOMEM, "out of memory");
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void
progress(const struct dpsgd_params *o, const char *what, uint64_t done,
    uint64_t total, double loss)
{
	if (o->progress != NULL)
		o->progress(o->ctx, what, done, total,
		    o->mode == DPSGD_NODP ? loss : NAN);
}

/* ---- training ---- */

static size_t
argmax(const float *z, size_t k)
{
	size_t b = 0;

	for (size_t j = 1; j < k; j++)
		if (z[j] > z[b])
			b = j;
	return b;
}

/* Accuracy and mean loss of the model on dt. */
static double
evaluate(struct dpsgd *t, const struct dpsgd_data *dt, double *loss)
{
	const struct nn_net *net = &t->m->net;
	struct stream *st = &t->st[0];
	size_t right = 0;
	double tot = 0;

	for (size_t s = 0; s < dt->n; s += st->cap) {
		size_t k = dt->n - s < st->cap ? dt->n - s : st->cap;
		float *z;

		memcpy(st->xb, dt->X + s * dt->d, k * dt->d * sizeof *st->xb);
		nn_forward(net, t->m->param, &t->ws, st->xb, k);
		z = nn_output(net, &t->ws);
		for (size_t i = 0; i < k; i++)
			right += argmax(z + i * t->K, t->K) ==
			    (size_t)dt->y[s + i];
		tot += nn_softmax_xent(z, dt->y + s, k, t->K,
		    t->ws.g[net->nlayers - 1], NULL, NULL);
	}
	if (loss != NULL)
		*loss = tot / (double)dt->n;
	return (double)right / (double)dt->n;
}

#define PF_AHEAD 2

/* Ask for the cache lines of a row of d floats (a hint only). */
static void
prefetch_row(const float *x, size_t d)
{
	for (size_t j = 0; j < d; j += 16)
		__builtin_prefetch(x + j, 0, 0);
}

/* The classifier's loss: softmax cross-entropy of the model on rows of
 * the labelled data (stream fwd_bwd). */
static double
clf_fwd_bwd(struct dpsgd *t, struct stream *st, const uint64_t *rows,
    size_t k)
{
	const struct nn_net *net = &t->m->net;
	const struct dpsgd_data *dt = st->dt;
	struct nn_ws *ws = st->ws[0];
	float *g = ws->g[net->nlayers - 1];
	double loss;

	for (size_t i = 0; i < k; i++) {
		/* The sampled rows are scattered over the data: start
		 * fetching a row ahead while this one is copied. */
		if (i + PF_AHEAD < k)
			prefetch_row(dt->X + rows[i + PF_AHEAD] * dt->d, dt->d);
		memcpy(st->xb + i * dt->d, dt->X + rows[i] * dt->d,
		    dt->d * sizeof *st->xb);
		st->yb[i] = dt->y[rows[i]];
		if (st->in_sq != NULL)
			st->in_sqb[i] = st->in_sq[rows[i]];
	}
	nn_forward(net, t->m->param, ws, st->xb, k);
	loss = nn_softmax_xent(nn_output(net, ws), st->yb, k, t->K, g, NULL,
	    NULL);
	nn_backward(net, t->m->param, ws, g, NULL);
	return loss;
}

/* The DANN losses of a stream's rows: label (source rows) and domain
 * cross-entropy through the GRL (stream fwd_bwd). */
static double
dann_fwd_bwd(struct dpsgd *t, struct stream *st, const uint64_t *rows,
    size_t k)
{
	const struct dpsgd_data *dt = st->dt;
	int labelled = st->domain == 0;
	double ly, ld;

	for (size_t i = 0; i < k; i++) {
		memcpy(st->xb + i * dt->d, dt->X + rows[i] * dt->d,
		    dt->d * sizeof *st->xb);
		if (labelled)
			st->yb[i] = dt->y[rows[i]];
		if (st->in_sq != NULL)
			st->in_sqb[i] = st->in_sq[rows[i]];
	}
	ly = nn_dann_fwd_bwd(&t->nets, t->m->param, &st->dws, st->xb,
	    labelled ? st->yb : NULL, k, st->domain, t->lambda, &ld);
	return ly + ld;
}

/*
 * g_i += (float)(x_i / b), then x_i = 0 (the sum is ready for the next
 * step).  Blocks of 8 in local arrays, a form GCC's -O2 vectoriser takes
 * (lib/ml/nn.c, VB); the division and the rounding to float are the same
 * correctly rounded operations either way, so the result is too.  When b
 * is a power of two (a batch of 256), 1 / b is exact and x_i (1 / b) is
 * the correctly rounded x_i / b as well (both round the same real
 * number), so the division becomes a multiplication with the same bits.
 */
#define VB 8

PV_CLONES static void
grad_add_clear(float *g, double *x, size_t n, double b)
{
	size_t i = 0;
	int e;

	if (frexp(b, &e) == 0.5) {
		double inv = ldexp(1.0, 1 - e);

		for (; i + VB <= n; i += VB) {
			double v[VB];
			float w[VB];

			memcpy(v, x + i, sizeof v);
			memcpy(w, g + i, sizeof w);
			for (size_t j = 0; j < VB; j++)
				w[j] += (float)(v[j] * inv);
			memcpy(g + i, w, sizeof w);
			memset(x + i, 0, sizeof v);
		}
		for (; i < n; i++) {
			g[i] += (float)(x[i] * inv);
			x[i] = 0;
		}
		return;
	}
	for (; i + VB <= n; i += VB) {
		double v[VB];
		float w[VB];

		memcpy(v, x + i, sizeof v);
		memcpy(w, g + i, sizeof w);
		for (size_t j = 0; j < VB; j++)
			w[j] += (float)(v[j] / b);
		memcpy(g + i, w, sizeof w);
		memset(x + i, 0, sizeof v);
	}
	for (; i < n; i++) {
		g[i] += (float)(x[i] / b);
		x[i] = 0;
	}
}

/* Values per block of a fused release (x, the noise, the gradient and
 * the parameters of a block stay in the first-level cache). */
#define FUSE_BLK 1024

/* A fused release: the stream's noisy sum becomes t->grad's share, and
 * the optimiser moves those parameters, block by block (fuse_block). */
struct fuse {
	struct dpsgd *t;
	struct optim *opt;
	size_t off;			/* x[0] is parameter off */
	double b;			/* the expected batch size */
};

/* Released values x[lo..hi-1]: the gradient of parameters off + lo ..
 * off + hi - 1 (cleared, then the scaled sum added, as step and
 * grad_add_clear do in separate passes: the same operations in the same
 * order per value), x cleared, and the optimiser's step on them. */
static void
fuse_block(void *arg, double *x, size_t lo, size_t hi)
{
	struct fuse *f = arg;
	float *g = f->t->grad + f->off + lo;

	memset(g, 0, (hi - lo) * sizeof *g);
	grad_add_clear(g, x + lo, hi - lo, f->b);
	optim_update(f->opt, f->t->m->param, f->t->grad, f->off + lo,
	    f->off + hi);
}

/* Add a DP-SGD stream's share of the step to t->grad (Abadi et al. 2016,
 * Algorithm 1, with Poisson sampling): the clipped sum of a Poisson
 * batch, noised, divided by the expected batch size.  With opt (a stream
 * whose noise covers one range, the whole step's range: see step), the
 * step ends here: the gradient is cleared, set and applied per block as
 * it is released. */
static int
stream_dp_add(struct dpsgd *t, struct stream *st, struct rng *r,
    struct optim *opt)
{
	size_t n = nn_poisson(r, st->dt->n, st->q, st->idx);
	double *x = st->nr == 1 ? t->sum + st->rlo[0] : st->pk;
	int rc;

	/* t->sum is zero here: calloc'ed, and every stream zeroes its
	 * ranges as it uses them (below), so no pass is spent clearing. */
	for (size_t s = 0; s < n; s += st->cap) {
		size_t k = n - s < st->cap ? n - s : st->cap;

		(void)st->fwd_bwd(t, st, st->idx + s, k);
		memset(st->sq, 0, k * sizeof *st->sq);
		/* One example's gradient spans every net its loss reaches:
		 * the norm, and so the clipping, is over all of them. */
		for (size_t j = 0; j < st->nnets; j++)
			nn_sqnorms_cached(st->net[j], st->ws[j], j == 0 &&
			    st->in_sq ? st->in_sqb : NULL, st->sq);
		nn_clip_weights(&st->clip, st->sq, k, st->wt);
		for (size_t j = 0; j < st->nnets; j++)
			if ((rc = nn_clip_sum(&st->clip, st->net[j], st->ws[j],
			    st->wt, n, t->sum)) != 0)
				return fail(t, rc, "clipped sum: %s",
				    nn_strerror(rc));
	}
	/* The noise covers every parameter the stream's examples reach,
	 * in one release: several ranges are packed first. */
	if (st->nr > 1)
		for (size_t j = 0, o = 0; j < st->nr; o += st->rhi[j] -
		    st->rlo[j], j++) {
			memcpy(x + o, t->sum + st->rlo[j], (st->rhi[j] -
			    st->rlo[j]) * sizeof *x);
			memset(t->sum + st->rlo[j], 0, (st->rhi[j] -
			    st->rlo[j]) * sizeof *t->sum);
		}
	if (opt != NULL) {
		struct fuse f = { t, opt, st->rlo[0], (double)st->batch };

		if ((rc = nn_noise_release_each(st->noise, x, FUSE_BLK,
		    fuse_block, &f)) != 0)
			return fail(t, rc, "noise: %s (nothing was released)",
			    nn_strerror(rc));
		return 0;
	}
	if (st->noise != NULL && (rc = nn_noise_release(st->noise, x)) != 0)
		return fail(t, rc, "noise: %s (nothing was released)",
		    nn_strerror(rc));
	/* Dividing by the public expected batch size (not n, which is
	 * private) is post-processing. */
	for (size_t j = 0, o = 0; j < st->nr; o += st->rhi[j] -
	    st->rlo[j], j++)
		grad_add_clear(t->grad + st->rlo[j], x + o, st->rhi[j] -
		    st->rlo[j], (double)st->batch);
	return 0;
}

/* Fisher-Yates shuffle of 0..n-1 into p. */
static void
shuffle(struct rng *r, uint64_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rng_uniform_below(r, i);
		uint64_t tmp = p[i - 1];
		p[i - 1] = p[j];
		p[j] = tmp;
	}
}

/* Add a stream's next shuffled batch without privacy: the mean gradient.
 * A pass over the data ends the permutation; the next one is drawn.
 * @return the sum of the losses; *k receives the batch size. */
static double
stream_plain_add(struct dpsgd *t, struct stream *st, struct rng *r,
    size_t *k)
{
	size_t n = st->dt->n, b;
	double loss = 0;

	if (st->pos == 0 || st->pos >= n) {
		shuffle(r, st->idx, n);
		st->pos = 0;
	}
	b = n - st->pos < st->batch ? n - st->pos : st->batch;
	for (size_t s = 0; s < b; s += st->cap) {
		size_t c = b - s < st->cap ? b - s : st->cap;

		loss += st->fwd_bwd(t, st, st->idx + st->pos + s, c);
		for (size_t j = 0; j < st->nnets; j++)
			nn_grad_sum(st->net[j], st->ws[j], 1.0f / (float)b,
			    t->grad);
	}
	st->pos += b;
	*k = b;
	return loss;
}

/* ---- adaptation without DP-SGD: --mode assoc and gmm-uda ---- */

/* The next shuffled rows of a plain stream (a new permutation when a
 * pass ends), gathered into st->xb and st->yb (when it has labels).
 * @return their number, at most st->batch. */
static size_t
next_batch(struct stream *st, struct rng *r)
{
	const struct dpsgd_data *dt = st->dt;
	size_t n = dt->n, b;
	const uint64_t *rows;

	if (st->pos == 0 || st->pos >= n) {
		shuffle(r, st->idx, n);
		st->pos = 0;
	}
	b = n - st->pos < st->batch ? n - st->pos : st->batch;
	rows = st->idx + st->pos;
	for (size_t i = 0; i < b; i++) {
		memcpy(st->xb + i * dt->d, dt->X + rows[i] * dt->d,
		    dt->d * sizeof *st->xb);
		if (dt->y != NULL)
			st->yb[i] = dt->y[rows[i]];
	}
	st->pos += b;
	return b;
}

static void
scale_rows(float *g, size_t n, float s)
{
	for (size_t i = 0; i < n; i++)
		g[i] *= s;
}

/* A net of the layers [from, to) of net (offsets and flags kept). */
static void
sub_net(struct nn_net *out, const struct nn_net *net, size_t from,
    size_t to)
{
	memset(out, 0, sizeof *out);
	out->nlayers = to - from;
	memcpy(out->layer, net->layer + from, out->nlayers * sizeof
	    *out->layer);
}

/*
 * Associative domain adaptation (Haeusser et al. 2017; paper 004,
 * section 3).  The model is split into F, its hidden layers (the
 * embedding is F's output), and H, its last layer.  A step takes a batch
 * A of labelled rows and a batch B of target rows:
 *   L = CE(H(F(A)), y) + beta1 walker + beta2 visit + beta3 cover
 * with the associative terms of lib/ml/uda.h on F(A) and F(B); the gradient
 * reaches F through both batches.
 */
struct assoc {
	struct nn_net feat, head;
	struct nn_ws wa, wb, wh;	/* F on A, F on B, H on F(A) */
	float *ga, *gb, *gc;		/* d/d embeddings: assoc on A, B;
					 * classification on A */
	double *work;
	double w[3];
	double part[3];			/* -v: the epoch's walker, visit,
					 * cover (sums over steps) */
	uint64_t nstep;
};

static int
assoc_init(struct dpsgd *t)
{
	struct assoc *as;
	const struct nn_net *net = &t->m->net;
	size_t L = net->nlayers, h = net->layer[L - 1].in;
	size_t ca = t->st[0].cap, cb = t->st[1].cap, nw;

	if ((as = calloc(1, sizeof *as)) == NULL)
		return nomem(t);
	t->as = as;
	sub_net(&as->feat, net, 0, L - 1);
	sub_net(&as->head, net, L - 1, L);
	if (nn_ws_init(&as->wa, &as->feat, ca) != 0 ||
	    nn_ws_init(&as->wb, &as->feat, cb) != 0 ||
	    nn_ws_init(&as->wh, &as->head, ca) != 0 ||
	    (nw = uda_assoc_work(ca, cb, h)) == 0 ||
	    ALLOC(as->ga, ca * h) || ALLOC(as->gc, ca * h) ||
	    ALLOC(as->gb, cb * h) || ALLOC(as->work, nw))
		return nomem(t);
	for (int i = 0; i < 3; i++)
		as->w[i] = t->o->beta[i];
	return 0;
}

static void
assoc_free(struct assoc *as)
{
	if (as == NULL)
		return;
	nn_ws_free(&as->wa);
	nn_ws_free(&as->wb);
	nn_ws_free(&as->wh);
	free(as->ga);
	free(as->gb);
	free(as->gc);
	free(as->work);
	free(as);
}

/* One associative step's gradient into t->grad.  @return the batch's
 * loss times its size (the caller divides by the examples seen). */
static int
assoc_step(struct dpsgd *t, struct rng *r, double *seen, double *loss)
{
	struct assoc *as = t->as;
	struct stream *sa = &t->st[0], *sb = &t->st[1];
	const float *p = t->m->param;
	size_t h = as->head.layer[0].in, na, nb;
	struct uda_assoc_parts parts;
	float *ea, *eb, *gz;
	double lc, la;
	int rc;

	na = next_batch(sa, r);
	nb = next_batch(sb, r);
	nn_forward(&as->feat, p, &as->wa, sa->xb, na);
	nn_forward(&as->feat, p, &as->wb, sb->xb, nb);
	ea = nn_output(&as->feat, &as->wa);
	eb = nn_output(&as->feat, &as->wb);
	/* Classification on A: the mean cross-entropy. */
	nn_forward(&as->head, p, &as->wh, ea, na);
	gz = as->wh.g[0];
	lc = nn_softmax_xent(nn_output(&as->head, &as->wh), sa->yb, na, t->K,
	    gz, NULL, NULL);
	scale_rows(gz, na * t->K, 1.0f / (float)na);
	nn_backward(&as->head, p, &as->wh, gz, as->gc);
	nn_grad_sum(&as->head, &as->wh, 1.0f, t->grad);
	/* The associative loss on both embeddings (its gradients already
	 * hold the batch means). */
	if ((rc = uda_assoc(ea, eb, na, nb, h, sa->yb, as->w, &la, &parts,
	    as->ga, as->gb, as->work)) != 0)
		return fail(t, rc, "associative loss: bad batch");
	as->part[0] += parts.walker;
	as->part[1] += parts.visit;
	as->part[2] += parts.cover;
	as->nstep++;
	for (size_t i = 0; i < na * h; i++)
		as->ga[i] += as->gc[i];
	nn_backward(&as->feat, p, &as->wa, as->ga, NULL);
	nn_grad_sum(&as->feat, &as->wa, 1.0f, t->grad);
	nn_backward(&as->feat, p, &as->wb, as->gb, NULL);
	nn_grad_sum(&as->feat, &as->wb, 1.0f, t->grad);
	*seen += (double)na;
	*loss = lc + la * (double)na;
	return 0;
}

/*
 * Source-free adaptation with a Gaussian mixture of source features
 * (paper 003, eq. 7).  The --init model is split at the feature layer
 * into the encoder E (layers 1..L) and the classifier C (the rest).  The
 * source encoder E_s and C keep the --init parameters (src); the target
 * encoder E_t starts from them and is trained, C is frozen, and a domain
 * classifier D reads features.  A step takes a batch of target rows x
 * and a batch of sampled source features z (of --source-features):
 *   E_t: beta_kd KD(C(E_s(x)), C(E_t(x)); T) + beta_im IM(C(E_t(x)))
 *        - beta_adv lambda_p Ld      (through a gradient reversal layer)
 *   D:   Ld = CE(D(z), 0) + CE(D(E_t(x)), 1)   (batch means)
 * with lambda_p Ganin's schedule from 0 to 1 and KD, IM of lib/ml/uda.h.
 */
struct gmmuda {
	struct nn_dann nets;		/* feat E_t, head C (frozen), dom D */
	float *src;			/* E_s and C: the --init parameters */
	struct nn_ws tf, th;		/* the teacher: E_s, C */
	struct nn_ws wf, wh;		/* the student: E_t, C */
	struct nn_ws dt, ds;		/* D on E_t(x), D on z */
	float *gf, *gd, *gim;		/* d/d features (2), d IM/d logits */
	int32_t *dom0, *dom1;		/* domain labels */
	double *imwork;
	double part[4];			/* -v: the epoch's KD, mean entropy,
					 * entropy of the mean, Ld (sums) */
	uint64_t nstep;
};

static int
gmm_init(struct dpsgd *t)
{
	const struct nn_dann *nets = &t->nets;
	struct gmmuda *gu;
	size_t ct = t->st[0].cap, cs = t->st[1].cap;
	size_t h = nets->feat.layer[nets->feat.nlayers - 1].out;

	if ((gu = calloc(1, sizeof *gu)) == NULL)
		return nomem(t);
	t->gu = gu;
	gu->nets = *nets;
	if (ALLOC(gu->src, t->m->nparam))
		return nomem(t);
	memcpy(gu->src, t->m->param, t->m->nparam * sizeof *gu->src);
	if (nn_ws_init(&gu->tf, &nets->feat, ct) != 0 ||
	    nn_ws_init(&gu->th, &nets->head, ct) != 0 ||
	    nn_ws_init(&gu->wf, &nets->feat, ct) != 0 ||
	    nn_ws_init(&gu->wh, &nets->head, ct) != 0 ||
	    nn_ws_init(&gu->dt, &nets->dom, ct) != 0 ||
	    nn_ws_init(&gu->ds, &nets->dom, cs) != 0 ||
	    ALLOC(gu->gf, ct * h) || ALLOC(gu->gd, ct * h) ||
	    ALLOC(gu->gim, ct * t->K) ||
	    (gu->dom0 = calloc(cs, sizeof *gu->dom0)) == NULL ||
	    ALLOC(gu->dom1, ct) || ALLOC(gu->imwork, t->K))
		return nomem(t);
	for (size_t i = 0; i < ct; i++)
		gu->dom1[i] = 1;
	return 0;
}

static void
gmm_free(struct gmmuda *gu)
{
	if (gu == NULL)
		return;
	nn_ws_free(&gu->tf);
	nn_ws_free(&gu->th);
	nn_ws_free(&gu->wf);
	nn_ws_free(&gu->wh);
	nn_ws_free(&gu->dt);
	nn_ws_free(&gu->ds);
	free(gu->src);
	free(gu->gf);
	free(gu->gd);
	free(gu->gim);
	free(gu->dom0);
	free(gu->dom1);
	free(gu->imwork);
	free(gu);
}

/* One gmm-uda step's gradient into t->grad.  @return the batch's
 * beta_kd KD + beta_im IM times its size. */
static double
gmm_step(struct dpsgd *t, struct rng *r, double *seen)
{
	const struct dpsgd_params *o = t->o;
	struct gmmuda *gu = t->gu;
	const struct nn_dann *N = &gu->nets;
	struct stream *sx = &t->st[0], *sz = &t->st[1];
	const float *p = t->m->param;
	size_t K = t->K, h = N->dom.layer[0].in, n, ns;
	size_t lh = N->head.nlayers - 1, dl = N->dom.nlayers - 1;
	float *f, *zs, *z, *gz, *g, rev;
	double kd, im, ent, div, ld;

	n = next_batch(sx, r);
	ns = next_batch(sz, r);
	/* The teacher's logits C(E_s(x)), fixed. */
	nn_forward(&N->feat, gu->src, &gu->tf, sx->xb, n);
	nn_forward(&N->head, gu->src, &gu->th, nn_output(&N->feat, &gu->tf),
	    n);
	zs = nn_output(&N->head, &gu->th);
	/* The student: distillation and information maximisation in the
	 * logits, back through the frozen C into the features. */
	nn_forward(&N->feat, p, &gu->wf, sx->xb, n);
	f = nn_output(&N->feat, &gu->wf);
	nn_forward(&N->head, p, &gu->wh, f, n);
	z = nn_output(&N->head, &gu->wh);
	gz = gu->wh.g[lh];
	kd = uda_kd(zs, z, n, K, o->kd_temp, gz);
	scale_rows(gz, n * K, (float)(o->beta_kd / (double)n));
	im = uda_im(z, n, K, gu->gim, &ent, &div, gu->imwork);
	for (size_t i = 0; i < n * K; i++)
		gz[i] += (float)o->beta_im * gu->gim[i];
	nn_backward(&N->head, p, &gu->wh, gz, gu->gf);
	/* The domain classifier on E_t(x) (domain 1), its input gradient
	 * reversed into the features, and on the samples (domain 0). */
	nn_forward(&N->dom, p, &gu->dt, f, n);
	g = gu->dt.g[dl];
	ld = nn_softmax_xent(nn_output(&N->dom, &gu->dt), gu->dom1, n, 2, g,
	    NULL, NULL) / (double)n;
	scale_rows(g, n * 2, 1.0f / (float)n);
	nn_backward(&N->dom, p, &gu->dt, g, gu->gd);
	nn_grad_sum(&N->dom, &gu->dt, 1.0f, t->grad);
	rev = (float)(o->beta_adv * t->lambda);
	for (size_t i = 0; i < n * h; i++)
		gu->gf[i] -= rev * gu->gd[i];
	nn_forward(&N->dom, p, &gu->ds, sz->xb, ns);
	g = gu->ds.g[dl];
	ld += nn_softmax_xent(nn_output(&N->dom, &gu->ds), gu->dom0, ns, 2, g,
	    NULL, NULL) / (double)ns;
	scale_rows(g, ns * 2, 1.0f / (float)ns);
	nn_backward(&N->dom, p, &gu->ds, g, NULL);
	nn_grad_sum(&N->dom, &gu->ds, 1.0f, t->grad);
	/* E_t. */
	nn_backward(&N->feat, p, &gu->wf, gu->gf, NULL);
	nn_grad_sum(&N->feat, &gu->wf, 1.0f, t->grad);
	gu->part[0] += kd / (double)n;
	gu->part[1] += ent;
	gu->part[2] += div;
	gu->part[3] += ld;
	gu->nstep++;
	*seen += (double)n;
	return o->beta_kd * kd + o->beta_im * im * (double)n;
}

/* One step: every stream adds its gradient, then the optimiser moves.
 * @return the loss of the plain streams; *seen the examples used
 * (expected counts for DP streams: actual counts are private). */
static int
step(struct dpsgd *t, struct rng *r, struct optim *opt, double *seen,
    double *lossp)
{
	struct stream *s0 = &t->st[0];
	double loss = 0;
	int rc = 0;

	/* One noised stream covering the one range the optimiser moves:
	 * its release, the gradient and the optimiser's step are one pass
	 * (stream_dp_add). */
	if (t->as == NULL && t->gu == NULL && t->nst == 1 && s0->dp &&
	    s0->noise != NULL && s0->nr == 1 && t->nrange == 1 &&
	    s0->rlo[0] == t->rlo[0] && s0->rhi[0] == t->rhi[0]) {
		if ((rc = stream_dp_add(t, s0, r, opt)) != 0)
			return rc;
		*seen += s0->q * (double)s0->dt->n;
		optim_next(opt);
		*lossp = 0;
		return 0;
	}
	for (size_t j = 0; j < t->nrange; j++)
		memset(t->grad + t->rlo[j], 0, (t->rhi[j] - t->rlo[j]) *
		    sizeof *t->grad);
	if (t->as != NULL)
		rc = assoc_step(t, r, seen, &loss);
	else if (t->gu != NULL)
		loss = gmm_step(t, r, seen);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < t->nst && !t->as && !t->gu; i++) {
		struct stream *st = &t->st[i];

		if (st->dp) {
			if ((rc = stream_dp_add(t, st, r, NULL)) != 0)
				return rc;
			*seen += st->q * (double)st->dt->n;
		} else {
			size_t k;
			loss += stream_plain_add(t, st, r, &k);
			*seen += (double)k;
		}
	}
	for (size_t j = 0; j < t->nrange; j++)
		optim_update(opt, t->m->param, t->grad, t->rlo[j], t->rhi[j]);
	optim_next(opt);
	*lossp = loss;
	return 0;
}

/* After an epoch: the validation accuracy, the best parameters so far,
 * the verbose line.  @return 1 to stop early. */
static int
end_epoch(struct dpsgd *t, uint64_t epoch, uint64_t nepochs,
    double loss, double eseen, double seen, double secs)
{
	char line[512];
	size_t k = 0;
	int stop = 0;

	t->epochs_run = epoch;
	k += (size_t)snprintf(line, sizeof line, "epoch %llu/%llu",
	    (unsigned long long)epoch, (unsigned long long)nepochs);
	/* The training loss of DP-SGD is a statistic of the private data:
	 * it is shown only without privacy. */
	if (t->mode == DPSGD_NODP)
		k += (size_t)snprintf(line + k, sizeof line - k, ", loss %.4f",
		    loss / (eseen > 0 ? eseen : 1));
	/* The adaptation terms, each a mean over the epoch's steps. */
	if (t->as != NULL && t->as->nstep > 0) {
		double ns = (double)t->as->nstep;

		k += (size_t)snprintf(line + k, sizeof line - k, " (walker "
		    "%.4f, visit %.4f, cover %.4f)", t->as->part[0] / ns,
		    t->as->part[1] / ns, t->as->part[2] / ns);
		memset(t->as->part, 0, sizeof t->as->part);
		t->as->nstep = 0;
	}
	if (t->gu != NULL && t->gu->nstep > 0) {
		double ns = (double)t->gu->nstep;

		k += (size_t)snprintf(line + k, sizeof line - k, " (kd %.4f, "
		    "entropy %.4f, diversity %.4f, domain %.4f)",
		    t->gu->part[0] / ns, t->gu->part[1] / ns,
		    t->gu->part[2] / ns, t->gu->part[3] / ns);
		memset(t->gu->part, 0, sizeof t->gu->part);
		t->gu->nstep = 0;
	}
	if (t->va != NULL) {
		double vl, acc = evaluate(t, t->va, &vl);

		k += (size_t)snprintf(line + k, sizeof line - k, ", val loss "
		    "%.4f, val accuracy %.4f", vl, acc);
		if (acc > t->best_acc || t->best_epoch == 0) {
			t->best_acc = acc;
			t->best_epoch = epoch;
			memcpy(t->best, t->m->param, t->np *
			    sizeof *t->best);
		} else if (t->o->patience &&
		    epoch - t->best_epoch >= t->o->patience) {
			stop = 1;
		}
	}
	snprintf(line + k, sizeof line - k, ", %.0f examples/s",
	    seen / (secs > 0 ? secs : 1e-9));
	if (t->o->report != NULL)
		t->o->report(t->o->ctx, line);
	return stop;
}

/* One whole training from the model's current parameters. */
static int
train(struct dpsgd *t, struct rng *r, uint64_t run, uint64_t runs)
{
	const struct dpsgd_params *o = t->o;
	struct optim_cfg oc = o->oc;
	struct optim *opt;
	uint64_t nepochs, total;
	double t0 = now(), loss = 0, seen = 0;
	int rc = 0;

	total = t->steps;
	nepochs = (total + t->steps_per_epoch - 1) / t->steps_per_epoch;
	/* Under DP the steps are round(epochs / q) and an epoch round(1 / q)
	 * steps: the few steps left over belong to the last epoch asked for,
	 * not to one more (--epochs 3 said "epoch 4/4"). */
	if (o->has_epochs && o->epochs >= 1 && ceil(o->epochs) < (double)nepochs)
		nepochs = (uint64_t)ceil(o->epochs);
	oc.total = total ? total : 1;
	if (oc.sched == OPTIM_STEP) {
		double e = ceil(o->sched_epochs * (double)t->steps_per_epoch);
		/* Never cast a double beyond uint64_t (undefined). */
		oc.every = e < 1 ? 1 : e >= 0x1p64 ? UINT64_MAX : (uint64_t)e;
	}
	if ((opt = optim_new(&oc, t->np)) == NULL)
		return nomem(t);
	t->best_epoch = 0;
	t->best_acc = 0;
	for (size_t i = 0; i < t->nst; i++)
		t->st[i].pos = 0;
	for (uint64_t s = 0, epoch = 0; s < total;) {
		uint64_t end = s + t->steps_per_epoch, es = s;
		double eseen = seen;

		if (end > total || epoch + 1 == nepochs)
			end = total;
		for (loss = 0; s < end; s++) {
			double l;

			/* Ganin's schedule: p is the progress of training,
			 * (t + 1) / T at step t of T, reaching 1 at the end. */
			if (t->dann || t->gu)
				t->lambda = nn_grl_lambda((double)(s + 1) /
				    (double)total, o->grl_max);
			if ((rc = step(t, r, opt, &seen, &l)) != 0)
				goto out;
			loss += l;
			if (runs == 1)
				progress(o, "steps", s + 1, total, loss /
				    (double)(s + 1 - es));
		}
		epoch++;
		if (runs == 1 && end_epoch(t, epoch, nepochs, loss,
		    seen - eseen, seen, now() - t0))
			break;
	}
	if (runs > 1)
		progress(o, "trainings", run + 1, runs, NAN);
	else
		progress(o, NULL, 0, 0, NAN);
	if (t->va != NULL && t->best_epoch > 0)
		memcpy(t->m->param, t->best, t->np * sizeof *t->best);
out:
	optim_free(opt);
	return rc;
}

int
dpsgd_ledger_entry(const struct dpsgd *t, size_t i, struct ledger_entry *e)
{
	const struct dpsgd_params *o = t->o;
	const struct stream *st = &t->st[i];
	const double *ord;
	double reps = o->audit ? (double)o->audit : 1;
	size_t no;
	int rc;

	snprintf(e->mechanism, sizeof e->mechanism, "%s", DPSGD_MECHANISM);
	e->relation = LEDGER_ADD_REMOVE;
	ord = rdp_default_orders(&no);
	e->norders = no;
	for (size_t j = 0; j < no; j++)
		e->orders[j] = ord[j];
	if ((rc = rdp_sgm(st->q, st->sigma, ord, no, e->rdp)) != 0)
		return rc;
	for (size_t j = 0; j < no; j++)
		e->rdp[j] *= (double)t->steps * reps;
	/* The TV distance and the epsilon it is charged at go in the
	 * entry: the accountant charges it again at the epsilon of the
	 * composition when that is larger (lib/dp/ledger.c). */
	if (st->tv > 0) {
		e->tv = st->tv;
		e->tv_epsilon = noise_fast_tv_epsilon(st->eps);
		e->delta = noise_fast_delta_charge(e->tv_epsilon, e->tv);
	}
#define PARAM(k, v) if (ts_meta_setf(&e->params, k, "%.17g", \
	    (double)(v)) != 0) return PV_E_NOMEM
	PARAM("q", st->q);
	PARAM("sigma", st->sigma);
	PARAM("noise_std", st->noise_std);
	PARAM("steps", t->steps);
	PARAM("clip", o->clip);
	PARAM("l2_sensitivity", st->sens);
	PARAM("grid", st->gamma);
	PARAM("public_records", st->npub);
	if (o->audit)
		PARAM("audit_releases", reps);
	if (o->unsafe)
		PARAM("unsafe_test_no_clip", 1);
#undef PARAM
	return 0;
}

/* ---- the privacy plan ---- */

/* Solve the training length or the noise multiplier for the budget,
 * then the noise scale.  The fast sampler's total variation is charged
 * to delta (noise_fast.h), so the accountant converts the RDP curve at
 * delta minus that charge: the solve is repeated at the reduced delta
 * until the charge of the plan it gives is covered. */
static int
plan_dp(struct dpsgd *t, struct stream *st)
{
	const struct dpsgd_params *o = t->o;
	uint64_t runs = o->audit ? o->audit : 1;
	double charge = 0, dl = o->delta;
	int rc, it;

	for (it = 0; it < 8; it++) {
		double tau, next;

		dl = o->delta - charge;
		if (o->has_delta && !(dl > 0))
			return fail(t, PV_E_OPTION, "--delta %g is below the "
			    "noise sampler's charge %g", o->delta, charge);
		if (o->has_eps && !o->has_sigma) {
			rc = rdp_sgm_solve_sigma(st->q, t->steps * runs, dl,
			    o->epsilon, NULL, 0, RDP_CONV_IMPROVED, &st->sigma);
			if (rc != 0)
				return fail(t, PV_E_OPTION, "no noise multiplier "
				    "up to 1e6 meets epsilon %g in %llu steps: "
				    "%s", o->epsilon,
				    (unsigned long long)t->steps,
				    rdp_strerror(rc));
		} else if (o->has_eps) {
			uint64_t ns;
			rc = rdp_sgm_solve_steps(st->q, st->sigma, dl, o->epsilon,
			    NULL, 0, RDP_CONV_IMPROVED, &ns);
			if (rc != 0)
				return fail(t, rc, "accountant: %s",
				    rdp_strerror(rc));
			ns /= runs;
			if (ns == 0)
				return fail(t, PV_E_OPTION, "--sigma %g: not even "
				    "one step fits epsilon %g", st->sigma,
				    o->epsilon);
			t->steps = ns > DPSGD_MAX_STEPS ? DPSGD_MAX_STEPS : ns;
		}
		if (t->mode != DPSGD_DP)
			return 0;
		/* The grid rounding of the noise is exact while |sum /
		 * gamma| < 2^51; the sum is at most (N + 1) C and gamma >
		 * s 2^-25 >= sigma C 2^-25.  N is the declared size (the
		 * refusal must not depend on the private count); a batch
		 * beyond it, possible only when the declaration is wrong,
		 * makes nn_noise_release fail: nothing is released. */
		if (st->sigma <= ldexp((double)st->npub + 1, -26))
			return fail(t, PV_E_OPTION, "--sigma %g is too small for "
			    "%llu declared records (at least %g)", st->sigma,
			    (unsigned long long)st->npub,
			    ldexp((double)st->npub + 1, -26));
		st->noise_std = nn_noise_std(st->sigma, o->clip, st->dim,
		    &st->sens, &st->gamma);
		if (isnan(st->noise_std))
			return fail(t, PV_E_OPTION, "--sigma %g, --clip %g: no "
			    "noise scale", st->sigma, o->clip);
		if (o->exact || !o->has_eps)
			break;
		tau = noise_fast_tv_per_sample(ceil(st->noise_std / st->gamma)) *
		    (double)t->steps * (double)st->dim * (double)runs;
		next = noise_fast_delta_charge(noise_fast_tv_epsilon(
		    o->epsilon), tau);
		if (!(next >= 0))
			return fail(t, PV_E_NUMERIC, "noise: no TV bound");
		if (next <= charge)
			break;
		charge = next;
	}
	if (it == 8)
		return fail(t, PV_E_NUMERIC, "the privacy plan does not settle");
	if (o->has_delta && rdp_sgm_epsilon(st->q, st->sigma, t->steps * runs,
	    dl, NULL, 0, RDP_CONV_IMPROVED, &st->eps, NULL) != 0)
		st->eps = -1;
	return 0;
}

static int
sub_rng(struct dpsgd *t, const char *item, struct rng **r)
{
	int rc = t->o->seeded ? rng_new_seeded(r, t->o->seed, item) :
	    rng_new(r);

	if (rc != 0)
		return fail(t, PV_E_ENTROPY, "no secure randomness: %s",
		    rng_strerror(rc));
	return 0;
}

/* The rows a stream draws per step, its clip plan and its buffers
 * (after the privacy plan). */
static int
stream_alloc(struct dpsgd *t, struct stream *st)
{
	const struct dpsgd_params *o = t->o;
	const struct dpsgd_data *dt = st->dt;
	int rc;

	if (st->dp) {
		/* From the declared size: the plan (the clip bound's float
		 * margin, the rows per call) is public.  Its bound on a
		 * batch's size must hold, though: when the input has more
		 * rows than declared (a false declaration, warned about),
		 * the true count bounds the batches. */
		double expected = st->q * (double)st->npub;
		double e = ceil(expected + 10 * sqrt(expected) + 16);
		uint64_t bound = dt->n > st->npub ? dt->n : st->npub;
		size_t tmax = 0;

		/* Convolutions widen the float margin (nn.c). */
		for (size_t j = 0; j < st->nnets; j++)
			if (nn_net_tmax(st->net[j]) > tmax)
				tmax = nn_net_tmax(st->net[j]);
		st->cap = e > DPSGD_CAP_MAX ? DPSGD_CAP_MAX :
		    e < DPSGD_CAP_MIN ? DPSGD_CAP_MIN : (size_t)e;
		if ((rc = nn_clip_plan_conv(&st->clip, o->clip, expected,
		    bound, st->cap, tmax)) != 0)
			return fail(t, rc, "clip plan: %s", nn_strerror(rc));
		st->clip.unclipped = o->unsafe;
	} else {
		st->cap = o->batch < DPSGD_CAP_MIN ? DPSGD_CAP_MIN :
		    o->batch > DPSGD_CAP_MAX ? DPSGD_CAP_MAX : o->batch;
	}
	if (t->dann && nn_dann_ws_init(&st->dws, &t->nets, st->cap) != 0)
		return nomem(t);
	if (ALLOC(st->xb, st->cap * dt->d) || ALLOC(st->yb, st->cap) ||
	    ALLOC(st->sq, st->cap) || ALLOC(st->wt, st->cap) ||
	    ALLOC(st->idx, dt->n))
		return nomem(t);
	if (st->nr > 1 && ALLOC(st->pk, st->dim))
		return nomem(t);
	if (st->dp && !t->m->net.layer[0].frozen) {
		/* The rows of X never change: their norms (the first layer's
		 * part of every ghost norm) are computed once. */
		if (ALLOC(st->in_sq, dt->n) || ALLOC(st->in_sqb, st->cap))
			return nomem(t);
		for (size_t i = 0; i < dt->n; i++)
			st->in_sq[i] = nn_row_sqnorm(dt->X + i * dt->d, dt->d);
	}
	return 0;
}

/* The noise of a DP stream: a large model's noise comes from
 * NOISE_STREAMS workers, each with its own random stream (work items
 * item, item/1, ...).  *thr is set to 1 when it is threaded. */
static int
stream_noise(struct dpsgd *t, struct stream *st, uint64_t runs,
    const char *item, int *thr)
{
	int rc;

	*thr = st->dim >= THREAD_MIN && runs == 1;
	for (size_t j = 0; j < (*thr ? NOISE_STREAMS : 1); j++) {
		char name[96];

		if (j == 0)
			snprintf(name, sizeof name, "%s", item);
		else
			snprintf(name, sizeof name, "%s/%zu", item, j);
		if ((rc = sub_rng(t, name, &st->nrng[j])) != 0)
			return rc;
		st->nseg = j + 1;
	}
	/* The segments (and so the values) do not depend on the machine;
	 * only who draws them does: workers when there is a CPU for them,
	 * else the training thread itself, between steps, without the
	 * hand-offs that cost about 3% of a logistic regression's step on
	 * one CPU. */
	if ((rc = nn_noise_new(&st->noise, st->nrng, st->nseg, st->noise_std,
	    st->dim, t->o->exact, *thr && pv_cpus() > 1)) != 0)
		return fail(t, rc, "noise: %s", nn_strerror(rc));
	return 0;
}

static void
stream_free(struct stream *st)
{
	nn_noise_free(st->noise);
	for (size_t j = 0; j < st->nseg; j++)
		rng_free(st->nrng[j]);
	nn_dann_ws_free(&st->dws);
	free(st->xb);
	free(st->yb);
	free(st->sq);
	free(st->wt);
	free(st->idx);
	free(st->pk);
	free(st->in_sq);
	free(st->in_sqb);
}

/* ---- the interface ---- */

void
dpsgd_defaults(struct dpsgd_params *p)
{
	memset(p, 0, sizeof *p);
	p->batch = 256;
	p->clip = 1;
	p->grl_max = 1;
	p->beta[0] = DPSGD_BETA_WALKER;
	p->beta[1] = DPSGD_BETA_VISIT;
	p->beta[2] = DPSGD_BETA_COVER;
	p->kd_temp = DPSGD_KD_TEMP;
	p->beta_adv = 1;
	p->beta_kd = 1;
	p->beta_im = 1;
	optim_defaults(&p->oc);
}

const char *
dpsgd_check_params(const struct dpsgd_params *p)
{
	int dp = p->mode != DPSGD_NODP;

	if (p->mode < DPSGD_DP || p->mode > DPSGD_NODP)
		return "unknown training mode";
	if (p->adapt < DPSGD_CLASSIFY || p->adapt > DPSGD_GMM)
		return "unknown adaptation mode";
	if (p->batch < 1 || p->batch > DPSGD_MAX_BATCH)
		return "the batch size is out of range";
	if (!(p->clip >= NN_CLIP_MIN && p->clip <= NN_CLIP_MAX))
		return "the clip bound is out of range";
	if (p->has_epochs && !(p->epochs > 0 && p->epochs <= DPSGD_MAX_EPOCHS))
		return "the number of epochs is out of range";
	if (p->audit > DPSGD_MAX_AUDIT)
		return "too many audit trainings";
	if (!(p->oc.lr > 0) || !(p->oc.momentum >= 0 && p->oc.momentum < 1) ||
	    !(p->oc.weight_decay >= 0))
		return "an optimiser setting is out of range";
	if (p->adapt == DPSGD_ASSOC || p->adapt == DPSGD_GMM) {
		/* Their losses couple the examples of a batch: clipping one
		 * example's gradient does not bound its influence. */
		if (dp)
			return "assoc and gmm-uda train without DP-SGD";
		if (p->batch > DPSGD_ASSOC_MAX_BATCH)
			return "the batch of assoc or gmm-uda is too large";
		if (!(p->kd_temp > 0))
			return "the distillation temperature is not positive";
	}
	if (!dp) {
		if (!p->has_epochs)
			return "training without DP-SGD needs the epochs";
		if (p->has_eps || p->has_sigma || p->audit || p->unsafe)
			return "training without DP-SGD takes no privacy "
			    "parameter";
		return NULL;
	}
	if (p->adapt == DPSGD_DANN && (p->protect < DPSGD_PROTECT_SOURCE ||
	    p->protect > DPSGD_PROTECT_BOTH))
		return "DANN with DP-SGD protects the source, the target or "
		    "both";
	if (p->has_eps && !(p->epsilon > 0 && isfinite(p->epsilon)))
		return "epsilon is not positive";
	if (p->has_eps && !p->has_delta)
		return "epsilon needs delta";
	if (p->has_delta && !(p->delta > 0 && p->delta < 1))
		return "delta is not in (0, 1)";
	if (!p->has_eps && !p->has_sigma)
		return "DP-SGD needs epsilon and delta, or sigma";
	if (p->has_sigma && !(p->sigma >= 0 && isfinite(p->sigma)))
		return "sigma is negative";
	if ((p->mode == DPSGD_CLIP_ONLY) != (p->has_sigma && p->sigma == 0))
		return "clipping without noise is sigma 0";
	if (p->mode == DPSGD_CLIP_ONLY && (p->has_eps || p->audit))
		return "sigma 0 adds no noise: no epsilon, no audit";
	if (!p->has_epochs && !(p->has_eps && p->has_sigma))
		return "DP-SGD needs the epochs, or epsilon, delta and sigma";
	if (p->has_eps && p->has_sigma && p->has_epochs)
		return "epsilon, sigma and epochs over-determine the training";
	for (int i = 0; i < 2; i++) {
		int need = i == 0 ? p->adapt != DPSGD_DANN ||
		    (p->protect & DPSGD_PROTECT_SOURCE) :
		    p->adapt == DPSGD_DANN && (p->protect & DPSGD_PROTECT_TARGET);

		if (need && (p->public_records[i] == 0 ||
		    p->public_records[i] > NN_MAX_RECORDS))
			return "a protected input needs its declared public "
			    "size, at most NN_MAX_RECORDS";
	}
	return NULL;
}

/* The classifier's stream, or DANN's, assoc's and gmm-uda's two. */
static void
set_streams(struct dpsgd *t)
{
	const struct dpsgd_params *o = t->o;
	struct stream *st = t->st;

	st[0].name = t->dann ? "source" : o->adapt == DPSGD_GMM ? "target" :
	    "labelled";
	st[0].dp = t->mode != DPSGD_NODP && (!t->dann ||
	    (o->protect & DPSGD_PROTECT_SOURCE));
	st[0].nr = 1;
	st[0].rlo[0] = t->lo;
	st[0].rhi[0] = t->hi;
	if (o->adapt == DPSGD_ASSOC || o->adapt == DPSGD_GMM) {
		/* Two plain streams, read by assoc_step or gmm_step: the
		 * labelled rows and the target rows, or the target rows and
		 * the sampled source features. */
		st[1].name = o->adapt == DPSGD_GMM ? "samples" : "target";
		if (o->adapt == DPSGD_GMM) {
			/* The optimiser moves E_t and D, never C. */
			t->rhi[0] = t->nets.head.layer[0].off;
			t->rlo[1] = t->m->nparam;
			t->rhi[1] = t->np;
			t->nrange = 2;
		}
	} else if (!t->dann) {
		st[0].fwd_bwd = clf_fwd_bwd;
		st[0].nnets = 1;
		st[0].net[0] = &t->m->net;
		st[0].ws[0] = &t->ws;
	} else {
		size_t fend = t->nets.head.layer[0].off;

		st[0].fwd_bwd = dann_fwd_bwd;
		st[0].nnets = 3;
		st[0].net[0] = &t->nets.feat;
		st[0].net[1] = &t->nets.head;
		st[0].net[2] = &t->nets.dom;
		st[0].ws[0] = &st[0].dws.f;
		st[0].ws[1] = &st[0].dws.h;
		st[0].ws[2] = &st[0].dws.d;
		/* Target rows reach the trained layers of F and all of D,
		 * not H. */
		st[1].name = "target";
		st[1].dp = t->mode != DPSGD_NODP &&
		    (o->protect & DPSGD_PROTECT_TARGET);
		st[1].domain = 1;
		st[1].nr = 0;
		if (t->lo < fend) {
			st[1].rlo[st[1].nr] = t->lo;
			st[1].rhi[st[1].nr++] = fend;
		}
		st[1].rlo[st[1].nr] = t->m->nparam;
		st[1].rhi[st[1].nr++] = t->np;
		st[1].fwd_bwd = dann_fwd_bwd;
		st[1].nnets = 2;
		st[1].net[0] = &t->nets.feat;
		st[1].net[1] = &t->nets.dom;
		st[1].ws[0] = &st[1].dws.f;
		st[1].ws[1] = &st[1].dws.d;
	}
}

int
dpsgd_new(struct dpsgd **out, const struct dpsgd_params *p,
    struct nn_model *m, const struct nn_dann *nets, size_t np, size_t K,
    const struct dpsgd_data *train_data, const struct dpsgd_data *side,
    const struct dpsgd_data *val)
{
	struct dpsgd *t;

	if ((*out = t = calloc(1, sizeof *t)) == NULL)
		return PV_E_NOMEM;
	t->o = p;
	t->mode = p->mode;
	t->dann = p->adapt == DPSGD_DANN;
	t->m = m;
	t->K = K;
	t->np = np;
	t->va = val;
	if (nets != NULL)
		t->nets = *nets;
	t->lo = m->net.layer[nn_first_trained(&m->net)].off;
	t->hi = np;
	t->nst = p->adapt != DPSGD_CLASSIFY ? 2 : 1;
	t->nrange = 1;
	t->rlo[0] = t->lo;
	t->rhi[0] = t->hi;
	t->st[0].dt = train_data;
	t->st[1].dt = side;
	set_streams(t);
	for (size_t i = 0; i < t->nst; i++) {
		struct stream *s = &t->st[i];

		s->dim = 0;
		for (size_t j = 0; j < s->nr; j++)
			s->dim += s->rhi[j] - s->rlo[j];
		s->batch = p->batch;
		s->sigma = p->sigma;
		s->eps = -1;
		if (!s->dp)
			continue;
		/* q from the declared size only: the true count N is
		 * private (add/remove neighbours) and reaches no output.
		 * Poisson sampling at rate q is private whatever N is; a
		 * wrong declaration costs utility (the expected batch is q N,
		 * not B), not privacy. */
		s->npub = p->public_records[i];
		s->q = p->batch >= s->npub ? 1 :
		    (double)p->batch / (double)s->npub;
	}
	return 0;
}

int
dpsgd_plan(struct dpsgd *t)
{
	const struct dpsgd_params *o = t->o;
	struct stream *st = t->st;
	int rc;

	for (size_t i = 0; i < t->nst; i++)
		if (st[i].dp && st[i].dt->n > NN_MAX_RECORDS)
			return fail(t, PV_E_RANGE, "%zu records exceed the "
			    "DP-SGD limit of %llu", st[i].dt->n,
			    (unsigned long long)NN_MAX_RECORDS);
	/* The length of training, from the labelled stream, and the privacy
	 * plan of each protected stream: q, sigma, the noise scale. */
	if (st[0].dp) {
		double e = round(1 / st[0].q);

		t->steps_per_epoch = e < 1 ? 1 : (uint64_t)e;
		if (o->has_epochs) {
			e = round(o->epochs / st[0].q);
			if (e > (double)DPSGD_MAX_STEPS)
				return fail(t, PV_E_OPTION, "--epochs %g: more "
				    "than %llu steps", o->epochs,
				    (unsigned long long)DPSGD_MAX_STEPS);
			t->steps = e < 1 ? 1 : (uint64_t)e;
		}
	} else {
		double e;

		t->steps_per_epoch = (st[0].dt->n + o->batch - 1) / o->batch;
		e = ceil(o->epochs * (double)t->steps_per_epoch);
		if (e > (double)DPSGD_MAX_STEPS)
			return fail(t, PV_E_OPTION, "--epochs %g: more than %llu "
			    "steps", o->epochs,
			    (unsigned long long)DPSGD_MAX_STEPS);
		t->steps = (uint64_t)e;
	}
	for (size_t i = 0; i < t->nst; i++)
		if (st[i].dp && (o->has_eps || t->mode == DPSGD_DP) &&
		    (rc = plan_dp(t, &st[i])) != 0)
			return rc;
	for (size_t i = 0; i < t->nst; i++)
		if ((rc = stream_alloc(t, &st[i])) != 0)
			return rc;
	if (o->adapt == DPSGD_ASSOC && (rc = assoc_init(t)) != 0)
		return rc;
	if (o->adapt == DPSGD_GMM && (rc = gmm_init(t)) != 0)
		return rc;
	if (nn_ws_init(&t->ws, &t->m->net, st[0].cap) != 0 ||
	    (t->grad = calloc(t->np, sizeof *t->grad)) == NULL ||
	    (t->sum = calloc(t->np, sizeof *t->sum)) == NULL ||
	    (t->va != NULL && ALLOC(t->best, t->np)))
		return nomem(t);
	return 0;
}

/* The noise of training i of an audit, from its own work item (with
 * DANN, named after the domain, as the streams of one training are). */
static int
audit_noise(struct dpsgd *t, uint64_t i, struct rng *ni[2])
{
	char item[96];
	int rc;

	for (size_t j = 0; j < t->nst; j++) {
		if (t->st[j].noise == NULL)
			continue;
		if (t->dann)
			snprintf(item, sizeof item, DPSGD_WORK_ITEM
			    "/audit/%llu/noise/%s", (unsigned long long)i,
			    t->st[j].name);
		else
			snprintf(item, sizeof item, DPSGD_WORK_ITEM
			    "/audit/%llu/noise", (unsigned long long)i);
		if ((rc = sub_rng(t, item, &ni[j])) != 0)
			return rc;
		if (nn_noise_set_rng(t->st[j].noise, ni[j]) != 0)
			return fail(t, PV_E_USAGE, "noise: threaded handle");
	}
	return 0;
}

int
dpsgd_train(struct dpsgd *t, struct rng *rng, float *all)
{
	const struct dpsgd_params *o = t->o;
	struct nn_model *m = t->m;
	uint64_t runs = o->audit ? o->audit : 1;
	int zero = m->net.nlayers == 1, thr = 0, rc = 0;
	float *init;

	for (size_t i = 0; i < t->nst && t->mode == DPSGD_DP; i++) {
		char item[64];
		int th;

		if (!t->st[i].dp)
			continue;
		if (t->dann)
			snprintf(item, sizeof item, DPSGD_WORK_ITEM
			    "/noise/%s", t->st[i].name);
		else
			snprintf(item, sizeof item, DPSGD_WORK_ITEM "/noise");
		if ((rc = stream_noise(t, &t->st[i], runs, item, &th)) != 0)
			return rc;
		thr |= th;
	}
	/* The noise workers take the other cores: more BLAS threads would
	 * only oversubscribe them. */
	if (thr)
		la_set_threads(1);
	if (ALLOC(init, t->np))
		return nomem(t);
	memcpy(init, m->param, t->np * sizeof *init);
	for (uint64_t i = 0; i < runs && rc == 0; i++) {
		struct rng *ri = rng, *ni[2] = { NULL, NULL };
		char item[96];

		if (o->audit && o->seeded) {
			snprintf(item, sizeof item, DPSGD_WORK_ITEM
			    "/audit/%llu", (unsigned long long)i);
			if ((rc = sub_rng(t, item, &ri)) != 0)
				break;
			rc = audit_noise(t, i, ni);
		}
		if (rc == 0) {
			memcpy(m->param, init, t->np * sizeof *init);
			/* Logistic regression starts at 0 (a convex problem);
			 * an MLP from He/Glorot weights; a given model as
			 * given (p->init).  A domain classifier always starts
			 * afresh. */
			if (!o->init)
				nn_init_params(&m->net, m->param, ri, zero);
			if (t->dann)
				nn_init_params(&t->nets.dom, m->param, ri, 0);
			if (t->gu != NULL)
				nn_init_params(&t->gu->nets.dom, m->param, ri,
				    0);
			rc = train(t, ri, i, runs);
		}
		if (rc == 0 && o->audit)
			memcpy(all + i * t->np, m->param, t->np * sizeof *all);
		if (ri != rng)
			rng_free(ri);
		for (size_t j = 0; j < 2; j++)
			rng_free(ni[j]);
	}
	if (rc == 0 && o->audit)
		progress(o, NULL, 0, 0, NAN);
	for (size_t i = 0; i < t->nst; i++) {
		if (t->st[i].noise != NULL) {
			t->st[i].tv = nn_noise_tv(t->st[i].noise);
			nn_noise_free(t->st[i].noise);
			t->st[i].noise = NULL;
		}
	}
	free(init);
	return rc;
}

/* ---- the model and the output ---- */

int
dpsgd_add_domain(struct nn_model *m, struct nn_dann *nets, size_t L,
    const size_t *dh, size_t ndh, size_t *np)
{
	size_t end;
	float *p;
	int rc;

	if ((rc = nn_dann_init(nets, &m->net, L, dh, ndh, m->nparam,
	    &end)) != 0)
		return rc;
	if ((p = reallocarray(m->param, end, sizeof *p)) == NULL)
		return PV_E_NOMEM;
	memset(p + m->nparam, 0, (end - m->nparam) * sizeof *p);
	m->param = p;
	*np = end;
	return 0;
}

int
dpsgd_write_audit(struct ts_writer *w, const struct nn_net *net,
    const char *prefix, const float *all, size_t np, uint64_t runs)
{
	int rc;

	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		size_t r, c;

		nn_layer_wdims(L, &r, &c);
		for (int part = 0; part < 2 && r > 0; part++) {
			size_t len = part ? c : r * c;
			size_t off = L->off + (part ? r * c : 0);
			uint64_t dims[2] = { runs, len };
			struct tensor hdr;
			char name[64];

			snprintf(name, sizeof name, "%s/%s%zu/%s", prefix,
			    model_layer_name(L), l + 1,
			    part ? "b" : "W");
			if ((rc = tensor_init(&hdr, name, TS_F32, 2, dims)) != 0)
				return rc;
			rc = ts_write_begin(w, &hdr);
			for (uint64_t i = 0; i < runs && rc == 0; i++)
				rc = ts_write_rows(w, all + i * np + off, 1);
			if (rc == 0)
				rc = ts_write_end(w);
			tensor_free(&hdr);
			if (rc != 0)
				return rc;
		}
	}
	return 0;
}

int
dpsgd_mark_raw(const struct dpsgd *t, struct ts_meta *meta,
    const struct dpsgd_meta *mi, char *err, size_t errlen)
{
	/* Rows of datasets that are not protected here now feed an
	 * aggregate (the model): every raw mark but those of the protected
	 * streams becomes aggregate, and so do the datasets of streams
	 * trained without privacy (and all of them without noise or
	 * clipping: the caller marks those not private). */
	for (size_t i = 0; i < meta->n; i++) {
		const char *k = meta->kv[i].key;
		int prot = 0;

		if (strncmp(k, "dp.raw.", 7) != 0)
			continue;
		for (size_t j = 0; j < t->nst; j++)
			prot |= t->st[j].dp && mi->dataset[j] != NULL &&
			    strcmp(k + 7, mi->dataset[j]) == 0;
		if (!prot && ledger_mark_raw(meta, k + 7, LEDGER_AGGREGATE,
		    err, errlen) != 0)
			return -1;
	}
	return 0;
}

static const char *
protect_name(int protect)
{
	return protect == DPSGD_PROTECT_BOTH ? "both" :
	    protect == DPSGD_PROTECT_SOURCE ? "source" :
	    protect == DPSGD_PROTECT_TARGET ? "target" : "none";
}

int
dpsgd_put_meta(const struct dpsgd *t, struct ts_meta *meta,
    const struct dpsgd_meta *mi)
{
	const struct dpsgd_params *o = t->o;
	char darch[MODEL_MAX_ARCH], pre[32], k[96];
	struct nn_model dm;

#define SET(key, v) if (ts_meta_set(meta, key, v) != 0) return PV_E_NOMEM
#define NUM(key, v) if (ts_meta_setf(meta, key, "%.17g", (double)(v)) \
	    != 0) return PV_E_NOMEM
	SET("train.mode", t->mode == DPSGD_DP ? "dp_sgd" :
	    t->mode == DPSGD_CLIP_ONLY ? "clip_only" : "no_dp");
	SET("train.optimizer", o->oc.kind == OPTIM_ADAM ? "adam" : "sgd");
	NUM("train.lr", o->oc.lr);
	SET("train.lr_schedule", mi->lr_schedule ? mi->lr_schedule :
	    "constant");
	if (o->oc.kind == OPTIM_SGD)
		NUM("train.momentum", o->oc.momentum);
	NUM("train.weight_decay", o->oc.weight_decay);
	NUM("train.batch", o->batch);
	NUM("train.freeze", mi->freeze);
	NUM("train.epochs_run", t->epochs_run);
	if (o->has_epochs)
		NUM("train.epochs", o->epochs);
	memset(&dm, 0, sizeof dm);
	dm.net = t->nets.dom;
	if (o->adapt == DPSGD_DANN) {
		model_arch(&dm, darch, sizeof darch);
		SET("train.adapt", "dann");
		SET("train.protect", protect_name(o->protect));
		SET("train.domain_arch", darch);
		NUM("train.grl_max", o->grl_max);
		NUM("train.steps", t->steps);
	}
	if (o->adapt == DPSGD_ASSOC) {
		SET("train.adapt", "assoc");
		NUM("train.beta_walker", o->beta[0]);
		NUM("train.beta_visit", o->beta[1]);
		NUM("train.beta_cover", o->beta[2]);
		NUM("train.labelled_rows", t->st[0].dt->n);
		NUM("train.steps", t->steps);
	}
	if (o->adapt == DPSGD_GMM) {
		model_arch(&dm, darch, sizeof darch);
		SET("train.adapt", "gmm-uda");
		SET("train.domain_arch", darch);
		NUM("train.feature_layer", t->nets.feat.nlayers);
		NUM("train.kd_temp", o->kd_temp);
		NUM("train.beta_adv", o->beta_adv);
		NUM("train.beta_kd", o->beta_kd);
		NUM("train.beta_im", o->beta_im);
		NUM("train.steps", t->steps);
	}
	if (t->mode != DPSGD_NODP) {
		NUM("train.steps", t->steps);
		NUM("train.clip", o->clip);
	}
	for (size_t i = 0; i < t->nst; i++) {
		const struct stream *s = &t->st[i];

		if (!s->dp)
			continue;
		/* A classifier's keys have no stream part. */
		snprintf(pre, sizeof pre, "train.%s%s", t->dann ? s->name : "",
		    t->dann ? "." : "");
#define KEY(key) (snprintf(k, sizeof k, "%s%s", pre, key), k)
		if (t->dann && mi->dataset[i] != NULL)
			SET(KEY("dataset"), mi->dataset[i]);
		NUM(KEY("q"), s->q);
		NUM(KEY("sigma"), s->sigma);
		if (t->mode == DPSGD_DP) {
			NUM(KEY("noise_std"), s->noise_std);
			if (s->eps >= 0) {
				NUM(KEY("epsilon"), s->eps);
				NUM(KEY("delta"), o->delta);
			}
		}
#undef KEY
	}
	if (t->mode == DPSGD_DP)
		SET("train.noise", o->exact ? "exact" : "fast");
	if (t->va != NULL) {
		NUM("train.best_epoch", t->best_epoch);
		NUM("train.val_accuracy", t->best_acc);
	}
#undef SET
#undef NUM
	return 0;
}

void
dpsgd_stream_plan(const struct dpsgd *t, size_t i, struct dpsgd_plan *out)
{
	const struct stream *st = &t->st[i];

	memset(out, 0, sizeof *out);
	out->name = st->name;
	out->dp = st->dp;
	out->npub = st->npub;
	out->q = st->q;
	out->sigma = st->sigma;
	out->noise_std = st->noise_std;
	out->sens = st->sens;
	out->gamma = st->gamma;
	out->eps = st->eps;
	out->tv = st->tv;
	out->clip_row = st->clip.clip_row;
	out->release = st->dp && t->mode == DPSGD_DP;
	out->private_for = out->release && !t->o->unsafe;
}

void
dpsgd_summary(const struct dpsgd *t, struct dpsgd_summary *out)
{
	out->nstreams = t->nst;
	out->nparam = t->np;
	out->steps = t->steps;
	out->steps_per_epoch = t->steps_per_epoch;
	out->epochs_run = t->epochs_run;
	out->best_epoch = t->best_epoch;
	out->best_acc = t->best_acc;
}

const char *
dpsgd_errmsg(const struct dpsgd *t)
{
	return t != NULL ? t->err : "out of memory";
}

void
dpsgd_free(struct dpsgd *t)
{
	if (t == NULL)
		return;
	nn_ws_free(&t->ws);
	assoc_free(t->as);
	gmm_free(t->gu);
	for (size_t i = 0; i < t->nst; i++)
		stream_free(&t->st[i]);
	free(t->grad);
	free(t->sum);
	free(t->best);
	free(t);
}
