/*
 * fpsum.h: how far a floating-point sum of bounded terms can move when
 * one term is added, removed or replaced: the margin a DP sum charges to
 * its sensitivity (Casacuberta, Shoemate, Vadhan, Wagaman, "Widespread
 * underestimation of sensitivity in differentially private libraries and
 * how to fix it", CCS 2022).
 *
 * The exact sums of neighbouring multisets of terms differ by one term,
 * of norm at most M; their computed sums can differ by more, because
 * rounding depends on the other terms and on the order of the additions
 * (which BLAS leaves unspecified).  Let u be the unit roundoff of the
 * accumulation (2^-53 for double, 2^-24 for float) and gamma_h =
 * h u / (1 - h u) (Higham, Accuracy and Stability of Numerical
 * Algorithms, 2002, section 3.1).  If each term is computed from exact
 * ideal values with at most h rounded operations and then added to a sum
 * of at most n terms in any order (any binary tree, FMA or not), every
 * term passes through at most h + n - 1 roundings, so each entry of the
 * computed sum is within gamma_(n + h) sum_i |t_i entry| of the exact
 * one, and by Minkowski's inequality the error has L2 norm at most
 * gamma_(n + h) sum_i ||t_i|| <= gamma_(n + h) n M.  Two neighbouring
 * sums of at most n terms each therefore differ by at most
 *   delta + 2 n gamma_(n + h) M = delta + e M,
 * delta being the sensitivity of the exact sum (M under add/remove, for
 * example 2M or sqrt(2) M under replace-one).  fpsum_margin returns e.
 * n must be a public bound on the number of terms: under add/remove the
 * number of records is private, so a tool takes an implementation limit
 * (FPSUM_MAX_ROWS) or a size the user declares public.
 *
 * Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_FPSUM_H
#define PRIVADA_FPSUM_H

#include <stdint.h>

/* The public bound on records that covest and gmm-fit assume when no
 * size is declared public: their sensitivities are charged for sums of
 * this many rows (a relative margin of about 2^-8), and a larger input
 * is refused. */
#define FPSUM_MAX_ROWS (UINT64_C(1) << 22)

/* Most terms and roundings fpsum_margin accepts: (n + h) u stays below
 * 2^-3, so gamma is well defined. */
#define FPSUM_MAX_TERMS (UINT64_C(1) << 48)

/* gamma_h = h u / (1 - h u), rounded up; NAN unless 0 <= h u < 1/2. */
double fpsum_gamma(double h, double u);

/* The relative margin e = 2 n gamma_(n + h)(u) of sums of at most n terms
 * computed with at most h roundings each (see above), rounded up.  A
 * sensitivity delta of the exact sum (terms of norm at most M) becomes
 * delta + e M for the computed sum.  @return e, or NAN when n + h exceeds
 * FPSUM_MAX_TERMS or (n + h) u >= 2^-3. */
double fpsum_margin(double n, double h, double u);

#endif
