/* conv.c: convolution and pooling on channel-last images (see conv.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "conv.h"

int
conv_geom_init(struct conv_geom *g, size_t h, size_t w, size_t c, size_t k,
    size_t s, size_t p, size_t co, int pool)
{
	memset(g, 0, sizeof *g);
	if (pool) {
		s = s ? s : k;
		p = 0;
		co = c;
	}
	if (h == 0 || w == 0 || c == 0 || k == 0 || s == 0 || co == 0 ||
	    h > CONV_MAX_DIM || w > CONV_MAX_DIM || c > CONV_MAX_DIM ||
	    k > CONV_MAX_DIM || s > CONV_MAX_DIM || co > CONV_MAX_DIM ||
	    p >= k || h + 2 * p < k || w + 2 * p < k)
		return -1;
	g->h = h;
	g->w = w;
	g->c = c;
	g->k = k;
	g->s = s;
	g->p = p;
	g->co = co;
	g->ho = (h + 2 * p - k) / s + 1;
	g->wo = (w + 2 * p - k) / s + 1;
	return 0;
}

size_t
conv_positions(const struct conv_geom *g)
{
	return g->ho * g->wo;
}

size_t
conv_kd(const struct conv_geom *g)
{
	return g->k * g->k * g->c;
}

/* Runs of a patch row, 8 floats at a time (local arrays and constant
 * sizes: GCC inlines and vectorises them at -O2, where a memcpy or
 * memset call of a size known only at run time costs more than the work
 * for the 8 to 64 floats of a kernel row, and a plain += loop on two
 * pointers stays scalar): dst = src, dst = 0, x += d. */
static void
copy_run(float *dst, const float *src, size_t len)
{
	size_t j = 0;

	for (; j + 8 <= len; j += 8)
		memcpy(dst + j, src + j, 8 * sizeof *dst);
	for (; j < len; j++)
		dst[j] = src[j];
}

static void
zero_run(float *dst, size_t len)
{
	static const float zero[8];
	size_t j = 0;

	for (; j + 8 <= len; j += 8)
		memcpy(dst + j, zero, sizeof zero);
	for (; j < len; j++)
		dst[j] = 0.0f;
}

static void
add_run(float *x, const float *d, size_t len)
{
	size_t j = 0;

	for (; j + 8 <= len; j += 8) {
		float u[8], v[8];

		memcpy(u, x + j, sizeof u);
		memcpy(v, d + j, sizeof v);
		for (size_t q = 0; q < 8; q++)
			u[q] += v[q];
		memcpy(x + j, u, sizeof u);
	}
	for (; j < len; j++)
		x[j] += d[j];
}

/* Copy (fold 0) or add back (fold 1) one example's patches.  A kernel
 * row covers the image's columns kx0 .. kx1 - 1 of its k: k c values of
 * the patch, of which those kx0 c .. kx1 c - 1 are contiguous in x (the
 * rest, padding, are 0). */
static void
unfold(const struct conv_geom *g, float *x, float *col, int fold)
{
	size_t c = g->c, k = g->k, kd = conv_kd(g), run = k * c;

	for (size_t ty = 0; ty < g->ho; ty++)
		for (size_t tx = 0; tx < g->wo; tx++) {
			float *row = col + (ty * g->wo + tx) * kd;
			size_t x0 = tx * g->s;	/* + p: the padded column */
			/* x0 + k > p (p < k) and x0 < w + p (conv.h's H'
			 * and W'), so 0 <= kx0 < kx1 <= k. */
			size_t kx0 = x0 < g->p ? g->p - x0 : 0;
			size_t kx1 = g->w + g->p - x0 < k ? g->w + g->p - x0 : k;

			for (size_t ky = 0; ky < k; ky++) {
				/* y = ty s - p + ky, as a signed value */
				size_t y = ty * g->s + ky;
				float *dst = row + ky * run, *src;

				if (y < g->p || y - g->p >= g->h) {
					if (!fold)
						zero_run(dst, run);
					continue;
				}
				y -= g->p;
				src = x + (y * g->w + x0 + kx0 - g->p) * c;
				if (fold) {
					add_run(src, dst + kx0 * c,
					    (kx1 - kx0) * c);
					continue;
				}
				zero_run(dst, kx0 * c);
				copy_run(dst + kx0 * c, src, (kx1 - kx0) * c);
				zero_run(dst + kx1 * c, (k - kx1) * c);
			}
		}
}

void
conv_im2col(const struct conv_geom *g, const float *x, size_t n,
    float *col)
{
	size_t in = g->h * g->w * g->c, out = conv_positions(g) * conv_kd(g);

	/* unfold reads x only when fold is 0. */
	for (size_t i = 0; i < n; i++)
		unfold(g, (float *)(x + i * in), col + i * out, 0);
}

