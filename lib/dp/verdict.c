/* verdict.c: the per-dataset judgement of a privacy ledger (verdict.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pverr.h"
#include "rdp.h"
#include "verdict.h"

static const char *const verdict_names[] = {
	"private", "data_dependent", "over_budget", "no_epsilon", "not_private",
	"unknown_provenance", "public"
};

const char *
verdict_name(int v)
{
	if (v < 0 || (size_t)v >= sizeof verdict_names / sizeof *verdict_names)
		return "?";
	return verdict_names[v];
}

int
verdict_public_list_ok(const char *list)
{
	size_t len = strlen(list);

	return !(len == 0 || list[0] == ',' || list[len - 1] == ',' ||
	    strstr(list, ",,") != NULL);
}

const char *
verdict_check_params(const struct verdict_params *p)
{
	if (!(p->delta > 0 && p->delta < 1))
		return "delta must be greater than 0 and less than 1";
	if (p->conv != RDP_CONV_IMPROVED && p->conv != RDP_CONV_CLASSIC)
		return "unknown conversion";
	if (p->have_budget && !(p->budget >= 0))
		return "budget must be at least 0";
	if (p->npublic > 0 && p->public == NULL)
		return "public lists missing";
	for (size_t i = 0; i < p->npublic; i++)
		if (p->public[i] == NULL || !verdict_public_list_ok(p->public[i]))
			return "public: a comma-separated list of dataset names";
	return NULL;
}

static void
why_add(struct verdict_report *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
why_add(struct verdict_report *d, const char *fmt, ...)
{
	size_t len = strlen(d->why);
	va_list ap;

	if (len + 3 >= sizeof d->why)
		return;
	if (len > 0) {
		memcpy(d->why + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(d->why + len, sizeof d->why - len, fmt, ap);
	va_end(ap);
}

/* A parameter of an entry as a number, or NaN. */
static double
entry_num(const struct ledger_entry *e, const char *key)
{
	const char *v = ts_meta_get(&e->params, key);
	char *end;
	double x;

	if (v == NULL)
		return NAN;
	errno = 0;
	x = strtod(v, &end);
	return errno || *end != '\0' || end == v ? NAN : x;
}

/* e's RDP at order a, or NaN if its curve does not have it. */
static double
entry_rdp_at(const struct ledger_entry *e, double a)
{
	for (size_t j = 0; j < e->norders; j++)
		if (e->orders[j] == a)
			return e->rdp[j];
	return NAN;
}

/*
 * The data-dependent epsilon released with smooth sensitivity
 * (teacher-vote --data-dependent: entries of mechanism
 * pate_smooth_sensitivity with param.order, param.rdp_released and the
 * field sanitizes = the id of the PATE release they sanitise).  At that
 * order: the released value in place of the sanitised entry's curve,
 * plus every other entry's RDP (the releases' own costs included),
 * converted at the target delta.  Nothing when the entries disagree on
 * the order, some entry lacks the order, or some data-dependent entry is
 * not such a release.  @return 1 if *eps is set.
 */
static int
sanitised_dd(const struct verdict_params *p, const struct ledger *l,
    const char *ds, double delta, double *eps, double *order)
{
	double a = NAN, sum = 0, ord;
	int n = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct ledger_entry *e = &l->e[i];
		double x;

		if (strcmp(e->dataset, ds) != 0 ||
		    strcmp(e->mechanism, "pate_smooth_sensitivity") != 0)
			continue;
		x = entry_num(e, "order");
		if (!(x > 1) || isnan(entry_num(e, "rdp_released")) ||
		    ts_meta_get(&e->params, "sanitizes") == NULL ||
		    (n > 0 && x != a))
			return 0;
		a = x;
		n++;
	}
	if (n == 0)
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct ledger_entry *e = &l->e[i];
		double r = NAN;
		int gnss = 0;

		if (strcmp(e->dataset, ds) != 0)
			continue;
		for (size_t k = 0; k < l->n; k++) {
			const struct ledger_entry *g = &l->e[k];
			const char *id = ts_meta_get(&g->params, "sanitizes");
			if (strcmp(g->dataset, ds) == 0 && id != NULL &&
			    strcmp(g->mechanism, "pate_smooth_sensitivity") ==
			    0 && strcmp(id, e->id) == 0) {
				r = entry_num(g, "rdp_released");
				r = r > 0 ? r : 0;
				gnss = 1;
			}
		}
		if (!gnss) {
			if (e->data_dependent && strcmp(e->mechanism,
			    "pate_smooth_sensitivity") != 0)
				return 0;
			r = entry_rdp_at(e, a);
		}
		if (isnan(r))
			return 0;
		sum += r;
	}
	if (rdp_to_epsilon(&a, &sum, 1, delta, p->conv, eps, &ord) != 0)
		return 0;
	*order = a;
	return 1;
}

