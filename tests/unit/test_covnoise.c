/*
 * Unit tests of lib/covnoise: drawing the noise first and applying it
 * later gives exactly the bytes of noise_add_dgauss for the same seeded
 * generator, and clamping keeps huge values on the grid.  The fast draws
 * then applied give the bytes of noise_fast_add, with its TV charge.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "covnoise.h"
#include "noise.h"
#include "noise_fast.h"
#include "rng.h"
#include "tap.h"

#define N 10000

static struct rng *
seeded(const char *item)
{
	struct rng *r;

	if (rng_new_seeded(&r, 77, item) != 0)
		abort();
	return r;
}

int
main(void)
{
	static double a[N], b[N];
	static int64_t k[N];
	const double sigmas[] = { 1e-3, 0.37, 1, 3.5, 11181.9, 1e9 };
	struct rng *r1, *r2;

	for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
		int same = 1;
		for (size_t i = 0; i < N; i++)
			a[i] = b[i] = (double)i * 0.731 - 3000 + ldexp(1, -30) * (double)i;
		r1 = seeded("covnoise");
		r2 = seeded("covnoise");
		same &= noise_add_dgauss(r1, a, N, sigmas[s], 0) == 0;
		same &= covnoise_draw(r2, sigmas[s], k, N) == 0;
		same &= covnoise_apply(b, N, sigmas[s], k) == 0;
		same &= memcmp(a, b, sizeof a) == 0;
		ok(same, "draw + apply equals noise_add_dgauss at sigma %g", sigmas[s]);
		rng_free(r1);
		rng_free(r2);
	}
	{
		double x[3] = { 1e300, -1e300, 5 }, g = noise_grid(1.0);
		int64_t z[3] = { 0, 0, 0 };
		ok(covnoise_apply(x, 3, 1.0, z) == 0 && x[0] == ldexp(g, 61) &&
		    x[1] == -ldexp(g, 61) && x[2] == 5,
		    "values beyond 2^61 grid steps are clamped, others kept");
	}
	{
		double x[1] = { NAN };
		int64_t z[1] = { 0 };
		ok(covnoise_apply(x, 1, 1.0, z) == NOISE_E_RANGE &&
		    covnoise_draw(NULL, 0, z, 1) == NOISE_E_RANGE,
		    "NaN values and a zero sigma are refused");
	}
	for (size_t s = 0; s < sizeof sigmas / sizeof sigmas[0]; s++) {
		struct noise_fast *h;
		double tv1 = 0, tv2 = 0;
		int same = noise_fast_new_grid(&h, sigmas[s]) == 0;

		for (size_t i = 0; i < N; i++)
			a[i] = b[i] = (double)i * 0.731 - 3000 + ldexp(1, -30) * (double)i;
		r1 = seeded("covnoise/fast");
		r2 = seeded("covnoise/fast");
		same &= noise_fast_add(h, r1, a, N, &tv1) == 0;
		same &= covnoise_draw_fast(h, r2, k, N, &tv2) == 0;
		same &= covnoise_apply(b, N, sigmas[s], k) == 0;
		same &= memcmp(a, b, sizeof a) == 0;
		ok(same && tv1 > 0 && tv2 == tv1 &&
		    tv2 >= (double)N * noise_fast_tv(h),
		    "fast draw + apply equals noise_fast_add at sigma %g, "
		    "with its TV", sigmas[s]);
		ok(covnoise_draw_fast(h, r2, k, 1, NULL) == NOISE_E_RANGE,
		    "the fast draw needs somewhere to add its TV");
		rng_free(r1);
		rng_free(r2);
		noise_fast_free(h);
	}
	{
		struct noise_fast *h;
		double tv = 0;
		int64_t z[1];

		r1 = seeded("covnoise/nogrid");
		ok(noise_fast_new(&h, 5000) == 0 &&
		    covnoise_draw_fast(h, r1, z, 1, &tv) == NOISE_E_RANGE &&
		    tv == 0, "a fast handle without a grid is refused");
		noise_fast_free(h);
		rng_free(r1);
	}
	return tap_done();
}
