/*
 * rdp.c: Renyi differential privacy accounting (see rdp.h).
 *
 * The subsampled Gaussian follows Mironov, Talwar and Zhang, "Renyi
 * Differential Privacy of the Sampled Gaussian Mechanism" (2019), section
 * 3.3.  With mu0 = N(0, s^2), mu1 = N(1, s^2) and mu = (1-q) mu0 + q mu1,
 * the RDP at order a is log(A_a)/(a-1) where
 *
 *	A_a = E_{z~mu0} [(1 - q + q e(z))^a],  e(z) = exp((2z - 1)/(2 s^2)).
 *
 * Everything below works with A_a - 1 rather than A_a, so that the tiny
 * RDP values of small q keep their relative precision.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rdp.h"

#define LOG2 0.693147180559945309417232121458176568
#define LOG_SQRT_PI 0.572364942924700087071713675676529356
#define SQRT2 1.41421356237309504880168872420969808

/* Terms of the alternating series tail kept for the acceleration. */
#define TAIL_MAX 20
/* Relative size of a neglected alternating tail. */
#define TAIL_TOL 1e-17

static const double default_orders[RDP_DEFAULT_NORDERS] = {
	1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.1, 2.2, 2.3, 2.4,
	2.5, 2.6, 2.7, 2.8, 2.9, 3.0, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8,
	3.9, 4.0, 4.1, 4.2, 4.3, 4.4, 4.5, 4.6, 4.7, 4.8, 4.9, 5.0, 5.1, 5.2,
	5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9, 6.0, 6.1, 6.2, 6.3, 6.4, 6.5, 6.6,
	6.7, 6.8, 6.9, 7.0, 7.1, 7.2, 7.3, 7.4, 7.5, 7.6, 7.7, 7.8, 7.9, 8.0,
	8.1, 8.2, 8.3, 8.4, 8.5, 8.6, 8.7, 8.8, 8.9, 9.0, 9.1, 9.2, 9.3, 9.4,
	9.5, 9.6, 9.7, 9.8, 9.9, 10.0, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6,
	10.7, 10.8, 10.9, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0,
	20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0,
	32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0,
	44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0,
	56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 128.0, 256.0, 512.0,
	1024.0
};

const char *
rdp_strerror(int code)
{
	switch (code) {
	case RDP_OK:
		return "success";
	case RDP_E_PARAM:
		return "argument out of range";
	case RDP_E_NOMEM:
		return "out of memory";
	case RDP_E_NUMERIC:
		return "numerical failure";
	case RDP_E_NOROOT:
		return "no solution in the search range";
	default:
		return "unknown error";
	}
}

const double *
rdp_default_orders(size_t *n)
{
	if (n != NULL)
		*n = RDP_DEFAULT_NORDERS;
	return default_orders;
}

const char *
rdp_check_orders(const double *orders, size_t n)
{
	if (orders == NULL || n == 0)
		return "empty order list";
	if (n > RDP_MAX_ORDERS)
		return "too many orders";
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(orders[i]))
			return "an order is not a finite number";
		if (!(orders[i] > 1))
			return "an order is not greater than 1";
		if (orders[i] > RDP_MAX_ALPHA)
			return "an order exceeds the largest supported order";
	}
	return NULL;
}

/* ---- log-space special functions ---- */

/* log(1 + x) - x, accurate also for small |x|. */
static double
log1pmx(double x)
{
	if (fabs(x) > 0.25)
		return log1p(x) - x;
	/* Series -x^2/2 + x^3/3 - ...; |x| <= 1/4 needs 30 terms. */
	double p = x * x, s = 0;
	for (int k = 2; k < 40; k++) {
		double t = p / k;
		s += (k % 2 == 0) ? -t : t;
		if (fabs(t) < 1e-20 * fabs(s))
			break;
		p *= x;
	}
	return s;
}

/* log(expm1(x)) for x > 0. */
static double
log_expm1(double x)
{
	if (x > 50)
		return x;	/* log1p(-e^-x) is below 2e-22 */
	return log(expm1(x));
}

/* log(1 - exp(x)) for x <= 0. */
static double
log1mexp(double x)
{
	if (x < -LOG2)
		return log1p(-exp(x));
	return log(-expm1(x));
}

/* log(exp(a) + exp(b)). */
static double
logaddexp(double a, double b)
{
	double m = a > b ? a : b;

	if (m == -INFINITY)
		return -INFINITY;
	if (m == INFINITY)
		return INFINITY;
	return m + log1p(exp(-fabs(a - b)));
}

/*
 * log(erfcx(x)) = log(erfc(x)) + x^2 for x >= 26, where erfc underflows:
 * the asymptotic series erfcx(x) = 1/(x sqrt(pi)) sum_n (-1)^n
 * (2n-1)!!/(2x^2)^n, whose terms fall below 1e-19 by n = 6 there.
 */
static double
log_erfcx_asym(double x)
{
	double r = 1 / (2 * x * x), t = 1, s = 0;

	for (int n = 1; n < 12; n++) {
		t *= -(2 * n - 1) * r;
		s += t;
		if (fabs(t) < 1e-20)
			break;
	}
	return -log(x) - LOG_SQRT_PI + log1p(s);
}

/* log(erfc(x)) for every real x. */
static double
log_erfc(double x)
{
	if (x < 26)
		return log(erfc(x));
	return log_erfcx_asym(x) - x * x;
}

/* log(erfc(x) exp(x^2)) for x >= 0. */
static double
log_erfcx(double x)
{
	if (x < 26)
		return log(erfc(x)) + x * x;
	return log_erfcx_asym(x);
}

/* log Phi(x), Phi the standard normal distribution function. */
static double
log_ndtr(double x)
{
	if (x > 5)
		return log1p(-0.5 * erfc(x / SQRT2));
	return log_erfc(-x / SQRT2) - LOG2;
}

/* ---- a sum of signed terms given by their logarithms ---- */

/* The value is s * exp(m); s is kept within a few orders of magnitude of
 * the largest term added so far, so nothing overflows. */
struct lsum {
	long double s;
	double m;
};

#define LSUM_INIT { 0.0L, -INFINITY }

static void
lsum_add(struct lsum *a, int sign, double lmag)
{
	if (lmag == -INFINITY)
		return;
	if (lmag > a->m) {
		a->s = a->s * exp(a->m - lmag) + sign;
		a->m = lmag;
	} else {
		a->s += sign * exp(lmag - a->m);
	}
}

/* Sign and log magnitude of the sum; sign 0 for an exact zero. */
static int
lsum_get(const struct lsum *a, double *lmag)
{
	if (a->s == 0 || a->m == -INFINITY) {
		*lmag = -INFINITY;
		return 0;
	}
	*lmag = a->m + (double)logl(fabsl(a->s));
	return a->s > 0 ? 1 : -1;
}

/*
 * Sum of the alternating series sum_k (-1)^k x[k] from its first n terms,
 * by algorithm 1 of Cohen, Rodriguez Villegas and Zagier, "Convergence
 * acceleration of alternating series" (2000).  When the magnitudes x[k]
 * are the moments of a positive measure on [0, 1] (here: products of
 * |C(a, i)| for i > a, a Beta-function moment, and of erfcx at an
 * increasing affine function of i, a Laplace transform), the error is at
 * most 2 x[0] / (3 + sqrt(8))^n.
 */
static long double
cvz_sum(const double *x, int n)
{
	long double d = 1, b = -1, c, s = 0;

	for (int k = 0; k < n; k++)
		d *= 3 + 2 * SQRT2;	/* (3 + sqrt 8)^n */
	d = (d + 1 / d) / 2;
	c = -d;
	for (int k = 0; k < n; k++) {
		c = b - c;
		s += c * x[k];
		b = (long double)(k + n) * (k - n) * b /
		    ((k + 0.5L) * (k + 1));
	}
	return s / d;
}

