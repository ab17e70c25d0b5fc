/* store.c: the persistent privacy budget store (see store.h): the
 * backend chosen by the path, and the charging semantics both backends
 * share (store_sqlite.c, store_pg.c move the rows). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/vfs.h>
#include <time.h>

#include "pverr.h"
#include "rdp.h"
#include "store.h"
#include "store_impl.h"

int
store_is_uri(const char *path)
{
	return strncmp(path, "postgresql://", 13) == 0 ||
	    strncmp(path, "postgres://", 11) == 0;
}

/* A password in the URI would be printed in messages and recorded in
 * every release's arguments: refused (libpq reads ~/.pgpass and
 * PGPASSWORD instead). */
static int
check_uri(const char *uri, char *err, size_t errlen)
{
	const char *p = strstr(uri, "://") + 3;
	const char *at = strchr(p, '@'), *sl = strchr(p, '/');

	if ((at != NULL && (sl == NULL || at < sl) && memchr(p, ':',
	    (size_t)(at - p)) != NULL) || strstr(uri, "password=") != NULL)
		return pv_fail(PV_E_OPTION, err, errlen, "a budget store "
		    "URI must not hold a password (it would be recorded in "
		    "the releases' arguments): use ~/.pgpass or PGPASSWORD");
	return 0;
}

/* ---- network filesystems ---- */

static const struct {
	const char *name;
	unsigned long magic;
} netfs[] = {
	{ "nfs", 0x6969 },
	{ "smb", 0x517b },
	{ "cifs", 0xff534d42 },
	{ "smb2", 0xfe534d42 },
	{ "9p", 0x01021997 },
	{ "fuse", 0x65735546 },		/* sshfs, s3fs, ... */
	{ "lustre", 0x0bd00bd0 },
	{ "gpfs", 0x47504653 },
	{ "ceph", 0x00c36400 },
	{ "afs", 0x5346414f },
	{ "coda", 0x73757245 },
	{ "ncp", 0x564c },
	{ "beegfs", 0x19830326 },
	{ "orangefs", 0x20030528 },
};

static const char *assumed_fs;	/* store_assume_fstype; "local": none */

const char *
store_fstype_name(unsigned long magic)
{
	for (size_t i = 0; i < sizeof netfs / sizeof netfs[0]; i++)
		if (netfs[i].magic == (magic & 0xffffffffUL))
			return netfs[i].name;
	return NULL;
}

int
store_assume_fstype(const char *name)
{
	if (name == NULL || strcmp(name, "local") == 0) {
		assumed_fs = name;
		return 0;
	}
	for (size_t i = 0; i < sizeof netfs / sizeof netfs[0]; i++)
		if (strcasecmp(name, netfs[i].name) == 0) {
			assumed_fs = netfs[i].name;
			return 0;
		}
	return PV_E_RANGE;
}

const char *
store_netfs(const char *path)
{
	struct statfs sb;

	if (assumed_fs != NULL)
		return strcmp(assumed_fs, "local") == 0 ? NULL : assumed_fs;
	if (statfs(path, &sb) != 0)
		return NULL;
	return store_fstype_name((unsigned long)sb.f_type);
}

/* ---- open, init, close ---- */

/* A PostgreSQL error message, prefixed with the URI as SQLite's are with
 * the path. */
static int
uri_fail(int rc, const char *uri, char *err, size_t errlen)
{
	char *m;

	if (rc == 0 || err == NULL || errlen == 0 || (m = strdup(err)) == NULL)
		return rc;
	snprintf(err, errlen, "%s: %s", uri, m);
	free(m);
	return rc;
}

int
store_init(const char *path, char *err, size_t errlen)
{
	int rc;

	if (!store_is_uri(path))
		return store_sqlite_init(path, err, errlen);
	if ((rc = check_uri(path, err, errlen)) != 0)
		return rc;
	return uri_fail(store_pg_init(path, err, errlen), path, err, errlen);
}

