/*
 * noise.c: exact Bernoulli, discrete Laplace and discrete Gaussian
 * samplers (Canonne, Kamath, Steinke 2020, "CKS" below), grid noise, and
 * permute-and-flip.
 *
 * Every sampler is a loop of exact Bernoulli trials with rational success
 * probabilities, each decided by comparing a uniform integer below the
 * denominator with the numerator.  No floating-point value ever touches a
 * probability: doubles only enter as exact dyadic rationals (GMP's
 * mpq_set_d is exact) or through exact power-of-two scaling.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include <gmp.h>

#include "noise.h"

__extension__ typedef unsigned __int128 u128;

_Static_assert(GMP_NUMB_BITS == 64 && sizeof(mp_limb_t) == 8,
    "uniform_z fills 64-bit limbs");
_Static_assert(sizeof(unsigned long) == 8, "mpz *_ui functions take u64");

/* Integer scales above this go through GMP (2 s^2 must fit in 64 bits). */
#define SMALL_MAX (UINT64_C(1) << 31)
/* Largest proposal scale: outputs must fit in int64_t. */
#define T_MAX (UINT64_C(1) << 62)

const char *
noise_strerror(int code)
{
	switch (code) {
	case NOISE_OK:
		return "success";
	case NOISE_E_RANGE:
		return "parameter out of range";
	case NOISE_E_OVERFLOW:
		return "noise sample overflows";
	case NOISE_E_NOMEM:
		return "out of memory";
	default:
		return "unknown noise error";
	}
}

/* ---- uniform integers and Bernoulli trials ---- */

/* Uniform on [0, m) for m > 0, by rejection of masked 128-bit draws
 * (each attempt succeeds with probability > 1/2). */
static u128
uniform_u128(struct rng *r, u128 m)
{
	uint64_t hi = (uint64_t)(m >> 64), mask;
	u128 x;

	if (hi == 0)
		return rng_uniform_below(r, (uint64_t)m);
	mask = UINT64_MAX >> __builtin_clzll(hi);
	do {
		x = (u128)(rng_u64(r) & mask) << 64;
		x |= rng_u64(r);
	} while (x >= m);
	return x;
}

/* Uniform on [0, m) for an mpz m > 0, the same way. */
static void
uniform_z(struct rng *r, mpz_t x, const mpz_t m)
{
	size_t bits = mpz_sizeinbase(m, 2), nl = (bits + 63) / 64;
	unsigned top = (unsigned)(bits % 64);

	do {
		mp_limb_t *p = mpz_limbs_write(x, (mp_size_t)nl);

		for (size_t i = 0; i < nl; i++)
			p[i] = rng_u64(r);
		if (top != 0)
			p[nl - 1] &= (UINT64_C(1) << top) - 1;
		mpz_limbs_finish(x, (mp_size_t)nl);
	} while (mpz_cmp(x, m) >= 0);
}

/*
 * Bernoulli(exp(-1)) by CKS Algorithm 1 with gamma = 1: draw A_K ~
 * Bernoulli(1/K) for K = 1, 2, ... until the first A_K = 0, and return 1
 * iff that K is odd.  P[K > k] = 1/k!, so P[K odd] = sum (-1)^j / j! =
 * exp(-1).  A_1 = 1 always, so the loop starts at K = 2.
 */
static int
bern_exp1(struct rng *r)
{
	for (uint64_t k = 2;; k++)
		if (rng_uniform_below(r, k) != 0)
			return (int)(k & 1);
}

/* The tail of bern_exp_frac_u64 once d * k overflows 64 bits (reached
 * with probability below 1/63!, but handled exactly, not assumed away). */
static int
bern_exp_frac_wide(struct rng *r, uint64_t n, uint64_t d, uint64_t k)
{
	for (; k < UINT64_MAX; k++)
		if (uniform_u128(r, (u128)d * k) >= n)
			return (int)(k & 1);
	return 0;	/* unreachable: needs 2^64 successes in a row */
}

/*
 * Bernoulli(exp(-n/d)) for 0 <= n <= d (CKS Algorithm 1, gamma in
 * [0, 1]): A_K ~ Bernoulli(gamma/K) until the first failure at K; return
 * K odd.  P[K > k] = gamma^k / k!, so P[K odd] = exp(-gamma).
 */
