/*
 * covest: estimate covariance matrices with differential privacy.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "covest.h"
#include "dpcli.h"
#include "ledger.h"
#include "opts.h"
#include "sidein.h"
#include "tensor.h"
#include "tstream.h"

#define MAX_AUDIT 1000000		/* --audit-repeat */
#define WORK_ITEM COVEST_WORK_ITEM

enum {
	OPT_ASSUME_RAW = OPTS_FIRST_TOOL, OPT_AUDIT, OPT_CALIBRATION, OPT_CLIP,
	OPT_COUNT_PUBLIC, OPT_MEAN, OPT_NEIGHBOURS, OPT_SAMPLER, OPT_SELECT_ON,
	OPT_SIGMA, OPT_SPLIT, OPT_SUBSPACES, OPT_TENSOR, OPT_UNSAFE
};

struct opts {
	struct opts_common c;		/* -d -e -f -o -q -S -V -v, ... */
	struct covest_params p;		/* the release (covest.h) */
	const char *tensor, *select_on;
	const char *mean_file, *subspaces_arg, *from_file;
	int assume_raw, has_relation;
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: covest [-fqVv] [-d delta] [-e epsilon] [-o file] "
	    "[-S seed]\n"
	    "              [--assume-raw] [--audit-repeat n] "
	    "[--budget-store path]\n"
	    "              [--calibration method] [--clip bound] "
	    "[--count-public n]\n"
	    "              [--dataset name]"
	    " [--level level] [--mean how] [--neighbours relation]\n"
	    "              [--sampler which] [--select-on file]"
	    " [--sigma multiplier]\n"
	    "              [--split weights]"
	    " [--subspaces how] [--tensor name] [file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -d, --delta D          delta of (epsilon, delta)-DP\n"
		    "  -e, --epsilon E        epsilon of (epsilon, delta)-DP "
		    "(or --sigma)\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -S, --seed N           reproducible noise: the output is "
		    "NOT private\n"
		    "  -V, --version          show the version\n"
		    "  -v, --verbose          report the noise and the time of "
		    "each step\n"
		    "      --assume-raw       the input, of unknown provenance (tns from-csv,\n"
		    "                         from-npy), holds raw records of --dataset\n"
		    "      --audit-repeat N   N independent releases (tests "
		    "only)\n"
		    "      --budget-store PATH\n"
		    "                         charge the release to the budget store "
		    "PATH first\n"
		    "      --calibration M    rdp (default) or agm: how "
		    "--epsilon sets the noise\n"
		    "      --clip C           scale rows of L2 norm above C "
		    "down to C (required)\n"
		    "      --count-public N   the row count is public and is N "
		    "(replace-one)\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the input)\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --mean HOW         released (default), zero "
		    "(uncentred) or a public FILE\n"
		    "      --neighbours REL   add-remove (default) or "
		    "replace-one\n"
		    "      --sampler S        exact (default) or fast: a sampler "
		    "within total\n"
		    "                         variation tau (about 2^-112 per "
		    "value) of the exact\n"
		    "                         one, charged: (eps, delta + "
		    "(1 + e^eps) tau)-DP\n"
		    "      --select-on FILE   forward selection on PUBLIC data\n"
		    "      --sigma Z          joint noise multiplier; 0: no noise, "
		    "NOT private\n"
		    "      --split A,B,C      budget weights of the second "
		    "moments, sum, count\n"
		    "      --subspaces HOW    none (default), random:M[:SEED] "
		    "(SEED: a public\n"
		    "                         partition), from:FILE (the "
		    "partition of a covest\n"
		    "                         stream) or select[:K]\n"
		    "      --tensor NAME      the rows (default X)\n", fp);
	exit(status);
}
/* ---- options ---- */

/* An unsigned decimal integer filling [p, end), or -1 (no sign, no
 * space, at most UINT64_MAX). */
static int
parse_u64(const char *p, const char *end, uint64_t *v)
{
	*v = 0;
	if (p == end)
		return -1;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || *v > (UINT64_MAX - (uint64_t)(*p -
		    '0')) / 10)
			return -1;
		*v = *v * 10 + (uint64_t)(*p - '0');
	}
	return 0;
}

