/*
 * pld.c: privacy loss distribution accounting of the Poisson-subsampled
 * Gaussian mechanism (see pld.h).
 *
 * Notation.  Grid losses are integers i standing for i * h.  One
 * direction's distribution ("dist") is p[0..n-1] at losses lo .. lo+n-1
 * plus a mass pinf at +infinity.  The noise multiplier is s, the
 * sampling probability q; N0 = N(0, s^2) and N1 = N(1, s^2).
 *
 *   remove: P = (1-q) N0 + q N1, Q = N0,
 *           L(x) = log(1 - q + q e^y), y = (2x - 1) / (2 s^2), increasing;
 *   add:    P = N0, Q = (1-q) N0 + q N1, L(x) = -log(1 - q + q e^y),
 *           decreasing.
 *
 * With L monotone, the losses in a bucket (e_i, e_i+1] of the grid come
 * from one interval of x, whose masses under N0 and N1 are differences of
 * normal tails.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pld.h"

#define TAIL_Z 10.0		/* one step spans 10 standard deviations */
#define SQRT1_2 0.70710678118654752440
#define LN2 0.69314718055994530942
#define TWO_PI 6.28318530717958647693
#define MAX_INDEX 4.0e18	/* grid indices stay well inside int64_t */
#define MAX_TRIES 16		/* grid refining and coarsening rounds */

enum { REMOVE, ADD };

struct dist {
	int64_t lo;		/* grid index of p[0] */
	size_t n;
	double *p;
	double pinf;
	double noise;		/* rounding noise charged to every p[i] */
};

struct pld {
	double h;
	struct dist d[2];	/* REMOVE, ADD */
};

const char *
pld_strerror(int code)
{
	switch (code) {
	case PLD_OK:
		return "success";
	case PLD_E_PARAM:
		return "argument out of range";
	case PLD_E_NOMEM:
		return "out of memory";
	case PLD_E_SIZE:
		return "loss grid too fine: too many points";
	default:
		return "unknown error";
	}
}

/* ---- the one-step loss ---- */

/* log(1 - q + q e^y), without overflow. */
static double
lrem(double q, double y)
{
	double a = log1p(-q), b = log(q) + y;
	double m = a > b ? a : b;

	if (m == -INFINITY)
		return m;
	return m + log1p(exp(-fabs(a - b)));
}

/* The mechanism's constants. */
struct mech {
	double q, s, l1q, lq;	/* q, sigma, log(1 - q), log q */
};

/* c(e) = e^e - (1 - q), accurate also where the two nearly cancel
 * (e near log(1 - q)), where c = (1-q) expm1(e - log(1-q)); *lc
 * receives log c (-inf when c <= 0). */
static double
cfun(const struct mech *me, double e, double *lc)
{
	double d, c;

	if (me->q == 1) {
		*lc = e;
		return exp(e);
	}
	d = e - me->l1q;
	if (d < LN2) {
		c = expm1(d);
		*lc = c > 0 ? me->l1q + log(c) : -INFINITY;
		return (1 - me->q) * c;
	}
	c = -expm1(-d);
	*lc = e + log(c);
	return exp(e) * c;
}

/* The x with L_remove(x) = e, i.e. e^y = c(e)/q, given lc = log c(e);
 * -inf if e <= log(1-q) (every x has a larger loss). */
static double
xrem(const struct mech *me, double e, double lc)
{
	if (e <= me->l1q)
		return -INFINITY;
	return me->s * me->s * (lc - me->lq) + 0.5;
}

/* A standard normal tail at z: the smaller of Phi(z) and 1 - Phi(z),
 * computed directly (never as 1 minus something), so that differences
 * of tails keep their relative accuracy. */
struct tail {
	double t;
	int upper;		/* t = 1 - Phi(z) (z >= 0), else Phi(z) */
};

static struct tail
ntail(double z)
{
	struct tail r;

	r.upper = z >= 0;
	r.t = 0.5 * erfc((r.upper ? z : -z) * SQRT1_2);
	return r;
}

/* Phi(b) - Phi(a) for a <= b, from their tails. */
static double
nmass(struct tail a, struct tail b)
{
	double m;

	if (a.upper)
		m = a.t - b.t;
	else if (!b.upper)
		m = b.t - a.t;
	else
		m = 1 - a.t - b.t;
	return m > 0 ? m : 0;
}

static double
lower_of(struct tail a)		/* Phi(z) */
{
	return a.upper ? 1 - a.t : a.t;
}

static double
upper_of(struct tail a)		/* 1 - Phi(z) */
{
	return a.upper ? a.t : 1 - a.t;
}

/* The range of one step's losses covering x within TAIL_Z standard
 * deviations of both means. */
static void
loss_range(int dir, double q, double s, double *lo, double *hi)
{
	double ya = (-2 * TAIL_Z * s - 1) / (2 * s * s);
	double yb = (2 + 2 * TAIL_Z * s - 1) / (2 * s * s);

	if (dir == REMOVE) {
		*lo = lrem(q, ya);
		*hi = lrem(q, yb);
	} else {
		*lo = -lrem(q, (2 * TAIL_Z * s - 1) / (2 * s * s));
		*hi = -lrem(q, ya);
	}
}

