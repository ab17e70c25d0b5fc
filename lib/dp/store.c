/* store.c: the persistent privacy budget store on SQLite (see store.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pverr.h"
#include "rdp.h"
#include "store.h"

struct store {
	sqlite3 *db;
};

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

__attribute__((format(printf, 4, 5))) static int
sfail(int code, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* A database error: PV_E_STORE with SQLite's message. */
static int
dbfail(sqlite3 *db, char *err, size_t errlen, const char *what)
{
	int rc = sqlite3_errcode(db);

	if (rc == SQLITE_NOMEM)
		return sfail(PV_E_NOMEM, err, errlen, "%s: out of memory", what);
	if (rc == SQLITE_NOTADB)
		return sfail(PV_E_VERSION, err, errlen, "%s: not a budget "
		    "store (%s)", what, sqlite3_errmsg(db));
	return sfail(PV_E_STORE, err, errlen, "%s: %s", what,
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
rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int
store_init(const char *path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int fd, rc;

	/* The file first, so that its mode is ours: SQLite gives its
	 * journal the database file's mode. */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600))
	    < 0)
		return sfail(PV_E_IO, err, errlen, "%s: %s", path,
		    strerror(errno));
	(void)fchmod(fd, 0600);
	close(fd);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL)
	    != SQLITE_OK) {
		rc = db != NULL ? dbfail(db, err, errlen, path) :
		    sfail(PV_E_NOMEM, err, errlen, "out of memory");
		sqlite3_close(db);
		unlink(path);
		return rc;
	}
	sqlite3_busy_timeout(db, STORE_BUSY_MS);
	if ((rc = exec(db, "BEGIN IMMEDIATE", err, errlen)) != 0 ||
	    (rc = exec(db, schema, err, errlen)) != 0 ||
	    (rc = exec(db, "PRAGMA user_version = 1", err, errlen)) != 0 ||
	    (rc = exec(db, "COMMIT", err, errlen)) != 0) {
		rollback(db);
		sqlite3_close(db);
		unlink(path);
		return rc;
	}
	if (sqlite3_close(db) != SQLITE_OK)
		return sfail(PV_E_STORE, err, errlen, "%s: close failed", path);
	return 0;
}

