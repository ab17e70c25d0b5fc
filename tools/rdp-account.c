/* rdp-account: privacy accounting: epsilon of DP mechanisms and their
 * composition under Renyi DP, inverse queries, and privacy ledger totals. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "account.h"
#include "acctreport.h"
#include "cli.h"
#include "dpcli.h"
#include "ledger.h"
#include "opts.h"
#include "pverr.h"
#include "rdp.h"
#include "store.h"
#include "storecli.h"
#include "emit.h"
#include "tensor.h"
#include "tstream.h"
#include "verdict.h"

#define MAX_REPEAT 100000000ull		/* --repeat (benchmarks) */

/* getopt values of the long-only options. */
enum {
	L_ALLOW_SEEDED = OPTS_FIRST_TOOL, L_ANALYTIC, L_BUDGET, L_CONVERSION, L_COUNT,
	L_COUNTS, L_DDEP, L_FORMAT, L_GAMMA, L_ORDERS, L_PLD, L_PUBLIC, L_Q,
	L_QUERIES, L_REPEAT, L_SCALE, L_SENS, L_SIGMA, L_SOLVE, L_STEPS,
	L_BATCH, L_EPOCHS, L_RECORDS, L_STORE
};

static const struct option longopts[] = {
	{ "allow-seeded", no_argument, NULL, L_ALLOW_SEEDED },
	{ "analytic", no_argument, NULL, L_ANALYTIC },
	{ "budget", required_argument, NULL, L_BUDGET },
	{ "budget-store", required_argument, NULL, L_STORE },
	{ "conversion", required_argument, NULL, L_CONVERSION },
	{ "count", required_argument, NULL, L_COUNT },
	{ "counts", required_argument, NULL, L_COUNTS },
	{ "data-dependent", no_argument, NULL, L_DDEP },
	{ "delta", required_argument, NULL, 'd' },
	{ "epsilon", required_argument, NULL, 'e' },
	{ "format", required_argument, NULL, L_FORMAT },
	{ "gamma", required_argument, NULL, L_GAMMA },
	{ "help", no_argument, NULL, 'h' },
	{ "orders", required_argument, NULL, L_ORDERS },
	{ "pld", no_argument, NULL, L_PLD },
	{ "public", required_argument, NULL, L_PUBLIC },
	{ "q", required_argument, NULL, L_Q },
	{ "queries", required_argument, NULL, L_QUERIES },
	{ "quiet", no_argument, NULL, 'q' },
	{ "repeat", required_argument, NULL, L_REPEAT },
	{ "scale", required_argument, NULL, L_SCALE },
	{ "sensitivity", required_argument, NULL, L_SENS },
	{ "sigma", required_argument, NULL, L_SIGMA },
	{ "solve", required_argument, NULL, L_SOLVE },
	{ "steps", required_argument, NULL, L_STEPS },
	{ "store", required_argument, NULL, L_STORE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* Event option: getopt value, bit and spelling. */
static const struct {
	int ch;
	unsigned bit;
	const char *name;
} evopts[] = {
	{ L_Q, ACCOUNT_P_Q, "--q" }, { L_SIGMA, ACCOUNT_P_SIGMA, "--sigma" },
	{ L_STEPS, ACCOUNT_P_STEPS, "--steps" }, { 'e', ACCOUNT_P_EPS, "--epsilon" },
	{ L_SOLVE, ACCOUNT_P_SOLVE, "--solve" }, { L_SENS, ACCOUNT_P_SENS, "--sensitivity" },
	{ L_COUNT, ACCOUNT_P_COUNT, "--count" }, { L_SCALE, ACCOUNT_P_SCALE, "--scale" },
	{ L_GAMMA, ACCOUNT_P_GAMMA, "--gamma" }, { L_QUERIES, ACCOUNT_P_QUERIES, "--queries" },
	{ L_COUNTS, ACCOUNT_P_COUNTS, "--counts" },
	{ L_DDEP, ACCOUNT_P_DDEP, "--data-dependent" },
	{ L_ANALYTIC, ACCOUNT_P_ANALYTIC, "--analytic" },
	{ L_PLD, ACCOUNT_P_PLD, "--pld" },
};

static const char *const formats[] = { "text", "tsv", "json", NULL };
static const char *const solves[] = { "sigma", "steps", "q", NULL };


struct opts {
	struct opts_common c;		/* -d -q -v (-e belongs to events) */
	int ledger, format, conv, allow_seeded;
	int have_budget;
	double budget;
	const char *orders_arg, *orders_name;
	uint64_t repeat;
	struct account_event *ev;
	size_t nev;
	const char **files;
	size_t nfiles;
	const char **public;		/* ledger --public lists, as given */
	const char *store;		/* ledger --store */
	size_t npublic;
	struct verdict_params vp;	/* ledger: filled by run_ledger */
};

static void usage(int) __attribute__((noreturn));

static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs(
"usage: rdp-account [-qv] [--conversion improved|classic] --delta d\n"
"           [--format text|tsv|json] [--orders list] event [+ event ...]\n"
"       rdp-account ledger [-qv] [--allow-seeded] [--budget eps]\n"
"           [--conversion improved|classic] --delta d\n"
"           [--format text|tsv|json] [--public name[,name ...]]\n"
"           [--store path] [file ...]\n"
"       rdp-account store init [--budget-store path | path]\n"
"       rdp-account store set [--budget-store path | path] --dataset name\n"
"           --epsilon e --delta d\n"
"       rdp-account store status [--format text|tsv|json]\n"
"           [--budget-store path | path]\n"
"       rdp-account store solve [--format text|tsv|json]\n"
"           [--budget-store path | path] --dataset name plan\n", fp);
	if (status == 0)
		fputs(
"\n"
"events (each one release or a series of them; '+' composes events):\n"
"  sgm --q q --sigma s --steps n [--pld]   Poisson-subsampled Gaussian\n"
"                                   (DP-SGD), sigma the noise multiplier\n"
"  sgm --epsilon e --solve sigma|steps|q   and the other two parameters\n"
"  gaussian --sigma s [--sensitivity l2] [--count n]\n"
"  gaussian --epsilon e --solve sigma [--analytic] [--sensitivity l2]\n"
"           [--count n]\n"
"  laplace --scale b [--sensitivity l1] [--count n]\n"
"  pate-lnmax --gamma g --queries n  PATE noisy max, Laplace scale 1/g\n"
"  pate-gnmax --sigma s --queries n  PATE noisy max, Gaussian noise s\n"
"  pate-* --counts file --data-dependent   data-dependent bound (NOT\n"
"                                   private without smooth sensitivity)\n"
"\n"
"plans of store solve (what spends exactly the rest of the budget):\n"
"  sgm {--q q | --batch b --records n} {--steps n | --epochs e}\n"
"                                   DP-SGD: the smallest noise multiplier\n"
"  sgm {--q q | --batch b --records n} --sigma s   the most steps\n"
"  gaussian [--sensitivity l2] [--count n]   the smallest noise std\n"
"\n"
"options:\n"
"  -d, --delta d           target delta, 0 < d < 1 (required)\n"
"  -e, --epsilon e         target epsilon of --solve, > 0; store set: the\n"
"                          dataset's budget\n"
"  -h, --help              print this help and exit\n"
"  -q, --quiet             no warnings\n"
"  -V, --version           print the version and exit\n"
"  -v, --verbose           events: print the composed RDP curve too;\n"
"                          ledger: list each dataset's releases\n"
"  --allow-seeded          ledger --budget: seeded releases do not fail\n"
"  --dataset name          store set: the dataset whose budget is set;\n"
"                          store solve: the dataset of the planned release\n"
"  --analytic              gaussian --solve: exact analytic calibration\n"
"                          (Balle and Wang 2018) instead of RDP\n"
"  --budget eps            ledger: exit 1 if a dataset spends more than\n"
"                          eps or is not private\n"
"  --budget-store path     store: the store (or PRIVADA_BUDGET_STORE);\n"
"                          ledger: as --store\n"
"  --batch b               store solve sgm: q = b / records, as dpsgd-train\n"
"  --records n             store solve sgm: the declared records\n"
"  --epochs e              store solve sgm: steps = round(e / q)\n"
"  --conversion c          RDP to (epsilon, delta): improved (default) or\n"
"                          classic\n"
"  --count n               gaussian, laplace: releases (default 1)\n"
"  --counts file           pate-*: vote histograms, one query per line,\n"
"                          classes comma-separated\n"
"  --data-dependent        pate-*: bound from --counts (see above)\n"
"  --format f              text (default), tsv or json\n"
"  --gamma g               pate-lnmax: inverse Laplace scale per count\n"
"  --pld                   sgm alone: also the privacy loss distribution's\n"
"                          epsilon (tighter; not used by the ledger)\n"
"  --orders list           RDP orders: default, opacus, pate or a comma\n"
"                          list (default: default)\n"
"  --public names          ledger: datasets the user declares public (comma\n"
"                          list): raw marks alone do not make them NOT\n"
"                          private\n"
"  --q q                   sgm: sampling probability, 0 <= q <= 1\n"
"  --queries n             pate-*: queries answered\n"
"  --scale b               laplace: noise scale\n"
"  --sensitivity s         gaussian: L2, laplace: L1 sensitivity (default 1)\n"
"  --sigma s               sgm: noise multiplier; gaussian, pate-gnmax:\n"
"                          noise standard deviation\n"
"  --solve p               sgm: sigma, steps or q; gaussian: sigma\n"
"  --steps n               sgm: steps (compositions)\n"
"  --store path            ledger: exit 1 unless every release of the\n"
"                          streams is charged to this budget store\n", fp);
	exit(status);
}

/* ---- option values ---- */

/* A finite value > 0 (and <= hi). */
static double
positive(const char *opt, const char *arg, double hi)
{
	double v = cli_double(opt, arg, 0, hi);

	if (!(v > 0))
		cli_usage_error("invalid %s '%s': must be greater than 0", opt,
		    arg);
	return v;
}

/* A noise scale, sensitivity or gamma: in [NOISE_MIN, NOISE_MAX], so
 * that their ratios stay inside the accountant's range (issue 15: --sigma
 * 1e-300 or 1e300 was an internal error, 70). */
#define NOISE_MIN 1e-50
#define NOISE_MAX 1e50

static double
noise_arg(const char *opt, const char *arg)
{
	return cli_double(opt, arg, NOISE_MIN, NOISE_MAX);
}

/* An integer >= 1. */
static uint64_t
count_arg(const char *opt, const char *arg)
{
	uint64_t v = cli_u64(opt, arg);

	if (v == 0)
		cli_usage_error("invalid %s '%s': must be at least 1", opt, arg);
	return v;
}

/* Apply one event option to e. */
static void
event_option(struct account_event *e, int ch, unsigned bit, const char *name,
    const char *arg)
{
	if (!account_kind_allows(e->kind, bit))
		cli_usage_error("option %s does not apply to '%s'", name,
		    account_kind_name(e->kind));
	if (e->given & bit)
		cli_usage_error("option %s given twice for '%s'", name,
		    account_kind_name(e->kind));
	e->given |= bit;
	switch (ch) {
	case 'e':
		e->target = positive(name, arg, INFINITY);
		break;
	case L_ANALYTIC:
		e->analytic = 1;
		break;
	case L_COUNT:
		e->count = count_arg(name, arg);
		break;
	case L_PLD:
		e->pld = 1;
		break;
	case L_COUNTS:
		e->counts_label = arg;
		break;
	case L_DDEP:
		e->data_dependent = 1;
		break;
	case L_GAMMA:
		e->gamma = noise_arg(name, arg);
		break;
	case L_Q:
		e->q = cli_double(name, arg, 0, 1);
		break;
	case L_QUERIES:
		e->queries = count_arg(name, arg);
		break;
	case L_SCALE:
		e->scale = noise_arg(name, arg);
		break;
	case L_SENS:
		e->sens = noise_arg(name, arg);
		break;
	case L_SIGMA:
		e->sigma = noise_arg(name, arg);
		break;
	case L_SOLVE:
		e->solve = ACCOUNT_SOLVE_SIGMA + cli_choice(name, arg, solves);
		break;
	case L_STEPS:
		e->steps = count_arg(name, arg);
		break;
	default:
		cli_die(EX_SOFTWARE, "event option %d not handled", ch);
	}
}

static void
rdp_fail(int rc, const struct account_result *res)
{
	if (res->failed == NULL)
		cli_die(EX_OSERR, "out of memory");
	cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "%s: %s",
	    res->failed, rdp_strerror(rc));
}

