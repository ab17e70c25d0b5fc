/* kde-publish: publish a model sampled parameter by parameter from kernel
 * density estimates over M models, by the exponential mechanism (DP-PG and
 * DP-PGP, paper 002). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accuracy.h"
#include "cli.h"
#include "dpcli.h"
#include "dppg.h"
#include "ledger.h"
#include "model.h"
#include "modelcli.h"
#include "nn.h"
#include "opts.h"
#include "parts.h"
#include "tensor.h"
#include "tstream.h"

#define WORK_ITEM "kde-publish"
#define MAX_MODELS 100000
#define MAX_AUDIT 1000000
#define MAX_RETRIES 1000
#define MAX_KMEANS_ITERS 1000
#define MAX_K 65536

enum {
	OPT_AUDIT = OPTS_FIRST_TOOL, OPT_BANDWIDTH, OPT_BW_MIN, OPT_GRID,
	OPT_GRID_POINTS, OPT_GROUP, OPT_GROUP_EPS, OPT_K, OPT_KMEANS_ITERS,
	OPT_MAX_RETRIES, OPT_PUBLIC_TEST, OPT_RANGE, OPT_THREADS,
	OPT_THRESHOLD, OPT_WINDOW
};

/* The mechanism's parameters in p; the rest is the command line. */
struct opts {
	struct dppg_params p;
	struct opts_common c;	/* -d -e -f -o -q -S, --level, --dataset */
	const char *test;
	double threshold;
	uint64_t retries;
	int has_grid, has_points, has_window, has_bw_min, has_k, has_geps;
	int has_threshold, has_retries, has_iters;
};

static void
draw_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	cli_progress("parameters drawn", done, total);
}

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: kde-publish [-fqV] [-o file] [-S seed] -e eps -d delta\n"
	    "                   [--audit-repeat n] [--bandwidth rule] "
	    "[--budget-store path]\n"
	    "                   [--bw-min b]"
	    " [--dataset name] [--grid step | --grid-points "
	    "n]\n"
	    "                   [--group ratio --k k] [--group-eps eps] "
	    "[--kmeans-iters n]\n"
	    "                   [--level level] [--public-test file "
	    "--threshold acc\n"
	    "                   --max-retries n] [--range r] [--threads n] "
	    "[--window w]\n"
	    "                   model ...\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -d, --delta DELTA      delta of the (eps, delta) total "
		    "printed (required)\n"
		    "  -e, --epsilon EPS      epsilon of each parameter's "
		    "exponential mechanism\n"
		    "                         (the paper's epsilon_j; the total "
		    "composes all of them)\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, summary or progress\n"
		    "  -S, --seed N           reproducible noise: the output is "
		    "NOT private\n"
		    "  -V, --version          show the version\n"
		    "      --audit-repeat N   N independent releases (tests "
		    "only)\n"
		    "      --budget-store PATH\n"
		    "                         charge the release to the budget store "
		    "PATH first\n"
		    "      --bandwidth RULE   silverman (default), scott or a "
		    "fixed bandwidth VALUE\n"
		    "      --bw-min B         floor of data-dependent bandwidths "
		    "(default: the grid step)\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the inputs)\n"
		    "      --grid STEP        candidate spacing\n"
		    "      --grid-points N    candidates over [-r, r] (default "
		    "201)\n"
		    "      --group RATIO      DP-PGP: group the top RATIO of each "
		    "layer (needs --k)\n"
		    "      --group-eps EPS    epsilon of each grouped parameter's "
		    "Laplace offset\n"
		    "                         (default: -e)\n"
		    "      --k K              DP-PGP: clusters per layer\n"
		    "      --kmeans-iters N   DP-PGP: k-means iterations (default "
		    "10)\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --max-retries N    resample at most N times while the "
		    "public test fails\n"
		    "      --public-test FILE a public labelled test set (X, y) "
		    "for the quality loop\n"
		    "      --range R          candidates lie in [-R, R] (default "
		    "1)\n"
		    "      --threads N        worker threads (default: the "
		    "processors online)\n"
		    "      --threshold ACC    accept a sample whose test accuracy "
		    "is at least ACC\n"
		    "      --window W         utility window (default: the grid "
		    "step)\n", fp);
	exit(status);
}

/* ---- options ---- */

