/* store_pg.c: the budget store's PostgreSQL backend (see store.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pverr.h"
#include "store.h"
#include "store_impl.h"

/* The same tables as on SQLite; the version in a table of its own. */
static const char schema[] =
    "CREATE TABLE store_version (version integer NOT NULL);"
    "INSERT INTO store_version VALUES (1);"
    "CREATE TABLE datasets ("
    " name text PRIMARY KEY NOT NULL,"
    " epsilon double precision NOT NULL CHECK (epsilon > 0),"
    " delta double precision NOT NULL CHECK (delta > 0 AND delta < 1));"
    "CREATE TABLE releases ("
    " id text PRIMARY KEY NOT NULL,"
    " seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,"
    " dataset text NOT NULL REFERENCES datasets(name),"
    " tool text NOT NULL, mechanism text NOT NULL, args text NOT NULL,"
    " time text NOT NULL, relation integer NOT NULL,"
    " seeded integer NOT NULL, epsilon double precision NOT NULL,"
    " delta double precision NOT NULL, tv double precision NOT NULL,"
    " tv_epsilon double precision NOT NULL,"
    " orders text NOT NULL, rdp text NOT NULL);"
    "CREATE INDEX releases_dataset ON releases(dataset, seq);";

/* Session settings: doubles printed to round-trip (shortest exact),
 * lock waits bounded as SQLite's busy timeout. */
#define STR2(x) #x
#define STR(x) STR2(x)
static const char session[] =
    "SET extra_float_digits = 3; SET client_min_messages = warning;"
    "SET lock_timeout = " STR(STORE_BUSY_MS) ";";

static void
quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

/* msg without its trailing newline, for a message of ours. */
static int
pgfail(int code, const char *msg, char *err, size_t errlen, const char *what)
{
	size_t n = strlen(msg);

	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return pv_fail(code, err, errlen, "%s: %.*s", what, (int)n, msg);
}

static int
resfail(PGresult *res, PGconn *c, char *err, size_t errlen, const char *what)
{
	const char *m = res != NULL ? PQresultErrorMessage(res) :
	    PQerrorMessage(c);
	int rc = pgfail(PV_E_STORE, m, err, errlen, what);

	PQclear(res);
	return rc;
}

/* Run sql (no result rows wanted). */
static int
run(PGconn *c, const char *sql, char *err, size_t errlen)
{
	PGresult *res = PQexec(c, sql);

	if (res == NULL || PQresultStatus(res) != PGRES_COMMAND_OK)
		return resfail(res, c, err, errlen, sql);
	PQclear(res);
	return 0;
}

/* A query with text parameters; *out holds its rows. */
static int
query(PGconn *c, const char *sql, int n, const char *const *p,
    PGresult **out, char *err, size_t errlen, const char *what)
{
	PGresult *res = PQexecParams(c, sql, n, NULL, p, NULL, NULL, 0);
	ExecStatusType t = res != NULL ? PQresultStatus(res) :
	    PGRES_FATAL_ERROR;

	*out = NULL;
	if (t != PGRES_TUPLES_OK && t != PGRES_COMMAND_OK)
		return resfail(res, c, err, errlen, what);
	*out = res;
	return 0;
}

static double
num(PGresult *res, int row, int col)
{
	return strtod(PQgetvalue(res, row, col), NULL);
}

static void
pg_rollback(struct store *s)
{
	PGTransactionStatusType t = PQtransactionStatus(s->db);

	if (t == PQTRANS_INTRANS || t == PQTRANS_INERROR)
		PQclear(PQexec(s->db, "ROLLBACK"));
}

/* A connection, its session set: PV_E_STORE when the server cannot be
 * reached or refuses us. */
static int
connect_db(const char *uri, int readonly, PGconn **out, char *err,
    size_t errlen)
{
	PGconn *c;
	int rc;

	*out = NULL;
	if ((c = PQconnectdb(uri)) == NULL)
		return pv_fail(PV_E_NOMEM, err, errlen, "out of memory");
	if (PQstatus(c) != CONNECTION_OK) {
		rc = pgfail(PV_E_STORE, PQerrorMessage(c), err, errlen,
		    "cannot connect");
		PQfinish(c);
		return rc;
	}
	PQsetNoticeProcessor(c, quiet, NULL);
	if ((rc = run(c, session, err, errlen)) != 0 || (readonly &&
	    (rc = run(c, "SET default_transaction_read_only = on", err,
	    errlen)) != 0)) {
		PQfinish(c);
		return rc;
	}
	*out = c;
	return 0;
}

