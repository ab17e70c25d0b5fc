/* teacher-vote: aggregate the label votes of teacher models with differential privacy (PATE). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "ledger.h"
#include "opts.h"
#include "pate.h"
#include "pateio.h"
#include "tensor.h"
#include "tstream.h"

#define MAX_AUDIT 32768			/* --audit-repeat: 2 tensors each */
#define WORK_ITEM "teacher-vote"

static const char *const mech_names[] = { "lnmax", "gnmax",
    "confident-gnmax", NULL };

enum {
	OPT_AUDIT = OPTS_FIRST_TOOL, OPT_CLASSES, OPT_DDEP, OPT_GAMMA,
	OPT_MAX_ANSWERS, OPT_MECHANISM, OPT_REVEAL, OPT_SIGMA, OPT_SIGMA1,
	OPT_SS_BETA, OPT_SS_ORDER, OPT_SS_SIGMA, OPT_THRESHOLD, OPT_UNSAFE
};

/* The mechanism's parameters in p; the rest is the command line. */
struct opts {
	struct pate_params p;
	struct opts_common c;	/* -f -o -q -S, --level, --dataset */
	int has_gamma, has_sigma, has_sigma1, has_threshold;
	int has_ss_beta, has_ss_order, has_ss_sigma;
	uint64_t classes;
};

static void
vote_progress(void *ctx, uint64_t done, uint64_t total)
{
	(void)ctx;
	cli_progress("queries voted", done, total);
}

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: teacher-vote [-fqVv] [-o file] [-S seed] --classes k\n"
	    "                    [--audit-repeat n] [--budget-store path]\n"
	    "                    [--data-dependent] [--dataset name]\n"
	    "                    [--gamma g] [--level level] "
	    "[--max-answers n]\n"
	    "                    [--mechanism name] [--sigma s] "
	    "[--sigma1 s]\n"
	    "                    [--ss-beta b] [--ss-order a] "
	    "[--ss-sigma s]\n"
	    "                    [--threshold t] [file ...]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -S, --seed N           reproducible noise: the output is "
		    "NOT private\n"
		    "  -V, --version          show the version\n"
		    "  -v, --verbose          a summary of the answers on "
		    "stderr\n"
		    "      --audit-repeat N   N independent releases (tests "
		    "only)\n"
		    "      --budget-store PATH\n"
		    "                         charge the release to the budget store "
		    "PATH first\n"
		    "      --classes K        number of classes (required)\n"
		    "      --data-dependent   gnmax, confident-gnmax: also release "
		    "the data-dependent\n"
		    "                         RDP at --ss-order, with smooth "
		    "sensitivity (GNSS)\n"
		    "      --dataset NAME     the protected dataset (default: "
		    "from the inputs)\n"
		    "      --gamma G          lnmax: Laplace noise of scale 1/G "
		    "per count; inf: none,\n"
		    "                         NOT private\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --max-answers N    confident-gnmax: answer at most N "
		    "queries\n"
		    "      --mechanism NAME   lnmax (default), gnmax or "
		    "confident-gnmax\n"
		    "      --sigma S          gnmax, confident-gnmax: Gaussian "
		    "noise per count;\n"
		    "                         0: none, NOT private\n"
		    "      --sigma1 S         confident-gnmax: noise of the "
		    "threshold check\n"
		    "      --ss-beta B        smoothness of the sensitivity "
		    "(default 0.4 / order)\n"
		    "      --ss-order A       the order of the data-dependent "
		    "release\n"
		    "      --ss-sigma S       GNSS noise: S times the smooth "
		    "sensitivity\n"
		    "      --threshold T      confident-gnmax: answer when the "
		    "noisy top count >= T\n", fp);
	exit(status);
}

/* ---- options ---- */

static double
sigma_arg(const char *opt, const char *arg)
{
	double v = cli_double(opt, arg, 0, PATE_SIGMA_MAX);

	if (v != 0 && v < PATE_SIGMA_MIN)
		cli_usage_error("invalid %s '%s': 0 or at least %g", opt, arg,
		    PATE_SIGMA_MIN);
	return v;
}

static double
gamma_arg(const char *arg)
{
	double v;

	if (strcmp(arg, "inf") == 0)
		return INFINITY;
	v = cli_double("--gamma", arg, 0, PATE_GAMMA_MAX);
	if (v < PATE_GAMMA_MIN)
		cli_usage_error("invalid --gamma '%s': between %g and %g, or "
		    "inf", arg, PATE_GAMMA_MIN, PATE_GAMMA_MAX);
	return v;
}