void
conv_col2im(const struct conv_geom *g, const float *col, size_t n, float *x)
{
	size_t in = g->h * g->w * g->c, out = conv_positions(g) * conv_kd(g);

	memset(x, 0, n * in * sizeof *x);
	for (size_t i = 0; i < n; i++)
		unfold(g, x + i * in, (float *)(col + i * out), 1);
}

/* Blocks of channels a pooling window visits together: as in nn.c, a
 * fixed-width loop over local arrays is one that GCC's -O2 vectoriser
 * turns into SIMD compares and blends; a channel count that is not a
 * multiple of PB has its last channels done PB-wide too, reading only
 * the ones that exist. */
#define PB 8

/* One output position's maxima (or sums) over its window for channels
 * j0 .. j0 + m - 1 (m <= PB); q0 the window's first input offset. */
static void
pool_block(const struct conv_geom *g, int max, const float *xi, size_t q0,
    size_t j0, size_t m, float *o, uint32_t *a)
{
	size_t c = g->c;
	float best[PB] = { 0 }, v[PB] = { 0 };
	uint32_t at[PB];

	if (m == PB)	/* a constant size: the copies are inlined */
		memcpy(best, xi + q0 + j0, sizeof best);
	else
		memcpy(best, xi + q0 + j0, m * sizeof *best);
	for (uint32_t j = 0; j < PB; j++)
		at[j] = (uint32_t)(q0 + j0) + j;
	for (size_t ky = 0; ky < g->k; ky++)
		for (size_t kx = 0; kx < g->k; kx++) {
			size_t qq = q0 + (ky * g->w + kx) * c + j0;
			uint32_t q32 = (uint32_t)qq;

			if (ky + kx == 0)
				continue;
			if (m == PB)
				memcpy(v, xi + qq, sizeof v);
			else
				memcpy(v, xi + qq, m * sizeof *v);
			if (!max) {
				for (size_t j = 0; j < PB; j++)
					best[j] += v[j];
				continue;
			}
			/* Strictly greater: the first maximum in window
			 * order keeps its place.  The index select as a
			 * mask: GCC vectorises one conditional select per
			 * loop, not two. */
			for (uint32_t j = 0; j < PB; j++) {
				uint32_t gt = -(uint32_t)(v[j] > best[j]);

				at[j] = (at[j] & ~gt) | ((q32 + j) & gt);
				best[j] = v[j] > best[j] ? v[j] : best[j];
			}
		}
	if (m == PB) {
		memcpy(o + j0, best, sizeof best);
		if (max)
			memcpy(a + j0, at, sizeof at);
		return;
	}
	memcpy(o + j0, best, m * sizeof *o);
	if (max)
		memcpy(a + j0, at, m * sizeof *a);
}

/* Patches covering row (or column) y of an image of ho output rows:
 * the t in [0, ho) with 0 <= y + p - t s < k. */
static double
cover(size_t y, size_t ho, size_t k, size_t s, size_t p)
{
	long yp = (long)(y + p), lo, hi;

	/* t >= (yp - k + 1) / s rounded up, t <= yp / s rounded down */
	lo = yp - (long)k + 1 <= 0 ? 0 : (yp - (long)k + (long)s) / (long)s;
	hi = yp / (long)s;
	hi = hi < (long)ho - 1 ? hi : (long)ho - 1;
	return hi >= lo ? (double)(hi - lo + 1) : 0;
}

double
conv_unfold_sqnorm(const struct conv_geom *g, const float *x)
{
	size_t c = g->c;
	double total = 0, cov[CONV_MAX_DIM];	/* 32 KiB of stack */

	for (size_t xx = 0; xx < g->w; xx++)
		cov[xx] = cover(xx, g->wo, g->k, g->s, g->p);
	for (size_t y = 0; y < g->h; y++) {
		double ry = cover(y, g->ho, g->k, g->s, g->p), row = 0;

		if (ry == 0)
			continue;
		for (size_t xx = 0; xx < g->w; xx++) {
			double cx = cov[xx], v = 0;
			const float *px = x + (y * g->w + xx) * c;

			if (cx == 0)
				continue;
			for (size_t j = 0; j < c; j++)
				v += (double)px[j] * (double)px[j];
			row += cx * v;
		}
		total += ry * row;
	}
	return total;
}

void
conv_pool_fwd(const struct conv_geom *g, int max, const float *x, size_t n,
    float *y, uint32_t *arg)
{
	size_t c = g->c, in = g->h * g->w * c, out = g->ho * g->wo * c;
	float inv = 1.0f / (float)(g->k * g->k);

	for (size_t i = 0; i < n; i++) {
		const float *xi = x + i * in;
		float *yi = y + i * out;

		for (size_t ty = 0; ty < g->ho; ty++)
			for (size_t tx = 0; tx < g->wo; tx++) {
				size_t t = ty * g->wo + tx;
				float *o = yi + t * c;
				uint32_t *a = max ? arg + i * out + t * c : NULL;
				size_t q0 = (ty * g->s * g->w + tx * g->s) * c;

				/* The window in window order (row by row),
				 * PB channels at a time. */
				for (size_t j0 = 0; j0 < c; j0 += PB)
					pool_block(g, max, xi, q0, j0,
					    c - j0 < PB ? c - j0 : PB, o, a);
				if (!max)
					for (size_t j = 0; j < c; j++)
						o[j] *= inv;
			}
	}
}

