/* dpnorm.c: DP input normalisation (dpnorm.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "covnoise.h"
#include "dpnorm.h"
#include "fpsum.h"
#include "noise.h"
#include "pverr.h"
#include "rdp.h"

static const char *const part_name[2] = { "feature sums",
	"feature sums of squares" };

int
dpnorm_plan(struct dpnorm *p, double sigma, double clip, double npub,
    size_t d, int unsafe_sq_c, char *msg, size_t len)
{
	size_t bad = 0;

	memset(p, 0, sizeof *p);
	p->sigma = sigma;
	p->clip = clip;
	p->npub = npub;
	/* A term x_j C / ||x|| (or its square): the norm's 2 d - 1
	 * operations, the root, the division, two products. */
	p->fp_margin = fpsum_margin(npub, 2.0 * (double)d + 9, 0x1p-53);
	if (!isfinite(p->fp_margin)) {
		snprintf(msg, len, "--public-records %g: too many rows for "
		    "the floating-point error bound", npub);
		return PV_E_OPTION;
	}
	p->part[0] = (struct jgauss_part){ .w = 0.5, .delta2 =
	    nextafter(clip * (1 + p->fp_margin), INFINITY), .nent = d };
	p->part[1] = (struct jgauss_part){ .w = 0.5, .delta2 =
	    nextafter((unsafe_sq_c ? clip : clip * clip) * (1 +
	    p->fp_margin), INFINITY), .nent = d };
	if (jgauss_plan(p->part, 2, sigma, JGAUSS_MU, 0, 0, 1, &p->mu,
	    &bad) != 0) {
		snprintf(msg, len, "the noise of the %s is out of range "
		    "(check --normalize)", part_name[bad < 2 ? bad : 0]);
		return PV_E_OPTION;
	}
	return 0;
}

int
dpnorm_release(const struct dpnorm *p, struct rng *r, const float *X,
    size_t n, size_t d, double *stats, char *msg, size_t len)
{
	double *q = stats + d;
	int64_t *k;
	int rc = 0;

	memset(stats, 0, 2 * d * sizeof *stats);
	for (size_t i = 0; i < n; i++) {
		const float *x = X + i * d;
		double ss = 0, s = 1;

		for (size_t j = 0; j < d; j++)
			ss += (double)x[j] * x[j];
		if (!isfinite(ss))
			continue;	/* a non-finite row is the zero row */
		if (sqrt(ss) > p->clip)
			s = p->clip / sqrt(ss);
		for (size_t j = 0; j < d; j++) {
			double v = (double)x[j] * s;

			stats[j] += v;
			q[j] += v * v;
		}
	}
	if ((k = calloc(d, sizeof *k)) == NULL)
		return PV_E_NOMEM;
	for (int i = 0; i < 2 && rc == 0; i++) {
		if ((rc = covnoise_draw(r, p->part[i].sigma, k, d)) == 0)
			rc = covnoise_apply(stats + (size_t)i * d, d, p->part[i].sigma,
			    k);
		if (rc == NOISE_E_NOMEM) {
			rc = PV_E_NOMEM;
		} else if (rc != 0) {
			snprintf(msg, len, "noise of the %s: %s: nothing was "
			    "released", part_name[i], noise_strerror(rc));
			rc = PV_E_NOISE;
		}
	}
	free(k);
	return rc;
}

void
dpnorm_finish(const struct dpnorm *p, const double *stats, size_t d,
    double *mean, double *sd)
{
	double floor = DPNORM_VAR_FLOOR * p->clip * p->clip;

	for (size_t j = 0; j < d; j++) {
		double m = stats[j] / p->npub;
		double v = stats[d + j] / p->npub - m * m;

		mean[j] = m;
		sd[j] = sqrt(v > floor ? v : floor);
	}
}

void
dpnorm_apply(float *X, size_t n, size_t d, const double *mean,
    const double *sd)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < d; j++)
			X[i * d + j] = (float)(((double)X[i * d + j] - mean[j]) /
			    sd[j]);
}

void
dpnorm_fold(struct nn_model *m, const double *mean, const double *sd)
{
	const struct nn_layer *L = &m->net.layer[0];
	float *W = m->param + L->off, *b = W + L->in * L->out;

	for (size_t k = 0; k < L->out; k++) {
		double c = b[k];

		for (size_t j = 0; j < L->in; j++) {
			double w = (double)W[j * L->out + k] / sd[j];

			W[j * L->out + k] = (float)w;
			c -= mean[j] * w;
		}
		b[k] = (float)c;
	}
}

int
dpnorm_ledger_entry(const struct dpnorm *p, size_t d, struct ledger_entry *e)
{
	static const char *const sig[2] = { "sigma_sum", "sigma_sq" };
	static const char *const sen[2] = { "l2_sensitivity_sum",
	    "l2_sensitivity_sq" };
	static const char *const grd[2] = { "grid_sum", "grid_sq" };
	int bad = 0;

	e->relation = LEDGER_ADD_REMOVE;
	jgauss_entry_curve(e, p->mu, 1);
#define PARAM(k, v) (bad |= ts_meta_setf(&e->params, (k), "%.17g", (v)))
	for (int i = 0; i < 2; i++) {
		PARAM(sig[i], p->part[i].sigma);
		PARAM(sen[i], p->part[i].sens);
		PARAM(grd[i], p->part[i].grid);
	}
	PARAM("clip", p->clip);
	PARAM("features", (double)d);
	PARAM("noise_multiplier", 1 / p->mu);
	PARAM("fp_margin", p->fp_margin);
	PARAM("rows_bound", p->npub);
	PARAM("public_records", p->npub);
#undef PARAM
	return bad ? PV_E_NOMEM : 0;
}
