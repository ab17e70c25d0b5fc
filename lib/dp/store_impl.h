/*
 * store_impl.h: the budget store's backends (internal to lib/dp/store*.c).
 * store.c holds what both backends share: choosing one by the path,
 * composing, checking and refusing (the charging semantics live there
 * once); a backend only moves rows in and out of its database and
 * provides the transactions of store.h's concurrency argument.
 */
#ifndef PRIVADA_STORE_IMPL_H
#define PRIVADA_STORE_IMPL_H
#include <stddef.h>
#include "ledger.h"
#include "store.h"

struct store_ops;

struct store {
	const struct store_ops *ops;
	void *db;			/* sqlite3 *, PGconn * */
	char *name;			/* the path or URI, for messages */
};

/* One release row as read from a backend (text in the backend's
 * memory, valid during the call of store_row_add). */
struct store_row {
	const char *id, *tool, *mechanism, *args, *time, *orders, *rdp;
	int relation, seeded;
	double epsilon, delta, tv, tv_epsilon;
};

/* Where a backend's rows go: the releases as ledger entries (room for
 * one more entry is kept), and, when rel is wanted, their status rows. */
struct store_rows {
	const char *dataset;
	struct ledger *l;
	size_t cap;
	int want_rel;
	struct store_release *rel;
};
int store_row_add(struct store_rows *r, const struct store_row *row,
    char *err, size_t errlen);
int store_dataset_add(struct store_status *st, const char *name,
    double epsilon, double delta, char *err, size_t errlen);

enum store_tx {
	STORE_TX_READ,		/* a consistent snapshot (status) */
	STORE_TX_SET,		/* store_set: serialized with every write */
	STORE_TX_CHARGE		/* store_charge: serialized with every
				 * write to the same dataset */
};

struct store_ops {
	/* Begin a transaction of kind tx; for SET and CHARGE read
	 * dataset's budget under the lock: 1 (found), 0 (no such dataset)
	 * or a PV_E_* code (then no transaction is open). */
	int (*begin)(struct store *s, enum store_tx tx, const char *dataset,
	    double *eps, double *delta, char *err, size_t errlen);
	int (*commit)(struct store *s, char *err, size_t errlen);
	void (*rollback)(struct store *s);	/* no-op outside one */
	/* Every release of r->dataset, in charge order, to store_row_add. */
	int (*releases)(struct store *s, struct store_rows *r, char *err,
	    size_t errlen);
	/* Every dataset, ordered by name (bytewise), to store_dataset_add. */
	int (*datasets)(struct store *s, struct store_status *st, char *err,
	    size_t errlen);
	int (*put_budget)(struct store *s, const char *dataset, double eps,
	    double delta, char *err, size_t errlen);
	int (*insert)(struct store *s, const struct ledger_entry *e,
	    const char *args, const char *now, const char *orders,
	    const char *rdp, char *err, size_t errlen);
	void (*close)(struct store *s);
};

int store_sqlite_init(const char *path, char *err, size_t errlen);
int store_sqlite_open(const char *path, int readonly, struct store *s,
    char *err, size_t errlen);
int store_pg_init(const char *uri, char *err, size_t errlen);
int store_pg_open(const char *uri, int readonly, struct store *s,
    char *err, size_t errlen);


/* The network filesystem under path (its name) or NULL: statfs, or the
 * type store_assume_fstype set. */
const char *store_netfs(const char *path);

#endif