static int
bern_exp_frac_u64(struct rng *r, uint64_t n, uint64_t d)
{
	if (n == 0)
		return 1;
	for (uint64_t k = 1;; k++) {
		uint64_t dk;

		if (__builtin_mul_overflow(d, k, &dk))
			return bern_exp_frac_wide(r, n, d, k);
		if (rng_uniform_below(r, dk) >= n)
			return (int)(k & 1);
	}
}

/* Bernoulli(exp(-n/d)) for n >= 0: exp(-n/d) = exp(-1)^q exp(-(n%d)/d)
 * with q = n/d, each factor an independent trial (stopping at the first
 * failure, so a huge q costs nothing). */
static int
bern_exp_u128(struct rng *r, u128 n, uint64_t d)
{
	u128 q;
	uint64_t rem;

	if ((n >> 64) == 0) {	/* the usual case: a 64-bit division */
		q = (uint64_t)n / d;
		rem = (uint64_t)n % d;
	} else {
		q = n / d;
		rem = (uint64_t)(n % d);
	}
	for (u128 i = 0; i < q; i++)
		if (!bern_exp1(r))
			return 0;
	return bern_exp_frac_u64(r, rem, d);
}

/* GMP scratch for the big-number trials. */
struct zscratch {
	mpz_t q, rem, dk, u;
};

static void
zs_init(struct zscratch *z)
{
	mpz_inits(z->q, z->rem, z->dk, z->u, NULL);
}

static void
zs_clear(struct zscratch *z)
{
	mpz_clears(z->q, z->rem, z->dk, z->u, NULL);
}

/* Bernoulli(exp(-n/d)) for mpz 0 <= n <= d, d > 0 (CKS Algorithm 1). */
static int
bern_exp_frac_z(struct rng *r, const mpz_t n, const mpz_t d, struct zscratch *z)
{
	if (mpz_sgn(n) == 0)
		return 1;
	for (unsigned long k = 1; k < ULONG_MAX; k++) {
		mpz_mul_ui(z->dk, d, k);
		uniform_z(r, z->u, z->dk);
		if (mpz_cmp(z->u, n) >= 0)
			return (int)(k & 1);
	}
	return 0;	/* unreachable */
}

/* Bernoulli(exp(-n/d)) for mpz n >= 0, d > 0. */
static int
bern_exp_z(struct rng *r, const mpz_t n, const mpz_t d, struct zscratch *z)
{
	int fits;
	unsigned long q;

	mpz_fdiv_qr(z->q, z->rem, n, d);
	fits = mpz_fits_ulong_p(z->q);
	q = fits ? mpz_get_ui(z->q) : ULONG_MAX;
	/* For q >= 2^64 the loop below ends at the first failed trial, long
	 * before the bound: 2^64 successes have probability exp(-2^64). */
	for (unsigned long i = 0; i < q; i++)
		if (!bern_exp1(r))
			return 0;
	return bern_exp_frac_z(r, z->rem, d, z);
}

int
noise_bernoulli(struct rng *r, uint64_t num, uint64_t den)
{
	if (den == 0 || num > den)
		return NOISE_E_RANGE;
	return rng_uniform_below(r, den) < num;
}

int
noise_bernoulli_exp(struct rng *r, uint64_t num, uint64_t den)
{
	if (den == 0)
		return NOISE_E_RANGE;
	return bern_exp_u128(r, num, den);
}

/* ---- discrete Laplace ---- */

/*
 * CKS Algorithm 2: P[Z = z] proportional to exp(-|z| s/t) for positive
 * integers s, t.  U uniform on [0, t) is kept with probability
 * exp(-U/t) and V ~ Geometric(1 - e^-1) counts successes of
 * Bernoulli(e^-1), so X = U + tV has P[X = x] proportional to exp(-x/t);
 * Y = floor(X/s) then has P[Y = y] proportional to exp(-y s/t), and a
 * fair sign (rejecting -0) gives the two-sided law.
 */