/* Grid index range [a, b] (b > a) of one step at spacing h. */
static int
step_indices(int dir, double q, double s, double h, int64_t *a, int64_t *b)
{
	double lo, hi, ia, ib;

	loss_range(dir, q, s, &lo, &hi);
	ia = floor(lo / h);
	ib = ceil(hi / h);
	if (!(fabs(ia) < MAX_INDEX && fabs(ib) < MAX_INDEX))
		return PLD_E_SIZE;
	if (ib <= ia)
		ib = ia + 1;
	*a = (int64_t)ia;
	*b = (int64_t)ib;
	return 0;
}

/*
 * One step, discretised by connect the dots (Doroshenko et al. 2022,
 * Algorithm 1).  With t_i = e^(e_i), the discrete PLD's delta, as a
 * function of t, is the piecewise-linear interpolation of the true
 * delta(t), a convex function, between the points (0, 1), (t_i,
 * delta(e_i)) and then the constant delta(e_n-1): so it is never below
 * the truth.  Equivalently, the P-mass a and Q-mass b of the losses in
 * each bucket (e_i, e_i+1] are split between its two ends so that both
 * are kept:
 *
 *	to e_i:   (t_i+1 b - a) / (e^h - 1),
 *	to e_i+1: e^h (a - t_i b) / (e^h - 1),
 *
 * the losses below e_0 go to e_0 and those above e_n-1 to infinity.  Both
 * numerators cancel to a relative h; they are formed from the bucket's N0
 * and N1 masses as below (c_i = c(e_i)), which keeps the error relative
 * to the bucket's mass (about 1e-16 / h^2 of it) instead of absolute, as
 * second differences of delta would make it.  For remove, a = (1-q) dN0
 * + q dN1 and b = dN0, so a - t_i b = q dN1 - c_i dN0.  For add, a = dN0
 * and b = (1-q) dN0 + q dN1, so a - t_i b = k_i dN0 - q t_i dN1 with
 * k_i = 1 - (1-q) t_i.
 */
static int
one_step(int dir, double q, double s, double h, struct dist *d)
{
	int64_t ia, ib;
	size_t n, i;
	double em1 = expm1(h), eh = exp(h), l1q = log1p(-q);
	double x, cp = 0, tp = 0, lc;
	struct tail z0p, z1p;
	struct mech me;
	int rc;

	me.q = q;
	me.s = s;
	me.l1q = l1q;
	me.lq = log(q);

	if ((rc = step_indices(dir, q, s, h, &ia, &ib)) != 0)
		return rc;
	n = (size_t)(ib - ia) + 1;
	if (n > PLD_MAX_POINTS)
		return PLD_E_SIZE;
	if ((d->p = calloc(n, sizeof(double))) == NULL)
		return PLD_E_NOMEM;
	d->lo = ia;
	d->n = n;
	for (i = 0; i < n; i++) {
		double e = (double)(ia + (int64_t)i) * h, c, t = 0;
		struct tail z0, z1;

		if (dir == REMOVE) {
			c = cfun(&me, e, &lc);
			x = xrem(&me, e, lc);
		} else {
			x = -INFINITY;
			if (-e > l1q) {
				(void)cfun(&me, -e, &lc);
				x = xrem(&me, -e, lc);
			}
			c = q == 1 ? 1 : -expm1(e + l1q);
			t = exp(e);
		}
		z0 = ntail(x / s);
		z1 = ntail((x - 1) / s);
		if (i == 0) {
			/* Mass with loss <= e_0 moves up to e_0. */
			if (dir == REMOVE)
				d->p[0] = (1 - q) * lower_of(z0) +
				    q * lower_of(z1);
			else
				d->p[0] = upper_of(z0);
		} else {
			double dn0, dn1, up, dn;

			if (dir == REMOVE) {
				dn0 = nmass(z0p, z0);
				dn1 = nmass(z1p, z1);
				up = eh * (q * dn1 - cp * dn0) / em1;
				dn = (c * dn0 - q * dn1) / em1;
			} else {
				dn0 = nmass(z0, z0p);
				dn1 = nmass(z1, z1p);
				up = eh * (cp * dn0 - q * tp * dn1) / em1;
				dn = (q * t * dn1 - c * dn0) / em1;
			}
			d->p[i - 1] += dn > 0 ? dn : 0;
			d->p[i] += up > 0 ? up : 0;
		}
		if (i == n - 1)
			d->pinf = dir == REMOVE ? (1 - q) * upper_of(z0) +
			    q * upper_of(z1) : lower_of(z0);
		z0p = z0;
		z1p = z1;
		cp = c;
		tp = t;
	}
	return 0;
}

/* ---- the composition window: a Chernoff bound ---- */