/* An option that the mechanism does not take. */
static void
not_for(const struct opts *o, int has, const char *opt)
{
	if (has)
		cli_usage_error("%s does not apply to --mechanism %s", opt,
		    mech_names[o->p.mech]);
}

static void
check_ddep(struct opts *o)
{
	if (!o->p.ddep) {
		if (o->has_ss_beta || o->has_ss_order || o->has_ss_sigma ||
		    o->p.reveal)
			cli_usage_error("--ss-beta, --ss-order and --ss-sigma "
			    "go with --data-dependent");
		return;
	}
	if (o->p.mech == PATE_LNMAX)
		cli_usage_error("--data-dependent applies to gnmax and "
		    "confident-gnmax: the smooth sensitivity of Papernot et "
		    "al. (2018) is derived for Gaussian noise, and lnmax has "
		    "only its data-independent bound");
	if (!o->has_ss_order || !o->has_ss_sigma)
		cli_usage_error("--data-dependent needs --ss-order and "
		    "--ss-sigma: the data-dependent bound is released only "
		    "with smooth-sensitivity noise");
	if (!pate_ss_order_ok(o->p.ss_order))
		cli_usage_error("invalid --ss-order '%g': one of the default "
		    "orders of rdp-account (1.1 to 10.9 by 0.1, 11 to 63, 128, "
		    "256, 512, 1024)", o->p.ss_order);
	if (!o->has_ss_beta)
		o->p.ss_beta = PATE_SS_BETA_DEFAULT / o->p.ss_order;
	if (!(2 * o->p.ss_order * o->p.ss_beta < 1))
		cli_usage_error("--ss-beta %g and --ss-order %g: the GNSS "
		    "release needs 2 order beta < 1", o->p.ss_beta, o->p.ss_order);
	if (o->p.audit)
		cli_usage_error("--data-dependent does not go with "
		    "--audit-repeat");
	if (o->p.half_noise)
		cli_usage_error("--data-dependent does not go with "
		    "--unsafe-test-half-noise");
	if (o->p.reveal)
		opts_unsafe_gate("--unsafe-test-reveal-ss");
}

static void
check_options(struct opts *o)
{
	check_ddep(o);
	if (o->classes == 0)
		cli_usage_error("--classes is required: the number of classes "
		    "must not be learnt from the votes");
	switch (o->p.mech) {
	case PATE_LNMAX:
		if (!o->has_gamma)
			cli_usage_error("no privacy parameters: lnmax needs "
			    "--gamma");
		not_for(o, o->has_sigma, "--sigma");
		not_for(o, o->has_sigma1, "--sigma1");
		not_for(o, o->has_threshold, "--threshold");
		not_for(o, o->p.has_max, "--max-answers");
		break;
	case PATE_GNMAX:
		if (!o->has_sigma)
			cli_usage_error("no privacy parameters: gnmax needs "
			    "--sigma");
		not_for(o, o->has_gamma, "--gamma");
		not_for(o, o->has_sigma1, "--sigma1");
		not_for(o, o->has_threshold, "--threshold");
		not_for(o, o->p.has_max, "--max-answers");
		break;
	default:
		if (!o->has_sigma || !o->has_sigma1 || !o->has_threshold)
			cli_usage_error("no privacy parameters: confident-gnmax "
			    "needs --sigma1, --threshold and --sigma");
		not_for(o, o->has_gamma, "--gamma");
		if ((o->p.sigma == 0) != (o->p.sigma1 == 0))
			cli_usage_error("--sigma 0 and --sigma1 0 go together "
			    "(no noise at all, NOT private)");
	}
	if (o->p.half_noise)
		opts_unsafe_gate("--unsafe-test-half-noise");
}

/* ---- input ---- */

/* Read one input: a 'votes' tensor or a teacher's 'y_pred' (pateio).
 * *meta receives a copy of its stream metadata.
 * @return 1 for votes, 0 for y_pred. */
