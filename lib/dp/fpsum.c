/* fpsum.c: the floating-point margin of DP sums (see fpsum.h). */
#include <math.h>

#include "fpsum.h"

double
fpsum_gamma(double h, double u)
{
	double hu = h * u;

	if (!(hu >= 0 && hu < 0.5))
		return NAN;
	/* h u and 1 - h u each round once: one step up on the quotient
	 * covers both (a relative error of a few 2^-53, on a margin). */
	return nextafter(hu / (1 - hu), INFINITY);
}

double
fpsum_margin(double n, double h, double u)
{
	double g;

	if (!(n >= 0 && h >= 0) || n + h > (double)FPSUM_MAX_TERMS ||
	    !((n + h) * u < 0x1p-3))
		return NAN;
	g = fpsum_gamma(n + h, u);
	return nextafter(2 * g * n, INFINITY);
}