int
store_open(const char *path, int readonly, struct store **out, char *err,
    size_t errlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc, version = -1;

	*out = NULL;
	if (access(path, F_OK) != 0)
		return sfail(PV_E_IO, err, errlen, "%s: %s", path,
		    strerror(errno));
	if (sqlite3_open_v2(path, &db, readonly ? SQLITE_OPEN_READONLY :
	    SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		rc = db != NULL ? dbfail(db, err, errlen, path) :
		    sfail(PV_E_NOMEM, err, errlen, "out of memory");
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
		return sfail(PV_E_VERSION, err, errlen, "%s: budget store "
		    "version %d, this privada reads version %d", path, version,
		    STORE_VERSION);
	}
	if ((*out = calloc(1, sizeof **out)) == NULL) {
		sqlite3_close(db);
		return sfail(PV_E_NOMEM, err, errlen, "out of memory");
	}
	(*out)->db = db;
	return 0;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	sqlite3_close(s->db);
	free(s);
}

/* ---- curves as text ---- */

static char *
curve_text(const double *v, size_t n)
{
	char *s, *p;

	if ((s = malloc(n * 26 + 1)) == NULL)
		return NULL;
	p = s;
	*p = '\0';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s%.17g", i ? "," : "", v[i]);
	return s;
}

static int
curve_parse(const char *s, double *v, size_t max, size_t *n)
{
	char *end;

	*n = 0;
	if (*s == '\0')
		return 0;
	for (;;) {
		if (*n == max)
			return -1;
		errno = 0;
		v[*n] = strtod(s, &end);
		/* +inf: an order where the bound is infinite (PATE's
		 * data-dependent curves), skipped by the conversion. */
		if (end == s || (errno != 0 && v[*n] != INFINITY) ||
		    isnan(v[*n]) || v[*n] == -INFINITY)
			return -1;
		(*n)++;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* ---- reading releases into a ledger ---- */

static const char release_cols[] =
    "id, tool, mechanism, args, time, relation, seeded, epsilon, delta, tv, "
    "tv_epsilon, orders, rdp";

static void
copy_text(char *dst, size_t len, const unsigned char *src)
{
	snprintf(dst, len, "%s", src != NULL ? (const char *)src : "");
}

/* Row of a SELECT release_cols into e (dataset set). */
static int
row_entry(sqlite3_stmt *st, const char *dataset, struct ledger_entry *e)
{
	size_t no, nr;

	memset(e, 0, sizeof *e);
	copy_text(e->id, sizeof e->id, sqlite3_column_text(st, 0));
	copy_text(e->tool, sizeof e->tool, sqlite3_column_text(st, 1));
	copy_text(e->mechanism, sizeof e->mechanism,
	    sqlite3_column_text(st, 2));
	snprintf(e->dataset, sizeof e->dataset, "%s", dataset);
	e->relation = sqlite3_column_int(st, 5);
	e->seeded = sqlite3_column_int(st, 6);
	e->epsilon = sqlite3_column_double(st, 7);
	e->delta = sqlite3_column_double(st, 8);
	e->tv = sqlite3_column_double(st, 9);
	e->tv_epsilon = sqlite3_column_double(st, 10);
	if (curve_parse((const char *)sqlite3_column_text(st, 11), e->orders,
	    LEDGER_MAX_ORDERS, &no) != 0 ||
	    curve_parse((const char *)sqlite3_column_text(st, 12), e->rdp,
	    LEDGER_MAX_ORDERS, &nr) != 0 || no != nr)
		return -1;
	e->norders = no;
	return 0;
}

/* The dataset's budget: 1, 0 (no such dataset) or a PV_E_* code. */
static int
get_budget(sqlite3 *db, const char *dataset, double *eps, double *delta,
    char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT epsilon, delta FROM datasets "
	    "WHERE name = ?1", -1, &st, NULL) != SQLITE_OK)
		return dbfail(db, err, errlen, "budget");
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
	return rc;
}

/* Append every release of dataset to l (room for one more entry). */
static int
load_releases(sqlite3 *db, const char *dataset, struct ledger *l,
    char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	char sql[256];
	size_t cap = 16;
	int rc;

	memset(l, 0, sizeof *l);
	if ((l->e = calloc(cap, sizeof *l->e)) == NULL)
		return sfail(PV_E_NOMEM, err, errlen, "out of memory");
	snprintf(sql, sizeof sql, "SELECT %s FROM releases WHERE dataset = ?1 "
	    "ORDER BY seq", release_cols);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return dbfail(db, err, errlen, "releases");
	sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (l->n + 1 >= cap) {
			struct ledger_entry *ne = realloc(l->e, 2 * cap *
			    sizeof *ne);
			if (ne == NULL) {
				sqlite3_finalize(st);
				return sfail(PV_E_NOMEM, err, errlen,
				    "out of memory");
			}
			l->e = ne;
			cap *= 2;
		}
		if (row_entry(st, dataset, &l->e[l->n]) != 0) {
			rc = sfail(PV_E_STORE, err, errlen, "release %s: "
			    "malformed RDP curve", sqlite3_column_text(st, 0));
			sqlite3_finalize(st);
			return rc;
		}
		l->n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return dbfail(db, err, errlen, "releases");
	return 0;
}

static int
total(const struct ledger *l, const char *dataset, double delta,
    struct ledger_total *t, char *err, size_t errlen)
{
	char why[200];

	if (ledger_total(l, dataset, delta, RDP_CONV_IMPROVED, t, why,
	    sizeof why) != 0)
		return sfail(PV_E_RANGE, err, errlen, "dataset %s: %s",
		    dataset, why);
	return 0;
}

int
store_set(struct store *s, const char *dataset, double epsilon,
    double delta, char *err, size_t errlen)
{
	struct ledger l;
	struct ledger_total t;
	sqlite3_stmt *st = NULL;
	const char *bad;
	double be, bd;
	int rc, has;

	if ((bad = ledger_check_dataset(dataset)) != NULL)
		return sfail(PV_E_RANGE, err, errlen, "dataset '%s': %s",
		    dataset, bad);
	if (!(epsilon > 0) || !isfinite(epsilon) || !(delta > 0 && delta < 1))
		return sfail(PV_E_RANGE, err, errlen, "budget epsilon %g, "
		    "delta %g: epsilon > 0 and 0 < delta < 1", epsilon, delta);
	if ((rc = exec(s->db, "BEGIN IMMEDIATE", err, errlen)) != 0)
		return rc;
	if ((has = get_budget(s->db, dataset, &be, &bd, err, errlen)) < 0) {
		rollback(s->db);
		return has;
	}
	if ((rc = load_releases(s->db, dataset, &l, err, errlen)) != 0)
		goto out;
	if (l.n > 0 && delta != bd) {
		rc = sfail(PV_E_RANGE, err, errlen, "dataset %s has charged "
		    "releases at delta %g: its delta cannot change", dataset,
		    bd);
		goto out;
	}
	if (l.n > 0) {
		if ((rc = total(&l, dataset, delta, &t, err, errlen)) != 0)
			goto out;
		if (t.epsilon > epsilon) {
			rc = sfail(PV_E_BUDGET, err, errlen, "dataset %s has "
			    "spent epsilon %.17g: the budget cannot drop to "
			    "%.17g", dataset, t.epsilon, epsilon);
			goto out;
		}
	}
	if (sqlite3_prepare_v2(s->db, "INSERT INTO datasets (name, epsilon, "
	    "delta) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO UPDATE SET "
	    "epsilon = ?2, delta = ?3", -1, &st, NULL) != SQLITE_OK) {
		rc = dbfail(s->db, err, errlen, "set");
		goto out;
	}
	sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
	sqlite3_bind_double(st, 2, epsilon);
	sqlite3_bind_double(st, 3, delta);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = dbfail(s->db, err, errlen, "set");
	sqlite3_finalize(st);
	if (rc == 0)
		rc = exec(s->db, "COMMIT", err, errlen);
out:
	ledger_free(&l);
	rollback(s->db);	/* not committed: nothing changed */
	return rc;
}

/* Whether the stored entry a equals the release b being charged. */
static int
same_release(const struct ledger_entry *a, const struct ledger_entry *b)
{
	if (strcmp(a->tool, b->tool) != 0 || a->relation != b->relation ||
	    a->norders != b->norders || a->delta != b->delta ||
	    a->epsilon != b->epsilon)
		return 0;
	for (size_t i = 0; i < a->norders; i++)
		if (a->orders[i] != b->orders[i] || a->rdp[i] != b->rdp[i])
			return 0;
	return 1;
}

int
store_charge(struct store *s, const struct ledger_entry *e, const char *args,
    double *spent, char *err, size_t errlen)
{
	struct ledger l = { 0 };
	struct ledger_total t;
	sqlite3_stmt *st = NULL;
	char *ot = NULL, *rt = NULL, now[32];
	double be, bd;
	time_t tnow = time(NULL);
	struct tm tm;
	int rc, has;

	if (spent != NULL)
		*spent = NAN;
	if (e->norders > LEDGER_MAX_ORDERS || e->id[0] == '\0')
		return sfail(PV_E_RANGE, err, errlen, "malformed release");
	if ((rc = exec(s->db, "BEGIN IMMEDIATE", err, errlen)) != 0)
		return rc;
	if ((has = get_budget(s->db, e->dataset, &be, &bd, err, errlen)) <= 0) {
		rollback(s->db);
		return has < 0 ? has : sfail(PV_E_NOBUDGET, err, errlen,
		    "dataset %s has no budget in the store (rdp-account "
		    "store set)", e->dataset);
	}
	if ((rc = load_releases(s->db, e->dataset, &l, err, errlen))
	    != 0)
		goto out;
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.e[i].id, e->id) == 0) {
			rc = same_release(&l.e[i], e) ? 0 : sfail(PV_E_FORMAT,
			    err, errlen, "release %s is already charged with "
			    "other contents", e->id);
			if (rc == 0 && spent != NULL &&
			    total(&l, e->dataset, bd, &t, NULL, 0) == 0)
				*spent = t.epsilon;
			goto out;
		}
	l.e[l.n] = *e;
	memset(&l.e[l.n].params, 0, sizeof l.e[l.n].params);
	l.n++;
	if ((rc = total(&l, e->dataset, bd, &t, err, errlen)) != 0)
		goto out;
	if (spent != NULL)
		*spent = t.epsilon;
	if (!(t.epsilon <= be)) {
		rc = sfail(PV_E_BUDGET, err, errlen, "dataset %s: this release "
		    "would bring the epsilon spent at delta %g to %.17g, over "
		    "its budget %.17g: refused, nothing charged", e->dataset,
		    bd, t.epsilon, be);
		goto out;
	}
	if ((ot = curve_text(e->orders, e->norders)) == NULL ||
	    (rt = curve_text(e->rdp, e->norders)) == NULL) {
		rc = sfail(PV_E_NOMEM, err, errlen, "out of memory");
		goto out;
	}
	gmtime_r(&tnow, &tm);
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (sqlite3_prepare_v2(s->db, "INSERT INTO releases (id, seq, "
	    "dataset, tool, mechanism, args, time, relation, seeded, epsilon, "
	    "delta, tv, tv_epsilon, orders, rdp) VALUES (?1, (SELECT "
	    "coalesce(max(seq), 0) + 1 FROM releases), ?2, ?3, ?4, ?5, ?6, "
	    "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)", -1, &st, NULL)
	    != SQLITE_OK) {
		rc = dbfail(s->db, err, errlen, "charge");
		goto out;
	}
	sqlite3_bind_text(st, 1, e->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, e->dataset, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, e->tool, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, e->mechanism, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, args != NULL ? args : "", -1, SQLITE_STATIC);
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
		rc = dbfail(s->db, err, errlen, "charge");
	sqlite3_finalize(st);
	if (rc == 0)
		rc = exec(s->db, "COMMIT", err, errlen);