/*
 * sum_k v(k) s^(len-1-k) over k < len, v(k) = p[k] (forward) or
 * p[len-1-k] (backward), 0 <= s <= 1: Horner's rule in eight interleaved
 * chains (the additions do not wait on each other).  Values below
 * 1e-250 are flushed to 0 before each round, so no subnormals arise
 * and the last round (which holds the outermost mass) is kept whole.
 */
static double
horner(const double *p, size_t len, int backward, double s)
{
	double acc[8] = { 0 }, s2 = s * s, s4 = s2 * s2, s8 = s4 * s4, r;
	size_t pad = (8 - len % 8) % 8, nb = (len + pad) / 8, b;
	int c;

	for (b = 0; b < nb; b++) {
		for (c = 0; c < 8; c++) {
			size_t k = 8 * b + (size_t)c;
			double v = 0;

			if (acc[c] < 1e-250)
				acc[c] = 0;
			if (k >= pad)
				v = p[backward ? len - 1 - (k - pad) : k - pad];
			acc[c] = acc[c] * s8 + v;
		}
	}
	r = 0;
	for (c = 0; c < 8; c++)
		r = r * s + acc[c];
	return r;
}

/* log sum_j p_j e^(lam h (lo + j)), summed in the direction in which the
 * powers shrink, relative to the outermost nonzero mass on that side, so
 * nothing overflows or vanishes. */
static double
log_mgf(const struct dist *d, double h, double lam)
{
	double s = exp(-fabs(lam) * h);
	size_t top = d->n, bot = 0;

	if (lam > 0) {
		while (top > 1 && d->p[top - 1] == 0)
			top--;
		return lam * h * (double)(d->lo + (int64_t)top - 1) +
		    log(horner(d->p, top, 0, s));
	}
	while (bot + 1 < d->n && d->p[bot] == 0)
		bot++;
	return lam * h * (double)(d->lo + (int64_t)bot) +
	    log(horner(d->p + bot, d->n - bot, 1, s));
}

/* (T log M(sign lam) + log(1/tail)) / lam at lam = e^mu: its minimum over
 * lam > 0 bounds the T-fold sum: Pr[S >= u] <= tail for u = the minimum
 * (sign +1), Pr[S <= -u] <= tail for sign -1. */
static double
chernoff(const struct dist *d, double h, double T, int sign, double mu)
{
	double lam = exp(mu);

	return (T * log_mgf(d, h, sign * lam) - log(PLD_TAIL_MASS)) / lam;
}

/* The minimum over mu in [a, b] of a unimodal function, by golden
 * section (k rounds); *at receives the minimiser. */
static double
golden(const struct dist *d, double h, double T, int sign, double a,
    double b, int k, double *at)
{
	const double g = 0.61803398874989484820;
	double x1 = b - g * (b - a), x2 = a + g * (b - a);
	double f1 = chernoff(d, h, T, sign, x1);
	double f2 = chernoff(d, h, T, sign, x2);

	while (k-- > 0) {
		if (f1 <= f2) {
			b = x2;
			x2 = x1;
			f2 = f1;
			x1 = b - g * (b - a);
			f1 = chernoff(d, h, T, sign, x1);
		} else {
			a = x1;
			x1 = x2;
			f1 = f2;
			x2 = a + g * (b - a);
			f2 = chernoff(d, h, T, sign, x2);
		}
	}
	*at = f1 < f2 ? x1 : x2;
	return f1 < f2 ? f1 : f2;
}

/*
 * The best Chernoff bound.  Any lam gives a valid bound; the best one
 * only keeps the window narrow.  For a sum of T steps with loss
 * variance v the optimum is near the Gaussian one, sqrt(2 log(1/tail) /
 * (T v)): search a factor 100 either side of it, and the whole range
 * if the minimum lands at an end.
 */
static double
chernoff_min(const struct dist *d, double h, double T, double mu0,
    int sign)
{
	double f, at;

	if (isfinite(mu0)) {
		f = golden(d, h, T, sign, mu0 - 4.6, mu0 + 4.6, 12, &at);
		if (at > mu0 - 4.5 && at < mu0 + 4.5)
			return f;
	}
	return golden(d, h, T, sign, -20, 40, 20, &at);
}

/* Variance of the finite part's loss (in loss units squared). */
static double
dist_var(const struct dist *d, double h)
{
	double m0 = 0, m1 = 0, m2 = 0;
	size_t j;

	for (j = 0; j < d->n; j++) {
		m0 += d->p[j];
		m1 += d->p[j] * (double)j;
	}
	if (!(m0 > 0))
		return 0;
	m1 /= m0;
	for (j = 0; j < d->n; j++)
		m2 += d->p[j] * ((double)j - m1) * ((double)j - m1);
	return m2 / m0 * h * h;
}

/* log of the Gaussian guess at the best lam (inf if no spread). */
static double
lam_guess(const struct dist *d, double h, double T)
{
	double v = dist_var(d, h);

	if (!(v > 0))
		return INFINITY;
	return 0.5 * log(-2 * log(PLD_TAIL_MASS) / (T * v));
}

