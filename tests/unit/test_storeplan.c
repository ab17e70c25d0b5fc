/* Unit tests of store solve's planner (lib/dp/storeplan.c): the answer
 * spends at most the budget and is the extreme one (a little less noise,
 * or one more step, exceeds it), composed with the charged releases;
 * the sensitivity and the count scale the Gaussian's sigma as they must
 * (sigma / (l2 sqrt(count)) is what the curve sees); refusals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "pverr.h"
#include "rdp.h"
#include "storeplan.h"
#include "tap.h"

#define DELTA 1e-5

/* A charged Gaussian release of multiplier sigma at the default orders. */
static void
charged(struct ledger_entry *e, double sigma)
{
	const struct store_plan p = { .kind = STORE_PLAN_GAUSS_SIGMA,
	    .sens = 1, .count = 1 };

	store_plan_entry(&p, "d", sigma, 1, e);
	snprintf(e->id, sizeof e->id, "%032x", 7);
}

/* The composed epsilon of l's entries and plan p at (sigma, steps). */
static double
total(const struct ledger *l, const struct store_plan *p, double sigma,
    uint64_t steps)
{
	struct ledger m = { 0 };
	struct ledger_total t;
	double eps;

	m.e = calloc(l->n + 1, sizeof *m.e);
	memcpy(m.e, l->e, l->n * sizeof *m.e);
	store_plan_entry(p, "d", sigma, steps, &m.e[l->n]);
	m.n = l->n + 1;
	eps = ledger_total(&m, "d", DELTA, RDP_CONV_IMPROVED, &t, NULL, 0) == 0
	    ? t.epsilon : NAN;
	free(m.e);
	return eps;
}

static struct ledger
with_prior(double sigma)
{
	struct ledger l = { 0 };

	l.e = calloc(2, sizeof *l.e);
	if (sigma > 0) {
		charged(&l.e[0], sigma);
		l.n = 1;
	}
	return l;
}

int
main(void)
{
	struct store_plan_answer a, b;
	struct store_plan p;
	struct ledger l;
	char err[300];
	double s1;
	int rc;

	/* Gaussian on a dataset that spent a release of multiplier 3. */
	l = with_prior(3);
	p = (struct store_plan){ .kind = STORE_PLAN_GAUSS_SIGMA, .sens = 1,
	    .count = 1 };
	rc = store_plan_solve(&l, "d", 2, DELTA, &p, &a, err, sizeof err);
	ok(rc == 0, "gaussian solved (%s)", rc ? err : "");
	ok(a.total <= 2 && a.total >= 2 * (1 - 1e-9),
	    "gaussian: the total %.17g lands on the budget 2, not above",
	    a.total);
	ok(a.total == total(&l, &p, a.sigma, 1),
	    "gaussian: the total is the composition with the charged release");
	ok(total(&l, &p, a.sigma * (1 - 1e-9), 1) > 2,
	    "gaussian: a little less noise exceeds the budget");
	ok(a.before > 0 && a.before < a.total && l.n == 1,
	    "gaussian: spent before %.6g, the ledger left as it was", a.before);
	s1 = a.sigma;
	p.sens = 3;
	rc = store_plan_solve(&l, "d", 2, DELTA, &p, &b, err, sizeof err);
	ok(rc == 0 && fabs(b.sigma - 3 * s1) <= 1e-11 * 3 * s1,
	    "gaussian: sensitivity 3 triples sigma (%.17g, %.17g)", b.sigma,
	    3 * s1);
	p.sens = 1;
	p.count = 4;
	rc = store_plan_solve(&l, "d", 2, DELTA, &p, &b, err, sizeof err);
	ok(rc == 0 && fabs(b.sigma - 2 * s1) <= 1e-11 * 2 * s1,
	    "gaussian: 4 releases double sigma (%.17g, %.17g)", b.sigma,
	    2 * s1);
	free(l.e);

	/* DP-SGD: sigma for 500 steps at q 0.01, then steps for sigma 1. */
	l = with_prior(5);
	p = (struct store_plan){ .kind = STORE_PLAN_SGM_SIGMA, .q = 0.01,
	    .steps = 500 };
	rc = store_plan_solve(&l, "d", 1.5, DELTA, &p, &a, err, sizeof err);
	ok(rc == 0 && a.steps == 500, "sgm sigma solved (%s)", rc ? err : "");
	ok(a.total <= 1.5 && a.total >= 1.5 * (1 - 1e-9),
	    "sgm sigma: the total %.17g lands on the budget", a.total);
	ok(total(&l, &p, a.sigma * (1 - 1e-9), 500) > 1.5,
	    "sgm sigma: a little less noise exceeds the budget");
	p = (struct store_plan){ .kind = STORE_PLAN_SGM_STEPS, .q = 0.01,
	    .sigma = 1 };
	rc = store_plan_solve(&l, "d", 1.5, DELTA, &p, &a, err, sizeof err);
	ok(rc == 0 && a.steps > 1, "sgm steps: %llu (%s)",
	    (unsigned long long)a.steps, rc ? err : "");
	ok(total(&l, &p, 1, a.steps) <= 1.5 &&
	    total(&l, &p, 1, a.steps + 1) > 1.5,
	    "sgm steps: the steps fit, one more does not");
	ok(a.total == total(&l, &p, 1, a.steps), "sgm steps: the total");
	/* q = 0 spends nothing: the step bound. */
	p.q = 0;
	rc = store_plan_solve(&l, "d", 1.5, DELTA, &p, &a, err, sizeof err);
	ok(rc == 0 && a.steps == STORE_PLAN_MAX_STEPS,
	    "sgm steps at q 0: the bound %llu", (unsigned long long)a.steps);
	free(l.e);

	/* Refusals: nothing left, nothing fits, bad plans. */
	l = with_prior(0.5);
	p = (struct store_plan){ .kind = STORE_PLAN_GAUSS_SIGMA, .sens = 1,
	    .count = 1 };
	rc = store_plan_solve(&l, "d", 1, DELTA, &p, &a, err, sizeof err);
	ok(rc == PV_E_NOROOT && strstr(err, "nothing is left") != NULL,
	    "a spent budget: PV_E_NOROOT (%s)", err);
	free(l.e);
	l = with_prior(0);
	p = (struct store_plan){ .kind = STORE_PLAN_SGM_STEPS, .q = 1,
	    .sigma = 0.1 };
	rc = store_plan_solve(&l, "d", 1, DELTA, &p, &a, err, sizeof err);
	ok(rc == PV_E_NOROOT && strstr(err, "not even one step") != NULL,
	    "one step over the budget: PV_E_NOROOT (%s)", err);
	p = (struct store_plan){ .kind = STORE_PLAN_SGM_SIGMA, .q = 0.1 };
	ok(store_plan_solve(&l, "d", 1, DELTA, &p, &a, err, sizeof err) ==
	    PV_E_RANGE, "zero steps: PV_E_RANGE");
	p = (struct store_plan){ .kind = STORE_PLAN_GAUSS_SIGMA, .sens = 1 };
	ok(store_plan_solve(&l, "d", 1, DELTA, &p, &a, err, sizeof err) ==
	    PV_E_RANGE, "zero releases: PV_E_RANGE");
	p.count = 1;
	ok(store_plan_solve(&l, "d", 1, 1, &p, &a, err, sizeof err) ==
	    PV_E_RANGE, "delta 1: PV_E_RANGE");
	free(l.e);
	return tap_done();
}
