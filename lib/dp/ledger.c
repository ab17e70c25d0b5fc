/* ledger.c: the dp.* privacy ledger in stream metadata (see ledger.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"
#include "noise_fast.h"
#include "rdp.h"

__attribute__((format(printf, 3, 4))) static int
lfail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *
ledger_check_dataset(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > LEDGER_MAX_NAME)
		return "dataset name must have 1 to 64 characters";
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
			return "dataset name may only use [a-z0-9_]";
	return NULL;
}

int
ledger_mark_raw(struct ts_meta *m, const char *dataset, int kind, char *err,
    size_t errlen)
{
	char key[16 + LEDGER_MAX_NAME];
	const char *bad = ledger_check_dataset(dataset), *old;

	if (bad != NULL)
		return lfail(err, errlen, "'%s': %s", dataset, bad);
	snprintf(key, sizeof key, "dp.raw.%s", dataset);
	old = ts_meta_get(m, key);
	if (old != NULL && strcmp(old, "aggregate") == 0)
		return 0;
	if (ts_meta_set(m, key, kind == LEDGER_AGGREGATE ? "aggregate" :
	    "row-local") != 0)
		return lfail(err, errlen, "out of memory");
	return 0;
}

int
ledger_has_raw(const struct ts_meta *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (strncmp(m->kv[i].key, "dp.raw.", 7) == 0)
			return 1;
	return 0;
}

void
ledger_format_id(char out[LEDGER_ID_HEX + 1], const unsigned char b[16])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[LEDGER_ID_HEX] = '\0';
}

/* Comma-separated %.17g list. */
static char *
join(const double *v, size_t n)
{
	size_t cap = n * 26 + 1, len = 0;
	char *s = malloc(cap);

	if (s == NULL)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%.17g",
		    i ? "," : "", v[i]);
	return s;
}

static int
put(struct ts_meta *m, const char *id, const char *field, const char *val)
{
	char key[2 * TS_MAX_KEY];

	if ((size_t)snprintf(key, sizeof key, "dp.release.%s.%s", id, field) >
	    TS_MAX_KEY)
		return -1;
	return ts_meta_set(m, key, val);
}

int
ledger_put(struct ts_meta *m, const struct ledger_entry *e, char *err,
    size_t errlen)
{
	char num[40], *s;
	const char *bad = ledger_check_dataset(e->dataset);
	int rc = 0;

	if (bad != NULL)
		return lfail(err, errlen, "'%s': %s", e->dataset, bad);
	if (strlen(e->id) != LEDGER_ID_HEX)
		return lfail(err, errlen, "entry has no id");
	rc |= put(m, e->id, "dataset", e->dataset);
	rc |= put(m, e->id, "mechanism", e->mechanism);
	rc |= put(m, e->id, "tool", e->tool);
	rc |= put(m, e->id, "neighbours", e->relation == LEDGER_REPLACE_ONE ?
	    "replace_one" : "add_remove");
	rc |= put(m, e->id, "seeded", e->seeded ? "true" : "false");
	if (e->data_dependent)
		rc |= put(m, e->id, "data_dependent", "true");
	if (e->assumed_raw)
		rc |= put(m, e->id, "assumed_raw", "true");
	if (e->tv > 0) {
		snprintf(num, sizeof num, "%.17g", e->tv);
		rc |= put(m, e->id, "tv", num);
		snprintf(num, sizeof num, "%.17g", e->tv_epsilon);
		rc |= put(m, e->id, "tv_epsilon", num);
	}
	if (e->epsilon >= 0) {
		snprintf(num, sizeof num, "%.17g", e->epsilon);
		rc |= put(m, e->id, "epsilon", num);
	}
	snprintf(num, sizeof num, "%.17g", e->delta);
	rc |= put(m, e->id, "delta", num);
	if (e->norders > 0) {
		if ((s = join(e->orders, e->norders)) == NULL)
			return lfail(err, errlen, "out of memory");
		rc |= put(m, e->id, "orders", s);
		free(s);
		if ((s = join(e->rdp, e->norders)) == NULL)
			return lfail(err, errlen, "out of memory");
		rc |= put(m, e->id, "rdp", s);
		free(s);
	}
	for (size_t i = 0; i < e->params.n; i++) {
		char f[TS_MAX_KEY + 8];
		snprintf(f, sizeof f, "param.%s", e->params.kv[i].key);
		rc |= put(m, e->id, f, e->params.kv[i].val);
	}
	return rc ? lfail(err, errlen, "out of memory") : 0;
}