int
store_open(const char *path, int readonly, struct store **out, char *err,
    size_t errlen)
{
	struct store *s;
	int rc;

	*out = NULL;
	if (store_is_uri(path) && (rc = check_uri(path, err, errlen)) != 0)
		return rc;
	if ((s = calloc(1, sizeof *s)) == NULL ||
	    (s->name = strdup(path)) == NULL) {
		free(s);
		return pv_fail(PV_E_NOMEM, err, errlen, "out of memory");
	}
	rc = store_is_uri(path) ? uri_fail(store_pg_open(path, readonly, s,
	    err, errlen), path, err, errlen) : store_sqlite_open(path,
	    readonly, s, err, errlen);
	if (rc != 0) {
		free(s->name);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	s->ops->close(s);
	free(s->name);
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
	if (s == NULL)
		return -1;
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

/* ---- rows from a backend ---- */

static void
copy_text(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src != NULL ? src : "");
}

/* Room for two more entries (the row, and the release being charged). */
static int
rows_grow(struct store_rows *r, char *err, size_t errlen)
{
	struct ledger *l = r->l;

	if (l->n + 1 >= r->cap) {
		size_t nc = r->cap ? 2 * r->cap : 16;
		struct ledger_entry *ne = realloc(l->e, nc * sizeof *ne);
		if (ne == NULL)
			return pv_fail(PV_E_NOMEM, err, errlen,
			    "out of memory");
		l->e = ne;
		if (r->want_rel) {
			struct store_release *nrel = realloc(r->rel, nc *
			    sizeof *nrel);
			if (nrel == NULL)
				return pv_fail(PV_E_NOMEM, err, errlen,
				    "out of memory");
			r->rel = nrel;
		}
		r->cap = nc;
	}
	return 0;
}

int
store_row_add(struct store_rows *r, const struct store_row *row, char *err,
    size_t errlen)
{
	struct ledger *l = r->l;
	struct ledger_entry *e;
	size_t no, nr;
	int rc;

	if ((rc = rows_grow(r, err, errlen)) != 0)
		return rc;
	e = &l->e[l->n];
	memset(e, 0, sizeof *e);
	copy_text(e->id, sizeof e->id, row->id);
	copy_text(e->tool, sizeof e->tool, row->tool);
	copy_text(e->mechanism, sizeof e->mechanism, row->mechanism);
	copy_text(e->dataset, sizeof e->dataset, r->dataset);
	e->relation = row->relation;
	e->seeded = row->seeded;
	e->epsilon = row->epsilon;
	e->delta = row->delta;
	e->tv = row->tv;
	e->tv_epsilon = row->tv_epsilon;
	if (curve_parse(row->orders, e->orders, LEDGER_MAX_ORDERS, &no) != 0 ||
	    curve_parse(row->rdp, e->rdp, LEDGER_MAX_ORDERS, &nr) != 0 ||
	    no != nr)
		return pv_fail(PV_E_STORE, err, errlen, "release %s: "
		    "malformed RDP curve", e->id);
	e->norders = no;
	if (r->want_rel) {
		struct store_release *s = &r->rel[l->n];
		memset(s, 0, sizeof *s);
		copy_text(s->id, sizeof s->id, row->id);
		copy_text(s->tool, sizeof s->tool, row->tool);
		copy_text(s->mechanism, sizeof s->mechanism, row->mechanism);
		copy_text(s->time, sizeof s->time, row->time);
		if ((s->args = strdup(row->args != NULL ? row->args : ""))
		    == NULL)
			return pv_fail(PV_E_NOMEM, err, errlen,
			    "out of memory");
	}
	l->n++;
	return 0;
}

int
store_dataset_add(struct store_status *st, const char *name, double epsilon,
    double delta, char *err, size_t errlen)
{
	struct store_dataset *d;

	if ((st->n & (st->n - 1)) == 0) {	/* 0, 1, 2, 4, ...: grow */
		struct store_dataset *nd = realloc(st->d, (st->n ? 2 * st->n :
		    1) * sizeof *nd);
		if (nd == NULL)
			return pv_fail(PV_E_NOMEM, err, errlen,
			    "out of memory");
		st->d = nd;
	}
	d = &st->d[st->n++];
	memset(d, 0, sizeof *d);
	copy_text(d->name, sizeof d->name, name);
	d->budget = epsilon;
	d->delta = delta;
	return 0;
}

/* Every release of dataset into l (room for one more entry kept); with
 * rel, their status rows too (*rel owned by the caller on success). */
static int
load_releases(struct store *s, const char *dataset, struct ledger *l,
    struct store_release **rel, char *err, size_t errlen)
{
	struct store_rows r = { 0 };
	int rc;

	memset(l, 0, sizeof *l);
	r.dataset = dataset;
	r.l = l;
	r.want_rel = rel != NULL;
	if ((rc = rows_grow(&r, err, errlen)) == 0)
		rc = s->ops->releases(s, &r, err, errlen);
	if (rc != 0 || rel == NULL) {
		if (r.rel != NULL)
			for (size_t i = 0; i < l->n; i++)
				free(r.rel[i].args);
		free(r.rel);
		if (rc != 0)
			ledger_free(l);
		return rc;
	}
	*rel = r.rel;
	return 0;
}

static int
total(const struct ledger *l, const char *dataset, double delta,
    struct ledger_total *t, char *err, size_t errlen)
{
	char why[200];

	if (ledger_total(l, dataset, delta, RDP_CONV_IMPROVED, t, why,
	    sizeof why) != 0)
		return pv_fail(PV_E_RANGE, err, errlen, "dataset %s: %s",
		    dataset, why);
	return 0;
}

int
store_set(struct store *s, const char *dataset, double epsilon,
    double delta, char *err, size_t errlen)
{
	struct ledger l = { 0 };
	struct ledger_total t;
	const char *bad;
	double be, bd;
	int rc, has;

	if ((bad = ledger_check_dataset(dataset)) != NULL)
		return pv_fail(PV_E_RANGE, err, errlen, "dataset '%s': %s",
		    dataset, bad);
	if (!(epsilon > 0) || !isfinite(epsilon) || !(delta > 0 && delta < 1))
		return pv_fail(PV_E_RANGE, err, errlen, "budget epsilon %g, "
		    "delta %g: epsilon > 0 and 0 < delta < 1", epsilon, delta);
	if ((has = s->ops->begin(s, STORE_TX_SET, dataset, &be, &bd, err,
	    errlen)) < 0)
		return has;
	if ((rc = load_releases(s, dataset, &l, NULL, err, errlen)) != 0)
		goto out;
	if (l.n > 0 && delta != bd) {
		rc = pv_fail(PV_E_RANGE, err, errlen, "dataset %s has "
		    "charged releases at delta %g: its delta cannot change",
		    dataset, bd);
		goto out;
	}
	if (l.n > 0) {
		if ((rc = total(&l, dataset, delta, &t, err, errlen)) != 0)
			goto out;
		if (t.epsilon > epsilon) {
			rc = pv_fail(PV_E_BUDGET, err, errlen, "dataset %s "
			    "has spent epsilon %.17g: the budget cannot drop "
			    "to %.17g", dataset, t.epsilon, epsilon);
			goto out;
		}
	}
	if ((rc = s->ops->put_budget(s, dataset, epsilon, delta, err,
	    errlen)) == 0)
		rc = s->ops->commit(s, err, errlen);
out:
	ledger_free(&l);
	s->ops->rollback(s);	/* not committed: nothing changed */
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
	char *ot = NULL, *rt = NULL, now[32];
	double be, bd;
	time_t tnow = time(NULL);
	struct tm tm;
	int rc, has;

	if (spent != NULL)
		*spent = NAN;
	if (e->norders > LEDGER_MAX_ORDERS || e->id[0] == '\0')
		return pv_fail(PV_E_RANGE, err, errlen, "malformed release");
	if ((has = s->ops->begin(s, STORE_TX_CHARGE, e->dataset, &be, &bd,
	    err, errlen)) <= 0) {
		s->ops->rollback(s);
		return has < 0 ? has : pv_fail(PV_E_NOBUDGET, err, errlen,
		    "dataset %s has no budget in the store (rdp-account "
		    "store set)", e->dataset);
	}
	if ((rc = load_releases(s, e->dataset, &l, NULL, err, errlen)) != 0)
		goto out;
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.e[i].id, e->id) == 0) {
			rc = same_release(&l.e[i], e) ? 0 : pv_fail(
			    PV_E_FORMAT, err, errlen, "release %s is already "
			    "charged with other contents", e->id);
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
		rc = pv_fail(PV_E_BUDGET, err, errlen, "dataset %s: this "
		    "release would bring the epsilon spent at delta %g to "
		    "%.17g, over its budget %.17g: refused, nothing charged",
		    e->dataset, bd, t.epsilon, be);
		goto out;
	}
	if ((ot = curve_text(e->orders, e->norders)) == NULL ||
	    (rt = curve_text(e->rdp, e->norders)) == NULL) {
		rc = pv_fail(PV_E_NOMEM, err, errlen, "out of memory");
		goto out;
	}
	gmtime_r(&tnow, &tm);
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if ((rc = s->ops->insert(s, e, args != NULL ? args : "", now, ot, rt,
	    err, errlen)) == 0)
		rc = s->ops->commit(s, err, errlen);
