/* storeplan.c: what a planned release may spend (see storeplan.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pverr.h"
#include "rdp.h"
#include "storeplan.h"

int
store_plan_entry(const struct store_plan *p, const char *dataset,
    double sigma, uint64_t steps, struct ledger_entry *e)
{
	const double *ord;
	size_t n;
	int rc;

	memset(e, 0, sizeof *e);
	snprintf(e->id, sizeof e->id, "%s", "planned");
	snprintf(e->dataset, sizeof e->dataset, "%s", dataset);
	snprintf(e->tool, sizeof e->tool, "%s", "rdp-account");
	e->relation = LEDGER_ADD_REMOVE;
	e->epsilon = -1;
	ord = rdp_default_orders(&n);
	e->norders = n;
	memcpy(e->orders, ord, n * sizeof *ord);
	if (p->kind == STORE_PLAN_GAUSS_SIGMA) {
		double m = sigma / p->sens;
		snprintf(e->mechanism, sizeof e->mechanism, "gaussian");
		for (size_t i = 0; i < n; i++)
			e->rdp[i] = (double)p->count * rdp_gaussian(ord[i], m);
		return 0;
	}
	snprintf(e->mechanism, sizeof e->mechanism, "subsampled_gaussian");
	if ((rc = rdp_sgm(p->q, sigma, ord, n, e->rdp)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++)
		e->rdp[i] *= (double)steps;
	return 0;
}

/* The composed epsilon of l's first n0 entries and the planned release. */
static int
with_plan(struct ledger *l, size_t n0, const char *dataset, double delta,
    const struct store_plan *p, double sigma, uint64_t steps, double *eps,
    char *err, size_t errlen)
{
	struct ledger_total t;
	char why[200];
	int rc;

	if ((rc = store_plan_entry(p, dataset, sigma, steps, &l->e[n0])) != 0)
		return pv_fail(rc, err, errlen, "the planned release's curve: %s",
		    rdp_strerror(rc));
	l->n = n0 + 1;
	rc = ledger_total(l, dataset, delta, RDP_CONV_IMPROVED, &t, why,
	    sizeof why);
	l->n = n0;
	if (rc != 0)
		return pv_fail(PV_E_RANGE, err, errlen, "dataset %s: %s", dataset,
		    why);
	*eps = t.epsilon;
	return 0;
}

struct plan_query {
	struct ledger *l;
	size_t n0;
	const char *dataset;
	double delta;
	const struct store_plan *p;
	uint64_t steps;
	char *err;
	size_t errlen;
};

static int
plan_eps_at(double sigma, void *arg, double *eps)
{
	struct plan_query *a = arg;

	return with_plan(a->l, a->n0, a->dataset, a->delta, a->p, sigma,
	    a->steps, eps, a->err, a->errlen);
}

static int
alone(const char *dataset, double delta, const struct store_plan *p,
    double sigma, uint64_t steps, double *eps)
{
	struct ledger one = { 0 };
	struct ledger_entry e;
	struct ledger_total t;

	if (store_plan_entry(p, dataset, sigma, steps, &e) != 0)
		return -1;
	one.n = 1;
	one.e = &e;
	if (ledger_total(&one, dataset, delta, RDP_CONV_IMPROVED, &t, NULL, 0)
	    != 0)
		return -1;
	*eps = t.epsilon;
	return 0;
}

