/*
 * nn.h: dense neural networks in single precision, and the pieces of
 * DP-SGD (Abadi et al. 2016): Poisson sampling, per-example gradient
 * norms without per-example gradients, clipped sums whose sensitivity is
 * proven despite floating point, and noise on a grid.
 *
 * Networks.  A struct nn_net is a chain of dense layers
 *   a_{l+1} = act_l(a_l W_l + b_l),   W_l: in x out,  b_l: out,
 * with a_0 the input rows.  Every parameter lives in one flat f32 vector
 * that the caller owns (lib/ml/model.h): W_l row-major at param[off_l], b_l
 * right after it.  Gradients and clipped sums use the same layout.
 * Several nets may share one parameter vector at disjoint offsets (a
 * feature extractor and heads: DANN), each net with its own workspace;
 * the output of one net is the input of the next, and the gradient with
 * respect to a net's input (nn_backward's gin) is the output gradient of
 * the net below.  A layer marked frozen has no gradient and no norm.
 *
 * One batch:
 *   nn_forward(net, param, ws, x, n);           activations a_l
 *   nn_softmax_xent(nn_output(ws), y, ..., g)    per-example dloss/dlogits
 *   nn_backward(net, param, ws, g, NULL);        per-example dloss/dz_l
 * then, without privacy, nn_grad_sum (one SGEMM per layer); with DP-SGD,
 *   nn_sqnorms -> nn_clip_weights -> nn_clip_sum -> nn_noise_release.
 *
 * Image layers (conv.h): a convolution is a dense layer applied at T
 * positions of each example (im2col, then one SGEMM), so its per-example
 * gradient is A_i^T G_i over the T rows of example i; its norm is taken
 * either from that kd x co product or by the ghost identity
 * ||A_i^T G_i||^2 = sum_{t,t'} (A_i A_i^T)_{tt'} (G_i G_i^T)_{tt'} (T^2
 * values), whichever is cheaper per layer (Bu et al. 2022, "mixed ghost
 * clipping"), and its clipped sum is one DGEMM A^T diag(w) G.  Pool
 * layers have no parameters.
 *
 * Per-example norms ("ghost norms", Goodfellow 2015; Li et al. 2022):
 * example i's gradient of a dense layer is the outer product (a_i, 1) x
 * g_i (bias included), whose squared Frobenius norm is (||a_i||^2 + 1)
 * ||g_i||^2, so the norm of the whole gradient is a sum over layers of
 * row norms: O(n (in + out)) per layer, no per-example gradient is ever
 * formed.  The clipped sum is then one GEMM per layer with the rows of
 * g_i scaled by w_i = min(1, C'/norm_i).
 *
 * Floating point (Casacuberta et al., "Widespread underestimation of
 * sensitivity in differentially private libraries and how to fix it",
 * CCS 2022): a rounded sum can move by more than C when one term is
 * added.  nn_clip_plan computes a clip bound C' < C such that the
 * computed clipped sums of neighbouring batches differ by at most C in
 * L2 norm, whatever the data and the summation order; see nn.c for the
 * argument.  That needs a bound N on the number of records (it bounds
 * the batch size); under add/remove neighbours the true count is private,
 * so dpsgd-train passes the size the data holder declares public (or the
 * rows read, when there are more), as it computes q = B/N from it.
 *
 * Ownership: nets are plain structs; workspaces own their buffers
 * (nn_ws_free); parameters, gradients, inputs and labels are the
 * caller's.  nn_noise handles own their worker threads and buffers, and
 * borrow the rngs they are given for their lifetime.  Nothing here prints,
 * exits or reads the environment.  Errors: functions returning int give
 * 0, or a negative NN_E_* code.
 */
#ifndef PRIVADA_NN_H
#define PRIVADA_NN_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#include "conv.h"
#include "rng.h"

enum nn_error {
	NN_OK = PV_OK,
	NN_E_RANGE = PV_E_RANGE,	/* an argument out of its documented range */
	NN_E_NOMEM = PV_E_NOMEM,	/* out of memory, or a size overflows */
	NN_E_NOISE = PV_E_NOISE		/* the noise sampler failed (nothing released) */
};

/* NN_ACT_TSIG: the tempered sigmoid s sigmoid(T x) - o (Papernot et al.
 * 2021; tanh is s 2, T 2, o 1), its s, T, o in the layer's ts. */
