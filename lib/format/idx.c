/* idx.c: IDX headers and area-averaging resize. */
#include <stdlib.h>
#include <string.h>

#include "ck.h"
#include "idx.h"

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static int
read_exact(FILE *fp, void *buf, size_t n, const char *what, char *msg)
{
	if (fread(buf, 1, n, fp) == n)
		return 0;
	if (ferror(fp)) {
		snprintf(msg, IDX_MSG, "read error");
		return PV_E_IO;
	}
	snprintf(msg, IDX_MSG, "truncated: %s", what);
	return PV_E_TRUNCATED;
}

int
idx_read_header(FILE *fp, struct idx_header *x, char msg[IDX_MSG])
{
	unsigned char h[4], d[4];
	int rc;

	memset(x, 0, sizeof *x);
	if ((rc = read_exact(fp, h, 4, "no IDX header", msg)) != 0)
		return rc;
	if (h[0] != 0 || h[1] != 0) {
		snprintf(msg, IDX_MSG, "offset 0: not an IDX file (magic "
		    "%02x %02x %02x %02x)", h[0], h[1], h[2], h[3]);
		return PV_E_FORMAT;
	}
	if (h[2] != 0x08) {
		snprintf(msg, IDX_MSG, "offset 2: IDX type 0x%02x is not "
		    "unsigned bytes (0x08)", h[2]);
		return PV_E_FORMAT;
	}
	if (h[3] < 1 || h[3] > IDX_MAX_NDIM) {
		snprintf(msg, IDX_MSG, "offset 3: IDX with %u dimensions, "
		    "expected 1 to 4", h[3]);
		return PV_E_FORMAT;
	}
	x->ndim = h[3];
	x->elems = 1;
	for (int i = 0; i < x->ndim; i++) {
		if ((rc = read_exact(fp, d, 4, "IDX dimensions", msg)) != 0)
			return rc;
		x->dims[i] = be32(d);
		if (i > 0 && (ck_mul_u64(x->elems, x->dims[i],
		    &x->elems) != 0 || x->elems > IDX_MAX_ELEMS)) {
			snprintf(msg, IDX_MSG, "offset %d: images of more than "
			    "%llu bytes", 4 + 4 * i,
			    (unsigned long long)IDX_MAX_ELEMS);
			return PV_E_LIMIT;
		}
	}
	x->n = x->dims[0];
	return 0;
}

/* Weights from n source cells to m target cells: scaled by m, target
 * cell i is [i*n, (i+1)*n) and source cell r is [r*m, (r+1)*m), so the
 * overlap is an integer and the weight (overlap / n) is exact up to one
 * rounding. */
struct wts {
	size_t *first, *count;	/* per target: first source cell, count */
	double *w;		/* count[i] weights per target, in a row */
	size_t *off;
};

struct idx_resize {
	uint64_t h, w, th, tw;
	struct wts wy, wx;
	double *tmp;		/* th x w: rows resized, columns not yet */
};

static int
make_weights(struct wts *t, uint64_t n, uint64_t m)
{
	size_t k = 0;

	t->first = calloc((size_t)m, sizeof *t->first);
	t->count = calloc((size_t)m, sizeof *t->count);
	t->off = calloc((size_t)m, sizeof *t->off);
	t->w = calloc((size_t)(n + m), sizeof *t->w);
	if (!t->first || !t->count || !t->off || !t->w)
		return PV_E_NOMEM;
	for (uint64_t i = 0; i < m; i++) {
		uint64_t a = i * n, b = (i + 1) * n;
		t->first[i] = (size_t)(a / m);
		t->off[i] = k;
		for (uint64_t r = a / m; r < n && r * m < b; r++) {
			uint64_t lo = r * m > a ? r * m : a;
			uint64_t hi = (r + 1) * m < b ? (r + 1) * m : b;
			t->w[k++] = (double)(hi - lo) / (double)n;
			t->count[i]++;
		}
	}
	return 0;
}

static void
free_weights(struct wts *t)
{
	free(t->first);
	free(t->count);
	free(t->off);
	free(t->w);
}

int
idx_resize_new(struct idx_resize **out, uint64_t h, uint64_t w,
    uint64_t th, uint64_t tw)
{
	struct idx_resize *rs;
	uint64_t tmpn;

	*out = NULL;
	if (th == 0 || tw == 0)
		return PV_E_RANGE;
	if (ck_mul_u64(th, w, &tmpn) != 0 || tmpn > SIZE_MAX / sizeof(double))
		return PV_E_NOMEM;
	if ((rs = calloc(1, sizeof *rs)) == NULL)
		return PV_E_NOMEM;
	rs->h = h;
	rs->w = w;
	rs->th = th;
	rs->tw = tw;
	if (make_weights(&rs->wy, h, th) != 0 ||
	    make_weights(&rs->wx, w, tw) != 0 ||
	    (rs->tmp = calloc(tmpn ? (size_t)tmpn : 1, sizeof *rs->tmp)) ==
	    NULL) {
		idx_resize_free(rs);
		return PV_E_NOMEM;
	}
	*out = rs;
	return 0;
}

void
idx_resize_apply(struct idx_resize *rs, const unsigned char *pix,
    double *out)
{
	const struct wts *wy = &rs->wy, *wx = &rs->wx;
	uint64_t w = rs->w, th = rs->th, tw = rs->tw;
	double *tmp = rs->tmp;

	/* Rows first (th x w), then columns (th x tw). */
	for (uint64_t r = 0; r < th; r++)
		for (uint64_t c = 0; c < w; c++) {
			double s = 0;
			for (size_t k = 0; k < wy->count[r]; k++)
				s += wy->w[wy->off[r] + k] *
				    pix[(wy->first[r] + k) * w + c];
			tmp[r * w + c] = s;
		}
	for (uint64_t r = 0; r < th; r++)
		for (uint64_t c = 0; c < tw; c++) {
			double s = 0;
			for (size_t k = 0; k < wx->count[c]; k++)
				s += wx->w[wx->off[c] + k] *
				    tmp[r * w + wx->first[c] + k];
			out[r * tw + c] = s;
		}
}

void
idx_resize_free(struct idx_resize *rs)
{
	if (rs == NULL)
		return;
	free_weights(&rs->wy);
	free_weights(&rs->wx);
	free(rs->tmp);
	free(rs);
}
