/* dpsgd-train: train a classifier with DP-SGD, or without privacy. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "dpnorm.h"
#include "dpsgd.h"
#include "dpsgdopt.h"
#include "fpsum.h"
#include "labels.h"
#include "ledger.h"
#include "model.h"
#include "modelcli.h"
#include "ncm.h"
#include "nn.h"
#include "optim.h"
#include "opts.h"
#include "rdp.h"
#include "tensor.h"
#include "tstream.h"
#include "xycli.h"

enum {
	OPT_ASSUME_RAW = OPTS_FIRST_TOOL, OPT_AUDIT, OPT_BATCH, OPT_BETA1,
	OPT_BETA2, OPT_BETA3, OPT_BETA_ADV, OPT_BETA_IM, OPT_BETA_KD,
	OPT_CLASSES, OPT_CLIP, OPT_DOMAIN_HIDDEN, OPT_EPOCHS, OPT_EXACT,
	OPT_FEATURE_LAYER, OPT_FREEZE, OPT_GRL_MAX, OPT_HIDDEN, OPT_INIT,
	OPT_KD_TEMP, OPT_LR, OPT_NORMALIZE, OPT_SCHEDULE, OPT_MODE, OPT_MOMENTUM,
	OPT_NESTEROV, OPT_NODP, OPT_OPTIMIZER, OPT_PATIENCE, OPT_PROTECT,
	OPT_PUBLIC_RECORDS, OPT_SIGMA, OPT_SOURCE_FEATURES, OPT_TARGET,
	OPT_TARGET_PUBLIC_RECORDS, OPT_UNSAFE, OPT_UNSAFE_HALF, OPT_VAL, OPT_VAL_PUBLIC, OPT_WD
};

struct opts {
	struct opts_common c;		/* every shared option */
	struct dpsgd_params p;		/* the trainer's, filled as parsed */
	struct dpsgd_given g;		/* for dpsgd_check_options */
	const char *init, *val, *target;
	const char *src_feat;		/* gmm-uda: --source-features */
	const char *sched_arg;		/* --lr-schedule as given */
	int assume_raw, has_lr;
	int dann;			/* --mode dann */
	int ncm;			/* --mode ncm */
	int unsafe_half;		/* --unsafe-test-half-sensitivity */
	int batch_full;			/* --batch full */
	double norm_sigma, norm_clip;	/* --normalize dp:SIGMA[:C]; 0: none */
	const char *sgd_opt;		/* an option of (DP-)SGD only */
	size_t feature_layer;		/* gmm-uda: 0 = the last hidden */
	size_t classes, freeze, nhidden, ndh;
	size_t hidden[NN_MAX_LAYERS], dh[NN_MAX_LAYERS];
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
		    "      --batch B          (expected) batch size, default 256; "
		    "full: every row\n"
		    "                         every step (q = 1)\n"
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
		    "      --mode MODE        classify (default), dann, assoc, "
		    "gmm-uda or ncm\n"
		    "      --momentum M       SGD momentum (default 0)\n"
		    "      --nesterov         Nesterov momentum\n"
		    "      --no-dp            train without privacy (the model "
		    "is raw-derived)\n"
		    "      --normalize dp:S[:C]  standardise the inputs with DP "
		    "means and variances\n"
		    "                         (noise multiplier S, rows clipped "
		    "to C, default 1)\n"
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
		    "PRIVADA_TEST_UNSAFE=1)\n"
		    "      --unsafe-test-half-sensitivity  ncm: noise for half "
		    "the sensitivity (tests only)\n", fp);
	exit(status);
}

/* ---- options ---- */

static void
parse_schedule(struct opts *o, const char *arg)
{
	char *end;

	o->sched_arg = arg;
	if (strcmp(arg, "constant") == 0) {
		o->p.oc.sched = OPTIM_CONSTANT;
	} else if (strcmp(arg, "cosine") == 0) {
		o->p.oc.sched = OPTIM_COSINE;
	} else if (strncmp(arg, "step:", 5) == 0) {
		errno = 0;
		o->p.sched_epochs = strtod(arg + 5, &end);
		if (end == arg + 5 || *end != ':' || errno == ERANGE ||
		    !(o->p.sched_epochs > 0) || !isfinite(o->p.sched_epochs))
			cli_usage_error("invalid --lr-schedule '%s': expected "
			    "step:EPOCHS:GAMMA with EPOCHS > 0", arg);
		/* Issue 15: step:1e20:0.5 overflowed the cast to steps. */
		if (o->p.sched_epochs > DPSGD_MAX_EPOCHS)
			cli_usage_error("invalid --lr-schedule '%s': EPOCHS is "
			    "at most %g", arg, DPSGD_MAX_EPOCHS);
		o->p.oc.gamma = cli_double("--lr-schedule", end + 1, 0, 1);
		if (!(o->p.oc.gamma > 0))
			cli_usage_error("invalid --lr-schedule '%s': GAMMA must "
			    "be in (0, 1]", arg);
		o->p.oc.sched = OPTIM_STEP;
	} else {
		cli_usage_error("invalid --lr-schedule '%s': expected "
		    "constant, cosine or step:EPOCHS:GAMMA", arg);
	}
}

/* --normalize dp:SIGMA[:C]: the joint noise multiplier of the DP
 * statistics and the rows' clip bound (default 1). */
static void
parse_normalize(struct opts *o, const char *arg)
{
	char *end;

	if (strncmp(arg, "dp:", 3) != 0)
		cli_usage_error("invalid --normalize '%s': expected "
		    "dp:SIGMA[:C]", arg);
	errno = 0;
	o->norm_sigma = strtod(arg + 3, &end);
	if (end == arg + 3 || errno == ERANGE || !(o->norm_sigma > 0) ||
	    !(o->norm_sigma <= 1e6) || (*end != '\0' && *end != ':'))
		cli_usage_error("invalid --normalize '%s': SIGMA must be in "
		    "(0, 1e6]", arg);
	o->norm_clip = *end == ':' ? cli_double("--normalize", end + 1,
	    NN_CLIP_MIN, NN_CLIP_MAX) : 1;
}