/* ---- the subsampled Gaussian ---- */

/* RDP from log(A - 1) (sign of A - 1 in sgn) at order a. */
static double
rdp_from_am1(int sgn, double lam1, double a)
{
	double la;

	if (sgn <= 0)	/* A >= 1 in exact arithmetic: rounding noise only */
		return 0;
	if (lam1 > 0)
		la = lam1 + log1p(exp(-lam1));
	else
		la = log1p(exp(lam1));
	return la / (a - 1);
}

/* erfc(x) exp(x^2) for x >= 0. */
static double
erfcx_pos(double x)
{
	if (x < 26)
		return exp(x * x) * erfc(x);
	return exp(log_erfcx_asym(x));
}

/*
 * What one call shares between its orders: the parameters in log form,
 * a table of log k for the integer orders, and the factors of the first
 * series that do not depend on the order (see sgm_frac).
 */
#define F1_MAX 96

struct sgm_ctx {
	double q, sigma, lq, l1q, s2, rs, z0;
	double lbr0, lbr1;	/* log Phi_c(z0/s) and log Phi_c((z0-1)/s) */
	double lpq;		/* log1pmx(-q) */
	const double *lg;	/* lg[k] = log k for k <= nlg, or NULL */
	size_t nlg;
	int nf1;		/* f1[0..nf1-1] are filled */
	double f1[F1_MAX];
};

static void
sgm_ctx_init(struct sgm_ctx *cx, double q, double sigma)
{
	cx->q = q;
	cx->sigma = sigma;
	cx->lq = log(q);
	cx->l1q = log1p(-q);
	cx->s2 = 2 * sigma * sigma;
	cx->rs = 1 / (SQRT2 * sigma);
	cx->z0 = sigma * sigma * (cx->l1q - cx->lq) + 0.5;
	cx->lbr0 = log_erfc(cx->z0 * cx->rs) - LOG2;
	cx->lbr1 = log_erfc((cx->z0 - 1) * cx->rs) - LOG2;
	cx->lpq = log1pmx(-q);
	cx->lg = NULL;
	cx->nlg = 0;
	cx->nf1 = 0;
}

/*
 * The factor of the first series at index i that does not depend on the
 * order: P(N(i, s^2) <= z0) when i <= z0, else erfcx((i - z0)/(sqrt 2 s)).
 */
static double
sgm_f1(struct sgm_ctx *cx, double i)
{
	double z0 = cx->z0, rs = cx->rs;

	if (i >= F1_MAX)
		return i <= z0 ? 1 - 0.5 * erfc((z0 - i) * rs) :
		    erfcx_pos((i - z0) * rs);
	while (cx->nf1 <= i) {
		double k = cx->nf1;

		cx->f1[cx->nf1++] = k <= z0 ? 1 - 0.5 * erfc((z0 - k) * rs) :
		    erfcx_pos((k - z0) * rs);
	}
	return cx->f1[(int)i];
}

/*
 * Integer order m >= 2: A - 1 = sum_{i=2}^m C(m,i) (1-q)^(m-i) q^i
 * expm1((i^2 - i)/(2 s^2)), because the same sum without the expm1 is
 * (1 - q + q)^m = 1 and the terms i = 0, 1 carry expm1(0) = 0.  Every term
 * is positive, so the sum has no cancellation at all.
 */
static double
sgm_int(const struct sgm_ctx *cx, double a)
{
	double lq = cx->lq, l1q = cx->l1q, s2 = cx->s2;
	const double *lg = a <= (double)cx->nlg ? cx->lg : NULL;
	double m = a, lc, lam1, i, di, t;
	struct lsum acc = LSUM_INIT;
	int sgn;

	/* Start at the end with the larger term, so that terms far below
	 * the running maximum can be skipped: a term e^-50 below it changes
	 * the sum by less than 2e-22 relative, and there are at most 65536.
	 * lc is log C(m, i), updated by the ratio of consecutive ones. */
	lc = log(m * (m - 1) / 2);
	t = lc + (m - 2) * l1q + 2 * lq + log_expm1(2 / s2);
	if (m * lq + log_expm1((m * m - m) / s2) > t) {
		i = m;
		di = -1;
		lc = 0;
	} else {
		i = 2;
		di = 1;
	}
	for (; i >= 2 && i <= m; i += di) {
		double x = (i * i - i) / s2;

		/* Going down, the terms left sum to at most e^x times a sum
		 * of binomial probabilities, so at most e^x. */
		if (di < 0 && x < acc.m - 50)
			break;
		t = lc + (m - i) * l1q + i * lq + log_expm1(x);
		if (t > acc.m - 50)
			lsum_add(&acc, 1, t);
		/* C(m, i+1)/C(m, i) = (m-i)/(i+1) */
		if (i + di < 2 || i + di > m)
			break;
		if (di > 0 && lg != NULL)
			lc += lg[(size_t)(m - i)] - lg[(size_t)i + 1];
		else if (di > 0)
			lc += log((m - i) / (i + 1));
		else if (lg != NULL)
			lc += lg[(size_t)i] - lg[(size_t)(m - i) + 1];
		else
			lc += log(i / (m - i + 1));
	}
	sgn = lsum_get(&acc, &lam1);
	return rdp_from_am1(sgn, lam1, a);
}

/*
 * Fractional order a.  Split the expectation at z0, where q e(z0) = 1 - q,
 * and expand (1 - q + q e)^a binomially in the smaller of the two terms
 * on each side (generalised binomial coefficients C(a, i)):
 *
 *	A = sum_i C(a,i) [F_i + G_i]
 *	F_i = (1-q)^(a-i) q^i M(i) P(N(i, s^2) <= z0)
 *	G_i = (1-q)^i q^(a-i) M(a-i) P(N(a-i, s^2) > z0)
 *
 * with M(j) = exp((j^2 - j)/(2 s^2)).  Because (2 z0 - 1)/(2 s^2) =
 * log((1-q)/q), both reduce beyond z0 to the same shape
 * (1-q)^a exp(-z0^2/(2 s^2)) erfcx(.)/2, which is how they are evaluated
 * there (erfc would underflow while M overflows).
 *
 * C(a, i) > 0 for i <= floor(a) + 1 and alternates in sign afterwards.
 * The magnitudes |C(a,i)| (F_i + G_i) decay only like a power of i when
 * z0 is small, so the alternating tail is summed directly while its terms
 * shrink fast, and otherwise accelerated (cvz_sum).
 *
 * The terms i = 0, 1 of the first sum are combined with the -1 of A - 1:
 * F_0 + a F_1 - 1 = [(1-q)^a + a q (1-q)^(a-1) - 1] - (tails of Phi),
 * where the bracket is expm1 of (a-1) log1pmx(-q) + log1pmx((a-1) q) and
 * of order -a(a-1)q^2/2, so no digits are lost to the leading 1.
 */