out:
	free(ot);
	free(rt);
	ledger_free(&l);
	rollback(s->db);	/* not committed: nothing changed */
	return rc;
}

/* ---- status ---- */

void
store_status_free(struct store_status *st)
{
	for (size_t i = 0; i < st->n; i++) {
		for (size_t j = 0; j < st->d[i].nrel; j++)
			free(st->d[i].rel[j].args);
		free(st->d[i].rel);
	}
	free(st->d);
	memset(st, 0, sizeof *st);
}

static int
dataset_status(sqlite3 *db, struct store_dataset *d, char *err, size_t errlen)
{
	struct ledger l = { 0 }, one = { 0 };
	struct ledger_total t;
	sqlite3_stmt *st = NULL;
	char sql[256];
	int rc;

	if ((rc = load_releases(db, d->name, &l, err, errlen)) != 0)
		goto out;
	d->spent = 0;
	if (l.n > 0) {
		if ((rc = total(&l, d->name, d->delta, &t, err, errlen)) != 0)
			goto out;
		d->spent = t.epsilon;
		d->order = t.order;
	}
	if (l.n > 0 && (d->rel = calloc(l.n, sizeof *d->rel)) == NULL) {
		rc = sfail(PV_E_NOMEM, err, errlen, "out of memory");
		goto out;
	}
	snprintf(sql, sizeof sql, "SELECT %s FROM releases WHERE dataset = ?1 "
	    "ORDER BY seq", release_cols);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = dbfail(db, err, errlen, "status");
		goto out;
	}
	sqlite3_bind_text(st, 1, d->name, -1, SQLITE_STATIC);
	for (size_t i = 0; i < l.n && sqlite3_step(st) == SQLITE_ROW; i++) {
		struct store_release *r = &d->rel[i];
		const unsigned char *a = sqlite3_column_text(st, 3);
		copy_text(r->id, sizeof r->id, sqlite3_column_text(st, 0));
		copy_text(r->tool, sizeof r->tool, sqlite3_column_text(st, 1));
		copy_text(r->mechanism, sizeof r->mechanism,
		    sqlite3_column_text(st, 2));
		copy_text(r->time, sizeof r->time, sqlite3_column_text(st, 4));
		if ((r->args = strdup(a != NULL ? (const char *)a : ""))
		    == NULL) {
			rc = sfail(PV_E_NOMEM, err, errlen, "out of memory");
			break;
		}
		d->nrel = i + 1;
		one.n = 1;
		one.e = &l.e[i];
		r->epsilon = total(&one, d->name, d->delta, &t, NULL, 0) == 0 ?
		    t.epsilon : NAN;
	}
	sqlite3_finalize(st);