/* --solve found nothing in its range: the documented "no" (exit 1). */
static void
no_root(const struct account_event *e)
{
	if (e->kind == ACCOUNT_GAUSSIAN)
		cli_die(1, "no noise standard deviation in the searched range "
		    "gives epsilon %g", e->target);
	if (e->solve == ACCOUNT_SOLVE_SIGMA)
		cli_die(1, "no noise multiplier up to 1e6 gives epsilon %g",
		    e->target);
	cli_die(1, "no sampling probability down to 1e-12 gives epsilon %g",
	    e->target);
}

static void
read_counts(struct account_event *e)
{
	const char *label;
	FILE *fp = cli_open_in(e->counts_label, &label);
	char err[200];
	uint64_t line;
	int rc = account_read_counts(fp, e, &line, err, sizeof err);

	if (rc == PV_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc == PV_E_IO)
		cli_die(EX_IOERR, "%s: read error: %s", label, strerror(errno));
	if (rc != 0 && line > 0)
		cli_die(EX_DATAERR, "%s:%llu: %s", label,
		    (unsigned long long)line, err);
	if (rc != 0)
		cli_die(EX_DATAERR, "%s: %s", label, err);
	cli_close_in(fp);
}

static double
cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return NAN;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
run_events(struct opts *o)
{
	struct account_result res = { 0 };
	const char *arg = o->orders_arg ? o->orders_arg : "default", *why;
	double t0;
	int rc;

	o->orders_name = arg;
	if (strcmp(arg, "default") && strcmp(arg, "opacus") &&
	    strcmp(arg, "pate"))
		o->orders_name = "list";
	switch (account_orders(arg, &res.orders, &res.norders, &why)) {
	case 0:
		break;
	case PV_E_NOMEM:
		cli_die(EX_OSERR, "out of memory");
	case PV_E_LIMIT:
		cli_usage_error("invalid --orders: more than %d orders",
		    RDP_MAX_ORDERS);
	case PV_E_FORMAT:
		cli_usage_error("invalid --orders '%s': expected default, "
		    "opacus, pate or a comma-separated list of numbers", arg);
	default:
		if (why == NULL)
			cli_usage_error("invalid --orders '%s': out of range",
			    arg);
		cli_usage_error("invalid --orders '%s': %s (orders are > 1 and "
		    "at most %g)", arg, why, RDP_MAX_ALPHA);
	}
	for (size_t i = 0; i < o->nev; i++)
		if (o->ev[i].counts_label != NULL)
			read_counts(&o->ev[i]);
	t0 = cpu_seconds();
	for (uint64_t r = 0; r < o->repeat; r++) {
		/* Only a solve's own search says "no" (exit 1); sgm --solve
		 * steps failing is an internal error, as any other step. */
		if ((rc = account_compute(o->ev, o->nev, o->c.delta, o->conv,
		    &res)) == PV_E_NOROOT && res.failed != NULL &&
		    strstr(res.failed, "--solve") != NULL &&
		    (o->ev[0].kind == ACCOUNT_GAUSSIAN ||
		    o->ev[0].solve != ACCOUNT_SOLVE_STEPS))
			no_root(&o->ev[0]);
		if (rc != 0)
			rdp_fail(rc, &res);
	}
	if (o->repeat > 1)
		fprintf(stderr, "%s: %llu computations: %.6f ms CPU each\n",
		    cli_prog(), (unsigned long long)o->repeat,
		    (cpu_seconds() - t0) * 1e3 / (double)o->repeat);
	if (res.data_dependent)
		cli_warn("%s", VERDICT_DD_NOTE);
	acct_report_events(stdout, &(struct acct_report){ .format = o->format,
	    .verbose = o->c.verbose, .delta = o->c.delta, .conv = o->conv,
	    .ev = o->ev, .nev = o->nev, .orders_name = o->orders_name }, &res);
	for (size_t i = 0; i < o->nev; i++)
		account_event_free(&o->ev[i]);
	account_result_free(&res);
	cli_out_commit();
	return 0;
}