static int
sgm_frac(struct sgm_ctx *cx, double a, double *out)
{
	double q = cx->q, lq = cx->lq, l1q = cx->l1q, s2 = cx->s2;
	double rs = cx->rs, z0 = cx->z0;
	/* log of (1-q)^a exp(-z0^2/(2 s^2)) / 2 */
	double kz = a * l1q - z0 * z0 / s2 - LOG2;
	double i0 = floor(a) + 1, lc, g, x[TAIL_MAX], lam1, lh, l0 = 0;
	double c, kx, mag;
	struct lsum h = LSUM_INIT;
	long double part = 0;
	int sgn, n, sb = cx->q > 0.5;	/* which series holds the bracket */

	if (!sb) {
		/* F_0 + a F_1 - 1. */
		g = (a - 1) * cx->lpq + log1pmx((a - 1) * q);
		if (g < 0)
			lsum_add(&h, -1, log(-expm1(g)));
		lsum_add(&h, -1, a * l1q + cx->lbr0);
		lsum_add(&h, -1, log(a) + lq + (a - 1) * l1q + cx->lbr1);
	} else {
		/* G_0 + a G_1 - 1, the mirror image for q > 1/2 (z0 < 1/2):
		 * with p = 1 - q, q^a + a p q^(a-1) - 1 is small as above,
		 * and M(a), M(a-1) are taken as 1 + expm1. */
		double p = 1 - q, xa = (a * a - a) / s2;
		/* xb < 0 when a < 2 */
		double xb = ((a - 1) * (a - 1) - (a - 1)) / s2;

		g = (a - 1) * log1pmx(-p) + log1pmx((a - 1) * p);
		if (g < 0)
			lsum_add(&h, -1, log(-expm1(g)));
		lsum_add(&h, 1, a * lq + log_expm1(xa));
		if (xb != 0)
			lsum_add(&h, xb > 0 ? 1 : -1, log(a) + l1q +
			    (a - 1) * lq + (xb > 0 ? log_expm1(xb) :
			    log(-expm1(xb))));
		lsum_add(&h, -1, a * lq + xa +
		    log_ndtr((z0 - a) / cx->sigma));
		lsum_add(&h, -1, log(a) + l1q + (a - 1) * lq + xb +
		    log_ndtr((z0 - a + 1) / cx->sigma));
	}

	/* Terms i < i0, all positive, in log space (C(a, i) may be huge). */
	lc = 0;	/* log |C(a, i)| */
	for (double i = 0; i <= i0; i++) {
		double j = a - i, lf, lgg;

		if (i < 2 && !sb)
			lf = -INFINITY;	/* already in the bracket */
		else if (i <= z0)
			lf = (a - i) * l1q + i * lq + (i * i - i) / s2 +
			    log(sgm_f1(cx, i));
		else
			lf = kz + log(sgm_f1(cx, i));
		if (i < 2 && sb)
			lgg = -INFINITY;	/* already in the bracket */
		else if (j >= z0)
			lgg = i * l1q + j * lq + (j * j - j) / s2 +
			    log1p(-0.5 * erfc((j - z0) * rs));
		else
			lgg = kz + log_erfcx((z0 - j) * rs);
		if (i == i0) {
			l0 = lc + logaddexp(lf, lgg);	/* first tail term */
			break;
		}
		lsum_add(&h, 1, lc + lf);
		lsum_add(&h, 1, lc + lgg);
		lc += log(fabs(a - i) / (i + 1));
	}
	sgn = lsum_get(&h, &lh);
	if (l0 == -INFINITY) {
		/* The tail underflows entirely. */
		*out = rdp_from_am1(sgn, lh, a);
		return 0;
	}

	/*
	 * The tail i >= i0 alternates, with magnitudes decreasing (see
	 * cvz_sum), in linear scale relative to its first term: c is
	 * |C(a, i)| / |C(a, i0)| and kx the common factor of the erfcx form.
	 * Once a term is below TAIL_TOL times the sum so far, the rest (at
	 * most that term) is negligible; otherwise accelerate.
	 */
	mag = sgn * exp(lh - l0);	/* the head relative to the tail */
	kx = exp(lc + kz - l0);
	c = 1;
	x[0] = 1;
	part = 1;
	for (n = 1; n < TAIL_MAX; n++) {
		double i, j, f, gg;

		c *= (i0 + n - 1 - a) / (i0 + n);
		i = i0 + n;
		j = a - i;
		if (i <= z0)
			f = c * exp(lc - l0 + (a - i) * l1q + i * lq +
			    (i * i - i) / s2) * sgm_f1(cx, i);
		else
			f = c * kx * sgm_f1(cx, i);
		if (j >= z0)
			gg = c * exp(lc - l0 + i * l1q + j * lq +
			    (j * j - j) / s2) *
			    (1 - 0.5 * erfc((j - z0) * rs));
		else
			gg = c * kx * erfcx_pos((z0 - j) * rs);
		x[n] = f + gg;
		if (x[n] <= TAIL_TOL * fabsl(mag + part))
			break;
		part += (n % 2 ? -1 : 1) * (long double)x[n];
	}
	if (n == TAIL_MAX)
		part = cvz_sum(x, n);
	/* A - 1 = head + exp(l0) * part. */
	if (part > 0)
		lsum_add(&h, 1, l0 + (double)logl(part));
	else if (part < 0)
		lsum_add(&h, -1, l0 + (double)logl(-part));
	sgn = lsum_get(&h, &lam1);
	if (isnan(lam1))
		return RDP_E_NUMERIC;
	*out = rdp_from_am1(sgn, lam1, a);
	return 0;
}

static int
sgm_check(double q, double sigma)
{
	if (!(q >= 0 && q <= 1))
		return RDP_E_PARAM;
	if (!(sigma > 0) || !isfinite(sigma))
		return RDP_E_PARAM;
	return 0;
}

static int
sgm_one(struct sgm_ctx *cx, double a, double *rdp)
{
	if (cx->q == 0) {
		*rdp = 0;
		return 0;
	}
	if (cx->q == 1) {
		*rdp = a / (2 * cx->sigma * cx->sigma);
		return 0;
	}
	if (a == floor(a)) {
		*rdp = sgm_int(cx, a);
		return 0;
	}
	return sgm_frac(cx, a, rdp);
}

int
rdp_sgm1(double q, double sigma, double alpha, double *rdp)
{
	return rdp_sgm(q, sigma, &alpha, 1, rdp);
}

int
rdp_sgm(double q, double sigma, const double *orders, size_t n, double *rdp)
{
	double stack[1025], *lg = NULL, mx = 0;
	struct sgm_ctx cx;
	int rc = 0;

	if (sgm_check(q, sigma) != 0 || rdp_check_orders(orders, n) != NULL)
		return RDP_E_PARAM;
	sgm_ctx_init(&cx, q, sigma);
	/* A table of log k for the integer orders, when q is not trivial. */
	for (size_t k = 0; k < n; k++)
		if (orders[k] == floor(orders[k]) && orders[k] > mx)
			mx = orders[k];
	if (mx > 0 && q > 0 && q < 1) {
		size_t len = (size_t)mx + 1;

		lg = len <= 1025 ? stack : malloc(len * sizeof(double));
		if (lg == NULL)
			return RDP_E_NOMEM;
		lg[0] = -INFINITY;
		for (size_t k = 1; k < len; k++)
			lg[k] = log((double)k);
		cx.lg = lg;
		cx.nlg = len - 1;
	}
	for (size_t k = 0; k < n && rc == 0; k++)
		rc = sgm_one(&cx, orders[k], &rdp[k]);
	if (lg != stack)
		free(lg);
	return rc;
}

/* ---- other mechanisms ---- */

double
rdp_gaussian(double alpha, double sigma)
{
	return alpha / (2 * sigma * sigma);
}

/*
 * Laplace (Mironov 2017 Prop. 6).  With u = (a-1)/b and v = a/b the
 * argument of the log is 1 + [a expm1(u) + (a-1) expm1(-v)]/(2a-1), whose
 * leading terms cancel to a(a-1)(2a-1)/(2b^2); for large u the log is
 * taken of e^u times the rest instead.
 */
