/*
 * crop.c: bounding-box cropping of images (crop.h).
 */
#include <stdlib.h>
#include <string.h>

#include "crop.h"
#include "idx.h"

struct crop {
	uint64_t h, w, margin, th, tw, maxs, s;
	unsigned thr;
	unsigned char *sq;		/* maxs * maxs bytes */
	struct idx_resize **rs;		/* by side, 1 .. maxs */
};

int
crop_new(struct crop **out, uint64_t h, uint64_t w, unsigned thr,
    uint64_t margin, uint64_t th, uint64_t tw)
{
	struct crop *c;
	uint64_t maxs;

	*out = NULL;
	if (h == 0 || w == 0 || th == 0 || tw == 0 ||
	    margin > CROP_MAX_MARGIN)
		return PV_E_RANGE;
	maxs = (h > w ? h : w) + 2 * margin;
	if (maxs > IDX_MAX_ELEMS || maxs * maxs > IDX_MAX_ELEMS * 4)
		return PV_E_RANGE;
	if ((c = calloc(1, sizeof *c)) == NULL)
		return PV_E_NOMEM;
	c->h = h;
	c->w = w;
	c->thr = thr;
	c->margin = margin;
	c->th = th;
	c->tw = tw;
	c->maxs = maxs;
	if ((c->sq = malloc((size_t)(maxs * maxs))) == NULL ||
	    (c->rs = calloc((size_t)maxs + 1, sizeof *c->rs)) == NULL) {
		crop_free(c);
		return PV_E_NOMEM;
	}
	*out = c;
	return 0;
}

int
crop_apply(struct crop *c, const unsigned char *pix, double *out)
{
	uint64_t h = c->h, w = c->w, r0 = h, r1 = 0, c0 = w, c1 = 0;
	uint64_t bh, bw, s, pr, pc;
	int rc;

	for (uint64_t r = 0; r < h; r++)
		for (uint64_t k = 0; k < w; k++)
			if (pix[r * w + k] > c->thr) {
				if (r < r0)
					r0 = r;
				r1 = r;
				if (k < c0)
					c0 = k;
				if (k > c1)
					c1 = k;
			}
	if (r0 == h) {		/* nothing above the threshold */
		r0 = c0 = 0;
		r1 = h - 1;
		c1 = w - 1;
	}
	bh = r1 - r0 + 1;
	bw = c1 - c0 + 1;
	s = (bh > bw ? bh : bw) + 2 * c->margin;
	pr = (s - bh) / 2;
	pc = (s - bw) / 2;
	memset(c->sq, 0, (size_t)(s * s));
	for (uint64_t r = 0; r < bh; r++)
		memcpy(c->sq + (pr + r) * s + pc, pix + (r0 + r) * w + c0,
		    (size_t)bw);
	c->s = s;
	if (c->rs[s] == NULL &&
	    (rc = idx_resize_new(&c->rs[s], s, s, c->th, c->tw)) != 0)
		return rc;
	idx_resize_apply(c->rs[s], c->sq, out);
	return 0;
}

const unsigned char *
crop_square(const struct crop *c, uint64_t *s)
{
	*s = c->s;
	return c->sq;
}

void
crop_free(struct crop *c)
{
	if (c == NULL)
		return;
	if (c->rs != NULL)
		for (uint64_t s = 0; s <= c->maxs; s++)
			idx_resize_free(c->rs[s]);
	free(c->rs);
	free(c->sq);
	free(c);
}