/* 1 when the database holds a store (its version in *version), 0 when
 * not, or a PV_E_* code. */
static int
has_store(PGconn *c, int *version, char *err, size_t errlen)
{
	PGresult *res;
	int rc;

	if ((rc = query(c, "SELECT to_regclass('store_version') IS NOT NULL",
	    0, NULL, &res, err, errlen, "version")) != 0)
		return rc;
	rc = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (rc == 0)
		return 0;
	if ((rc = query(c, "SELECT version FROM store_version", 0, NULL, &res,
	    err, errlen, "version")) != 0)
		return rc;
	*version = PQntuples(res) == 1 ? atoi(PQgetvalue(res, 0, 0)) : -1;
	PQclear(res);
	return 1;
}

int
store_pg_init(const char *uri, char *err, size_t errlen)
{
	PGconn *c;
	struct store s = { 0 };
	int rc, version;

	if ((rc = connect_db(uri, 0, &c, err, errlen)) != 0)
		return rc;
	s.db = c;
	if ((rc = run(c, "BEGIN", err, errlen)) != 0)
		goto out;
	if ((rc = has_store(c, &version, err, errlen)) < 0)
		goto out;
	if (rc == 1) {
		rc = pv_fail(PV_E_IO, err, errlen, "the database already "
		    "holds a budget store (version %d)", version);
		goto out;
	}
	if ((rc = run(c, schema, err, errlen)) == 0)
		rc = run(c, "COMMIT", err, errlen);
out:
	pg_rollback(&s);
	PQfinish(c);
	if (rc == PV_E_IO)
		errno = EEXIST;
	return rc;
}

/* The concurrency argument is in store.h. */
static int
pg_begin(struct store *s, enum store_tx tx, const char *dataset, double *eps,
    double *delta, char *err, size_t errlen)
{
	PGconn *c = s->db;
	PGresult *res;
	int rc;

	if (tx == STORE_TX_READ)
		return run(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
		    err, errlen);
	if ((rc = run(c, "BEGIN ISOLATION LEVEL READ COMMITTED", err, errlen))
	    != 0)
		return rc;
	if (tx == STORE_TX_SET && (rc = run(c, "LOCK TABLE datasets IN SHARE "
	    "ROW EXCLUSIVE MODE", err, errlen)) != 0)
		goto fail;
	if ((rc = query(c, tx == STORE_TX_SET ? "SELECT epsilon, delta FROM "
	    "datasets WHERE name = $1" : "SELECT epsilon, delta FROM datasets "
	    "WHERE name = $1 FOR UPDATE", 1, &dataset, &res, err, errlen,
	    "budget")) != 0)
		goto fail;
	rc = PQntuples(res) == 1;
	if (rc) {
		*eps = num(res, 0, 0);
		*delta = num(res, 0, 1);
	}
	PQclear(res);
	return rc;
fail:
	pg_rollback(s);
	return rc;
}

static int
pg_commit(struct store *s, char *err, size_t errlen)
{
	return run(s->db, "COMMIT", err, errlen);
}

static int
pg_releases(struct store *s, struct store_rows *r, char *err, size_t errlen)
{
	PGresult *res;
	struct store_row row;
	int rc;

	if ((rc = query(s->db, "SELECT id, tool, mechanism, args, time, "
	    "relation, seeded, epsilon, delta, tv, tv_epsilon, orders, rdp "
	    "FROM releases WHERE dataset = $1 ORDER BY seq", 1, &r->dataset,
	    &res, err, errlen, "releases")) != 0)
		return rc;
	for (int i = 0; i < PQntuples(res) && rc == 0; i++) {
		row.id = PQgetvalue(res, i, 0);
		row.tool = PQgetvalue(res, i, 1);
		row.mechanism = PQgetvalue(res, i, 2);
		row.args = PQgetvalue(res, i, 3);
		row.time = PQgetvalue(res, i, 4);
		row.relation = atoi(PQgetvalue(res, i, 5));
		row.seeded = atoi(PQgetvalue(res, i, 6));
		row.epsilon = num(res, i, 7);
		row.delta = num(res, i, 8);
		row.tv = num(res, i, 9);
		row.tv_epsilon = num(res, i, 10);
		row.orders = PQgetvalue(res, i, 11);
		row.rdp = PQgetvalue(res, i, 12);
		rc = store_row_add(r, &row, err, errlen);
	}
	PQclear(res);
	return rc;
}