static int
parse_list(const char *s, double *v, size_t *n)
{
	size_t k = 0;
	char *end;

	while (*s) {
		if (k == LEDGER_MAX_ORDERS)
			return -1;
		errno = 0;
		v[k] = strtod(s, &end);
		if (end == s || errno == ERANGE || isnan(v[k]))
			return -1;
		k++;
		if (*end == ',')
			end++;
		else if (*end != '\0')
			return -1;
		s = end;
	}
	*n = k;
	return 0;
}

static int
parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return (end == s || *end != '\0' || errno == ERANGE || isnan(*v)) ? -1 : 0;
}

static struct ledger_entry *
find_or_add(struct ledger *l, const char *id, int *fresh)
{
	struct ledger_entry *ne;

	*fresh = 0;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->e[i].id, id) == 0)
			return &l->e[i];
	if ((ne = realloc(l->e, (l->n + 1) * sizeof *ne)) == NULL)
		return NULL;
	l->e = ne;
	ne = &l->e[l->n++];
	memset(ne, 0, sizeof *ne);
	memcpy(ne->id, id, LEDGER_ID_HEX);
	ne->epsilon = -1;
	*fresh = 1;
	return ne;
}

/* Apply one field to an entry being built. */
static int
set_field(struct ledger_entry *e, const char *f, const char *v, char *err,
    size_t errlen)
{
	const char *id = e->id;

	if (strcmp(f, "dataset") == 0) {
		if (ledger_check_dataset(v) != NULL)
			return lfail(err, errlen, "ledger entry %s: bad dataset "
			    "'%s'", id, v);
		snprintf(e->dataset, sizeof e->dataset, "%s", v);
	} else if (strcmp(f, "mechanism") == 0) {
		snprintf(e->mechanism, sizeof e->mechanism, "%s", v);
	} else if (strcmp(f, "tool") == 0) {
		snprintf(e->tool, sizeof e->tool, "%s", v);
	} else if (strcmp(f, "neighbours") == 0) {
		if (strcmp(v, "add_remove") == 0)
			e->relation = LEDGER_ADD_REMOVE;
		else if (strcmp(v, "replace_one") == 0)
			e->relation = LEDGER_REPLACE_ONE;
		else
			return lfail(err, errlen, "ledger entry %s: unknown "
			    "neighbouring relation '%s'", id, v);
	} else if (strcmp(f, "seeded") == 0 || strcmp(f, "data_dependent") == 0
	    || strcmp(f, "assumed_raw") == 0) {
		int b = strcmp(v, "true") == 0;
		if (!b && strcmp(v, "false") != 0)
			return lfail(err, errlen, "ledger entry %s: %s must be "
			    "true or false", id, f);
		*(f[0] == 's' ? &e->seeded : f[0] == 'a' ? &e->assumed_raw :
		    &e->data_dependent) = b;
	} else if (strcmp(f, "epsilon") == 0 || strcmp(f, "delta") == 0 ||
	    strcmp(f, "tv") == 0 || strcmp(f, "tv_epsilon") == 0) {
		double d;
		if (parse_double(v, &d) != 0 || d < 0 || (f[0] == 't' &&
		    !isfinite(d)))
			return lfail(err, errlen, "ledger entry %s: bad %s '%s'",
			    id, f, v);
		*(f[0] == 'e' ? &e->epsilon : f[0] == 'd' ? &e->delta :
		    f[2] == '\0' ? &e->tv : &e->tv_epsilon) = d;
	} else if (strcmp(f, "orders") == 0) {
		size_t n;
		if (parse_list(v, e->orders, &n) != 0)
			return lfail(err, errlen, "ledger entry %s: bad order "
			    "list", id);
		if (e->norders && n != e->norders)
			return lfail(err, errlen, "ledger entry %s: %zu orders "
			    "but %zu RDP values", id, n, e->norders);
		e->norders = n;
	} else if (strcmp(f, "rdp") == 0) {
		size_t n;
		if (parse_list(v, e->rdp, &n) != 0)
			return lfail(err, errlen, "ledger entry %s: bad RDP "
			    "list", id);
		for (size_t i = 0; i < n; i++)
			if (!(e->rdp[i] >= 0))
				return lfail(err, errlen, "ledger entry %s: "
				    "negative RDP value", id);
		if (e->norders && n != e->norders)
			return lfail(err, errlen, "ledger entry %s: %zu orders "
			    "but %zu RDP values", id, e->norders, n);
		e->norders = n;
	} else if (strncmp(f, "param.", 6) == 0) {
		if (ts_meta_set(&e->params, f + 6, v) != 0)
			return lfail(err, errlen, "out of memory");
	} else {
		/* Unknown fields from a newer writer are kept as params. */
		if (ts_meta_set(&e->params, f, v) != 0)
			return lfail(err, errlen, "out of memory");
	}
	return 0;
}

