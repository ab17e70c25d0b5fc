/*
 * Unit tests of lib/dp/verdict: the per-dataset judgement that
 * rdp-account ledger --budget enforces, on hand-made ledgers: the
 * epsilon against the classic RDP conversion computed here, and each
 * verdict (private, over budget, seeded, raw, mixed, public, data-
 * dependent, unknown provenance) with whether it fails the budget.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "rdp.h"
#include "tap.h"
#include "verdict.h"

#define SIGMA 4.0
#define DELTA 1e-6

static const double orders[] = { 2, 4, 8, 16, 32, 64 };
#define NO (sizeof orders / sizeof orders[0])

/* A Gaussian release of dataset ds, noise multiplier SIGMA. */
static void
entry(struct ledger_entry *e, int idbyte, const char *ds)
{
	memset(e, 0, sizeof *e);
	for (int i = 0; i < LEDGER_ID_HEX; i++)
		e->id[i] = "0123456789abcdef"[(idbyte + i) & 15];
	snprintf(e->dataset, sizeof e->dataset, "%s", ds);
	strcpy(e->mechanism, "gaussian");
	strcpy(e->tool, "covest");
	e->relation = LEDGER_ADD_REMOVE;
	e->epsilon = -1;
	e->norders = NO;
	for (size_t j = 0; j < NO; j++) {
		e->orders[j] = orders[j];
		e->rdp[j] = orders[j] / (2 * SIGMA * SIGMA);
	}
}

/* Mironov 2017, Prop. 3, minimised over the orders: k releases. */
static double
classic_eps(int k)
{
	double best = INFINITY;

	for (size_t j = 0; j < NO; j++) {
		double e = k * orders[j] / (2 * SIGMA * SIGMA) -
		    log(DELTA) / (orders[j] - 1);
		if (e < best)
			best = e;
	}
	return best;
}

static struct verdict_params
params(void)
{
	return (struct verdict_params){ .delta = DELTA,
	    .conv = RDP_CONV_CLASSIC };
}

static void
test_check_params(void)
{
	struct verdict_params p = params();
	const char *bad[] = { "", ",a", "a,", "a,,b" };
	const char *good[] = { "a", "a,b_2" };

	ok(verdict_check_params(&p) == NULL, "good params accepted");
	p.delta = 0;
	ok(verdict_check_params(&p) != NULL, "delta 0 refused");
	p.delta = 1;
	ok(verdict_check_params(&p) != NULL, "delta 1 refused");
	p.delta = NAN;
	ok(verdict_check_params(&p) != NULL, "delta NaN refused");
	p = params();
	p.conv = 7;
	ok(verdict_check_params(&p) != NULL, "unknown conversion refused");
	p = params();
	p.have_budget = 1;
	p.budget = -1;
	ok(verdict_check_params(&p) != NULL, "negative budget refused");
	p.budget = NAN;
	ok(verdict_check_params(&p) != NULL, "NaN budget refused");
	p.budget = 0;
	ok(verdict_check_params(&p) == NULL, "budget 0 accepted");
	for (size_t i = 0; i < 4; i++) {
		p = params();
		p.public = &bad[i];
		p.npublic = 1;
		ok(verdict_check_params(&p) != NULL &&
		    !verdict_public_list_ok(bad[i]), "public list '%s' refused",
		    bad[i]);
	}
	p = params();
	p.public = good;
	p.npublic = 2;
	ok(verdict_check_params(&p) == NULL, "public lists accepted");
	ok(verdict_declared_public(&p, "b_2") && verdict_declared_public(&p,
	    "a") && !verdict_declared_public(&p, "b") &&
	    !verdict_declared_public(&p, "b_"), "public names match whole");
}

static void
test_private_and_budget(void)
{
	struct ledger_entry e[2];
	struct ledger l = { .n = 2, .e = e };
	struct verdict_params p = params();
	struct verdict_report d;
	double eps2 = classic_eps(2), order;

	entry(&e[0], 1, "a");
	entry(&e[1], 2, "a");
	verdict_judge(&p, &l, "a", &d);
	ok(d.ok && d.verdict == VERDICT_PRIVATE && !d.fails,
	    "two Gaussian releases: private");
	ok(fabs(d.t.epsilon - eps2) < 1e-12 * eps2,
	    "epsilon %.17g is the classic conversion of the summed curve %.17g",
	    d.t.epsilon, eps2);
	ok(strncmp(d.why, "private: (", 10) == 0, "why: %s", d.why);
	ok(fabs(verdict_entry_epsilon(&p, &e[0], &order) - classic_eps(1)) <
	    1e-12, "a release alone: one release's epsilon");
	p.have_budget = 1;
	p.budget = eps2 * 1.001;
	verdict_judge(&p, &l, "a", &d);
	ok(d.verdict == VERDICT_PRIVATE && !d.fails, "within budget");
	p.budget = eps2 * 0.999;
	verdict_judge(&p, &l, "a", &d);
	ok(d.verdict == VERDICT_OVER_BUDGET && d.fails &&
	    strstr(d.why, "over budget") != NULL, "over budget fails");
}

