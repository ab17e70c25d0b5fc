/*
 * gmm-fit: fit Gaussian mixture models, with differential privacy, and
 * sample from them.  The options and main; the other parts are under
 * tools/gmm-fit/ (gmm-fit.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dpcli.h"
#include "fpsum.h"
#include "gmm.h"
#include "gmm-fit/gmm-fit.h"
#include "la.h"
#include "ledger.h"
#include "opts.h"
#include "sidein.h"
#include "tensor.h"
#include "tstream.h"

void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: gmm-fit [-fqVv] [-d delta] [-e epsilon] [-k components] "
	    "[-o file]\n"
	    "               [-S seed] [--assume-raw] [--audit-repeat n] "
	    "[--budget-store path]\n"
	    "               [--by-label]"
	    " [--classes n]"
	    " [--clip bound] [--covariance type] "
	    "[--dataset name]\n"
	    "               [--init kind] [--init-means file] [--iters n]\n"
	    "               [--level level] [--max-iter n] [--reg value]\n"
	    "               [--restarts n]\n"
	    "               [--sigma multiplier] [--split weights] [--stats]\n"
	    "               [--tol value] [file]\n"
	    "       gmm-fit sample [-fqV] [-o file] [-S seed] "
	    "[--level level]\n"
	    "               --model file --n rows\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -d, --delta D          delta of (epsilon, delta)-DP\n"
		    "  -e, --epsilon E        epsilon of (epsilon, delta)-DP "
		    "over all iterations\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -k, --components K     mixture components (default 1)\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -S, --seed N           reproducible randomness: NOT "
		    "private\n"
		    "  -V, --version          show the version\n"
		    "  -v, --verbose          log-likelihood per iteration, "
		    "BIC, AIC, noise, times\n"
		    "      --assume-raw       the input, of unknown provenance (tns from-csv,\n"
		    "                         from-npy), holds raw records of --dataset\n"
		    "      --audit-repeat N   N independent DP-EM runs (tests "
		    "only)\n"
		    "      --budget-store PATH\n"
		    "                         charge the release to the budget store "
		    "PATH first\n"
		    "      --by-label         one mixture per class of y, with "
		    "class priors\n"
		    "      --classes N        the classes are 0 .. N-1\n"
		    "      --clip B           scale rows of L2 norm above B "
		    "down to B (DP: required)\n"
		    "      --covariance TYPE  full (default), diag or "
		    "spherical\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the input)\n"
		    "      --init KIND        DP start: ball (default: data-"
		    "independent) or dp\n"
		    "      --init-means FILE  initial means (public), K x d\n"
		    "      --iters N          exactly N iterations (DP: default "
		    "10)\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --max-iter N       iterations at most (default 100; "
		    "not with DP)\n"
		    "      --reg R            added to the covariances' diagonal "
		    "(default 1e-6)\n"
		    "      --restarts N       k-means++ starts, the best kept "
		    "(default 1; not with DP)\n"
		    "      --sigma Z          noise multiplier per iteration; 0: "
		    "plain EM, NOT private\n"
		    "      --split A,B,C      budget weights of counts, sums, "
		    "second moments\n"
		    "      --stats            also write the released statistics "
		    "of every iteration\n"
		    "      --tol T            convergence tolerance (default "
		    "1e-3; not with DP)\n"
		    "\n"
		    "sample:\n"
		    "      --model FILE       the fitted model\n"
		    "      --n ROWS           rows to draw\n", fp);
	exit(status);
}

/* ---- options ---- */

static void
parse_split(struct opts *o, const char *arg)
{
	const char *p = arg;
	char *end;

	for (int i = 0; i < DPEM_NPARTS; i++) {
		errno = 0;
		o->split[i] = strtod(p, &end);
		if (end == p || errno == ERANGE || !isfinite(o->split[i]) ||
		    !(o->split[i] > 0))
			cli_usage_error("invalid --split '%s': expected three "
			    "positive weights A,B,C", arg);
		p = end;
		if (i < DPEM_NPARTS - 1 && *p++ != ',')
			cli_usage_error("invalid --split '%s': expected three "
			    "positive weights A,B,C", arg);
	}
	if (*p != '\0')
		cli_usage_error("invalid --split '%s': expected three positive "
		    "weights A,B,C", arg);
	if (!isfinite(o->split[0] + o->split[1] + o->split[2]))
		cli_usage_error("invalid --split '%s': the weights' sum "
		    "overflows (they are relative: scale them down)", arg);
	o->has_split = 1;
}

