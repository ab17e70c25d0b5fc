/*
 * Unit tests of lib/num/coral: the CORAL map against its closed form and
 * its defining property, subspace alignment, and the rows times a map.
 */
#include <math.h>
#include <string.h>

#include "coral.h"
#include "tap.h"

static double
maxdiff(const double *a, const double *b, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		m = fmax(m, fabs(a[i] - b[i]));
	return m;
}

/* c = a^T b a (all k x k). */
static void
congruence(size_t k, const double *a, const double *b, double *c)
{
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < k; j++) {
			double s = 0;
			for (size_t p = 0; p < k; p++)
				for (size_t q = 0; q < k; q++)
					s += a[p * k + i] * b[p * k + q] *
					    a[q * k + j];
			c[i * k + j] = s;
		}
}

int
main(void)
{
	double cs[4] = { 4, 0, 0, 1 }, ct[4] = { 9, 0, 0, 16 }, map[9];
	double want[4] = { 1.5, 0, 0, 4 };
	double s3[9] = { 4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2 };
	double t3[9] = { 1, -0.3, 0, -0.3, 2, 0.4, 0, 0.4, 5 }, back[9];
	double neg[4] = { 1, 2, 2, 1 }, sing[4] = { 1, 1, 1, 1 };
	double d3[9] = { 1, 0, 0, 0, 5, 0, 0, 0, 3 }, P[6];
	struct coral_eig es, et;

	ok(coral_map(2, cs, ct, 0, map, &es, &et) == 0 &&
	    maxdiff(map, want, 4) < 1e-12, "diagonal: Cs^-1/2 Ct^1/2");
	ok(es.lo == 1 && es.hi == 4 && et.lo == 9 && et.hi == 16 &&
	    es.neg == 0 && es.dropped == 0, "eigenvalue ranges reported");
	ok(coral_map(3, s3, t3, 0, map, &es, &et) == 0, "a 3 x 3 map");
	congruence(3, map, s3, back);
	ok(maxdiff(back, t3, 9) < 1e-10, "map^T Cs map = Ct: the source "
	    "covariance becomes the target's");
	ok(coral_map(2, cs, ct, 1, map, &es, &et) == 0 &&
	    fabs(map[0] - sqrt(10.0 / 5)) < 1e-12 &&
	    fabs(map[3] - sqrt(17.0 / 2)) < 1e-12, "--reg 1 adds I to both");
	ok(coral_map(2, neg, ct, 0, map, &es, &et) == 0 && es.neg == 1 &&
	    fabs(es.lo + 1) < 1e-12, "a negative source eigenvalue is "
	    "counted and clamped");
	ok(coral_map(2, sing, ct, 0, map, &es, &et) == 0 && es.dropped == 1,
	    "a singular source: one direction dropped");

	ok(coral_top_vectors(3, d3, 2, P, &es) == 0 && P[0] == 0 &&
	    P[2] == 1 && P[4] == 0 && P[1] == 0 && P[3] == 0 && P[5] == 1,
	    "top 2 eigenvectors of diag(1, 5, 3): e2 then e3, positive");
	{
		double m0[6];
		ok(coral_sa_map(3, d3, s3, 2, 1, m0, &es, &et) == 0 &&
		    coral_top_vectors(3, s3, 2, P, &et) == 0 &&
		    memcmp(m0, P, sizeof P) == 0, "sa, target side: Pt");
		ok(coral_sa_map(3, s3, s3, 2, 0, map, &es, &et) == 0 &&
		    maxdiff(map, P, 6) < 1e-12, "sa with equal covariances: "
		    "Ps Ps^T Pt = Pt");
	}
	{
		double x[6] = { 1, 2, 3, 4, 5, 6 }, g[4], y[4];
		float xf[6] = { 1, 2, 3, 4, 5, 6 };
		int64_t idx[2] = { 2, 0 };
		double m2[4] = { 1, 2, 3, 4 };
		double wy[4] = { 3 + 3, 6 + 4, 6 + 12, 12 + 16 };
		const double *r;

		r = coral_apply(2, 3, 0, x, idx, 2, NULL, 2, g, y);
		ok(r == g && g[0] == 3 && g[1] == 1 && g[2] == 6 && g[3] == 4,
		    "apply without a map selects the block's columns");
		r = coral_apply(2, 3, 1, xf, idx, 2, m2, 2, g, y);
		ok(r == y && maxdiff(y, wy, 4) == 0, "apply: f32 rows times "
		    "the map");
	}
	return tap_done();
}