static void
test_not_private(void)
{
	struct ledger_entry e[2];
	struct ledger_raw_mark raw = { .dataset = "a",
	    .kind = LEDGER_AGGREGATE };
	struct ledger l = { .n = 1, .e = e };
	struct verdict_params p = params();
	struct verdict_report d;

	entry(&e[0], 1, "a");
	e[0].seeded = 1;
	verdict_judge(&p, &l, "a", &d);
	ok(d.verdict == VERDICT_NOT_PRIVATE && d.fails, "seeded: NOT private, "
	    "fails");
	p.allow_seeded = 1;
	verdict_judge(&p, &l, "a", &d);
	ok(d.verdict == VERDICT_NOT_PRIVATE && !d.fails, "--allow-seeded: "
	    "still NOT private, does not fail");
	p = params();
	e[0].seeded = 0;
	l.nraw = 1;
	l.raw = &raw;
	verdict_judge(&p, &l, "a", &d);
	ok(d.verdict == VERDICT_NOT_PRIVATE && d.fails &&
	    isinf(d.t.epsilon), "raw-derived: NOT private, epsilon inf");
	l.nraw = 0;
	entry(&e[1], 2, "a");
	e[1].relation = LEDGER_REPLACE_ONE;
	l.n = 2;
	verdict_judge(&p, &l, "a", &d);
	ok(d.verdict == VERDICT_NO_EPSILON && d.fails && d.t.mixed,
	    "mixed relations: no epsilon, fails");
	e[1].relation = LEDGER_ADD_REMOVE;
	e[1].data_dependent = 1;
	verdict_judge(&p, &l, "a", &d);
	ok(d.verdict == VERDICT_DATA_DEP && !d.fails &&
	    strstr(d.why, VERDICT_DD_NOTE) != NULL,
	    "data-dependent: flagged with the note, not a failure by itself");
}

static void
test_public_unknown_run(void)
{
	struct ledger_entry e[1];
	struct ledger_raw_mark raw = { .dataset = "pub",
	    .kind = LEDGER_ROW_LOCAL };
	struct ledger l = { .n = 1, .e = e, .nraw = 1, .raw = &raw,
	    .unknown = 1 };
	const char *pub[] = { "pub" };
	struct verdict_params p = params();
	struct verdict_report *d;
	size_t n;

	entry(&e[0], 1, "a");
	p.public = pub;
	p.npublic = 1;
	ok(verdict_run(&p, &l, &d, &n) == 0 && n == 3, "run: two datasets "
	    "and unknown provenance");
	ok(strcmp(d[0].name, "a") == 0 && d[0].verdict == VERDICT_PRIVATE,
	    "first seen first");
	ok(strcmp(d[1].name, "pub") == 0 && d[1].verdict == VERDICT_PUBLIC &&
	    !d[1].fails, "declared public without releases: public, passes");
	ok(strcmp(d[2].name, VERDICT_UNKNOWN_NAME) == 0 &&
	    d[2].verdict == VERDICT_UNKNOWN && d[2].fails &&
	    isinf(d[2].t.epsilon), "unknown provenance: never private");
	ok(strcmp(verdict_name(d[2].verdict), "unknown_provenance") == 0 &&
	    strcmp(verdict_name(VERDICT_PRIVATE), "private") == 0,
	    "verdict names");
	free(d);
	{
		struct verdict_report r;

		pub[0] = "a";
		verdict_judge(&p, &l, "a", &r);
		ok(r.public && r.verdict == VERDICT_PRIVATE &&
		    strstr(r.why, "accounted as protected") != NULL,
		    "declared public with releases: accounted as protected");
	}
}

int
main(void)
{
	test_check_params();
	test_private_and_budget();
	test_not_private();
	test_public_unknown_run();
	return tap_done();
}
