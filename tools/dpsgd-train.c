/* dpsgd-train: train a classifier with DP-SGD, or without privacy. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "dpcli.h"
#include "la.h"
#include "labels.h"
#include "ledger.h"
#include "model.h"
#include "nn.h"
#include "noise_fast.h"
#include "optim.h"
#include "rdp.h"
#include "tensor.h"
#include "tstream.h"
#include "uda.h"

#define WORK_ITEM "dpsgd-train"
#define UNSAFE_ENV "PRIVADA_TEST_UNSAFE"
#define MAX_AUDIT 1000000		/* --audit-repeat */
#define MAX_BATCH (1u << 30)
#define MAX_STEPS (UINT64_C(1) << 32)	/* DP-SGD steps of one training */
#define MAX_EPOCHS 1e6
#define CAP_MIN 64			/* rows per forward/backward call */
#define CAP_MAX 4096
#define THREAD_MIN 2048			/* noise dimension worth a thread */
#define NOISE_STREAMS 2			/* noise segments (and threads) of a
					 * large model: fixed, so that seeded
					 * output does not depend on the
					 * machine */
#define EPS_REF 32.0			/* epsilon the fast sampler's TV is
					 * charged at, at least */

enum {
	OPT_ASSUME_RAW = 256, OPT_AUDIT, OPT_BATCH, OPT_BETA1, OPT_BETA2, OPT_BETA3,
	OPT_BETA_ADV, OPT_BETA_IM, OPT_BETA_KD, OPT_CLASSES, OPT_CLIP,
	OPT_DATASET, OPT_DOMAIN_HIDDEN, OPT_EPOCHS, OPT_EXACT,
	OPT_FEATURE_LAYER, OPT_FREEZE, OPT_GRL_MAX, OPT_HIDDEN, OPT_INIT,
	OPT_KD_TEMP, OPT_LEVEL, OPT_LR, OPT_SCHEDULE, OPT_MODE, OPT_MOMENTUM,
	OPT_NESTEROV, OPT_NODP, OPT_OPTIMIZER, OPT_PATIENCE, OPT_PROTECT,
	OPT_PUBLIC_RECORDS, OPT_SIGMA, OPT_SOURCE_FEATURES, OPT_TARGET,
	OPT_TARGET_PUBLIC_RECORDS, OPT_UNSAFE, OPT_VAL, OPT_VAL_PUBLIC, OPT_WD
};

/* --mode: what is trained, and on which losses. */
enum { ADAPT_NONE, ADAPT_DANN, ADAPT_ASSOC, ADAPT_GMM };

/* Defaults of the adaptation losses (man page: Associative domain
 * adaptation, Source-free adaptation with a feature mixture). */
#define ASSOC_BETA_WALKER 1.0		/* Haeusser et al. 2017 */
#define ASSOC_BETA_VISIT 0.5
#define ASSOC_BETA_COVER 0.0		/* paper 004 gives no value */
#define GMM_KD_TEMP 20.0		/* paper 003, section E */
#define ASSOC_MAX_BATCH CAP_MAX		/* one batch is one fwd/bwd call */

/* --protect: the domains whose examples are clipped and noised. */
enum { PROTECT_SOURCE = 1, PROTECT_TARGET = 2, PROTECT_BOTH = 3 };

/* DP-SGD (mode DP), DP-SGD with clipping but no noise (--sigma 0: not
 * private), or plain mini-batch training (--no-dp). */
enum { MODE_DP, MODE_CLIP_ONLY, MODE_NODP };

struct opts {
	const char *output, *level, *seed, *dataset, *init, *val, *target;
	int force, quiet, verbose, nodp, exact, unsafe, val_public;
	int assume_raw;
	int has_eps, has_delta, has_sigma, has_epochs, has_lr, has_classes;
	int dann, protect, has_dh, has_grl;
	int adapt;			/* --mode: ADAPT_* */
	int has_clip, has_beta, has_gmm_opt;
	const char *src_feat;		/* gmm-uda: --source-features */
	size_t feature_layer;		/* gmm-uda: 0 = the last hidden */
	double beta[3];			/* assoc: walker, visit, cover */
	double kd_temp, beta_adv, beta_kd, beta_im;	/* gmm-uda */
	double epsilon, delta, sigma, clip, epochs, grl_max;
	size_t batch, classes, freeze, patience, nhidden, ndh;
	size_t hidden[NN_MAX_LAYERS], dh[NN_MAX_LAYERS];
	uint64_t audit;
	uint64_t public_records[2];	/* declared sizes: input, --target;
					 * 0: not given */
	struct optim_cfg oc;
	double sched_epochs;		/* step schedule: epochs per decay */
	const char *sched_arg;
};

/* The data of one stream: X as f32 rows, y as i32. */
struct data {
	const char *label;
	float *X;
	int32_t *y;
	size_t n, d;
	struct ts_meta meta;
	uint64_t digest;
	struct label_set lset;		/* y's label set */
	char *label_names;		/* lset.names (owned), or NULL */
};

struct trainer;
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
	const char *dataset;		/* its ledger name */
	const struct data *dt;
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
	double (*fwd_bwd)(struct trainer *, struct stream *,
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
struct trainer {
	const struct opts *o;
	int mode;
	struct nn_model *m;
	const struct data *va;
	size_t K, lo, hi;		/* classes, trained range */
	size_t np;			/* parameters (with a domain head) */
	uint64_t steps, steps_per_epoch;
	struct stream *st;		/* st[0]: the labelled stream */
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

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: dpsgd-train [-fhqVv] [-d delta] [-e epsilon] [-o file] "
	    "[-S seed]\n"
	    "                   [--assume-raw] [--audit-repeat n] [--batch n] "
	    "[--beta-adv w]\n"
	    "                   [--beta-im w] [--beta-kd w] [--beta1 w] [--beta2 w] "
	    "[--beta3 w]\n"
	    "                   [--classes k]"
	    " [--clip c] [--dataset name] "
	    "[--domain-hidden list]\n"
	    "                   [--epochs n]"
	    " [--exact-noise] [--feature-layer l] "
	    "\n                   [--freeze k] [--grl-max l]\n"
	    "                   [--hidden list] [--init file] [--kd-temp t] "
	    "[--level level]\n"
	    "                   [--lr rate] [--lr-schedule kind] [--mode mode] "
	    "[--momentum m]\n"
	    "                   [--nesterov] [--no-dp] [--optimizer name] "
	    "[--patience n]\n"
	    "                   [--protect domains] [--public-records n] "
	    "[--sigma s]\n"
	    "                   [--source-features file] [--target file]\n"
	    "                   [--target-public-records n] "
	    "[--val file --val-public]\n"
	    "                   [--weight-decay w]\n"
	    "                   [file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -d, --delta D          target delta (with --epsilon)\n"
		    "  -e, --epsilon E        privacy budget: picks --sigma or "
		    "the steps\n"
		    "  -f, --force            write the model to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file)\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -S, --seed N           reproducible run: NOT private\n"
		    "  -V, --version          show the version\n"
		    "  -v, --verbose          a line per epoch on stderr\n"
		    "      --assume-raw       the input, of unknown provenance (tns from-csv,\n"
		    "                         from-npy), holds raw records of --dataset\n"
		    "      --audit-repeat N   N independent trainings (tests "
		    "only)\n"
		    "      --batch B          (expected) batch size, default 256\n"
		    "      --beta-adv W       gmm-uda: weight of the adversarial "
		    "loss (1)\n"
		    "      --beta-im W        gmm-uda: weight of the information "
		    "maximisation (1)\n"
		    "      --beta-kd W        gmm-uda: weight of the distillation "
		    "loss (1)\n"
		    "      --beta1 W          assoc: weight of the walker loss "
		    "(1)\n"
		    "      --beta2 W          assoc: weight of the visit loss "
		    "(0.5)\n"
		    "      --beta3 W          assoc: weight of the cover loss "
		    "(0)\n"
		    "      --classes K        number of classes (required for "
		    "DP without label.names)\n"
		    "      --clip C           per-example gradient bound, "
		    "default 1\n"
		    "      --dataset NAME     the dataset of the input (default: "
		    "from the input)\n"
		    "      --domain-hidden LIST  dann, gmm-uda: hidden widths of "
		    "the domain classifier\n"
		    "      --epochs E         passes over the data (steps = E N "
		    "/ B)\n"
		    "      --exact-noise      the exact discrete Gaussian "
		    "sampler (slower)\n"
		    "      --feature-layer L  gmm-uda: the encoder is layers 1..L "
		    "(default: all hidden)\n"
		    "      --freeze K         do not train the first K layers\n"
		    "      --grl-max L        dann: the largest gradient reversal "
		    "coefficient (1)\n"
		    "      --hidden LIST      hidden widths, e.g. 256,256 "
		    "(default none: logistic)\n"
		    "      --init FILE        start from this model stream "
		    "(gmm-uda: the source model)\n"
		    "      --kd-temp T        gmm-uda: distillation temperature "
		    "(20)\n"
		    "      --level N          zstd level of the output\n"
		    "      --lr RATE          learning rate (default 0.1, Adam "
		    "0.001)\n"
		    "      --lr-schedule KIND constant, cosine or step:E:G "
		    "(default constant)\n"
		    "      --mode MODE        classify (default), dann, assoc or "
		    "gmm-uda\n"
		    "      --momentum M       SGD momentum (default 0)\n"
		    "      --nesterov         Nesterov momentum\n"
		    "      --no-dp            train without privacy (the model "
		    "is raw-derived)\n"
		    "      --optimizer NAME   sgd (default) or adam\n"
		    "      --patience N       stop after N epochs without "
		    "improvement on --val\n"
		    "      --protect DOMAINS  dann: target (DPDA), source or both "
		    "(G-DPDA)\n"
		    "      --public-records N the input's size, declared public "
		    "(required for DP-SGD)\n"
		    "      --sigma S          noise multiplier (0: no noise, "
		    "NOT private)\n"
		    "      --source-features FILE  gmm-uda: sampled source "
		    "features (gmm-fit sample)\n"
		    "      --target FILE      dann, assoc: the unlabelled target "
		    "rows (X)\n"
		    "      --target-public-records N  dann: --target's size, "
		    "declared public\n"
		    "      --val FILE         validation stream, for early "
		    "stopping\n"
		    "      --val-public       declare --val public (required "
		    "with --val)\n"
		    "      --weight-decay W   L2 weight decay (default 0)\n"
		    "      --unsafe-test-no-clip  no clipping (tests only, needs "
		    UNSAFE_ENV "=1)\n", fp);
	exit(status);
}