static void
parse_subspaces(struct opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');

	o->subspaces_arg = arg;
	o->p.has_part_seed = 0;
	o->from_file = NULL;
	if (strcmp(arg, "none") == 0) {
		o->p.subspaces = COVEST_SUB_NONE;
	} else if (strncmp(arg, "random:", 7) == 0) {
		const char *m = arg + 7, *c2 = strchr(m, ':');
		const char *mend = c2 ? c2 : m + strlen(m);
		uint64_t v;

		o->p.subspaces = COVEST_SUB_RANDOM;
		if (parse_u64(m, mend, &v) != 0 || v < 1 || v > COVEST_MAX_FEATURES)
			cli_usage_error("invalid --subspaces '%s': M must be an "
			    "integer from 1 to %d", arg, COVEST_MAX_FEATURES);
		o->p.m = (size_t)v;
		if (c2) {
			if (parse_u64(c2 + 1, c2 + 1 + strlen(c2 + 1),
			    &o->p.part_seed) != 0)
				cli_usage_error("invalid --subspaces '%s': SEED "
				    "must be an unsigned 64-bit integer", arg);
			o->p.has_part_seed = 1;
		}
	} else if (strncmp(arg, "from:", 5) == 0) {
		o->p.subspaces = COVEST_SUB_FROM;
		o->from_file = arg + 5;
		if (*o->from_file == '\0' || strcmp(o->from_file, "-") == 0)
			cli_usage_error("invalid --subspaces '%s': from: needs a "
			    "file, not stdin", arg);
	} else if (strcmp(arg, "select") == 0 ||
	    (colon && colon - arg == 6 && strncmp(arg, "select", 6) == 0)) {
		o->p.subspaces = COVEST_SUB_SELECT;
		o->p.maxk = colon ? (size_t)cli_ll("--subspaces select:K",
		    colon + 1, 1, COVEST_MAX_FEATURES) : 0;
	} else {
		cli_usage_error("invalid --subspaces '%s': expected none, "
		    "random:M[:SEED], from:FILE or select[:K]", arg);
	}
}

static void
parse_split(struct opts *o, const char *arg)
{
	const char *p = arg;
	char *end;

	for (int i = 0; i < COVEST_NPARTS; i++) {
		errno = 0;
		o->p.split[i] = strtod(p, &end);
		if (end == p || errno == ERANGE || !isfinite(o->p.split[i]) ||
		    o->p.split[i] < 0)
			cli_usage_error("invalid --split '%s': expected three "
			    "non-negative weights A,B,C", arg);
		p = end;
		if (i < COVEST_NPARTS - 1 && *p++ != ',')
			cli_usage_error("invalid --split '%s': expected three "
			    "weights A,B,C", arg);
	}
	if (*p != '\0')
		cli_usage_error("invalid --split '%s': expected three weights "
		    "A,B,C", arg);
	o->p.has_split = 1;
}

static void
check_options(struct opts *o)
{
	const char *msg;

	if (o->p.unsafe_per_block)
		opts_unsafe_gate("--unsafe-test-miscalibrate");
	/* --count-public means replace-one (covest_check_params refuses an
	 * explicit add-remove). */
	if (o->p.has_count && !o->has_relation)
		o->p.relation = LEDGER_REPLACE_ONE;
	if ((msg = covest_check_params(&o->p)) != NULL)
		cli_usage_error("%s", msg);
}

/* Stop on a failure of the library: where names the input it concerns
 * (data errors name it first). */
__attribute__((noreturn)) static void
covest_die(const struct covest *c, int rc, const char *where)
{
	const char *msg = covest_errmsg(c);

	if (covest_err_stream(c))
		cli_ts_die(rc, msg);
	switch (rc) {
	case PV_E_NOMEM:
		cli_die(EX_OSERR, "out of memory");
	case PV_E_ENTROPY:
		cli_die(EX_OSERR, "%s", msg);
	case PV_E_OPTION:
		cli_usage_error("%s", msg);
	case PV_E_FORMAT:
		cli_die(EX_DATAERR, "%s: %s", where, msg);
	default:
		cli_die(EX_SOFTWARE, "%s", msg);
	}
}

static void
progress(void *ctx, const char *what, double done, double total)
{
	(void)ctx;
	cli_progress(what, (uint64_t)done, (uint64_t)total);
}