static int
read_input(const char *path, struct pate_votes *v, struct ts_meta *meta,
    uint64_t *digest, const char **label, int want)
{
	FILE *fp = cli_open_in(path, label);
	struct ts_reader *r = cli_reader(fp, *label);
	char msg[PATEIO_MSG];
	int rc, kind;

	if ((rc = pateio_read(r, v, want, *label, &kind, msg)) != 0) {
		if (msg[0] == '\0')
			cli_rdie(r, rc);
		cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_DATAERR, "%s", msg);
	}
	if (ts_meta_merge(meta, ts_reader_meta(r), "", NULL) != 0)
		cli_die(EX_OSERR, "out of memory");
	*digest = ts_reader_digest(r);
	ts_reader_close(r);
	cli_close_in(fp);
	return kind;
}

/* The dataset a teacher protects: the one marked aggregate (a teacher
 * trained without privacy on its part), or --dataset. */
static const char *
teacher_dataset(const struct ts_meta *m, const char *given,
    const char *label)
{
	const char *found;
	int n;

	if (given != NULL)
		return given;
	if ((found = dpcli_aggregate_dataset(m, &n)) != NULL)
		return found;
	cli_die(EX_DATAERR, "%s: %s: name the protected dataset with "
	    "--dataset", label, n == 0 ? "no dataset is marked 'aggregate' "
	    "(dp.raw.NAME, as a teacher trained without privacy carries)" :
	    "several datasets are marked 'aggregate'");
}

/* Check one teacher stream (pate_teacher_read) and record its partition
 * in t; die with the reason. */
static void
teacher_part(const struct ts_meta *m, const char *dataset,
    const char *label, struct pate_teacher *t)
{
	char key[16 + LEDGER_MAX_NAME];
	const char *s;

	switch (pate_teacher_read(t, m, dataset)) {
	case PATE_T_OK:
		return;
	case PATE_T_ROW_LOCAL:
		snprintf(key, sizeof key, "dp.raw.%s", dataset);
		cli_die(EX_DATAERR, "%s: the predictions are row-local in the "
		    "protected dataset %s (%s = row-local): the queries must "
		    "be public", label, dataset, key);
	case PATE_T_QUERIES_RAW:
		snprintf(key, sizeof key, "predict.raw.%s", dataset);
		cli_die(EX_DATAERR, "%s: the queries derive from the protected "
		    "dataset %s (%s = %s): they must be public", label,
		    dataset, key, ts_meta_get(m, key));
	case PATE_T_PART_AGGREGATE:
		snprintf(key, sizeof key, "split.raw.%s", dataset);
		cli_die(EX_DATAERR, "%s: the part was already an aggregate of "
		    "%s when it was split (%s = aggregate): the teachers are "
		    "not independent, so one record can move them all",
		    label, dataset, key);
	case PATE_T_NO_PART:
		cli_die(EX_DATAERR, "%s: no partition id (split.part): "
		    "teachers must be trained on disjoint parts from tns "
		    "split", label);
	case PATE_T_MIXED:
		s = ts_meta_get(m, PART_MIXED_BY);
		cli_die(EX_DATAERR, "%s: split.part is '%s' (made so by %s): "
		    "the teacher derives from several parts, or from the whole "
		    "dataset without privacy, so one record can move several "
		    "teachers: each teacher must depend on one part only (and "
		    "on DP releases)", label, SPLIT_MIXED,
		    s != NULL ? s : "an input");
	case PATE_T_BAD_PART:
		cli_die(EX_DATAERR, "%s: split.part '%s' is not i/n with "
		    "i < n", label, ts_meta_get(m, "split.part"));
	case PATE_T_NO_PARENT:
		cli_die(EX_DATAERR, "%s: split.part without split.parent: "
		    "cannot tell which split the part belongs to", label);
	default:
		cli_die(EX_OSERR, "out of memory");
	}
}

/* The teachers t[0..n-1] (labels lab[]): disjoint parts of one split,
 * answering the same queries (pate_teachers_check); die with the reason. */