out:
	free(ot);
	free(rt);
	ledger_free(&l);
	s->ops->rollback(s);	/* not committed: nothing changed */
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
dataset_status(struct store *s, struct store_dataset *d, char *err,
    size_t errlen)
{
	struct ledger l = { 0 }, one = { 0 };
	struct ledger_total t;
	int rc;

	if ((rc = load_releases(s, d->name, &l, &d->rel, err, errlen)) != 0)
		return rc;
	d->nrel = l.n;
	d->spent = 0;
	if (l.n > 0) {
		if ((rc = total(&l, d->name, d->delta, &t, err, errlen)) != 0)
			goto out;
		d->spent = t.epsilon;
		d->order = t.order;
	}
	for (size_t i = 0; i < l.n; i++) {
		one.n = 1;
		one.e = &l.e[i];
		d->rel[i].epsilon = total(&one, d->name, d->delta, &t, NULL,
		    0) == 0 ? t.epsilon : NAN;
	}
out:
	ledger_free(&l);
	return rc;
}

int
store_status(struct store *s, struct store_status *out, char *err,
    size_t errlen)
{
	int rc;

	memset(out, 0, sizeof *out);
	if ((rc = s->ops->begin(s, STORE_TX_READ, NULL, NULL, NULL, err,
	    errlen)) < 0)
		return rc;
	rc = s->ops->datasets(s, out, err, errlen);
	for (size_t i = 0; i < out->n && rc == 0; i++)
		rc = dataset_status(s, &out->d[i], err, errlen);
	s->ops->rollback(s);
	if (rc != 0)
		store_status_free(out);
	return rc;
}

/* ---- one dataset's releases (storeplan.c, rdp-account ledger --store) ---- */

int
store_ledger(struct store *s, const char *dataset, struct ledger *l,
    double *budget, double *delta, char *err, size_t errlen)
{
	struct store_status st = { 0 };
	size_t i;
	int rc;

	memset(l, 0, sizeof *l);
	if ((rc = s->ops->begin(s, STORE_TX_READ, NULL, NULL, NULL, err,
	    errlen)) < 0)
		return rc;
	if ((rc = s->ops->datasets(s, &st, err, errlen)) != 0)
		goto out;
	for (i = 0; i < st.n && strcmp(st.d[i].name, dataset) != 0; i++)
		;
	if (i == st.n) {
		rc = pv_fail(PV_E_NOBUDGET, err, errlen, "dataset %s has no "
		    "budget in the store (rdp-account store set)", dataset);
		goto out;
	}
	*budget = st.d[i].budget;
	*delta = st.d[i].delta;
	rc = load_releases(s, dataset, l, NULL, err, errlen);
out:
	s->ops->rollback(s);	/* a read: nothing to commit */
	store_status_free(&st);
	return rc;
}
