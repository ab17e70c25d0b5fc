/* npy.c: the .npy header, read and written (NEP 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "npy.h"
#include "tstream.h"

static const struct {
	const char *descr;
	int dtype;
} npy_types[] = {
	{ "<f4", TS_F32 }, { "<f8", TS_F64 }, { "<i4", TS_I32 },
	{ "<i8", TS_I64 }, { "|u1", TS_U8 }, { "<u1", TS_U8 },
};
#define NTYPES (sizeof npy_types / sizeof npy_types[0])

const char *
npy_descr(int dtype)
{
	for (size_t i = 0; i < NTYPES; i++)
		if (npy_types[i].dtype == dtype)
			return npy_types[i].descr;
	return NULL;
}

/* Cursor over the header dict, a Python literal (NEP 1). */
struct npy_cur {
	const char *p, *end;
};

static void
npy_ws(struct npy_cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
		c->p++;
}

static int
npy_eat(struct npy_cur *c, char ch)
{
	npy_ws(c);
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return 1;
	}
	return 0;
}

/* A quoted string without escapes into buf. */
static int
npy_string(struct npy_cur *c, char *buf, size_t len)
{
	char q;
	size_t n = 0;

	npy_ws(c);
	if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
		return -1;
	q = *c->p++;
	while (c->p < c->end && *c->p != q) {
		if (*c->p == '\\' || n + 1 >= len)
			return -1;
		buf[n++] = *c->p++;
	}
	if (c->p >= c->end)
		return -1;
	c->p++;
	buf[n] = '\0';
	return 0;
}

static int
npy_word(struct npy_cur *c, const char *w)
{
	size_t n = strlen(w);

	npy_ws(c);
	if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
		c->p += n;
		return 1;
	}
	return 0;
}

/* A shape tuple of decimal integers, overflow-checked. */
static const char *
npy_shape(struct npy_cur *c, int *ndim, uint64_t *dims)
{
	int k = 0, comma = 0;

	if (!npy_eat(c, '('))
		return "header 'shape': expected a tuple";
	while (!npy_eat(c, ')')) {
		uint64_t v = 0;
		const char *p0;

		if (k > 0 && !comma)
			return "header 'shape': expected ','";
		if (k >= TS_MAX_NDIM)
			return "header 'shape': more than 8 dimensions";
		npy_ws(c);
		for (p0 = c->p; c->p < c->end && *c->p >= '0' && *c->p <= '9';
		    c->p++)
			if (ck_mul_u64(v, 10, &v) != 0 || ck_add_u64(v,
			    (uint64_t)(*c->p - '0'), &v) != 0)
				return "header 'shape': dimension overflows";
		/* Python 3 rejects leading zeros ("01"); so does this. */
		if (c->p == p0 || (*p0 == '0' && c->p - p0 > 1))
			return "header 'shape': expected a decimal integer";
		dims[k++] = v;
		comma = npy_eat(c, ',');
	}
	if (k == 1 && !comma)
		return "header 'shape': a 1-tuple needs a comma";
	*ndim = k;
	return NULL;
}

const char *
npy_parse_dict(const char *h, size_t n, int *dtype, int *ndim, uint64_t *dims)
{
	struct npy_cur c = { h, h + n };
	char key[32], descr[32];
	const char *bad;
	int seen = 0;

	if (n == 0 || h[n - 1] != '\n')
		return "header does not end with a newline";
	c.end--;
	if (!npy_eat(&c, '{'))
		return "header is not a dict";
	while (!npy_eat(&c, '}')) {
		if (npy_string(&c, key, sizeof key) != 0)
			return "header dict: expected a quoted key";
		if (!npy_eat(&c, ':'))
			return "header dict: expected ':'";
		if (strcmp(key, "descr") == 0 && !(seen & 1)) {
			size_t i;
			if (npy_string(&c, descr, sizeof descr) != 0)
				return "header 'descr': expected a dtype "
				    "string";
			for (i = 0; i < NTYPES; i++)
				if (strcmp(descr, npy_types[i].descr) == 0)
					break;
			if (i == NTYPES)
				return "header 'descr': unsupported dtype (use "
				    "<f4, <f8, <i4, <i8 or |u1)";
			*dtype = npy_types[i].dtype;
			seen |= 1;
		} else if (strcmp(key, "fortran_order") == 0 && !(seen & 2)) {
			if (npy_word(&c, "True"))
				return "fortran_order True is not supported "
				    "(save a C-ordered array)";
			if (!npy_word(&c, "False"))
				return "header 'fortran_order': expected False";
			seen |= 2;
		} else if (strcmp(key, "shape") == 0 && !(seen & 4)) {
			if ((bad = npy_shape(&c, ndim, dims)) != NULL)
				return bad;
			seen |= 4;
		} else {
			return "header dict: unknown or repeated key";
		}
		if (!npy_eat(&c, ',')) {
			if (!npy_eat(&c, '}'))
				return "header dict: expected ',' or '}'";
			break;
		}
	}
	if (seen != 7)
		return "header dict lacks 'descr', 'fortran_order' or 'shape'";
	npy_ws(&c);
	if (c.p != c.end)
		return "unexpected characters after the header dict";
	return NULL;
}