double
rdp_laplace(double alpha, double b)
{
	double a = alpha, u, v;

	if (!(a > 1) || !(b > 0) || isnan(a))
		return NAN;
	if (isinf(a))
		return 1 / b;
	u = (a - 1) / b;
	v = a / b;
	if (u < 1) {
		double x = (a * expm1(u) + (a - 1) * expm1(-v)) / (2 * a - 1);
		return log1p(x) / (a - 1);
	}
	return (u + log(a / (2 * a - 1) + (a - 1) / (2 * a - 1) *
	    exp(-(2 * a - 1) / b))) / (a - 1);
}

double
rdp_pure(double alpha, double eps)
{
	double z = 0.5 * eps * eps * alpha;

	return z < eps ? z : eps;
}

/* ---- conversions ---- */

static int
conv_check(const double *orders, const double *rdp, size_t n, int conv)
{
	if (rdp_check_orders(orders, n) != NULL || rdp == NULL)
		return RDP_E_PARAM;
	if (conv != RDP_CONV_IMPROVED && conv != RDP_CONV_CLASSIC)
		return RDP_E_PARAM;
	for (size_t k = 0; k < n; k++)
		if (!(rdp[k] >= 0))
			return RDP_E_PARAM;
	return 0;
}

int
rdp_to_epsilon(const double *orders, const double *rdp, size_t n,
    double delta, int conv, double *eps, double *order)
{
	double best = INFINITY, bo = orders != NULL && n > 0 ? orders[0] : 0;

	if (conv_check(orders, rdp, n, conv) != 0 ||
	    !(delta >= 0 && delta <= 1))
		return RDP_E_PARAM;
	if (delta == 0) {
		best = 0;
		for (size_t k = 0; k < n; k++)
			if (rdp[k] != 0)
				best = INFINITY;
		*eps = best;
		if (order != NULL)
			*order = 0;
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		double a = orders[k], r = rdp[k], e;

		if (isinf(r))
			continue;
		if (conv == RDP_CONV_CLASSIC) {
			e = r - log(delta) / (a - 1);
		} else if (delta * delta + expm1(-r) > 0) {
			e = 0;	/* delta >= sqrt(1 - exp(-KL)) */
		} else if (a > 1.01) {
			e = r + log1p(-1 / a) - log(delta * a) / (a - 1);
		} else {
			continue;	/* numerically unstable near 1 */
		}
		if (e < best) {
			best = e;
			bo = a;
		}
	}
	*eps = best > 0 ? best : 0;
	if (order != NULL)
		*order = bo;
	return 0;
}

int
rdp_to_delta(const double *orders, const double *rdp, size_t n,
    double eps, int conv, double *delta, double *order)
{
	double best = INFINITY, bo = orders != NULL && n > 0 ? orders[0] : 0;

	if (conv_check(orders, rdp, n, conv) != 0 || !(eps >= 0) ||
	    !isfinite(eps))
		return RDP_E_PARAM;
	for (size_t k = 0; k < n; k++) {
		double a = orders[k], r = rdp[k], ld;

		if (isinf(r))
			continue;
		if (conv == RDP_CONV_CLASSIC) {
			ld = (a - 1) * (r - eps);
		} else {
			ld = r == 0 ? -INFINITY : 0.5 * log1p(-exp(-r));
			if (a > 1.01) {
				double b = (a - 1) * (r - eps + log1p(-1 / a)) -
				    log(a);
				if (b < ld)
					ld = b;
			}
		}
		if (ld < best) {
			best = ld;
			bo = a;
		}
	}
	*delta = best < 0 ? exp(best) : 1;
	if (order != NULL)
		*order = bo;
	return 0;
}

/* ---- the subsampled Gaussian: epsilon and inverse queries ---- */

/* Orders or the defaults; a buffer of n doubles (the caller's stack
 * buffer when it is large enough). */
static int
orders_buf(const double **orders, size_t *n, double *stack, size_t nstack,
    double **buf)
{
	if (*orders == NULL) {
		*orders = rdp_default_orders(n);
	}
	if (rdp_check_orders(*orders, *n) != NULL)
		return RDP_E_PARAM;
	if (*n <= nstack) {
		*buf = stack;
		return 0;
	}
	*buf = malloc(*n * sizeof(double));
	return *buf == NULL ? RDP_E_NOMEM : 0;
}

#define NSTACK 1024

static int
eps_of_curve(const double *orders, const double *r1, double *tmp, size_t n,
    double steps, double delta, int conv, double *eps, double *order)
{
	for (size_t k = 0; k < n; k++)
		tmp[k] = steps == 0 ? 0 : r1[k] * steps;
	return rdp_to_epsilon(orders, tmp, n, delta, conv, eps, order);
}

int
rdp_sgm_epsilon(double q, double sigma, uint64_t steps, double delta,
    const double *orders, size_t n, int conv, double *eps, double *order)
{
	double stack[NSTACK], *r;
	int rc;

	if ((rc = orders_buf(&orders, &n, stack, NSTACK, &r)) != 0)
		return rc;
	rc = rdp_sgm(q, sigma, orders, n, r);
	if (rc == 0)
		rc = eps_of_curve(orders, r, r, n, (double)steps, delta, conv,
		    eps, order);
	if (r != stack)
		free(r);
	return rc;
}

static int
check_query(double delta, double target, int conv)
{
	if (!(delta > 0 && delta < 1) || !(target >= 0) || !isfinite(target))
		return RDP_E_PARAM;
	if (conv != RDP_CONV_IMPROVED && conv != RDP_CONV_CLASSIC)
		return RDP_E_PARAM;
	return 0;
}

int
rdp_solve_decreasing(double lo, double hi, double target,
    int (*f)(double x, void *arg, double *val), void *arg, double *x)
{
	double e;
	int rc;

	if ((rc = f(hi, arg, &e)) != 0)
		return rc;
	if (!(e <= target))
		return RDP_E_NOROOT;
	if ((rc = f(lo, arg, &e)) != 0)
		return rc;
	if (e <= target) {
		*x = lo;
		return 0;
	}
	/* Invariant: f(lo) > target >= f(hi). */
	while (hi / lo - 1 > 1e-12) {
		double mid = sqrt(lo * hi);

		if (mid <= lo || mid >= hi)
			break;
		if ((rc = f(mid, arg, &e)) != 0)
			return rc;
		if (e > target)
			lo = mid;
		else
			hi = mid;
	}
	*x = hi;
	return 0;
}

struct sgm_query {
	double q, delta;
	uint64_t steps;
	const double *orders;
	size_t n;
	int conv;
};

static int
sgm_eps_at(double sigma, void *arg, double *eps)
{
	const struct sgm_query *a = arg;

	return rdp_sgm_epsilon(a->q, sigma, a->steps, a->delta, a->orders,
	    a->n, a->conv, eps, NULL);
}

int
rdp_sgm_solve_sigma(double q, uint64_t steps, double delta, double target,
    const double *orders, size_t n, int conv, double *sigma)
{
	struct sgm_query a = { q, delta, steps, orders, n, conv };
	int rc;

	if ((rc = check_query(delta, target, conv)) != 0)
		return rc;
	if (!(q >= 0 && q <= 1))
		return RDP_E_PARAM;
	return rdp_solve_decreasing(1e-3, 1e6, target, sgm_eps_at, &a, sigma);
}

/* Largest T with the conversion of T * r at order a at most target; may
 * be negative (no T), or +inf when r is 0. */
static double
steps_at_order(double a, double r, double delta, double target, int conv)
{
	double t = -1, lin;

	if (isinf(r))
		return -1;
	if (r == 0)
		return INFINITY;
	if (conv == RDP_CONV_CLASSIC) {
		lin = (target + log(delta) / (a - 1)) / r;
	} else {
		/* KL shortcut: eps = 0 while T r < -log1p(-delta^2). */
		double kl = -log1p(-delta * delta) / r;

		t = ceil(kl) - 1;
		lin = a > 1.01 ?
		    (target - log1p(-1 / a) + log(delta * a) / (a - 1)) / r :
		    -1;
	}
	lin = floor(lin);
	return lin > t ? lin : t;
}