static int
dlap_u64(struct rng *r, uint64_t s, uint64_t t, int64_t *out)
{
	for (;;) {
		uint64_t u = rng_uniform_below(r, t), v = 0, x, y;
		int neg;

		if (!bern_exp_frac_u64(r, u, t))
			continue;
		while (bern_exp1(r))
			if (++v == 0)
				return NOISE_E_OVERFLOW;
		if (__builtin_mul_overflow(t, v, &x) ||
		    __builtin_add_overflow(x, u, &x))
			return NOISE_E_OVERFLOW;
		y = x / s;
		neg = (int)rng_bits(r, 1);
		if (neg && y == 0)
			continue;
		if (y > (uint64_t)INT64_MAX)
			return NOISE_E_OVERFLOW;
		*out = neg ? -(int64_t)y : (int64_t)y;
		return 0;
	}
}

int
noise_dlaplace(struct rng *r, uint64_t num, uint64_t den, int64_t *out)
{
	if (num == 0 || den == 0)
		return NOISE_E_RANGE;
	return dlap_u64(r, den, num, out);
}

/* ---- discrete Gaussian ---- */

struct noise_dg {
	int small;		/* sigma = s, an integer <= SMALL_MAX */
	uint64_t s;		/* small: sigma; the proposal scale t = s */
	uint64_t twos2;		/* small: 2 s^2 */
	uint64_t t;		/* big: floor(sigma) + 1 */
	mpz_t num;		/* big: sigma^2 = num/den in lowest terms */
	mpz_t a;		/* big: t * den */
	mpz_t d;		/* big: 2 num den t^2 */
	mpz_t e;		/* big: scratch for the exponent's numerator */
	struct zscratch z;
};

static int
dg_alloc(struct noise_dg **out)
{
	struct noise_dg *g = calloc(1, sizeof *g);

	*out = g;
	if (g == NULL)
		return NOISE_E_NOMEM;
	mpz_inits(g->num, g->a, g->d, g->e, NULL);
	zs_init(&g->z);
	return 0;
}

void
noise_dg_free(struct noise_dg *g)
{
	if (g == NULL)
		return;
	mpz_clears(g->num, g->a, g->d, g->e, NULL);
	zs_clear(&g->z);
	free(g);
}

/*
 * Set up from sigma^2 = num/den (mpq in lowest terms, positive).  With
 * proposal scale t the acceptance exponent of CKS Algorithm 3 is
 *   (|y| - sigma^2/t)^2 / (2 sigma^2) = (|y| t den - num)^2 / (2 num den t^2),
 * and the algorithm is correct for every t > 0 (the proposal times the
 * acceptance is proportional to exp(-y^2/(2 sigma^2)) for any t); CKS use
 * t = floor(sigma) + 1 for a bounded expected number of proposals.  When
 * sigma is an integer s we take t = s: the exponent becomes
 * (|y| - s)^2 / (2 s^2), small enough for machine words.
 */
static int
dg_setup(struct noise_dg *g, const mpq_t s2)
{
	mpz_srcptr num = mpq_numref(s2), den = mpq_denref(s2);

	if (mpz_sgn(num) <= 0)
		return NOISE_E_RANGE;
	if (mpz_cmp_ui(den, 1) == 0 && mpz_perfect_square_p(num)) {
		mpz_sqrt(g->e, num);
		if (mpz_cmp_ui(g->e, SMALL_MAX) <= 0) {
			g->small = 1;
			g->s = mpz_get_ui(g->e);
			g->twos2 = 2 * g->s * g->s;
			return 0;
		}
	}
	mpz_fdiv_q(g->e, num, den);
	mpz_sqrt(g->e, g->e);		/* floor(sqrt(floor(x))) = floor(sqrt(x)) */
	mpz_add_ui(g->e, g->e, 1);
	if (mpz_cmp_ui(g->e, T_MAX) > 0)
		return NOISE_E_RANGE;
	g->t = mpz_get_ui(g->e);
	mpz_set(g->num, num);
	mpz_mul_ui(g->a, den, g->t);
	mpz_mul(g->d, g->a, g->a);
	mpz_mul(g->d, g->d, num);
	mpz_mul_2exp(g->d, g->d, 1);
	mpz_divexact(g->d, g->d, den);	/* 2 num (t den)^2 / den */
	return 0;
}

int
noise_dg_new(struct noise_dg **out, uint64_t num, uint64_t den)
{
	mpq_t q;
	int rc;

	*out = NULL;
	if (num == 0 || den == 0)
		return NOISE_E_RANGE;
	if ((rc = dg_alloc(out)) != 0)
		return rc;
	mpq_init(q);
	mpz_set_ui(mpq_numref(q), num);
	mpz_set_ui(mpq_denref(q), den);
	mpq_canonicalize(q);
	rc = dg_setup(*out, q);
	mpq_clear(q);
	if (rc != 0) {
		noise_dg_free(*out);
		*out = NULL;
	}
	return rc;
}

