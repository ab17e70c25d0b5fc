/* uda.c: associative, distillation and information-maximisation losses
 * (see uda.h for the formulas and their sources). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ck.h"
#include "la.h"
#include "uda.h"

/* Most rows of one associative batch: the work array is quadratic. */
#define UDA_MAX_ROWS (1u << 16)

size_t
uda_assoc_work(size_t na, size_t nb, size_t h)
{
	size_t quad = 4 * na * nb + 2 * na * na + nb + 2 * na, emb, n;

	if (na == 0 || nb == 0 || na > UDA_MAX_ROWS || nb > UDA_MAX_ROWS ||
	    h == 0)
		return 0;
	/* M/P^ab, P^ba, G^ab, G^ba: na nb each; P^aba, G^aba: na^2 each;
	 * P^visit: nb; P^cover and the class counts: na each (quad, which
	 * cannot overflow for rows <= 2^16); A and B in double and the
	 * gradient in A before its rounding to float: (2 na + nb) h. */
	if (ck_mul_size(2 * na + nb, h, &emb) != 0 ||
	    ck_add_size(quad, emb, &n) != 0 || n > SIZE_MAX / sizeof(double))
		return 0;
	return n;
}

/* Softmax of the n values x[0], x[stride], ... into p (packed). */
static void
softmax_strided(const double *x, size_t n, size_t stride, double *p)
{
	double mx = -INFINITY, s = 0;

	for (size_t i = 0; i < n; i++)
		if (x[i * stride] > mx)
			mx = x[i * stride];
	for (size_t i = 0; i < n; i++)
		s += p[i] = exp(x[i * stride] - mx);
	for (size_t i = 0; i < n; i++)
		p[i] /= s;
}

/* In place: the gradient in the logits of a row softmax p (n values),
 * from the gradient g in p: p_j (g_j - sum_k g_k p_k). */
static void
softmax_back(const double *p, double *g, size_t n)
{
	double dot = 0;

	for (size_t k = 0; k < n; k++)
		dot += g[k] * p[k];
	for (size_t j = 0; j < n; j++)
		g[j] = p[j] * (g[j] - dot);
}

int
uda_assoc(const float *A, const float *B, size_t na, size_t nb, size_t h,
    const int32_t *y, const double w[3], double *loss,
    struct uda_assoc_parts *parts, float *gA, float *gB, double *work)
{
	double *Pab, *Pba, *Gab, *Gba, *Paba, *Gaba, *vis, *cov, *cnt;
	double *Ad, *Bd, *GA;
	double lw = 0, lv = 0, lc = 0;

	if (uda_assoc_work(na, nb, h) == 0)
		return UDA_E_RANGE;
	for (int i = 0; i < 3; i++)
		if (!(w[i] >= 0) || !isfinite(w[i]))
			return UDA_E_RANGE;
	for (size_t i = 0; i < na; i++)
		if (y[i] < 0)
			return UDA_E_RANGE;
	Pab = work;
	Pba = Pab + na * nb;
	Gab = Pba + nb * na;
	Gba = Gab + na * nb;
	Paba = Gba + nb * na;
	Gaba = Paba + na * na;
	vis = Gaba + na * na;
	cov = vis + nb;
	cnt = cov + na;
	Ad = cnt + na;
	Bd = Ad + na * h;
	GA = Bd + nb * h;

	/* The products are DGEMMs on double copies of A and B (exact: every
	 * float is a double), so the sums differ from a plain loop's only by
	 * their order.  M = A B^T (in Pab), then P^ba from its columns, P^ab
	 * from its rows (in place). */
	for (size_t i = 0; i < na * h; i++)
		Ad[i] = (double)A[i];
	for (size_t i = 0; i < nb * h; i++)
		Bd[i] = (double)B[i];
	la_gemm(0, 1, na, nb, h, 1, Ad, Bd, 0, Pab);
	for (size_t j = 0; j < nb; j++)
		softmax_strided(Pab + j, na, nb, Pba + j * na);
	for (size_t i = 0; i < na; i++) {
		double *row = Pab + i * nb;
		softmax_strided(row, nb, 1, Gab);
		memcpy(row, Gab, nb * sizeof *row);
	}
	/* P^aba = P^ab P^ba. */
	la_gemm(0, 0, na, na, nb, 1, Pab, Pba, 0, Paba);
	/* Walker: T_il = [y_i = y_l] / cnt_i. */
	for (size_t i = 0; i < na; i++) {
		cnt[i] = 0;
		for (size_t l = 0; l < na; l++)
			cnt[i] += y[l] == y[i];
	}
	for (size_t i = 0; i < na; i++)
		for (size_t l = 0; l < na; l++) {
			double T = y[l] == y[i] ? 1 / cnt[i] : 0;
			double p = Paba[i * na + l] + UDA_LOG_EPS;

			if (T > 0)
				lw -= T * log(p);
			Gaba[i * na + l] = -w[0] * T / ((double)na * p);
		}
	lw /= (double)na;
	/* Visit and cover. */
	for (size_t j = 0; j < nb; j++) {
		double s = 0;
		for (size_t i = 0; i < na; i++)
			s += Pab[i * nb + j];
		vis[j] = s / (double)na + UDA_LOG_EPS;
		lv -= log(vis[j]);
	}
	lv /= (double)nb;
	for (size_t i = 0; i < na; i++) {
		double s = 0;
		for (size_t j = 0; j < nb; j++)
			s += Pba[j * na + i];
		cov[i] = s / (double)nb + UDA_LOG_EPS;
		lc -= log(cov[i]);
	}
	lc /= (double)na;
	*loss = w[0] * lw + w[1] * lv + w[2] * lc;
	if (parts != NULL) {
		parts->walker = lw;
		parts->visit = lv;
		parts->cover = lc;
	}
	if (gA == NULL || gB == NULL)
		return UDA_OK;