/* ---- the trainer ---- */

static void
on_progress(void *ctx, const char *what, uint64_t done, uint64_t total,
    double loss)
{
	(void)ctx;
	/* loss is NaN unless the run is not private (--no-dp). */
	if (what == NULL)
		cli_progress_done();
	else
		cli_progress_stat(what, done, total, "loss", loss);
}

static void
on_report(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "%s: %s\n", cli_prog(), line);
}

/* dpsgd_setup_model's error: usage, data or system. */
__attribute__((noreturn)) static void
setup_die(int rc, const char *err)
{
	if (rc == PV_E_OPTION)
		cli_usage_error("%s", err);
	cli_die(rc == PV_E_FORMAT ? EX_DATAERR : rc == PV_E_NOMEM ? EX_OSERR :
	    EX_USAGE, "%s", err);
}

/* A trainer's error: a usage error when the options cannot be met. */
__attribute__((noreturn)) static void
dpsgd_die(const struct dpsgd *t, int rc)
{
	if (rc == PV_E_OPTION)
		cli_usage_error("%s", dpsgd_errmsg(t));
	cli_die(rc == PV_E_NOMEM || rc == PV_E_ENTROPY ? EX_OSERR :
	    EX_SOFTWARE, "%s", dpsgd_errmsg(t));
}

/* The DP-SGD release entry of stream i (dpsgd_ledger_entry). */
static void
record_release(struct ts_meta *meta, struct rng *rng, const struct dpsgd *t,
    size_t i, const char *dataset)
{
	struct ledger_entry e;
	int rc;

	dpcli_entry(&e, rng, dataset, DPSGD_MECHANISM);
	if ((rc = dpsgd_ledger_entry(t, i, &e)) != 0)
		cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "accountant: "
		    "%s", rdp_strerror(rc));
	dpcli_release(meta, &e);
	ts_meta_free(&e.params);
}

static const char *const modes[] = { "classify", "dann", "assoc",
	"gmm-uda", "ncm", NULL };

/* The tool's own options that --mode ncm takes (with the shared ones). */
static int
ncm_option(int ch)
{
	static const int ok[] = { OPT_ASSUME_RAW, OPT_AUDIT, OPT_CLASSES,
		OPT_CLIP, OPT_MODE, OPT_NODP, OPT_PUBLIC_RECORDS, OPT_SIGMA,
		OPT_UNSAFE_HALF };

	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (ok[i] == ch)
			return 1;
	return 0;
}

/* Under privacy a label outside the classes is not an error (it would
 * reveal the record): such rows are dropped, uncounted.  Say so whenever
 * the classes are the user's number rather than a public label set's, on
 * the options alone, never on the rows. */
static void
warn_dropped(const struct opts *o, const struct xyset *tr, int dp)
{
	if (dp && o->classes && tr->lset.source != LABEL_PUBLIC)
		cli_warn("--classes %zu: rows labelled outside 0..%zu are "
		    "dropped without a count (under privacy the count is "
		    "private)", o->classes, o->classes - 1);
}

/* --mode ncm's options: a budget (-e and -d, or --sigma) or --no-dp. */
static void
ncm_check(const struct opts *o, struct ncm_params *np)
{
	if (o->sgd_opt != NULL)
		cli_usage_error("--%s does not apply with --mode ncm",
		    o->sgd_opt);
	if (o->g.nodp) {
		if (o->c.has_epsilon || o->c.has_delta || o->p.has_sigma ||
		    o->g.clip || o->p.public_records[0] || o->p.audit ||
		    o->unsafe_half)
			cli_usage_error("--no-dp goes with none of --epsilon, "
			    "--delta, --sigma, --clip, --public-records, "
			    "--audit-repeat");
	} else if (o->p.has_sigma) {
		if (o->c.has_epsilon)
			cli_usage_error("--sigma and --epsilon do not go "
			    "together");
	} else if (!o->c.has_epsilon || !o->c.has_delta) {
		cli_usage_error("--mode ncm needs --epsilon and --delta, "
		    "--sigma or --no-dp");
	}
	if (o->unsafe_half)
		opts_unsafe_gate("--unsafe-test-half-sensitivity");
	*np = (struct ncm_params){ .clip = o->g.nodp ? INFINITY : o->p.clip,
	    .noise = !o->g.nodp && !(o->p.has_sigma && o->p.sigma == 0),
	    .calibrate = !o->p.has_sigma, .epsilon = o->c.epsilon,
	    .delta = o->c.delta, .sigma = o->p.sigma,
	    .rows_bound = o->p.public_records[0] ? (double)
	    o->p.public_records[0] : (double)FPSUM_MAX_ROWS,
	    .repeats = o->p.audit, .unsafe_half = o->unsafe_half };
}