enum nn_act { NN_ACT_IDENTITY = 0, NN_ACT_RELU = 1, NN_ACT_TANH = 2,
	NN_ACT_TSIG = 3 };
/* Range of the tempered sigmoid's s and T (> 0) and |o|. */
#define NN_TSIG_MAX 1e6

/* Layer kinds: dense, or the image layers of conv.h. */
enum nn_kind { NN_DENSE = 0, NN_CONV = 1, NN_AVGPOOL = 2, NN_MAXPOOL = 3,
	NN_GROUPNORM = 4 };

#define NN_MAX_LAYERS 64
#define NN_MAX_WIDTH (1u << 24)		/* units in one layer */
/* An example whose activations entering a trained layer have squared
 * norm above this (or are not finite) contributes nothing to a clipped
 * sum; see nn.c (it bounds underflow errors). */
#define NN_ACT_BOUND2 0x1p100
/* Range of the clip bound C of nn_clip_plan. */
#define NN_CLIP_MIN 0x1p-40
#define NN_CLIP_MAX 0x1p40
/* A convolution's clipped sum bounds each example's sum of |terms| (see
 * nn.c, "Convolutions") by NN_CONV_RHO times the clip bound. */
#define NN_CONV_RHO 256.0
/* How a convolution takes its per-example norms and clipped sum (nn.c,
 * "Convolutions"): by the cost model (NN_PATH_AUTO, what every net gets
 * from its init), or forced, for tests and measurements. */
enum nn_path { NN_PATH_AUTO = 0, NN_PATH_GHOST = 1, NN_PATH_DIRECT = 2 };
/* Most floats of one example's materialised convolution gradient (kd co):
 * a larger layer takes the ghost path whatever its cost, so that the
 * workspace holds at most cap x 2^16 floats (256 KiB an example) for it. */
#define NN_CONV_DIRECT_MAX (1u << 16)
/* Most records a DP-SGD dataset may have (bounds the float error). */
#define NN_MAX_RECORDS (UINT64_C(1) << 24)

/* Name of an NN_E_* code. */
const char *nn_strerror(int code);

struct nn_layer {
	size_t in, out;		/* values per example (h w c, ho wo co) */
	size_t off;		/* W at param[off], b right after W */
	int act;		/* enum nn_act, applied to the layer's output */
	int frozen;		/* not trained: no gradient, no norm */
	int kind;		/* enum nn_kind; 0 (dense) for nn_net_init */
	struct conv_geom g;	/* conv and pool layers */
	float ts[3];		/* NN_ACT_TSIG: s, T, o */
	int path;		/* NN_CONV: enum nn_path (0: by cost) */
};

/* One layer of nn_net_init_spec: dense of out units, a convolution of
 * out channels (kernel k, stride s, padding p), a pool of window k
 * (stride s), or a group normalisation of out groups (its parameters are
 * gamma as W, 1 x c, and beta as b). */
struct nn_spec {
	int kind;		/* enum nn_kind */
	size_t out, k, s, p;
};

struct nn_net {
	size_t nlayers;		/* 1..NN_MAX_LAYERS */
	struct nn_layer layer[NN_MAX_LAYERS];
};

/* A chain of nlayers dense layers of widths w[0] -> w[1] -> ... ->
 * w[nlayers], ReLU after every layer but the last, act_last after the
 * last, parameters from offset off on; *end receives the offset after
 * the last parameter.  @return 0, or NN_E_RANGE (no layer, too many, a
 * width of 0 or above NN_MAX_WIDTH, a size overflow). */
int nn_net_init(struct nn_net *net, const size_t *w, size_t nlayers,
    int act_last, size_t off, size_t *end);

/* A net of image layers and dense ones from input images h x w x c
 * (conv.h's layout): the layers sp[0..n-1], act (relu, tanh or tsig)
 * after every layer but
 * pools, a convolution followed by a group norm (the norm takes it), and
 * the last, which must be dense and gets act_last.
 * @return 0, or NN_E_RANGE (a bad geometry, no layer, too many, a dense
 * layer followed by an image layer, a size overflow). */
int nn_net_init_spec(struct nn_net *net, size_t h, size_t w, size_t c,
    const struct nn_spec *sp, size_t n, int act, int act_last, size_t off,
    size_t *end);