int
noise_dg_new_sigma(struct noise_dg **out, double sigma)
{
	mpq_t q;
	int rc;

	*out = NULL;
	if (!isfinite(sigma) || sigma <= 0 || sigma >= 0x1p62)
		return NOISE_E_RANGE;
	if ((rc = dg_alloc(out)) != 0)
		return rc;
	mpq_init(q);
	mpq_set_d(q, sigma);		/* exact: a double is a dyadic rational */
	mpq_mul(q, q, q);
	rc = dg_setup(*out, q);
	mpq_clear(q);
	if (rc != 0) {
		noise_dg_free(*out);
		*out = NULL;
	}
	return rc;
}

int
noise_dg_sample(struct noise_dg *g, struct rng *r, int64_t *out)
{
	for (;;) {
		int64_t y;
		uint64_t a;
		int rc, c;

		rc = dlap_u64(r, 1, g->small ? g->s : g->t, &y);
		if (rc != 0)
			return rc;
		a = y < 0 ? 0 - (uint64_t)y : (uint64_t)y;
		if (g->small) {
			uint64_t diff = a > g->s ? a - g->s : g->s - a;

			c = bern_exp_u128(r, (u128)diff * diff, g->twos2);
		} else {
			mpz_mul_ui(g->e, g->a, a);
			mpz_sub(g->e, g->e, g->num);
			mpz_mul(g->e, g->e, g->e);
			c = bern_exp_z(r, g->e, g->d, &g->z);
		}
		if (c) {
			*out = y;
			return 0;
		}
	}
}

int
noise_dgauss(struct rng *r, uint64_t num, uint64_t den, int64_t *out)
{
	struct noise_dg *g;
	int rc;

	if ((rc = noise_dg_new(&g, num, den)) != 0)
		return rc;
	rc = noise_dg_sample(g, r, out);
	noise_dg_free(g);
	return rc;
}

/* ---- grid noise ---- */

double
noise_grid(double s)
{
	int e;

	if (!isfinite(s) || s <= 0)
		return 0;
	(void)frexp(s, &e);		/* s = f 2^e, f in [0.5, 1) */
	if (e - 1 - NOISE_GRID_BITS < DBL_MIN_EXP - 1)
		return 0;		/* keep gamma a normal double */
	return ldexp(1.0, e - 1 - NOISE_GRID_BITS);
}

/* The exponent k of gamma = 2^k. */
static int
grid_exp(double gamma)
{
	int e;

	(void)frexp(gamma, &e);
	return e - 1;
}

/*
 * x / gamma rounded to the nearest integer, ties to even.  x / gamma is
 * exact (a power-of-two scaling) except when it underflows, and then its
 * magnitude is far below 1/2 and the result is 0 either way.
 */
static int
grid_round(double x, int k, int64_t *out)
{
	double v, f, d;

	if (!isfinite(x))
		return NOISE_E_RANGE;
	v = ldexp(x, -k);
	if (!(fabs(v) < 0x1p62))
		return NOISE_E_OVERFLOW;
	f = floor(v);
	d = v - f;			/* exact: 0 <= d < 1 */
	if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0))
		f += 1;
	*out = (int64_t)f;
	return 0;
}

static int
grid_store(double *x, int64_t ri, int64_t k, int e)
{
	int64_t sum;
	double v;

	if (__builtin_add_overflow(ri, k, &sum))
		return NOISE_E_OVERFLOW;
	v = ldexp((double)sum, e);
	if (!isfinite(v))
		return NOISE_E_OVERFLOW;
	*x = v;
	return 0;
}

int
noise_add_dgauss(struct rng *r, double *x, size_t n, double sigma,
    unsigned flags)
{
	double gamma = noise_grid(sigma), su;
	struct noise_dg *g;
	int rc = 0, e;

	if (gamma == 0)
		return NOISE_E_RANGE;
	e = grid_exp(gamma);
	su = ldexp(sigma, -e);		/* exact, in [2^24, 2^25) */
	if (!(flags & NOISE_EXACT_SCALE))
		su = ceil(su);
	if ((rc = noise_dg_new_sigma(&g, su)) != 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		int64_t ri, k;

		if ((rc = grid_round(x[i], e, &ri)) != 0)
			break;
		if ((rc = noise_dg_sample(g, r, &k)) != 0)
			break;
		rc = grid_store(&x[i], ri, k, e);
	}
	noise_dg_free(g);
	return rc;
}

