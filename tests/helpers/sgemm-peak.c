/*
 * sgemm-peak: the SGEMM rate of lib/num's la_sgemm (the OpenBLAS the
 * tools link) on n x n floats, best of r runs of thread CPU time and of
 * wall time, in GFLOP/s (2 n^3 flops), for tests/bench/cnn.sh's fraction
 * of the peak.  Thread CPU time is what another process on a shared
 * machine disturbs least (run with OPENBLAS_NUM_THREADS=1).
 *
 * usage: sgemm-peak [n [r]]   (default 1024, 5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sysexits.h>
#include <time.h>

#include "la.h"

static double
clk(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	int r = argc > 2 ? atoi(argv[2]) : 5;
	float *a, *b, *c;
	double cpu = 1e300, wall = 1e300, f;

	if (n == 0 || n > 8192 || r < 1) {
		fprintf(stderr, "usage: sgemm-peak [n [r]]\n");
		return EX_USAGE;
	}
	a = malloc(n * n * sizeof *a);
	b = malloc(n * n * sizeof *b);
	c = malloc(n * n * sizeof *c);
	if (a == NULL || b == NULL || c == NULL)
		return EX_OSERR;
	for (size_t i = 0; i < n * n; i++) {
		a[i] = (float)(i % 7) * 0.25f;
		b[i] = (float)(i % 5) * 0.5f;
	}
	la_sgemm(0, 0, n, n, n, 1.0f, a, b, 0.0f, c);	/* warm up */
	for (int k = 0; k < r; k++) {
		double t0 = clk(CLOCK_THREAD_CPUTIME_ID), w0 = clk(CLOCK_MONOTONIC);

		la_sgemm(0, 0, n, n, n, 1.0f, a, b, 0.0f, c);
		f = clk(CLOCK_THREAD_CPUTIME_ID) - t0;
		cpu = f < cpu ? f : cpu;
		f = clk(CLOCK_MONOTONIC) - w0;
		wall = f < wall ? f : wall;
	}
	f = 2.0 * (double)n * (double)n * (double)n;
	printf("sgemm %zu cpu %.1f wall %.1f GFLOP/s\n", n, f / cpu / 1e9,
	    f / wall / 1e9);
	free(a);
	free(b);
	free(c);
	return 0;
}
