/* tensor.c: plain tensors and metadata (see tensor.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "tensor.h"

static const struct {
	int code;
	const char *name;
	size_t size;
} dtypes[] = {
	{ TS_F32, "f32", 4 },
	{ TS_F64, "f64", 8 },
	{ TS_I32, "i32", 4 },
	{ TS_I64, "i64", 8 },
	{ TS_U8, "u8", 1 },
};

size_t
ts_dtype_size(int dtype)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].code == dtype)
			return dtypes[i].size;
	return 0;
}

const char *
ts_dtype_name(int dtype)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (dtypes[i].code == dtype)
			return dtypes[i].name;
	return NULL;
}

int
ts_dtype_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (strcmp(dtypes[i].name, name) == 0)
			return dtypes[i].code;
	return 0;
}

int
tensor_row_bytes(const struct tensor *t, uint64_t *out)
{
	uint64_t p;

	if (t->ndim <= 0)
		p = 1;
	else if (ck_prod_u64(t->dims + 1, t->ndim - 1, &p) != 0)
		return -1;
	return ck_mul_u64(p, ts_dtype_size(t->dtype), out);
}

uint64_t
tensor_rows(const struct tensor *t)
{
	return t->ndim == 0 ? 1 : t->dims[0];
}

int
tensor_elems(const struct tensor *t, uint64_t *out)
{
	return ck_prod_u64(t->dims, t->ndim, out);
}

int
tensor_bytes(const struct tensor *t, uint64_t *out)
{
	uint64_t e;

	if (tensor_elems(t, &e) != 0)
		return -1;
	return ck_mul_u64(e, ts_dtype_size(t->dtype), out);
}

int
tensor_init(struct tensor *t, const char *name, int dtype, int ndim,
    const uint64_t *dims)
{
	memset(t, 0, sizeof *t);
	if (ndim < 0 || ndim > TS_MAX_NDIM || ts_dtype_size(dtype) == 0)
		return -1;
	snprintf(t->name, sizeof t->name, "%s", name);
	t->dtype = dtype;
	t->ndim = ndim;
	for (int i = 0; i < ndim; i++)
		t->dims[i] = dims[i];
	return 0;
}

int
tensor_alloc(struct tensor *t)
{
	uint64_t nb;

	if (tensor_bytes(t, &nb) != 0 || nb > SIZE_MAX)
		return -1;
	free(t->data);
	t->data = calloc(nb ? (size_t)nb : 1, 1);
	return t->data ? 0 : -1;
}

void
tensor_free(struct tensor *t)
{
	if (t == NULL)
		return;
	free(t->data);
	t->data = NULL;
	ts_meta_free(&t->meta);
}

const char *
ts_check_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return "empty name";
	if (n > TS_MAX_NAME)
		return "name longer than 255 bytes";
	if (name[0] == '/' || name[0] == '.')
		return "name starts with '/' or '.'";
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		    c == '/' || c == '-'))
			return "name has a character outside [A-Za-z0-9_./-]";
	}
	return NULL;
}

const char *
ts_check_key(const char *key)
{
	size_t n = strlen(key);
	int seglen = 0;

	if (n == 0)
		return "empty key";
	if (n > TS_MAX_KEY)
		return "key longer than 255 bytes";
	for (size_t i = 0; i < n; i++) {
		char c = key[i];
		if (c == '.') {
			if (seglen == 0)
				return "key has an empty dotted segment";
			seglen = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '_') {
			seglen++;
		} else {
			return "key has a character outside [a-z0-9_.]";
		}
	}
	if (seglen == 0)
		return "key ends with '.'";
	return NULL;
}

int
ts_utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n) {
		unsigned c = s[i];
		size_t len;
		uint32_t cp, min;

		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			len = 2, cp = c & 0x1F, min = 0x80;
		} else if ((c & 0xF0) == 0xE0) {
			len = 3, cp = c & 0x0F, min = 0x800;
		} else if ((c & 0xF8) == 0xF0) {
			len = 4, cp = c & 0x07, min = 0x10000;
		} else {
			return 0;
		}
		if (n - i < len)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3F);
		}
		/* Overlong forms, surrogates and values past U+10FFFF. */
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return 0;
		i += len;
	}
	return 1;
}

static uint64_t
key_hash(const char *k)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);	/* FNV-1a */

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * UINT64_C(0x100000001b3);
	return h;
}