static void
parse_bandwidth(struct opts *o, const char *arg)
{
	if (strcmp(arg, "silverman") == 0)
		o->p.bw = DPPG_BW_SILVERMAN;
	else if (strcmp(arg, "scott") == 0)
		o->p.bw = DPPG_BW_SCOTT;
	else {
		char *end;
		double v;

		errno = 0;
		v = strtod(arg, &end);
		if (errno || end == arg || *end != '\0' || !isfinite(v) ||
		    !(v > 0) || v > DPPG_RANGE_MAX)
			cli_usage_error("invalid --bandwidth '%s': expected "
			    "silverman, scott or a positive bandwidth", arg);
		o->p.bw = DPPG_BW_VALUE;
		o->p.bw_value = v;
	}
}

static void
check_options(struct opts *o)
{
	if (!(o->p.eps > 0))
		cli_usage_error("-e is required: the epsilon of each "
		    "parameter's exponential mechanism");
	if (!(o->p.delta > 0))
		cli_usage_error("-d is required: the delta of the (epsilon, "
		    "delta) total (privacy parameters have no defaults)");
	if (o->has_grid && o->has_points)
		cli_usage_error("--grid and --grid-points do not go together");
	if (o->has_grid) {
		double n = floor(2 * o->p.range / o->p.step) + 1;
		if (n > DPPG_MAX_GRID)
			cli_usage_error("--grid %g over [-%g, %g]: %.0f "
			    "candidates, more than %u", o->p.step, o->p.range,
			    o->p.range, n, DPPG_MAX_GRID);
		o->p.points = (uint64_t)n;
	} else {
		o->p.step = 2 * o->p.range / (double)(o->p.points - 1);
	}
	if (!o->has_window)
		o->p.window = o->p.step;
	if (o->p.bw == DPPG_BW_VALUE && o->has_bw_min)
		cli_usage_error("--bw-min applies to silverman and scott");
	if (!o->has_bw_min)
		o->p.bw_min = o->p.step;
	if ((o->p.ratio > 0) != o->has_k)
		cli_usage_error("--group RATIO and --k K go together");
	if (!(o->p.ratio > 0) && (o->has_geps || o->has_iters))
		cli_usage_error("--group-eps and --kmeans-iters need --group");
	if (!o->has_geps)
		o->p.group_eps = o->p.eps;
	if (o->test != NULL && (!o->has_threshold || !o->has_retries))
		cli_usage_error("--public-test needs --threshold and "
		    "--max-retries");
	if (o->test == NULL && (o->has_threshold || o->has_retries))
		cli_usage_error("--threshold and --max-retries need "
		    "--public-test (a test set declared public)");
	if (o->test != NULL && o->p.audit)
		cli_usage_error("--audit-repeat and --public-test do not go "
		    "together");
}

/* ---- input ---- */

/* Read one model: its parameters (checked finite) and metadata. */
static void
read_model(const char *path, struct nn_model *m, struct ts_meta *meta,
    uint64_t *digest, const char **label)
{
	mcli_read_model(path, m, meta, digest, label);
	if (m->cnn)
		cli_die(EX_DATAERR, "%s: a convolutional model: kde-publish "
		    "publishes MLPs and logistic regressions only", *label);
	for (size_t j = 0; j < m->nparam; j++)
		if (!isfinite(m->param[j]))
			cli_die(EX_DATAERR, "%s: parameter %zu is not finite",
			    *label, j);
}

/* The dataset the models protect: --dataset, or the one dataset marked
 * aggregate (models trained without privacy), or the one raw mark or
 * data.name (dpcli_dataset). */
static const char *
model_dataset(const struct ts_meta *m, const char *given, const char *label)
{
	const char *found;
	int n;

	if (given != NULL)
		return given;
	if ((found = dpcli_aggregate_dataset(m, &n)) != NULL)
		return found;
	if (n > 1)
		cli_die(EX_DATAERR, "%s: several datasets are marked "
		    "'aggregate': name the protected one with --dataset", label);
	return dpcli_dataset(m, NULL, label);
}

/* The part a model was trained on (dppg_part_read); die on a bad one. */
static void
model_part(const struct ts_meta *m, const char *dataset, const char *label,
    struct dppg_part *p)
{
	const char *s;

