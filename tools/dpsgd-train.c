/*
 * dpsgd-train: train a classifier with DP-SGD, or without privacy.  The
 * usage, options and main; the runs are under tools/dpsgd-train/
 * (dpsgd-train.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "dpsgd.h"
#include "dpsgd-train/dpsgd-train.h"
#include "dpsgdopt.h"
#include "modelcli.h"
#include "nn.h"
#include "optim.h"
#include "opts.h"

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: dpsgd-train [-fhqVv] [-d delta] [-e epsilon] [-o file] "
	    "[-S seed]\n"
	    "                   [--activation name] [--arch list] "
	    "[--input-shape HxWxC]\n"
	    "                   [--assume-raw] [--audit-repeat n] [--batch n] "
	    "[--beta-adv w]\n"
	    "                   [--beta-im w] [--beta-kd w] [--beta1 w] [--beta2 w] "
	    "[--beta3 w]\n"
	    "                   [--budget-store path] [--classes k]"
	    " [--clip c] [--dataset name]\n"
	    "                   [--domain-hidden list]"
	    " [--epochs n]"
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
	    "[--tune grid --tune-trials dist\n"
	    "                   --val-fraction f] [--tune-score-sigma s] "
	    "[--tune-split-seed n]\n"
	    "                   [--val file --val-public] "
	    "[--weight-decay w]\n"
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
		    "      --activation NAME  --arch: relu (default), tanh or "
		    "tsigmoid:S:T:O\n"
		    "                         (S sigmoid(T x) - O; tanh is "
		    "tsigmoid:2:2:1)\n"
		    "      --arch LIST        layers, e.g. c16k8s2p3,m2,c32k4s2,m2,"
		    "d32:\n"
		    "                         conv c<N>k<K>[s<S>][p<P>],\n"
		    "                         pools a<K>[s<S>] (average), "
		    "m<K>[s<S>] (max), group norm g<G>,\n"
		    "                         dense d<N>\n"
		    "      --assume-raw       the input, of unknown provenance (tns from-csv,\n"
		    "                         from-npy), holds raw records of --dataset\n"
		    "      --audit-repeat N   N independent trainings (tests "
		    "only)\n"
		    "      --budget-store PATH\n"
		    "                         charge the release to the budget store "
		    "PATH first\n"
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
		    "      --input-shape HxWxC  --arch: the rows as images, "
		    "channel last\n"
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
		    , fp);
	fputs("      --momentum M       SGD momentum (default 0)\n"
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
		    "declared public\n", fp);
	if (status == 0)
		fputs("      --tune GRID        private tuning: trials draw a "
		    "configuration of GRID,\n"
		    "                         e.g. 'lr=0.5,1;clip=0.1,1;"
		    "epochs=10,20;batch=256', train\n"
		    "                         on the rows outside --val-fraction "
		    "and are scored on\n"
		    "                         the others; the best model is "
		    "written; -e is the tuned total\n"
		    "      --tune-score-sigma S  --tune: noise of the validation "
		    "count (10)\n"
		    "      --tune-split-seed N  --tune: the public seed of the "
		    "split (0)\n"
		    "      --tune-trials DIST --tune: the number of trials, "
		    "geometric:MU, logarithmic:MU,\n"
		    "                         negbin:ETA:MU or poisson:MU "
		    "(mean MU)\n"
		    "      --val-fraction F   --tune: the validation part of "
		    "the rows\n"
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

const char *const modes[] = { "classify", "dann", "assoc",
	"gmm-uda", "ncm", NULL };

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
		{ "activation", required_argument, NULL, OPT_ACTIVATION },
		{ "arch", required_argument, NULL, OPT_ARCH },
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
		{ "input-shape", required_argument, NULL, OPT_INPUT_SHAPE },
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
		{ "tune", required_argument, NULL, OPT_TUNE },
		{ "tune-score-sigma", required_argument, NULL,
		    OPT_TUNE_SCORE_SIGMA },
		{ "tune-split-seed", required_argument, NULL,
		    OPT_TUNE_SPLIT_SEED },
		{ "tune-trials", required_argument, NULL, OPT_TUNE_TRIALS },
		{ "unsafe-test-no-clip", no_argument, NULL, OPT_UNSAFE },
		{ "unsafe-test-half-sensitivity", no_argument, NULL,
		    OPT_UNSAFE_HALF },
		{ "val", required_argument, NULL, OPT_VAL },
		{ "val-fraction", required_argument, NULL, OPT_VAL_FRACTION },
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
		case OPT_ACTIVATION: {
			char err[256];

			if (model_parse_act(optarg, &o->act, o->ts, err,
			    sizeof err) != 0)
				cli_usage_error("--activation %s", err);
			o->has_act = 1;
			break;
		}
		case OPT_ARCH: {
			char err[256];

			if (model_parse_layers(optarg, o->spec, &o->nspec, err,
			    sizeof err) != 0)
				cli_usage_error("invalid --arch %s", err);
			if (o->nspec >= NN_MAX_LAYERS)
				cli_usage_error("invalid --arch '%s': more "
				    "than %d layers", optarg, NN_MAX_LAYERS - 1);
			o->arch = optarg;
			break;
		}
		case OPT_INPUT_SHAPE: {
			char err[256];

			if (model_parse_shape(optarg, &o->shape[0],
			    &o->shape[1], &o->shape[2], err, sizeof err) != 0)
				cli_usage_error("invalid --input-shape %s", err);
			break;
		}
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
		case OPT_TUNE:
			o->tune = optarg;
			break;
		case OPT_TUNE_SCORE_SIGMA:
			o->score_sigma = cli_double("--tune-score-sigma", optarg,
			    0, 1e9);
			if (!(o->score_sigma > 0))
				cli_usage_error("invalid --tune-score-sigma "
				    "'%s': not positive", optarg);
			o->has_tune_extra = 1;
			break;
		case OPT_TUNE_SPLIT_SEED:
			o->split_seed = dpcli_seed_arg(optarg);
			o->has_tune_extra = 1;
			break;
		case OPT_TUNE_TRIALS:
			o->tune_trials = optarg;
			break;
		case OPT_VAL_FRACTION:
			o->val_fraction = cli_double("--val-fraction", optarg, 0,
			    1);
			if (!(o->val_fraction > 0 && o->val_fraction < 1))
				cli_usage_error("invalid --val-fraction '%s': not "
				    "in (0, 1)", optarg);
			o->has_val_fraction = 1;
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
	struct opts o = { .c = OPTS_COMMON_INIT, .act = NN_ACT_RELU,
	    .score_sigma = 10 };
	double t_start = cli_now();
	int first;

	cli_init(argv[0], argc, argv);
	dpsgd_defaults(&o.p);
	first = parse_args(argc, argv, &o);
	if (o.assume_raw)
		dpcli_assume_raw(o.c.dataset);
	argc -= first;
	argv += first;
	arch_check(&o);
	if (o.tune != NULL)
		return run_tune(&o, argc, argv);
	if (o.tune_trials != NULL || o.has_val_fraction || o.has_tune_extra)
		cli_usage_error("--tune-trials, --val-fraction, "
		    "--tune-score-sigma and --tune-split-seed need --tune");
	if (o.ncm)
		return run_ncm(&o, argc, argv);
	return run_train(&o, argc, argv, t_start);
}
