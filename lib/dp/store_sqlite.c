/* store_sqlite.c: the budget store's SQLite backend (see store.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pverr.h"
#include "store.h"
#include "store_impl.h"

static const char schema[] =
    "CREATE TABLE datasets ("
    " name TEXT PRIMARY KEY NOT NULL,"
    " epsilon REAL NOT NULL CHECK (epsilon > 0),"
    " delta REAL NOT NULL CHECK (delta > 0 AND delta < 1));"
    "CREATE TABLE releases ("
    " id TEXT PRIMARY KEY NOT NULL,"
    " seq INTEGER NOT NULL UNIQUE,"
    " dataset TEXT NOT NULL REFERENCES datasets(name),"
    " tool TEXT NOT NULL, mechanism TEXT NOT NULL, args TEXT NOT NULL,"
    " time TEXT NOT NULL, relation INTEGER NOT NULL,"
    " seeded INTEGER NOT NULL, epsilon REAL NOT NULL, delta REAL NOT NULL,"
    " tv REAL NOT NULL, tv_epsilon REAL NOT NULL,"
    " orders TEXT NOT NULL, rdp TEXT NOT NULL);"
    "CREATE INDEX releases_dataset ON releases(dataset, seq);";

/* A database error: PV_E_STORE with SQLite's message. */
static int
dbfail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
	int rc = sqlite3_errcode(db);

	if (rc == SQLITE_NOMEM)
		return pv_fail(PV_E_NOMEM, err, errlen, "%s: out of memory",
		    what);
	if (rc == SQLITE_NOTADB)
		return pv_fail(PV_E_VERSION, err, errlen, "%s: not a budget "
		    "store (%s)", what, sqlite3_errmsg(db));
	return pv_fail(PV_E_STORE, err, errlen, "%s: %s", what,
	    sqlite3_errmsg(db));
}

static int
exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return dbfail(db, err, errlen, sql);
	return 0;
}

static void
sl_rollback(struct store *s)
{
	sqlite3 *db = s->db;

	if (!sqlite3_get_autocommit(db))
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/* SQLite's locks are POSIX advisory locks, which network filesystems do
 * not implement faithfully: refused there. */
static int
netfs_check(const char *path, char *err, size_t errlen)
{
	const char *fs;

	if ((fs = store_netfs(path)) != NULL)
		return pv_fail(PV_E_STORE, err, errlen, "%s: on a network "
		    "filesystem (%s), where SQLite's locking is not safe: "
		    "keep the store on a local disk, or use a PostgreSQL "
		    "store (postgresql://...)", path, fs);
	return 0;
}

int
store_sqlite_init(const char *path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	struct store s = { 0 };
	int fd, rc;

	/* The file first, so that its mode is ours: SQLite gives its
	 * journal the database file's mode. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600))
	    < 0)
		return pv_fail(PV_E_IO, err, errlen, "%s: %s", path,
		    strerror(errno));
	(void)fchmod(fd, 0600);
	close(fd);
	if ((rc = netfs_check(path, err, errlen)) != 0) {
		unlink(path);
		return rc;
	}
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL)
	    != SQLITE_OK) {
		rc = db != NULL ? dbfail(db, err, errlen, path) :
		    pv_fail(PV_E_NOMEM, err, errlen, "out of memory");
		sqlite3_close(db);
		unlink(path);
		return rc;
	}
	s.db = db;
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	if ((rc = exec(db, "BEGIN IMMEDIATE", err, errlen)) != 0 ||
	    (rc = exec(db, schema, err, errlen)) != 0 ||
	    (rc = exec(db, "PRAGMA user_version = 1", err, errlen)) != 0 ||
	    (rc = exec(db, "COMMIT", err, errlen)) != 0) {
		sl_rollback(&s);
		sqlite3_close(db);
		unlink(path);
		return rc;
	}
	if (sqlite3_close(db) != SQLITE_OK)
		return pv_fail(PV_E_STORE, err, errlen, "%s: close failed",
		    path);
	return 0;
}

/* BEGIN IMMEDIATE takes the database's write lock: every charge and
 * set, of any dataset, runs alone. */
static int
sl_begin(struct store *s, enum store_tx tx, const char *dataset, double *eps,
    double *delta, char *err, size_t errlen)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	int rc;

	if ((rc = exec(db, tx == STORE_TX_READ ? "BEGIN" : "BEGIN IMMEDIATE",
	    err, errlen)) != 0 || tx == STORE_TX_READ)
		return rc;
	if (sqlite3_prepare_v2(db, "SELECT epsilon, delta FROM datasets "
	    "WHERE name = ?1", -1, &st, NULL) != SQLITE_OK) {
		rc = dbfail(db, err, errlen, "budget");
		sl_rollback(s);
		return rc;
	}
	sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*eps = sqlite3_column_double(st, 0);
		*delta = sqlite3_column_double(st, 1);
		rc = 1;
	} else if (rc == SQLITE_DONE) {
		rc = 0;
	} else {
		rc = dbfail(db, err, errlen, "budget");
	}
	sqlite3_finalize(st);
	if (rc < 0)
		sl_rollback(s);
	return rc;
}

static int
sl_commit(struct store *s, char *err, size_t errlen)
{
	return exec(s->db, "COMMIT", err, errlen);
}

