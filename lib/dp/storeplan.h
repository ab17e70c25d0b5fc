/*
 * storeplan.h: what a planned release may spend, given what its dataset
 * has already charged to a budget store (rdp-account store solve).
 *
 * The planned release's RDP curve, at the default orders
 * (rdp_default_orders, as DP-SGD and the Gaussian releases of the tools
 * record it), is composed with the dataset's charged releases exactly as
 * store_charge composes them (ledger_total at the dataset's delta,
 * improved conversion), and the parameter searched is the one whose
 * release brings the total closest to the budget without exceeding it:
 *
 *   STORE_PLAN_SGM_SIGMA    the Poisson-subsampled Gaussian (DP-SGD) with
 *                           q and steps: the smallest noise multiplier
 *   STORE_PLAN_SGM_STEPS    the same with q and sigma: the most steps
 *   STORE_PLAN_GAUSS_SIGMA  count Gaussian releases of L2 sensitivity
 *                           sens: the smallest noise standard deviation
 *
 * Sigma is bisected on its logarithm over [1e-3, 1e6] times the
 * sensitivity to a relative width of 1e-12 and returned on the private
 * side: charging the answer never exceeds the budget.  Steps are exact
 * (the largest T whose total fits, up to STORE_PLAN_MAX_STEPS).
 *
 * Nothing here prints or exits.  Errors: PV_E_RANGE (bad arguments, or
 * a composition that fails, message in err), PV_E_NOROOT (nothing in
 * range fits: the budget is spent, or even the largest sigma or one step
 * exceeds it), PV_E_NOMEM.
 */
#ifndef PRIVADA_STOREPLAN_H
#define PRIVADA_STOREPLAN_H
#include <stddef.h>
#include <stdint.h>
#include "ledger.h"

#define STORE_PLAN_MAX_STEPS 1000000000000ull	/* 1e12 */
#define STORE_PLAN_SIGMA_MIN 1e-3
#define STORE_PLAN_SIGMA_MAX 1e6

enum store_plan_kind {
	STORE_PLAN_SGM_SIGMA = 1,
	STORE_PLAN_SGM_STEPS,
	STORE_PLAN_GAUSS_SIGMA
};

struct store_plan {
	int kind;			/* enum store_plan_kind */
	double q;			/* sgm: sampling probability, 0..1 */
	uint64_t steps;			/* sgm sigma: steps, >= 1 */
	double sigma;			/* sgm steps: noise multiplier */
	double sens;			/* gaussian: L2 sensitivity (> 0) */
	uint64_t count;			/* gaussian: releases (>= 1) */
};

struct store_plan_answer {
	double sigma;		/* sgm: noise multiplier; gaussian: std */
	uint64_t steps;		/* sgm */
	double before;		/* the dataset's composed epsilon now */
	double total;		/* with the planned release */
	double alone;		/* the planned release alone at delta */
};

/*
 * Solve plan p for dataset, whose charged releases are in l (its other
 * entries are ignored; l->e needs room for one more entry, as
 * store_ledger leaves it), budget epsilon budget at delta.
 */
int store_plan_solve(struct ledger *l, const char *dataset, double budget,
    double delta, const struct store_plan *p, struct store_plan_answer *a,
    char *err, size_t errlen);

/* The planned release's ledger entry (dataset, mechanism, the curve at
 * the default orders) for sigma and steps (sgm) or sigma (gaussian, a
 * standard deviation). */
int store_plan_entry(const struct store_plan *p, const char *dataset,
    double sigma, uint64_t steps, struct ledger_entry *e);

#endif
