/* logreg.c: balanced, penalised logistic regression (logreg.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "la.h"
#include "logreg.h"
#include "pverr.h"

static double
sigmoid(double t)
{
	return t >= 0 ? 1 / (1 + exp(-t)) : exp(t) / (1 + exp(t));
}

double
logreg_apply(const struct logreg *a, const double *f)
{
	double t = a->w[a->d];

	for (size_t j = 0; j < a->d; j++)
		t += a->w[j] * (f[j] - a->mu[j]) / a->sd[j];
	return sigmoid(t);
}

int
logreg_fit(struct logreg *a, const double *F, const int *lab, size_t n,
    size_t d, double lambda, int iters)
{
	size_t p = d + 1, n1 = 0;
	double *g, *H, *x, w1, w0;
	int rc = 0;

	memset(a, 0, sizeof *a);
	a->d = d;
	for (size_t i = 0; i < n; i++)
		n1 += lab[i] != 0;
	if (n1 == 0 || n1 == n)
		return PV_E_RANGE;
	g = calloc(p, sizeof *g);
	H = p > SIZE_MAX / p ? NULL : calloc(p * p, sizeof *H);
	x = calloc(p, sizeof *x);
	a->mu = calloc(d ? d : 1, sizeof *a->mu);
	a->sd = calloc(d ? d : 1, sizeof *a->sd);
	a->w = calloc(p, sizeof *a->w);
	if (!g || !H || !x || !a->mu || !a->sd || !a->w) {
		rc = PV_E_NOMEM;
		goto out;
	}
	w1 = (double)n / (2.0 * (double)n1);
	w0 = (double)n / (2.0 * (double)(n - n1));
	for (size_t j = 0; j < d; j++) {
		double m = 0, v = 0;
		for (size_t i = 0; i < n; i++)
			m += F[i * d + j];
		m /= (double)n;
		for (size_t i = 0; i < n; i++)
			v += (F[i * d + j] - m) * (F[i * d + j] - m);
		v = sqrt(v / (double)n);
		a->mu[j] = m;
		a->sd[j] = v > 1e-12 ? v : 1;
	}
	for (int it = 0; it < iters; it++) {
		double step = 0;

		memset(g, 0, p * sizeof *g);
		memset(H, 0, p * p * sizeof *H);
		for (size_t i = 0; i < n; i++) {
			double q, wi = lab[i] ? w1 : w0, r, c;

			for (size_t j = 0; j < d; j++)
				x[j] = (F[i * d + j] - a->mu[j]) / a->sd[j];
			x[d] = 1;
			q = logreg_apply(a, F + i * d);
			r = wi * (q - (lab[i] ? 1 : 0));
			c = wi * q * (1 - q);
			for (size_t j = 0; j < p; j++) {
				g[j] += r * x[j];
				for (size_t l = j; l < p; l++)
					H[j * p + l] += c * x[j] * x[l];
			}
		}
		for (size_t j = 0; j < d; j++) {
			g[j] += lambda * (double)n * a->w[j];
			H[j * p + j] += lambda * (double)n;
		}
		H[d * p + d] += 1e-9 * (double)n;
		if (la_chol(p, H) != 0) {
			rc = PV_E_NOTPD;
			break;
		}
		/* Solve U^T U delta = g: forward, then back substitution. */
		for (size_t j = 0; j < p; j++) {
			double t = g[j];
			for (size_t l = 0; l < j; l++)
				t -= H[l * p + j] * x[l];
			x[j] = t / H[j * p + j];
		}
		for (size_t j = p; j-- > 0;) {
			double t = x[j];
			for (size_t l = j + 1; l < p; l++)
				t -= H[j * p + l] * x[l];
			x[j] = t / H[j * p + j];
		}
		for (size_t j = 0; j < p; j++) {
			a->w[j] -= x[j];
			step = fmax(step, fabs(x[j]));
		}
		if (step < 1e-10)
			break;
	}
out:
	free(g);
	free(H);
	free(x);
	return rc;
}

void
logreg_free(struct logreg *a)
{
	free(a->mu);
	free(a->sd);
	free(a->w);
	a->mu = a->sd = a->w = NULL;
}