int
rdp_sgm_solve_steps(double q, double sigma, double delta, double target,
    const double *orders, size_t n, int conv, uint64_t *steps)
{
	double stack[NSTACK], stack2[NSTACK], *r, *tmp = stack2, best = -1, e;
	uint64_t t;
	int rc;

	if ((rc = check_query(delta, target, conv)) != 0)
		return rc;
	if ((rc = orders_buf(&orders, &n, stack, NSTACK, &r)) != 0)
		return rc;
	if (n > NSTACK && (tmp = malloc(n * sizeof(double))) == NULL) {
		rc = RDP_E_NOMEM;
		goto out;
	}
	if ((rc = rdp_sgm(q, sigma, orders, n, r)) != 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		double s = steps_at_order(orders[k], r[k], delta, target,
		    conv);
		if (s > best)
			best = s;
	}
	if (best >= 0x1p63) {
		*steps = UINT64_MAX;
		goto out;
	}
	t = best < 0 ? 0 : (uint64_t)best;
	/* The closed form may be off by one in floating point; settle it
	 * with the epsilon function itself. */
	for (;;) {
		if ((rc = eps_of_curve(orders, r, tmp, n, (double)t, delta,
		    conv, &e, NULL)) != 0)
			goto out;
		if (e <= target || t == 0)
			break;
		t--;
	}
	for (;;) {
		if ((rc = eps_of_curve(orders, r, tmp, n, (double)(t + 1),
		    delta, conv, &e, NULL)) != 0)
			goto out;
		if (e > target)
			break;
		t++;
	}
	*steps = t;
out:
	if (r != stack)
		free(r);
	if (tmp != stack2)
		free(tmp);
	return rc;
}

int
rdp_sgm_solve_q(double sigma, uint64_t steps, double delta, double target,
    const double *orders, size_t n, int conv, double *q)
{
	double lo = log(1e-12), hi = 0, e;
	int rc;

	if ((rc = check_query(delta, target, conv)) != 0)
		return rc;
	if (!(sigma > 0) || !isfinite(sigma))
		return RDP_E_PARAM;
	if ((rc = rdp_sgm_epsilon(1, sigma, steps, delta, orders, n, conv, &e,
	    NULL)) != 0)
		return rc;
	if (e <= target) {
		*q = 1;
		return 0;
	}
	if ((rc = rdp_sgm_epsilon(exp(lo), sigma, steps, delta, orders, n,
	    conv, &e, NULL)) != 0)
		return rc;
	if (e > target)
		return RDP_E_NOROOT;
	/* Invariant: eps(e^lo) <= target < eps(e^hi); eps grows with q. */
	while (hi - lo > 1e-12) {
		double mid = 0.5 * (lo + hi);

		if (mid <= lo || mid >= hi)
			break;
		if ((rc = rdp_sgm_epsilon(exp(mid), sigma, steps, delta,
		    orders, n, conv, &e, NULL)) != 0)
			return rc;
		if (e > target)
			hi = mid;
		else
			lo = mid;
	}
	*q = exp(lo);
	/* exp may round up past the root: step down until private. */
	for (int k = 0; k < 8; k++) {
		if ((rc = rdp_sgm_epsilon(*q, sigma, steps, delta, orders, n,
		    conv, &e, NULL)) != 0)
			return rc;
		if (e <= target)
			return 0;
		*q = nextafter(*q, 0);
	}
	return RDP_E_NUMERIC;
}

/* ---- the analytic Gaussian mechanism ---- */

/* log delta(eps) of the Gaussian mechanism (Balle and Wang 2018 Thm. 8). */
static double
agm_logdelta(double s, double eps)
{
	double la = log_ndtr(1 / (2 * s) - eps * s);
	double lb = eps + log_ndtr(-1 / (2 * s) - eps * s);

	if (!(lb < la))
		return -INFINITY;
	return la + log1mexp(lb - la);
}

int
rdp_agm_delta(double sigma, double eps, double *delta)
{
	if (!(sigma > 0) || !isfinite(sigma) || !(eps >= 0) || !isfinite(eps))
		return RDP_E_PARAM;
	*delta = exp(agm_logdelta(sigma, eps));
	return 0;
}

int
rdp_agm_epsilon(double sigma, double delta, double *eps)
{
	double ld = log(delta), lo = 0, hi = 1;

	if (!(sigma > 0) || !isfinite(sigma) || !(delta > 0 && delta < 1))
		return RDP_E_PARAM;
	if (agm_logdelta(sigma, 0) <= ld) {
		*eps = 0;
		return 0;
	}
	while (agm_logdelta(sigma, hi) > ld) {
		lo = hi;
		hi *= 2;
		if (hi > 1e6)
			return RDP_E_NOROOT;
	}
	/* Invariant: delta(lo) > delta >= delta(hi). */
	for (;;) {
		double mid = 0.5 * (lo + hi);

		if (mid <= lo || mid >= hi)
			break;
		if (agm_logdelta(sigma, mid) > ld)
			lo = mid;
		else
			hi = mid;
	}
	*eps = hi;
	return 0;
}

int
rdp_agm_sigma(double eps, double delta, double *sigma)
{
	double ld = log(delta), lo = log(1e-6), hi = log(1e9);

	if (!(eps > 0) || !isfinite(eps) || !(delta > 0 && delta < 1))
		return RDP_E_PARAM;
	if (agm_logdelta(exp(hi), eps) > ld || agm_logdelta(exp(lo), eps) <= ld)
		return RDP_E_NOROOT;
	/* Invariant: delta(e^lo) > delta >= delta(e^hi). */
	for (;;) {
		double mid = 0.5 * (lo + hi);

		if (mid <= lo || mid >= hi || hi - lo < 1e-17)
			break;
		if (agm_logdelta(exp(mid), eps) > ld)
			lo = mid;
		else
			hi = mid;
	}
	/* Settle the last ulps on sigma itself. */
	{
		double s = exp(hi), p;
		int k;

		for (k = 0; k < 64 && agm_logdelta(s, eps) > ld; k++)
			s = nextafter(s, INFINITY);
		if (k == 64)
			return RDP_E_NUMERIC;
		for (k = 0; k < 64; k++) {
			p = nextafter(s, 0);
			if (agm_logdelta(p, eps) > ld)
				break;
			s = p;
		}
		*sigma = s;
	}
	return 0;
}

double
rdp_gaussian_sigma_classic(double eps, double delta)
{
	if (!(eps > 0) || !(delta > 0 && delta < 1))
		return NAN;
	return sqrt(2 * log(1.25 / delta)) / eps;
}

/* ---- PATE ---- */

static int
counts_ok(const double *counts, size_t k)
{
	if (counts == NULL || k < 2)
		return 0;
	for (size_t i = 0; i < k; i++)
		if (!(counts[i] >= 0) || !isfinite(counts[i]))
			return 0;
	return 1;
}

static size_t
argmax(const double *counts, size_t k)
{
	size_t m = 0;

	for (size_t i = 1; i < k; i++)
		if (counts[i] > counts[m])
			m = i;
	return m;
}

double
rdp_pate_logq_laplace(const double *counts, size_t k, double lambda)
{
	double lq = -INFINITY, cap;
	size_t m;

	if (!counts_ok(counts, k) || !(lambda > 0) || !isfinite(lambda))
		return NAN;
	m = argmax(counts, k);
	/* Pr[j beats i*] <= (2 + g)/(4 e^g), g the gap over lambda
	 * (Papernot et al. 2017, appendix; 2018, Prop. 7). */
	for (size_t i = 0; i < k; i++) {
		double g = (counts[m] - counts[i]) / lambda;

		if (i != m)
			lq = logaddexp(lq, log(2 + g) - 2 * LOG2 - g);
	}
	cap = log1p(-1 / (double)k);
	return lq < cap ? lq : cap;
}