	/* Gradients in P^ab and P^ba: through P^aba = P^ab P^ba
	 * (G^ab = G^aba P^ba^T, G^ba = P^ab^T G^aba), then the visit and
	 * cover terms. */
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			Gab[i * nb + j] = -w[1] / ((double)nb * (double)na *
			    vis[j]);
	la_gemm(0, 1, na, nb, na, 1, Gaba, Pba, 1, Gab);
	for (size_t j = 0; j < nb; j++)
		for (size_t l = 0; l < na; l++)
			Gba[j * na + l] = -w[2] / ((double)na * (double)nb *
			    cov[l]);
	la_gemm(1, 0, nb, na, na, 1, Pab, Gaba, 1, Gba);
	/* Through the softmaxes, into dL/dM = dS^ab + (dS^ba)^T (in Gab). */
	for (size_t i = 0; i < na; i++)
		softmax_back(Pab + i * nb, Gab + i * nb, nb);
	for (size_t j = 0; j < nb; j++)
		softmax_back(Pba + j * na, Gba + j * na, na);
	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			Gab[i * nb + j] += Gba[j * na + i];
	/* M = A B^T: dL/dA = dM B (in GA), dL/dB = dM^T A (in Bd, no
	 * longer needed), rounded to float once. */
	la_gemm(0, 0, na, h, nb, 1, Gab, Bd, 0, GA);
	for (size_t i = 0; i < na * h; i++)
		gA[i] = (float)GA[i];
	la_gemm(1, 0, nb, h, na, 1, Gab, Ad, 0, Bd);
	for (size_t i = 0; i < nb * h; i++)
		gB[i] = (float)Bd[i];
	return UDA_OK;
}

/* Whether the k values of z are all finite. */
static int
finite_row(const float *z, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (!isfinite(z[j]))
			return 0;
	return 1;
}

/* The maximum and log-sum-exp of z / temp. */
static double
lse(const float *z, size_t k, double temp, double *mx)
{
	double m = -INFINITY, s = 0;

	for (size_t j = 0; j < k; j++)
		if ((double)z[j] / temp > m)
			m = (double)z[j] / temp;
	for (size_t j = 0; j < k; j++)
		s += exp((double)z[j] / temp - m);
	*mx = m;
	return m + log(s);
}

double
uda_kd(const float *s, const float *z, size_t n, size_t k, double temp,
    float *g)
{
	double tot = 0;

	for (size_t i = 0; i < n; i++) {
		const float *si = s + i * k, *zi = z + i * k;
		double ls, lz, ms, mz, row = 0;

		if (!finite_row(si, k) || !finite_row(zi, k)) {
			if (g != NULL)
				memset(g + i * k, 0, k * sizeof *g);
			continue;
		}
		ls = lse(si, k, temp, &ms);
		lz = lse(zi, k, temp, &mz);
		for (size_t j = 0; j < k; j++) {
			double q = exp((double)si[j] / temp - ls);
			double logp = (double)zi[j] / temp - lz;

			row -= q * logp;
			if (g != NULL)
				g[i * k + j] = (float)(temp * (exp(logp) - q));
		}
		tot += temp * temp * row;
	}
	return tot;
}

double
uda_im(const float *z, size_t n, size_t k, float *g, double *ent,
    double *div, double *work)
{
	double *pbar = work, hbar = 0, hmean = 0, m;
	size_t used = 0;

	memset(pbar, 0, k * sizeof *pbar);
	for (size_t i = 0; i < n; i++) {
		const float *zi = z + i * k;
		double l;

		if (!finite_row(zi, k))
			continue;
		used++;
		l = lse(zi, k, 1, &m);
		for (size_t j = 0; j < k; j++) {
			double lp = (double)zi[j] - l, p = exp(lp);

			pbar[j] += p;
			hmean -= p * lp;
		}
	}
	if (used == 0) {
		if (g != NULL)
			memset(g, 0, n * k * sizeof *g);
		if (ent != NULL)
			*ent = 0;
		if (div != NULL)
			*div = 0;
		return 0;
	}
	hmean /= (double)used;
	/* pbar, then log pbar in its place (floored so that a class no row
	 * predicts stays finite). */
	for (size_t j = 0; j < k; j++) {
		pbar[j] /= (double)used;
		if (pbar[j] > 0)
			hbar -= pbar[j] * log(pbar[j]);
		pbar[j] = log(pbar[j] > 1e-300 ? pbar[j] : 1e-300);
	}
	if (ent != NULL)
		*ent = hmean;
	if (div != NULL)
		*div = hbar;
	if (g == NULL)
		return hmean - hbar;
	/* Row i, logit j (p = p_i, H_i its entropy):
	 *   dH_i/dz_j = -p_j (log p_j + H_i),
	 *   d(-H(pbar))/dz_j = (1/n) p_j (log pbar_j - sum_k p_k log pbar_k). */
	for (size_t i = 0; i < n; i++) {
		const float *zi = z + i * k;
		double l, hi = 0, dot = 0;

		if (!finite_row(zi, k)) {
			memset(g + i * k, 0, k * sizeof *g);
			continue;
		}
		l = lse(zi, k, 1, &m);
		for (size_t j = 0; j < k; j++) {
			double lp = (double)zi[j] - l, p = exp(lp);

			hi -= p * lp;
			dot += p * pbar[j];
		}
		for (size_t j = 0; j < k; j++) {
			double lp = (double)zi[j] - l, p = exp(lp);

			g[i * k + j] = (float)((-p * (lp + hi) + p * (pbar[j] -
			    dot)) / (double)used);
		}
	}
	return hmean - hbar;
}