int
verdict_declared_public(const struct verdict_params *p, const char *ds)
{
	size_t n = strlen(ds);

	for (size_t i = 0; i < p->npublic; i++)
		for (const char *s = p->public[i]; s != NULL;
		    s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
			if (strncmp(s, ds, n) == 0 && (s[n] == ',' ||
			    s[n] == '\0'))
				return 1;
	return 0;
}

void
verdict_judge(const struct verdict_params *p, const struct ledger *l,
    const char *dataset, struct verdict_report *d)
{
	char err[400];
	const struct ledger_total *t = &d->t;

	memset(d, 0, sizeof *d);
	d->name = dataset;
	d->ok = ledger_total(l, d->name, p->delta, p->conv, &d->t, err,
	    sizeof err) == 0;
	d->verdict = VERDICT_PRIVATE;
	if (!d->ok) {
		/* ledger_total left t partly filled; count the flags again so
		 * the report still shows them. */
		memset(&d->t, 0, sizeof d->t);
		for (size_t i = 0; i < l->nraw; i++)
			if (strcmp(l->raw[i].dataset, d->name) == 0)
				d->t.raw = l->raw[i].kind;
		for (size_t i = 0; i < l->n; i++) {
			const struct ledger_entry *e = &l->e[i];
			if (strcmp(e->dataset, d->name) != 0)
				continue;
			d->t.releases++;
			d->t.seeded |= e->seeded;
			d->t.data_dependent |= e->data_dependent;
			if (d->t.relation && d->t.relation != e->relation)
				d->t.mixed = 1;
			d->t.relation = e->relation;
		}
		d->t.epsilon = INFINITY;
	}
	d->public = verdict_declared_public(p, d->name);
	if (d->public && t->releases == 0) {
		/* Nothing to account: the user says the records are public,
		 * so outputs derived from them without privacy are fine. */
		why_add(d, "public (declared by the user): not accounted%s",
		    t->raw == LEDGER_AGGREGATE ? "; derived from the raw "
		    "records (dp.raw = aggregate)" : t->raw ? "; derived from "
		    "the raw records (dp.raw = row-local)" : "");
		d->verdict = VERDICT_PUBLIC;
		return;
	}
	if (d->public)
		why_add(d, "declared public by the user, but the ledger holds "
		    "%zu DP release%s for it: accounted as protected", t->releases,
		    t->releases == 1 ? "" : "s");
	if (t->raw) {
		why_add(d, "NOT private: derived from the raw records without "
		    "privacy (dp.raw.%s = %s)", d->name,
		    t->raw == LEDGER_AGGREGATE ? "aggregate" : "row-local");
		d->verdict = VERDICT_NOT_PRIVATE;
		d->fails = 1;
	}
	if (t->assumed_raw)
		why_add(d, "the rows of a release were of unknown provenance "
		    "and declared raw records of %s by the user (--assume-raw): "
		    "the guarantee holds only if they are", d->name);
	if (t->seeded) {
		why_add(d, "NOT private: a release used --seed (its noise is "
		    "reproducible)");
		d->verdict = VERDICT_NOT_PRIVATE;
		if (!p->allow_seeded)
			d->fails = 1;
	}
	if (t->mixed) {
		why_add(d, "no epsilon: releases mix add_remove and "
		    "replace_one neighbours");
		if (d->verdict < VERDICT_NO_EPSILON)
			d->verdict = VERDICT_NO_EPSILON;
		d->fails = 1;
	} else if (!d->ok) {
		why_add(d, "no epsilon: %s", err);
		if (d->verdict < VERDICT_NO_EPSILON)
			d->verdict = VERDICT_NO_EPSILON;
		d->fails = 1;
	}
	if (p->have_budget && d->ok && !t->mixed && !(t->epsilon <= p->budget)) {
		why_add(d, "over budget: epsilon %.6g > %g", t->epsilon,
		    p->budget);
		if (d->verdict < VERDICT_OVER_BUDGET)
			d->verdict = VERDICT_OVER_BUDGET;
		d->fails = 1;
	}
	if (t->data_dependent) {
		d->has_dd = sanitised_dd(p, l, d->name, d->ok && t->norders ?
		    t->delta_rdp : p->delta, &d->eps_dd, &d->order_dd);
		if (d->has_dd)
			why_add(d, "data-dependent epsilon %.6g at order %g, "
			    "released with smooth sensitivity (Papernot et al. "
			    "2018): a sanitised estimate, not a guarantee; the "
			    "guarantee is epsilon", d->eps_dd, d->order_dd);
		else
			why_add(d, "%s", VERDICT_DD_NOTE);
		if (d->verdict < VERDICT_DATA_DEP)
			d->verdict = VERDICT_DATA_DEP;
	}
	if (t->tv_recharged)
		why_add(d, "the samplers' total variation is charged to delta "
		    "at the composed epsilon");
	if (d->verdict == VERDICT_PRIVATE)
		why_add(d, "private: (%.6g, %g)-DP for %s (%s neighbours)",
		    t->epsilon, p->delta, d->name,
		    t->relation == LEDGER_REPLACE_ONE ? "replace_one" :
		    "add_remove");
	/* Used without privacy: no finite epsilon describes it, whatever
	 * its releases spent (those are listed with --verbose). */
	if (t->raw)
		d->t.epsilon = INFINITY;
}

void
verdict_unknown(struct verdict_report *d)
{
	memset(d, 0, sizeof *d);
	d->name = VERDICT_UNKNOWN_NAME;
	d->t.epsilon = INFINITY;
	d->verdict = VERDICT_UNKNOWN;
	d->fails = 1;
	why_add(d, "NOT private: some input is of unknown provenance (%s: "
	    "imported by tns from-csv or from-npy, which carry no ledger), "
	    "so nothing is known of the records or the releases it derives "
	    "from", LEDGER_PROVENANCE_KEY);
}

int
verdict_run(const struct verdict_params *p, const struct ledger *l,
    struct verdict_report **out, size_t *n)
{
	const char **names;
	struct verdict_report *d;
	size_t nd;

	*out = NULL;
	*n = 0;
	if ((names = ledger_datasets(l, &nd)) == NULL)
		return PV_E_NOMEM;
	if ((d = calloc(nd + 1, sizeof *d)) == NULL) {
		free(names);
		return PV_E_NOMEM;
	}
	for (size_t i = 0; i < nd; i++)
		verdict_judge(p, l, names[i], &d[i]);
	free(names);
	if (l->unknown)
		verdict_unknown(&d[nd++]);
	*out = d;
	*n = nd;
	return 0;
}

double
verdict_entry_epsilon(const struct verdict_params *p,
    const struct ledger_entry *e, double *order)
{
	struct ledger one = { 0 };
	struct ledger_total t;
	char err[8];

	*order = 0;
	one.n = 1;
	one.e = (struct ledger_entry *)e;
	if (ledger_total(&one, e->dataset, p->delta, p->conv, &t, err,
	    sizeof err) != 0)
		return INFINITY;
	*order = t.order;
	return t.epsilon;
}