double
rdp_pate_logq_gaussian(const double *counts, size_t k, double sigma)
{
	double lq = -INFINITY, cap;
	size_t m;

	if (!counts_ok(counts, k) || !(sigma > 0) || !isfinite(sigma))
		return NAN;
	m = argmax(counts, k);
	/* Union bound: Pr[c_j + N_j >= c_i* + N_i*], N_j - N_i* ~
	 * N(0, 2 sigma^2). */
	for (size_t i = 0; i < k; i++)
		if (i != m)
			lq = logaddexp(lq, log_erfc((counts[m] - counts[i]) /
			    (2 * sigma)) - LOG2);
	cap = log1p(-1 / (double)k);
	return lq < cap ? lq : cap;
}

double
rdp_pate_logpr_answered(const double *counts, size_t k, double t,
    double sigma)
{
	if (!counts_ok(counts, k) || !(sigma > 0) || !isfinite(sigma) ||
	    !isfinite(t))
		return NAN;
	return log_erfc((t - counts[argmax(counts, k)]) / (SQRT2 * sigma)) -
	    LOG2;
}

double
rdp_pate_lnmax(double alpha, double lambda)
{
	return rdp_pure(alpha, 2 / lambda);
}

double
rdp_pate_gnmax(double alpha, double sigma)
{
	return alpha / (sigma * sigma);
}

/*
 * Papernot et al. 2018 Thm. 6: for a mechanism whose RDP is eps(l) = l /
 * sigma^2 at every order l, and q >= Pr[M(D) != o*], the RDP at order
 * a <= mu1 is at most log((1-q) A^(a-1) + q B^(a-1))/(a-1) with
 * A = (1-q)/(1 - (q e^eps2)^((mu2-1)/mu2)), B = e^eps1 / q^(1/(mu1-1)),
 * eps_i = eps(mu_i), provided mu2 > 1 and q <= e^((mu2-1) eps2) /
 * (mu1/(mu1-1) mu2/(mu2-1))^mu2.  Prop. 10 picks mu2 = sigma
 * sqrt(log(1/q)) and mu1 = mu2 + 1.
 */
double
rdp_pate_gnmax_dep(double alpha, double logq, double sigma)
{
	double var = sigma * sigma, ind = alpha / var;
	double mu2, mu1, e1, e2, l1q, la, lb, r;

	if (isnan(logq) || !(alpha > 1) || !(sigma > 0) || logq > 0)
		return NAN;
	if (logq == -INFINITY)
		return 0;
	mu2 = sigma * sqrt(-logq);
	mu1 = mu2 + 1;
	if (!(mu1 > alpha && mu2 > 1))
		return ind;
	e1 = mu1 / var;
	e2 = mu2 / var;
	if (!(logq <= (mu2 - 1) * e2 - mu2 * (log1p(1 / (mu1 - 1)) +
	    log1p(1 / (mu2 - 1))) && -logq > e2))
		return ind;
	l1q = log1mexp(logq);
	la = (alpha - 1) * (l1q - log1mexp((logq + e2) * (1 - 1 / mu2)));
	lb = (alpha - 1) * (e1 - logq / (mu1 - 1));
	r = logaddexp(l1q + la, logq + lb) / (alpha - 1);
	return r < ind ? r : ind;
}

/*
 * Papernot et al. 2018 Prop. 8: an eps-DP mechanism with q >=
 * Pr[M(D) != o*] and q <= 1/(e^eps + 1) has RDP at most
 * log((1-q) ((1-q)/(1 - e^eps q))^(a-1) + q e^(eps (a-1)))/(a-1).
 */
double
rdp_pate_pure_dep(double alpha, double logq, double eps)
{
	double ind = rdp_pure(alpha, eps), q, l1q, r;

	if (isnan(logq) || !(alpha > 1) || !(eps > 0) || logq > 0)
		return NAN;
	q = exp(logq);
	if (!(q <= 1 / (exp(eps) + 1)))
		return ind;
	if (logq == -INFINITY)
		return 0;
	l1q = log1p(-q);
	r = logaddexp(l1q + (l1q - log1mexp(eps + logq)) * (alpha - 1),
	    logq + eps * (alpha - 1)) / (alpha - 1);
	return r < ind ? r : ind;
}

double
rdp_pate_threshold_dep(double alpha, double logpr, double sigma1)
{
	double l;

	if (isnan(logpr) || logpr > 0)
		return NAN;
	l = log1mexp(logpr);
	return rdp_pate_gnmax_dep(alpha, logpr < l ? logpr : l,
	    SQRT2 * sigma1);
}

/* ---- PATE smooth sensitivity (Papernot et al. 2018, Appendix B.4, C) ---- */

/* The x with log erfc(x) = l, for l < log 2 (Newton's method inside a
 * bisection bracket: log erfc is decreasing). */
static double
log_erfcinv(double l)
{
	double lo = -6, hi = 1, x, f, d, xn;

	if (l == -INFINITY)
		return INFINITY;
	while (log_erfc(hi) > l)
		hi *= 2;
	x = l < -1 ? sqrt(-l) : 0;
	if (!(x > lo && x < hi))
		x = (lo + hi) / 2;
	for (int it = 0; it < 200; it++) {
		f = log_erfc(x) - l;
		if (f == 0)
			return x;
		if (f > 0)
			lo = x;
		else
			hi = x;
		d = -2 / sqrt(M_PI) * exp(-x * x - log_erfc(x));
		xn = x - f / d;
		if (!(xn > lo && xn < hi))
			xn = (lo + hi) / 2;
		if (fabs(xn - x) <= 1e-15 * (fabs(x) > 1 ? fabs(x) : 1))
			return xn;
		x = xn;
	}
	return x;
}

/* tau(s) = 2 sum_{j>=1} exp(-2 pi^2 j^2 s^2): by Poisson summation,
 * sum_z exp(-(z - c)^2 / (2 s^2)) is within a factor 1 +- tau(s) of
 * sqrt(2 pi) s, for every real c. */
static double
poisson_tau(double s)
{
	double t = 0, e;

	for (int j = 1; j <= 64; j++) {
		e = exp(-2 * M_PI * M_PI * (double)j * (double)j * s * s);
		t += e;
		if (e < 1e-300)
			break;
	}
	return 2 * t;
}

/* log C for the discrete Gaussian: (1 + tau(sigma/sqrt 2)) /
 * (1 - tau(sigma))^2, +inf when tau(sigma) >= 1. */
static double
dgauss_logc(double sigma)
{
	double t = poisson_tau(sigma);

	if (!(t < 1))
		return INFINITY;
	return log1p(poisson_tau(sigma / SQRT2)) - 2 * log1p(-t);
}

double
rdp_pate_logq_dgauss(const double *counts, size_t k, double sigma)
{
	double lq = -INFINITY, cap, lc;
	size_t m;

	if (!counts_ok(counts, k) || !(sigma > 0) || !isfinite(sigma))
		return NAN;
	cap = log1p(-1 / (double)k);
	if ((lc = dgauss_logc(sigma)) == INFINITY)
		return cap;
	m = argmax(counts, k);
	for (size_t i = 0; i < k; i++)
		if (i != m)
			lq = logaddexp(lq, log_erfc((counts[m] - counts[i] - 1) /
			    (2 * sigma)) - LOG2);
	lq += lc;
	return lq < cap ? lq : cap;
}

