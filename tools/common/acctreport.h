/*
 * acctreport.h: rdp-account's reports, in text, TSV or JSON
 * (EMIT_* of emit.h): the epsilon of composed events and the ledger
 * totals of datasets with their verdicts.  Tools only: these print.
 */
#ifndef PRIVADA_ACCTREPORT_H
#define PRIVADA_ACCTREPORT_H

#include <stddef.h>
#include <stdio.h>

#include "account.h"
#include "ledger.h"
#include "verdict.h"

/* The --conversion words, indexed by enum rdp_conv. */
extern const char *const acct_conversions[];

struct acct_report {
	int format;			/* EMIT_* */
	int verbose;			/* the RDP curve; each release */
	double delta;			/* the target delta */
	int conv;			/* enum rdp_conv */
	/* Events: the events, and the --orders grid's name (default,
	 * opacus, pate or list). */
	const struct account_event *ev;
	size_t nev;
	const char *orders_name;
	/* Ledger: the parameters of the totals. */
	const struct verdict_params *vp;
};

/* The epsilon of r's events composed (res from account_compute). */
void acct_report_events(FILE *fp, const struct acct_report *r,
    const struct account_result *res);

/* The totals and verdicts of nd datasets (from verdict_run over l). */
void acct_report_ledger(FILE *fp, const struct acct_report *r,
    const struct ledger *l, const struct verdict_report *d, size_t nd);

#endif