/* Rebuild the index for n entries; small maps stay unindexed. */
static int
meta_reindex(struct ts_meta *m)
{
	size_t ns = 64;

	free(m->slot);
	m->slot = NULL;
	m->nslot = 0;
	if (m->n < 16)
		return 0;
	while (ns <= 2 * m->n)
		ns *= 2;
	if ((m->slot = calloc(ns, sizeof *m->slot)) == NULL)
		return -1;
	m->nslot = ns;
	for (size_t i = 0; i < m->n; i++) {
		size_t h = (size_t)key_hash(m->kv[i].key) & (ns - 1);
		while (m->slot[h] != 0)
			h = (h + 1) & (ns - 1);
		m->slot[h] = (uint32_t)(i + 1);
	}
	return 0;
}

static struct ts_kv *
meta_find(const struct ts_meta *m, const char *key)
{
	if (m->nslot == 0) {
		for (size_t i = 0; i < m->n; i++)
			if (strcmp(m->kv[i].key, key) == 0)
				return &m->kv[i];
		return NULL;
	}
	for (size_t h = (size_t)key_hash(key) & (m->nslot - 1); m->slot[h];
	    h = (h + 1) & (m->nslot - 1))
		if (strcmp(m->kv[m->slot[h] - 1].key, key) == 0)
			return &m->kv[m->slot[h] - 1];
	return NULL;
}

int
ts_meta_set(struct ts_meta *m, const char *key, const char *val)
{
	struct ts_kv *kv = meta_find(m, key);
	char *v = strdup(val);

	if (v == NULL)
		return -1;
	if (kv != NULL) {
		free(kv->val);
		kv->val = v;
		return 0;
	}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 8;
		struct ts_kv *nkv = realloc(m->kv, nc * sizeof *nkv);
		if (nkv == NULL) {
			free(v);
			return -1;
		}
		m->kv = nkv;
		m->cap = nc;
	}
	if ((m->kv[m->n].key = strdup(key)) == NULL) {
		free(v);
		return -1;
	}
	m->kv[m->n++].val = v;
	if (m->n > UINT32_MAX - 1)
		return -1;
	if (m->nslot == 0)
		return m->n >= 16 ? meta_reindex(m) : 0;
	if (2 * m->n >= m->nslot)
		return meta_reindex(m);
	{
		size_t h = (size_t)key_hash(key) & (m->nslot - 1);
		while (m->slot[h] != 0)
			h = (h + 1) & (m->nslot - 1);
		m->slot[h] = (uint32_t)m->n;
	}
	return 0;
}

int
ts_meta_setf(struct ts_meta *m, const char *key, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	rc = ts_meta_set(m, key, s);
	free(s);
	return rc;
}

const char *
ts_meta_get(const struct ts_meta *m, const char *key)
{
	struct ts_kv *kv = meta_find(m, key);

	return kv ? kv->val : NULL;
}

int
ts_meta_del(struct ts_meta *m, const char *key)
{
	struct ts_kv *kv = meta_find(m, key);

	if (kv == NULL)
		return -1;
	free(kv->key);
	free(kv->val);
	memmove(kv, kv + 1, (size_t)(m->kv + m->n - kv - 1) * sizeof *kv);
	m->n--;
	return meta_reindex(m);
}

void
ts_meta_free(struct ts_meta *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->kv[i].key);
		free(m->kv[i].val);
	}
	free(m->kv);
	free(m->slot);
	memset(m, 0, sizeof *m);
}

int
ts_meta_merge(struct ts_meta *dst, const struct ts_meta *src,
    const char *prefix, const char **conflict_key)
{
	size_t pl = strlen(prefix);

	for (size_t i = 0; i < src->n; i++) {
		const struct ts_kv *kv = &src->kv[i];
		const char *old;

		if (strncmp(kv->key, prefix, pl) != 0)
			continue;
		old = ts_meta_get(dst, kv->key);
		if (old != NULL) {
			if (strcmp(old, kv->val) == 0)
				continue;
			if (conflict_key)
				*conflict_key = kv->key;
			return -2;
		}
		if (ts_meta_set(dst, kv->key, kv->val) != 0)
			return -1;
	}
	return 0;
}

int
ts_meta_copy_except(struct ts_meta *dst, const struct ts_meta *src,
    const char *skip_prefix)
{
	size_t pl = strlen(skip_prefix);

	for (size_t i = 0; i < src->n; i++)
		if (pl == 0 || strncmp(src->kv[i].key, skip_prefix, pl) != 0)
			if (ts_meta_set(dst, src->kv[i].key, src->kv[i].val) != 0)
				return -1;
	return 0;
}