static void
check_options(struct opts *o)
{
	if (o->c.has_epsilon != o->c.has_delta)
		cli_usage_error("--epsilon and --delta go together");
	if (o->c.has_epsilon && o->has_sigma)
		cli_usage_error("--epsilon and --sigma exclude each other");
	if (!o->c.has_epsilon && !o->has_sigma)
		cli_usage_error("no privacy parameters: give --epsilon and "
		    "--delta, or --sigma (--sigma 0: plain EM, not private)");
	o->dp = !(o->has_sigma && o->sigma == 0);
	if (o->has_iters && (o->has_tol || o->has_max_iter))
		cli_usage_error("--iters runs a fixed number of iterations: "
		    "not with --tol or --max-iter");
	if (o->restarts > 1 && o->init_means)
		cli_usage_error("--restarts draws k-means++ starts: not with "
		    "--init-means");
	if (o->init_dp && !o->dp)
		cli_usage_error("--init dp releases a noisy start: it needs "
		    "privacy (without it the start is k-means++)");
	if (o->init_dp && o->init_means)
		cli_usage_error("--init dp and --init-means are two starts: "
		    "give one");
	if (o->dp) {
		if (!o->has_clip)
			cli_usage_error("--clip is required: without a bound on "
			    "the rows there is no sensitivity");
		if (o->has_tol || o->has_max_iter)
			cli_usage_error("--tol and --max-iter stop on the data: "
			    "DP-EM runs a fixed number of --iters");
		if (o->has_restarts)
			cli_usage_error("--restarts picks the best start on the "
			    "data: not with privacy");
		if (!(o->reg > 0))
			cli_usage_error("--reg must be positive with privacy: "
			    "the noisy covariances need a floor");
		/* The noisy moments are of scale clip^2: a floor reg below
		 * their rounding (2^-52 of them) is lost and the released
		 * covariances need not factor (issue 15: --clip 1e20 was an
		 * internal error, 70). */
		if (o->clip * o->clip > 0x1p52 * o->reg)
			cli_usage_error("--clip %g is too large for --reg %g: "
			    "the floor of the noisy covariances is lost in "
			    "their rounding (clip^2 / reg above 2^52); lower "
			    "--clip or raise --reg", o->clip, o->reg);
		if (!o->has_iters)
			o->iters = 10;
	} else {
		if (o->audit)
			cli_usage_error("--audit-repeat needs noise");
		if (o->stats)
			cli_usage_error("--stats writes released statistics: "
			    "it needs privacy");
		if (o->has_split)
			cli_usage_error("--split weights the noise: not with "
			    "--sigma 0");
		if (o->unsafe)
			cli_usage_error("--unsafe-test-miscalibrate needs "
			    "noise");
	}
	if (o->has_classes && !o->by_label)
		cli_usage_error("--classes applies to --by-label");
	if (o->unsafe)
		opts_unsafe_gate("--unsafe-test-miscalibrate");
}
/* ---- main ---- */

/* Parse the options into o and check them; @return the operand (NULL:
 * stdin). */