/*
 * The window [*lo, *hi] of grid indices of the T-fold composition
 * outside which the mass is at most PLD_TAIL_MASS per side (never wider
 * than the full support); *cut tells whether the upper tail was cut.
 */
static int
window(const struct dist *d, double h, uint64_t steps, int64_t *lo,
    int64_t *hi, int *cut)
{
	double T = (double)steps;
	double flo = T * (double)d->lo;
	double fhi = T * (double)(d->lo + (int64_t)d->n - 1);
	double u, v, mu0;

	if (!(fabs(flo) < MAX_INDEX && fabs(fhi) < MAX_INDEX))
		return PLD_E_SIZE;
	mu0 = lam_guess(d, h, T);
	u = ceil(chernoff_min(d, h, T, mu0, 1) / h);
	v = floor(-chernoff_min(d, h, T, mu0, -1) / h);
	/* Anything odd (NaN, or bounds outside the support or crossed)
	 * falls back to the full support on that side. */
	*cut = u > flo && u < fhi;
	if (!*cut)
		u = fhi;
	if (!(v > flo && v <= u))
		v = flo;
	*lo = (int64_t)v;
	*hi = (int64_t)u;
	return 0;
}

/* ---- FFT ---- */

/* tw[k] = exp(-2 pi i k / n) for k < n/2 (interleaved re, im), n >= 8 a
 * power of two; one sine and cosine per eighth, the rest by symmetry. */
static void
twiddles(double *tw, size_t n)
{
	size_t k, q4 = n / 4, q8 = n / 8;

	for (k = 0; k <= q8; k++) {
		double th = TWO_PI * (double)k / (double)n;
		double c = cos(th), s = sin(th);

		tw[2 * k] = c;
		tw[2 * k + 1] = -s;
		tw[2 * (q4 - k)] = s;
		tw[2 * (q4 - k) + 1] = -c;
		tw[2 * (q4 + k)] = -s;
		tw[2 * (q4 + k) + 1] = -c;
		if (k > 0) {
			tw[2 * (2 * q4 - k)] = -c;
			tw[2 * (2 * q4 - k) + 1] = -s;
		}
	}
}

/*
 * Complex FFTs of m values (interleaved re, im), m >= 4 a power of two,
 * with tw as for n = 2m, two radix-2 stages at a time (radix 2^2: half
 * the sweeps over memory).  Neither permutes: fft_dif takes natural
 * order to bit-reversed order, fft_dit (the conjugate transform,
 * unscaled) bit-reversed order back to natural order.  The pointwise
 * power in between does not care about the order, and skipping the two
 * bit-reversal passes, which miss the cache at every step, saves about
 * a fifth of the time.
 */

/* W_n^j = exp(-2 pi i j / n) for 0 <= j < n from the half table. */
static void
tw_at(const double *tw, size_t n, size_t j, double *wr, double *wi)
{
	if (j < n / 2) {
		*wr = tw[2 * j];
		*wi = tw[2 * j + 1];
	} else {
		*wr = -tw[2 * (j - n / 2)];
		*wi = -tw[2 * (j - n / 2) + 1];
	}
}

static int
odd_log2(size_t m)
{
	while (m > 2)
		m >>= 2;
	return m == 2;
}

/* Decimation in frequency: per block of 4q, with x_j = a[k + j q],
 * W = W_4q^k: a[k] = s02 + s13, a[k+q] = (s02 - s13) W^2, a[k+2q] =
 * (d02 - i d13) W, a[k+3q] = (d02 + i d13) W^3 (s, d: sums and
 * differences); a last radix-2 stage when log2 m is odd. */
static void
fft_dif(double *a, size_t m, const double *tw)
{
	size_t n = 2 * m, q, i, k;

	for (q = m / 4; q >= 1; q /= 4) {
		size_t st = n / (4 * q);

		for (i = 0; i < m; i += 4 * q) {
			for (k = 0; k < q; k++) {
				double *p0 = a + 2 * (i + k), *p1 = p0 + 2 * q;
				double *p2 = p1 + 2 * q, *p3 = p2 + 2 * q;
				double s02r = p0[0] + p2[0];
				double s02i = p0[1] + p2[1];
				double d02r = p0[0] - p2[0];
				double d02i = p0[1] - p2[1];
				double s13r = p1[0] + p3[0];
				double s13i = p1[1] + p3[1];
				double d13r = p1[0] - p3[0];
				double d13i = p1[1] - p3[1];
				double w1r, w1i, w2r, w2i, w3r, w3i, tr, ti;

				tw_at(tw, n, k * st, &w1r, &w1i);
				tw_at(tw, n, 2 * k * st, &w2r, &w2i);
				tw_at(tw, n, 3 * k * st, &w3r, &w3i);
				p0[0] = s02r + s13r;
				p0[1] = s02i + s13i;
				tr = s02r - s13r;
				ti = s02i - s13i;
				p1[0] = tr * w2r - ti * w2i;
				p1[1] = tr * w2i + ti * w2r;
				tr = d02r + d13i;	/* d02 - i d13 */
				ti = d02i - d13r;
				p2[0] = tr * w1r - ti * w1i;
				p2[1] = tr * w1i + ti * w1r;
				tr = d02r - d13i;	/* d02 + i d13 */
				ti = d02i + d13r;
				p3[0] = tr * w3r - ti * w3i;
				p3[1] = tr * w3i + ti * w3r;
			}
		}
		if (q < 4)
			break;
	}
	if (odd_log2(m)) {
		for (i = 0; i < m; i += 2) {
			double *u = a + 2 * i, *v = u + 2;
			double xr = v[0], xi = v[1];

			v[0] = u[0] - xr;
			v[1] = u[1] - xi;
			u[0] += xr;
			u[1] += xi;
		}
	}
}