/* A short read: an I/O error when fp says so, else truncation. */
static int
short_read(FILE *fp, char *msg)
{
	if (ferror(fp)) {
		snprintf(msg, NPY_MSG, "read error");
		return PV_E_IO;
	}
	snprintf(msg, NPY_MSG, "truncated .npy header");
	return PV_E_TRUNCATED;
}

int
npy_read_header(FILE *fp, const char *name, struct tensor *t,
    char msg[NPY_MSG])
{
	unsigned char pre[12];
	uint64_t dims[TS_MAX_NDIM] = { 0 }, el, nb;
	const char *bad;
	char *h;
	size_t hl, pl;
	int dtype = 0, ndim = 0;

	memset(t, 0, sizeof *t);
	if (fread(pre, 1, 10, fp) != 10)
		return short_read(fp, msg);
	if (memcmp(pre, "\x93NUMPY", 6) != 0) {
		snprintf(msg, NPY_MSG, "offset 0: not a .npy file (bad magic)");
		return PV_E_FORMAT;
	}
	if (pre[6] < 1 || pre[6] > 3 || pre[7] != 0) {
		snprintf(msg, NPY_MSG, "offset 6: unsupported .npy version "
		    "%u.%u", pre[6], pre[7]);
		return PV_E_VERSION;
	}
	if (pre[6] == 1) {
		hl = (size_t)pre[8] | (size_t)pre[9] << 8;
		pl = 10;
	} else {
		if (fread(pre + 10, 1, 2, fp) != 2)
			return short_read(fp, msg);
		hl = (size_t)pre[8] | (size_t)pre[9] << 8 |
		    (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
		pl = 12;
	}
	if (hl > NPY_MAX_HEADER) {
		snprintf(msg, NPY_MSG, "offset 8: header length %zu exceeds "
		    "the limit %u", hl, NPY_MAX_HEADER);
		return PV_E_LIMIT;
	}
	if ((h = malloc(hl ? hl : 1)) == NULL) {
		snprintf(msg, NPY_MSG, "out of memory");
		return PV_E_NOMEM;
	}
	if (fread(h, 1, hl, fp) != hl) {
		free(h);
		return short_read(fp, msg);
	}
	if (memchr(h, '\0', hl) != NULL)
		bad = "NUL byte in the header";
	else
		bad = npy_parse_dict(h, hl, &dtype, &ndim, dims);
	free(h);
	if (bad != NULL) {
		snprintf(msg, NPY_MSG, "offset %zu: %s", pl, bad);
		return PV_E_FORMAT;
	}
	if (tensor_init(t, name, dtype, ndim, dims) != 0) {
		snprintf(msg, NPY_MSG, "bad tensor header");
		return PV_E_USAGE;
	}
	if (tensor_elems(t, &el) != 0 || tensor_bytes(t, &nb) != 0) {
		snprintf(msg, NPY_MSG, "offset %zu: header 'shape': the size "
		    "overflows", pl);
		tensor_free(t);
		return PV_E_OVERFLOW;
	}
	if (el > TS_MAX_ELEMS) {
		snprintf(msg, NPY_MSG, "offset %zu: header 'shape': %llu "
		    "elements exceed the limit %llu", pl,
		    (unsigned long long)el, (unsigned long long)TS_MAX_ELEMS);
		tensor_free(t);
		return PV_E_LIMIT;
	}
	return 0;
}

size_t
npy_header(char *buf, size_t len, const struct tensor *t)
{
	char shape[TS_MAX_NDIM * 22 + 4];
	const char *descr = npy_descr(t->dtype);
	size_t k = 0, n, pad;

	if (descr == NULL || len < NPY_HEADER_BUF)
		return 0;
	for (int i = 0; i < t->ndim; i++)
		k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%llu",
		    i ? ", " : "", (unsigned long long)t->dims[i]);
	if (t->ndim == 1)
		k += (size_t)snprintf(shape + k, sizeof shape - k, ",");
	shape[k] = '\0';
	n = (size_t)snprintf(buf + 10, len - 10, "{'descr': '%s', "
	    "'fortran_order': False, 'shape': (%s), }", descr, shape);
	if (t->ndim > 0) {
		char d0[24];
		int dl = snprintf(d0, sizeof d0, "%llu",
		    (unsigned long long)t->dims[0]);
		for (int i = dl; i < NPY_GROWTH_DIGITS; i++)
			buf[10 + n++] = ' ';
	}
	pad = NPY_ALIGN - (10 + n + 1) % NPY_ALIGN;
	memset(buf + 10 + n, ' ', pad);
	n += pad;
	buf[10 + n++] = '\n';
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (char)(n & 0xff);
	buf[9] = (char)(n >> 8);
	return 10 + n;
}