/* ---- the ledger ---- */

static int
run_ledger(struct opts *o)
{
	size_t nf = o->nfiles ? o->nfiles : 1, nd;
	FILE **fps = cli_reallocarray(NULL, nf, sizeof *fps);
	const char **labels = cli_reallocarray(NULL, nf, sizeof *labels);
	struct ledger l = { 0 };
	struct verdict_report *d;
	char err[600];
	const char *msg;
	int status = 0, rc;

	o->vp = (struct verdict_params){ .delta = o->c.delta, .conv = o->conv,
	    .have_budget = o->have_budget, .budget = o->budget,
	    .allow_seeded = o->allow_seeded, .public = o->public,
	    .npublic = o->npublic };
	if ((msg = verdict_check_params(&o->vp)) != NULL)
		cli_usage_error("%s", msg);
	for (size_t i = 0; i < nf; i++)
		fps[i] = cli_open_in(o->nfiles ? o->files[i] : NULL, &labels[i]);
	for (size_t i = 0; i < nf; i++) {
		struct ts_reader *r = cli_reader(fps[i], labels[i]);
		struct tensor hdr = { 0 };

		/* The ledger is complete only at the end of the stream, and
		 * reading to the end checks every byte; rows are skipped. */
		while ((rc = ts_read_next(r, &hdr)) == 1)
			tensor_free(&hdr);
		if (rc < 0)
			cli_rdie(r, rc);
		if (ledger_parse(ts_reader_meta(r), &l, err, sizeof err) != 0)
			cli_die(EX_DATAERR, "%s: %s", labels[i], err);
		ts_reader_close(r);
		cli_close_in(fps[i]);
	}
	if ((rc = verdict_run(&o->vp, &l, &d, &nd)) != 0)
		cli_die(EX_OSERR, "%s", pv_strerror(rc));
	acct_report_ledger(stdout, &(struct acct_report){ .format = o->format,
	    .verbose = o->c.verbose, .delta = o->c.delta, .conv = o->conv,
	    .vp = &o->vp }, &l, d, nd);
	cli_out_commit();
	/* No ledger at all: nothing says the data is private. */
	if (o->have_budget && nd == 0) {
		fprintf(stderr, "%s: no privacy ledger: the streams carry no "
		    "dp.* entries, so nothing says they are private\n",
		    cli_prog());
		status = 1;
	}
	if (o->store != NULL && storecli_check(o->store, &l, o->c.verbose) > 0)
		status = 1;
	if (o->have_budget)
		for (size_t i = 0; i < nd; i++)
			if (d[i].fails) {
				fprintf(stderr, "%s: dataset %s: %s\n", cli_prog(),
				    d[i].name, d[i].why);
				status = 1;
			}
	free(d);
	ledger_free(&l);
	free(fps);
	free(labels);
	return status;
}