int
noise_add_dlaplace(struct rng *r, double *x, size_t n, double b,
    unsigned flags)
{
	double gamma = noise_grid(b), bu;
	uint64_t s = 1, t;
	int rc = 0, e;

	if (gamma == 0)
		return NOISE_E_RANGE;
	e = grid_exp(gamma);
	bu = ldexp(b, -e);		/* exact, in [2^24, 2^25) */
	if (flags & NOISE_EXACT_SCALE) {
		/* bu = t / 2^j exactly, with j <= 52 - 24 fraction bits. */
		while (bu != floor(bu)) {
			bu *= 2;
			s *= 2;
		}
	} else
		bu = ceil(bu);
	t = (uint64_t)bu;
	for (size_t i = 0; i < n && rc == 0; i++) {
		int64_t ri, k;

		if ((rc = grid_round(x[i], e, &ri)) != 0)
			break;
		if ((rc = dlap_u64(r, s, t, &k)) != 0)
			break;
		rc = grid_store(&x[i], ri, k, e);
	}
	return rc;
}

/* a + b rounded upwards, for nonnegative finite a and b. */
static double
add_up(double a, double b)
{
	return nextafter(a + b, INFINITY);
}

double
noise_sens_l2(double delta2, double gamma, uint64_t d)
{
	double root;

	if (!isfinite(delta2) || !isfinite(gamma) || delta2 < 0 || gamma < 0)
		return NAN;
	/* (double)d and sqrt each round to nearest; one step up covers both
	 * (relative errors 2^-53 and 2^-53, halved by the root). */
	root = nextafter(sqrt((double)d), INFINITY);
	return add_up(delta2, nextafter(gamma * root, INFINITY));
}

double
noise_sens_l1(double delta1, double gamma, uint64_t d)
{
	if (!isfinite(delta1) || !isfinite(gamma) || delta1 < 0 || gamma < 0)
		return NAN;
	return add_up(delta1, nextafter(gamma * nextafter((double)d, INFINITY),
	    INFINITY));
}

double
noise_fast_tv_bound(double sigma, uint64_t n)
{
	(void)n;
	if (!isfinite(sigma) || sigma <= 0)
		return NAN;
	return 0;
}

/* ---- permute-and-flip ---- */

int
noise_pf_select(struct rng *r, const double *score, size_t n, double eps,
    double sens, size_t *out)
{
	mpq_t qmax, x, c;
	struct zscratch z;
	size_t *idx, best = 0;
	int rc = NOISE_E_RANGE;

	if (n == 0 || !isfinite(eps) || !isfinite(sens) || eps <= 0 ||
	    sens <= 0)
		return NOISE_E_RANGE;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(score[i]))
			return NOISE_E_RANGE;
		if (score[i] > score[best])
			best = i;
	}
	if ((idx = malloc(n * sizeof *idx)) == NULL)
		return NOISE_E_NOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	mpq_inits(qmax, x, c, NULL);
	zs_init(&z);
	mpq_set_d(qmax, score[best]);
	/* c = eps / (2 sens), exactly. */
	mpq_set_d(c, eps);
	mpq_set_d(x, sens);
	mpq_div(c, c, x);
	mpq_div_2exp(c, c, 1);
	/* A lazy Fisher-Yates shuffle visits the candidates in uniformly
	 * random order; a maximiser accepts with probability 1, so one pass
	 * always ends with a choice. */
	for (size_t i = 0; i < n; i++) {
		size_t j = i + (size_t)rng_uniform_below(r, n - i), k = idx[j];

		idx[j] = idx[i];
		idx[i] = k;
		mpq_set_d(x, score[k]);
		mpq_sub(x, qmax, x);
		mpq_mul(x, x, c);
		if (bern_exp_z(r, mpq_numref(x), mpq_denref(x), &z)) {
			*out = k;
			rc = 0;
			break;
		}
	}
	zs_clear(&z);
	mpq_clears(qmax, x, c, NULL);
	free(idx);
	return rc;
}