/* Decimation in time, conjugate twiddles: a radix-2 stage first when
 * log2 m is odd, then transforms of length len merged into 4 len (with
 * w1 = conj W_2len^k and w2 = conj W_4len^k, the second pair taking
 * conj W_4len^(k+len) = i w2). */
static void
fft_dit(double *a, size_t m, const double *tw)
{
	size_t i, k, len = 1;

	if (odd_log2(m)) {
		for (i = 0; i < m; i += 2) {
			double *u = a + 2 * i, *v = u + 2;
			double xr = v[0], xi = v[1];

			v[0] = u[0] - xr;
			v[1] = u[1] - xi;
			u[0] += xr;
			u[1] += xi;
		}
		len = 2;
	}
	for (; len < m; len *= 4) {
		size_t s1 = 2 * m / (2 * len), s2 = 2 * m / (4 * len);

		for (i = 0; i < m; i += 4 * len) {
			for (k = 0; k < len; k++) {
				double w1r = tw[2 * k * s1];
				double w1i = -tw[2 * k * s1 + 1];
				double w2r = tw[2 * k * s2];
				double w2i = -tw[2 * k * s2 + 1];
				double *p0 = a + 2 * (i + k);
				double *p1 = p0 + 2 * len;
				double *p2 = p1 + 2 * len, *p3 = p2 + 2 * len;
				double tr, ti, b0r, b0i, b1r, b1i, b2r, b2i;
				double b3r, b3i;

				tr = p1[0] * w1r - p1[1] * w1i;
				ti = p1[0] * w1i + p1[1] * w1r;
				b0r = p0[0] + tr;
				b0i = p0[1] + ti;
				b1r = p0[0] - tr;
				b1i = p0[1] - ti;
				tr = p3[0] * w1r - p3[1] * w1i;
				ti = p3[0] * w1i + p3[1] * w1r;
				b2r = p2[0] + tr;
				b2i = p2[1] + ti;
				b3r = p2[0] - tr;
				b3i = p2[1] - ti;
				tr = b2r * w2r - b2i * w2i;
				ti = b2r * w2i + b2i * w2r;
				p0[0] = b0r + tr;
				p0[1] = b0i + ti;
				p2[0] = b0r - tr;
				p2[1] = b0i - ti;
				tr = b3r * w2r - b3i * w2i;	/* i w2 b3 */
				ti = b3r * w2i + b3i * w2r;
				p1[0] = b1r - ti;
				p1[1] = b1i + tr;
				p3[0] = b1r + ti;
				p3[1] = b1i - tr;
			}
		}
	}
}

/* z^T for complex z = (*re, *im), |z| <= 1, by repeated squaring;
 * exactly 0 when |z|^T < thr (about 1e-300), so no subnormals arise. */
static void
cpow_u(double *re, double *im, uint64_t T, double thr2)
{
	double br = *re, bi = *im, rr = 1, ri = 0, t;

	if (br * br + bi * bi < thr2) {
		*re = *im = 0;
		return;
	}
	for (;;) {
		if (T & 1) {
			t = rr * br - ri * bi;
			ri = rr * bi + ri * br;
			rr = t;
		}
		T >>= 1;
		if (T == 0)
			break;
		t = br * br - bi * bi;
		bi = 2 * br * bi;
		br = t;
	}
	*re = rr;
	*im = ri;
}

/*
 * One frequency pair of the packed real transform.  Z_k = x[p] and
 * Z_m-k = x[pp] hold the transform of z_j = x_2j + i x_2j+1; the real
 * transform is X_k = E_k + W^k O_k with E, O the transforms of the even
 * and odd samples, E_k = (Z_k + conj Z_m-k) / 2, O_k = (Z_k -
 * conj Z_m-k) / 2i, and X_m-k = conj(E_k - W^k O_k).  Raise both to the
 * power T and invert the split: E_k = (X_k + conj X_m-k) / 2, O_k =
 * (X_k - conj X_m-k) conj(W^k) / 2, Z_k = E_k + i O_k, Z_m-k = conj E_k
 * + i conj O_k.  (p == pp when k = m/2.)
 */
