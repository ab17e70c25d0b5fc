/* storecli.c: rdp-account's questions to a budget store (see storecli.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "emit.h"
#include "pverr.h"
#include "store.h"
#include "storecli.h"

const char *
storecli_path(const char *opt, const char *operand)
{
	const char *env;

	if (opt != NULL && operand != NULL)
		cli_usage_error("the store is named twice (--budget-store %s "
		    "and %s)", opt, operand);
	if (opt != NULL)
		return opt;
	if (operand != NULL)
		return operand;
	if ((env = getenv("PRIVADA_BUDGET_STORE")) != NULL && env[0] != '\0')
		return env;
	cli_usage_error("no budget store: give its path, --budget-store path "
	    "or PRIVADA_BUDGET_STORE");
}

static struct store *
open_ro(const char *path)
{
	struct store *s;
	char err[512];
	int rc;

	if ((rc = store_open(path, 1, &s, err, sizeof err)) != 0)
		cli_die(rc == PV_E_IO ? EX_NOINPUT : cli_pv_exit(rc), "%s",
		    err);
	return s;
}

/* Whether the charged entry a is the stream's release b. */
static int
same_curve(const struct ledger_entry *a, const struct ledger_entry *b)
{
	if (a->norders != b->norders || a->delta != b->delta ||
	    a->tv != b->tv || a->relation != b->relation)
		return 0;
	for (size_t i = 0; i < a->norders; i++)
		if (a->orders[i] != b->orders[i] || a->rdp[i] != b->rdp[i])
			return 0;
	return 1;
}

size_t
storecli_check(const char *path, const struct ledger *l, int verbose)
{
	struct store *s = open_ro(path);
	struct store_status st;
	struct ledger *dl;
	char err[512];
	size_t flagged = 0;
	int rc;

	if ((rc = store_status(s, &st, err, sizeof err)) != 0)
		cli_die(cli_pv_exit(rc), "%s: %s", path, err);
	/* Each dataset's charged releases, read once. */
	dl = cli_reallocarray(NULL, st.n ? st.n : 1, sizeof *dl);
	for (size_t i = 0; i < st.n; i++) {
		double b, d;
		if ((rc = store_ledger(s, st.d[i].name, &dl[i], &b, &d, err,
		    sizeof err)) != 0)
			cli_die(cli_pv_exit(rc), "%s: %s", path, err);
	}
	for (size_t k = 0; k < l->n; k++) {
		const struct ledger_entry *e = &l->e[k];
		const struct ledger_entry *c = NULL;
		const char *where = NULL;

		for (size_t i = 0; i < st.n && c == NULL; i++)
			for (size_t j = 0; j < dl[i].n; j++)
				if (strcmp(dl[i].e[j].id, e->id) == 0) {
					c = &dl[i].e[j];
					where = st.d[i].name;
					break;
				}
		if (c == NULL)
			fprintf(stderr, "%s: release %s (%s, dataset %s) is not "
			    "in the budget store %s\n", cli_prog(), e->id,
			    e->tool, e->dataset, path);
		else if (strcmp(where, e->dataset) != 0)
			fprintf(stderr, "%s: release %s (%s) is charged to "
			    "dataset %s in the budget store %s, the stream says "
			    "dataset %s\n", cli_prog(), e->id, e->tool, where,
			    path, e->dataset);
		else if (!same_curve(c, e))
			fprintf(stderr, "%s: release %s (%s, dataset %s) is "
			    "charged to the budget store %s with another RDP "
			    "curve\n", cli_prog(), e->id, e->tool, e->dataset,
			    path);
		else
			continue;
		flagged++;
	}
	if (verbose && flagged == 0)
		fprintf(stderr, "%s: budget store %s: all %zu release%s of the "
		    "streams are charged\n", cli_prog(), path, l->n,
		    l->n == 1 ? "" : "s");
	for (size_t i = 0; i < st.n; i++)
		ledger_free(&dl[i]);
	free(dl);
	store_status_free(&st);
	store_close(s);
	return flagged;
}

void
storecli_solve(const char *path, const char *dataset,
    const struct store_plan *p, int format)
{
	struct store *s = open_ro(path);
	struct store_plan_answer a;
	struct ledger l;
	const char *mech = p->kind == STORE_PLAN_GAUSS_SIGMA ? "gaussian" :
	    "subsampled_gaussian";
	double budget, delta, mult, epochs;
	char err[512];
	int rc, f = 1;

	if ((rc = store_ledger(s, dataset, &l, &budget, &delta, err,
	    sizeof err)) != 0)
		cli_die(cli_pv_exit(rc), "%s: %s", path, err);
	store_close(s);
	rc = store_plan_solve(&l, dataset, budget, delta, p, &a, err,
	    sizeof err);
	ledger_free(&l);
	if (rc == PV_E_NOROOT)
		cli_die(1, "%s: %s", path, err);
	if (rc != 0)
		cli_die(rc == PV_E_NOMEM ? EX_OSERR : EX_SOFTWARE, "%s: %s",
		    path, err);
	mult = p->kind == STORE_PLAN_GAUSS_SIGMA ? a.sigma / p->sens : a.sigma;
	epochs = p->kind == STORE_PLAN_GAUSS_SIGMA ? 0 : (double)a.steps * p->q;
	switch (format) {
	case 0:
		printf("dataset %s: budget epsilon %.6g at delta %.3g, spent "
		    "%.6g, remaining %.6g\n", dataset, budget, delta, a.before,
		    budget - a.before);
		if (p->kind == STORE_PLAN_GAUSS_SIGMA)
			printf("gaussian, L2 sensitivity %.17g, %llu release%s: "
			    "sigma %.17g (noise multiplier %.17g)\n", p->sens,
			    (unsigned long long)p->count, p->count == 1 ? "" :
			    "s", a.sigma, mult);
		else
			printf("subsampled_gaussian, q %.17g: sigma %.17g (noise "
			    "multiplier), %llu steps (%.17g epochs)\n", p->q,
			    a.sigma, (unsigned long long)a.steps, epochs);
		printf("this release alone: epsilon %.6g; the total: %.17g of "
		    "%.17g\n", a.alone, a.total, budget);
		break;
	case 1:
		printf("dataset\tbudget\tdelta\tspent\tmechanism\tq\tsigma\t"
		    "noise_multiplier\tsteps\tepochs\talone\ttotal\n");
		printf("%s\t%.17g\t%.17g\t%.17g\t%s\t%.17g\t%.17g\t%.17g\t%llu\t"
		    "%.17g\t%.17g\t%.17g\n", dataset, budget, delta, a.before,
		    mech, p->q, a.sigma, mult, (unsigned long long)a.steps,
		    epochs, a.alone, a.total);
		break;
	default:
		putchar('{');
		emit_jkey(stdout, &f, "dataset");
		emit_jstr(stdout, dataset);
		emit_jnum(stdout, &f, "budget", budget);
		emit_jnum(stdout, &f, "delta", delta);
		emit_jnum(stdout, &f, "spent", a.before);
		emit_jkey(stdout, &f, "mechanism");
		emit_jstr(stdout, mech);
		emit_jnum(stdout, &f, "q", p->q);
		emit_jnum(stdout, &f, "sigma", a.sigma);
		emit_jnum(stdout, &f, "noise_multiplier", mult);
		emit_jnum(stdout, &f, "steps", (double)a.steps);
		emit_jnum(stdout, &f, "epochs", epochs);
		emit_jnum(stdout, &f, "alone", a.alone);
		emit_jnum(stdout, &f, "total", a.total);
		fputs("}\n", stdout);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_die(EX_IOERR, "stdout: %s", strerror(errno));
}