/* log bl(q), log bu(q) (Prop. 13): (k-1)/2 erfc(erfcinv(2q/(k-1)) + s). */
static double
log_b(double logq, double s, size_t k)
{
	double km1 = (double)(k - 1);
	double x = log_erfcinv(logq + LOG2 - log(km1));

	return log(km1) - LOG2 + log_erfc(x + s);
}

/* For the discrete sampler, q = C Q with Q the sum that Prop. 13
 * bounds: the neighbours' q lie within C bl(q / C), C bu(q / C). */
static double
log_b_of(double logq, double s, size_t k, int discrete, double sigma)
{
	double lc = discrete ? dgauss_logc(sigma) : 0, r;

	if (lc == INFINITY)
		return s > 0 ? -INFINITY : 0;
	r = lc + log_b(logq - lc, s, k);
	return r < 0 ? r : 0;
}

double
rdp_pate_gnmax_logbl(double logq, double sigma, size_t k, int discrete)
{
	if (isnan(logq) || logq > 0 || !(sigma > 0) || k < 2)
		return NAN;
	return log_b_of(logq, 1 / sigma, k, discrete, sigma);
}

double
rdp_pate_gnmax_logbu(double logq, double sigma, size_t k, int discrete)
{
	if (isnan(logq) || logq > 0 || !(sigma > 0) || k < 2)
		return NAN;
	return log_b_of(logq, -1 / sigma, k, discrete, sigma);
}