/* Write the f64 tensor name: [rows, len], or [len] when rows is 0. */
static void
write_f64(struct ts_writer *w, const char *name, const double *v,
    uint64_t rows, size_t len)
{
	uint64_t dims[2] = { rows, len };
	struct tensor hdr;
	int rc;

	if ((rc = tensor_init(&hdr, name, TS_F64, rows ? 2 : 1, rows ? dims :
	    dims + 1)) != 0 || (rc = ts_write_begin(w, &hdr)) != 0 ||
	    (rc = ts_write_rows(w, v, rows ? rows : len)) != 0 ||
	    (rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&hdr);
}

/* --mode ncm: the nearest class mean from one Gaussian release of the
 * class sums (lib/mech/ncm.h). */
static int
run_ncm(struct opts *o, int argc, char **argv)
{
	struct ncm_params np;
	struct ncm_plan pl;
	struct xyset tr;
	struct nn_model m;
	struct dpsgd_setup su;
	struct ledger_entry e;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct ts_writer *w;
	struct rng *rng;
	FILE *in, *ofp;
	const char *label, *dataset;
	char err[4096];
	size_t K, nparam, len;
	uint64_t runs;
	double *stats, *all;
	int rc, dp;

	ncm_check(o, &np);
	if (argc > 1)
		cli_usage_error("at most one input file");
	dp = !o->g.nodp;
	in = cli_open_in(argc ? argv[0] : NULL, &label);
	ofp = cli_out_open(o->c.output, o->c.force);
	rng = dp ? dpcli_rng(o->c.seed, "ncm") :
	    dpcli_rng_quiet(o->c.seed, "ncm");
	if (dp && !np.noise)
		cli_warn("--sigma 0: no noise: the model is NOT private");
	if (o->unsafe_half)
		cli_warn("--unsafe-test-half-sensitivity: the noise is for "
		    "half the sensitivity: the model is NOT private");
	xy_read(&tr, in, label, 1);
	cli_close_in(in);
	su = (struct dpsgd_setup){ .dp = dp, .classes = o->classes,
	    .lset = &tr.lset, .y = tr.y, .n = tr.n, .d = tr.d,
	    .mode = "ncm", .label = label };
	if ((rc = dpsgd_setup_model(&m, NULL, &o->p, &su, &K, &nparam, err,
	    sizeof err)) != 0)
		setup_die(rc, err);
	if (!dp)
		xy_check_labels(&tr, K);
	warn_dropped(o, &tr, dp);
	xy_zero_rows(&tr, dp);
	dataset = dpcli_dataset(&tr.meta, o->c.dataset, label);
	if (np.noise && (double)tr.n > np.rows_bound)
		cli_die(EX_DATAERR, "%s: more rows than %s %.0f", label,
		    o->p.public_records[0] ? "--public-records" :
		    "the bound of the floating-point error,", np.rows_bound);
	if ((rc = ncm_plan(&pl, &np, K, tr.d, err, sizeof err)) != 0) {
		if (rc == PV_E_OPTION)
			cli_usage_error("%s", err);
		cli_die(EX_SOFTWARE, "%s", err);
	}
	if (np.noise && o->c.verbose)
		fprintf(stderr, "%s: ncm: %zu classes, clip %g, noise "
		    "multiplier %.6g, noise sd of the class sums %.6g\n",
		    cli_prog(), K, np.clip, 1 / pl.mu, pl.part.sigma);

	/* One release, or --audit-repeat of them from the same rows. */
	len = K * tr.d;
	runs = o->p.audit ? o->p.audit : 1;
	stats = cli_reallocarray(NULL, len, sizeof *stats);
	all = cli_reallocarray(NULL, runs, len * sizeof *all);
	ncm_stats(tr.X, tr.y, tr.n, tr.d, K, np.clip, stats);
	for (uint64_t r = 0; r < runs; r++) {
		struct rng *ri = o->p.audit ? dpcli_rng_audit(o->c.seed, "ncm",
		    r, rng) : rng;

		memcpy(all + r * len, stats, len * sizeof *stats);
		if (np.noise && (rc = ncm_noise(&pl, ri, all + r * len, K,
		    tr.d, err, sizeof err)) != 0)
			cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "%s",
			    rc == PV_E_NOMEM ? "out of memory" : err);
		if (ri != rng)
			rng_free(ri);
	}
	ncm_model(all, K, tr.d, m.param, m.param + tr.d * K);

	w = cli_writer(ofp, o->c.level);
	if (o->p.audit)
		write_f64(w, "ncm/sums", all, runs, len);
	else if ((rc = model_write(w, &m)) != 0)
		cli_wdie(w, rc);
	cli_inherit(&meta, &tr.meta, label);
	cli_prov_input(&prov, 0, label, tr.digest, &tr.meta);
	if (np.noise) {
		dpcli_entry(&e, rng, dataset, NCM_MECHANISM);
		if (ncm_ledger_entry(&pl, &np, K, &e) != 0)
			cli_die(EX_OSERR, "out of memory");
		dpcli_release(&meta, &e);
		ts_meta_free(&e.params);
	}
	if (!np.noise || o->unsafe_half)
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o->p.audit);
	if (model_put_meta(&m, &meta) != 0 ||
	    ts_meta_set(&meta, "train.mode", !dp ? "no_dp" : np.noise ?
	    "dp_ncm" : "clip_only") != 0 ||
	    ts_meta_set(&meta, "train.adapt", "ncm") != 0 ||
	    (dp && ts_meta_setf(&meta, "train.clip", "%.17g", np.clip) != 0))
		cli_die(EX_OSERR, "out of memory");
	cli_prov(&meta);
	if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(w, &meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	cli_out_commit();
	free(stats);
	free(all);
	model_free(&m);
	xy_free(&tr);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	rng_free(rng);
	return 0;
}

/*
 * --batch full: full-batch gradient descent, every row in every step.
 * Under privacy the batch is the size declared public, so q = B / N = 1:
 * no sampling, no amplification, each step the plain Gaussian mechanism
 * (rdp_sgm at q = 1 is alpha / (2 sigma^2)), and the clipped sum is
 * divided by the declared size, not by the private count.  Without
 * privacy the batch is every row read (set once they are: full_batch_rows).
 */
static void
full_batch(struct opts *o)
{
	if (!o->batch_full)
		return;
	if (o->p.adapt != DPSGD_CLASSIFY)
		cli_usage_error("--batch full goes with --mode classify only");
	if (o->p.public_records[0])
		o->p.batch = (size_t)o->p.public_records[0];
	else if (o->g.nodp)
		o->p.batch = DPSGD_MAX_BATCH;	/* the rows, once read */
}

