/*
 * store.h: the persistent privacy budget store (SQLite).  One database
 * file holds, per dataset, a budget (epsilon at delta) and every release
 * charged to it.  A release is charged in one BEGIN IMMEDIATE
 * transaction: its RDP curve is composed with the dataset's charged
 * releases exactly as ledger_total composes a stream's ledger (RDP curves
 * summed at their common orders, converted at the dataset's delta less
 * the entries' own deltas), and the charge is refused when the total
 * would exceed the budget.  A charged release is never refunded.
 *
 * Schema (PRAGMA user_version = STORE_VERSION):
 *   datasets(name TEXT PRIMARY KEY, epsilon REAL, delta REAL)
 *   releases(id TEXT PRIMARY KEY, dataset, tool, mechanism, args, time,
 *       relation, seeded, epsilon, delta, tv, tv_epsilon,
 *       orders TEXT, rdp TEXT)    -- curves as comma-separated %.17g
 * The release id is the ledger entry's id (dp.release.<id>).
 *
 * Ownership: struct store is opaque (store_close accepts NULL); a
 * struct store_status owns its arrays (store_status_free).  Nothing here
 * prints or exits.  Errors: PV_E_IO (the file cannot be opened or
 * created), PV_E_VERSION (another schema version or not a store),
 * PV_E_STORE (a database error, a corrupt or read-only file), PV_E_NOBUDGET
 * (no budget for the dataset), PV_E_BUDGET (the release would exceed the
 * budget), PV_E_RANGE (bad arguments), PV_E_FORMAT (a release whose id
 * is already charged with other contents), PV_E_NOMEM.  err, when not
 * NULL, receives a message.
 */
#ifndef PRIVADA_STORE_H
#define PRIVADA_STORE_H
#include <stddef.h>
#include "ledger.h"

#define STORE_VERSION 1
#define STORE_BUSY_MS 600000	/* how long a writer waits for the lock */

struct store;

/* Create a new store at path (mode 0600; an existing file is an error,
 * PV_E_IO with errno EEXIST) and write its schema. */
int store_init(const char *path, char *err, size_t errlen);

/* Open an existing store (never creates one).  readonly: for status. */
int store_open(const char *path, int readonly, struct store **out,
    char *err, size_t errlen);
void store_close(struct store *s);

/* Set (or change) dataset's budget: epsilon > 0, 0 < delta < 1.  The
 * delta of a dataset with charged releases cannot change (PV_E_RANGE),
 * and its epsilon cannot drop below what is spent (PV_E_BUDGET). */
int store_set(struct store *s, const char *dataset, double epsilon,
    double delta, char *err, size_t errlen);

/* Charge release e (e->dataset, e->id) with args (the command line, may
 * be NULL).  *spent, when not NULL, receives the composed epsilon after
 * the charge (or what it would have been when refused).  A release
 * already charged with the same id and contents is not charged twice
 * (returns 0). */
int store_charge(struct store *s, const struct ledger_entry *e,
    const char *args, double *spent, char *err, size_t errlen);

struct store_release {
	char id[LEDGER_ID_HEX + 1];
	char tool[48], mechanism[48], time[32];
	char *args;
	double epsilon;		/* this release alone at the dataset's delta */
};
struct store_dataset {
	char name[LEDGER_MAX_NAME + 1];
	double budget, delta, spent, order;	/* spent: composed epsilon */
	size_t nrel;
	struct store_release *rel;
};
struct store_status {
	size_t n;
	struct store_dataset *d;
};

/* Every dataset with its releases (in charge order). */
int store_status(struct store *s, struct store_status *st, char *err,
    size_t errlen);
void store_status_free(struct store_status *st);

/* The budget of dataset (PV_E_NOBUDGET when it has none) and its charged
 * releases, in charge order, into l (the caller's: ledger_free; the
 * array has room for one more entry), read in one transaction. */
int store_ledger(struct store *s, const char *dataset, struct ledger *l,
    double *budget, double *delta, char *err, size_t errlen);

#endif