double
rdp_pate_gnmax_logq0(double alpha, double sigma)
{
	double ind = rdp_pate_gnmax(alpha, sigma), lo, hi, mid, t;

	if (!(alpha > 1) || !(sigma > 0) || !isfinite(sigma))
		return NAN;
	/* The paper's natural upper bound on log q0, then a bracket. */
	hi = -(1 + 1 / sigma) * (1 + 1 / sigma);
	t = -((alpha - .99) / sigma) * ((alpha - .99) / sigma);
	hi = t < hi ? t : hi;
	t = -1 / (sigma * sigma);
	hi = t < hi ? t : hi;
	if (rdp_pate_gnmax_dep(alpha, hi, sigma) < ind)
		return hi;
	lo = 2 * hi;
	while (!(rdp_pate_gnmax_dep(alpha, lo, sigma) < ind)) {
		hi = lo;
		lo *= 1.5;
		if (lo < -1e5)
			return NAN;
	}
	for (int it = 0; it < 200 && hi - lo > 1e-13 * -lo; it++) {
		mid = (lo + hi) / 2;
		if (rdp_pate_gnmax_dep(alpha, mid, sigma) < ind)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The bound beta(log q), and Algorithm 3's local sensitivity at log q
 * (the plateau [q1, q0] takes the value at q1). */
static double
ss_beta(double alpha, double logq, double sigma)
{
	return rdp_pate_gnmax_dep(alpha, logq, sigma);
}

static double
ss_ls_at(double logq, double sigma, size_t k, double alpha, double logq0,
    double logq1, int dis)
{
	double b, bu, bl;

	if (logq1 <= logq && logq <= logq0)
		logq = logq1;
	b = ss_beta(alpha, logq, sigma);
	bu = ss_beta(alpha, rdp_pate_gnmax_logbu(logq, sigma, k, dis), sigma);
	bl = ss_beta(alpha, rdp_pate_gnmax_logbl(logq, sigma, k, dis), sigma);
	return bu - b > b - bl ? bu - b : b - bl;
}

int
rdp_pate_gnmax_ss_conditions(double alpha, double sigma, size_t k,
    int discrete)
{
	double logq0 = rdp_pate_gnmax_logq0(alpha, sigma), logq1, lo, prev;
	double tol = 1e-12 * rdp_pate_gnmax(alpha, sigma);
	const int N = 2000;

	if (isnan(logq0) || k < 2)
		return 0;
	logq1 = rdp_pate_gnmax_logbl(logq0, sigma, k, discrete);
	lo = logq0 - 200;
	prev = -INFINITY;
	for (int i = 0; i <= N; i++) {		/* C5 */
		double b = ss_beta(alpha, lo + (logq0 - lo) * i / N, sigma);
		if (isnan(b) || b < prev - tol)
			return 0;
		prev = b;
	}
	prev = -INFINITY;
	for (int i = 0; i <= N; i++) {		/* C6 */
		double lq = lo + (logq1 - lo) * i / N, d;
		d = ss_beta(alpha, rdp_pate_gnmax_logbu(lq, sigma, k,
		    discrete), sigma) -
		    ss_beta(alpha, lq, sigma);
		if (isnan(d) || d < prev - tol)
			return 0;
		prev = d;
	}
	return 1;
}

int
rdp_pate_gnmax_ls(const double *counts, size_t k, uint64_t n, double sigma,
    double alpha, double logq0, int dis, double *ls, double *s)
{
	double logq1, logq, plateau;
	uint64_t d = 0;
	int left;

	if (!counts_ok(counts, k) || !(sigma > 0) || !(alpha > 1) ||
	    isnan(logq0) || ls == NULL || s == NULL)
		return RDP_E_PARAM;
	logq1 = rdp_pate_gnmax_logbl(logq0, sigma, k, dis);
	plateau = ss_ls_at(logq1, sigma, k, alpha, logq0, logq1, dis);
	/* Sorted, largest first (insertion sort: k is small). */
	for (size_t i = 0; i < k; i++) {
		size_t j = i;
		for (; j > 0 && s[j - 1] < counts[i]; j--)
			s[j] = s[j - 1];
		s[j] = counts[i];
	}
	logq = dis ? rdp_pate_logq_dgauss(s, k, sigma) :
	    rdp_pate_logq_gaussian(s, k, sigma);
	if (logq1 <= logq && logq <= logq0) {
		for (uint64_t i = 0; i <= n; i++)
			ls[i] = plateau;
		return 0;
	}
	ls[0] = ss_ls_at(logq, sigma, k, alpha, logq0, logq1, dis);
	left = logq > logq0;
	/* Algorithms 4 and 5: the histogram d teachers away with the
	 * smallest (left) or largest (right) q moves votes between the two
	 * largest counts. */
	while (d < n && ((left && logq > logq0 && s[1] > 0) ||
	    (!left && logq < logq1))) {
		double v;
		d++;
		if (left) {
			s[0] += 1;
			s[1] -= 1;
			for (size_t i = 1; i + 1 < k && s[i] < s[i + 1]; i++) {
				double t = s[i];
				s[i] = s[i + 1];
				s[i + 1] = t;
			}
		} else {
			s[0] -= 1;
			s[1] += 1;
			if (s[1] > s[0]) {
				double t = s[0];
				s[0] = s[1];
				s[1] = t;
			}
		}
		logq = dis ? rdp_pate_logq_dgauss(s, k, sigma) :
		    rdp_pate_logq_gaussian(s, k, sigma);
		v = ss_ls_at(logq, sigma, k, alpha, logq0, logq1, dis);
		ls[d] = v > ls[d - 1] ? v : ls[d - 1];
	}
	for (uint64_t i = d + 1; i <= n; i++)
		ls[i] = ls[d] > plateau ? ls[d] : plateau;
	return 0;
}

double
rdp_pate_threshold_dep_dgauss(double alpha, double maxcount, double t,
    double sigma1)
{
	double m, tau, lq;

	if (!(alpha > 1) || !(sigma1 > 0) || !isfinite(sigma1) ||
	    !isfinite(t) || !isfinite(maxcount))
		return NAN;
	m = ceil(t - maxcount);
	m = m >= 1 ? m : 1 - m;
	tau = poisson_tau(sigma1);
	if (!(tau < 1))
		return rdp_pate_gnmax(alpha, SQRT2 * sigma1);
	lq = log_erfc((m - 1) / (SQRT2 * sigma1)) - LOG2 - log1p(-tau);
	lq = lq < -LOG2 ? lq : -LOG2;
	return rdp_pate_gnmax_dep(alpha, lq, SQRT2 * sigma1);
}

int
rdp_pate_threshold_ls(double maxcount, uint64_t n, double t, double sigma1,
    double alpha, int discrete, double *ls, double *r)
{
	double c[2] = { 0, 0 };
	uint64_t m;

	if (!(maxcount >= 0) || maxcount > (double)n || !isfinite(t) ||
	    !(sigma1 > 0) || !(alpha > 1) || ls == NULL || r == NULL)
		return RDP_E_PARAM;
	for (uint64_t v = 0; v <= n; v++) {
		c[0] = (double)v;
		r[v] = discrete ? rdp_pate_threshold_dep_dgauss(alpha, c[0], t,
		    sigma1) : rdp_pate_threshold_dep(alpha,
		    rdp_pate_logpr_answered(c, 2, t, sigma1), sigma1);
	}
	m = (uint64_t)llround(maxcount);
	for (uint64_t d = 0; d <= n; d++) {
		double best = d ? ls[d - 1] : 0;
		uint64_t vs[2];
		int nv = 0;
		if (d <= m)
			vs[nv++] = m - d;
		if (m + d <= n)
			vs[nv++] = m + d;
		for (int i = 0; i < nv; i++) {
			uint64_t v = vs[i];
			if (v > 0 && fabs(r[v - 1] - r[v]) > best)
				best = fabs(r[v - 1] - r[v]);
			if (v < n && fabs(r[v + 1] - r[v]) > best)
				best = fabs(r[v + 1] - r[v]);
		}
		ls[d] = best;
	}
	return 0;
}

double
rdp_smooth_max(const double *ls, uint64_t n, double beta)
{
	double best = 0;

	for (uint64_t d = 0; d <= n; d++) {
		double v = exp(-beta * (double)d) * ls[d];
		if (v > best)
			best = v;
	}
	return best;
}

double
rdp_pate_gnss(double alpha, double beta, double sigma)
{
	if (!(alpha > 1) || !(beta > 0) || !isfinite(beta) || !(sigma > 0))
		return NAN;
	if (!(2 * alpha * beta < 1))
		return INFINITY;
	return alpha * exp(2 * beta) / (sigma * sigma) +
	    (beta * alpha - 0.5 * log1p(-2 * alpha * beta)) / (alpha - 1);
}

double
rdp_pate2017_logmgf(double q, double priv_eps, int l)
{
	double a = 0.5 * priv_eps * priv_eps * l * (l + 1);
	double c = priv_eps * l, lt = c;

	if (!(q >= 0 && q <= 1) || !(priv_eps >= 0) || l < 1)
		return NAN;
	if (q < 0.5) {
		double base = (1 - q) / (1 - exp(priv_eps) * q);
		double t = (1 - q) * pow(base, l) + q * exp(priv_eps * l);

		if (t > 0 && isfinite(t))
			lt = log(t);
	}
	if (lt < a)
		a = lt;
	return c < a ? c : a;
}

int
rdp_pate2017_epsilon(const double *logmgf, int L, double queries,
    double delta, double *eps, int *best_l)
{
	double best = INFINITY;
	int bl = 1;

	if (logmgf == NULL || L < 1 || !(queries >= 0) || !isfinite(queries) ||
	    !(delta > 0 && delta < 1))
		return RDP_E_PARAM;
	for (int l = 1; l <= L; l++) {
		double e = (queries * logmgf[l - 1] - log(delta)) / l;

		if (isnan(e))
			return RDP_E_PARAM;
		if (e < best) {
			best = e;
			bl = l;
		}
	}
	*eps = best;
	if (best_l != NULL)
		*best_l = bl;
	return 0;
}

/* ---- the accountant ---- */

struct rdp_acct {
	size_t n;
	double *orders;
	double *rdp;
	double *tmp;
};

struct rdp_acct *
rdp_acct_new(const double *orders, size_t n)
{
	struct rdp_acct *a;

	if (orders == NULL)
		orders = rdp_default_orders(&n);
	if (rdp_check_orders(orders, n) != NULL)
		return NULL;
	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	a->n = n;
	a->orders = malloc(n * sizeof(double));
	a->rdp = calloc(n, sizeof(double));
	a->tmp = malloc(n * sizeof(double));
	if (a->orders == NULL || a->rdp == NULL || a->tmp == NULL) {
		rdp_acct_free(a);
		return NULL;
	}
	memcpy(a->orders, orders, n * sizeof(double));
	return a;
}

void
rdp_acct_free(struct rdp_acct *a)
{
	if (a == NULL)
		return;
	free(a->orders);
	free(a->rdp);
	free(a->tmp);
	free(a);
}

const double *
rdp_acct_orders(const struct rdp_acct *a, size_t *n)
{
	if (n != NULL)
		*n = a->n;
	return a->orders;
}

const double *
rdp_acct_curve(const struct rdp_acct *a)
{
	return a->rdp;
}

int
rdp_acct_add_curve(struct rdp_acct *a, const double *rdp, double count)
{
	if (a == NULL || rdp == NULL || !(count >= 0) || !isfinite(count))
		return RDP_E_PARAM;
	for (size_t k = 0; k < a->n; k++)
		if (!(rdp[k] >= 0))
			return RDP_E_PARAM;
	if (count == 0)
		return 0;
	for (size_t k = 0; k < a->n; k++)
		a->rdp[k] += count * rdp[k];
	return 0;
}

int
rdp_acct_add_sgm(struct rdp_acct *a, double q, double sigma, uint64_t steps)
{
	int rc;

	if (a == NULL)
		return RDP_E_PARAM;
	if ((rc = rdp_sgm(q, sigma, a->orders, a->n, a->tmp)) != 0)
		return rc;
	return rdp_acct_add_curve(a, a->tmp, (double)steps);
}

int
rdp_acct_add_gaussian(struct rdp_acct *a, double sigma, double count)
{
	if (a == NULL || !(sigma > 0) || !isfinite(sigma))
		return RDP_E_PARAM;
	for (size_t k = 0; k < a->n; k++)
		a->tmp[k] = rdp_gaussian(a->orders[k], sigma);
	return rdp_acct_add_curve(a, a->tmp, count);
}

int
rdp_acct_add_laplace(struct rdp_acct *a, double b, double count)
{
	if (a == NULL || !(b > 0) || !isfinite(b))
		return RDP_E_PARAM;
	for (size_t k = 0; k < a->n; k++)
		a->tmp[k] = rdp_laplace(a->orders[k], b);
	return rdp_acct_add_curve(a, a->tmp, count);
}

int
rdp_acct_add_pure(struct rdp_acct *a, double eps, double count)
{
	if (a == NULL || !(eps >= 0) || !isfinite(eps))
		return RDP_E_PARAM;
	for (size_t k = 0; k < a->n; k++)
		a->tmp[k] = rdp_pure(a->orders[k], eps);
	return rdp_acct_add_curve(a, a->tmp, count);
}

int
rdp_acct_epsilon(const struct rdp_acct *a, double delta, int conv,
    double *eps, double *order)
{
	if (a == NULL)
		return RDP_E_PARAM;
	return rdp_to_epsilon(a->orders, a->rdp, a->n, delta, conv, eps,
	    order);
}

int
rdp_acct_delta(const struct rdp_acct *a, double eps, int conv,
    double *delta, double *order)
{
	if (a == NULL)
		return RDP_E_PARAM;
	return rdp_to_delta(a->orders, a->rdp, a->n, eps, conv, delta, order);
}
