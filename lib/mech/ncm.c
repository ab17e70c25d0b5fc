/* ncm.c: DP nearest class mean (ncm.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "covnoise.h"
#include "fpsum.h"
#include "ncm.h"
#include "noise.h"
#include "pverr.h"
#include "rdp.h"

int
ncm_plan(struct ncm_plan *pl, const struct ncm_params *p, size_t K,
    size_t d, char *msg, size_t len)
{
	size_t bad = 0;

	memset(pl, 0, sizeof *pl);
	if (!p->noise)
		return 0;
	/* Each term x_j C / ||x|| of a clipped row: d products and d - 1
	 * additions for ||x||^2, the root, the division, the product. */
	pl->fp_margin = fpsum_margin(p->rows_bound, 2.0 * (double)d + 8,
	    0x1p-53);
	if (!isfinite(pl->fp_margin)) {
		snprintf(msg, len, "%g rows: too many for the floating-point "
		    "error bound", p->rows_bound);
		return PV_E_OPTION;
	}
	pl->part = (struct jgauss_part){ .w = 1, .delta2 =
	    nextafter(p->clip * (1 + pl->fp_margin), INFINITY),
	    .nent = (uint64_t)K * d };
	/* The broken variant of the audit: noise for half of it. */
	if (p->unsafe_half)
		pl->part.delta2 /= 2;
	if (!p->calibrate) {
		pl->z = p->sigma;
	} else if (jgauss_calibrate_rdp(p->epsilon, p->delta, 1, &pl->z)
	    != 0) {
		snprintf(msg, len, "--epsilon %g --delta %g needs a noise "
		    "multiplier above %g", p->epsilon, p->delta, pl->z);
		return PV_E_OPTION;
	}
	/* The recorded curve must not exceed what was asked for, the grid
	 * included (jgauss_plan inflates z until it does not). */
	if (jgauss_plan(&pl->part, 1, pl->z, p->calibrate ? JGAUSS_RDP :
	    JGAUSS_MU, p->epsilon, p->delta, 1, &pl->mu, &bad) != 0) {
		if (bad >= 1) {
			snprintf(msg, len, "cannot convert the RDP curve");
			return PV_E_NUMERIC;
		}
		snprintf(msg, len, "the noise of the class sums is out of "
		    "range (check --clip and --sigma)");
		return PV_E_OPTION;
	}
	return 0;
}

void
ncm_stats(const float *X, const int32_t *y, size_t n, size_t d, size_t K,
    double clip, double *stats)
{
	memset(stats, 0, K * d * sizeof *stats);
	for (size_t i = 0; i < n; i++) {
		const float *x = X + i * d;
		double ss = 0, s = 1, *S;

		if (y[i] < 0 || (size_t)y[i] >= K)
			continue;
		for (size_t j = 0; j < d; j++)
			ss += (double)x[j] * x[j];
		if (!isfinite(ss))
			continue;	/* a non-finite row is the zero row */
		if (sqrt(ss) > clip)
			s = clip / sqrt(ss);
		S = stats + (size_t)y[i] * d;
		for (size_t j = 0; j < d; j++)
			S[j] += (double)x[j] * s;
	}
}

int
ncm_noise(const struct ncm_plan *pl, struct rng *r, double *stats,
    size_t K, size_t d, char *msg, size_t len)
{
	int64_t *k;
	int rc;

	if ((k = calloc(K * d, sizeof *k)) == NULL)
		return PV_E_NOMEM;
	if ((rc = covnoise_draw(r, pl->part.sigma, k, K * d)) == 0)
		rc = covnoise_apply(stats, K * d, pl->part.sigma, k);
	free(k);
	if (rc == NOISE_E_NOMEM)
		return PV_E_NOMEM;
	if (rc != 0) {
		snprintf(msg, len, "noise of the class sums: %s: nothing was "
		    "released", noise_strerror(rc));
		return PV_E_NOISE;
	}
	return 0;
}

void
ncm_model(const double *stats, size_t K, size_t d, float *W, float *b)
{
	for (size_t k = 0; k < K; k++) {
		const double *S = stats + k * d;
		double nn = 0;

		for (size_t j = 0; j < d; j++)
			nn += S[j] * S[j];
		nn = sqrt(nn);
		for (size_t j = 0; j < d; j++)
			W[j * K + k] = nn > 0 ? (float)(S[j] / nn) : 0;
		b[k] = 0;
	}
}

int
ncm_ledger_entry(const struct ncm_plan *pl, const struct ncm_params *p,
    size_t K, struct ledger_entry *e)
{
	double reps = p->repeats ? (double)p->repeats : 1;
	int bad = 0;

	e->relation = LEDGER_ADD_REMOVE;
	jgauss_entry_curve(e, pl->mu, reps);
#define PARAM(k, v) (bad |= ts_meta_setf(&e->params, (k), "%.17g", (v)))
	PARAM("sigma", pl->part.sigma);
	PARAM("l2_sensitivity", pl->part.sens);
	PARAM("grid", pl->part.grid);
	PARAM("clip", p->clip);
	PARAM("classes", (double)K);
	PARAM("noise_multiplier", 1 / pl->mu);
	PARAM("fp_margin", pl->fp_margin);
	PARAM("rows_bound", p->rows_bound);
	if (p->repeats)
		PARAM("audit_releases", reps);
	if (p->unsafe_half)
		PARAM("unsafe_test_half_sensitivity", 1.0);
#undef PARAM
	return bad ? PV_E_NOMEM : 0;
}