/* ---- the budget store ---- */

static __attribute__((noreturn)) void
store_die(int rc, const char *path, const char *err)
{
	cli_die(cli_pv_exit(rc), "%s: %s", path, err);
}

static void
status_text(const struct store_status *st)
{
	for (size_t i = 0; i < st->n; i++) {
		const struct store_dataset *d = &st->d[i];
		printf("dataset %s: budget epsilon %.6g at delta %.3g, spent "
		    "%.6g, remaining %.6g, %zu release%s\n", d->name, d->budget,
		    d->delta, d->spent, d->budget - d->spent, d->nrel,
		    d->nrel == 1 ? "" : "s");
		for (size_t j = 0; j < d->nrel; j++) {
			const struct store_release *r = &d->rel[j];
			printf("  %s  %s  %s  epsilon %.6g  %s\n", r->id,
			    r->tool, r->time, r->epsilon, r->args);
		}
	}
}

static void
status_tsv(const struct store_status *st)
{
	for (size_t i = 0; i < st->n; i++) {
		const struct store_dataset *d = &st->d[i];
		printf("dataset\t%s\t%.17g\t%.17g\t%.17g\t%.17g\t%zu\n",
		    d->name, d->budget, d->delta, d->spent,
		    d->budget - d->spent, d->nrel);
		for (size_t j = 0; j < d->nrel; j++) {
			const struct store_release *r = &d->rel[j];
			printf("release\t%s\t%s\t", d->name, r->id);
			emit_tstr(stdout, r->tool);
			printf("\t%s\t%.17g\t", r->time, r->epsilon);
			emit_tstr(stdout, r->args);
			putchar('\n');
		}
	}
}