static void
record_release(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct covest *c)
{
	struct ledger_entry e;

	dpcli_entry(&e, rng, dataset, "gaussian");
	switch (covest_ledger_entry(c, &e)) {
	case 0:
		break;
	case PV_E_NOMEM:
		cli_die(EX_OSERR, "out of memory");
	default:
		cli_die(EX_SOFTWARE, "the fast sampler drew more than its "
		    "planned total variation");
	}
	dpcli_release(m, &e);
	ts_meta_free(&e.params);
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	static const char *const cals[] = { "rdp", "agm", NULL };
	static const char *const rels[] = { "add-remove", "replace-one",
	    NULL };
	static const char *const unsafe[] = { "per-block", NULL };
	static const char *const samplers[] = { "exact", "fast", NULL };
	static const struct option longopts[] = {
		OPTS_COMMON_LONG,
		{ "assume-raw", no_argument, NULL, OPT_ASSUME_RAW },
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "calibration", required_argument, NULL, OPT_CALIBRATION },
		{ "clip", required_argument, NULL, OPT_CLIP },
		{ "count-public", required_argument, NULL, OPT_COUNT_PUBLIC },
		{ "mean", required_argument, NULL, OPT_MEAN },
		{ "neighbours", required_argument, NULL, OPT_NEIGHBOURS },
		{ "sampler", required_argument, NULL, OPT_SAMPLER },
		{ "select-on", required_argument, NULL, OPT_SELECT_ON },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "split", required_argument, NULL, OPT_SPLIT },
		{ "subspaces", required_argument, NULL, OPT_SUBSPACES },
		{ "tensor", required_argument, NULL, OPT_TENSOR },
		{ "unsafe-test-miscalibrate", required_argument, NULL,
		    OPT_UNSAFE },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .c = OPTS_COMMON_INIT, .tensor = "X",
	    .p = { .relation = LEDGER_ADD_REMOVE } };
	struct ts_reader *r, *rm = NULL, *rs = NULL, *rf = NULL;
	struct ts_meta meta = { 0 }, prov = { 0 };
	struct tensor hdr;
	struct covest *c;
	const struct covest_plan *pl;
	struct ts_writer *w;
	struct rng *rng;
	const char *label, *mlabel = NULL, *slabel = NULL, *flabel = NULL;
	const char *dataset;
	FILE *in, *mfp = NULL, *sfp = NULL, *ffp = NULL, *ofp;
	char **av;
	double t_start = cli_now(), t_read, t_rel, syrk_secs;
	uint64_t n, nonfinite;
	size_t d;
	int ch, rc, nin = 0;

	cli_init(argv[0], argc, argv);
	av = cli_reallocarray(NULL, (size_t)argc + 1, sizeof *av);
	memcpy(av, argv, (size_t)argc * sizeof *av);
	av[argc] = NULL;
	av[0] = (char *)(uintptr_t)cli_prog();
	o.c.epsilon_max = COVEST_EPS_MAX;
	while ((ch = getopt_long(argc, av, "d:e:fho:qS:Vv", longopts,
	    NULL)) != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_ASSUME_RAW:
			o.assume_raw = 1;
			break;
		case OPT_AUDIT:
			o.p.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_CALIBRATION:
			o.p.calibration = cli_choice("--calibration", optarg,
			    cals);
			o.p.has_cal = 1;
			break;
		case OPT_CLIP:
			o.p.clip = cli_double("--clip", optarg, COVEST_CLIP_MIN,
			    COVEST_CLIP_MAX);
			o.p.has_clip = 1;
			break;
		case OPT_COUNT_PUBLIC:
			o.p.count_public = (uint64_t)cli_ll("--count-public",
			    optarg, 0, INT64_MAX);
			o.p.has_count = 1;
			break;
		case OPT_MEAN:
			if (strcmp(optarg, "released") == 0) {
				o.p.mean = COVEST_MEAN_RELEASED;
			} else if (strcmp(optarg, "zero") == 0) {
				o.p.mean = COVEST_MEAN_ZERO;
			} else if (*optarg == '\0') {
				cli_usage_error("invalid --mean '': expected "
				    "released, zero or a file");
			} else {
				o.p.mean = COVEST_MEAN_FILE;
				o.mean_file = optarg;
			}
			break;
		case OPT_NEIGHBOURS:
			o.p.relation = cli_choice("--neighbours", optarg, rels) ==
			    0 ? LEDGER_ADD_REMOVE : LEDGER_REPLACE_ONE;
			o.has_relation = 1;
			break;
		case OPT_SAMPLER:
			o.p.sampler = cli_choice("--sampler", optarg,
			    samplers) == 0 ? COVEST_SAMPLER_EXACT :
			    COVEST_SAMPLER_FAST;
			break;
		case OPT_SELECT_ON:
			o.select_on = optarg;
			break;
		case OPT_SIGMA:
			o.p.sigma = cli_double("--sigma", optarg, 0, COVEST_SIGMA_MAX);
			if (o.p.sigma != 0 && o.p.sigma < COVEST_SIGMA_MIN)
				cli_usage_error("invalid --sigma '%s': 0 or at "
				    "least %g", optarg, COVEST_SIGMA_MIN);
			o.p.has_sigma = 1;
			break;
		case OPT_SPLIT:
			parse_split(&o, optarg);
			break;
		case OPT_SUBSPACES:
			parse_subspaces(&o, optarg);
			break;
		case OPT_TENSOR:
			if (ts_check_name(optarg) != NULL)
				cli_usage_error("invalid --tensor '%s': %s",
				    optarg, ts_check_name(optarg));
			o.tensor = optarg;
			break;
		case OPT_UNSAFE:
			(void)cli_choice("--unsafe-test-miscalibrate", optarg,
			    unsafe);
			o.p.unsafe_per_block = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	if (o.assume_raw)
		dpcli_assume_raw(o.c.dataset);
	argc -= optind;
	if (argc > 1)
		usage(EX_USAGE);
	o.p.epsilon = o.c.epsilon;
	o.p.has_eps = o.c.has_epsilon;
	o.p.delta = o.c.delta;
	o.p.has_delta = o.c.has_delta;
	o.p.select_public = o.select_on != NULL;
	o.p.seeded = o.c.seed != NULL;
	if (o.c.seed)
		o.p.seed = dpcli_seed_arg(o.c.seed);
	{
		long np = sysconf(_SC_NPROCESSORS_ONLN);
		o.p.threads = np < 1 ? 1 : np > COVEST_MAX_THREADS ?
		    COVEST_MAX_THREADS : (int)np;
	}
	o.p.progress = progress;
	check_options(&o);

	/* Open everything before computing. */
	in = cli_open_in(argc == 1 ? av[optind] : NULL, &label);
	if (o.mean_file)
		mfp = sidein_open(in, "--mean", o.mean_file, &mlabel);
	if (o.select_on) {
		sfp = sidein_open(in, "--select-on", o.select_on, &slabel);
		cli_warn("--select-on %s: the subspaces depend on this data, "
		    "which is declared public: it gets no privacy protection",
		    o.select_on);
	}
	if (o.from_file)
		ffp = cli_open_in(o.from_file, &flabel);
	ofp = cli_out_open(o.c.output, o.c.force);
	rng = dpcli_rng(o.c.seed, WORK_ITEM);
	if (o.p.has_sigma && o.p.sigma == 0)
		cli_warn("--sigma 0: no noise: the output is NOT private");
	if (o.p.unsafe_per_block)
		cli_warn("--unsafe-test-miscalibrate: each block is clipped "
		    "and calibrated on its own: the output is NOT private");
	r = cli_reader(in, label);
	if (covest_new(&c, &o.p) != 0)
		cli_die(EX_OSERR, "out of memory");

	/* The shape of X fixes the partition, drawn before any row is read
	 * (it depends on random bits only). */
	if ((rc = covest_open_rows(c, r, o.tensor, &hdr, &d)) != 0)
		covest_die(c, rc, label);
	if (o.from_file)
		rf = cli_reader(ffp, flabel);
	if ((rc = covest_partition(c, rng, rf)) != 0) {
		if (rc == PV_E_OPTION)
			cli_usage_error("invalid --subspaces '%s': %s has only "
			    "%zu features", o.subspaces_arg, o.tensor, d);
		covest_die(c, rc, flabel);
	}
	if (o.p.audit && o.p.audit * (covest_nblocks(c) *
	    (o.p.mean == COVEST_MEAN_ZERO ? 2 : 3) + 1) > TS_MAX_TENSORS)
		cli_usage_error("--audit-repeat %llu: the releases would need "
		    "more than %d tensors in one stream",
		    (unsigned long long)o.p.audit, TS_MAX_TENSORS);
	if ((rc = covest_plan(c)) != 0)
		covest_die(c, rc, label);
	pl = covest_get_plan(c);
	if (mfp) {
		rm = cli_reader(mfp, mlabel);
		if ((rc = covest_read_mean(c, rm)) != 0)
			covest_die(c, rc, mlabel);
	}
	if ((rc = covest_accumulate(c, r, &hdr, rng)) != 0)
		covest_die(c, rc, label);
	tensor_free(&hdr);
	cli_progress_done();
	if (sfp) {
		rs = cli_reader(sfp, slabel);
		if ((rc = covest_select_on(c, rs, o.tensor)) != 0)
			covest_die(c, rc, slabel);
	}
	t_read = cli_now();
	if ((rc = covest_finish_reading(c)) != 0)
		covest_die(c, rc, label);
	covest_stats(c, &n, &nonfinite, &syrk_secs);
	/* Only with --sigma 0 is the count of bad rows shown: otherwise it
	 * is a statistic of the private data. */
	if (!pl->noisy && nonfinite)
		cli_warn("%llu rows with non-finite values were taken as zero "
		    "rows", (unsigned long long)nonfinite);
	dataset = dpcli_dataset(ts_reader_meta(r), o.c.dataset, label);

	w = cli_writer(ofp, o.c.level);
	if (!o.p.audit) {
		if ((rc = covest_release(c, w, rng, 0)) != 0)
			covest_die(c, rc, label);
		cli_progress_done();
	} else {
		for (uint64_t i = 0; i < o.p.audit; i++) {
			if ((rc = covest_release(c, w, rng, i)) != 0)
				covest_die(c, rc, label);
			cli_progress("releases", i + 1, o.p.audit);
		}
		cli_progress_done();
	}
	t_rel = cli_now();

	/* The stream metadata: ledgers of every input, the release, the
	 * provenance; written last, after the tensors. */
	cli_inherit(&meta, ts_reader_meta(r), label);
	cli_prov_input(&prov, nin++, label, ts_reader_digest(r),
	    ts_reader_meta(r));
	if (rm) {
		dpcli_inherit_side(&meta, ts_reader_meta(rm), mlabel);
		cli_prov_input(&prov, nin++, mlabel, ts_reader_digest(rm),
		    ts_reader_meta(rm));
	}
	if (rs) {
		dpcli_inherit_side(&meta, ts_reader_meta(rs), slabel);
		cli_prov_input(&prov, nin++, slabel, ts_reader_digest(rs),
		    ts_reader_meta(rs));
	}
	/* The partition of from: may have been chosen on that stream's
	 * release (select): the output depends on it, so its ledger comes
	 * along (a release is composed once however many streams carry
	 * it). */
	if (rf) {
		dpcli_inherit_side(&meta, ts_reader_meta(rf), flabel);
		cli_prov_input(&prov, nin++, flabel, ts_reader_digest(rf),
		    ts_reader_meta(rf));
	}
	/* Every other dataset whose rows are in X is now aggregated
	 * without protection. */
	dpcli_aggregate_others(&meta, dataset, label);
	if (pl->noisy)
		record_release(&meta, rng, dataset, c);
	else
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o.p.audit);
	cli_meta_set(&meta, "cov.subspaces", o.subspaces_arg ?
	    o.subspaces_arg : "none");
	if (o.p.subspaces == COVEST_SUB_SELECT) {
		const size_t *perm = covest_order(c);
		char *s = cli_reallocarray(NULL, d, 12), *q = s;
		for (size_t j = 0; j < d; j++)
			q += sprintf(q, "%s%zu", j ? "," : "", perm[j]);
		cli_meta_set(&meta, "subspace.order", s);
		free(s);
	}
	cli_out_finish(w, &meta, &prov);
	if (o.c.verbose) {
		double gf = (double)n * (double)d * (double)d /
		    fmax(syrk_secs, 1e-9) / 1e9;
		fprintf(stderr, "%s: %llu rows x %zu features: read and "
		    "accumulate %.3f s (syrk %.3f s, %.2f GFLOP/s)\n",
		    cli_prog(), (unsigned long long)n, d, t_read - t_start,
		    syrk_secs, gf);
		if (pl->noisy)
			fprintf(stderr, "%s: noise multiplier %.6g, sd %.6g on "
			    "the second moments (sensitivity %.6g)\n",
			    cli_prog(), 1 / pl->mu, pl->sigma[COVEST_COV],
			    pl->sens[COVEST_COV]);
		if (pl->noisy && o.p.sampler == COVEST_SAMPLER_FAST)
			fprintf(stderr, "%s: fast sampler: total variation %.3g "
			    "(%.3g a value), %.3g charged on delta at epsilon "
			    "%g\n", cli_prog(), pl->tv,
			    pl->tv_sample[COVEST_COV], pl->tv_charge,
			    pl->tv_epsilon);
		fprintf(stderr, "%s: noise, post-processing and output "
		    "%.3f s\n", cli_prog(), t_rel - t_read);
	}
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	covest_free(c);
	ts_reader_close(r);
	ts_reader_close(rm);
	ts_reader_close(rs);
	ts_reader_close(rf);
	cli_close_in(in);
	if (mfp)
		cli_close_in(mfp);
	if (sfp)
		cli_close_in(sfp);
	if (ffp)
		cli_close_in(ffp);
	rng_free(rng);
	free(av);
	cli_out_commit();
	return 0;
}