static void
full_batch_rows(struct opts *o, size_t n)
{
	if (o->batch_full && o->g.nodp && n > 0)
		o->p.batch = n < DPSGD_MAX_BATCH ? n : DPSGD_MAX_BATCH;
}

/* --normalize: its combinations. */
static void
normalize_check(const struct opts *o)
{
	if (o->norm_sigma == 0)
		return;
	if (o->p.adapt != DPSGD_CLASSIFY)
		cli_usage_error("--normalize goes with --mode classify only");
	if (o->g.nodp)
		cli_usage_error("--normalize dp needs privacy: without it, "
		    "standardise with public statistics (featurize)");
	if (o->init != NULL)
		cli_usage_error("--normalize and --init do not go together "
		    "(the model's first layer reads raw rows)");
	if (o->p.audit)
		cli_usage_error("--normalize and --audit-repeat do not go "
		    "together");
}

/* --normalize: release the DP means and variances of tr's rows and
 * standardise them.  Exit 64 on a bad plan, 71/70 on failure. */
static void
normalize_rows(const struct opts *o, struct xyset *tr, struct rng *rng,
    struct dpnorm *nrm, double **mean, double **sd)
{
	double *stats;
	char err[256];
	int rc;

	if ((rc = dpnorm_plan(nrm, o->norm_sigma, o->norm_clip,
	    (double)o->p.public_records[0], tr->d, 0, err, sizeof err)) != 0)
		cli_usage_error("%s", err);
	stats = cli_reallocarray(NULL, 2 * tr->d, sizeof *stats);
	*mean = cli_reallocarray(NULL, tr->d, sizeof **mean);
	*sd = cli_reallocarray(NULL, tr->d, sizeof **sd);
	if ((rc = dpnorm_release(nrm, rng, tr->X, tr->n, tr->d, stats, err,
	    sizeof err)) != 0)
		cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "%s",
		    rc == PV_E_NOMEM ? "out of memory" : err);
	dpnorm_finish(nrm, stats, tr->d, *mean, *sd);
	dpnorm_apply(tr->X, tr->n, tr->d, *mean, *sd);
	free(stats);
	if (o->c.verbose)
		fprintf(stderr, "%s: --normalize: noise multiplier %.6g, "
		    "noise sd of the sums %.6g, of the squares %.6g\n",
		    cli_prog(), 1 / nrm->mu, nrm->part[0].sigma,
		    nrm->part[1].sigma);
}

/* The normalisation's release entry, its own in the ledger. */
static void
record_normalize(struct ts_meta *meta, struct rng *rng,
    const struct dpnorm *nrm, size_t d, const char *dataset)
{
	struct ledger_entry e;

	dpcli_entry(&e, rng, dataset, "gaussian");
	if (dpnorm_ledger_entry(nrm, d, &e) != 0)
		cli_die(EX_OSERR, "out of memory");
	dpcli_release(meta, &e);
	ts_meta_free(&e.params);
}

