/*
 * store.h: the persistent privacy budget store, on SQLite (a file) or on
 * PostgreSQL (a postgresql:// or postgres:// URI, through libpq).  One
 * store holds, per dataset, a budget (epsilon at delta) and every
 * release charged to it.  A release is charged in one write transaction:
 * its RDP curve is composed with the dataset's charged releases exactly
 * as ledger_total composes a stream's ledger (RDP curves summed at their
 * common orders, converted at the dataset's delta less the entries' own
 * deltas), and the charge is refused when the total would exceed the
 * budget.  A charged release is never refunded.
 *
 * Schema (the same tables on both):
 *   datasets(name TEXT PRIMARY KEY, epsilon REAL, delta REAL)
 *   releases(id TEXT PRIMARY KEY, seq, dataset, tool, mechanism, args,
 *       time, relation, seeded, epsilon, delta, tv, tv_epsilon,
 *       orders TEXT, rdp TEXT)    -- curves as comma-separated %.17g
 * The version: SQLite's PRAGMA user_version, PostgreSQL's one-row table
 * store_version(version) (both STORE_VERSION).  seq orders a dataset's
 * releases by charge (PostgreSQL: an identity column, gaps allowed).
 * The release id is the ledger entry's id (dp.release.<id>).
 *
 * Why compose-check-insert is atomic (no two charges both admitted on
 * the same remaining budget):
 *   SQLite: BEGIN IMMEDIATE takes the database's write lock before the
 *   budget and the releases are read; every charge and set runs alone
 *   and reads what every earlier one committed.
 *   PostgreSQL: a charge runs in READ COMMITTED and first reads its
 *   dataset's row with SELECT ... FOR UPDATE, which waits for any other
 *   transaction holding that row lock (a charge of the same dataset, or
 *   a set, below) to end.  Every later statement of the charge takes a
 *   new snapshot, taken after the lock was granted, so the releases it
 *   composes include everything committed by earlier lock holders (a
 *   transaction's commit is visible before its locks are released), and
 *   no other charge of the dataset can insert until this one ends.  A
 *   release row can only be inserted by a charge holding its dataset's
 *   row lock (the foreign key makes the row exist).  store_set first
 *   takes LOCK TABLE datasets IN SHARE ROW EXCLUSIVE MODE, which
 *   conflicts with itself and with the ROW SHARE / ROW EXCLUSIVE locks
 *   every charge holds from its FOR UPDATE on: a set runs alone against
 *   every set and every charge, also for a dataset not yet in the table
 *   (which a row lock could not cover).  Charges of different datasets
 *   run in parallel.  Lock waits end after STORE_BUSY_MS (lock_timeout)
 *   with PV_E_STORE, nothing charged.  status reads one REPEATABLE READ
 *   READ ONLY snapshot.
 *
 * SQLite on a network filesystem (NFS, SMB/CIFS, 9P, FUSE such as sshfs,
 * Lustre, GPFS, Ceph, AFS, ...) is refused (PV_E_STORE): its locks are
 * not reliable there; such stores belong on PostgreSQL.  A URI holding a
 * password is refused (PV_E_OPTION): the tools record their arguments in
 * the store and print the store's name in messages (libpq reads
 * ~/.pgpass or PGPASSWORD instead).
 *
 * Ownership: struct store is opaque (store_close accepts NULL); a
 * struct store_status owns its arrays (store_status_free).  Nothing here
 * prints or exits.  Errors: PV_E_IO (the file cannot be opened or
 * created; store_init on a database that already holds a store),
 * PV_E_VERSION (another schema version or not a store), PV_E_STORE (a
 * database error, a corrupt or read-only file, a network filesystem, a
 * PostgreSQL server that cannot be reached or a role without the
 * rights), PV_E_NOBUDGET (no budget for the dataset), PV_E_BUDGET (the
 * release would exceed the budget), PV_E_RANGE (bad arguments),
 * PV_E_OPTION (a URI with a password), PV_E_FORMAT (a release whose id
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

/* Whether path names a PostgreSQL store (postgresql:// or postgres://). */
int store_is_uri(const char *path);

/* The network filesystem f_type (statfs) names ("nfs", "cifs", ...), or
 * NULL for any other. */
const char *store_fstype_name(unsigned long magic);

/* Take the filesystem of every SQLite store to be name (a network one of
 * store_fstype_name's, or "local") instead of asking statfs; NULL asks
 * statfs again.  Process-wide: the tools call it for the environment
 * variable PRIVADA_STORE_FSTYPE (tests, and a filesystem known to lock
 * correctly).  PV_E_RANGE for an unknown name. */
int store_assume_fstype(const char *name);

/* Create a new store at path (mode 0600; an existing file is an error,
 * PV_E_IO with errno EEXIST) and write its schema; for a URI, create the
 * schema in that database (PV_E_IO, errno EEXIST, when it holds one). */
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
