/* norm.c: dpsgd-train --normalize dp, the DP standardisation of the rows
 * (dpsgd-train.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dpcli.h"
#include "dpnorm.h"
#include "dpsgd-train.h"
#include "ledger.h"
#include "nn.h"
#include "xycli.h"

/* --normalize dp:SIGMA[:C]: the joint noise multiplier of the DP
 * statistics and the rows' clip bound (default 1). */
void
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

/* --normalize: its combinations. */
void
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
void
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
void
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