/* The options into o; @return the index of the first operand. */
static int
parse_args(int argc, char **argv, struct opts *o)
{
	static const char *const optimizers[] = { "sgd", "adam", NULL };
	static const int adapts[] = { DPSGD_CLASSIFY, DPSGD_DANN, DPSGD_ASSOC,
		DPSGD_GMM };
	static const char *const protects[] = { "source", "target", "both",
		NULL };
	static const struct option longopts[] = {
		OPTS_COMMON_LONG,
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
		{ "domain-hidden", required_argument, NULL, OPT_DOMAIN_HIDDEN },
		{ "epochs", required_argument, NULL, OPT_EPOCHS },
		{ "exact-noise", no_argument, NULL, OPT_EXACT },
		{ "feature-layer", required_argument, NULL, OPT_FEATURE_LAYER },
		{ "freeze", required_argument, NULL, OPT_FREEZE },
		{ "grl-max", required_argument, NULL, OPT_GRL_MAX },
		{ "hidden", required_argument, NULL, OPT_HIDDEN },
		{ "init", required_argument, NULL, OPT_INIT },
		{ "kd-temp", required_argument, NULL, OPT_KD_TEMP },
		{ "lr", required_argument, NULL, OPT_LR },
		{ "lr-schedule", required_argument, NULL, OPT_SCHEDULE },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "momentum", required_argument, NULL, OPT_MOMENTUM },
		{ "nesterov", no_argument, NULL, OPT_NESTEROV },
		{ "no-dp", no_argument, NULL, OPT_NODP },
		{ "normalize", required_argument, NULL, OPT_NORMALIZE },
		{ "optimizer", required_argument, NULL, OPT_OPTIMIZER },
		{ "patience", required_argument, NULL, OPT_PATIENCE },
		{ "protect", required_argument, NULL, OPT_PROTECT },
		{ "public-records", required_argument, NULL,
		    OPT_PUBLIC_RECORDS },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "source-features", required_argument, NULL,
		    OPT_SOURCE_FEATURES },
		{ "target", required_argument, NULL, OPT_TARGET },
		{ "target-public-records", required_argument, NULL,
		    OPT_TARGET_PUBLIC_RECORDS },
		{ "unsafe-test-no-clip", no_argument, NULL, OPT_UNSAFE },
		{ "unsafe-test-half-sensitivity", no_argument, NULL,
		    OPT_UNSAFE_HALF },
		{ "val", required_argument, NULL, OPT_VAL },
		{ "val-public", no_argument, NULL, OPT_VAL_PUBLIC },
		{ "weight-decay", required_argument, NULL, OPT_WD },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "d:e:fho:qS:vV", longopts,
	    NULL)) != -1) {
		if (opts_common(&o->c, ch, optarg, usage))
			continue;
		for (size_t i = 0; !ncm_option(ch) && longopts[i].name; i++)
			if (longopts[i].val == ch)
				o->sgd_opt = longopts[i].name;
		switch (ch) {
		case OPT_ASSUME_RAW:
			o->assume_raw = 1;
			break;
		case OPT_AUDIT:
			o->p.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    DPSGD_MAX_AUDIT);
			break;
		case OPT_BATCH:
			o->batch_full = strcmp(optarg, "full") == 0;
			if (!o->batch_full)
				o->p.batch = (size_t)cli_ll("--batch", optarg,
				    1, DPSGD_MAX_BATCH);
			break;
		case OPT_BETA1:
		case OPT_BETA2:
		case OPT_BETA3: {
			static const char *const nm[] = { "--beta1", "--beta2",
				"--beta3" };
			int i = ch - OPT_BETA1;

			o->p.beta[i] = cli_double(nm[i], optarg, 0, 1e6);
			o->g.beta = 1;
			break;
		}
		case OPT_BETA_ADV:
			o->p.beta_adv = cli_double("--beta-adv", optarg, 0, 1e6);
			o->g.gmm = 1;
			break;
		case OPT_BETA_IM:
			o->p.beta_im = cli_double("--beta-im", optarg, 0, 1e6);
			o->g.gmm = 1;
			break;
		case OPT_BETA_KD:
			o->p.beta_kd = cli_double("--beta-kd", optarg, 0, 1e6);
			o->g.gmm = 1;
			break;
		case OPT_CLASSES:
			o->classes = (size_t)cli_ll("--classes", optarg, 2,
			    NN_MAX_WIDTH);
			break;
		case OPT_CLIP:
			o->p.clip = cli_double("--clip", optarg, NN_CLIP_MIN,
			    NN_CLIP_MAX);
			o->g.clip = 1;
			break;
		case OPT_DOMAIN_HIDDEN:
			mcli_parse_widths("--domain-hidden", optarg, o->dh, &o->ndh);
			o->g.domain_hidden = 1;
			break;
		case OPT_EPOCHS:
			o->p.epochs = cli_double("--epochs", optarg, 0,
			    DPSGD_MAX_EPOCHS);
			if (!(o->p.epochs > 0))
				cli_usage_error("invalid --epochs '%s': not "
				    "positive", optarg);
			o->p.has_epochs = 1;
			break;
		case OPT_EXACT:
			o->p.exact = 1;
			break;
		case OPT_FEATURE_LAYER:
			o->feature_layer = (size_t)cli_ll("--feature-layer",
			    optarg, 1, NN_MAX_LAYERS - 1);
			o->g.gmm = 1;
			break;
		case OPT_FREEZE:
			o->freeze = (size_t)cli_ll("--freeze", optarg, 0,
			    NN_MAX_LAYERS);
			break;
		case OPT_GRL_MAX:
			o->p.grl_max = cli_double("--grl-max", optarg, 0, 1e6);
			o->g.grl = 1;
			break;
		case OPT_HIDDEN:
			mcli_parse_widths("--hidden", optarg, o->hidden, &o->nhidden);
			o->g.hidden = o->nhidden;
			break;
		case OPT_INIT:
			o->init = optarg;
			o->p.init = 1;
			break;
		case OPT_KD_TEMP:
			o->p.kd_temp = cli_double("--kd-temp", optarg, 0, 1e6);
			if (!(o->p.kd_temp > 0))
				cli_usage_error("invalid --kd-temp '%s': not "
				    "positive", optarg);
			o->g.gmm = 1;
			break;
		case OPT_LR:
			o->p.oc.lr = cli_double("--lr", optarg, 0, 1e6);
			if (!(o->p.oc.lr > 0))
				cli_usage_error("invalid --lr '%s': not "
				    "positive", optarg);
			o->has_lr = 1;
			break;
		case OPT_SCHEDULE:
			parse_schedule(o, optarg);
			break;
		case OPT_MODE: {
			int i = cli_choice("--mode", optarg, modes);

			o->ncm = modes[i + 1] == NULL;
			o->p.adapt = o->ncm ? DPSGD_CLASSIFY : adapts[i];
			o->dann = o->p.adapt == DPSGD_DANN;
			break;
		}
		case OPT_MOMENTUM:
			o->p.oc.momentum = cli_double("--momentum", optarg, 0, 1);
			if (!(o->p.oc.momentum < 1))
				cli_usage_error("invalid --momentum '%s': not "
				    "in [0, 1)", optarg);
			break;
		case OPT_NESTEROV:
			o->p.oc.nesterov = 1;
			break;
		case OPT_NODP:
			o->g.nodp = 1;
			break;
		case OPT_NORMALIZE:
			parse_normalize(o, optarg);
			break;
		case OPT_OPTIMIZER:
			o->p.oc.kind = cli_choice("--optimizer", optarg,
			    optimizers) == 0 ? OPTIM_SGD : OPTIM_ADAM;
			break;
		case OPT_PATIENCE:
			o->p.patience = (size_t)cli_ll("--patience", optarg, 1,
			    1000000);
			break;
		case OPT_PROTECT:
			switch (cli_choice("--protect", optarg, protects)) {
			case 0:
				o->p.protect = DPSGD_PROTECT_SOURCE;
				break;
			case 1:
				o->p.protect = DPSGD_PROTECT_TARGET;
				break;
			default:
				o->p.protect = DPSGD_PROTECT_BOTH;
				break;
			}
			break;
		case OPT_PUBLIC_RECORDS:
			o->p.public_records[0] = (uint64_t)cli_ll(
			    "--public-records", optarg, 1, (long long)NN_MAX_RECORDS);
			break;
		case OPT_SIGMA:
			o->p.sigma = cli_double("--sigma", optarg, 0, 1e6);
			o->p.has_sigma = 1;
			break;
		case OPT_SOURCE_FEATURES:
			o->src_feat = optarg;
			o->g.source_features = 1;
			break;
		case OPT_TARGET:
			o->target = optarg;
			o->g.target = 1;
			break;
		case OPT_TARGET_PUBLIC_RECORDS:
			o->p.public_records[1] = (uint64_t)cli_ll(
			    "--target-public-records", optarg, 1,
			    (long long)NN_MAX_RECORDS);
			break;
		case OPT_UNSAFE:
			o->p.unsafe = 1;
			break;
		case OPT_UNSAFE_HALF:
			o->unsafe_half = 1;
			break;
		case OPT_VAL:
			o->val = optarg;
			o->g.val = 1;
			break;
		case OPT_VAL_PUBLIC:
			o->g.val_public = 1;
			break;
		case OPT_WD:
			o->p.oc.weight_decay = cli_double("--weight-decay", optarg,
			    0, 1e3);
			break;
		default:
			usage(EX_USAGE);
		}
	}
	o->p.has_eps = o->c.has_epsilon;
	o->p.has_delta = o->c.has_delta;
	o->p.epsilon = o->c.epsilon;
	o->p.delta = o->c.delta;
	o->p.seeded = o->c.seed != NULL;
	o->p.seed = o->c.seed != NULL ? dpcli_seed_arg(o->c.seed) : 0;
	o->p.progress = on_progress;
	o->p.report = o->c.verbose ? on_report : NULL;
	return optind;
}

