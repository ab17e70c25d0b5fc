/*
 * kde-util: the KDE window masses of lib/kde for one slice, for the tests
 * that compare them with scipy.stats.gaussian_kde (tests/kde-publish.bats).
 * Reads the slice (one value a line) from stdin; prints "bandwidth B" (the
 * rule's bandwidth, or the fixed one), "eta E" (kde_util's error bound)
 * and one line "t lo hi u" per candidate: the candidate, its window ends
 * (floats, %.9g) and the window mass U summed over the slice.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "kde.h"

int
main(int argc, char **argv)
{
	const char *bw = "silverman";
	double range = 1, window = 0, b;
	size_t points = 201, m = 0, cap = 1024;
	float *x = malloc(cap * sizeof *x), *scratch, kinv;
	double *u, eta;
	struct kde_grid g;
	int rule = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--bandwidth") == 0)
			bw = argv[i + 1];
		else if (strcmp(argv[i], "--range") == 0)
			range = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--grid-points") == 0)
			points = (size_t)atol(argv[i + 1]);
		else if (strcmp(argv[i], "--window") == 0)
			window = atof(argv[i + 1]);
		else {
			fprintf(stderr, "usage: kde-util [--bandwidth rule] "
			    "[--range r] [--grid-points n] [--window w]\n");
			return EX_USAGE;
		}
	}
	while (x != NULL && scanf("%f", &x[m]) == 1)
		if (++m == cap)
			x = realloc(x, (cap *= 2) * sizeof *x);
	if (x == NULL || m < 2)
		return EX_DATAERR;
	{
		double step = 2 * range / (double)(points - 1);
		if (window == 0)
			window = step;
		if (kde_grid_init(&g, -range, step, points, window) != 0)
			return EX_USAGE;
	}
	if (strcmp(bw, "silverman") == 0)
		rule = KDE_SILVERMAN;
	else if (strcmp(bw, "scott") == 0)
		rule = KDE_SCOTT;
	b = rule ? kde_bandwidth(rule, x, m) : atof(bw);
	kinv = (float)(1 / b);
	scratch = malloc(kde_scratch_floats(&g) * sizeof *scratch);
	u = malloc(g.n * sizeof *u);
	if (scratch == NULL || u == NULL)
		return EX_OSERR;
	eta = kde_util(&g, x, m, kinv, u, scratch, NULL, NULL);
	printf("bandwidth %.17g\nkinv %.9g\neta %.17g\n", b, kinv, eta);
	for (size_t k = 0; k < g.n; k++)
		printf("%.9g %.9g %.9g %.17g\n", g.t[k], g.e[g.im + k],
		    g.e[g.ip + k], u[k]);
	return 0;
}