static void
status_json(const struct store_status *st)
{
	fputs("{\"datasets\":[", stdout);
	for (size_t i = 0; i < st->n; i++) {
		const struct store_dataset *d = &st->d[i];
		int f = 1;

		fputs(i ? ",{" : "{", stdout);
		emit_jkey(stdout, &f, "dataset");
		emit_jstr(stdout, d->name);
		emit_jnum(stdout, &f, "budget", d->budget);
		emit_jnum(stdout, &f, "delta", d->delta);
		emit_jnum(stdout, &f, "spent", d->spent);
		emit_jnum(stdout, &f, "remaining", d->budget - d->spent);
		emit_jkey(stdout, &f, "releases");
		putchar('[');
		for (size_t j = 0; j < d->nrel; j++) {
			const struct store_release *r = &d->rel[j];
			int g = 1;
			fputs(j ? ",{" : "{", stdout);
			emit_jkey(stdout, &g, "id");
			emit_jstr(stdout, r->id);
			emit_jkey(stdout, &g, "tool");
			emit_jstr(stdout, r->tool);
			emit_jkey(stdout, &g, "mechanism");
			emit_jstr(stdout, r->mechanism);
			emit_jkey(stdout, &g, "time");
			emit_jstr(stdout, r->time);
			emit_jnum(stdout, &g, "epsilon", r->epsilon);
			emit_jkey(stdout, &g, "args");
			emit_jstr(stdout, r->args);
			putchar('}');
		}
		fputs("]}", stdout);
	}
	fputs("]}\n", stdout);
}

/* store solve's plan: the event name and its options, as given. */
struct plan_opts {
	const char *q, *batch, *records, *steps, *epochs, *sigma, *sens,
	    *count;
};