/* ---- options ---- */

/* A list of hidden widths (--hidden, --domain-hidden) into w, *n. */
static void
parse_hidden(const char *opt, const char *arg, size_t *w, size_t *n)
{
	char *s = cli_strdup(arg), *p = s, *tok;

	*n = 0;
	if (strcmp(arg, "") == 0 || strcmp(arg, "none") == 0) {
		free(s);
		return;
	}
	while ((tok = strsep(&p, ",")) != NULL) {
		if (*n + 1 >= NN_MAX_LAYERS)
			cli_usage_error("invalid %s '%s': at most %d "
			    "hidden layers", opt, arg, NN_MAX_LAYERS - 1);
		w[(*n)++] = (size_t)cli_ll(opt, tok, 1, NN_MAX_WIDTH);
	}
	free(s);
}

static void
parse_schedule(struct opts *o, const char *arg)
{
	char *end;

	o->sched_arg = arg;
	if (strcmp(arg, "constant") == 0) {
		o->oc.sched = OPTIM_CONSTANT;
	} else if (strcmp(arg, "cosine") == 0) {
		o->oc.sched = OPTIM_COSINE;
	} else if (strncmp(arg, "step:", 5) == 0) {
		errno = 0;
		o->sched_epochs = strtod(arg + 5, &end);
		if (end == arg + 5 || *end != ':' || errno == ERANGE ||
		    !(o->sched_epochs > 0) || !isfinite(o->sched_epochs))
			cli_usage_error("invalid --lr-schedule '%s': expected "
			    "step:EPOCHS:GAMMA with EPOCHS > 0", arg);
		o->oc.gamma = cli_double("--lr-schedule", end + 1, 0, 1);
		if (!(o->oc.gamma > 0))
			cli_usage_error("invalid --lr-schedule '%s': GAMMA must "
			    "be in (0, 1]", arg);
		o->oc.sched = OPTIM_STEP;
	} else {
		cli_usage_error("invalid --lr-schedule '%s': expected "
		    "constant, cosine or step:EPOCHS:GAMMA", arg);
	}
}

/* The options of --mode assoc and gmm-uda, which train without DP-SGD:
 * their losses couple the examples of a batch, so clipping one example's
 * gradient does not bound its influence.  --no-dp is implied. */
static void
check_adapt(struct opts *o)
{
	int gmm = o->adapt == ADAPT_GMM;
	const char *m = gmm ? "gmm-uda" : "assoc";

	if (o->protect && gmm)
		cli_usage_error("--mode gmm-uda cannot protect the target: the "
		    "diversity term of the information maximisation (the "
		    "entropy of the batch-mean prediction) couples the examples "
		    "of a batch, so per-example clipping does not bound one "
		    "example's influence; without --protect the target rows are "
		    "marked aggregate (not private)");
	if (o->protect)
		cli_usage_error("--mode assoc trains without DP-SGD (the walker, "
		    "visit and cover losses couple the examples of a batch): "
		    "--protect does not apply; the labels' privacy is the "
		    "ledger entry of the labelled input (teacher-vote)");
	if (o->has_eps || o->has_delta || o->has_sigma || o->has_clip ||
	    o->exact || o->audit || o->unsafe)
		cli_usage_error("--mode %s trains without DP-SGD: --epsilon, "
		    "--delta, --sigma, --clip, --exact-noise, --audit-repeat and "
		    "--unsafe-test-no-clip do not apply", m);
	if (o->has_grl)
		cli_usage_error("--grl-max needs --mode dann%s", gmm ?
		    " (gmm-uda weighs the adversarial loss with --beta-adv)" :
		    "");
	if (!o->has_epochs)
		cli_usage_error("--mode %s needs --epochs", m);
	if (o->batch > ASSOC_MAX_BATCH)
		cli_usage_error("--mode %s: --batch %zu exceeds %u (a batch is "
		    "one forward and backward pass)", m, o->batch,
		    (unsigned)ASSOC_MAX_BATCH);
	if (gmm) {
		if (o->has_beta)
			cli_usage_error("--beta1, --beta2 and --beta3 need --mode "
			    "assoc");
		if (o->target)
			cli_usage_error("--mode gmm-uda reads the target rows from "
			    "the operand: --target does not apply");
		if (o->init == NULL)
			cli_usage_error("--mode gmm-uda needs --init (the source "
			    "model)");
		if (o->src_feat == NULL)
			cli_usage_error("--mode gmm-uda needs --source-features "
			    "(gmm-fit sample output)");
	} else {
		if (o->has_gmm_opt || o->src_feat)
			cli_usage_error("--source-features, --feature-layer, "
			    "--kd-temp, --beta-adv, --beta-kd and --beta-im need "
			    "--mode gmm-uda");
		if (o->has_dh)
			cli_usage_error("--domain-hidden needs --mode dann or "
			    "gmm-uda");
		if (o->target == NULL)
			cli_usage_error("--mode assoc needs --target");
	}
	o->nodp = 1;
}

/* The combinations of privacy options (STYLE.md: no defaults). */
static int
check_mode(struct opts *o)
{
	if (o->adapt == ADAPT_ASSOC || o->adapt == ADAPT_GMM) {
		check_adapt(o);
		return MODE_NODP;
	}
	if (o->has_beta)
		cli_usage_error("--beta1, --beta2 and --beta3 need --mode assoc");
	if (o->has_gmm_opt || o->src_feat)
		cli_usage_error("--source-features, --feature-layer, --kd-temp, "
		    "--beta-adv, --beta-kd and --beta-im need --mode gmm-uda");
	if (!o->dann && (o->target || o->protect || o->has_dh || o->has_grl))
		cli_usage_error("--target, --protect, --domain-hidden and "
		    "--grl-max need --mode dann");
	if (o->dann) {
		if (o->target == NULL)
			cli_usage_error("--mode dann needs --target");
		if (!o->has_epochs)
			cli_usage_error("--mode dann needs --epochs");
		if (o->nodp && o->protect)
			cli_usage_error("--no-dp trains without privacy: "
			    "--protect does not apply");
		if (!o->nodp && !o->protect)
			cli_usage_error("--mode dann with privacy needs --protect "
			    "target, source or both (or --no-dp)");
	}
	if (o->nodp) {
		if (o->has_eps || o->has_delta || o->has_sigma)
			cli_usage_error("--no-dp trains without privacy: "
			    "--epsilon, --delta and --sigma do not apply");
		if (o->audit || o->unsafe)
			cli_usage_error("--audit-repeat and "
			    "--unsafe-test-no-clip need DP-SGD");
		if (!o->has_epochs)
			cli_usage_error("--no-dp needs --epochs");
		return MODE_NODP;
	}
	if (o->has_eps != o->has_delta && o->has_eps)
		cli_usage_error("--epsilon needs --delta");
	if (!o->has_eps && !o->has_sigma)
		cli_usage_error("missing privacy parameters: give --epsilon "
		    "and --delta, or --sigma (or train without privacy with "
		    "--no-dp)");
	if (o->has_eps && o->has_sigma && o->has_epochs)
		cli_usage_error("--epsilon, --sigma and --epochs together "
		    "over-determine the training: give two of them");
	if (!o->has_epochs && !(o->has_eps && o->has_sigma))
		cli_usage_error("give --epochs (or --epsilon, --delta and "
		    "--sigma to train as long as the budget allows)");
	if (o->has_sigma && o->sigma == 0) {
		if (o->has_eps)
			cli_usage_error("--sigma 0 adds no noise: --epsilon "
			    "cannot be met");
		if (o->audit)
			cli_usage_error("--audit-repeat needs noise");
		return MODE_CLIP_ONLY;
	}
	return MODE_DP;
}

/*
 * The declared sizes: one for each clipped stream, none for another.
 * Neighbours are add/remove, under which the number of records N is
 * private: the sampling rate q = B / N, the steps E / q and every check
 * that depends on N use the size the data holder declares public (the
 * published size of the dataset, or a public upper bound), never the
 * count of the rows read.
 */
static void
check_public(const struct opts *o, int mode)
{
	static const char *const opt[2] = { "--public-records",
	    "--target-public-records" };
	int need[2];

	need[0] = mode != MODE_NODP && (!o->dann ||
	    (o->protect & PROTECT_SOURCE));
	need[1] = mode != MODE_NODP && o->dann &&
	    (o->protect & PROTECT_TARGET);
	for (int i = 0; i < 2; i++) {
		if (need[i] && o->public_records[i] == 0)
			cli_usage_error("DP-SGD on %s needs %s N: the number of "
			    "its records, declared public by the data holder "
			    "(the published size of the dataset, or a public "
			    "upper bound); the sampling rate is --batch / N, and "
			    "the true count stays private", i ? "the --target "
			    "rows" : "the input", opt[i]);
		if (!need[i] && o->public_records[i] != 0)
			cli_usage_error("%s applies to the rows that DP-SGD "
			    "protects (%s)", opt[i], i ? "--mode dann with "
			    "--protect target or both" : "not with --no-dp, "
			    "--mode assoc or gmm-uda, nor --protect target");
	}
}

/* ---- input ---- */

/* Read X and y of a stream into d. */
static void
read_data(struct data *dt, FILE *fp, const char *label, int need_y)
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

static void
data_free(struct data *dt)
{
	free(dt->X);
	free(dt->y);
	free(dt->label_names);
	ts_meta_free(&dt->meta);
}

/* Labels of public data (validation) or of a run without privacy must
 * be classes. */
static void
check_labels(const struct data *dt, size_t K)
{
	for (size_t i = 0; i < dt->n; i++)
		if (dt->y[i] < 0 || (size_t)dt->y[i] >= K)
			cli_die(EX_DATAERR, "%s: tensor 'y': row %zu: label "
			    "outside [0, %zu)", dt->label, i, K);
}

