/* dpcli.c: the common steps of DP tools (see dpcli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "pverr.h"
#include "store.h"
#include "noise.h"

uint64_t
dpcli_seed_arg(const char *arg)
{
	return cli_u64("--seed", arg);
}

struct rng *
dpcli_rng_quiet(const char *seed_opt, const char *work_item)
{
	struct rng *r = NULL;
	int rc = seed_opt != NULL ? rng_new_seeded(&r,
	    dpcli_seed_arg(seed_opt), work_item) : rng_new(&r);

	if (rc == RNG_E_NOMEM)
		cli_die(EX_OSERR, "out of memory");
	if (rc != 0)
		cli_die(EX_OSERR, "no secure randomness: %s", rng_strerror(rc));
	return r;
}

struct rng *
dpcli_rng_audit(const char *seed_opt, const char *work_item, uint64_t rep,
    struct rng *rng)
{
	char item[64];

	if (seed_opt == NULL)
		return rng;
	snprintf(item, sizeof item, "%s/audit/%llu", work_item,
	    (unsigned long long)rep);
	return dpcli_rng_quiet(seed_opt, item);
}

struct rng *
dpcli_rng(const char *seed_opt, const char *work_item)
{
	if (seed_opt != NULL)
		/* Not silenced by --quiet: the output is not private. */
		fprintf(stderr, "%s: warning: --seed %s: the noise is "
		    "reproducible and this output is NOT private (the ledger "
		    "marks it seeded)\n", cli_prog(), seed_opt);
	return dpcli_rng_quiet(seed_opt, work_item);
}

/* The dataset of --dataset NAME --assume-raw: the user declares that the
 * main input's rows, of unknown provenance, are raw records of it, one
 * per row.  Empty when not declared.  One per process, like the program
 * name of cli.c: a tool protects one main input. */
static char assumed[LEDGER_MAX_NAME + 1];

#define UNKNOWN_HINT "imported by tns from-csv or from-npy, which carry no " \
	"ledger, its rows could be anything (a model fitted without privacy, " \
	"the output of earlier releases); if they are raw records of one " \
	"dataset, one record a row, declare it with --dataset NAME " \
	"--assume-raw (covest, gmm-fit, dpsgd-train), or import raw data " \
	"with featurize --dataset NAME"

void
dpcli_assume_raw(const char *dataset)
{
	const char *bad;

	if (dataset == NULL)
		cli_usage_error("--assume-raw needs --dataset NAME: the dataset "
		    "whose raw records the rows are");
	if ((bad = ledger_check_dataset(dataset)) != NULL)
		cli_usage_error("invalid --dataset '%s': %s", dataset, bad);
	snprintf(assumed, sizeof assumed, "%s", dataset);
}

/* The first input of unknown provenance that no declaration covers (a
 * side input, or a main input under another name), for the refusal at
 * release time: a run without a release may read such inputs, its
 * output keeps the mark. */
static char undeclared[256];

static void
note_unknown(const struct ts_meta *m, const char *label, int declared)
{
	if (ts_meta_get(m, LEDGER_PROVENANCE_KEY) != NULL && !declared &&
	    undeclared[0] == '\0')
		snprintf(undeclared, sizeof undeclared, "%s", label);
}

const char *
dpcli_dataset(const struct ts_meta *in, const char *name, const char *label)
{
	const char *found = NULL, *bad;
	int n = 0, unknown = ts_meta_get(in, LEDGER_PROVENANCE_KEY) != NULL;

	if (name != NULL) {
		if ((bad = ledger_check_dataset(name)) != NULL)
			cli_usage_error("invalid --dataset '%s': %s", name, bad);
		if (strcmp(name, assumed) == 0 && !unknown)
			cli_die(EX_DATAERR, "%s: --assume-raw: the input is not "
			    "of unknown provenance (it has no %s key), so there "
			    "is nothing to declare: drop --assume-raw", label,
			    LEDGER_PROVENANCE_KEY);
		note_unknown(in, label, strcmp(name, assumed) == 0);
		return name;
	}
	note_unknown(in, label, 0);
	for (size_t i = 0; i < in->n; i++)
		if (strncmp(in->kv[i].key, "dp.raw.", 7) == 0) {
			found = in->kv[i].key + 7;
			n++;
		}
	if (n == 0 && (found = ts_meta_get(in, "data.name")) != NULL &&
	    ledger_check_dataset(found) == NULL)
		n = 1;
	if (n == 1)
		return found;
	if (unknown)
		cli_die(EX_DATAERR, "%s: of unknown provenance (%s): %s", label,
		    LEDGER_PROVENANCE_KEY, UNKNOWN_HINT);
	cli_die(EX_DATAERR, "%s: %s: name the protected dataset with --dataset",
	    label, n == 0 ? "the input names no dataset (no dp.raw.* or "
	    "data.name key)" : "the input derives from several datasets");
}