/* The plan of store solve from the event name and its options. */
static void
parse_plan(const char *name, const struct plan_opts *po, struct store_plan *p)
{
	memset(p, 0, sizeof *p);
	if (strcmp(name, "gaussian") == 0) {
		if (po->q || po->batch || po->records || po->steps ||
		    po->epochs || po->sigma)
			cli_usage_error("store solve gaussian takes "
			    "--sensitivity and --count only");
		p->kind = STORE_PLAN_GAUSS_SIGMA;
		p->sens = po->sens ? noise_arg("--sensitivity", po->sens) : 1;
		p->count = po->count ? count_arg("--count", po->count) : 1;
		return;
	}
	if (strcmp(name, "sgm") != 0)
		cli_usage_error("unknown plan '%s' (sgm or gaussian)", name);
	if (po->sens || po->count)
		cli_usage_error("--sensitivity and --count apply to the "
		    "gaussian plan");
	if ((po->q != NULL) == (po->batch != NULL || po->records != NULL) ||
	    (po->batch != NULL) != (po->records != NULL))
		cli_usage_error("store solve sgm needs --q, or --batch and "
		    "--records");
	if (po->q != NULL) {
		p->q = cli_double("--q", po->q, 0, 1);
	} else {
		uint64_t b = count_arg("--batch", po->batch);
		uint64_t n = count_arg("--records", po->records);
		/* As dpsgd-train: q from the declared size. */
		p->q = b >= n ? 1 : (double)b / (double)n;
	}
	if ((po->steps != NULL) + (po->epochs != NULL) + (po->sigma != NULL)
	    != 1)
		cli_usage_error("store solve sgm needs one of --steps, --epochs "
		    "(the noise multiplier is solved) and --sigma (the steps "
		    "are solved)");
	if (po->sigma != NULL) {
		p->kind = STORE_PLAN_SGM_STEPS;
		p->sigma = noise_arg("--sigma", po->sigma);
		return;
	}
	p->kind = STORE_PLAN_SGM_SIGMA;
	if (po->steps != NULL) {
		p->steps = count_arg("--steps", po->steps);
	} else {
		/* As dpsgd-train: steps = round(epochs / q), at least 1. */
		double e = cli_double("--epochs", po->epochs, 0, 1e12);
		if (!(p->q > 0))
			cli_usage_error("--epochs needs q > 0");
		e = round(e / p->q);
		if (e > (double)STORE_PLAN_MAX_STEPS)
			cli_usage_error("--epochs %s: more than %llu steps",
			    po->epochs, STORE_PLAN_MAX_STEPS);
		p->steps = e < 1 ? 1 : (uint64_t)e;
	}
}