static void
pair_power(double *x, size_t p, size_t pp, double wr, double wi,
    uint64_t T, double thr2)
{
	double zr = x[2 * p], zi = x[2 * p + 1];
	double yr = x[2 * pp], yi = x[2 * pp + 1];
	double er = 0.5 * (zr + yr), ei = 0.5 * (zi - yi);
	double or_ = 0.5 * (zi + yi), oi = -0.5 * (zr - yr);
	double pr = wr * or_ - wi * oi, pi = wr * oi + wi * or_;
	double ar = er + pr, ai = ei + pi;	/* X_k */
	double br = er - pr, bi = -(ei - pi);	/* X_m-k */
	double dr, di;

	cpow_u(&ar, &ai, T, thr2);
	cpow_u(&br, &bi, T, thr2);
	er = 0.5 * (ar + br);
	ei = 0.5 * (ai - bi);
	dr = 0.5 * (ar - br);
	di = 0.5 * (ai + bi);
	or_ = dr * wr + di * wi;
	oi = di * wr - dr * wi;
	x[2 * pp] = er + oi;
	x[2 * pp + 1] = -ei + or_;
	x[2 * p] = er - oi;
	x[2 * p + 1] = ei + or_;
}

/*
 * x[0..n-1] (real, n = 2m) := the circular T-fold self-convolution of
 * x: a real FFT packed into a complex one of length m, the spectrum
 * raised to the power T (exponentiation by squaring per frequency), and
 * back.  The spectrum is in bit-reversed order (fft_dif): position
 * b + r of the block [b, 2b) holds k = (m / 2b)(1 + 2 rev(r)), rev
 * reversing log2 b bits, and its partner m - k sits at the mirror
 * position 2b - 1 - r; position 0 holds k = 0 and position 1 k = m/2.
 */
static void
self_convolve(double *x, size_t n, uint64_t T, const double *tw)
{
	size_t m = n / 2, b, r;
	double thr2 = exp(-2 * 690.0 / (double)T);

	fft_dif(x, m, tw);
	{
		/* k = 0: X_0 = E_0 + O_0 and X_m = E_0 - O_0, real. */
		double x0r = x[0] + x[1], xmr = x[0] - x[1], dummy = 0;

		cpow_u(&x0r, &dummy, T, 0);
		dummy = 0;
		cpow_u(&xmr, &dummy, T, 0);
		x[0] = 0.5 * (x0r + xmr);
		x[1] = 0.5 * (x0r - xmr);
	}
	pair_power(x, 1, 1, tw[m], tw[m + 1], T, thr2);	/* k = m/2 */
	for (b = 2; b < m; b <<= 1) {
		size_t rr = 0, c = m / (2 * b);

		for (r = 0; r < b / 2; r++) {
			size_t k = c * (1 + 2 * rr), bit = b >> 1;

			pair_power(x, b + r, 2 * b - 1 - r, tw[2 * k],
			    tw[2 * k + 1], T, thr2);
			while (rr & bit) {	/* rr := rev(r + 1) */
				rr ^= bit;
				bit >>= 1;
			}
			rr |= bit;
		}
	}
	fft_dit(x, m, tw);
}

static size_t
pow2_at_least(uint64_t w)
{
	size_t n = 16;

	while (n < w)
		n <<= 1;
	return n;
}

/* out := the steps-fold composition of one (window [wlo, whi]; cut: the
 * upper tail beyond it is charged to pinf).  One step moves one's
 * array to out. */
static int
compose(struct dist *one, uint64_t steps, int64_t wlo, int64_t whi,
    int cut, struct dist *out)
{
	size_t n, j;
	uint64_t mask, a;
	double *x, *tw, scale, noise = 0;

	if (steps == 1) {
		*out = *one;
		one->p = NULL;
		return 0;
	}
	n = pow2_at_least((uint64_t)(whi - wlo) + 1);
	mask = n - 1;
	scale = 2.0 / (double)n;
	x = calloc(n, sizeof(double));
	tw = malloc(n * sizeof(double));
	if (x == NULL || tw == NULL) {
		free(x);
		free(tw);
		return PLD_E_NOMEM;
	}
	for (j = 0; j < one->n; j++)
		x[j & mask] += one->p[j];
	twiddles(tw, n);
	self_convolve(x, n, steps, tw);
	free(tw);
	/* Sum index J = sum of the steps' offsets j; the window starts at
	 * J = a, and position r of the circular result holds the J in
	 * [a, a + n) congruent to r modulo n. */
	if ((out->p = malloc(n * sizeof(double))) == NULL) {
		free(x);
		return PLD_E_NOMEM;
	}
	a = (uint64_t)(wlo - (int64_t)steps * one->lo);
	for (j = 0; j < n; j++) {
		double v = x[(a + j) & mask] * scale;

		if (v < noise)
			noise = v;
		out->p[j] = v > 0 ? v : 0;
	}
	free(x);
	out->lo = wlo;
	out->n = n;
	out->pinf = -expm1((double)steps * log1p(-one->pinf));
	if (cut)
		out->pinf += PLD_TAIL_MASS;
	/*
	 * The FFT's rounding noise is spread evenly over the n points (its
	 * size grows with steps: the transform's relative rounding is raised
	 * to the power steps).  It shows as negative masses where the true
	 * mass is nearly 0, and may as well lower the true masses in the
	 * tail that decide delta.  The queries charge the most negative
	 * value seen to every point, as if the noise had lowered each.
	 */
	out->noise = -noise;
	if (out->pinf > 1)
		out->pinf = 1;
	return 0;
}

