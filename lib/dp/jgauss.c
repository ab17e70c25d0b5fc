/* jgauss.c: a Gaussian mechanism in parts (see jgauss.h). */
#include <math.h>

#include "jgauss.h"
#include "ledger.h"
#include "noise.h"
#include "rdp.h"

void
jgauss_rdp_curve(double mu, double count, double *rdp)
{
	size_t no;
	const double *ord = rdp_default_orders(&no);

	for (size_t i = 0; i < no; i++)
		rdp[i] = count * (ord[i] * mu * mu / 2);
}

void
jgauss_entry_curve(struct ledger_entry *e, double mu, double count)
{
	size_t no;
	const double *ord = rdp_default_orders(&no);

	e->norders = no;
	for (size_t i = 0; i < no; i++)
		e->orders[i] = ord[i];
	jgauss_rdp_curve(mu, count, e->rdp);
}

double
jgauss_rdp_eps(double mu, double delta, double count)
{
	double rdp[RDP_DEFAULT_NORDERS], eps;
	size_t no;
	const double *ord = rdp_default_orders(&no);

	jgauss_rdp_curve(mu, count, rdp);
	if (rdp_to_epsilon(ord, rdp, no, delta, RDP_CONV_IMPROVED, &eps,
	    NULL) != 0)
		return NAN;
	return eps;
}

int
jgauss_calibrate_rdp(double eps, double delta, double count, double *z)
{
	double lo = 1e-3, hi = 1e6;

	*z = hi;
	if (!(jgauss_rdp_eps(1 / hi, delta, count) <= eps))
		return JGAUSS_E_NOROOT;
	if (jgauss_rdp_eps(1 / lo, delta, count) <= eps) {
		*z = lo;
		return 0;
	}
	while (hi / lo - 1 > 1e-12) {
		double mid = sqrt(lo * hi);
		if (mid <= lo || mid >= hi)
			break;
		if (jgauss_rdp_eps(1 / mid, delta, count) > eps)
			lo = mid;
		else
			hi = mid;
	}
	*z = hi;
	return 0;
}

int
jgauss_plan(struct jgauss_part *p, size_t np, double z, int target,
    double eps, double delta, double count, double *mu, size_t *bad)
{
	for (double inflate = 1;; inflate *= 1 + 1e-9) {
		double mu2 = 0;

		for (size_t i = 0; i < np; i++) {
			double zp, s;

			if (p[i].w == 0)
				continue;
			zp = z * inflate / sqrt(p[i].w);
			s = zp * p[i].delta2;
			/* The grid term is 2^-24 of sigma times
			 * sqrt(nent): the iteration only grows and stops
			 * after a step or two. */
			for (;;) {
				double need = zp * noise_sens_l2(p[i].delta2,
				    noise_grid(s), p[i].nent);
				if (!(need > s))
					break;
				s = need;
			}
			p[i].sigma = s;
			p[i].grid = noise_grid(s);
			p[i].sens = noise_sens_l2(p[i].delta2, p[i].grid,
			    p[i].nent);
			if (p[i].grid == 0 || !isfinite(p[i].sens)) {
				*bad = i;
				return JGAUSS_E_RANGE;
			}
			mu2 += (p[i].sens / s) * (p[i].sens / s);
		}
		*mu = sqrt(mu2);
		if (target == JGAUSS_MU) {
			if (*mu * z <= 1)
				return 0;
		} else {
			double e = jgauss_rdp_eps(*mu, delta, count);
			if (isnan(e)) {
				*bad = np;
				return JGAUSS_E_RANGE;
			}
			if (e <= eps)
				return 0;
		}
	}
}