void
dpcli_entry(struct ledger_entry *e, struct rng *rng, const char *dataset,
    const char *mechanism)
{
	unsigned char id[16];

	memset(e, 0, sizeof *e);
	/* The id comes from the operating system even when the noise is
	 * seeded: two seeded releases are two releases, and an accountant
	 * tells releases apart by id alone (tensor-stream.md 10.1, rule 4). */
	if (rng_entropy(id, sizeof id) != 0)
		cli_die(EX_OSERR, "no secure randomness for the release id: %s",
		    strerror(errno));
	ledger_format_id(e->id, id);
	snprintf(e->dataset, sizeof e->dataset, "%s", dataset);
	snprintf(e->mechanism, sizeof e->mechanism, "%s", mechanism);
	snprintf(e->tool, sizeof e->tool, "%s", cli_prog());
	e->relation = LEDGER_ADD_REMOVE;
	e->seeded = rng_is_seeded(rng);
	e->assumed_raw = assumed[0] != '\0' && strcmp(dataset, assumed) == 0;
	e->epsilon = -1;
}

static const char *budget_store;

void
dpcli_budget_store(const char *path)
{
	if (path[0] == '\0')
		cli_usage_error("--budget-store: empty path");
	budget_store = path;
}

void
dpcli_store_env(void)
{
	const char *fs = getenv("PRIVADA_STORE_FSTYPE");

	if (fs != NULL && fs[0] != '\0' && store_assume_fstype(fs) != 0)
		cli_usage_error("PRIVADA_STORE_FSTYPE: unknown filesystem "
		    "'%s' (local, nfs, cifs, smb2, 9p, fuse, lustre, ...)", fs);
}

static double target_delta = -1;

void
dpcli_target_delta(double delta)
{
	target_delta = delta;
}

/* Refuse a run whose --delta is not the store's delta for the dataset
 * (a dataset without a budget is store_charge's refusal, exit 78). */
static void
check_delta(struct store *s, const char *path, const char *dataset)
{
	struct ledger l;
	double budget, delta;
	char err[512];
	int rc;

	if (target_delta < 0)
		return;
	rc = store_ledger(s, dataset, &l, &budget, &delta, err, sizeof err);
	ledger_free(&l);
	if (rc == PV_E_NOBUDGET)
		return;
	if (rc != 0) {
		store_close(s);
		cli_die(cli_pv_exit(rc), "budget store %s: %s: nothing was "
		    "released", path, err);
	}
	if (delta != target_delta) {
		store_close(s);
		cli_die(EX_DATAERR, "budget store %s: dataset %s is accounted "
		    "at delta %g, this run's --delta is %g: refused, nothing "
		    "charged, nothing was released (run with --delta %g)", path,
		    dataset, delta, target_delta, delta);
	}
}

/* Charge e to the budget store, if any; exit when it refuses. */
static void
charge(const struct ledger_entry *e)
{
	const char *path = budget_store;
	char *args;
	struct store *s;
	char err[512];
	double spent;
	int rc;

	if (path == NULL && ((path = getenv("PRIVADA_BUDGET_STORE")) == NULL ||
	    path[0] == '\0'))
		return;
	args = cli_args_text();
	dpcli_store_env();
	if ((rc = store_open(path, 0, &s, err, sizeof err)) != 0)
		cli_die(cli_pv_exit(rc), "budget store %s: %s: nothing was "
		    "released", path, err);
	check_delta(s, path, e->dataset);
	rc = store_charge(s, e, ts_utf8_valid(args, strlen(args)) ? args :
	    "(arguments are not UTF-8)", &spent, err, sizeof err);
	store_close(s);
	free(args);
	if (rc != 0)
		cli_die(cli_pv_exit(rc), "budget store %s: %s: nothing was "
		    "released", path, err);
}

void
dpcli_release(struct ts_meta *out, const struct ledger_entry *e)
{
	char key[16 + LEDGER_MAX_NAME], err[256];
	const char *mark;

	/* No release from inputs of unknown provenance, but for the main
	 * input the user declared (dpcli_dataset): that declaration, now
	 * in the entry, replaces the mark. */
	if (ts_meta_get(out, LEDGER_PROVENANCE_KEY) != NULL) {
		if (undeclared[0] != '\0' || assumed[0] == '\0')
			cli_die(EX_DATAERR, "%s: of unknown provenance (%s), so "
			    "nothing was released: %s", undeclared[0] ?
			    undeclared : "an input", LEDGER_PROVENANCE_KEY,
			    UNKNOWN_HINT);
		ts_meta_del(out, LEDGER_PROVENANCE_KEY);
	}
	charge(e);
	if (ledger_put(out, e, err, sizeof err) != 0)
		cli_die(EX_SOFTWARE, "ledger: %s", err);
	snprintf(key, sizeof key, "dp.raw.%s", e->dataset);
	mark = ts_meta_get(out, key);
	if (mark == NULL)
		return;
	if (strcmp(mark, "row-local") == 0) {
		ts_meta_del(out, key);
		return;
	}
	cli_warn("the input rows depend on aggregates of dataset %s computed "
	    "without privacy (dp.raw.%s = %s): this release is NOT private "
	    "for %s, and the ledger keeps saying so", e->dataset, e->dataset,
	    mark, e->dataset);
}