/* ---- construction ---- */

static void
dist_free(struct dist *d)
{
	free(d->p);
	d->p = NULL;
}

void
pld_free(struct pld *p)
{
	if (p == NULL)
		return;
	dist_free(&p->d[REMOVE]);
	dist_free(&p->d[ADD]);
	free(p);
}

double
pld_grid(const struct pld *p)
{
	return p->h;
}

size_t
pld_points(const struct pld *p)
{
	return p->d[REMOVE].n + p->d[ADD].n;
}

/* A point mass at loss 0 (no privacy loss). */
static int
trivial(struct pld *p)
{
	int dir;

	for (dir = 0; dir < 2; dir++) {
		if ((p->d[dir].p = malloc(sizeof(double))) == NULL)
			return PLD_E_NOMEM;
		p->d[dir].p[0] = 1;
		p->d[dir].lo = 0;
		p->d[dir].n = 1;
		p->d[dir].pinf = 0;
		p->d[dir].noise = 0;
	}
	return 0;
}

/* *g := max(*g, w / cap): the factor by which h must grow for w
 * points to fit in cap. */
static void
need(double w, size_t cap, double *g)
{
	if (w / (double)cap > *g)
		*g = w / (double)cap;
}

/*
 * Build at spacing h within cap points per direction.  @return 0 or an
 * error; or 1 with *grow > 1, the factor by which h must grow to fit;
 * or, if fine is set, 2 with *grow < 1 when one step's loss is too
 * narrow for h (see pld_sgm_new).
 */
static int
build(struct pld *p, double q, double s, uint64_t steps, double h,
    size_t cap, int fine, double *grow)
{
	struct dist one[2];
	int64_t wlo[2] = { 0, 0 }, whi[2] = { 0, 0 }, a, b;
	int cut[2] = { 0, 0 }, dir, rc = 0;
	double g = 1, sd = INFINITY;

	memset(one, 0, sizeof(one));
	for (dir = 0; dir < 2; dir++) {
		if ((rc = step_indices(dir, q, s, h, &a, &b)) != 0)
			return rc;
		need((double)(b - a) + 1, cap, &g);
	}
	if (g > 1) {
		*grow = g;
		return 1;
	}
	for (dir = 0; dir < 2 && rc == 0; dir++) {
		rc = one_step(dir, q, s, h, &one[dir]);
		if (rc == 0 && sqrt(dist_var(&one[dir], h)) < sd)
			sd = sqrt(dist_var(&one[dir], h));
	}
	if (rc == 0 && fine && sd < 4 * h) {
		/* sd is itself inflated by the grid, so this may take a
		 * few rounds. */
		*grow = sd / (4 * h) < 0.5 ? sd / (4 * h) : 0.5;
		rc = 2;
	}
	for (dir = 0; dir < 2 && rc == 0 && steps > 1; dir++) {
		rc = window(&one[dir], h, steps, &wlo[dir], &whi[dir],
		    &cut[dir]);
		need((double)(whi[dir] - wlo[dir]) + 1, cap, &g);
	}
	if (rc == 0 && g > 1) {
		*grow = g;
		rc = 1;
	}
	for (dir = 0; dir < 2 && rc == 0; dir++) {
		rc = compose(&one[dir], steps, wlo[dir], whi[dir], cut[dir],
		    &p->d[dir]);
		dist_free(&one[dir]);
	}
	dist_free(&one[REMOVE]);
	dist_free(&one[ADD]);
	return rc;
}

int
pld_sgm_new(double q, double sigma, uint64_t steps, double grid,
    struct pld **out)
{
	struct pld *p;
	double h = grid > 0 ? grid : PLD_DEFAULT_GRID, grow = 1;
	size_t cap = grid > 0 ? PLD_MAX_POINTS : PLD_DEFAULT_POINTS;
	int rc, k, fine, capped = 0;