/* --mode assoc: rows with a negative label (-1: queries teacher-vote
 * left unanswered) take no part in the labelled loss; they are dropped. */
static void
drop_unanswered(struct data *dt, int verbose)
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
evaluate(struct trainer *t, const struct data *dt, double *loss)
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
clf_fwd_bwd(struct trainer *t, struct stream *st, const uint64_t *rows,
    size_t k)
{
	const struct nn_net *net = &t->m->net;
	const struct data *dt = st->dt;
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
dann_fwd_bwd(struct trainer *t, struct stream *st, const uint64_t *rows,
    size_t k)
{
	const struct data *dt = st->dt;
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
 * correctly rounded operations either way, so the result is too.
 */
#define VB 8

static void
grad_add_clear(float *g, double *x, size_t n, double b)
{
	size_t i = 0;

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

/* Add a DP-SGD stream's share of the step to t->grad (Abadi et al. 2016,
 * Algorithm 1, with Poisson sampling): the clipped sum of a Poisson
 * batch, noised, divided by the expected batch size. */
static void
stream_dp_add(struct trainer *t, struct stream *st, struct rng *r)
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
				cli_die(rc == NN_E_NOMEM ? EX_OSERR :
				    EX_SOFTWARE, "clipped sum: %s",
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
	if (st->noise != NULL && (rc = nn_noise_release(st->noise, x)) != 0)
		cli_die(EX_SOFTWARE, "noise: %s (nothing was released)",
		    nn_strerror(rc));
	/* Dividing by the public expected batch size (not n, which is
	 * private) is post-processing. */
	for (size_t j = 0, o = 0; j < st->nr; o += st->rhi[j] -
	    st->rlo[j], j++)
		grad_add_clear(t->grad + st->rlo[j], x + o, st->rhi[j] -
		    st->rlo[j], (double)st->batch);
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
stream_plain_add(struct trainer *t, struct stream *st, struct rng *r,
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
	const struct data *dt = st->dt;
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

static void
assoc_init(struct trainer *t, struct assoc *as)
{
	const struct nn_net *net = &t->m->net;
	size_t L = net->nlayers, h = net->layer[L - 1].in;
	size_t ca = t->st[0].cap, cb = t->st[1].cap, nw;

	memset(as, 0, sizeof *as);
	sub_net(&as->feat, net, 0, L - 1);
	sub_net(&as->head, net, L - 1, L);
	if (nn_ws_init(&as->wa, &as->feat, ca) != 0 ||
	    nn_ws_init(&as->wb, &as->feat, cb) != 0 ||
	    nn_ws_init(&as->wh, &as->head, ca) != 0 ||
	    (nw = uda_assoc_work(ca, cb, h)) == 0)
		cli_die(EX_OSERR, "out of memory");
	as->ga = cli_reallocarray(NULL, ca * h, sizeof *as->ga);
	as->gc = cli_reallocarray(NULL, ca * h, sizeof *as->gc);
	as->gb = cli_reallocarray(NULL, cb * h, sizeof *as->gb);
	as->work = cli_reallocarray(NULL, nw, sizeof *as->work);
	for (int i = 0; i < 3; i++)
		as->w[i] = t->o->beta[i];
	t->as = as;
}

static void
assoc_free(struct assoc *as)
{
	nn_ws_free(&as->wa);
	nn_ws_free(&as->wb);
	nn_ws_free(&as->wh);
	free(as->ga);
	free(as->gb);
	free(as->gc);
	free(as->work);
}

/* One associative step's gradient into t->grad.  @return the batch's
 * loss times its size (the caller divides by the examples seen). */
static double
assoc_step(struct trainer *t, struct rng *r, double *seen)
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
		cli_die(EX_SOFTWARE, "associative loss: bad batch");
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
	return lc + la * (double)na;
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

static void
gmm_init(struct trainer *t, struct gmmuda *gu, const struct nn_dann *nets)
{
	size_t ct = t->st[0].cap, cs = t->st[1].cap;
	size_t h = nets->feat.layer[nets->feat.nlayers - 1].out;

	memset(gu, 0, sizeof *gu);
	gu->nets = *nets;
	gu->src = cli_reallocarray(NULL, t->m->nparam, sizeof *gu->src);
	memcpy(gu->src, t->m->param, t->m->nparam * sizeof *gu->src);
	if (nn_ws_init(&gu->tf, &nets->feat, ct) != 0 ||
	    nn_ws_init(&gu->th, &nets->head, ct) != 0 ||
	    nn_ws_init(&gu->wf, &nets->feat, ct) != 0 ||
	    nn_ws_init(&gu->wh, &nets->head, ct) != 0 ||
	    nn_ws_init(&gu->dt, &nets->dom, ct) != 0 ||
	    nn_ws_init(&gu->ds, &nets->dom, cs) != 0)
		cli_die(EX_OSERR, "out of memory");
	gu->gf = cli_reallocarray(NULL, ct * h, sizeof *gu->gf);
	gu->gd = cli_reallocarray(NULL, ct * h, sizeof *gu->gd);
	gu->gim = cli_reallocarray(NULL, ct * t->K, sizeof *gu->gim);
	gu->dom0 = cli_calloc(cs, sizeof *gu->dom0);
	gu->dom1 = cli_reallocarray(NULL, ct, sizeof *gu->dom1);
	for (size_t i = 0; i < ct; i++)
		gu->dom1[i] = 1;
	gu->imwork = cli_reallocarray(NULL, t->K, sizeof *gu->imwork);
	t->gu = gu;
}

static void
gmm_free(struct gmmuda *gu)
{
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
}

/* One gmm-uda step's gradient into t->grad.  @return the batch's
 * beta_kd KD + beta_im IM times its size. */
static double
gmm_step(struct trainer *t, struct rng *r, double *seen)
{
	const struct opts *o = t->o;
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
static double
step(struct trainer *t, struct rng *r, struct optim *opt, double *seen)
{
	double loss = 0;

	for (size_t j = 0; j < t->nrange; j++)
		memset(t->grad + t->rlo[j], 0, (t->rhi[j] - t->rlo[j]) *
		    sizeof *t->grad);
	if (t->as != NULL)
		loss = assoc_step(t, r, seen);
	else if (t->gu != NULL)
		loss = gmm_step(t, r, seen);
	for (size_t i = 0; i < t->nst && !t->as && !t->gu; i++) {
		struct stream *st = &t->st[i];

		if (st->dp) {
			stream_dp_add(t, st, r);
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
	return loss;
}

/* After an epoch: the validation accuracy, the best parameters so far,
 * the verbose line.  @return 1 to stop early. */
static int
end_epoch(struct trainer *t, uint64_t epoch, uint64_t nepochs,
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
	if (t->mode == MODE_NODP)
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
	if (t->o->verbose)
		fprintf(stderr, "%s: %s\n", cli_prog(), line);
	return stop;
}

/* One whole training from the model's current parameters. */
static void
train(struct trainer *t, struct rng *r, uint64_t run, uint64_t runs)
{
	const struct opts *o = t->o;
	struct optim_cfg oc = o->oc;
	struct optim *opt;
	uint64_t nepochs, total;
	double t0 = cli_now(), loss = 0, seen = 0;

	total = t->steps;
	nepochs = (total + t->steps_per_epoch - 1) / t->steps_per_epoch;
	oc.total = total ? total : 1;
	if (oc.sched == OPTIM_STEP) {
		double e = ceil(o->sched_epochs * (double)t->steps_per_epoch);
		oc.every = e < 1 ? 1 : (uint64_t)e;
	}
	if ((opt = optim_new(&oc, t->np)) == NULL)
		cli_die(EX_OSERR, "out of memory");
	t->best_epoch = 0;
	t->best_acc = 0;
	for (size_t i = 0; i < t->nst; i++)
		t->st[i].pos = 0;
	for (uint64_t s = 0, epoch = 0; s < total;) {
		uint64_t end = s + t->steps_per_epoch;
		double eseen = seen;

		if (end > total)
			end = total;
		for (loss = 0; s < end; s++) {
			/* Ganin's schedule: p is the progress of training,
			 * (t + 1) / T at step t of T, reaching 1 at the end. */
			if (t->dann || t->gu)
				t->lambda = nn_grl_lambda((double)(s + 1) /
				    (double)total, o->grl_max);
			loss += step(t, r, opt, &seen);
			if (runs == 1)
				cli_progress("steps", s + 1, total);
		}
		epoch++;
		if (runs == 1 && end_epoch(t, epoch, nepochs, loss,
		    seen - eseen, seen, cli_now() - t0))
			break;
	}
	if (runs > 1)
		cli_progress("trainings", run + 1, runs);
	else
		cli_progress_done();
	if (t->va != NULL && t->best_epoch > 0)
		memcpy(t->m->param, t->best, t->np * sizeof *t->best);
	optim_free(opt);
}

/* ---- output ---- */

static void
meta_num(struct ts_meta *m, const char *key, double v)
{
	if (ts_meta_setf(m, key, "%.17g", v) != 0)
		cli_die(EX_OSERR, "out of memory");
}

/* The key prefix + key set to a string, or to a number. */
static void
meta_key(struct ts_meta *m, const char *prefix, const char *key,
    const char *v)
{
	char k[96];

	snprintf(k, sizeof k, "%s%s", prefix, key);
	cli_meta_set(m, k, v);
}

static void
meta_knum(struct ts_meta *m, const char *prefix, const char *key, double v)
{
	char k[96];

	snprintf(k, sizeof k, "%s%s", prefix, key);
	meta_num(m, k, v);
}

/* The DP-SGD release entry: steps x the subsampled Gaussian's RDP curve
 * (times the audit trainings), and the fast sampler's TV on delta. */
static void
record_release(struct ts_meta *meta, struct rng *rng,
    const struct trainer *t, const struct stream *st)
{
	const struct opts *o = t->o;
	struct ledger_entry e;
	const double *ord;
	double reps = o->audit ? (double)o->audit : 1;
	size_t no;
	int rc;

	dpcli_entry(&e, rng, st->dataset, "subsampled_gaussian");
	ord = rdp_default_orders(&no);
	e.norders = no;
	for (size_t i = 0; i < no; i++)
		e.orders[i] = ord[i];
	if ((rc = rdp_sgm(st->q, st->sigma, ord, no, e.rdp)) != 0)
		cli_die(EX_SOFTWARE, "accountant: %s", rdp_strerror(rc));
	for (size_t i = 0; i < no; i++)
		e.rdp[i] *= (double)t->steps * reps;
	/* The TV distance and the epsilon it is charged at go in the
	 * entry: the accountant charges it again at the epsilon of the
	 * composition when that is larger (lib/dp/ledger.c). */
	if (st->tv > 0) {
		e.tv = st->tv;
		e.tv_epsilon = st->eps > EPS_REF ? st->eps : EPS_REF;
		e.delta = noise_fast_delta_charge(e.tv_epsilon, e.tv);
	}
	dpcli_param(&e, "q", st->q);
	dpcli_param(&e, "sigma", st->sigma);
	dpcli_param(&e, "noise_std", st->noise_std);
	dpcli_param(&e, "steps", (double)t->steps);
	dpcli_param(&e, "clip", o->clip);
	dpcli_param(&e, "l2_sensitivity", st->sens);
	dpcli_param(&e, "grid", st->gamma);
	dpcli_param(&e, "public_records", (double)st->npub);
	if (o->audit)
		dpcli_param(&e, "audit_releases", reps);
	if (o->unsafe)
		dpcli_param(&e, "unsafe_test_no_clip", 1);
	dpcli_release(meta, &e);
	ts_meta_free(&e.params);
}

/* Write the model, or with --audit-repeat, each parameter tensor stacked
 * over the trainings: <prefix>/fc<k>/W as [runs, in * out] and
 * <prefix>/fc<k>/b as [runs, out], row i the parameters of training i
 * (np of them per training); prefix "model" for the classifier, "domain"
 * for a domain classifier. */
static void
write_audit(struct ts_writer *w, const struct nn_net *net, const char *prefix,
    const float *all, size_t np, uint64_t runs)
{
	for (size_t l = 0; l < net->nlayers; l++) {
		const struct nn_layer *L = &net->layer[l];
		for (int part = 0; part < 2; part++) {
			size_t len = part ? L->out : L->in * L->out;
			size_t off = L->off + (part ? L->in * L->out : 0);
			uint64_t dims[2] = { runs, len };
			struct tensor hdr;
			char name[64];
			int rc;

			snprintf(name, sizeof name, "%s/fc%zu/%s", prefix,
			    l + 1, part ? "b" : "W");
			if (tensor_init(&hdr, name, TS_F32, 2, dims) != 0)
				cli_die(EX_SOFTWARE, "bad tensor header");
			if ((rc = ts_write_begin(w, &hdr)) != 0)
				cli_wdie(w, rc);
			for (uint64_t i = 0; i < runs; i++)
				if ((rc = ts_write_rows(w, all + i * np + off,
				    1)) != 0)
					cli_wdie(w, rc);
			if ((rc = ts_write_end(w)) != 0)
				cli_wdie(w, rc);
			tensor_free(&hdr);
		}
	}
}

/* ---- the privacy plan ---- */

/* Solve the training length or the noise multiplier for the budget,
 * then the noise scale.  The fast sampler's total variation is charged
 * to delta (noise_fast.h), so the accountant converts the RDP curve at
 * delta minus that charge: the solve is repeated at the reduced delta
 * until the charge of the plan it gives is covered. */
static void
plan_dp(struct trainer *t, struct stream *st, const struct opts *o)
{
	uint64_t runs = o->audit ? o->audit : 1;
	double charge = 0, dl = o->delta;
	int rc, it;

	for (it = 0; it < 8; it++) {
		double tau, next;

		dl = o->delta - charge;
		if (o->has_delta && !(dl > 0))
			cli_usage_error("--delta %g is below the noise sampler's "
			    "charge %g", o->delta, charge);
		if (o->has_eps && !o->has_sigma) {
			rc = rdp_sgm_solve_sigma(st->q, t->steps * runs, dl,
			    o->epsilon, NULL, 0, RDP_CONV_IMPROVED, &st->sigma);
			if (rc != 0)
				cli_usage_error("no noise multiplier up to 1e6 "
				    "meets epsilon %g in %llu steps: %s",
				    o->epsilon, (unsigned long long)t->steps,
				    rdp_strerror(rc));
		} else if (o->has_eps) {
			uint64_t ns;
			rc = rdp_sgm_solve_steps(st->q, st->sigma, dl, o->epsilon,
			    NULL, 0, RDP_CONV_IMPROVED, &ns);
			if (rc != 0)
				cli_die(EX_SOFTWARE, "accountant: %s",
				    rdp_strerror(rc));
			ns /= runs;
			if (ns == 0)
				cli_usage_error("--sigma %g: not even one step "
				    "fits epsilon %g", st->sigma, o->epsilon);
			t->steps = ns > MAX_STEPS ? MAX_STEPS : ns;
		}
		if (t->mode != MODE_DP)
			return;
		/* The grid rounding of the noise is exact while |sum /
		 * gamma| < 2^51; the sum is at most (N + 1) C and gamma >
		 * s 2^-25 >= sigma C 2^-25.  N is the declared size (the
		 * refusal must not depend on the private count); a batch
		 * beyond it, possible only when the declaration is wrong,
		 * makes nn_noise_release fail: nothing is released. */
		if (st->sigma <= ldexp((double)st->npub + 1, -26))
			cli_usage_error("--sigma %g is too small for %llu "
			    "declared records (at least %g)", st->sigma,
			    (unsigned long long)st->npub,
			    ldexp((double)st->npub + 1, -26));
		st->noise_std = nn_noise_std(st->sigma, o->clip, st->dim,
		    &st->sens, &st->gamma);
		if (isnan(st->noise_std))
			cli_usage_error("--sigma %g, --clip %g: no noise scale",
			    st->sigma, o->clip);
		if (o->exact || !o->has_eps)
			break;
		tau = noise_fast_tv_per_sample(ceil(st->noise_std / st->gamma)) *
		    (double)t->steps * (double)st->dim * (double)runs;
		next = noise_fast_delta_charge(o->epsilon > EPS_REF ?
		    o->epsilon : EPS_REF, tau);
		if (!(next >= 0))
			cli_die(EX_SOFTWARE, "noise: no TV bound");
		if (next <= charge)
			break;
		charge = next;
	}
	if (it == 8)
		cli_die(EX_SOFTWARE, "the privacy plan does not settle");
	if (o->has_delta && rdp_sgm_epsilon(st->q, st->sigma, t->steps * runs,
	    dl, NULL, 0, RDP_CONV_IMPROVED, &st->eps, NULL) != 0)
		st->eps = -1;
}

/* ---- main ---- */

static struct rng *
sub_rng(const struct opts *o, const char *item)
{
	struct rng *r;
	int rc = o->seed ? rng_new_seeded(&r, dpcli_seed_arg(o->seed), item) :
	    rng_new(&r);

	if (rc != 0)
		cli_die(EX_OSERR, "no secure randomness: %s", rng_strerror(rc));
	return r;
}

/* The rows a stream draws per step, its clip plan and its buffers
 * (after the privacy plan). */
static void
stream_alloc(struct trainer *t, struct stream *st, const struct opts *o)
{
	const struct data *dt = st->dt;
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

		st->cap = e > CAP_MAX ? CAP_MAX : e < CAP_MIN ? CAP_MIN :
		    (size_t)e;
		if ((rc = nn_clip_plan(&st->clip, o->clip, expected, bound,
		    st->cap)) != 0)
			cli_die(EX_SOFTWARE, "clip plan: %s", nn_strerror(rc));
		st->clip.unclipped = o->unsafe;
	} else {
		st->cap = o->batch < CAP_MIN ? CAP_MIN : o->batch > CAP_MAX ?
		    CAP_MAX : o->batch;
	}
	if (t->dann && (rc = nn_dann_ws_init(&st->dws, &t->nets,
	    st->cap)) != 0)
		cli_die(EX_OSERR, "out of memory");
	st->xb = cli_reallocarray(NULL, st->cap * dt->d, sizeof *st->xb);
	st->yb = cli_reallocarray(NULL, st->cap, sizeof *st->yb);
	st->sq = cli_reallocarray(NULL, st->cap, sizeof *st->sq);
	st->wt = cli_reallocarray(NULL, st->cap, sizeof *st->wt);
	st->idx = cli_reallocarray(NULL, dt->n, sizeof *st->idx);
	if (st->nr > 1)
		st->pk = cli_reallocarray(NULL, st->dim, sizeof *st->pk);
	if (st->dp && !t->m->net.layer[0].frozen) {
		/* The rows of X never change: their norms (the first layer's
		 * part of every ghost norm) are computed once. */
		st->in_sq = cli_reallocarray(NULL, dt->n, sizeof *st->in_sq);
		st->in_sqb = cli_reallocarray(NULL, st->cap,
		    sizeof *st->in_sqb);
		for (size_t i = 0; i < dt->n; i++)
			st->in_sq[i] = nn_row_sqnorm(dt->X + i * dt->d, dt->d);
	}
}

/* The noise of a DP stream: a large model's noise comes from
 * NOISE_STREAMS workers, each with its own random stream (work items
 * item, item/1, ...).  @return 1 when it is threaded. */
static int
stream_noise(struct stream *st, const struct opts *o, uint64_t runs,
    const char *item)
{
	int thr = st->dim >= THREAD_MIN && runs == 1, rc;

	st->nseg = thr ? NOISE_STREAMS : 1;
	for (size_t j = 0; j < st->nseg; j++) {
		char name[96];

		if (j == 0)
			snprintf(name, sizeof name, "%s", item);
		else
			snprintf(name, sizeof name, "%s/%zu", item, j);
		st->nrng[j] = sub_rng(o, name);
	}
	if ((rc = nn_noise_new(&st->noise, st->nrng, st->nseg, st->noise_std,
	    st->dim, o->exact, thr)) != 0)
		cli_die(rc == NN_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "noise: %s",
		    nn_strerror(rc));
	return thr;
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

/* Zero the non-finite rows of a training input; their count is shown
 * only when the input is trained on without privacy. */
static void
zero_rows(struct data *dt, int dp)
{
	size_t z = nn_zero_nonfinite_rows(dt->X, dt->n, dt->d);

	if (z && !dp)
		cli_warn("%s: %zu rows with non-finite values were taken as "
		    "zero rows", dt->label, z);
}

static const char *
protect_name(int protect)
{
	return protect == PROTECT_BOTH ? "both" : protect == PROTECT_SOURCE ?
	    "source" : protect == PROTECT_TARGET ? "target" : "none";
}

int
main(int argc, char **argv)
{
	static const char *const optimizers[] = { "sgd", "adam", NULL };
	static const char *const modes[] = { "classify", "dann", "assoc",
		"gmm-uda", NULL };
	static const int adapts[] = { ADAPT_NONE, ADAPT_DANN, ADAPT_ASSOC,
		ADAPT_GMM };
	static const char *const protects[] = { "source", "target", "both",
		NULL };
	static const struct option longopts[] = {
		{ "assume-raw", no_argument, NULL, OPT_ASSUME_RAW },
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "beta-adv", required_argument, NULL, OPT_BETA_ADV },
		{ "beta-im", required_argument, NULL, OPT_BETA_IM },
		{ "beta-kd", required_argument, NULL, OPT_BETA_KD },
		{ "beta1", required_argument, NULL, OPT_BETA1 },
		{ "beta2", required_argument, NULL, OPT_BETA2 },
		{ "beta3", required_argument, NULL, OPT_BETA3 },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "clip", required_argument, NULL, OPT_CLIP },
		{ "dataset", required_argument, NULL, OPT_DATASET },
		{ "delta", required_argument, NULL, 'd' },
		{ "domain-hidden", required_argument, NULL, OPT_DOMAIN_HIDDEN },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "epsilon", required_argument, NULL, 'e' },
		{ "exact-noise", no_argument, NULL, OPT_EXACT },
		{ "feature-layer", required_argument, NULL, OPT_FEATURE_LAYER },
		{ "force", no_argument, NULL, 'f' },
		{ "freeze", required_argument, NULL, OPT_FREEZE },
		{ "grl-max", required_argument, NULL, OPT_GRL_MAX },
		{ "help", no_argument, NULL, 'h' },
		{ "hidden", required_argument, NULL, OPT_HIDDEN },
		{ "init", required_argument, NULL, OPT_INIT },
		{ "kd-temp", required_argument, NULL, OPT_KD_TEMP },
		{ "level", required_argument, NULL, OPT_LEVEL },
		{ "lr", required_argument, NULL, OPT_LR },
		{ "lr-schedule", required_argument, NULL, OPT_SCHEDULE },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "momentum", required_argument, NULL, OPT_MOMENTUM },
		{ "nesterov", no_argument, NULL, OPT_NESTEROV },
		{ "no-dp", no_argument, NULL, OPT_NODP },
		{ "optimizer", required_argument, NULL, OPT_OPTIMIZER },
		{ "output", required_argument, NULL, 'o' },
		{ "patience", required_argument, NULL, OPT_PATIENCE },
		{ "protect", required_argument, NULL, OPT_PROTECT },
		{ "public-records", required_argument, NULL,
		    OPT_PUBLIC_RECORDS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "source-features", required_argument, NULL,
		    OPT_SOURCE_FEATURES },
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "target-public-records", required_argument, NULL,
		    OPT_TARGET_PUBLIC_RECORDS },
		{ "unsafe-test-no-clip", no_argument, NULL, OPT_UNSAFE },
		{ "val", required_argument, NULL, OPT_VAL },
		{ "val-public", no_argument, NULL, OPT_VAL_PUBLIC },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "weight-decay", required_argument, NULL, OPT_WD },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .batch = 256, .clip = 1, .grl_max = 1,
		.beta = { ASSOC_BETA_WALKER, ASSOC_BETA_VISIT, ASSOC_BETA_COVER },
		.kd_temp = GMM_KD_TEMP, .beta_adv = 1, .beta_kd = 1,
		.beta_im = 1 };
	struct data tr, tg, va, sf;
	struct assoc as;
	struct gmmuda gu;
	struct nn_dann gnets;
	struct nn_model m;
	struct trainer t;
	struct stream st[2];
	struct ts_meta meta = { 0 }, prov = { 0 }, initmeta = { 0 };
	struct ts_writer *w;
	struct rng *rng;
	FILE *in, *ofp, *vfp = NULL, *ifp = NULL, *tfp = NULL, *sfp = NULL;
	const char *label, *vlabel = NULL, *ilabel = NULL, *tlabel = NULL;
	const char *slabel = NULL;
	char err[256], arch[MODEL_MAX_ARCH];
	double t_start = cli_now();
	uint64_t idigest = 0;
	float *all = NULL;
	int ch, rc, nin = 0, src_dp;

	cli_init(argv[0], argc, argv);
	optim_defaults(&o.oc);
	while ((ch = getopt_long(argc, argv, "d:e:fho:qS:vV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'd':
			o.delta = dpcli_delta_arg("--delta", optarg);
			o.has_delta = 1;
			break;
		case 'e':
			o.epsilon = dpcli_epsilon_arg("--epsilon", optarg, 1e6);
			o.has_eps = 1;
			break;
		case 'f':
			o.force = 1;
			break;
		case 'h':
			usage(0);
		case 'o':
			o.output = optarg;
			break;
		case 'q':
			o.quiet = 1;
			cli_set_quiet(1);
			break;
		case 'S':
			(void)dpcli_seed_arg(optarg);
			o.seed = optarg;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'V':
			cli_version();
		case OPT_ASSUME_RAW:
			o.assume_raw = 1;
			break;
		case OPT_AUDIT:
			o.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_BATCH:
			o.batch = (size_t)cli_ll("--batch", optarg, 1,
			    MAX_BATCH);
			break;
		case OPT_BETA1:
		case OPT_BETA2:
		case OPT_BETA3: {
			static const char *const nm[] = { "--beta1", "--beta2",
				"--beta3" };
			int i = ch - OPT_BETA1;

			o.beta[i] = cli_double(nm[i], optarg, 0, 1e6);
			o.has_beta = 1;
			break;
		}
		case OPT_BETA_ADV:
			o.beta_adv = cli_double("--beta-adv", optarg, 0, 1e6);
			o.has_gmm_opt = 1;
			break;
		case OPT_BETA_IM:
			o.beta_im = cli_double("--beta-im", optarg, 0, 1e6);
			o.has_gmm_opt = 1;
			break;
		case OPT_BETA_KD:
			o.beta_kd = cli_double("--beta-kd", optarg, 0, 1e6);
			o.has_gmm_opt = 1;
			break;
		case OPT_CLASSES:
			o.classes = (size_t)cli_ll("--classes", optarg, 2,
			    NN_MAX_WIDTH);
			o.has_classes = 1;
			break;
		case OPT_CLIP:
			o.clip = cli_double("--clip", optarg, NN_CLIP_MIN,
			    NN_CLIP_MAX);
			o.has_clip = 1;
			break;
		case OPT_DATASET:
			if (ledger_check_dataset(optarg) != NULL)
				cli_usage_error("invalid --dataset '%s': %s",
				    optarg, ledger_check_dataset(optarg));
			o.dataset = optarg;
			break;
		case OPT_DOMAIN_HIDDEN:
			parse_hidden("--domain-hidden", optarg, o.dh, &o.ndh);
			o.has_dh = 1;
			break;
		case OPT_EPOCHS:
			o.epochs = cli_double("--epochs", optarg, 0,
			    MAX_EPOCHS);
			if (!(o.epochs > 0))
				cli_usage_error("invalid --epochs '%s': not "
				    "positive", optarg);
			o.has_epochs = 1;
			break;
		case OPT_EXACT:
			o.exact = 1;
			break;
		case OPT_FEATURE_LAYER:
			o.feature_layer = (size_t)cli_ll("--feature-layer",
			    optarg, 1, NN_MAX_LAYERS - 1);
			o.has_gmm_opt = 1;
			break;
		case OPT_FREEZE:
			o.freeze = (size_t)cli_ll("--freeze", optarg, 0,
			    NN_MAX_LAYERS);
			break;
		case OPT_GRL_MAX:
			o.grl_max = cli_double("--grl-max", optarg, 0, 1e6);
			o.has_grl = 1;
			break;
		case OPT_HIDDEN:
			parse_hidden("--hidden", optarg, o.hidden, &o.nhidden);
			break;
		case OPT_INIT:
			o.init = optarg;
			break;
		case OPT_KD_TEMP:
			o.kd_temp = cli_double("--kd-temp", optarg, 0, 1e6);
			if (!(o.kd_temp > 0))
				cli_usage_error("invalid --kd-temp '%s': not "
				    "positive", optarg);
			o.has_gmm_opt = 1;
			break;
		case OPT_LEVEL:
			o.level = cli_level_arg(optarg);
			break;
		case OPT_LR:
			o.oc.lr = cli_double("--lr", optarg, 0, 1e6);
			if (!(o.oc.lr > 0))
				cli_usage_error("invalid --lr '%s': not "
				    "positive", optarg);
			o.has_lr = 1;
			break;
		case OPT_SCHEDULE:
			parse_schedule(&o, optarg);
			break;
		case OPT_MODE:
			o.adapt = adapts[cli_choice("--mode", optarg, modes)];
			o.dann = o.adapt == ADAPT_DANN;
			break;
		case OPT_MOMENTUM:
			o.oc.momentum = cli_double("--momentum", optarg, 0, 1);
			if (!(o.oc.momentum < 1))
				cli_usage_error("invalid --momentum '%s': not "
				    "in [0, 1)", optarg);
			break;
		case OPT_NESTEROV:
			o.oc.nesterov = 1;
			break;
		case OPT_NODP:
			o.nodp = 1;
			break;
		case OPT_OPTIMIZER:
			o.oc.kind = cli_choice("--optimizer", optarg,
			    optimizers) == 0 ? OPTIM_SGD : OPTIM_ADAM;
			break;
		case OPT_PATIENCE:
			o.patience = (size_t)cli_ll("--patience", optarg, 1,
			    1000000);
			break;
		case OPT_PROTECT:
			switch (cli_choice("--protect", optarg, protects)) {
			case 0:
				o.protect = PROTECT_SOURCE;
				break;
			case 1:
				o.protect = PROTECT_TARGET;
				break;
			default:
				o.protect = PROTECT_BOTH;
				break;
			}
			break;
		case OPT_PUBLIC_RECORDS:
			o.public_records[0] = (uint64_t)cli_ll(
			    "--public-records", optarg, 1, (long long)NN_MAX_RECORDS);
			break;
		case OPT_SIGMA:
			o.sigma = cli_double("--sigma", optarg, 0, 1e6);
			o.has_sigma = 1;
			break;
		case OPT_SOURCE_FEATURES:
			o.src_feat = optarg;
			break;
		case OPT_TARGET:
			o.target = optarg;
			break;
		case OPT_TARGET_PUBLIC_RECORDS:
			o.public_records[1] = (uint64_t)cli_ll(
			    "--target-public-records", optarg, 1,
			    (long long)NN_MAX_RECORDS);
			break;
		case OPT_UNSAFE:
			o.unsafe = 1;
			break;
		case OPT_VAL:
			o.val = optarg;
			break;
		case OPT_VAL_PUBLIC:
			o.val_public = 1;
			break;
		case OPT_WD:
			o.oc.weight_decay = cli_double("--weight-decay", optarg,
			    0, 1e3);
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (o.assume_raw)
		dpcli_assume_raw(o.dataset);
	argc -= optind;
	argv += optind;
	if (argc > 1)
		cli_usage_error("at most one input file");
	memset(&t, 0, sizeof t);
	memset(st, 0, sizeof st);
	t.mode = check_mode(&o);
	t.dann = o.dann;
	if (o.unsafe) {
		const char *env = getenv(UNSAFE_ENV);
		if (env == NULL || strcmp(env, "1") != 0)
			cli_usage_error("--unsafe-test-no-clip disables the "
			    "privacy protection; it is for tests only and needs "
			    UNSAFE_ENV "=1 in the environment");
	}
	if (o.val != NULL && !o.val_public)
		cli_usage_error("--val needs --val-public: early stopping may "
		    "only look at data declared public");
	if (o.val_public && o.val == NULL)
		cli_usage_error("--val-public needs --val");
	if (o.patience && o.val == NULL)
		cli_usage_error("--patience needs --val");
	if (o.audit && o.val != NULL)
		cli_usage_error("--audit-repeat and --val do not go together");
	check_public(&o, t.mode);
	if (o.oc.kind == OPTIM_ADAM && !o.has_lr)
		o.oc.lr = 0.001;
	if (o.oc.nesterov && o.oc.momentum == 0)
		cli_usage_error("--nesterov needs --momentum");
	if ((o.dann || o.adapt == ADAPT_ASSOC) && o.init == NULL &&
	    o.nhidden == 0)
		cli_usage_error("--mode %s needs a feature extractor: give "
		    "--hidden (or an --init model with hidden layers)",
		    o.dann ? "dann" : "assoc");
	if (o.adapt == ADAPT_GMM && o.nhidden)
		cli_usage_error("--hidden does not apply with --init (the model "
		    "fixes the layers)");
	/* Which streams are clipped (and noised): the labelled one unless
	 * --no-dp; in dann mode, the domains of --protect. */
	src_dp = t.mode != MODE_NODP && (!o.dann ||
	    (o.protect & PROTECT_SOURCE));

	/* Open everything before computing. */
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	if (o.target != NULL)
		tfp = cli_open_in(o.target, &tlabel);
	if (o.init != NULL)
		ifp = cli_open_in(o.init, &ilabel);
	if (o.src_feat != NULL)
		sfp = cli_open_in(o.src_feat, &slabel);
	if (o.val != NULL)
		vfp = cli_open_in(o.val, &vlabel);
	ofp = cli_out_open(o.output, o.force);
	/* Without privacy a seed only makes the run reproducible: no
	 * warning about noise. */
	rng = t.mode == MODE_NODP ? sub_rng(&o, WORK_ITEM) :
	    dpcli_rng(o.seed, WORK_ITEM);
	if (t.mode == MODE_CLIP_ONLY)
		cli_warn("--sigma 0: no noise: the model is NOT private");
	if (o.unsafe)
		cli_warn("--unsafe-test-no-clip: gradients are not clipped: the "
		    "model is NOT private");

	read_data(&tr, in, label, o.adapt != ADAPT_GMM);
	cli_close_in(in);
	if (o.adapt == ADAPT_ASSOC)
		drop_unanswered(&tr, o.verbose);
	if (sfp != NULL) {
		read_data(&sf, sfp, slabel, 0);
		cli_close_in(sfp);
	}
	if (tfp != NULL) {
		read_data(&tg, tfp, tlabel, 0);
		cli_close_in(tfp);
		if (tg.d != tr.d)
			cli_die(EX_DATAERR, "%s: %zu features, %s has %zu",
			    tlabel, tg.d, label, tr.d);
	}
	if (ifp != NULL) {
		struct ts_reader *r = cli_reader(ifp, ilabel);
		struct tensor *ts = NULL;
		size_t nt = 0;

		if ((rc = ts_read_all(r, &ts, &nt)) != 0)
			cli_rdie(r, rc);
		if (model_read(&m, ts_reader_meta(r), ts, nt, err,
		    sizeof err) != 0)
			cli_die(EX_DATAERR, "%s: %s", ilabel, err);
		if (ts_meta_merge(&initmeta, ts_reader_meta(r), "", NULL) != 0)
			cli_die(EX_OSERR, "out of memory");
		idigest = ts_reader_digest(r);
		for (size_t i = 0; i < nt; i++)
			tensor_free(&ts[i]);
		free(ts);
		ts_reader_close(r);
		cli_close_in(ifp);
		if (o.nhidden)
			cli_usage_error("--hidden does not apply with --init "
			    "(the model fixes the layers)");
		if (model_inputs(&m) != tr.d)
			cli_die(EX_DATAERR, "%s: the model takes %zu features, "
			    "%s has %zu", ilabel, model_inputs(&m), label, tr.d);
		if (o.has_classes && o.classes != model_classes(&m))
			cli_usage_error("--classes %zu: the model of --init has "
			    "%zu classes", o.classes, model_classes(&m));
		if (o.adapt != ADAPT_NONE && m.net.nlayers < 2)
			cli_die(EX_DATAERR, "%s: --mode %s needs a model with "
			    "hidden layers, not %s", ilabel, modes[o.adapt],
			    ts_meta_get(&initmeta, "model.arch"));
		t.K = model_classes(&m);
	} else {
		size_t widths[NN_MAX_LAYERS + 1], nl = o.nhidden + 1;
		int names_ok;

		/* Under privacy K is public: --classes or a label set
		 * declared public, never one learnt from the rows. */
		rc = label_classes(&tr.lset, src_dp, o.has_classes ?
		    o.classes : 0, &t.K, &names_ok, err, sizeof err);
		if (rc == LABEL_E_USAGE)
			cli_usage_error("%s: %s", label, err);
		if (rc != LABEL_OK)
			cli_die(EX_DATAERR, "%s: %s", label, err);
		if (t.K == 0)
			for (size_t i = 0; i < tr.n; i++)
				if (tr.y[i] >= 0 && (size_t)tr.y[i] + 1 > t.K)
					t.K = (size_t)tr.y[i] + 1;
		if (t.K < 2)
			cli_die(EX_DATAERR, "%s: tensor 'y': fewer than 2 classes",
			    label);
		widths[0] = tr.d;
		for (size_t i = 0; i < o.nhidden; i++)
			widths[i + 1] = o.hidden[i];
		widths[nl] = t.K;
		if ((rc = model_init(&m, widths, nl)) != 0)
			cli_die(rc == NN_E_NOMEM ? EX_OSERR : EX_USAGE,
			    "model: %s", nn_strerror(rc));
	}
	if (o.freeze >= m.net.nlayers)
		cli_usage_error("--freeze %zu: the model has %zu layers; at "
		    "least one must be trained", o.freeze, m.net.nlayers);
	for (size_t l = 0; l < o.freeze; l++)
		m.net.layer[l].frozen = 1;
	t.np = m.nparam;
	if (o.adapt == ADAPT_GMM) {
		/* E is layers 1..L, C the rest (frozen); D's parameters
		 * follow the model's, as with dann. */
		size_t L = o.feature_layer ? o.feature_layer : m.net.nlayers - 1;
		size_t end, h;
		float *p;

		if (L >= m.net.nlayers)
			cli_usage_error("--feature-layer %zu: the model of %s has "
			    "%zu hidden layers", L, ilabel, m.net.nlayers - 1);
		if (o.freeze >= L)
			cli_usage_error("--freeze %zu: the encoder has %zu layers; "
			    "at least one must be trained", o.freeze, L);
		for (size_t l = L; l < m.net.nlayers; l++)
			m.net.layer[l].frozen = 1;
		if ((rc = nn_dann_init(&gnets, &m.net, L, o.dh, o.ndh,
		    m.nparam, &end)) != 0)
			cli_usage_error("--domain-hidden: %s", nn_strerror(rc));
		h = m.net.layer[L - 1].out;
		if (sf.d != h)
			cli_die(EX_DATAERR, "%s: %zu features, but layer %zu of the "
			    "model of %s has %zu units", slabel, sf.d, L, ilabel,
			    h);
		p = cli_reallocarray(m.param, end, sizeof *p);
		memset(p + m.nparam, 0, (end - m.nparam) * sizeof *p);
		m.param = p;
		t.np = end;
	}
	if (o.dann) {
		/* F is every hidden layer, H the last layer; D's parameters
		 * follow the model's in one vector. */
		size_t end;
		float *p;

		if ((rc = nn_dann_init(&t.nets, &m.net, m.net.nlayers - 1,
		    o.dh, o.ndh, m.nparam, &end)) != 0)
			cli_usage_error("--domain-hidden: %s", nn_strerror(rc));
		p = cli_reallocarray(m.param, end, sizeof *p);
		memset(p + m.nparam, 0, (end - m.nparam) * sizeof *p);
		m.param = p;
		t.np = end;
		/* The encoder's features leave a ReLU: a Gaussian sample's
		 * negative values are projected to 0, or the domain
		 * classifier tells the domains apart by sign alone. */
		for (size_t i = 0; i < sf.n * sf.d; i++)
			if (sf.X[i] < 0)
				sf.X[i] = 0;
	}
	if (!src_dp && o.adapt != ADAPT_GMM)
		check_labels(&tr, t.K);
	if (vfp != NULL) {
		read_data(&va, vfp, vlabel, 1);
		cli_close_in(vfp);
		if (va.d != tr.d)
			cli_die(EX_DATAERR, "%s: %zu features, %s has %zu",
			    vlabel, va.d, label, tr.d);
		check_labels(&va, t.K);
		nn_zero_nonfinite_rows(va.X, va.n, va.d);
		t.va = &va;
	}

	/* The streams: their datasets, the parameters they reach, their
	 * sampling rates. */
	t.o = &o;
	t.m = &m;
	t.lo = m.net.layer[nn_first_trained(&m.net)].off;
	t.hi = t.np;
	t.st = st;
	t.nst = o.adapt != ADAPT_NONE ? 2 : 1;
	t.nrange = 1;
	t.rlo[0] = t.lo;
	t.rhi[0] = t.hi;
	st[0].name = o.dann ? "source" : o.adapt == ADAPT_GMM ? "target" :
	    "labelled";
	st[0].dt = &tr;
	st[0].dp = src_dp;
	st[0].dataset = dpcli_dataset(&tr.meta, o.dataset, label);
	st[0].nr = 1;
	st[0].rlo[0] = t.lo;
	st[0].rhi[0] = t.hi;
	if (o.adapt == ADAPT_ASSOC || o.adapt == ADAPT_GMM) {
		/* Two plain streams, read by assoc_step or gmm_step: the
		 * labelled rows and the target rows, or the target rows and
		 * the sampled source features (a side input: no dataset of
		 * its own here, its ledger is inherited). */
		int gmm = o.adapt == ADAPT_GMM;

		st[1].name = gmm ? "samples" : "target";
		st[1].dt = gmm ? &sf : &tg;
		st[1].dataset = gmm ? NULL : dpcli_dataset(&tg.meta, NULL,
		    tlabel);
		if (gmm) {
			/* The optimiser moves E_t and D, never C. */
			t.rhi[0] = gnets.head.layer[0].off;
			t.rlo[1] = m.nparam;
			t.rhi[1] = t.np;
			t.nrange = 2;
		}
	} else if (!o.dann) {
		st[0].fwd_bwd = clf_fwd_bwd;
		st[0].nnets = 1;
		st[0].net[0] = &m.net;
		st[0].ws[0] = &t.ws;
	} else {
		size_t fend = t.nets.head.layer[0].off;

		st[0].fwd_bwd = dann_fwd_bwd;
		st[0].nnets = 3;
		st[0].net[0] = &t.nets.feat;
		st[0].net[1] = &t.nets.head;
		st[0].net[2] = &t.nets.dom;
		st[0].ws[0] = &st[0].dws.f;
		st[0].ws[1] = &st[0].dws.h;
		st[0].ws[2] = &st[0].dws.d;
		/* Target rows reach the trained layers of F and all of D,
		 * not H. */
		st[1].name = "target";
		st[1].dt = &tg;
		st[1].dp = t.mode != MODE_NODP && (o.protect & PROTECT_TARGET);
		st[1].domain = 1;
		st[1].dataset = dpcli_dataset(&tg.meta, NULL, tlabel);
		st[1].nr = 0;
		if (t.lo < fend) {
			st[1].rlo[st[1].nr] = t.lo;
			st[1].rhi[st[1].nr++] = fend;
		}
		st[1].rlo[st[1].nr] = m.nparam;
		st[1].rhi[st[1].nr++] = t.np;
		st[1].fwd_bwd = dann_fwd_bwd;
		st[1].nnets = 2;
		st[1].net[0] = &t.nets.feat;
		st[1].net[1] = &t.nets.dom;
		st[1].ws[0] = &st[1].dws.f;
		st[1].ws[1] = &st[1].dws.d;
		if (strcmp(st[0].dataset, st[1].dataset) == 0)
			cli_die(EX_DATAERR, "%s: the target rows belong to dataset "
			    "%s, like the source rows of %s: --mode dann needs two "
			    "datasets", tlabel, st[1].dataset, label);
	}
	for (size_t i = 0; i < t.nst; i++) {
		struct stream *s = &st[i];

		s->dim = 0;
		for (size_t j = 0; j < s->nr; j++)
			s->dim += s->rhi[j] - s->rlo[j];
		s->batch = o.batch;
		s->sigma = o.sigma;
		s->eps = -1;
		if (!s->dp)
			continue;
		/* q from the declared size only: the true count N is
		 * private (add/remove neighbours) and reaches no output.
		 * Poisson sampling at rate q is private whatever N is; a
		 * wrong declaration costs utility (the expected batch is q N,
		 * not B), not privacy. */
		s->npub = o.public_records[s->dt == &tr ? 0 : 1];
		s->q = o.batch >= s->npub ? 1 :
		    (double)o.batch / (double)s->npub;
		if (s->dt->n > NN_MAX_RECORDS)
			cli_die(EX_DATAERR, "%s: %zu records exceed the DP-SGD "
			    "limit of %llu", s->dt->label, s->dt->n,
			    (unsigned long long)NN_MAX_RECORDS);
		if (s->dt->n != s->npub)
			cli_warn("%s: %zu records, but %s declares %llu: the "
			    "sampling rate q = %g is --batch / %llu (this "
			    "warning is for the data holder only: no output "
			    "shows the true count)", s->dt->label, s->dt->n,
			    s->dt == &tr ? "--public-records" :
			    "--target-public-records",
			    (unsigned long long)s->npub, s->q,
			    (unsigned long long)s->npub);
	}
	zero_rows(&tr, st[0].dp);
	if (t.nst > 1)
		zero_rows(st[1].dt == &tg ? &tg : &sf, st[1].dp);
	/* Validation data must be public: not derived from any dataset
	 * trained on here. */
	if (t.va != NULL) {
		for (size_t i = 0; i < t.nst; i++) {
			char key[16 + LEDGER_MAX_NAME];

			if (st[i].dataset == NULL)
				continue;
			snprintf(key, sizeof key, "dp.raw.%s", st[i].dataset);
			if (ts_meta_get(&va.meta, key) != NULL)
				cli_die(EX_DATAERR, "%s: the validation data "
				    "derives from the protected dataset %s (%s): "
				    "it is not public", vlabel, st[i].dataset,
				    key);
		}
	}

	/* The length of training, from the labelled stream, and the privacy
	 * plan of each protected stream: q, sigma, the noise scale. */
	if (st[0].dp) {
		double e = round(1 / st[0].q);

		t.steps_per_epoch = e < 1 ? 1 : (uint64_t)e;
		if (o.has_epochs) {
			e = round(o.epochs / st[0].q);
			if (e > (double)MAX_STEPS)
				cli_usage_error("--epochs %g: more than %llu "
				    "steps", o.epochs,
				    (unsigned long long)MAX_STEPS);
			t.steps = e < 1 ? 1 : (uint64_t)e;
		}
	} else {
		double e;

		t.steps_per_epoch = (tr.n + o.batch - 1) / o.batch;
		e = ceil(o.epochs * (double)t.steps_per_epoch);
		if (e > (double)MAX_STEPS)
			cli_usage_error("--epochs %g: more than %llu steps",
			    o.epochs, (unsigned long long)MAX_STEPS);
		t.steps = (uint64_t)e;
	}
	for (size_t i = 0; i < t.nst; i++)
		if (st[i].dp && (o.has_eps || t.mode == MODE_DP))
			plan_dp(&t, &st[i], &o);
	for (size_t i = 0; i < t.nst; i++)
		stream_alloc(&t, &st[i], &o);
	if (o.adapt == ADAPT_ASSOC)
		assoc_init(&t, &as);
	else if (o.adapt == ADAPT_GMM)
		gmm_init(&t, &gu, &gnets);
	if ((rc = nn_ws_init(&t.ws, &m.net, st[0].cap)) != 0)
		cli_die(EX_OSERR, "out of memory");
	t.grad = cli_calloc(t.np, sizeof *t.grad);
	t.sum = cli_calloc(t.np, sizeof *t.sum);
	if (t.va != NULL)
		t.best = cli_reallocarray(NULL, t.np, sizeof *t.best);
	for (size_t i = 0; i < t.nst && o.verbose; i++) {
		if (!st[i].dp)
			continue;
		fprintf(stderr, "%s: %s: %zu records, q %.6g, %llu steps, "
		    "sigma %.6g, clip %g (rows clipped at %.9g), noise sd "
		    "%.6g\n", cli_prog(), st[i].name, st[i].dt->n, st[i].q,
		    (unsigned long long)t.steps, st[i].sigma, o.clip,
		    st[i].clip.clip_row, st[i].noise_std);
		if (st[i].eps >= 0)
			fprintf(stderr, "%s: (%.6g, %g)-DP for dataset %s\n",
			    cli_prog(), st[i].eps, o.delta, st[i].dataset);
	}

	/* Train: once, or --audit-repeat times from the same input. */
	{
		float *init = cli_reallocarray(NULL, t.np, sizeof *init);
		uint64_t runs = o.audit ? o.audit : 1;
		int zero = m.net.nlayers == 1, thr = 0;

		for (size_t i = 0; i < t.nst && t.mode == MODE_DP; i++) {
			char item[64];

			if (!st[i].dp)
				continue;
			if (o.dann)
				snprintf(item, sizeof item, WORK_ITEM
				    "/noise/%s", st[i].name);
			else
				snprintf(item, sizeof item, WORK_ITEM
				    "/noise");
			thr |= stream_noise(&st[i], &o, runs, item);
		}
		/* The noise workers take the other cores: more BLAS threads
		 * would only oversubscribe them. */
		if (thr)
			la_set_threads(1);
		if (o.audit)
			all = cli_reallocarray(NULL, runs * t.np, sizeof *all);
		memcpy(init, m.param, t.np * sizeof *init);
		for (uint64_t i = 0; i < runs; i++) {
			struct rng *ri = rng, *ni[2] = { NULL, NULL };
			char item[96];

			if (o.audit && o.seed) {
				snprintf(item, sizeof item, WORK_ITEM
				    "/audit/%llu", (unsigned long long)i);
				ri = sub_rng(&o, item);
			}
			/* Each noised stream of a seeded audit training draws
			 * from its own work item (with --mode dann, named after
			 * the domain, as the streams of one training are). */
			for (size_t j = 0; j < t.nst && o.audit && o.seed;
			    j++) {
				if (st[j].noise == NULL)
					continue;
				if (o.dann)
					snprintf(item, sizeof item, WORK_ITEM
					    "/audit/%llu/noise/%s",
					    (unsigned long long)i, st[j].name);
				else
					snprintf(item, sizeof item, WORK_ITEM
					    "/audit/%llu/noise",
					    (unsigned long long)i);
				ni[j] = sub_rng(&o, item);
				if (nn_noise_set_rng(st[j].noise, ni[j]) != 0)
					cli_die(EX_SOFTWARE, "noise: threaded "
					    "handle");
			}
			memcpy(m.param, init, t.np * sizeof *init);
			/* Logistic regression starts at 0 (a convex problem);
			 * an MLP from He/Glorot weights; --init as given.  A
			 * domain classifier always starts afresh. */
			if (o.init == NULL)
				nn_init_params(&m.net, m.param, ri, zero);
			if (o.dann)
				nn_init_params(&t.nets.dom, m.param, ri, 0);
			if (t.gu != NULL)
				nn_init_params(&gu.nets.dom, m.param, ri, 0);
			train(&t, ri, i, runs);
			if (o.audit)
				memcpy(all + i * t.np, m.param,
				    t.np * sizeof *all);
			if (ri != rng)
				rng_free(ri);
			for (size_t j = 0; j < 2; j++)
				rng_free(ni[j]);
		}
		if (o.audit)
			cli_progress_done();
		for (size_t i = 0; i < t.nst; i++) {
			if (st[i].noise != NULL) {
				st[i].tv = nn_noise_tv(st[i].noise);
				nn_noise_free(st[i].noise);
				st[i].noise = NULL;
			}
		}
		free(init);
	}

	/* The output: the model (and the domain classifier), then the
	 * stream metadata. */
	w = cli_writer(ofp, o.level);
	if (o.audit) {
		write_audit(w, &m.net, "model", all, t.np, o.audit);
		if (o.dann)
			write_audit(w, &t.nets.dom, "domain", all, t.np,
			    o.audit);
	} else if ((rc = model_write(w, &m)) != 0 || (o.dann &&
	    (rc = model_write_net(w, &t.nets.dom, m.param, "domain")) != 0) ||
	    (t.gu != NULL && (rc = model_write_net(w, &gu.nets.dom, m.param,
	    "domain")) != 0))
		cli_wdie(w, rc);
	cli_inherit(&meta, &tr.meta, label);
	cli_prov_input(&prov, nin++, label, tr.digest, &tr.meta);
	if (o.dann || o.adapt == ADAPT_ASSOC) {
		cli_inherit(&meta, &tg.meta, tlabel);
		cli_prov_input(&prov, nin++, tlabel, tg.digest, &tg.meta);
	}
	if (o.adapt == ADAPT_GMM) {
		/* The samples are post-processing of a (DP) mixture: their
		 * release entries come along, any raw mark as aggregate. */
		dpcli_inherit_side(&meta, &sf.meta, slabel);
		cli_prov_input(&prov, nin++, slabel, sf.digest, &sf.meta);
	}
	if (o.init != NULL) {
		dpcli_inherit_side(&meta, &initmeta, ilabel);
		cli_prov_input(&prov, nin++, ilabel, idigest, &initmeta);
	}
	if (t.va != NULL) {
		dpcli_inherit_side(&meta, &va.meta, vlabel);
		cli_prov_input(&prov, nin++, vlabel, va.digest, &va.meta);
	}
	/* Rows of datasets that are not protected here now feed an
	 * aggregate (the model): every raw mark but those of the protected
	 * streams becomes aggregate, and so do the datasets of streams
	 * trained without privacy (and all of them without noise or
	 * clipping). */
	for (size_t i = 0; i < meta.n; i++) {
		const char *k = meta.kv[i].key;
		int prot = 0;

		if (strncmp(k, "dp.raw.", 7) != 0)
			continue;
		for (size_t j = 0; j < t.nst; j++)
			prot |= st[j].dp && st[j].dataset != NULL &&
			    strcmp(k + 7, st[j].dataset) == 0;
		if (!prot && ledger_mark_raw(&meta, k + 7, LEDGER_AGGREGATE,
		    err, sizeof err) != 0)
			cli_die(EX_DATAERR, "%s: %s", label, err);
	}
	for (size_t i = 0; i < t.nst; i++) {
		if (st[i].dp && t.mode == MODE_DP)
			record_release(&meta, rng, &t, &st[i]);
		if (st[i].dataset != NULL && (!st[i].dp || t.mode != MODE_DP ||
		    o.unsafe))
			dpcli_not_private(&meta, st[i].dataset, st[i].dt->label);
	}
	dpcli_audit_mark(&meta, o.audit);
	if (model_put_meta(&m, &meta) != 0)
		cli_die(EX_OSERR, "out of memory");
	model_arch(&m, arch, sizeof arch);
	cli_meta_set(&meta, "train.mode", t.mode == MODE_DP ? "dp_sgd" :
	    t.mode == MODE_CLIP_ONLY ? "clip_only" : "no_dp");
	cli_meta_set(&meta, "train.optimizer", o.oc.kind == OPTIM_ADAM ?
	    "adam" : "sgd");
	meta_num(&meta, "train.lr", o.oc.lr);
	cli_meta_set(&meta, "train.lr_schedule", o.sched_arg ? o.sched_arg :
	    "constant");
	if (o.oc.kind == OPTIM_SGD)
		meta_num(&meta, "train.momentum", o.oc.momentum);
	meta_num(&meta, "train.weight_decay", o.oc.weight_decay);
	meta_num(&meta, "train.batch", (double)o.batch);
	meta_num(&meta, "train.freeze", (double)o.freeze);
	meta_num(&meta, "train.epochs_run", (double)t.epochs_run);
	if (o.has_epochs)
		meta_num(&meta, "train.epochs", o.epochs);
	if (o.dann) {
		char darch[MODEL_MAX_ARCH];
		struct nn_model dm = { .net = t.nets.dom };

		model_arch(&dm, darch, sizeof darch);
		cli_meta_set(&meta, "train.adapt", "dann");
		cli_meta_set(&meta, "train.protect", protect_name(o.protect));
		cli_meta_set(&meta, "train.domain_arch", darch);
		meta_num(&meta, "train.grl_max", o.grl_max);
		meta_num(&meta, "train.steps", (double)t.steps);
	}
	if (o.adapt == ADAPT_ASSOC) {
		cli_meta_set(&meta, "train.adapt", "assoc");
		meta_num(&meta, "train.beta_walker", o.beta[0]);
		meta_num(&meta, "train.beta_visit", o.beta[1]);
		meta_num(&meta, "train.beta_cover", o.beta[2]);
		meta_num(&meta, "train.labelled_rows", (double)tr.n);
		meta_num(&meta, "train.steps", (double)t.steps);
	}
	if (o.adapt == ADAPT_GMM) {
		char darch[MODEL_MAX_ARCH];
		struct nn_model dm = { .net = gu.nets.dom };

		model_arch(&dm, darch, sizeof darch);
		cli_meta_set(&meta, "train.adapt", "gmm-uda");
		cli_meta_set(&meta, "train.domain_arch", darch);
		meta_num(&meta, "train.feature_layer",
		    (double)gu.nets.feat.nlayers);
		meta_num(&meta, "train.kd_temp", o.kd_temp);
		meta_num(&meta, "train.beta_adv", o.beta_adv);
		meta_num(&meta, "train.beta_kd", o.beta_kd);
		meta_num(&meta, "train.beta_im", o.beta_im);
		meta_num(&meta, "train.steps", (double)t.steps);
	}
	if (t.mode != MODE_NODP) {
		meta_num(&meta, "train.steps", (double)t.steps);
		meta_num(&meta, "train.clip", o.clip);
	}
	for (size_t i = 0; i < t.nst; i++) {
		const struct stream *s = &st[i];
		char pre[32];

		if (!s->dp)
			continue;
		/* A classifier's keys have no stream part. */
		snprintf(pre, sizeof pre, "train.%s%s", o.dann ? s->name : "",
		    o.dann ? "." : "");
		if (o.dann)
			meta_key(&meta, pre, "dataset", s->dataset);
		meta_knum(&meta, pre, "q", s->q);
		meta_knum(&meta, pre, "sigma", s->sigma);
		if (t.mode == MODE_DP) {
			meta_knum(&meta, pre, "noise_std", s->noise_std);
			if (s->eps >= 0) {
				meta_knum(&meta, pre, "epsilon", s->eps);
				meta_knum(&meta, pre, "delta", o.delta);
			}
		}
	}
	if (t.mode == MODE_DP)
		cli_meta_set(&meta, "train.noise", o.exact ? "exact" : "fast");
	if (t.va != NULL) {
		meta_num(&meta, "train.best_epoch", (double)t.best_epoch);
		meta_num(&meta, "train.val_accuracy", t.best_acc);
	}
	cli_prov(&meta);
	if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(w, &meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	if (o.verbose)
		fprintf(stderr, "%s: %s trained in %.2f s\n", cli_prog(), arch,
		    cli_now() - t_start);
	cli_out_commit();

	nn_ws_free(&t.ws);
	if (t.as != NULL)
		assoc_free(&as);
	if (t.gu != NULL)
		gmm_free(&gu);
	for (size_t i = 0; i < t.nst; i++)
		stream_free(&st[i]);
	free(t.grad);
	free(t.sum);
	free(t.best);
	free(all);
	model_free(&m);
	data_free(&tr);
	if (tfp != NULL)
		data_free(&tg);
	if (sfp != NULL)
		data_free(&sf);
	if (t.va != NULL)
		data_free(&va);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	ts_meta_free(&initmeta);
	rng_free(rng);
	return 0;
}
