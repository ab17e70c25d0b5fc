/*
 * noise-bench: print samples per second of each exact sampler of
 * lib/noise (a test-only helper for `make bench`).
 *
 * usage: noise-bench [count]     (default 1000000 samples per line)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "noise.h"
#include "rng.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
report(const char *what, long n, double secs, long long sink)
{
	printf("%-44s %12.0f samples/s  (%ld in %.3f s)%s\n", what,
	    (double)n / secs, n, secs, sink == 0x7fffffffffffffffLL ? " " : "");
}

int
main(int argc, char **argv)
{
	long n = 1000000;
	struct rng *r;
	struct noise_dg *g;
	long long sink = 0;
	int64_t k;
	double t0, *x;
	char *end;

	if (argc > 1) {
		n = strtol(argv[1], &end, 10);
		if (*end != '\0' || n <= 0) {
			fprintf(stderr, "usage: noise-bench [count]\n");
			return EX_USAGE;
		}
	}
	if (rng_new(&r) != 0) {
		fprintf(stderr, "noise-bench: %s\n", rng_strerror(RNG_E_ENTROPY));
		return EX_OSERR;
	}
	if ((x = calloc((size_t)n, sizeof *x)) == NULL)
		return EX_OSERR;

	t0 = now();
	for (long i = 0; i < n; i++)
		sink += noise_bernoulli(r, 1, 3);
	report("bernoulli(1/3)", n, now() - t0, sink);

	t0 = now();
	for (long i = 0; i < n; i++)
		sink += noise_bernoulli_exp(r, 3, 2);
	report("bernoulli(exp(-3/2))", n, now() - t0, sink);

	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dlaplace(r, 1u << 20, 1, &k);
		sink += k;
	}
	report("dlaplace(scale 2^20)", n, now() - t0, sink);

	noise_dg_new(&g, (uint64_t)1 << 40, 1);
	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dg_sample(g, r, &k);
		sink += k;
	}
	report("dgauss(sigma 2^20, integer: words)", n, now() - t0, sink);
	noise_dg_free(g);

	noise_dg_new_sigma(&g, 1234567.890123);
	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dg_sample(g, r, &k);
		sink += k;
	}
	report("dgauss(sigma 1234567.890123 exact: GMP)", n, now() - t0, sink);
	noise_dg_free(g);

	noise_dg_new(&g, 2, 1);
	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dg_sample(g, r, &k);
		sink += k;
	}
	report("dgauss(sigma^2 2: GMP)", n, now() - t0, sink);
	noise_dg_free(g);

	t0 = now();
	noise_add_dgauss(r, x, (size_t)n, 0.37, 0);
	report("noise_add_dgauss(sigma 0.37, grid 2^-24)", n, now() - t0, sink);

	t0 = now();
	noise_add_dgauss(r, x, (size_t)n, 0.37, NOISE_EXACT_SCALE);
	report("noise_add_dgauss(.., NOISE_EXACT_SCALE)", n, now() - t0, sink);

	t0 = now();
	noise_add_dlaplace(r, x, (size_t)n, 0.37, 0);
	report("noise_add_dlaplace(b 0.37, grid 2^-24)", n, now() - t0, sink);

	{
		double sc[100];
		size_t pick;
		long m = n / 100;

		for (int i = 0; i < 100; i++)
			sc[i] = i * 0.1;
		t0 = now();
		for (long i = 0; i < m; i++) {
			noise_pf_select(r, sc, 100, 1.0, 1.0, &pick);
			sink += (long long)pick;
		}
		report("pf_select(100 candidates, eps 1)", m, now() - t0, sink);
	}
	free(x);
	rng_free(r);
	return 0;
}