/* Set s, T, o of every NN_ACT_TSIG layer of net (nn_net_init_spec gives
 * them 2, 2, 1: tanh).  @return 0, or NN_E_RANGE unless 0 < s, T <=
 * NN_TSIG_MAX and |o| <= NN_TSIG_MAX. */
int nn_net_set_tsig(struct nn_net *net, float s, float t, float o);

/* z[0..len-1] <- a tanh(b z) + c, tanh by a rational approximation
 * within 4e-7 absolute (nn.c): the image layers' activation. */
void nn_tanh_fast(float *z, size_t len, float a, float b, float c);

/* Parameters of one layer: in * out + out (dense), kd co + co (conv),
 * 0 (pool). */
size_t nn_layer_params(const struct nn_layer *l);
/* Its weight matrix: *rows x *cols (in x out dense, kd x co conv). */
void nn_layer_wdims(const struct nn_layer *l, size_t *rows, size_t *cols);
/* The most positions T of a convolution of net whose norms are ghost
 * norms (0: none), for nn_clip_plan_conv. */
size_t nn_net_tmax(const struct nn_net *net);
/* Does convolution l take ghost norms and the DGEMM clipped sum (1), or
 * direct norms and materialised per-example gradients (0)?  Its path
 * field if set, else the cheaper by the cost model (nn.c). */
int nn_conv_ghost(const struct nn_layer *l);
/* Index of the first layer that is not frozen (nlayers if all are). */
size_t nn_first_trained(const struct nn_net *net);
/* Number of trained parameters (the dimension of the noise). */
size_t nn_trained_params(const struct nn_net *net);

/* Initialise the parameters of every layer from r: weights uniform on
 * [-a, a] with a = sqrt(6 / in) before a ReLU (He et al. 2015) and
 * sqrt(6 / (in + out)) otherwise (Glorot and Bengio 2010); biases 0.
 * With zero set, every parameter is 0 (logistic regression). */
void nn_init_params(const struct nn_net *net, float *param, struct rng *r,
    int zero);

/* ---- workspace ---- */

struct nn_ws {
	size_t cap;			/* rows the buffers hold */
	size_t n;			/* rows of the last nn_forward */
	size_t nlayers;
	float *a[NN_MAX_LAYERS + 1];	/* a[0]: the caller's input rows;
					 * a[l+1]: output of layer l */
	float *g[NN_MAX_LAYERS];	/* g[l]: dloss_i/dz_l, n x out */
	float *sum32;			/* scratch of the largest W */
	float *col[NN_MAX_LAYERS];	/* conv: unfolded input, n T x kd */
	float *dcol;			/* conv: input gradient scratch */
	float *nscr;			/* conv: norm scratch */
	uint32_t *arg[NN_MAX_LAYERS];	/* max pool: where the maxima are */
	float *cbuf;			/* owns col[], dcol, nscr */
	uint32_t *abuf;			/* owns arg[] */
	float *rstd[NN_MAX_LAYERS];	/* group norm: n x G (col[]: xhat) */
	float *pex[NN_MAX_LAYERS];	/* conv, direct norms: n kd x co
					 * per-example weight gradients */
	double *pexb[NN_MAX_LAYERS];	/* and their bias gradients, n x co;
					 * group norm: n x 2c (gamma, beta) */
	double *pbuf;			/* owns pexb[] */
	double *sum64;			/* scratch of the f64 path (lazy) */
	size_t sum64_len;
	float *buf;			/* owns a[1..], g[], sum32 */
};

/* Buffers for batches of up to cap rows of net.  @return 0 or
 * NN_E_NOMEM (ws zeroed). */
int nn_ws_init(struct nn_ws *ws, const struct nn_net *net, size_t cap);
void nn_ws_free(struct nn_ws *ws);

/* ---- forward, loss, backward ---- */

/* Forward n <= ws->cap rows x (n x in of layer 0) through layers
 * 0..upto-1 (upto = net->nlayers for all).  x is borrowed as a[0] until
 * the next nn_forward; nn_clip_sum may zero some of its rows. */
void nn_forward_to(const struct nn_net *net, const float *param,
    struct nn_ws *ws, float *x, size_t n, size_t upto);
void nn_forward(const struct nn_net *net, const float *param,
    struct nn_ws *ws, float *x, size_t n);
/* The net's output rows after nn_forward (n x out of the last layer). */
float *nn_output(const struct nn_net *net, const struct nn_ws *ws);