out:
	ledger_free(&l);
	return rc;
}

int
store_status(struct store *s, struct store_status *out, char *err,
    size_t errlen)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = 0, step;

	memset(out, 0, sizeof *out);
	if ((rc = exec(s->db, "BEGIN", err, errlen)) != 0)
		return rc;
	if (sqlite3_prepare_v2(s->db, "SELECT name, epsilon, delta FROM "
	    "datasets ORDER BY name", -1, &st, NULL) != SQLITE_OK) {
		rc = dbfail(s->db, err, errlen, "status");
		goto out;
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_dataset *d;
		if (out->n == cap) {
			size_t nc = cap ? 2 * cap : 8;
			struct store_dataset *nd = realloc(out->d, nc *
			    sizeof *nd);
			if (nd == NULL) {
				rc = sfail(PV_E_NOMEM, err, errlen,
				    "out of memory");
				goto out;
			}
			out->d = nd;
			cap = nc;
		}
		d = &out->d[out->n++];
		memset(d, 0, sizeof *d);
		copy_text(d->name, sizeof d->name, sqlite3_column_text(st, 0));
		d->budget = sqlite3_column_double(st, 1);
		d->delta = sqlite3_column_double(st, 2);
	}
	if (step != SQLITE_DONE) {
		rc = dbfail(s->db, err, errlen, "status");
		goto out;
	}
	for (size_t i = 0; i < out->n && rc == 0; i++)
		rc = dataset_status(s->db, &out->d[i], err, errlen);
out:
	sqlite3_finalize(st);
	rollback(s->db);
	if (rc != 0)
		store_status_free(out);
	return rc;
}

/* ---- one dataset's releases (storeplan.c, rdp-account ledger --store) ---- */

int
store_ledger(struct store *s, const char *dataset, struct ledger *l,
    double *budget, double *delta, char *err, size_t errlen)
{
	int rc, has;

	memset(l, 0, sizeof *l);
	if ((rc = exec(s->db, "BEGIN", err, errlen)) != 0)
		return rc;
	if ((has = get_budget(s->db, dataset, budget, delta, err, errlen))
	    <= 0) {
		rollback(s->db);
		return has < 0 ? has : sfail(PV_E_NOBUDGET, err, errlen,
		    "dataset %s has no budget in the store (rdp-account "
		    "store set)", dataset);
	}
	if ((rc = load_releases(s->db, dataset, l, err, errlen)) != 0)
		ledger_free(l);
	rollback(s->db);	/* a read: nothing to commit */
	return rc;
}