static int
valid_id(const char *s, size_t n)
{
	if (n != LEDGER_ID_HEX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Do two parsed entries with one id record the same release? */
static int
same_entry(const struct ledger_entry *a, const struct ledger_entry *b)
{
	if (strcmp(a->dataset, b->dataset) != 0 ||
	    strcmp(a->mechanism, b->mechanism) != 0 ||
	    strcmp(a->tool, b->tool) != 0 || a->relation != b->relation ||
	    a->seeded != b->seeded || a->data_dependent != b->data_dependent ||
	    a->assumed_raw != b->assumed_raw || a->tv != b->tv ||
	    a->tv_epsilon != b->tv_epsilon ||
	    a->epsilon != b->epsilon || a->delta != b->delta ||
	    a->norders != b->norders || a->params.n != b->params.n)
		return 0;
	for (size_t k = 0; k < a->norders; k++)
		if (a->orders[k] != b->orders[k] || a->rdp[k] != b->rdp[k])
			return 0;
	for (size_t k = 0; k < a->params.n; k++) {
		const char *v = ts_meta_get(&b->params, a->params.kv[k].key);
		if (v == NULL || strcmp(v, a->params.kv[k].val) != 0)
			return 0;
	}
	return 1;
}

int
ledger_parse(const struct ts_meta *m, struct ledger *out, char *err,
    size_t errlen)
{
	struct ledger tmp = { 0 };
	int rc = 0;

	for (size_t i = 0; i < m->n && rc == 0; i++) {
		const char *k = m->kv[i].key, *v = m->kv[i].val;

		if (strncmp(k, "dp.raw.", 7) == 0) {
			struct ledger_raw_mark *nr;
			int kind = strcmp(v, "aggregate") == 0 ? LEDGER_AGGREGATE :
			    strcmp(v, "row-local") == 0 ? LEDGER_ROW_LOCAL : 0;
			if (kind == 0 || ledger_check_dataset(k + 7) != NULL) {
				rc = lfail(err, errlen, "bad raw-taint entry "
				    "'%s' = '%s'", k, v);
				break;
			}
			nr = realloc(tmp.raw, (tmp.nraw + 1) * sizeof *nr);
			if (nr == NULL) {
				rc = lfail(err, errlen, "out of memory");
				break;
			}
			tmp.raw = nr;
			snprintf(nr[tmp.nraw].dataset, sizeof nr->dataset, "%s",
			    k + 7);
			nr[tmp.nraw++].kind = kind;
		} else if (strncmp(k, "dp.release.", 11) == 0) {
			const char *id = k + 11, *dot = strchr(id, '.');
			struct ledger_entry *e;
			int fresh;
			char idbuf[LEDGER_ID_HEX + 1];

			if (dot == NULL || !valid_id(id, (size_t)(dot - id))) {
				rc = lfail(err, errlen, "bad ledger key '%s'", k);
				break;
			}
			memcpy(idbuf, id, LEDGER_ID_HEX);
			idbuf[LEDGER_ID_HEX] = '\0';
			if ((e = find_or_add(&tmp, idbuf, &fresh)) == NULL) {
				rc = lfail(err, errlen, "out of memory");
				break;
			}
			rc = set_field(e, dot + 1, v, err, errlen);
		} else if (strcmp(k, LEDGER_PROVENANCE_KEY) == 0) {
			/* Any value: a stream whose provenance is not known
			 * is not private, whatever a later writer meant. */
			out->unknown = 1;
		}
		/* Other dp.* keys are reserved for later versions and are
		 * carried through by tools without interpretation. */
	}
	for (size_t i = 0; i < tmp.n && rc == 0; i++) {
		struct ledger_entry *e = &tmp.e[i];
		if (e->dataset[0] == '\0' || e->mechanism[0] == '\0' ||
		    e->relation == 0)
			rc = lfail(err, errlen, "ledger entry %s lacks its "
			    "dataset, mechanism or neighbours", e->id);
		else if (e->norders == 0 && e->epsilon < 0)
			rc = lfail(err, errlen, "ledger entry %s has neither an "
			    "RDP curve nor an epsilon", e->id);
	}
	if (rc != 0) {
		ledger_free(&tmp);
		return rc;
	}
	/* Append, uniting by id.  The same id with other contents is a
	 * conflict (formats/tensor-stream.md, section 10.1, rule 2): which
	 * of the two to charge is unknowable, so it is an error. */
	for (size_t i = 0; i < tmp.n; i++) {
		int dup = 0;
		for (size_t j = 0; j < out->n; j++)
			if (strcmp(out->e[j].id, tmp.e[i].id) == 0) {
				dup = 1;
				if (rc == 0 && !same_entry(&out->e[j], &tmp.e[i]))
					rc = lfail(err, errlen, "ledger entry %s "
					    "differs between inputs", tmp.e[i].id);
			}
		if (dup) {
			ts_meta_free(&tmp.e[i].params);
			continue;
		}
		struct ledger_entry *ne = realloc(out->e, (out->n + 1) * sizeof *ne);
		if (ne == NULL) {
			rc = lfail(err, errlen, "out of memory");
			ts_meta_free(&tmp.e[i].params);
			continue;
		}
		out->e = ne;
		out->e[out->n++] = tmp.e[i];
	}
	for (size_t i = 0; i < tmp.nraw && rc == 0; i++) {
		size_t j;
		for (j = 0; j < out->nraw; j++)
			if (strcmp(out->raw[j].dataset, tmp.raw[i].dataset) == 0)
				break;
		if (j < out->nraw) {
			if (tmp.raw[i].kind > out->raw[j].kind)
				out->raw[j].kind = tmp.raw[i].kind;
			continue;
		}
		struct ledger_raw_mark *nr = realloc(out->raw, (out->nraw + 1) *
		    sizeof *nr);
		if (nr == NULL) {
			rc = lfail(err, errlen, "out of memory");
			break;
		}
		out->raw = nr;
		out->raw[out->nraw++] = tmp.raw[i];
	}
	free(tmp.e);
	free(tmp.raw);
	return rc;
}

void
ledger_free(struct ledger *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++)
		ts_meta_free(&l->e[i].params);
	free(l->e);
	free(l->raw);
	memset(l, 0, sizeof *l);
}

/* An entry's delta when the composition's epsilon is eps: its own, with
 * the part that charges its TV distance raised from tv_epsilon to eps
 * when eps is larger (noise_fast.h: an (eps, d)-DP mechanism run with
 * noise within TV tau of the exact noise is (eps, d + (1 + e^eps) tau)-DP,
 * and the tau of every release adds up, so the charge belongs at the
 * epsilon of the whole composition).  NaN when it cannot be charged. */
static double
entry_delta(const struct ledger_entry *e, double eps)
{
	double c0, c1, rest;

	if (!(e->tv > 0) || !(eps > e->tv_epsilon))
		return e->delta;
	c0 = noise_fast_delta_charge(e->tv_epsilon, e->tv);
	c1 = noise_fast_delta_charge(eps, e->tv);
	if (isnan(c0) || isnan(c1))
		return NAN;
	/* The rest of the entry's delta, if any, is kept: the subtraction
	 * and the sum each round up by one step (c0 is what the writer
	 * computed, so rest is exactly 0 for dpsgd-train). */
	rest = e->delta - c0;
	if (!(rest > 0))
		return c1;
	return nextafter(nextafter(rest + c1, INFINITY), INFINITY);
}

/* The fixed point of the TV charge: iterations at most, and the factor
 * each new charge is raised by so that the iteration stops above the
 * fixed point instead of creeping up to it. */
#define TV_ITER 64
#define TV_RAISE (1 + 0x1p-20)

int
ledger_total(const struct ledger *l, const char *dataset, double delta,
    int conv, struct ledger_total *t, char *err, size_t errlen)
{
	double orders[LEDGER_MAX_ORDERS], sum[LEDGER_MAX_ORDERS], charge;
	size_t no = 0;
	int first_rdp = 1, has_tv = 0;

	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < l->nraw; i++)
		if (strcmp(l->raw[i].dataset, dataset) == 0)
			t->raw = l->raw[i].kind;
	for (size_t i = 0; i < l->n; i++) {
		const struct ledger_entry *e = &l->e[i];

		if (strcmp(e->dataset, dataset) != 0)
			continue;
		t->releases++;
		t->seeded |= e->seeded;
		t->data_dependent |= e->data_dependent;
		t->assumed_raw |= e->assumed_raw;
		has_tv |= e->tv > 0;
		if (t->relation && t->relation != e->relation)
			t->mixed = 1;
		t->relation = e->relation;
		t->delta_extra += e->delta;
		if (e->norders == 0) {
			t->eps_basic += e->epsilon;
			continue;
		}
		if (first_rdp) {
			no = e->norders;
			memcpy(orders, e->orders, no * sizeof *orders);
			memcpy(sum, e->rdp, no * sizeof *sum);
			first_rdp = 0;
			continue;
		}
		/* Keep the orders this entry also has: the sum is exact
		 * there, and RDP at other orders is unknown. */
		size_t k = 0;
		for (size_t a = 0; a < no; a++)
			for (size_t b = 0; b < e->norders; b++)
				if (orders[a] == e->orders[b]) {
					orders[k] = orders[a];
					sum[k++] = sum[a] + e->rdp[b];
					break;
				}
		no = k;
		if (no == 0)
			return lfail(err, errlen, "dataset %s: its releases' "
			    "RDP curves share no order", dataset);
	}
	t->norders = no;
	/* Convert at delta less the charges; with TV distances, charge
	 * them at the epsilon that gives and convert again, until the
	 * charges no longer grow: then delta_rdp + the charges at the
	 * final epsilon is at most delta. */
	charge = t->delta_extra;
	for (int it = 0;; it++) {
		double eps, next = 0;

		t->delta_rdp = delta - charge;
		t->delta_extra = charge;
		/* Releases without a curve compose by the basic theorem: their
		 * deltas add up, and must stay below delta too (10.1.2, 3). */
		if (!(t->delta_rdp > 0))
			return lfail(err, errlen, "dataset %s: delta %g is not "
			    "larger than the releases' own deltas (%g)%s",
			    dataset, delta, charge, t->tv_recharged ? ", their "
			    "samplers' total variation charged at the composed "
			    "epsilon" : "");
		if (!first_rdp) {
			if (rdp_to_epsilon(orders, sum, no, t->delta_rdp,
			    conv, &t->eps_rdp, &t->order) != 0)
				return lfail(err, errlen, "dataset %s: cannot "
				    "convert the RDP curve", dataset);
		}
		eps = t->eps_rdp + t->eps_basic;
		if (!has_tv || !isfinite(eps))
			break;
		for (size_t i = 0; i < l->n; i++)
			if (strcmp(l->e[i].dataset, dataset) == 0)
				next += entry_delta(&l->e[i], eps);
		if (isnan(next))
			return lfail(err, errlen, "dataset %s: cannot charge "
			    "the samplers' total variation at epsilon %g",
			    dataset, eps);
		if (next <= charge)
			break;
		if (it == TV_ITER)
			return lfail(err, errlen, "dataset %s: the samplers' "
			    "total variation charged at the composed epsilon "
			    "(%g) does not settle below delta %g", dataset,
			    eps, delta);
		t->tv_recharged = 1;
		charge = next * TV_RAISE;
	}
	t->epsilon = t->mixed ? INFINITY : t->eps_rdp + t->eps_basic;
	return 0;
}

const char **
ledger_datasets(const struct ledger *l, size_t *n)
{
	const char **v = malloc((l->n + l->nraw + 1) * sizeof *v);
	size_t k = 0;

	if (v == NULL)
		return NULL;
	for (size_t i = 0; i < l->n + l->nraw; i++) {
		const char *d = i < l->n ? l->e[i].dataset : l->raw[i - l->n].dataset;
		size_t j;
		for (j = 0; j < k; j++)
			if (strcmp(v[j], d) == 0)
				break;
		if (j == k)
			v[k++] = d;
	}
	*n = k;
	return v;
}
