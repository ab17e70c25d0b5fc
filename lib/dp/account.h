/*
 * account.h: the privacy of described DP events and of their composition
 * under Renyi DP, and inverse queries (rdp-account's events: sgm,
 * gaussian, laplace, pate-lnmax, pate-gnmax).  The curves themselves are
 * lib/dp/rdp.h's; this module turns an event's parameters into one, sums
 * them, converts to (epsilon, delta) and adds the side bounds (analytic
 * Gaussian, pure DP, PLD).
 *
 * Ownership: an event owns votes and qoff (malloc'd, account_event_free)
 * and its curve acct; a result owns orders, total and its scratch
 * (account_result_free).  Both free functions accept zeroed structs.
 * Nothing here prints, exits or reads the environment.  Errors are
 * PV_E_* values (lib/common/pverr.h): PV_E_NOMEM, PV_E_FORMAT (counts),
 * PV_E_IO, PV_E_NOROOT (a --solve without solution), and the RDP
 * module's PV_E_RANGE and PV_E_NUMERIC.
 */
#ifndef PRIVADA_ACCOUNT_H
#define PRIVADA_ACCOUNT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rdp.h"

#define ACCOUNT_MAX_CLASSES (1u << 20)	/* classes in one vote histogram */
#define ACCOUNT_MAX_VOTES 9007199254740992.0	/* 2^53: exact as a double */

enum account_kind {
	ACCOUNT_SGM, ACCOUNT_GAUSSIAN, ACCOUNT_LAPLACE, ACCOUNT_LNMAX,
	ACCOUNT_GNMAX, ACCOUNT_NKINDS
};
enum account_solve {
	ACCOUNT_SOLVE_NONE, ACCOUNT_SOLVE_SIGMA, ACCOUNT_SOLVE_STEPS,
	ACCOUNT_SOLVE_Q
};

/* The parameters of an event, as bits of account_event.given: which were
 * set.  The kinds accept the ones account_kind_allows says. */
enum {
	ACCOUNT_P_Q = 1 << 0, ACCOUNT_P_SIGMA = 1 << 1,
	ACCOUNT_P_STEPS = 1 << 2, ACCOUNT_P_EPS = 1 << 3,
	ACCOUNT_P_SOLVE = 1 << 4, ACCOUNT_P_SENS = 1 << 5,
	ACCOUNT_P_COUNT = 1 << 6, ACCOUNT_P_SCALE = 1 << 7,
	ACCOUNT_P_GAMMA = 1 << 8, ACCOUNT_P_QUERIES = 1 << 9,
	ACCOUNT_P_COUNTS = 1 << 10, ACCOUNT_P_DDEP = 1 << 11,
	ACCOUNT_P_ANALYTIC = 1 << 12, ACCOUNT_P_PLD = 1 << 13
};

struct account_event {
	int kind;			/* enum account_kind */
	unsigned given;			/* ACCOUNT_P_* bits set */
	double q, sigma, sens, scale, gamma;	/* sens: default 1 */
	double target;			/* epsilon of --solve */
	uint64_t steps, count, queries;	/* count: default 1 */
	int solve;			/* enum account_solve */
	int data_dependent, analytic, pld;
	const char *counts_label;	/* where votes came from (reports) */
	double *votes;			/* the histograms, one after another */
	size_t *qoff;			/* query i: votes[qoff[i] .. qoff[i+1]) */
	/* results of account_compute */
	struct rdp_acct *acct;		/* this event's RDP curve */
	double eps, order;
};

struct account_result {
	double *orders;			/* the caller's choice (account_orders) */
	size_t norders;
	struct rdp_acct *total;
	double eps, order;
	double eps_analytic;		/* NAN unless every event is Gaussian */
	double eps_pld;			/* NAN unless one sgm event with pld */
	double eps_pure;		/* NAN unless every event is pure DP */
	int data_dependent;
	const char *failed;		/* on error: the step that failed */
	double *tmp;			/* scratch */
};

/* An event of kind with the defaults (sensitivity 1, count 1). */
void account_event_init(struct account_event *e, int kind);
void account_event_free(struct account_event *e);
void account_result_free(struct account_result *r);

/* The name of a kind ("sgm", ...), and the kind of a name or -1. */
const char *account_kind_name(int kind);
int account_kind(const char *name);
/* Whether kind accepts parameter bit (ACCOUNT_P_*). */
int account_kind_allows(int kind, unsigned bit);
/* The name of a solve target: "sigma", "steps" or "q". */
const char *account_solve_name(int solve);

/* Check e (one of nev events) for completeness and conflicts.  @return
 * NULL, or a message written into buf (the caller's, len bytes). */
const char *account_check_event(const struct account_event *e, size_t nev,
    char *buf, size_t len);

/* The orders of a named grid ("default", "opacus", "pate") or of a
 * comma-separated list of numbers, into *out (caller frees), *n set.
 * @return 0; PV_E_FORMAT (not a name or list of numbers), PV_E_RANGE (a
 * number out of range, or an order rdp_check_orders refuses: *why says
 * which), PV_E_LIMIT (more than RDP_MAX_ORDERS), PV_E_NOMEM. */
int account_orders(const char *arg, double **out, size_t *n,
    const char **why);

/* Read vote histograms, one query per line, classes comma-separated,
 * each a decimal integer in [0, ACCOUNT_MAX_VOTES] (no sign, fraction,
 * exponent or hex), every line with the same number of classes and no
 * NUL byte, from fp into e (votes, qoff, queries).  @return 0; PV_E_FORMAT with a
 * message in err (and *line the line, 0 when about the whole input);
 * PV_E_IO (errno set); PV_E_NOMEM. */
int account_read_counts(FILE *fp, struct account_event *e, uint64_t *line,
    char *err, size_t errlen);

/* Solve the events' --solve parameters, compute each one's curve and
 * epsilon, and their composition at delta (conv: enum rdp_conv) into r
 * (r->orders set by the caller).  May be called again (benchmarks): the
 * previous results are freed.  @return 0 or a PV_E_* code, r->failed
 * naming the step. */
int account_compute(struct account_event *ev, size_t nev, double delta,
    int conv, struct account_result *r);

#endif
