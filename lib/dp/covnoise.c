/* covnoise.c: discrete Gaussian noise drawn ahead of the data (see
 * covnoise.h). */
#include <math.h>

#include "covnoise.h"
#include "noise.h"

/* The exponent e of the grid gamma = 2^e of sigma, or 0 when none. */
static int
grid_of(double sigma, int *e)
{
	double gamma = noise_grid(sigma);

	if (gamma == 0)
		return NOISE_E_RANGE;
	(void)frexp(gamma, e);
	*e -= 1;
	return 0;
}

int
covnoise_draw(struct rng *r, double sigma, int64_t *k, size_t n)
{
	struct noise_dg *g;
	int rc, e;

	if ((rc = grid_of(sigma, &e)) != 0)
		return rc;
	/* The scale in grid steps, rounded up as noise_add_dgauss does
	 * without NOISE_EXACT_SCALE (exact in [2^24, 2^25] before). */
	if ((rc = noise_dg_new_sigma(&g, ceil(ldexp(sigma, -e)))) != 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = noise_dg_sample(g, r, &k[i]);
	noise_dg_free(g);
	return rc;
}

int
covnoise_draw_fast(const struct noise_fast *h, struct rng *r, int64_t *k,
    size_t n, double *tv)
{
	struct noise_fast_info info;

	noise_fast_get_info(h, &info);
	if (!(info.gamma > 0) || tv == NULL)
		return NOISE_E_RANGE;
	return noise_fast_sample(h, r, k, n, tv);
}

/* v rounded to the nearest integer, ties to even (v finite): adding and
 * subtracting 2^52 rounds in the default rounding mode, since every
 * double of magnitude at least 2^52 is an integer. */
static double
round_even(double v)
{
	if (v >= 0)
		return v < 0x1p52 ? (v + 0x1p52) - 0x1p52 : v;
	return v > -0x1p52 ? (v - 0x1p52) + 0x1p52 : v;
}

int
covnoise_apply(double *x, size_t n, double sigma, const int64_t *k)
{
	double up, down;
	int rc, e;

	if ((rc = grid_of(sigma, &e)) != 0)
		return rc;
	/* Scaling by the powers of two 2^-e and 2^e is exact, or rounds
	 * as ldexp does (the products are correctly rounded). */
	down = ldexp(1.0, -e);
	up = ldexp(1.0, e);
	for (size_t i = 0; i < n; i++) {
		double v;
		int64_t sum;

		if (isnan(x[i]))
			return NOISE_E_RANGE;
		v = x[i] * down;
		v = v < -0x1p61 ? -0x1p61 : v > 0x1p61 ? 0x1p61 : v;
		if (__builtin_add_overflow((int64_t)round_even(v), k[i], &sum))
			return NOISE_E_OVERFLOW;
		x[i] = (double)sum * up;
	}
	return 0;
}