int
store_plan_solve(struct ledger *l, const char *dataset, double budget,
    double delta, const struct store_plan *p, struct store_plan_answer *a,
    char *err, size_t errlen)
{
	struct ledger_total t;
	char why[200];
	size_t n0 = l->n;
	double e;
	int rc;

	memset(a, 0, sizeof *a);
	if (!(budget > 0) || !isfinite(budget) || !(delta > 0 && delta < 1) ||
	    !(p->q >= 0 && p->q <= 1) || (p->kind == STORE_PLAN_SGM_SIGMA &&
	    p->steps == 0) || (p->kind == STORE_PLAN_SGM_STEPS &&
	    !(p->sigma > 0 && isfinite(p->sigma))) ||
	    (p->kind == STORE_PLAN_GAUSS_SIGMA && (!(p->sens > 0 &&
	    isfinite(p->sens)) || p->count == 0)) ||
	    p->kind < STORE_PLAN_SGM_SIGMA || p->kind > STORE_PLAN_GAUSS_SIGMA)
		return pv_fail(PV_E_RANGE, err, errlen, "bad plan");
	a->before = 0;
	if (n0 > 0) {
		if (ledger_total(l, dataset, delta, RDP_CONV_IMPROVED, &t, why,
		    sizeof why) != 0)
			return pv_fail(PV_E_RANGE, err, errlen, "dataset %s: %s",
			    dataset, why);
		a->before = t.epsilon;
	}
	if (!(a->before < budget))
		return pv_fail(PV_E_NOROOT, err, errlen, "dataset %s has spent "
		    "epsilon %.17g of its budget %.17g: nothing is left",
		    dataset, a->before, budget);
	if (p->kind == STORE_PLAN_SGM_STEPS) {
		uint64_t good = 0, bad = 0, s;

		/* The total grows with the steps: double, then bisect. */
		for (s = 1; s <= STORE_PLAN_MAX_STEPS; s *= 2) {
			if ((rc = with_plan(l, n0, dataset, delta, p, p->sigma,
			    s, &e, err, errlen)) != 0)
				return rc;
			if (!(e <= budget)) {
				bad = s;
				break;
			}
			good = s;
		}
		if (good == 0)
			return pv_fail(PV_E_NOROOT, err, errlen, "sigma %g: not "
			    "even one step fits the %.17g left", p->sigma,
			    budget - a->before);
		if (bad == 0) {
			bad = STORE_PLAN_MAX_STEPS + 1;
			if ((rc = with_plan(l, n0, dataset, delta, p, p->sigma,
			    STORE_PLAN_MAX_STEPS, &e, err, errlen)) != 0)
				return rc;
			if (e <= budget)
				good = STORE_PLAN_MAX_STEPS;
		}
		while (bad - good > 1) {
			s = good + (bad - good) / 2;
			if ((rc = with_plan(l, n0, dataset, delta, p, p->sigma,
			    s, &e, err, errlen)) != 0)
				return rc;
			if (e <= budget)
				good = s;
			else
				bad = s;
		}
		a->sigma = p->sigma;
		a->steps = good;
	} else {
		double scale = p->kind == STORE_PLAN_GAUSS_SIGMA ? p->sens : 1;
		uint64_t steps = p->kind == STORE_PLAN_SGM_SIGMA ? p->steps : 1;

		struct plan_query pq = { l, n0, dataset, delta, p, steps,
		    err, errlen };

		rc = rdp_solve_decreasing(STORE_PLAN_SIGMA_MIN * scale,
		    STORE_PLAN_SIGMA_MAX * scale, budget, plan_eps_at, &pq,
		    &a->sigma);
		if (rc == PV_E_NOROOT)
			return pv_fail(PV_E_NOROOT, err, errlen, "no sigma up to "
			    "%g fits the %.17g left", STORE_PLAN_SIGMA_MAX * scale,
			    budget - a->before);
		if (rc != 0)
			return rc;
		a->steps = steps;
	}
	if ((rc = with_plan(l, n0, dataset, delta, p, a->sigma, a->steps,
	    &a->total, err, errlen)) != 0)
		return rc;
	if (!(a->total <= budget))	/* the answer is on the private side */
		return pv_fail(PV_E_NUMERIC, err, errlen, "the solved release "
		    "spends %.17g, over %.17g", a->total, budget);
	if (alone(dataset, delta, p, a->sigma, a->steps, &a->alone) != 0)
		a->alone = NAN;
	return 0;
}