int
main(int argc, char **argv)
{
	struct opts o = { .c = OPTS_COMMON_INIT };
	struct xyset tr, tg, va, sf;
	struct nn_dann dnets, gnets;	/* dann's, gmm-uda's F, H and D */
	struct nn_model m;
	struct dpsgd *dp = NULL;
	struct dpsgd_data view[2], vview;
	struct dpsgd_plan pl[2];
	struct dpsgd_summary sm;
	struct dpsgd_meta mi;
	struct dpsgd_setup su;
	struct xyset *sdt[2];
	const struct xyset *vap = NULL;
	const char *dataset[2];
	size_t nst, K = 0, np;
	struct ts_meta meta = { 0 }, prov = { 0 }, initmeta = { 0 };
	struct ts_writer *w;
	struct rng *rng;
	FILE *in, *ofp, *vfp = NULL, *ifp = NULL, *tfp = NULL, *sfp = NULL;
	const char *label, *vlabel = NULL, *ilabel = NULL, *tlabel = NULL;
	const char *slabel = NULL;
	char err[256], oerr[DPSGD_OPT_ERRLEN], arch[MODEL_MAX_ARCH];
	char serr[4096];
	double t_start = cli_now();
	uint64_t idigest = 0;
	float *all = NULL;
	struct dpnorm nrm;
	double *nmean = NULL, *nsd = NULL;
	int rc, nin = 0, src_dp, mode, first;

	cli_init(argv[0], argc, argv);
	dpsgd_defaults(&o.p);
	first = parse_args(argc, argv, &o);
	if (o.assume_raw)
		dpcli_assume_raw(o.c.dataset);
	argc -= first;
	argv += first;
	if (o.ncm)
		return run_ncm(&o, argc, argv);
	if (argc > 1)
		cli_usage_error("at most one input file");
	full_batch(&o);
	normalize_check(&o);
	if (dpsgd_check_options(&o.p, &o.g, oerr, sizeof oerr) != NULL)
		cli_usage_error("%s", oerr);
	mode = o.p.mode;
	if (o.p.unsafe)
		opts_unsafe_gate("--unsafe-test-no-clip");
	if (o.p.oc.kind == OPTIM_ADAM && !o.has_lr)
		o.p.oc.lr = 0.001;
	if (dpsgd_check_inputs(&o.p, &o.g, oerr, sizeof oerr) != NULL)
		cli_usage_error("%s", oerr);
	if (dpsgd_check_params(&o.p) != NULL)
		cli_usage_error("%s", dpsgd_check_params(&o.p));
	/* Which streams are clipped (and noised): the labelled one unless
	 * --no-dp; in dann mode, the domains of --protect. */
	src_dp = mode != DPSGD_NODP && (!o.dann ||
	    (o.p.protect & DPSGD_PROTECT_SOURCE));

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
	ofp = cli_out_open(o.c.output, o.c.force);
	/* Without privacy a seed only makes the run reproducible: no
	 * warning about noise. */
	rng = mode == DPSGD_NODP ? dpcli_rng_quiet(o.c.seed,
	    DPSGD_WORK_ITEM) :
	    dpcli_rng(o.c.seed, DPSGD_WORK_ITEM);
	if (mode == DPSGD_CLIP_ONLY)
		cli_warn("--sigma 0: no noise: the model is NOT private");
	if (o.norm_sigma > 0 && o.c.has_epsilon)
		cli_warn("--normalize: its release adds to the training's "
		    "--epsilon (rdp-account ledger reports the total)");
	if (o.p.unsafe)
		cli_warn("--unsafe-test-no-clip: gradients are not clipped: the "
		    "model is NOT private");

	xy_read(&tr, in, label, o.p.adapt != DPSGD_GMM);
	cli_close_in(in);
	full_batch_rows(&o, tr.n);
	if (o.norm_sigma > 0)
		normalize_rows(&o, &tr, rng, &nrm, &nmean, &nsd);
	if (o.p.adapt == DPSGD_ASSOC)
		xy_drop_unlabelled(&tr, o.c.verbose);
	if (sfp != NULL) {
		xy_read(&sf, sfp, slabel, 0);
		cli_close_in(sfp);
	}
	if (tfp != NULL) {
		xy_read(&tg, tfp, tlabel, 0);
		cli_close_in(tfp);
		if (tg.d != tr.d)
			cli_die(EX_DATAERR, "%s: %zu features, %s has %zu",
			    tlabel, tg.d, label, tr.d);
	}
	if (ifp != NULL)
		mcli_read_model_fp(ifp, ilabel, &m, &initmeta, &idigest);
	su = (struct dpsgd_setup){ .init = ifp != NULL, .dp = src_dp,
	    .classes = o.classes, .hidden = o.hidden, .nhidden = o.nhidden,
	    .freeze = o.freeze, .feature_layer = o.feature_layer, .dh = o.dh,
	    .ndh = o.ndh, .lset = &tr.lset, .y = tr.y, .n = tr.n, .d = tr.d,
	    .src_d = sfp != NULL ? sf.d : 0, .mode = modes[o.p.adapt],
	    .label = label, .ilabel = ilabel, .slabel = slabel,
	    .iarch = ts_meta_get(&initmeta, "model.arch") };
	if ((rc = dpsgd_setup_model(&m, o.dann ? &dnets : &gnets, &o.p, &su,
	    &K, &np, serr, sizeof serr)) != 0)
		setup_die(rc, serr);
	if (o.dann) {
		/* The encoder's features leave a ReLU: a Gaussian sample's
		 * negative values are projected to 0, or the domain
		 * classifier tells the domains apart by sign alone.
		 * FIXME: only gmm-uda reads --source-features, so sf is
		 * never read here and this loop never runs (it read an
		 * uninitialised sf before); gmm-uda's samples are not
		 * projected.  Moving it changes seeded gmm-uda outputs. */
		for (size_t i = 0; sfp != NULL && i < sf.n * sf.d; i++)
			if (sf.X[i] < 0)
				sf.X[i] = 0;
	}
	if (!src_dp && o.p.adapt != DPSGD_GMM)
		xy_check_labels(&tr, K);
	/* Under privacy a label outside the classes is not an error (it
	 * would reveal the record): such rows are dropped, uncounted.  Say
	 * so whenever the classes are the user's number rather than a public
	 * label set's, on the options alone, never on the rows. */
	warn_dropped(&o, &tr, src_dp);
	if (vfp != NULL) {
		xy_read(&va, vfp, vlabel, 1);
		cli_close_in(vfp);
		if (va.d != tr.d)
			cli_die(EX_DATAERR, "%s: %zu features, %s has %zu",
			    vlabel, va.d, label, tr.d);
		xy_check_labels(&va, K);
		nn_zero_nonfinite_rows(va.X, va.n, va.d);
		if (o.norm_sigma > 0)
			dpnorm_apply(va.X, va.n, va.d, nmean, nsd);
		vap = &va;
	}

	/* The streams: the training input, and the target rows of dann and
	 * assoc or the source samples of gmm-uda (a side input: no dataset
	 * of its own here, its ledger is inherited). */
	nst = o.p.adapt != DPSGD_CLASSIFY ? 2 : 1;
	sdt[0] = &tr;
	sdt[1] = o.p.adapt == DPSGD_GMM ? &sf : &tg;
	dataset[0] = dpcli_dataset(&tr.meta, o.c.dataset, label);
	dataset[1] = nst > 1 && o.p.adapt != DPSGD_GMM ?
	    dpcli_dataset(&tg.meta, NULL, tlabel) : NULL;
	if (o.dann && strcmp(dataset[0], dataset[1]) == 0)
		cli_die(EX_DATAERR, "%s: the target rows belong to dataset %s, "
		    "like the source rows of %s: --mode dann needs two datasets",
		    tlabel, dataset[1], label);
	for (size_t i = 0; i < nst; i++)
		view[i] = (struct dpsgd_data){ sdt[i]->X, sdt[i]->y,
		    sdt[i]->n, sdt[i]->d };
	if (vap != NULL)
		vview = (struct dpsgd_data){ va.X, va.y, va.n, va.d };
	if ((rc = dpsgd_new(&dp, &o.p, &m, o.dann ? &dnets : o.p.adapt ==
	    DPSGD_GMM ? &gnets : NULL, np, K, &view[0], nst > 1 ? &view[1] :
	    NULL, vap != NULL ? &vview : NULL)) != 0)
		dpsgd_die(dp, rc);
	for (size_t i = 0; i < nst; i++) {
		dpsgd_stream_plan(dp, i, &pl[i]);
		if (!pl[i].dp)
			continue;
		if (sdt[i]->n > NN_MAX_RECORDS)
			cli_die(EX_DATAERR, "%s: %zu records exceed the DP-SGD "
			    "limit of %llu", sdt[i]->label, sdt[i]->n,
			    (unsigned long long)NN_MAX_RECORDS);
		if (sdt[i]->n != pl[i].npub)
			cli_warn("%s: %zu records, but %s declares %llu: the "
			    "sampling rate q = %g is --batch / %llu (this "
			    "warning is for the data holder only: no output "
			    "shows the true count)", sdt[i]->label, sdt[i]->n,
			    i == 0 ? "--public-records" :
			    "--target-public-records",
			    (unsigned long long)pl[i].npub, pl[i].q,
			    (unsigned long long)pl[i].npub);
	}
	xy_zero_rows(&tr, pl[0].dp);
	if (nst > 1)
		xy_zero_rows(sdt[1], pl[1].dp);
	/* Validation data must be public: not derived from any dataset
	 * trained on here. */
	for (size_t i = 0; i < nst && vap != NULL; i++) {
		char key[16 + LEDGER_MAX_NAME];

		if (dataset[i] == NULL)
			continue;
		snprintf(key, sizeof key, "dp.raw.%s", dataset[i]);
		if (ts_meta_get(&va.meta, key) != NULL)
			cli_die(EX_DATAERR, "%s: the validation data derives "
			    "from the protected dataset %s (%s): it is not "
			    "public", vlabel, dataset[i], key);
	}

	/* The length of training and the privacy plan of each protected
	 * stream: q, sigma, the noise scale. */
	if ((rc = dpsgd_plan(dp)) != 0)
		dpsgd_die(dp, rc);
	dpsgd_summary(dp, &sm);
	for (size_t i = 0; i < nst; i++) {
		dpsgd_stream_plan(dp, i, &pl[i]);
		if (!pl[i].dp || !o.c.verbose)
			continue;
		fprintf(stderr, "%s: %s: %zu records, q %.6g, %llu steps, "
		    "sigma %.6g, clip %g (rows clipped at %.9g), noise sd "
		    "%.6g\n", cli_prog(), pl[i].name, sdt[i]->n, pl[i].q,
		    (unsigned long long)sm.steps, pl[i].sigma, o.p.clip,
		    pl[i].clip_row, pl[i].noise_std);
		if (pl[i].eps >= 0)
			fprintf(stderr, "%s: (%.6g, %g)-DP for dataset %s%s\n",
			    cli_prog(), pl[i].eps, o.c.delta, dataset[i],
			    i == 0 && o.norm_sigma > 0 ? " (the training; "
			    "--normalize adds its release: rdp-account ledger "
			    "composes them)" : "");
	}

	/* Train: once, or --audit-repeat times from the same input. */
	if (o.p.audit)
		all = cli_reallocarray(NULL, o.p.audit * np, sizeof *all);
	if ((rc = dpsgd_train(dp, rng, all)) != 0)
		dpsgd_die(dp, rc);
	dpsgd_summary(dp, &sm);
	for (size_t i = 0; i < nst; i++)
		dpsgd_stream_plan(dp, i, &pl[i]);

	/* The output: the model (and the domain classifier), then the
	 * stream metadata. */
	/* Trained on standardised rows: the map goes into the first layer,
	 * so the model reads raw rows. */
	if (o.norm_sigma > 0)
		dpnorm_fold(&m, nmean, nsd);
	w = cli_writer(ofp, o.c.level);
	if (o.p.audit) {
		if ((rc = dpsgd_write_audit(w, &m.net, "model", all, np,
		    o.p.audit)) != 0 || (o.dann && (rc = dpsgd_write_audit(w,
		    &dnets.dom, "domain", all, np, o.p.audit)) != 0))
			cli_wdie(w, rc);
	} else if ((rc = model_write(w, &m)) != 0 || (o.dann &&
	    (rc = model_write_net(w, &dnets.dom, m.param, "domain")) != 0) ||
	    (o.p.adapt == DPSGD_GMM && (rc = model_write_net(w, &gnets.dom,
	    m.param, "domain")) != 0))
		cli_wdie(w, rc);
	/* The released normalisation (post-processing of its release). */
	if (o.norm_sigma > 0) {
		write_f64(w, "normalize/mean", nmean, 0, tr.d);
		write_f64(w, "normalize/sd", nsd, 0, tr.d);
	}
	cli_inherit(&meta, &tr.meta, label);
	cli_prov_input(&prov, nin++, label, tr.digest, &tr.meta);
	if (o.dann || o.p.adapt == DPSGD_ASSOC) {
		cli_inherit(&meta, &tg.meta, tlabel);
		cli_prov_input(&prov, nin++, tlabel, tg.digest, &tg.meta);
	}
	if (o.p.adapt == DPSGD_GMM) {
		/* The samples are post-processing of a (DP) mixture: their
		 * release entries come along, any raw mark as aggregate. */
		dpcli_inherit_side(&meta, &sf.meta, slabel);
		cli_prov_input(&prov, nin++, slabel, sf.digest, &sf.meta);
	}
	if (o.init != NULL) {
		dpcli_inherit_side(&meta, &initmeta, ilabel);
		cli_prov_input(&prov, nin++, ilabel, idigest, &initmeta);
	}
	if (vap != NULL) {
		dpcli_inherit_side(&meta, &va.meta, vlabel);
		cli_prov_input(&prov, nin++, vlabel, va.digest, &va.meta);
	}
	/* The ledger: the aggregate marks, each protected stream's release,
	 * and the datasets the model is not private for. */
	mi.dataset[0] = dataset[0];
	mi.dataset[1] = dataset[1];
	mi.lr_schedule = o.sched_arg;
	mi.freeze = o.freeze;
	if (dpsgd_mark_raw(dp, &meta, &mi, err, sizeof err) != 0)
		cli_die(EX_DATAERR, "%s: %s", label, err);
	if (o.norm_sigma > 0)
		record_normalize(&meta, rng, &nrm, tr.d, dataset[0]);
	for (size_t i = 0; i < nst; i++) {
		if (pl[i].release)
			record_release(&meta, rng, dp, i, dataset[i]);
		if (dataset[i] != NULL && !pl[i].private_for)
			dpcli_not_private(&meta, dataset[i], sdt[i]->label);
	}
	dpcli_audit_mark(&meta, o.p.audit);
	if (model_put_meta(&m, &meta) != 0)
		cli_die(EX_OSERR, "out of memory");
	model_arch(&m, arch, sizeof arch);
	if (dpsgd_put_meta(dp, &meta, &mi) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_prov(&meta);
	if (ts_meta_merge(&meta, &prov, "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	if ((rc = ts_write_meta(w, &meta)) != 0 ||
	    (rc = ts_writer_finish(w)) != 0)
		cli_wdie(w, rc);
	ts_writer_close(w);
	if (o.c.verbose)
		fprintf(stderr, "%s: %s trained in %.2f s\n", cli_prog(), arch,
		    cli_now() - t_start);
	cli_out_commit();

	dpsgd_free(dp);
	free(all);
	free(nmean);
	free(nsd);
	model_free(&m);
	xy_free(&tr);
	if (tfp != NULL)
		xy_free(&tg);
	if (sfp != NULL)
		xy_free(&sf);
	if (vap != NULL)
		xy_free(&va);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	ts_meta_free(&initmeta);
	rng_free(rng);
	return 0;
}