void
dpcli_inherit_side(struct ts_meta *out, const struct ts_meta *src,
    const char *label)
{
	struct ts_meta tmp = { 0 };
	char err[256];

	/* Its partition counts as any input's: a model trained on another
	 * part, or without privacy on the whole dataset, ties the output to
	 * records outside the output's part. */
	cli_inherit_split(out, src, label);
	note_unknown(src, label, 0);
	for (size_t i = 0; i < src->n; i++) {
		const char *k = src->kv[i].key;
		if (strncmp(k, "dp.raw.", 7) == 0) {
			if (ledger_mark_raw(out, k + 7, LEDGER_AGGREGATE, err,
			    sizeof err) != 0)
				cli_die(EX_DATAERR, "%s: %s", label, err);
		} else if (strncmp(k, "dp.", 3) == 0) {
			cli_meta_set(&tmp, k, src->kv[i].val);
		}
	}
	cli_inherit(out, &tmp, label);
	ts_meta_free(&tmp);
}

void
dpcli_aggregate_others(struct ts_meta *out, const char *dataset,
    const char *label)
{
	char err[256];

	for (size_t i = 0; i < out->n; i++) {
		const char *k = out->kv[i].key;
		if (strncmp(k, "dp.raw.", 7) == 0 && strcmp(k + 7, dataset) != 0
		    && ledger_mark_raw(out, k + 7, LEDGER_AGGREGATE, err,
		    sizeof err) != 0)
			cli_die(EX_DATAERR, "%s: %s", label, err);
	}
}

void
dpcli_param(struct ledger_entry *e, const char *key, double v)
{
	if (ts_meta_setf(&e->params, key, "%.17g", v) != 0)
		cli_die(EX_OSERR, "out of memory");
}

void
dpcli_not_private(struct ts_meta *out, const char *dataset, const char *label)
{
	char err[256];

	if (ledger_mark_raw(out, dataset, LEDGER_AGGREGATE, err, sizeof err)
	    != 0)
		cli_die(EX_DATAERR, "%s: %s", label, err);
}

void
dpcli_audit_mark(struct ts_meta *out, uint64_t n)
{
	if (n > 0 && ts_meta_setf(out, "dp.audit", "%llu",
	    (unsigned long long)n) != 0)
		cli_die(EX_OSERR, "out of memory");
}

const char *
dpcli_aggregate_dataset(const struct ts_meta *m, int *n)
{
	const char *found = NULL;

	*n = 0;
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "dp.raw.", 7) == 0 &&
		    strcmp(m->kv[i].val, "aggregate") == 0) {
			found = m->kv[i].key + 7;
			(*n)++;
		}
	return *n == 1 ? found : NULL;
}

void
dpcli_carry(struct ts_meta *out, const struct ts_meta *in,
    const char *skip_prefix, const char *drop, const char *label)
{
	struct ts_meta tmp = { 0 };

	note_unknown(in, label, 0);
	for (size_t i = 0; i < in->n; i++) {
		const char *k = in->kv[i].key;
		if (strncmp(k, "split.", 6) == 0 || (skip_prefix != NULL &&
		    strncmp(k, skip_prefix, strlen(skip_prefix)) == 0) ||
		    (drop != NULL && strcmp(k, drop) == 0))
			continue;
		cli_meta_set(&tmp, k, in->kv[i].val);
	}
	cli_inherit(out, &tmp, label);
	ts_meta_free(&tmp);
}

void
dpcli_noise_die(int rc)
{
	cli_die(rc == NOISE_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "noise: %s: "
	    "nothing was released", noise_strerror(rc));
}

double
dpcli_delta_arg(const char *opt, const char *arg)
{
	double d = cli_double(opt, arg, 0, 1);

	if (!(d > 0 && d < 1))
		cli_usage_error("invalid %s '%s': must lie strictly between 0 "
		    "and 1", opt, arg);
	return d;
}

double
dpcli_epsilon_arg(const char *opt, const char *arg, double max)
{
	double e = cli_double(opt, arg, 0, max);

	if (!(e > 0))
		cli_usage_error("invalid %s '%s': must be positive", opt, arg);
	return e;
}