	switch (dppg_part_read(p, m, dataset)) {
	case PART_OK:
	case PART_NONE:
		return;
	case PART_MIXED:
		s = ts_meta_get(m, PART_MIXED_BY);
		cli_die(EX_DATAERR, "%s: split.part is '%s' (made so by %s): "
		    "the model derives from several parts, or from the whole "
		    "dataset without privacy: each model must depend on one "
		    "part only (and on DP releases), or on no split at all",
		    label, SPLIT_MIXED, s != NULL ? s : "an input");
	case PART_BAD:
		cli_die(EX_DATAERR, "%s: split.part '%s' is not i/n with i < n",
		    label, ts_meta_get(m, "split.part"));
	case PART_NO_PARENT:
		cli_die(EX_DATAERR, "%s: split.part without split.parent: "
		    "not a part written by tns split", label);
	default:
		cli_die(EX_OSERR, "out of memory");
	}
}

/* Whether the models (labels lab[]) are disjoint parts of one split
 * (dppg_parts_disjoint).  @return NULL when they are, else the reason (a
 * static string). */
static const char *
disjoint(const struct dppg_part *p, const char *const *lab, size_t n)
{
	static char why[512];
	size_t a = 0, b = 0;

	switch (dppg_parts_disjoint(p, n, &a, &b)) {
	case DPPG_PARTS_DISJOINT:
		return NULL;
	case DPPG_PARTS_NO_PART:
		snprintf(why, sizeof why, "%s carries no partition id "
		    "(split.part) of a split of the raw dataset", lab[a]);
		break;
	case DPPG_PARTS_SAME:
		snprintf(why, sizeof why, "%s and %s were trained on the "
		    "same part %" PRIu64 "/%" PRIu64, lab[a], lab[b],
		    p[a].sp.i, p[a].sp.n);
		break;
	case DPPG_PARTS_OTHER_SPLIT:
		snprintf(why, sizeof why, "%s and %s are parts of "
		    "different splits", lab[a], lab[b]);
		break;
	default:
		cli_die(EX_OSERR, "out of memory");
	}
	return why;
}

/* ---- the quality loop ---- */

struct testset {
	float *x;
	int32_t *y;
	size_t n, d;
};