static void
check_disjoint(const struct pate_teacher *t, const char *const *lab,
    size_t n)
{
	size_t a = 0, b = 0;
	int rc = pate_teachers_check(t, n, &a, &b);
	const struct pate_teacher *x = &t[a], *y = &t[b];

	switch (rc) {
	case PATE_TS_OK:
		return;
	case PATE_TS_PARENT:
		cli_die(EX_DATAERR, "%s and %s come from different "
		    "splits (split.parent %s and %s), whose parts overlap: "
		    "teachers must be disjoint parts of one split", lab[a],
		    lab[b], x->sp.parent, y->sp.parent);
	case PATE_TS_COUNT:
		cli_die(EX_DATAERR, "%s and %s come from splits into %"
		    PRIu64 " and %" PRIu64 " parts, which overlap: "
		    "teachers must be disjoint parts of one split",
		    lab[a], lab[b], x->sp.n, y->sp.n);
	case PATE_TS_ID:
		cli_die(EX_DATAERR, "%s and %s come from different "
		    "splits (split.id %s and %s), whose parts overlap",
		    lab[a], lab[b], x->sp.id ? x->sp.id : "none",
		    y->sp.id ? y->sp.id : "none");
	case PATE_TS_DIGEST:
		cli_die(EX_DATAERR, "%s and %s are predictions on "
		    "different inputs (prov.input.0.xxh64 %s and %s): "
		    "teachers must answer the same queries", lab[a],
		    lab[b], x->queries, y->queries);
	case PATE_TS_MARKS:
		cli_die(EX_DATAERR, "%s and %s are predictions on "
		    "different inputs (their raw marks differ: '%s' and "
		    "'%s'): teachers must answer the same queries",
		    lab[a], lab[b], x->qraw, y->qraw);
	case PATE_TS_SAME:
		cli_die(EX_DATAERR, "%s and %s were trained on the same "
		    "part %" PRIu64 "/%" PRIu64 ": teachers must be "
		    "disjoint", lab[a], lab[b], x->sp.i, x->sp.n);
	default:
		cli_die(EX_OSERR, "out of memory");
	}
}

