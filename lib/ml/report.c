/* report.c: confusion matrix and per-class scores (report.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pverr.h"
#include "report.h"

static double
ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0;
}

void
report_free(struct report *r)
{
	free(r->cm);
	free(r->pred);
	free(r->support);
	free(r->precision);
	free(r->recall);
	free(r->f1);
	memset(r, 0, sizeof *r);
}

int
report_compute(struct report *r, const int64_t *y, const int32_t *pred,
    size_t n, size_t k)
{
	size_t K1 = k + 1;

	memset(r, 0, sizeof *r);
	if (k == 0 || k > SIZE_MAX / sizeof *r->cm / K1)
		return PV_E_RANGE;
	r->k = k;
	r->n = n;
	r->cm = calloc(k * K1, sizeof *r->cm);
	r->pred = calloc(k, sizeof *r->pred);
	r->support = calloc(k, sizeof *r->support);
	r->precision = calloc(k, sizeof *r->precision);
	r->recall = calloc(k, sizeof *r->recall);
	r->f1 = calloc(k, sizeof *r->f1);
	if (!r->cm || !r->pred || !r->support || !r->precision ||
	    !r->recall || !r->f1) {
		report_free(r);
		return PV_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (y[i] < 0 || (uint64_t)y[i] >= k || pred[i] < -1 ||
		    (pred[i] >= 0 && (size_t)pred[i] >= k)) {
			report_free(r);
			return PV_E_RANGE;
		}
		r->cm[(size_t)y[i] * K1 + (pred[i] < 0 ? k :
		    (size_t)pred[i])]++;
	}
	for (size_t i = 0; i < k; i++) {
		r->right += r->cm[i * K1 + i];
		r->none += r->cm[i * K1 + k];
		for (size_t j = 0; j < k; j++)
			r->pred[j] += r->cm[i * K1 + j];
	}
	for (size_t i = 0; i < k; i++) {
		double p, rc, f;

		for (size_t j = 0; j <= k; j++)
			r->support[i] += r->cm[i * K1 + j];
		p = ratio(r->cm[i * K1 + i], r->pred[i]);
		rc = ratio(r->cm[i * K1 + i], r->support[i]);
		f = p + rc > 0 ? 2 * p * rc / (p + rc) : 0;
		r->precision[i] = p;
		r->recall[i] = rc;
		r->f1[i] = f;
		r->macro_p += p;
		r->macro_r += rc;
		r->macro_f += f;
	}
	r->macro_p /= (double)k;
	r->macro_r /= (double)k;
	r->macro_f /= (double)k;
	r->accuracy = ratio(r->right, n);
	return 0;
}