/* Softmax cross-entropy of n rows of k logits against labels y:
 * loss_i = logsumexp(z_i) - z_i[y_i] (evaluated with the maximum
 * subtracted), and g (n x k, may alias nothing) = softmax(z_i) - e_{y_i},
 * the gradient of loss_i (not divided by n).  A row with a label outside
 * [0, k) or a logit that is not finite gets g = 0 and loss 0, and is
 * counted in *bad (if not NULL).  loss (n values) may be NULL.
 * @return the sum of the losses. */
double nn_softmax_xent(const float *z, const int32_t *y, size_t n,
    size_t k, float *g, double *loss, size_t *bad);

/* Backward: gout (n x out of the last layer) is dloss_i/d(output); it may
 * be the buffer ws->g[nlayers-1] itself (then nothing is copied).  Fills
 * ws->g[l] for every layer down to the first trained one, or down to
 * layer 0 when gin is not NULL, and then gin (n x in of layer 0) =
 * dloss_i/d(input). */
void nn_backward(const struct nn_net *net, const float *param,
    struct nn_ws *ws, const float *gout, float *gin);

/* grad (the parameter layout) += scale * the sum over the n rows of
 * their gradients, for every trained layer (no clipping: one SGEMM per
 * layer).  Not for DP releases. */
void nn_grad_sum(const struct nn_net *net, struct nn_ws *ws, float scale,
    float *grad);

/* ---- DP-SGD: norms, clipping ---- */

/* sq[i] += sum over trained layers l of (||a_l,i||^2 + 1) ||g_l,i||^2,
 * the squared norm of example i's gradient, in double.  sq[i] becomes
 * +inf when some a_l,i entering a trained layer is not finite or has a
 * squared norm above NN_ACT_BOUND2 (such examples are dropped).  Call it
 * for each net an example's loss reaches, on the same rows.
 * A convolution adds an upper bound of its ||A_i^T G_i||^2 + ||1^T G_i||^2
 * (computed directly or by the ghost identity, whichever costs less,
 * with the rounding error of the float products added; see nn.c), or
 * (||A_i||^2 + T) ||G_i||^2 / NN_CONV_RHO^2 when that is larger. */
void nn_sqnorms(const struct nn_net *net, const struct nn_ws *ws,
    double *sq);

/* The same, with in_sq[i] (n values) taken as ||a_0,i||^2, the squared
 * norm of input row i, when layer 0 is trained: inputs that do not change
 * between steps (DP-SGD's rows of X) can have theirs computed once, by
 * nn_row_sqnorm. */
void nn_sqnorms_cached(const struct nn_net *net, const struct nn_ws *ws,
    const double *in_sq, double *sq);
/* The squared norm of the d floats at x, exactly as nn_sqnorms computes
 * it (in double). */
double nn_row_sqnorm(const float *x, size_t d);

struct nn_clip {
	double clip;		/* C: bound on one example's influence */
	double clip_row;	/* C' < C: each example's clip bound */
	double margin;		/* C / C' - 1 */
	size_t nmax;		/* batches up to nmax rows take the f32 path */
	size_t chunk;		/* rows per SGEMM on that path */
	size_t cap;		/* most rows per nn_clip_sum call */
	uint64_t nrecords;	/* N + 1, the most rows a batch can hold */
	int unclipped;		/* TEST ONLY: weights 1 (not private) */
};

/* Plan the clipped sums of DP-SGD with bound C = clip on batches of
 * expected size expected (q N) drawn from N = nrecords records, calling
 * nn_clip_sum with at most cap rows at a time.  @return 0, or NN_E_RANGE
 * (C outside [NN_CLIP_MIN, NN_CLIP_MAX], N above NN_MAX_RECORDS,
 * cap 0). */
int nn_clip_plan(struct nn_clip *p, double clip, double expected,
    uint64_t nrecords, size_t cap);
/* The same for nets with convolutions of at most tmax positions
 * (nn_net_tmax; 0 is nn_clip_plan). */
int nn_clip_plan_conv(struct nn_clip *p, double clip, double expected,
    uint64_t nrecords, size_t cap, size_t tmax);

/* wt[i] = min(1, C' / sqrt(sq[i])), 0 when sq[i] is not finite; 1 when
 * sq[i] is 0.  With p->unclipped (tests only), 1 for every finite sq. */