	if (out == NULL || !(q >= 0 && q <= 1) || !(sigma >= PLD_MIN_SIGMA) ||
	    !isfinite(sigma) || steps > PLD_MAX_STEPS ||
	    !(grid == 0 || (grid >= PLD_MIN_GRID && grid <= 1)))
		return PLD_E_PARAM;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return PLD_E_NOMEM;
	p->h = h;
	if (q == 0 || steps == 0) {
		if ((rc = trivial(p)) != 0) {
			pld_free(p);
			return rc;
		}
		*out = p;
		return 0;
	}
	/*
	 * The default grid: connect the dots spreads each step's loss over
	 * neighbouring grid points, adding up to h^2/4 (h^2/6 on average)
	 * to its variance, so a loss narrower than a few h (large sigma or
	 * tiny q) would come out much wider after many steps.  Refine h
	 * until one step's loss spans at least 4 grid steps (variance
	 * inflated by at most 1/64 relative), down to PLD_MIN_GRID; then
	 * coarsen it, if need be, until the composition fits
	 * PLD_DEFAULT_POINTS (coarsening wins: memory and time are bounded).
	 */
	for (k = 0; k < MAX_TRIES; k++) {
		fine = grid == 0 && !capped && h > PLD_MIN_GRID;
		rc = build(p, q, sigma, steps, h, cap, fine, &grow);
		if (rc != 1 && rc != 2)
			break;
		dist_free(&p->d[REMOVE]);
		dist_free(&p->d[ADD]);
		if (grid > 0)
			break;
		if (rc == 1) {
			capped = 1;
			/* The window's width in loss units barely depends
			 * on h. */
			h *= grow * 1.05;
		} else {
			h *= grow;
			if (h < PLD_MIN_GRID)
				h = PLD_MIN_GRID;
		}
	}
	if (rc != 0) {
		pld_free(p);
		return rc == 1 || rc == 2 ? PLD_E_SIZE : rc;
	}
	p->h = h;
	*out = p;
	return 0;
}

/* ---- queries ---- */

/*
 * Between grid losses l_m < eps <= l_m+1, delta(eps) = S - e^(eps - l_m) W
 * with S = pinf + sum_{j>m} p_j and W = sum_{j>m} p_j e^(l_m - l_j); scan
 * m downwards from the top to the first m with delta(l_m) > delta, then
 * solve for eps in closed form.  W is carried relative to l_m, so
 * nothing overflows.
 */
static double
dist_epsilon(const struct dist *d, double h, double delta)
{
	double S = d->pinf, W = 0, emh = exp(-h);
	size_t m;

	if (d->pinf > delta)
		return INFINITY;
	for (m = d->n; m-- > 0;) {
		double l = (double)(d->lo + (int64_t)m) * h;
		double pm = d->p[m] + d->noise;

		if (S - W > delta)
			return l + log((S - delta) / W);
		if (l <= 0)
			return 0;
		S += pm;
		W = (W + pm) * emh;
	}
	/* Below the lowest grid loss (now W is relative to l_0 - h). */
	if (S <= delta)
		return 0;
	return (double)(d->lo - 1) * h + log((S - delta) / W);
}

/* delta(eps) = S - e^(eps - l_m) W with S and W as above, for the m
 * with l_m < eps <= l_m+1 (or below all grid losses). */
static double
dist_delta(const struct dist *d, double h, double eps)
{
	double S = d->pinf, W = 0, emh = exp(-h), l = 0, r;
	size_t m;

	for (m = d->n; m-- > 0;) {
		l = (double)(d->lo + (int64_t)m) * h;
		if (!(l >= eps))
			break;
		S += d->p[m] + d->noise;
		W = (W + d->p[m] + d->noise) * emh;
		l -= h;
	}
	r = W > 0 ? S - exp(eps - l) * W : S;
	if (r < d->pinf)
		r = d->pinf;
	return r < 1 ? r : 1;
}

int
pld_epsilon(const struct pld *p, double delta, double *eps)
{
	double a, b;

	if (p == NULL || eps == NULL || !(delta >= 0 && delta <= 1))
		return PLD_E_PARAM;
	a = dist_epsilon(&p->d[REMOVE], p->h, delta);
	b = dist_epsilon(&p->d[ADD], p->h, delta);
	a = a > b ? a : b;
	*eps = a > 0 ? a : 0;
	return 0;
}

int
pld_delta(const struct pld *p, double eps, double *delta)
{
	double a, b;

	if (p == NULL || delta == NULL || !(eps >= 0))
		return PLD_E_PARAM;
	a = dist_delta(&p->d[REMOVE], p->h, eps);
	b = dist_delta(&p->d[ADD], p->h, eps);
	*delta = a > b ? a : b;
	return 0;
}

int
pld_sgm_epsilon(double q, double sigma, uint64_t steps, double delta,
    double grid, double *eps)
{
	struct pld *p;
	int rc;

	if (eps == NULL || !(delta >= 0 && delta <= 1))
		return PLD_E_PARAM;
	if ((rc = pld_sgm_new(q, sigma, steps, grid, &p)) != 0)
		return rc;
	rc = pld_epsilon(p, delta, eps);
	pld_free(p);
	return rc;
}

int
pld_sgm_delta(double q, double sigma, uint64_t steps, double eps,
    double grid, double *delta)
{
	struct pld *p;
	int rc;

	if (delta == NULL || !(eps >= 0))
		return PLD_E_PARAM;
	if ((rc = pld_sgm_new(q, sigma, steps, grid, &p)) != 0)
		return rc;
	rc = pld_delta(p, eps, delta);
	pld_free(p);
	return rc;
}