/* rdp-account store init|set|status|solve ... (argv[0] is "store"). */
static int
run_store(int argc, char *argv[])
{
	static const struct option sopts[] = {
		OPTS_COMMON_LONG,
		{ "format", required_argument, NULL, L_FORMAT },
		{ "q", required_argument, NULL, L_Q },
		{ "batch", required_argument, NULL, L_BATCH },
		{ "records", required_argument, NULL, L_RECORDS },
		{ "steps", required_argument, NULL, L_STEPS },
		{ "epochs", required_argument, NULL, L_EPOCHS },
		{ "sigma", required_argument, NULL, L_SIGMA },
		{ "sensitivity", required_argument, NULL, L_SENS },
		{ "count", required_argument, NULL, L_COUNT },
		{ NULL, 0, NULL, 0 }
	};
	struct opts_common c = OPTS_COMMON_INIT;
	struct plan_opts po = { 0 };
	struct store_plan plan;
	struct store *s;
	struct store_status st;
	const char *cmd, *path, *opt_path = NULL, *operand = NULL;
	char err[512];
	int ch, format = 0, rc, solve, nops;

	if (argc < 2)
		cli_usage_error("store needs a command: init, set, status or "
		    "solve");
	cmd = argv[1];
	if (strcmp(cmd, "init") != 0 && strcmp(cmd, "set") != 0 &&
	    strcmp(cmd, "status") != 0 && strcmp(cmd, "solve") != 0)
		cli_usage_error("unknown store command '%s' (init, set, status "
		    "or solve)", cmd);
	solve = strcmp(cmd, "solve") == 0;
	argc--;
	argv++;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "d:e:hqVv", sopts, NULL)) != -1) {
		const char **slot = NULL;

		switch (ch) {
		case OPTS_BUDGET_STORE:
			if (optarg[0] == '\0')
				cli_usage_error("--budget-store: empty path");
			opt_path = optarg;
			continue;
		case L_FORMAT:
			format = cli_choice("--format", optarg, formats);
			continue;
		case L_Q: slot = &po.q; break;
		case L_BATCH: slot = &po.batch; break;
		case L_RECORDS: slot = &po.records; break;
		case L_STEPS: slot = &po.steps; break;
		case L_EPOCHS: slot = &po.epochs; break;
		case L_SIGMA: slot = &po.sigma; break;
		case L_SENS: slot = &po.sens; break;
		case L_COUNT: slot = &po.count; break;
		default:
			break;
		}
		if (slot != NULL) {
			if (!solve)
				cli_usage_error("plan options apply to 'store "
				    "solve' only");
			*slot = optarg;
			continue;
		}
		if (opts_common(&c, ch, optarg, usage))
			continue;
		usage(EX_USAGE);
	}
	/* Operands: the store's path (unless --budget-store or the
	 * environment names it), then solve's plan. */
	nops = argc - optind;
	if (nops > (solve ? 2 : 1) || (solve && nops == 0))
		cli_usage_error("store %s takes %s", cmd, solve ? "the store's "
		    "path (or --budget-store) and a plan: sgm or gaussian" :
		    "one store path");
	if (nops == (solve ? 2 : 1))
		operand = argv[optind];
	path = storecli_path(opt_path, operand);
	if (strcmp(cmd, "set") != 0 && (c.has_epsilon || c.has_delta ||
	    (!solve && c.dataset != NULL)))
		cli_usage_error("--dataset, --epsilon and --delta apply to "
		    "'store set' only (solve: --dataset)");
	if (strcmp(cmd, "status") != 0 && !solve && format != 0)
		cli_usage_error("--format applies to 'store status' and "
		    "'store solve' only");
	dpcli_store_env();
	if (solve) {
		if (c.dataset == NULL)
			cli_usage_error("store solve needs --dataset");
		parse_plan(argv[argc - 1], &po, &plan);
		storecli_solve(path, c.dataset, &plan, format);
		return 0;
	}
	if (strcmp(cmd, "init") == 0) {
		if ((rc = store_init(path, err, sizeof err)) != 0)
			cli_die(rc == PV_E_IO ? EX_CANTCREAT : cli_pv_exit(rc),
			    "%s", err);
		return 0;
	}
	if (strcmp(cmd, "set") == 0 && (c.dataset == NULL || !c.has_epsilon ||
	    !c.has_delta))
		cli_usage_error("store set needs --dataset, --epsilon and "
		    "--delta");
	if ((rc = store_open(path, strcmp(cmd, "status") == 0, &s, err,
	    sizeof err)) != 0)
		cli_die(rc == PV_E_IO ? EX_NOINPUT : cli_pv_exit(rc), "%s",
		    err);
	if (strcmp(cmd, "set") == 0) {
		rc = store_set(s, c.dataset, c.epsilon, c.delta, err,
		    sizeof err);
		store_close(s);
		/* PV_E_RANGE here: the delta of a dataset with releases. */
		if (rc == PV_E_RANGE)
			cli_die(EX_DATAERR, "%s: %s", path, err);
		if (rc != 0)
			store_die(rc, path, err);
		return 0;
	}
	rc = store_status(s, &st, err, sizeof err);
	store_close(s);
	if (rc != 0)
		store_die(rc, path, err);
	if (format == 0)
		status_text(&st);
	else if (format == 1)
		status_tsv(&st);
	else
		status_json(&st);
	store_status_free(&st);
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_die(EX_IOERR, "stdout: %s", strerror(errno));
	return 0;
}

/* ---- main ---- */

/* --public a,b,...: keep the list (repeatable); empty names are refused. */
static void
public_names(struct opts *o, const char *arg)
{
	if (!verdict_public_list_ok(arg))
		cli_usage_error("invalid --public '%s': a comma-separated list "
		    "of dataset names", arg);
	o->public = cli_reallocarray(o->public, o->npublic + 1,
	    sizeof *o->public);
	o->public[o->npublic++] = arg;
}

/* Where the command line is: the command seen, a '+' waiting for its
 * event, the event whose options come now. */
struct parse {
	int have_cmd, need_event;
	struct account_event *cur;
};