void nn_clip_weights(const struct nn_clip *p, const double *sq, size_t n,
    double *wt);

/* sum (the parameter layout, f64) += the clipped gradients of the n rows
 * of the last forward/backward through net: sum_i (a_l,i, 1) x wt[i]
 * g_l,i for each trained layer.  nbatch is the size of the whole batch
 * (which may be summed in several calls of at most p->cap rows): the
 * path, f32 SGEMM or f64 DGEMM, depends on it only.  Rows with wt = 0 are
 * zeroed in a_l and g_l (so NaN cannot leak through 0 * NaN), and g_l is
 * scaled in place: call it last.  @return 0, NN_E_RANGE (n > p->cap),
 * NN_E_NOMEM (the f64 scratch). */
int nn_clip_sum(const struct nn_clip *p, const struct nn_net *net,
    struct nn_ws *ws, const double *wt, size_t nbatch, double *sum);

/* TEST HOOK: example i's clipped contribution exactly as nn_clip_sum's
 * f32 path adds it, (a_l,i, 1) x float(wt g_l,i), written (as doubles)
 * into out at the parameter layout of the trained layers; other entries
 * are left alone.  Call it before nn_clip_sum (which scales g). */
void nn_clip_contrib(const struct nn_net *net, const struct nn_ws *ws,
    size_t i, double wt, double *out);

/* ---- DP-SGD: sampling and noise ---- */

/* Poisson sampling: each index 0..n-1 independently with probability
 * m / 2^64, m = floor(q 2^64) (so never more than q, and within 2^-64
 * of it; q = 1 takes every index, q = 0 none), from the comparison of a
 * uniform 64-bit number with m, drawn a byte at a time (about one byte
 * of r per index; eight first bytes per draw of r).  idx (n entries) receives the chosen indices in
 * increasing order.  @return their count. */
size_t nn_poisson(struct rng *r, uint64_t n, double q, uint64_t *idx);

/* Zero every row of x (n x d) holding a value that is not finite.
 * @return the rows zeroed. */
size_t nn_zero_nonfinite_rows(float *x, size_t n, size_t d);

/* The noise standard deviation s for noise multiplier sigma > 0 on a
 * d-dimensional clipped sum of bound C, so that the release is the
 * Gaussian mechanism with multiplier at least sigma after the grid
 * rounding of lib/noise: s >= sigma * noise_sens_l2(C, noise_grid(s), d).
 * *sens and *gamma (may be NULL) receive that sensitivity and the grid.
 * @return s, or NaN for bad arguments. */
double nn_noise_std(double sigma, double clip, uint64_t d, double *sens,
    double *gamma);

/* Noise for a sequence of releases of d values at standard deviation s:
 * nn_noise_release(h, x) replaces x[0..d-1] with
 *   gamma round(x_i / gamma) + gamma k_i,   k_i ~ N_Z(0, S^2),
 * bit for bit what noise_add_dgauss(r, x, d, s, 0) (exact) or
 * noise_fast_add (fast) would release, since the noise does not depend on
 * x.  The vector is cut into nr equal segments (nr <= 8), segment j drawn
 * from r[j] in order, so a seeded run gives the same bytes whatever the
 * threads; with threaded set, each segment has a worker thread that draws
 * the next vector while the caller computes (and a release whose vector
 * no worker has started draws it in the caller's thread: the same bytes,
 * without waiting for a worker that is not running).  The fast sampler's total
 * variation distance accumulates in nn_noise_tv. */
struct nn_noise;
/* The rngs are borrowed for the handle's lifetime, each used by one
 * thread only.  @return 0, NN_E_RANGE (s not finite and positive, d = 0,
 * nr outside 1..8), NN_E_NOMEM, NN_E_NOISE (no sampler for s). */
int nn_noise_new(struct nn_noise **out, struct rng *const *r, size_t nr,
    double s, size_t d, int exact, int threaded);
/* @return 0, or NN_E_NOISE (a sampler error, or |x_i / gamma| >= 2^51, x
 * not finite): then x is left unspecified and must not be released. */