void
conv_pool_bwd(const struct conv_geom *g, int max, const uint32_t *arg,
    const float *gy, size_t n, float *gx)
{
	size_t c = g->c, in = g->h * g->w * c, out = g->ho * g->wo * c;
	float inv = 1.0f / (float)(g->k * g->k);

	memset(gx, 0, n * in * sizeof *gx);
	for (size_t i = 0; i < n; i++) {
		const float *gi = gy + i * out;
		float *xo = gx + i * in;

		if (max) {
			const uint32_t *a = arg + i * out;

			for (size_t o = 0; o < out; o++)
				xo[a[o]] += gi[o];
			continue;
		}
		for (size_t ty = 0; ty < g->ho; ty++)
			for (size_t tx = 0; tx < g->wo; tx++)
				for (size_t ky = 0; ky < g->k; ky++)
					for (size_t kx = 0; kx < g->k; kx++) {
						float *d = xo + ((ty * g->s +
						    ky) * g->w + tx * g->s +
						    kx) * c;
						const float *s = gi + (ty *
						    g->wo + tx) * c;

						for (size_t j = 0; j < c; j++)
							d[j] += s[j] * inv;
					}
	}
}

/* Group normalisation: the n examples' groups of hw c/G values. */
void
conv_gn_fwd(const struct conv_geom *g, const float *x, size_t n,
    const float *gamma, const float *beta, float *y, float *xhat,
    float *rstd)
{
	size_t c = g->c, G = g->k, cg = c / G, hw = g->h * g->w, in = hw * c;

	for (size_t i = 0; i < n; i++)
		for (size_t q = 0; q < G; q++) {
			const float *xi = x + i * in + q * cg;
			float *xh = xhat + i * in + q * cg;
			float *yi = y + i * in + q * cg;
			double s = 0, s2 = 0, m, r;
			double cnt = (double)(hw * cg);

			for (size_t p = 0; p < hw; p++)
				for (size_t j = 0; j < cg; j++)
					s += xi[p * c + j];
			m = s / cnt;
			for (size_t p = 0; p < hw; p++)
				for (size_t j = 0; j < cg; j++) {
					double d = xi[p * c + j] - m;

					s2 += d * d;
				}
			r = 1 / sqrt(s2 / cnt + CONV_GN_EPS);
			rstd[i * G + q] = (float)r;
			for (size_t p = 0; p < hw; p++)
				for (size_t j = 0; j < cg; j++) {
					float v = (float)((xi[p * c + j] - m) * r);

					xh[p * c + j] = v;
					yi[p * c + j] = gamma[q * cg + j] * v +
					    beta[q * cg + j];
				}
		}
}

void
conv_gn_bwd(const struct conv_geom *g, const float *xhat, const float *rstd,
    const float *gamma, const float *gy, size_t n, float *gx)
{
	size_t c = g->c, G = g->k, cg = c / G, hw = g->h * g->w, in = hw * c;

	for (size_t i = 0; i < n; i++)
		for (size_t q = 0; q < G; q++) {
			size_t o = i * in + q * cg;
			double m1 = 0, m2 = 0, cnt = (double)(hw * cg);
			double r = rstd[i * G + q];

			for (size_t p = 0; p < hw; p++)
				for (size_t j = 0; j < cg; j++) {
					double d = (double)gy[o + p * c + j] *
					    gamma[q * cg + j];

					m1 += d;
					m2 += d * xhat[o + p * c + j];
				}
			m1 /= cnt;
			m2 /= cnt;
			for (size_t p = 0; p < hw; p++)
				for (size_t j = 0; j < cg; j++) {
					size_t k = o + p * c + j;
					double d = (double)gy[k] * gamma[q * cg + j];

					gx[k] = (float)(r * (d - m1 - xhat[k] *
					    m2));
				}
		}
}

void
conv_gn_pgrad(const struct conv_geom *g, const float *xhat, const float *gy,
    double *dgamma, double *dbeta)
{
	size_t c = g->c, hw = g->h * g->w;

	for (size_t j = 0; j < c; j++)
		dgamma[j] = dbeta[j] = 0;
	for (size_t p = 0; p < hw; p++)
		for (size_t j = 0; j < c; j++) {
			dgamma[j] += (double)gy[p * c + j] * xhat[p * c + j];
			dbeta[j] += gy[p * c + j];
		}
}
