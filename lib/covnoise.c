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
covnoise_apply(double *x, size_t n, double sigma, const int64_t *k)
{
	int rc, e;

	if ((rc = grid_of(sigma, &e)) != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		double v, f, d;
		int64_t sum;

		if (isnan(x[i]))
			return NOISE_E_RANGE;
		/* x / 2^e is exact (or underflows far below 1/2). */
		v = fmin(fmax(ldexp(x[i], -e), -0x1p61), 0x1p61);
		f = floor(v);
		d = v - f;
		if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0))
			f += 1;
		if (__builtin_add_overflow((int64_t)f, k[i], &sum))
			return NOISE_E_OVERFLOW;
		x[i] = ldexp((double)sum, e);
	}
	return 0;
}