int nn_noise_release(struct nn_noise *h, double *x);
/* The same release in blocks of blk values, for callers that use the
 * released values at once while they are in cache (dpsgd: scale, add to
 * the gradient, optimiser step, clear, in the same pass): x[lo..hi-1] is
 * released, then each(arg, x, lo, hi) is called, for lo = 0, blk, 2 blk,
 * ..., in order.  The values are those of nn_noise_release.
 * @return 0, NN_E_RANGE (blk 0), or NN_E_NOISE as nn_noise_release: then
 * the blocks before the failing one have been passed to each, and
 * nothing computed from x may be released. */
int nn_noise_release_each(struct nn_noise *h, double *x, size_t blk,
    void (*each)(void *arg, double *x, size_t lo, size_t hi), void *arg);
/* Draw the noise of the next releases from r instead (an unthreaded
 * handle of one segment only: --audit-repeat gives each training its own
 * stream).  @return 0, or NN_E_RANGE otherwise. */
int nn_noise_set_rng(struct nn_noise *h, struct rng *r);
/* Total variation distance of all noise released so far from exact
 * noise (0 with the exact sampler). */
double nn_noise_tv(const struct nn_noise *h);
/* Stop the workers and free (NULL is accepted). */
void nn_noise_free(struct nn_noise *h);


/* ---- domain-adversarial training (DANN) ---- */

/*
 * DANN (Ganin et al., "Domain-adversarial training of neural networks",
 * JMLR 2016): a classifier net is split after its hidden layers into a
 * feature extractor F (layers 0..nfeat-1, ReLU out) and a label head H
 * (the remaining layers), and a domain classifier D (softmax over 2
 * domains, 0 source and 1 target) reads F's output through a gradient
 * reversal layer (GRL): the identity forward, -lambda times the gradient
 * backward.  For one example of domain d with label y (source only) the
 * per-example "gradient" left in the workspaces is
 *   H: dLy/dtheta_H,   D: dLd/dtheta_D,
 *   F: dLy/dtheta_F - lambda dLd/dtheta_F
 * (no Ly for target examples): the direction SGD follows, which is not
 * the gradient of one loss.  F and H keep the classifier's offsets, D
 * has its own; all three share one parameter vector.  For DP-SGD the
 * per-example norm is taken over all the nets the example reaches
 * (nn_sqnorms on each, into one sq), so the clipping is joint.
 */
struct nn_dann {
	struct nn_net feat, head, dom;
};

/* Split clf after layer nfeat (1 <= nfeat < clf->nlayers; the frozen
 * flags are copied) and build a domain classifier of ndh hidden ReLU
 * layers of widths dh[0..ndh-1] and 2 logits, reading F's output, with
 * parameters from offset off on; *end receives the offset after them.
 * @return 0, or NN_E_RANGE (bad split or widths). */
int nn_dann_init(struct nn_dann *d, const struct nn_net *clf, size_t nfeat,
    const size_t *dh, size_t ndh, size_t off, size_t *end);

/* Ganin's schedule of the GRL coefficient at training progress p in
 * [0, 1]: lambda_max (2 / (1 + exp(-10 p)) - 1), from 0 up to about
 * lambda_max. */
double nn_grl_lambda(double p, double lambda_max);

struct nn_dann_ws {
	struct nn_ws f, h, d;		/* workspaces of F, H, D */
	float *gf;			/* n x F's width: dloss/d(feature) */
	float *gd;			/* n x F's width: D's input gradient */
	int32_t *dom;			/* n domain labels */
};

/* Buffers for batches of up to cap rows.  @return 0 or NN_E_NOMEM (ws
 * zeroed). */
int nn_dann_ws_init(struct nn_dann_ws *ws, const struct nn_dann *d,
    size_t cap);
void nn_dann_ws_free(struct nn_dann_ws *ws);

/* Forward and backward of n <= cap rows x, all of domain dom (0 or 1),
 * through F and D and, when y is not NULL (labelled source rows), H,
 * with GRL coefficient lambda: afterwards the workspaces hold the
 * per-example gradients described above, ready for nn_grad_sum or
 * nn_sqnorms and nn_clip_sum on each net (H only when y was given).  x
 * is borrowed as F's input (nn_forward).  *dloss (may be NULL) receives
 * the sum of the domain losses.  @return the sum of the label losses (0
 * without y). */
double nn_dann_fwd_bwd(const struct nn_dann *d, const float *param,
    struct nn_dann_ws *ws, float *x, const int32_t *y, size_t n,
    int32_t dom, double lambda, double *dloss);

#endif