static void
read_test(const char *path, struct testset *ts, struct ts_meta *meta,
    const char *dataset, uint64_t *digest, const char **label)
{
	FILE *fp = cli_open_in(path, label);
	struct ts_reader *r = cli_reader(fp, *label);
	struct tensor *t = NULL;
	size_t nt = 0;
	char key[16 + LEDGER_MAX_NAME];
	const struct tensor *tx = NULL, *ty = NULL;
	const char *s;
	int rc;

	if ((rc = ts_read_all(r, &t, &nt)) != 0)
		cli_rdie(r, rc);
	if (ts_meta_merge(meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	snprintf(key, sizeof key, "dp.raw.%s", dataset);
	s = ts_meta_get(meta, "data.name");
	if (ts_meta_get(meta, key) != NULL || (s && strcmp(s, dataset) == 0))
		cli_die(EX_DATAERR, "%s: the test set derives from the "
		    "protected dataset %s: the quality loop needs a test set "
		    "that is public", *label, dataset);
	for (size_t i = 0; i < nt; i++) {
		if (strcmp(t[i].name, "X") == 0)
			tx = &t[i];
		else if (strcmp(t[i].name, "y") == 0)
			ty = &t[i];
	}
	if (tx == NULL || ty == NULL || tx->ndim != 2 || ty->ndim != 1 ||
	    (tx->dtype != TS_F32 && tx->dtype != TS_F64) ||
	    (ty->dtype != TS_I32 && ty->dtype != TS_I64 && ty->dtype != TS_U8)
	    || tx->dims[0] != ty->dims[0] || tx->dims[0] == 0)
		cli_die(EX_DATAERR, "%s: expected features 'X' (f32 or f64, 2 "
		    "dimensions) and labels 'y' (1 dimension) of the same "
		    "number of rows", *label);
	ts->n = (size_t)tx->dims[0];
	ts->d = (size_t)tx->dims[1];
	ts->x = cli_reallocarray(NULL, ts->n * ts->d, sizeof *ts->x);
	ts->y = cli_reallocarray(NULL, ts->n, sizeof *ts->y);
	for (size_t i = 0; i < ts->n * ts->d; i++)
		ts->x[i] = tx->dtype == TS_F32 ? ((float *)tx->data)[i] :
		    (float)((double *)tx->data)[i];
	for (size_t i = 0; i < ts->n; i++)
		ts->y[i] = ty->dtype == TS_I32 ? ((int32_t *)ty->data)[i] :
		    ty->dtype == TS_I64 ? (int32_t)((int64_t *)ty->data)[i] :
		    ((uint8_t *)ty->data)[i];
	*digest = ts_reader_digest(r);
	for (size_t i = 0; i < nt; i++)
		tensor_free(&t[i]);
	free(t);
	ts_reader_close(r);
	cli_close_in(fp);
}

/* ---- main ---- */

/* Audit mode: the releases as the rows of one tensor 'audit' f32
 * [releases, parameters] (the model's parameter order). */
static void
audit_begin(struct ts_writer *w, uint64_t reps, size_t np)
{
	struct tensor t;
	uint64_t dims[2] = { reps, np };
	int rc;

	if (tensor_init(&t, "audit", TS_F32, 2, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &t)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "bandwidth", required_argument, NULL, OPT_BANDWIDTH },
		{ "budget-store", required_argument, NULL, OPTS_BUDGET_STORE },
		{ "bw-min", required_argument, NULL, OPT_BW_MIN },
		{ "dataset", required_argument, NULL, OPTS_DATASET },
		{ "delta", required_argument, NULL, 'd' },
		{ "epsilon", required_argument, NULL, 'e' },
		{ "force", no_argument, NULL, 'f' },
		{ "grid", required_argument, NULL, OPT_GRID },
		{ "grid-points", required_argument, NULL, OPT_GRID_POINTS },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "group-eps", required_argument, NULL, OPT_GROUP_EPS },
		{ "help", no_argument, NULL, 'h' },
		{ "k", required_argument, NULL, OPT_K },
		{ "kmeans-iters", required_argument, NULL, OPT_KMEANS_ITERS },
		{ "level", required_argument, NULL, OPTS_LEVEL },
		{ "max-retries", required_argument, NULL, OPT_MAX_RETRIES },
		{ "output", required_argument, NULL, 'o' },
		{ "public-test", required_argument, NULL, OPT_PUBLIC_TEST },
		{ "quiet", no_argument, NULL, 'q' },
		{ "range", required_argument, NULL, OPT_RANGE },
		{ "seed", required_argument, NULL, 'S' },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "version", no_argument, NULL, 'V' },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .c = { .epsilon_max = DPPG_EPS_MAX },
	    .p.bw = DPPG_BW_SILVERMAN, .p.range = 1, .p.points = 201, .p.iters = 10 };
	struct nn_model *models, outm = { 0 };
	struct ts_meta meta = { 0 }, prov = { 0 }, in = { 0 }, tmeta = { 0 };
	struct dppg_part *parts;
	const char **plabels;
	struct dppg *d = NULL;
	const struct dppg_calib *mc;
	struct dppg_account ac = { 0 };
	struct testset tset = { 0 };
	struct ts_writer *w;
	struct rng *rng;
	float **par, *pub;
	const char *label, *dataset = NULL, *why, *tlabel = NULL, *msg;
	char dsbuf[LEDGER_MAX_NAME + 1], arch0[MODEL_MAX_ARCH],
	    arch[MODEL_MAX_ARCH], key[16 + LEDGER_MAX_NAME];
	uint64_t digest, attempts = 0, reps;
	size_t nm, np, nsel = 0;
	double acc = -1;
	int ch, rc, per_record;
	FILE *ofp;

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "d:e:fho:qS:V", longopts, NULL))
	    != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_AUDIT:
			o.p.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_BANDWIDTH:
			parse_bandwidth(&o, optarg);
			break;
		case OPT_BW_MIN:
			o.p.bw_min = cli_double("--bw-min", optarg, 0, DPPG_RANGE_MAX);
			if (!(o.p.bw_min > 0))
				cli_usage_error("invalid --bw-min '%s': "
				    "positive", optarg);
			o.has_bw_min = 1;
			break;
		case OPT_GRID:
			o.p.step = cli_double("--grid", optarg, 0, DPPG_RANGE_MAX);
			if (!(o.p.step > 0))
				cli_usage_error("invalid --grid '%s': "
				    "positive", optarg);
			o.has_grid = 1;
			break;
		case OPT_GRID_POINTS:
			o.p.points = (uint64_t)cli_ll("--grid-points", optarg, 2,
			    DPPG_MAX_GRID);
			o.has_points = 1;
			break;
		case OPT_GROUP:
			o.p.ratio = cli_double("--group", optarg, 0, 1);
			if (!(o.p.ratio > 0))
				cli_usage_error("invalid --group '%s': a ratio "
				    "in (0, 1]", optarg);
			break;
		case OPT_GROUP_EPS:
			o.p.group_eps = cli_double("--group-eps", optarg, 0,
			    DPPG_EPS_MAX);
			if (!(o.p.group_eps > 0))
				cli_usage_error("invalid --group-eps '%s': "
				    "positive", optarg);
			o.has_geps = 1;
			break;
		case OPT_K:
			o.p.k = (uint64_t)cli_ll("--k", optarg, 1, MAX_K);
			o.has_k = 1;
			break;
		case OPT_KMEANS_ITERS:
			o.p.iters = (uint64_t)cli_ll("--kmeans-iters", optarg, 0,
			    MAX_KMEANS_ITERS);
			o.has_iters = 1;
			break;
		case OPT_MAX_RETRIES:
			o.retries = (uint64_t)cli_ll("--max-retries", optarg, 0,
			    MAX_RETRIES);
			o.has_retries = 1;
			break;
		case OPT_PUBLIC_TEST:
			o.test = optarg;
			break;
		case OPT_RANGE:
			o.p.range = cli_double("--range", optarg, 0, DPPG_RANGE_MAX);
			if (!(o.p.range > 0))
				cli_usage_error("invalid --range '%s': "
				    "positive", optarg);
			break;
		case OPT_THREADS:
			o.p.threads = (uint64_t)cli_ll("--threads", optarg, 1,
			    DPPG_MAX_THREADS);
			break;
		case OPT_THRESHOLD:
			o.threshold = cli_double("--threshold", optarg, 0, 1);
			o.has_threshold = 1;
			break;
		case OPT_WINDOW:
			o.p.window = cli_double("--window", optarg, 0, DPPG_RANGE_MAX);
			if (!(o.p.window > 0))
				cli_usage_error("invalid --window '%s': "
				    "positive", optarg);
			o.has_window = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (o.c.has_epsilon)
		o.p.eps = o.c.epsilon;
	if (o.c.has_delta)
		o.p.delta = o.c.delta;
	check_options(&o);
	if (argc < 2)
		cli_usage_error("%s: at least two models are needed (M >= 2)",
		    argc == 0 ? "no model" : "one model");
	if ((uint64_t)argc > MAX_MODELS)
		cli_usage_error("more than %d models", MAX_MODELS);
	if (o.p.threads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		o.p.threads = n < 1 ? 1 : n > DPPG_MAX_THREADS ?
		    DPPG_MAX_THREADS : (size_t)n;
	}
	nm = (size_t)argc;
	for (size_t i = 0; i < nm; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(argv[i], "-") == 0 && strcmp(argv[j], "-") ==
			    0)
				cli_usage_error("the standard input can be read "
				    "only once");

	ofp = cli_out_open(o.c.output, o.c.force);
	rng = dpcli_rng(o.c.seed, WORK_ITEM);

	/* The models: one architecture, their partitions, their ledgers. */
	models = cli_calloc(nm, sizeof *models);
	parts = cli_calloc(nm, sizeof *parts);
	plabels = cli_calloc(nm, sizeof *plabels);
	par = cli_reallocarray(NULL, nm, sizeof *par);
	for (size_t i = 0; i < nm; i++) {
		ts_meta_free(&in);
		read_model(argv[i], &models[i], &in, &digest, &label);
		cli_prov_input(&prov, (int)i, label, digest, &in);
		model_arch(&models[i], arch, sizeof arch);
		if (i == 0) {
			memcpy(arch0, arch, sizeof arch);
			snprintf(dsbuf, sizeof dsbuf, "%s",
			    model_dataset(&in, o.c.dataset, label));
			dataset = dsbuf;
		} else if (strcmp(arch, arch0) != 0) {
			cli_die(EX_DATAERR, "%s: architecture %s, the first "
			    "model %s: the models must share one architecture",
			    label, arch, arch0);
		}
		model_part(&in, dataset, label, &parts[i]);
		plabels[i] = label;
		par[i] = models[i].param;
		dpcli_carry(&meta, &in, "kde.", NULL, label);
	}
	ts_meta_free(&in);
	np = models[0].nparam;
	why = disjoint(parts, plabels, nm);
	per_record = why == NULL;
	snprintf(key, sizeof key, "dp.raw.%s", dataset);
	if (per_record && ts_meta_get(&meta, key) != NULL &&
	    strcmp(ts_meta_get(&meta, key), "aggregate") == 0) {
		/* One record reaches one model: the release is private for
		 * the dataset (formats/tensor-stream.md 10.1.2, last rule). */
		struct ts_meta tmp = { 0 };
		for (size_t i = 0; i < meta.n; i++)
			if (strcmp(meta.kv[i].key, key) != 0)
				cli_meta_set(&tmp, meta.kv[i].key,
				    meta.kv[i].val);
		ts_meta_free(&meta);
		meta = tmp;
	}
	if (o.test != NULL) {
		read_test(o.test, &tset, &tmeta, dataset, &digest, &tlabel);
		cli_prov_input(&prov, (int)nm, tlabel, digest, &tmeta);
		if (tset.d != model_inputs(&models[0]))
			cli_die(EX_DATAERR, "%s: %zu features, the models take "
			    "%zu", tlabel, tset.d, model_inputs(&models[0]));
		dpcli_inherit_side(&meta, &tmeta, tlabel);
	}

	o.p.seeded = o.c.seed != NULL;
	o.p.seed = o.c.seed ? dpcli_seed_arg(o.c.seed) : 0;
	o.p.work_item = WORK_ITEM;
	reps = o.p.audit ? o.p.audit : 1;
	o.p.attempts = o.test ? o.retries + 1 : reps;
	if ((msg = dppg_check_params(&o.p)) != NULL)
		cli_usage_error("%s", msg);
	/* Parameters drawn within the one release (--audit-repeat shows the
	 * releases instead). */
	if (!o.p.audit)
		o.p.progress = draw_progress;
	switch ((rc = dppg_new(&d, &o.p, nm))) {
	case 0:
		break;
	case PV_E_RANGE:
		cli_usage_error("the grid (--range %g, step %g, --window %g) "
		    "has points that are not distinct floats", o.p.range,
		    o.p.step, o.p.window);
	case PV_E_NUMERIC:
		cli_usage_error("bandwidth %g out of range", o.p.bw ==
		    DPPG_BW_VALUE ? o.p.bw_value : o.p.bw_min);
	case PV_E_SIZE:
		cli_usage_error("-e %g is too small for the rounding of the "
		    "utilities (the rate rounds to 0)", o.p.eps);
	default:
		cli_die(EX_OSERR, "out of memory");
	}
	mc = dppg_calib(d);
	if (!o.c.quiet && o.p.bw != DPPG_BW_VALUE)
		cli_warn("--bandwidth %s depends on the data: the utility's "
		    "sensitivity is p(bw-min) = %.3g, not p(b)/M; the sample "
		    "is close to uniform unless eps is large (use a fixed "
		    "--bandwidth chosen on public data)", o.p.bw == DPPG_BW_SCOTT ?
		    "scott" : "silverman", mc->sens);
	if (!per_record)
		cli_warn("the guarantee is per model, not per record of %s: %s",
		    dataset, why);

	{
		size_t wd[NN_MAX_LAYERS + 1], nl = models[0].net.nlayers;
		for (size_t l = 0; l < nl; l++)
			wd[l] = models[0].net.layer[l].in;
		wd[nl] = models[0].net.layer[nl - 1].out;
		if (model_init(&outm, wd, nl) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	pub = cli_reallocarray(NULL, np, sizeof *pub);
	w = cli_writer(ofp, o.c.level);
	if (o.p.audit)
		audit_begin(w, reps, np);
	for (uint64_t a = 0; a < reps; a++) {
		for (;;) {
			if ((rc = dppg_run(d, &models[0], par, nm, attempts,
			    rng, pub, &nsel)) != 0)
				dpcli_noise_die(rc);
			attempts++;
			if (o.test == NULL)
				break;
			if (accuracy_model(&outm, pub, tset.x, tset.y, tset.n,
			    &acc) != 0)
				cli_die(EX_OSERR, "out of memory");
			cli_progress_done();
			if (!o.c.quiet)
				fprintf(stderr, "%s: attempt %" PRIu64 ": public "
				    "test accuracy %.4f\n", cli_prog(), attempts,
				    acc);
			if (acc >= o.threshold || attempts > o.retries)
				break;
		}
		if (o.p.audit && (rc = ts_write_rows(w, pub, 1)) != 0)
			cli_wdie(w, rc);
		cli_progress("releases", a + 1, reps);
	}
	cli_progress_done();
	if (!o.p.audit)
		memcpy(outm.param, pub, np * sizeof *pub);
	if ((rc = o.p.audit ? ts_write_end(w) : model_write(w, &outm)) != 0)
		cli_wdie(w, rc);

	/* The account (dppg_account charges every attempt the loop could
	 * make) and the ledger entry. */
	if (dppg_account(d, np, nsel, &ac) != 0)
		cli_die(EX_SOFTWARE, "rdp: bad curve");
	{
		struct ledger_entry e;

		dpcli_entry(&e, rng, dataset, DPPG_MECHANISM);
		if (dppg_ledger(d, &ac, nm, per_record, &e) != 0)
			cli_die(EX_OSERR, "out of memory");
		dpcli_release(&meta, &e);
		ts_meta_free(&e.params);
	}
	dpcli_audit_mark(&meta, o.p.audit);
	if (model_put_meta(&outm, &meta) != 0)
		cli_die(EX_OSERR, "out of memory");
	if (ts_meta_setf(&meta, "kde.models", "%zu", nm) != 0 ||
	    ts_meta_setf(&meta, "kde.parameters", "%zu", np) != 0 ||
	    ts_meta_setf(&meta, "kde.candidates", "%zu", mc->candidates) != 0 ||
	    ts_meta_setf(&meta, "kde.step", "%.17g", o.p.step) != 0 ||
	    ts_meta_setf(&meta, "kde.range", "%.17g", o.p.range) != 0 ||
	    ts_meta_setf(&meta, "kde.window", "%.17g", o.p.window) != 0 ||
	    ts_meta_setf(&meta, "kde.eps_per_parameter", "%.17g", o.p.eps) != 0
	    || ts_meta_setf(&meta, "kde.eps_basic", "%.17g", ac.basic) != 0 ||
	    ts_meta_setf(&meta, "kde.zcdp_rho", "%.17g", ac.zcdp) != 0 ||
	    ts_meta_setf(&meta, "kde.eps_rdp", "%.17g", ac.eps_rdp) != 0 ||
	    ts_meta_setf(&meta, "kde.delta", "%.17g", o.p.delta) != 0 ||
	    ts_meta_setf(&meta, "kde.attempts", "%" PRIu64, attempts) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_meta_set(&meta, "kde.bandwidth", o.p.bw == DPPG_BW_SILVERMAN ?
	    "silverman" : o.p.bw == DPPG_BW_SCOTT ? "scott" : "value");
	if (o.p.bw == DPPG_BW_VALUE && ts_meta_setf(&meta, "kde.bandwidth_value",
	    "%.17g", o.p.bw_value) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_meta_set(&meta, "kde.guarantee", per_record ? "record" : "model");
	if (acc >= 0 && ts_meta_setf(&meta, "kde.test_accuracy", "%.17g",
	    acc) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_out_finish(w, &meta, &prov);
	cli_out_commit();

	if (!o.c.quiet) {
		fprintf(stderr, "%s: %zu models, %zu parameters, %zu "
		    "candidates each; guarantee per %s of %s\n", cli_prog(),
		    nm, np, mc->candidates, per_record ? "record" : "model", dataset);
		fprintf(stderr, "%s: paper's figure (eq. 6, per parameter): "
		    "eps_j = %g\n", cli_prog(), o.p.eps);
		fprintf(stderr, "%s: honest total over %.0f parameter "
		    "releases x %.0f attempt(s)%s: basic composition eps = "
		    "%.6g; zCDP rho = %.6g (bounded range, eps^2/8 each); "
		    "(eps, delta) = (%.6g, %g)\n", cli_prog(), ac.np,
		    ac.attempts, nsel ? " plus grouped offsets" : "",
		    ac.basic, ac.zcdp, ac.eps_rdp, o.p.delta);
	}

	for (size_t i = 0; i < nm; i++) {
		model_free(&models[i]);
		part_free(&parts[i].sp);
	}
	free(models);
	free(parts);
	free(plabels);
	free(par);
	free(pub);
	free(tset.x);
	free(tset.y);
	dppg_free(d);
	model_free(&outm);
	rng_free(rng);
	ts_meta_free(&meta);
	ts_meta_free(&tmeta);
	ts_meta_free(&prov);
	return 0;
}