static int
pg_datasets(struct store *s, struct store_status *out, char *err,
    size_t errlen)
{
	PGresult *res;
	int rc;

	/* COLLATE "C": bytewise, as SQLite's BINARY. */
	if ((rc = query(s->db, "SELECT name, epsilon, delta FROM datasets "
	    "ORDER BY name COLLATE \"C\"", 0, NULL, &res, err, errlen,
	    "status")) != 0)
		return rc;
	for (int i = 0; i < PQntuples(res) && rc == 0; i++)
		rc = store_dataset_add(out, PQgetvalue(res, i, 0),
		    num(res, i, 1), num(res, i, 2), err, errlen);
	PQclear(res);
	return rc;
}

static int
pg_put_budget(struct store *s, const char *dataset, double eps,
    double delta, char *err, size_t errlen)
{
	char e[32], d[32];
	const char *p[3] = { dataset, e, d };
	PGresult *res;
	int rc;

	snprintf(e, sizeof e, "%.17g", eps);
	snprintf(d, sizeof d, "%.17g", delta);
	if ((rc = query(s->db, "INSERT INTO datasets (name, epsilon, delta) "
	    "VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET epsilon = "
	    "$2, delta = $3", 3, p, &res, err, errlen, "set")) == 0)
		PQclear(res);
	return rc;
}

static int
pg_insert(struct store *s, const struct ledger_entry *e, const char *args,
    const char *now, const char *ot, const char *rt, char *err,
    size_t errlen)
{
	char v[6][32];
	const char *p[14] = { e->id, e->dataset, e->tool, e->mechanism, args,
	    now, v[0], v[1], v[2], v[3], v[4], v[5], ot, rt };
	PGresult *res;
	int rc;

	snprintf(v[0], sizeof v[0], "%d", e->relation);
	snprintf(v[1], sizeof v[1], "%d", e->seeded);
	snprintf(v[2], sizeof v[2], "%.17g", e->epsilon);
	snprintf(v[3], sizeof v[3], "%.17g", e->delta);
	snprintf(v[4], sizeof v[4], "%.17g", e->tv);
	snprintf(v[5], sizeof v[5], "%.17g", e->tv_epsilon);
	if ((rc = query(s->db, "INSERT INTO releases (id, dataset, tool, "
	    "mechanism, args, time, relation, seeded, epsilon, delta, tv, "
	    "tv_epsilon, orders, rdp) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
	    "$9, $10, $11, $12, $13, $14)", 14, p, &res, err, errlen,
	    "charge")) == 0)
		PQclear(res);
	return rc;
}

static void
pg_close(struct store *s)
{
	PQfinish(s->db);
}

static const struct store_ops pg_ops = {
	pg_begin, pg_commit, pg_rollback, pg_releases, pg_datasets,
	pg_put_budget, pg_insert, pg_close
};

int
store_pg_open(const char *uri, int readonly, struct store *s, char *err,
    size_t errlen)
{
	PGconn *c;
	int rc, version = -1;

	if ((rc = connect_db(uri, readonly, &c, err, errlen)) != 0)
		return rc;
	if ((rc = has_store(c, &version, err, errlen)) <= 0) {
		PQfinish(c);
		return rc < 0 ? rc : pv_fail(PV_E_VERSION, err, errlen,
		    "the database holds no budget store (rdp-account store "
		    "init)");
	}
	if (version != STORE_VERSION) {
		PQfinish(c);
		return pv_fail(PV_E_VERSION, err, errlen, "budget store "
		    "version %d, this privada reads version %d", version,
		    STORE_VERSION);
	}
	s->ops = &pg_ops;
	s->db = c;
	return 0;
}