static const char *
parse_args(int argc, char **argv, struct opts *o)
{
	static const char *const covs[] = { "full", "diag", "spherical",
	    NULL };
	static const char *const unsafe[] = { "moments-b", NULL };
	static const char *const inits[] = { "ball", "dp", NULL };
	static const struct option longopts[] = {
		OPTS_COMMON_LONG,
		{ "assume-raw", no_argument, NULL, OPT_ASSUME_RAW },
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "by-label", no_argument, NULL, OPT_BY_LABEL },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "clip", required_argument, NULL, OPT_CLIP },
		{ "components", required_argument, NULL, 'k' },
		{ "covariance", required_argument, NULL, OPT_COVARIANCE },
		{ "init", required_argument, NULL, OPT_INIT },
		{ "init-means", required_argument, NULL, OPT_INIT_MEANS },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "max-iter", required_argument, NULL, OPT_MAX_ITER },
		{ "reg", required_argument, NULL, OPT_REG },
		{ "restarts", required_argument, NULL, OPT_RESTARTS },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "split", required_argument, NULL, OPT_SPLIT },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "tol", required_argument, NULL, OPT_TOL },
		{ "unsafe-test-miscalibrate", required_argument, NULL,
		    OPT_UNSAFE },
		{ NULL, 0, NULL, 0 }
	};
	int ch;

	o->c.epsilon_max = EPS_MAX;
	while ((ch = getopt_long(argc, argv, "d:e:fhk:o:qS:Vv", longopts,
	    NULL)) != -1) {
		if (opts_common(&o->c, ch, optarg, usage))
			continue;
		switch (ch) {
		case 'k':
			o->k = (size_t)cli_ll("--components", optarg, 1, MAX_K);
			break;
		case OPT_ASSUME_RAW:
			o->assume_raw = 1;
			break;
		case OPT_AUDIT:
			o->audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_BY_LABEL:
			o->by_label = 1;
			break;
		case OPT_CLASSES:
			o->classes = (size_t)cli_ll("--classes", optarg, 1,
			    MAX_CLASSES);
			o->has_classes = 1;
			break;
		case OPT_CLIP:
			o->clip = cli_double("--clip", optarg, CLIP_MIN,
			    CLIP_MAX);
			o->has_clip = 1;
			break;
		case OPT_COVARIANCE:
			o->cov = cli_choice("--covariance", optarg, covs);
			break;
		case OPT_INIT:
			o->init_dp = cli_choice("--init", optarg, inits);
			break;
		case OPT_INIT_MEANS:
			o->init_means = optarg;
			break;
		case OPT_ITERS:
			o->iters = (size_t)cli_ll("--iters", optarg, 1, MAX_ITER);
			o->has_iters = 1;
			break;
		case OPT_MAX_ITER:
			o->max_iter = (size_t)cli_ll("--max-iter", optarg, 1,
			    MAX_ITER);
			o->has_max_iter = 1;
			break;
		case OPT_REG:
			o->reg = cli_double("--reg", optarg, 0, 1e10);
			break;
		case OPT_RESTARTS:
			o->restarts = (size_t)cli_ll("--restarts", optarg, 1,
			    MAX_RESTARTS);
			o->has_restarts = 1;
			break;
		case OPT_SIGMA:
			o->sigma = cli_double("--sigma", optarg, 0, SIGMA_MAX);
			if (o->sigma != 0 && o->sigma < SIGMA_MIN)
				cli_usage_error("invalid --sigma '%s': 0 or at "
				    "least %g", optarg, SIGMA_MIN);
			o->has_sigma = 1;
			break;
		case OPT_SPLIT:
			parse_split(o, optarg);
			break;
		case OPT_STATS:
			o->stats = 1;
			break;
		case OPT_TOL:
			o->tol = cli_double("--tol", optarg, 0, 1e10);
			o->has_tol = 1;
			break;
		case OPT_UNSAFE:
			(void)cli_choice("--unsafe-test-miscalibrate", optarg,
			    unsafe);
			o->unsafe = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (o->assume_raw)
		dpcli_assume_raw(o->c.dataset);
	argc -= optind;
	argv += optind;
	if (argc > 1)
		usage(EX_USAGE);
	check_options(o);
	return argc == 1 ? argv[0] : NULL;
}


int
main(int argc, char **argv)
{
	struct opts o = { .c = OPTS_COMMON_INIT, .k = 1, .reg = 1e-6,
	    .tol = 1e-3, .max_iter = 100, .restarts = 1, .cov = GMM_FULL };
	struct data dt = { 0 };
	struct ts_reader *r, *ri = NULL;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct rng *rng;
	struct out ot = { 0 };
	struct fit *fits = NULL;
	struct dpem_params dp;
	struct dpem_plan pl;
	const char *file, *label, *ilabel = NULL, *dataset;
	FILE *in, *ifp = NULL, *ofp;
	double *init = NULL, *priors, t_start = cli_now();
	int threads, nin = 0;

	cli_init(argv[0], argc, argv);
	if (argc > 1 && strcmp(argv[1], "sample") == 0)
		return sample_main(argc - 1, argv + 1);
	file = parse_args(argc, argv, &o);

	/* Open everything before computing. */
	in = cli_open_in(file, &label);
	if (o.init_means)
		ifp = sidein_open(in, "--init-means", o.init_means, &ilabel);
	ofp = cli_out_open(o.c.output, o.c.force);
	rng = dpcli_rng(o.c.seed, WORK_ITEM);
	if (!o.dp)
		cli_warn("--sigma 0: plain EM without noise: the output is NOT "
		    "private");
	if (o.unsafe)
		cli_warn("--unsafe-test-miscalibrate: the second moments get "
		    "the noise of sensitivity B, not B^2: the output is NOT "
		    "private");
	r = cli_reader(in, label);
	dt.label = label;
	read_input(r, &dt, o.by_label, o.dp);
	/* The float margin charged holds for at most FPSUM_MAX_ROWS rows. */
	if (o.dp && dt.n > FPSUM_MAX_ROWS)
		cli_die(EX_DATAERR, "%s: tensor 'X' has more than %llu rows, "
		    "the public bound of the floating-point error charged to "
		    "the sensitivity", label,
		    (unsigned long long)FPSUM_MAX_ROWS);
	if (ifp) {
		ri = cli_reader(ifp, ilabel);
		init = read_init_means(ri, ilabel, o.k, dt.d);
	}
	dataset = dpcli_dataset(ts_reader_meta(r), o.c.dataset, label);
	if (o.has_clip)
		(void)gmm_clip_rows(dt.X, dt.n, dt.d, o.clip);
	group_rows(&dt, &o);
	if (!o.dp && dt.n == 0)
		cli_die(EX_DATAERR, "%s: tensor 'X' has no rows", label);
	if (o.audit && o.audit * dt.nclass * (o.stats ? (o.init_dp ? 5u : 4u) : 3u) >
	    TS_MAX_TENSORS)
		cli_usage_error("--audit-repeat %llu: the releases would need "
		    "more than %d tensors in one stream",
		    (unsigned long long)o.audit, TS_MAX_TENSORS);
	{
		long np = sysconf(_SC_NPROCESSORS_ONLN);
		int bt = la_blas_threads();
		threads = np < 1 ? 1 : bt < np ? bt : (int)np;
		if (threads < 1)
			threads = 1;
	}

	priors = cli_calloc(dt.nclass, sizeof *priors);
	ot.w = cli_writer(ofp, o.c.level);
	ot.audit = o.audit;

	if (!o.dp) {
		fits = cli_calloc(dt.nclass, sizeof *fits);
		fit_classes(&ot, &o, rng, &dt, init, threads, fits, priors);
	} else {
		release_classes(&ot, &o, rng, &dt, init, threads, &dp, &pl,
		    priors);
	}

	/* The stream metadata: ledgers, the release, the model, provenance. */
	cli_inherit(&meta, ts_reader_meta(r), label);
	cli_prov_input(&prov, nin++, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	if (ri) {
		dpcli_inherit_side(&meta, ts_reader_meta(ri), ilabel);
		cli_prov_input(&prov, nin++, ilabel, ts_reader_digest(ri),
		    ts_reader_meta(ri));
	}
	dpcli_aggregate_others(&meta, dataset, label);
	if (o.dp)
		record_release(&meta, rng, dataset, &dp, &pl);
	else
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o.audit);
	{
		struct gmmio_info gi = { .C = dt.nclass, .priors = priors,
		    .cov = o.cov, .k = o.k, .d = dt.d, .has_clip = o.has_clip,
		    .clip = o.clip, .reg = o.reg, .dp = o.dp,
		    .iters = o.iters };

		/* Names are published only when they are public, or the
		 * model is not private; gmm.label_source says which. */
		if (o.by_label)
			gi.label_source = o.has_classes ||
			    dt.lset.source == LABEL_PUBLIC ? "public" : "data";
		if (dt.label_names && dt.names_ok)
			gi.label_names = dt.label_names;
		/* Criteria of the whole model: the classes' log-likelihoods
		 * and criteria add up. */
		for (size_t c = 0; c < dt.nclass && !o.dp; c++) {
			gi.bic += fits[c].r.bic;
			gi.aic += fits[c].r.aic;
			gi.ll += fits[c].r.ll * (double)(dt.start[c + 1] -
			    dt.start[c]);
		}
		if (!o.dp)
			gi.ll /= (double)dt.n;
		if (gmmio_put_meta(&meta, &gi) != 0)
			cli_die(EX_OSERR, "out of memory");
	}
	cli_out_finish(ot.w, &meta, &prov);
	if (o.c.verbose)
		fprintf(stderr, "%s: %zu rows x %zu features, %zu class%s: "
		    "%.3f s in all\n", cli_prog(), dt.n, dt.d, dt.nclass,
		    dt.nclass == 1 ? "" : "es", cli_now() - t_start);

	free(fits);
	free(priors);
	free(init);
	free(dt.X);
	free(dt.start);
	free(dt.y);
	free(dt.label_names);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	ts_reader_close(r);
	ts_reader_close(ri);
	cli_close_in(in);
	if (ifp)
		cli_close_in(ifp);
	rng_free(rng);
	cli_out_commit();
	return 0;
}