static void
operand(struct opts *o, struct parse *ps, const char *arg)
{
	int k;

	if (o->ledger) {
		o->files = cli_reallocarray(o->files, o->nfiles + 1,
		    sizeof *o->files);
		o->files[o->nfiles++] = arg;
		return;
	}
	if (!ps->have_cmd && strcmp(arg, "ledger") == 0) {
		o->ledger = ps->have_cmd = 1;
		return;
	}
	if (ps->have_cmd && !ps->need_event && strcmp(arg, "+") == 0) {
		ps->need_event = 1;
		return;
	}
	if (ps->have_cmd && !ps->need_event)
		cli_usage_error("unexpected operand '%s' (events are separated "
		    "by '+')", arg);
	if ((k = account_kind(arg)) < 0) {
		if (!ps->have_cmd && (strchr(arg, '.') || strchr(arg, '/')))
			cli_usage_error("unknown command or event '%s' (to read "
			    "the ledger of streams: rdp-account ledger --delta d "
			    "file ...)", arg);
		cli_usage_error("unknown %s '%s'", ps->have_cmd ? "event" :
		    "command or event", arg);
	}
	o->ev = cli_reallocarray(o->ev, o->nev + 1, sizeof *o->ev);
	ps->cur = &o->ev[o->nev++];
	account_event_init(ps->cur, k);
	ps->have_cmd = 1;
	ps->need_event = 0;
}

int
main(int argc, char *argv[])
{
	struct opts o = { .c = OPTS_COMMON_INIT, .repeat = 1 };
	struct parse ps = { 0 };
	int ch;

	cli_init(argv[0], argc, argv);
	if (argc > 1 && strcmp(argv[1], "store") == 0)
		return run_store(argc - 1, argv + 1);
	/* A leading '-' hands operands over in order (as value 1), so that
	 * options may come before, between and after the events. */
	while ((ch = getopt_long(argc, argv, "-d:e:hqVv", longopts, NULL)) !=
	    -1) {
		unsigned bit = 0;
		const char *name = NULL;

		for (size_t i = 0; i < sizeof evopts / sizeof evopts[0]; i++)
			if (evopts[i].ch == ch) {
				bit = evopts[i].bit;
				name = evopts[i].name;
			}
		if (bit != 0) {
			if (o.ledger || ps.cur == NULL || ps.need_event)
				cli_usage_error("option %s belongs to an event "
				    "and comes after its name", name);
			event_option(ps.cur, ch, bit, name, optarg);
			continue;
		}
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case 1:
			operand(&o, &ps, optarg);
			break;
		case L_ALLOW_SEEDED:
			o.allow_seeded = 1;
			break;
		case L_BUDGET:
			o.budget = cli_double("--budget", optarg, 0, INFINITY);
			o.have_budget = 1;
			break;
		case L_CONVERSION:
			o.conv = cli_choice("--conversion", optarg,
			    acct_conversions) ? RDP_CONV_CLASSIC :
			    RDP_CONV_IMPROVED;
			break;
		case L_FORMAT:
			o.format = cli_choice("--format", optarg, formats);
			break;
		case L_ORDERS:
			o.orders_arg = optarg;
			break;
		case L_PUBLIC:
			public_names(&o, optarg);
			break;
		case L_STORE:
			o.store = optarg;
			break;
		case L_REPEAT:
			o.repeat = (uint64_t)cli_ll("--repeat", optarg, 1,
			    (long long)MAX_REPEAT);
			break;
		default:
			usage(EX_USAGE);
		}
	}
	/* Operands after "--". */
	for (; optind < argc; optind++)
		operand(&o, &ps, argv[optind]);
	if (!ps.have_cmd)
		usage(EX_USAGE);
	if (ps.need_event)
		cli_usage_error("'+' must be followed by an event");
	if (!o.c.has_delta)
		cli_usage_error("--delta is required (privacy parameters have "
		    "no defaults)");
	if (o.ledger) {
		if (o.orders_arg != NULL)
			cli_usage_error("option --orders does not apply to "
			    "'ledger' (entries carry their orders)");
		if (o.repeat != 1)
			cli_usage_error("option --repeat does not apply to "
			    "'ledger'");
		ch = run_ledger(&o);
		free((void *)o.files);
		free((void *)o.public);
		return ch;
	}
	if (o.have_budget || o.allow_seeded || o.npublic || o.store)
		cli_usage_error("option %s applies to 'ledger' only",
		    o.have_budget ? "--budget" : o.allow_seeded ?
		    "--allow-seeded" : o.npublic ? "--public" : "--store");
	for (size_t i = 0; i < o.nev; i++) {
		char buf[200];
		const char *msg = account_check_event(&o.ev[i], o.nev, buf,
		    sizeof buf);
		if (msg != NULL)
			cli_usage_error("%s", msg);
	}
	{
		int rc = run_events(&o);
		free(o.ev);
		return rc;
	}
}