static void
write_release(struct ts_writer *w, const struct pate_votes *v, const int32_t *y,
    const uint8_t *ans, const char *suffix)
{
	struct tensor t;
	uint64_t dims[1] = { v->q };
	char name[32];
	int rc;

	snprintf(name, sizeof name, "y%s", suffix);
	if (tensor_init(&t, name, TS_I32, 1, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &t)) != 0 ||
	    (rc = ts_write_rows(w, y, v->q)) != 0 ||
	    (rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
	snprintf(name, sizeof name, "answered%s", suffix);
	if (tensor_init(&t, name, TS_U8, 1, dims) != 0)
		cli_die(EX_SOFTWARE, "bad tensor header");
	if ((rc = ts_write_begin(w, &t)) != 0 ||
	    (rc = ts_write_rows(w, ans, v->q)) != 0 ||
	    (rc = ts_write_end(w)) != 0)
		cli_wdie(w, rc);
	tensor_free(&t);
}

/* ---- the data-dependent release ---- */

/* Whether --data-dependent can release anything (pate_ddep_plan). */
static void
ddep_plan(const struct opts *o, const struct pate_votes *v,
    struct pate_dd *dd)
{
	switch (pate_ddep_plan(&o->p, v, dd)) {
	case 0:
		return;
	case 1:
		cli_die(EX_DATAERR, "--data-dependent: with %" PRIu64
		    " teachers, %zu classes and these noise levels, the "
		    "data-dependent bound at order %g equals the "
		    "data-independent one for every vote histogram, even a "
		    "unanimous one: nothing to release (run without "
		    "--data-dependent)", v->n, v->k, o->p.ss_order);
	case 2:
		cli_die(EX_DATAERR, "--data-dependent: conditions C5 and C6 of "
		    "Papernot et al. (2018, Appendix B.4) fail for sigma %g, "
		    "%zu classes at order %g, so the local sensitivity bound "
		    "does not hold: choose another --ss-order", o->p.sigma,
		    v->k, o->p.ss_order);
	default:
		cli_die(EX_OSERR, "out of memory");
	}
}

/* ---- the ledger ---- */

/* The release's entry (pate_ledger); its id into id. */
static void
record_release(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct pate *pt, const struct opts *o, const struct pate_votes *v,
    int relation, char id[LEDGER_ID_HEX + 1])
{
	struct ledger_entry e;

	dpcli_entry(&e, rng, dataset, pate_mechanism(&o->p));
	if (pate_ledger(pt, v, relation, &e) != 0)
		cli_die(EX_OSERR, "out of memory");
	dpcli_release(m, &e);
	memcpy(id, e.id, sizeof e.id);
	ts_meta_free(&e.params);
}

/* The data-dependent release's entry (pate_gnss_ledger), which sanitizes
 * the release label_id. */
static void
record_gnss(struct ts_meta *m, struct rng *rng, const char *dataset,
    const struct opts *o, const struct pate_votes *v, const char *label_id,
    const struct pate_dd *dd)
{
	struct ledger_entry e;
	char key[TS_MAX_KEY + 1];

	dpcli_entry(&e, rng, dataset, PATE_GNSS_MECHANISM);
	if (pate_gnss_ledger(&o->p, v, dd, &e) != 0)
		cli_die(EX_OSERR, "out of memory");
	dpcli_release(m, &e);
	snprintf(key, sizeof key, "dp.release.%s.sanitizes", e.id);
	cli_meta_set(m, key, label_id);
	ts_meta_free(&e.params);
}

/* A failed release: nothing was released. */
static void
run_die(int rc)
{
	switch (rc) {
	case PV_E_NUMERIC:
		cli_die(EX_SOFTWARE, "--data-dependent: the smooth sensitivity "
		    "is not a number: nothing was released");
	case PV_E_LIMIT:
		cli_die(EX_DATAERR, "--data-dependent: the data-dependent RDP "
		    "is out of range [0, %g]: nothing was released",
		    PATE_SS_MAX_RDP);
	case PV_E_USAGE:
		cli_die(EX_SOFTWARE, "--data-dependent: sensitivity: bad "
		    "arguments");
	default:
		dpcli_noise_die(rc);
	}
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "audit-repeat", required_argument, NULL, OPT_AUDIT },
		{ "budget-store", required_argument, NULL, OPTS_BUDGET_STORE },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "data-dependent", no_argument, NULL, OPT_DDEP },
		{ "dataset", required_argument, NULL, OPTS_DATASET },
		{ "force", no_argument, NULL, 'f' },
		{ "gamma", required_argument, NULL, OPT_GAMMA },
		{ "help", no_argument, NULL, 'h' },
		{ "level", required_argument, NULL, OPTS_LEVEL },
		{ "max-answers", required_argument, NULL, OPT_MAX_ANSWERS },
		{ "mechanism", required_argument, NULL, OPT_MECHANISM },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 'S' },
		{ "sigma", required_argument, NULL, OPT_SIGMA },
		{ "sigma1", required_argument, NULL, OPT_SIGMA1 },
		{ "ss-beta", required_argument, NULL, OPT_SS_BETA },
		{ "ss-order", required_argument, NULL, OPT_SS_ORDER },
		{ "ss-sigma", required_argument, NULL, OPT_SS_SIGMA },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "unsafe-test-half-noise", no_argument, NULL, OPT_UNSAFE },
		{ "unsafe-test-reveal-ss", no_argument, NULL, OPT_REVEAL },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .p.mech = PATE_LNMAX, .c = OPTS_COMMON_INIT };
	struct pate_votes v = { 0 };
	struct pate *pt = NULL;
	struct pate_dd dd = { 0 };
	struct ts_meta meta = { 0 }, prov = { 0 }, in = { 0 };
	struct ts_writer *w;
	struct pate_teacher *parts = NULL;
	const char **tlabels = NULL;
	struct rng *rng;
	const char *label, *dataset = NULL, **paths, *msg;
	char key[16 + LEDGER_MAX_NAME], dsbuf[LEDGER_MAX_NAME + 1];
	int32_t *y;
	uint8_t *ans;
	uint64_t digest;
	size_t npaths;
	int ch, rc, mode, off, stdin_seen = 0;
	char label_id[LEDGER_ID_HEX + 1];
	FILE *ofp;

	cli_init(argv[0], argc, argv);
	while ((ch = getopt_long(argc, argv, "fho:qS:Vv", longopts, NULL)) !=
	    -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_AUDIT:
			o.p.audit = (uint64_t)cli_ll("--audit-repeat", optarg, 1,
			    MAX_AUDIT);
			break;
		case OPT_CLASSES:
			o.classes = (uint64_t)cli_ll("--classes", optarg, 2,
			    PATE_MAX_CLASSES);
			break;
		case OPT_DDEP:
			o.p.ddep = 1;
			break;
		case OPT_GAMMA:
			o.p.gamma = gamma_arg(optarg);
			o.has_gamma = 1;
			break;
		case OPT_MAX_ANSWERS:
			o.p.max_answers = (uint64_t)cli_ll("--max-answers", optarg,
			    0, INT64_MAX);
			o.p.has_max = 1;
			break;
		case OPT_MECHANISM:
			o.p.mech = cli_choice("--mechanism", optarg, mech_names);
			break;
		case OPT_SIGMA:
			o.p.sigma = sigma_arg("--sigma", optarg);
			o.has_sigma = 1;
			break;
		case OPT_SIGMA1:
			o.p.sigma1 = sigma_arg("--sigma1", optarg);
			o.has_sigma1 = 1;
			break;
		case OPT_REVEAL:
			o.p.reveal = 1;
			break;
		case OPT_SS_BETA:
			o.p.ss_beta = cli_double("--ss-beta", optarg, 1e-6, 0.5);
			o.has_ss_beta = 1;
			break;
		case OPT_SS_ORDER:
			o.p.ss_order = cli_double("--ss-order", optarg, 1.1, 1024);
			o.has_ss_order = 1;
			break;
		case OPT_SS_SIGMA:
			o.p.ss_sigma = cli_double("--ss-sigma", optarg,
			    PATE_SS_SIGMA_MIN, PATE_SS_SIGMA_MAX);
			o.has_ss_sigma = 1;
			break;
		case OPT_THRESHOLD:
			o.p.threshold = cli_double("--threshold", optarg,
			    -PATE_THRESHOLD_MAX, PATE_THRESHOLD_MAX);
			o.has_threshold = 1;
			break;
		case OPT_UNSAFE:
			o.p.half_noise = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	check_options(&o);
	off = pate_noise_off(&o.p);
	if (o.p.audit && off)
		cli_usage_error("--audit-repeat needs noise");
	if (o.p.half_noise && off)
		cli_usage_error("--unsafe-test-half-noise needs noise");
	if (o.p.ddep && off)
		cli_usage_error("--data-dependent needs noise");
	if ((msg = pate_check_params(&o.p)) != NULL)
		cli_usage_error("%s", msg);
	npaths = argc > 0 ? (size_t)argc : 1;
	paths = cli_reallocarray(NULL, npaths, sizeof *paths);
	for (size_t i = 0; i < npaths; i++) {
		paths[i] = argc > 0 ? argv[i] : "-";
		if (strcmp(paths[i], "-") == 0 && stdin_seen++)
			cli_usage_error("the standard input can be read only "
			    "once");
	}

	/* Open the output and the generator before reading; the noise is
	 * drawn only after every input has been read and checked. */
	ofp = cli_out_open(o.c.output, o.c.force);
	rng = dpcli_rng(o.c.seed, WORK_ITEM);
	if (off)
		cli_warn("%s: no noise: the output is NOT private",
		    o.p.mech == PATE_LNMAX ? "--gamma inf" : "--sigma 0");
	if (o.p.half_noise)
		cli_warn("--unsafe-test-half-noise: half the noise claimed: the "
		    "output is NOT private");
	if (o.p.reveal)
		cli_warn("--unsafe-test-reveal-ss: the ledger shows "
		    "data-dependent values: the output is NOT private");

	v.k = (size_t)o.classes;
	mode = read_input(paths[0], &v, &in, &digest, &label, -1);
	if (mode == 1 && npaths > 1)
		cli_usage_error("a stream of 'votes' is the only input; "
		    "teachers' predictions come one file each");
	if (mode == 1 && o.p.ddep)
		cli_die(EX_DATAERR, "%s: --data-dependent needs the teachers' "
		    "prediction streams: the smooth sensitivity of Papernot et "
		    "al. (2018) is for a fixed number of teachers (replace-one "
		    "neighbours), not for a votes tensor (add-remove)", label);
	cli_prov_input(&prov, 0, label, digest, &in);
	if (mode == 1) {
		if (v.n == 0)
			cli_die(EX_DATAERR, "%s: tensor 'votes' has no teachers",
			    label);
		snprintf(dsbuf, sizeof dsbuf, "%s",
		    dpcli_dataset(&in, o.c.dataset, label));
		dataset = dsbuf;
		dpcli_carry(&meta, &in, NULL, NULL, label);
	} else {
		parts = cli_calloc(npaths, sizeof *parts);
		tlabels = cli_calloc(npaths, sizeof *tlabels);
		for (size_t t = 0; t < npaths; t++) {
			if (t > 0) {
				ts_meta_free(&in);
				(void)read_input(paths[t], &v, &in, &digest,
				    &label, 0);
				cli_prov_input(&prov, (int)t, label, digest,
				    &in);
			}
			if (dataset == NULL) {
				/* A copy: in is freed for the next teacher. */
				snprintf(dsbuf, sizeof dsbuf, "%s",
				    teacher_dataset(&in, o.c.dataset, label));
				dataset = dsbuf;
			} else if (strcmp(teacher_dataset(&in, o.c.dataset,
			    label), dataset) != 0)
				cli_die(EX_DATAERR, "%s: the teachers protect "
				    "different datasets (%s and %s)", label,
				    dataset, teacher_dataset(&in, NULL, label));
			teacher_part(&in, dataset, label, &parts[t]);
			tlabels[t] = label;
			/* The teachers' parts are disjoint (checked below):
			 * each record of the dataset reaches one teacher, and
			 * the vote histogram is what the mechanism protects. */
			snprintf(key, sizeof key, "dp.raw.%s", dataset);
			dpcli_carry(&meta, &in, NULL, key, label);
		}
		check_disjoint(parts, tlabels, npaths);
	}
	ts_meta_free(&in);
	if (o.p.ddep)
		ddep_plan(&o, &v, &dd);
	/* Queries voted within the one release (--audit-repeat shows the
	 * releases instead). */
	if (!o.p.audit)
		o.p.progress = vote_progress;
	if ((rc = pate_new(&pt, &o.p)) != 0)
		dpcli_noise_die(rc);

	y = cli_reallocarray(NULL, v.q ? v.q : 1, sizeof *y);
	ans = cli_reallocarray(NULL, v.q ? v.q : 1, sizeof *ans);
	w = cli_writer(ofp, o.c.level);
	if (!o.p.audit) {
		/* The data-dependent release (with --data-dependent) draws
		 * after the answers, from the same generator. */
		if ((rc = pate_run(pt, rng, &v, y, ans, &dd)) != 0)
			run_die(rc);
		cli_progress_done();
		write_release(w, &v, y, ans, "");
		if (o.c.verbose) {
			size_t na = 0;

			for (size_t i = 0; i < v.q; i++)
				na += ans[i] != 0;
			fprintf(stderr, "%s: %s: %" PRIu64 " teachers, %zu "
			    "classes, %zu of %zu queries answered\n",
			    cli_prog(), mech_names[o.p.mech], v.n, v.k, na,
			    v.q);
		}
	} else {
		for (uint64_t i = 0; i < o.p.audit; i++) {
			struct rng *ri = dpcli_rng_audit(o.c.seed, WORK_ITEM,
			    i, rng);
			char suffix[24];

			if ((rc = pate_run(pt, ri, &v, y, ans, NULL)) != 0)
				run_die(rc);
			snprintf(suffix, sizeof suffix, "/%" PRIu64, i);
			write_release(w, &v, y, ans, suffix);
			if (ri != rng)
				rng_free(ri);
			cli_progress("releases", i + 1, o.p.audit);
		}
		cli_progress_done();
	}

	/* The stream metadata: the inputs' (less the split keys and, for
	 * teachers, their aggregate mark), the release, the provenance. */
	if (!off) {
		record_release(&meta, rng, dataset, pt, &o, &v, mode == 1 ?
		    LEDGER_ADD_REMOVE : LEDGER_REPLACE_ONE, label_id);
		if (o.p.ddep)
			record_gnss(&meta, rng, dataset, &o, &v, label_id, &dd);
	}
	if (off || o.p.half_noise || o.p.reveal)
		dpcli_not_private(&meta, dataset, label);
	dpcli_audit_mark(&meta, o.p.audit);
	cli_meta_set(&meta, "vote.mechanism", mech_names[o.p.mech]);
	if (ts_meta_setf(&meta, "vote.teachers", "%" PRIu64, v.n) != 0 ||
	    ts_meta_setf(&meta, "vote.classes", "%zu", v.k) != 0 ||
	    ts_meta_setf(&meta, "vote.queries", "%zu", v.q) != 0)
		cli_die(EX_OSERR, "out of memory");
	cli_out_finish(w, &meta, &prov);
	cli_out_commit();

	for (size_t t = 0; parts != NULL && t < npaths; t++)
		pate_teacher_free(&parts[t]);
	free(parts);
	free(tlabels);
	free(paths);
	free(y);
	free(ans);
	pate_votes_free(&v);
	pate_free(pt);
	rng_free(rng);
	ts_meta_free(&meta);
	ts_meta_free(&prov);
	return 0;
}