static int
sl_releases(struct store *s, struct store_rows *r, char *err, size_t errlen)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	struct store_row row;
	int rc, step;

	if (sqlite3_prepare_v2(db, "SELECT id, tool, mechanism, args, time, "
	    "relation, seeded, epsilon, delta, tv, tv_epsilon, orders, rdp "
	    "FROM releases WHERE dataset = ?1 ORDER BY seq", -1, &st, NULL)
	    != SQLITE_OK)
		return dbfail(db, err, errlen, "releases");
	sqlite3_bind_text(st, 1, r->dataset, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		row.id = (const char *)sqlite3_column_text(st, 0);
		row.tool = (const char *)sqlite3_column_text(st, 1);
		row.mechanism = (const char *)sqlite3_column_text(st, 2);
		row.args = (const char *)sqlite3_column_text(st, 3);
		row.time = (const char *)sqlite3_column_text(st, 4);
		row.relation = sqlite3_column_int(st, 5);
		row.seeded = sqlite3_column_int(st, 6);
		row.epsilon = sqlite3_column_double(st, 7);
		row.delta = sqlite3_column_double(st, 8);
		row.tv = sqlite3_column_double(st, 9);
		row.tv_epsilon = sqlite3_column_double(st, 10);
		row.orders = (const char *)sqlite3_column_text(st, 11);
		row.rdp = (const char *)sqlite3_column_text(st, 12);
		if ((rc = store_row_add(r, &row, err, errlen)) != 0) {
			sqlite3_finalize(st);
			return rc;
		}
	}
	sqlite3_finalize(st);
	if (step != SQLITE_DONE)
		return dbfail(db, err, errlen, "releases");
	return 0;
}

static int
sl_datasets(struct store *s, struct store_status *out, char *err,
    size_t errlen)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	int rc = 0, step;

	if (sqlite3_prepare_v2(db, "SELECT name, epsilon, delta FROM "
	    "datasets ORDER BY name", -1, &st, NULL) != SQLITE_OK)
		return dbfail(db, err, errlen, "status");
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = store_dataset_add(out, (const char *)
		    sqlite3_column_text(st, 0), sqlite3_column_double(st, 1),
		    sqlite3_column_double(st, 2), err, errlen)) != 0)
			break;
	if (rc == 0 && step != SQLITE_DONE)
		rc = dbfail(db, err, errlen, "status");
	sqlite3_finalize(st);
	return rc;
}

static int
sl_put_budget(struct store *s, const char *dataset, double eps,
    double delta, char *err, size_t errlen)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO datasets (name, epsilon, "
	    "delta) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO UPDATE SET "
	    "epsilon = ?2, delta = ?3", -1, &st, NULL) != SQLITE_OK)
		return dbfail(db, err, errlen, "set");
	sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, eps);
	sqlite3_bind_double(st, 3, delta);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = dbfail(db, err, errlen, "set");
	sqlite3_finalize(st);
	return rc;
}

static int
sl_insert(struct store *s, const struct ledger_entry *e, const char *args,
    const char *now, const char *ot, const char *rt, char *err,
    size_t errlen)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "INSERT INTO releases (id, seq, "
	    "dataset, tool, mechanism, args, time, relation, seeded, epsilon, "
	    "delta, tv, tv_epsilon, orders, rdp) VALUES (?1, (SELECT "
	    "coalesce(max(seq), 0) + 1 FROM releases), ?2, ?3, ?4, ?5, ?6, "
	    "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)", -1, &st, NULL)
	    != SQLITE_OK)
		return dbfail(db, err, errlen, "charge");
	sqlite3_bind_text(st, 1, e->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, e->dataset, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, e->tool, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, e->mechanism, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, args, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, now, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 7, e->relation);
	sqlite3_bind_int(st, 8, e->seeded);
	sqlite3_bind_double(st, 9, e->epsilon);
	sqlite3_bind_double(st, 10, e->delta);
	sqlite3_bind_double(st, 11, e->tv);
	sqlite3_bind_double(st, 12, e->tv_epsilon);
	sqlite3_bind_text(st, 13, ot, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 14, rt, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = dbfail(db, err, errlen, "charge");
	sqlite3_finalize(st);
	return rc;
}

static void
sl_close(struct store *s)
{
	sqlite3_close(s->db);
}

static const struct store_ops sqlite_ops = {
	sl_begin, sl_commit, sl_rollback, sl_releases, sl_datasets,
	sl_put_budget, sl_insert, sl_close
};

int
store_sqlite_open(const char *path, int readonly, struct store *s,
    char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc, version = -1;

	if (access(path, F_OK) != 0)
		return pv_fail(PV_E_IO, err, errlen, "%s: %s", path,
		    strerror(errno));
	if ((rc = netfs_check(path, err, errlen)) != 0)
		return rc;
	if (sqlite3_open_v2(path, &db, readonly ? SQLITE_OPEN_READONLY :
	    SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = db != NULL ? dbfail(db, err, errlen, path) :
		    pv_fail(PV_E_NOMEM, err, errlen, "out of memory");
		sqlite3_close(db);
		return rc;
	}
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL)
	    != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW) {
		rc = dbfail(db, err, errlen, path);
		sqlite3_finalize(st);
		sqlite3_close(db);
		return rc;
	}
	version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version != STORE_VERSION) {
		sqlite3_close(db);
		return pv_fail(PV_E_VERSION, err, errlen, "%s: budget store "
		    "version %d, this privada reads version %d", path, version,
		    STORE_VERSION);
	}
	s->ops = &sqlite_ops;
	s->db = db;
	return 0;
}
