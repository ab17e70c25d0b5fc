/*
 * verdict.h: the judgement of a privacy ledger, dataset by dataset, that
 * rdp-account ledger prints and --budget enforces: private, carrying a
 * data-dependent bound, over budget, without an epsilon, NOT private
 * (raw-derived or seeded), of unknown provenance, or declared public.
 *
 * Ownership: verdict_run returns an array of reports the caller frees
 * (free(3)); a report's name points into the ledger (or is the static
 * VERDICT_UNKNOWN_NAME), so the ledger outlives the reports.  The
 * parameters are the caller's and only read.  Nothing here prints, exits
 * or reads the environment.  Errors: PV_E_NOMEM (lib/common/pverr.h).
 */
#ifndef PRIVADA_VERDICT_H
#define PRIVADA_VERDICT_H

#include <stddef.h>

#include "ledger.h"

/* In rising severity, but for VERDICT_PUBLIC: a dataset declared public
 * without releases, set last. */
enum verdict {
	VERDICT_PRIVATE, VERDICT_DATA_DEP, VERDICT_OVER_BUDGET,
	VERDICT_NO_EPSILON, VERDICT_NOT_PRIVATE, VERDICT_UNKNOWN,
	VERDICT_PUBLIC
};

/* The report line of streams of unknown provenance (not a dataset name:
 * those are [a-z0-9_]). */
#define VERDICT_UNKNOWN_NAME "(unknown)"

/* The note every data-dependent PATE bound carries. */
#define VERDICT_DD_NOTE "data-dependent bound: not differentially private " \
	"unless released with smooth sensitivity (Papernot et al. 2018, " \
	"section 4.3)"

#define VERDICT_WHY_MAX 600

struct verdict_params {
	double delta;			/* target delta, 0 < delta < 1 */
	int conv;			/* enum rdp_conv */
	int have_budget;		/* budget applies */
	double budget;			/* epsilon per dataset, >= 0 */
	int allow_seeded;		/* seeded releases do not fail */
	const char *const *public;	/* comma lists of dataset names the
					 * user declares public */
	size_t npublic;
};

/* One dataset's report. */
struct verdict_report {
	const char *name;
	struct ledger_total t;		/* epsilon inf when not finite */
	int ok;				/* ledger_total succeeded */
	char why[VERDICT_WHY_MAX];	/* the reasons, for people, "; "-joined */
	int verdict;			/* enum verdict */
	int fails;			/* fails --budget */
	int public;			/* declared public */
	int has_dd;			/* a sanitised data-dependent epsilon */
	double eps_dd, order_dd;
};

/* @return NULL if p is usable, else a message naming the bad field. */
const char *verdict_check_params(const struct verdict_params *p);

/* Judge every dataset of l (first-seen order), then, when some stream is
 * of unknown provenance, one VERDICT_UNKNOWN_NAME report.  *out (caller
 * frees) holds *n reports.  @return 0 or PV_E_NOMEM. */
int verdict_run(const struct verdict_params *p, const struct ledger *l,
    struct verdict_report **out, size_t *n);

/* Judge one dataset of l into d (d->name set to dataset). */
void verdict_judge(const struct verdict_params *p, const struct ledger *l,
    const char *dataset, struct verdict_report *d);

/* The report of streams of unknown provenance: never private. */
void verdict_unknown(struct verdict_report *d);

/* The name of a verdict (tsv and json: "private", "not_private", ...). */
const char *verdict_name(int v);

/* Whether list is a comma list of non-empty names ("a,b"; not "", ",a",
 * "a," or "a,,b"). */
int verdict_public_list_ok(const char *list);

/* Whether the --public lists of p name dataset. */
int verdict_declared_public(const struct verdict_params *p,
    const char *dataset);

/* A release's own epsilon at p's delta: the total of a ledger holding it
 * alone (so that its sampler's TV is charged at that epsilon too);
 * infinity when none; *order its RDP order (0 without one). */
double verdict_entry_epsilon(const struct verdict_params *p,
    const struct ledger_entry *e, double *order);

#endif
