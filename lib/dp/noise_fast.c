/*
 * noise_fast.c: convolutions of alias-table discrete Gaussians, with the
 * total variation bound proved in noise_fast.h.
 *
 * Everything that decides a probability is integer arithmetic: the
 * tables are built from GMP fixed-point values into integer weights that
 * sum to 2^127, and a draw compares uniform bits with integer thresholds.
 * Doubles appear only in choosing parameters (which must merely be
 * deterministic), in the error bound (computed with margins), and in the
 * grid arithmetic, which is the same exact power-of-two scaling as in
 * noise.c.
 */
#include <endian.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>

#include "aesctr.h"
#include "noise_fast.h"
#include "noise_fast_test.h"

__extension__ typedef unsigned __int128 u128;

/* Fixed-point precision of the table computation. */
#define PREC 192
/* log2 of the total alias weight. */
#define WBITS 127
/* Table cut-off, in widths: the tail beyond it is below 2^-145. */
#define TAIL_WIDTHS 14.0
/* Samples drawn per rng_bytes call. */
#define BLK 256

/* Uniform bits per table draw, and the most of them used for the
 * threshold (so that it fits in 16 bits). */
#define CHUNK 24
#define TOPMAX 14
/* Largest table: alias values fit in 16 bits. */
#define MMAX 16

/*
 * One base sampler: the folded law of N_Z(0, c^2) on 0..T as an alias
 * table of n = 2^m slots, each of capacity 2^(WBITS - m).  Slot j keeps
 * value j when a uniform u < thr[j] on [0, 2^(WBITS - m)), else gives its
 * alias value.  A draw takes the top `top` bits of u from its 24-bit
 * chunk, and the other rest = WBITS - m - top bits only when those equal
 * hi = thr[j] >> rest and thr[j] has nonzero bits below them.  hot[j]
 * packs hi (at most 2^top <= 2^14, 15 bits), that flag, and the alias
 * value, which is all a draw needs unless they tie.  On a tie, 16 more
 * bits are compared with mid[j], the next 16 bits of thr[j], and only if
 * those tie too is thr[j] itself read: the cold arrays are rarely
 * touched.
 */
struct tab {
	unsigned m, top, rest;
	uint32_t mask;
	uint32_t T;
	uint32_t *hot;
	uint16_t *mid;
	u128 *thr;
};
#define HOT_LOW 0x10000u	/* hot[j]: thr[j] has bits below hi */

struct params {
	int levels;
	uint64_t k;		/* K */
	uint64_t mult;		/* K, or K + 1 for DEFECT_FACTOR */
	double w_in2;		/* inner width^2, double (bound and T only) */
	double w_out2;		/* outer width^2 */
	uint32_t t_in, t_out;	/* table cut-offs */
	int defect;
};

struct noise_fast {
	struct params p;
	struct tab inner, outer;
	double tau;
	double gamma, inv_gamma;	/* 0 without a grid */
	int simd;		/* 16 samples at a time: 1 AVX-512F, 2 with
				 * VBMI byte permutes; 0 scalar */
	int aes;		/* bulk bits from AES-CTR (1) or ChaCha20 */
	int i32;		/* every |X| and partial sum < 2^31 */
	/* The permutes of level l < 4 (simd 2): byte 4i + b of the chunks
	 * of 16 samples is byte pidx = 3 (L i + l) + b of their stream bytes
	 * for b < 3 (pkeep), from the third 64 bytes when it is >= 128
	 * (phi); byte 3 is 0. */
	unsigned char pidx[4][64];
	uint64_t pkeep[4], phi[4];
};

/*
 * The random bits of one call: the bulk from AES-256-CTR (aesctr.h),
 * re-keyed from r every AESCTR_REKEY blocks, the rare extra bits of a
 * tied draw (tab_tie) from r itself.  Both sequences are fixed by the
 * order of the draws, so a seeded r gives the same values on every CPU.
 */
struct src {
	struct rng *r;
	struct aesctr a;
	size_t left;		/* blocks before the next key */
	int aes;		/* 0: the bulk bits from r too */
};

/* Keys taken by this thread (noise_fast_test_keys). */
static _Thread_local size_t keys_taken;

static void
src_init(struct src *s, const struct noise_fast *h, struct rng *r)
{
	s->r = r;
	s->left = 0;
	s->aes = h->aes;
}

static void
src_done(struct src *s)
{
	aesctr_wipe(&s->a);
}

/* n keystream bytes at buf, whole blocks: up to 15 more bytes are written
 * (and never used).  Every byte comes from a block used once. */
static void
src_bytes(struct src *s, unsigned char *buf, size_t n)
{
	size_t nb = (n + 15) / 16;

	if (!s->aes) {
		rng_bytes(s->r, buf, n);
		return;
	}
	while (nb > 0) {
		size_t k;

		if (s->left == 0) {
			aesctr_key_rng(&s->a, s->r);
			keys_taken++;
			s->left = AESCTR_REKEY;
		}
		k = nb < s->left ? nb : s->left;
		aesctr_blocks(&s->a, buf, k);
		buf += 16 * k;
		nb -= k;
		s->left -= k;
	}
}

/*
 * The vector draws (AVX-512F, chosen per handle when it is created) give
 * the same values from the same stream as the scalar code: each lane
 * does what tab_draw does with its 24 bits, and the rare draws whose
 * threshold bits tie (which read more of the stream) are redone by the
 * scalar code, in order, before the next 16 samples.  PRIVADA_NO_SIMD at
 * build time, a compiler without GCC's target attribute, or another
 * architecture leaves only the scalar code.
 */
#if !defined(PRIVADA_NO_SIMD) && defined(__GNUC__) && defined(__x86_64__)
#define NF_HAVE_X86 1
#include <immintrin.h>
#else
#define NF_HAVE_X86 0
#endif

/* 2: AVX-512 with VBMI byte permutes, 1: AVX-512F gathers, 0: scalar. */
static int
simd_supported(void)
{
#if NF_HAVE_X86
	if (!__builtin_cpu_supports("avx512f"))
		return 0;
	return __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vbmi") ? 2 : 1;
#else
	return 0;
#endif
}

/* ---- parameters and the bound ---- */

/* K^e as a double: exact below 2^53, which covers every 3 K^L compared
 * with s <= 2^40 in choose; larger powers only enter the estimates. */
static double
powk(uint64_t k, int e)
{
	double v = 1;

	for (int i = 0; i < e; i++)
		v *= (double)k;
	return v;
}

/* Outer width^2 in double for levels L and factor K, inner width^2 w2. */
static double
outer2_d(double s, int L, uint64_t k, double w2)
{
	double acc = 0, k2 = (double)k * (double)k;

	for (int i = 0; i < L - 1; i++)
		acc = acc * k2 + w2;	/* w2 (1 + K^2 + ... + K^(2(L-2))) */
	return (s * s - acc) / powk(k, 2 * (L - 1));
}

static uint32_t
cutoff(double w2, int defect)
{
	double w = sqrt(w2);

	if (defect == NOISE_FAST_DEFECT_TRUNCATE)
		return (uint32_t)ceil(1.5 * w);
	return (uint32_t)ceil(TAIL_WIDTHS * w) + 1;
}

/*
 * Choose L, K and the widths for s (noise_fast.h, "Construction").  Only
 * determinism matters here; the bound below is computed from what is
 * chosen.  @return 0 or NOISE_E_RANGE.
 */
static int
choose(double s, int defect, struct params *p)
{
	memset(p, 0, sizeof *p);
	p->defect = defect;
	if (!(s >= NOISE_FAST_S_MIN && s <= NOISE_FAST_S_MAX))
		return NOISE_E_RANGE;
	if (s <= NOISE_FAST_WMAX) {
		p->levels = 1;
		p->w_out2 = s * s;
		p->t_out = cutoff(p->w_out2, defect);
		return 0;
	}
	for (int L = 2; L <= NOISE_FAST_LMAX; L++) {
		uint64_t k = (uint64_t)floor(pow(s / 3, 1.0 / L));
		double w2;

		/* Exact correction: the largest K with 3 K^L <= s. */
		while (k > 1 && 3 * powk(k, L) > s)
			k--;
		while (3 * powk(k + 1, L) <= s)
			k++;
		if (k < 2 || 3 * k > NOISE_FAST_WMAX)
			continue;
		w2 = 9.0 * (double)k * (double)k;
		if (defect == NOISE_FAST_DEFECT_SMOOTHING)
			w2 /= 81;		/* width K/3 */
		p->levels = L;
		p->k = k;
		p->mult = defect == NOISE_FAST_DEFECT_FACTOR ? k + 1 : k;
		p->w_in2 = w2;
		p->w_out2 = outer2_d(s, L, k, w2);
		if (!(p->w_out2 >= 9) ||
		    p->w_out2 > (double)NOISE_FAST_WMAX * NOISE_FAST_WMAX)
			continue;
		p->t_in = cutoff(w2, defect);
		p->t_out = cutoff(p->w_out2, defect);
		return 0;
	}
	return NOISE_E_RANGE;
}

/* tau_table of noise_fast.h for width^2 w2 and cut-off T. */
static double
tab_bound(double w2, uint32_t T)
{
	double c = sqrt(w2) * (1 + 0x1p-40), t = (double)T, tail;

	tail = c / t * exp(-t * t / (2 * c * c));
	return tail + t * 0x1p-127 + 6 * t * t * (t + 1) * 0x1p-192;
}

/* eps(r) / (1 - eps(r)) for 1/r^2 = K^2/w2 + 1/a2 (noise_fast.h). */
static double
level_bound(double k, double w2, double a2)
{
	double lo = 1 - 0x1p-40, r2, q, eps;

	r2 = 1 / (k * k / (w2 * lo) + 1 / (a2 * lo));
	q = exp(-2 * M_PI * M_PI * r2);

	if (!(q < 0.25))
		return INFINITY;	/* no useful bound: not smoothed */
	eps = 2 * q / (1 - q);
	return eps / (1 - eps);
}

static double
bound(const struct params *p)
{
	double tau = tab_bound(p->w_out2, p->t_out);

	if (p->levels > 1) {
		/* Every level adds at least the outer width, so a2 >= b^2
		 * bounds all levels. */
		tau += (p->levels - 1) * (tab_bound(p->w_in2, p->t_in) +
		    level_bound((double)p->k, p->w_in2, p->w_out2));
	}
	/* The AES-CTR stream (noise_fast.h, "Random bits"): one block per
	 * sample at most, within AESCTR_REKEY / 2^129 of uniform each. */
	tau += (double)AESCTR_REKEY * 0x1p-129;
	return tau * (1 + 0x1p-20);
}

double
noise_fast_tv_per_sample(double s)
{
	struct params p;

	if (choose(s, NOISE_FAST_DEFECT_NONE, &p) != 0)
		return NAN;
	return bound(&p);
}

/* ---- tables ---- */

/*
 * floor(exp(-yn/yd) 2^PREC), within 2 units, for 0 < yn/yd <= 1/2: the
 * alternating Taylor series with 64 guard bits.  Each computed term is
 * within 2 guard units of the true term (its error is at most half the
 * previous one plus one truncation), there are fewer than 100 terms, and
 * the omitted tail is below 2 guard units, so the sum is within 2^-56
 * units before the final truncation.
 */
static void
exp_neg_fixed(mpz_t out, const mpz_t yn, const mpz_t yd)
{
	mpz_t term, sum, den;

	mpz_inits(term, sum, den, NULL);
	mpz_set_ui(term, 1);
	mpz_mul_2exp(term, term, PREC + 64);
	mpz_set(sum, term);
	for (unsigned long k = 1; mpz_sgn(term) != 0; k++) {
		mpz_mul(term, term, yn);
		mpz_mul_ui(den, yd, k);
		mpz_fdiv_q(term, term, den);
		if (k & 1)
			mpz_sub(sum, sum, term);
		else
			mpz_add(sum, sum, term);
	}
	mpz_fdiv_q_2exp(out, sum, 64);
	mpz_clears(term, sum, den, NULL);
}

static void
tab_free(struct tab *t)
{
	free(t->hot);
	free(t->mid);
	free(t->thr);
	t->hot = NULL;
	t->mid = NULL;
	t->thr = NULL;
}

/* u128 from a nonnegative mpz below 2^128. */
static u128
mpz_get_u128(const mpz_t z)
{
	return (u128)mpz_getlimbn(z, 1) << 64 | (u128)mpz_getlimbn(z, 0);
}

/*
 * Integer weights W[0..T] summing to exactly 2^WBITS for the folded law
 * of N_Z(0, c^2), c^2 = c2 (see noise_fast.h, "Base tables"):
 *   rho(0) = 1, rho(x+1) = rho(x) q_x, q_0 = e1 = exp(-1/(2c^2)),
 *   q_{x+1} = q_x e1^2,
 * all floored to PREC bits, so rho(x) is within 3 x^2 units (the error of
 * q_x grows by at most 6 units a step, that of rho by err(q_x) + 1).
 * W_x = floor(2^WBITS 2 rho(x) / H), H = 1 + 2 sum rho(x), and W_0 takes
 * the remainder (nonnegative: the W_x for x >= 1 sum to less than
 * 2^WBITS 2 sum rho / H < 2^WBITS).  @return 0 or NOISE_E_NOMEM.
 */
static int
weights(u128 *W, uint32_t T, const mpq_t c2)
{
	mpz_t yn, yd, e1, e2, q, rho, tmp, H;
	mp_limb_t *lim;
	u128 rest = (u128)1 << WBITS;
	const size_t nl = PREC / 64;

	if ((lim = calloc((size_t)T + 1, nl * sizeof *lim)) == NULL)
		return NOISE_E_NOMEM;
	mpz_inits(yn, yd, e1, e2, q, rho, tmp, H, NULL);
	/* 1 / (2 c^2) = den / (2 num) */
	mpz_set(yn, mpq_denref(c2));
	mpz_mul_2exp(yd, mpq_numref(c2), 1);
	exp_neg_fixed(e1, yn, yd);
	mpz_mul(e2, e1, e1);
	mpz_fdiv_q_2exp(e2, e2, PREC);
	mpz_set(q, e1);
	mpz_set_ui(rho, 1);
	mpz_mul_2exp(rho, rho, PREC);
	mpz_set(H, rho);
	for (uint32_t x = 1; x <= T; x++) {
		mpz_mul(tmp, rho, q);
		mpz_fdiv_q_2exp(rho, tmp, PREC);
		mpz_mul(tmp, q, e2);
		mpz_fdiv_q_2exp(q, tmp, PREC);
		mpz_addmul_ui(H, rho, 2);
		/* rho(x) < 1 for x >= 1, so it fits in nl limbs. */
		for (size_t i = 0; i < nl; i++)
			lim[x * nl + i] = mpz_getlimbn(rho, (mp_size_t)i);
	}
	for (uint32_t x = 1; x <= T; x++) {
		mpz_import(tmp, nl, -1, sizeof *lim, 0, 0, lim + x * nl);
		mpz_mul_2exp(tmp, tmp, WBITS + 1);
		mpz_fdiv_q(tmp, tmp, H);
		W[x] = mpz_get_u128(tmp);
		rest -= W[x];
	}
	W[0] = rest;
	mpz_clears(yn, yd, e1, e2, q, rho, tmp, H, NULL);
	free(lim);
	return 0;
}

/*
 * Walker's alias table (in Vose's stable form) from integer weights: a
 * light slot (weight below the capacity 2^(WBITS - m)) is topped up from
 * a heavy one, whose weight drops by the same amount.  All in exact
 * integers, so a uniform slot and a uniform u below the capacity give x
 * with probability exactly W[x] / 2^WBITS: the capacities that slots
 * keep for x or hand to x as their alias add up to W[x].  When no light
 * slot remains, every heavy one holds exactly the capacity (the weights
 * sum to n times it).
 */
static int
tab_build(struct tab *t, const mpq_t c2, uint32_t T)
{
	unsigned m = 1;
	size_t n;
	u128 cap, *W = NULL;
	uint32_t *light = NULL, *heavy = NULL, *alias = NULL;
	size_t nl = 0, nh = 0;
	int rc = NOISE_E_NOMEM;

	while (((size_t)1 << m) < (size_t)T + 1)
		m++;
	if (m > MMAX)
		return NOISE_E_RANGE;	/* not reached: widths <= WMAX */
	n = (size_t)1 << m;
	cap = (u128)1 << (WBITS - m);
	t->m = m;
	t->top = CHUNK - 1 - m < TOPMAX ? CHUNK - 1 - m : TOPMAX;
	t->rest = WBITS - m - t->top;
	t->mask = (uint32_t)(n - 1);
	t->T = T;
	t->hot = malloc(n * sizeof *t->hot);
	t->mid = malloc(n * sizeof *t->mid);
	t->thr = malloc(n * sizeof *t->thr);
	W = calloc(n, sizeof *W);
	light = malloc(n * sizeof *light);
	heavy = malloc(n * sizeof *heavy);
	alias = malloc(n * sizeof *alias);
	if (t->hot == NULL || t->mid == NULL || t->thr == NULL || W == NULL ||
	    light == NULL || heavy == NULL || alias == NULL)
		goto out;
	if ((rc = weights(W, T, c2)) != 0)
		goto out;
	for (size_t j = 0; j < n; j++) {
		alias[j] = (uint32_t)j;
		if (W[j] < cap)
			light[nl++] = (uint32_t)j;
		else
			heavy[nh++] = (uint32_t)j;
	}
	while (nl > 0 && nh > 0) {
		uint32_t a = light[--nl], b = heavy[nh - 1];

		t->thr[a] = W[a];
		alias[a] = b;
		W[b] -= cap - W[a];
		if (W[b] < cap) {
			nh--;
			light[nl++] = b;
		}
	}
	if (nl != 0) {		/* impossible with exact weights */
		rc = NOISE_E_RANGE;
		goto out;
	}
	while (nh > 0)
		t->thr[heavy[--nh]] = cap;
	for (size_t j = 0; j < n; j++) {
		u128 low = t->thr[j] & (((u128)1 << t->rest) - 1);

		t->hot[j] = (uint32_t)(t->thr[j] >> t->rest) << 17 |
		    (low != 0 ? HOT_LOW : 0) | alias[j];
		t->mid[j] = (uint16_t)(low >> (t->rest - 16));
	}
	rc = 0;
out:
	free(W);
	free(light);
	free(heavy);
	free(alias);
	if (rc != 0)
		tab_free(t);
	return rc;
}

/* ---- handles ---- */

void
noise_fast_free(struct noise_fast *h)
{
	if (h == NULL)
		return;
	tab_free(&h->inner);
	tab_free(&h->outer);
	free(h);
}

/* Exact outer width^2 b^2 = (s^2 - w2 (1 + ... + K^(2(L-2)))) / K^(2(L-1)),
 * w2 = 9K^2 (or K^2/9 for DEFECT_SMOOTHING). */
static void
outer2_q(mpq_t b2, mpq_t w2, double s, const struct params *p)
{
	mpq_t acc, k2;

	mpq_inits(acc, k2, NULL);
	mpq_set_ui(k2, (unsigned long)(p->k * p->k), 1);
	mpq_set_ui(w2, (unsigned long)(9 * p->k * p->k), 1);
	if (p->defect == NOISE_FAST_DEFECT_SMOOTHING)
		mpq_set_ui(w2, (unsigned long)(p->k * p->k), 9);
	mpq_canonicalize(w2);
	for (int i = 0; i < p->levels - 1; i++) {
		mpq_mul(acc, acc, k2);
		mpq_add(acc, acc, w2);
	}
	mpq_set_d(b2, s);		/* exact */
	mpq_mul(b2, b2, b2);
	mpq_sub(b2, b2, acc);
	for (int i = 0; i < p->levels - 1; i++)
		mpq_div(b2, b2, k2);
	mpq_clears(acc, k2, NULL);
}

static int
fast_new(struct noise_fast **out, double s, int defect)
{
	struct noise_fast *h;
	mpq_t b2, w2;
	int rc;

	*out = NULL;
	if ((h = calloc(1, sizeof *h)) == NULL)
		return NOISE_E_NOMEM;
	if ((rc = choose(s, defect, &h->p)) != 0) {
		free(h);
		return rc;
	}
	mpq_inits(b2, w2, NULL);
	if (h->p.levels == 1) {
		mpq_set_d(b2, s);
		mpq_mul(b2, b2, b2);
	} else {
		outer2_q(b2, w2, s, &h->p);
		rc = tab_build(&h->inner, w2, h->p.t_in);
	}
	if (rc == 0)
		rc = tab_build(&h->outer, b2, h->p.t_out);
	mpq_clears(b2, w2, NULL);
	if (rc != 0) {
		noise_fast_free(h);
		return rc;
	}
	h->tau = bound(&h->p);
	h->simd = simd_supported();
	h->aes = aesctr_hw();
	{
		/* The largest |X| (and partial sum of Horner's rule): every
		 * draw at its table's cut-off. */
		double big = (double)h->p.t_out;

		for (int l = 1; l < h->p.levels; l++)
			big = big * (double)h->p.mult + (double)h->p.t_in;
		h->i32 = big < 0x1p31;
	}
	for (int l = 0; l < h->p.levels && l < 4; l++) {
		for (int i = 0; i < 16; i++) {
			for (int b = 0; b < 3; b++) {
				int v = 3 * (h->p.levels * i + l) + b;

				h->pidx[l][4 * i + b] = (unsigned char)v;
				h->pkeep[l] |= UINT64_C(1) << (4 * i + b);
				if (v >= 128)
					h->phi[l] |= UINT64_C(1) << (4 * i + b);
			}
		}
	}
	*out = h;
	return 0;
}

int
noise_fast_new(struct noise_fast **out, double s)
{
	return fast_new(out, s, NOISE_FAST_DEFECT_NONE);
}

int
noise_fast_new_defective(struct noise_fast **out, double s, int defect)
{
	if (defect < NOISE_FAST_DEFECT_NONE ||
	    defect > NOISE_FAST_DEFECT_SMOOTHING) {
		*out = NULL;
		return NOISE_E_RANGE;
	}
	return fast_new(out, s, defect);
}

int
noise_fast_new_grid(struct noise_fast **out, double sigma)
{
	double gamma = noise_grid(sigma);
	int e, rc;

	*out = NULL;
	if (gamma == 0)
		return NOISE_E_RANGE;
	(void)frexp(gamma, &e);
	e--;				/* gamma = 2^e, a normal double */
	/* The same scale as noise_add_dgauss without NOISE_EXACT_SCALE. */
	if ((rc = noise_fast_new(out, ceil(ldexp(sigma, -e)))) != 0)
		return rc;
	(*out)->gamma = gamma;
	(*out)->inv_gamma = ldexp(1.0, -e);	/* 2^-e: normal, as gamma is
						 * at most 2^(1023 - 24) */
	return 0;
}

int
noise_fast_table_law(const struct noise_fast *h, int outer, long double *p,
    size_t np)
{
	const struct tab *t = outer ? &h->outer : &h->inner;
	size_t n;
	long double cap, w;

	if (t->hot == NULL)
		return NOISE_E_RANGE;
	n = (size_t)1 << t->m;
	cap = ldexpl(1, (int)(WBITS - t->m));
	for (size_t x = 0; x < np; x++)
		p[x] = 0;
	for (size_t j = 0; j < n; j++) {
		size_t a = t->hot[j] & 0xffff;

		w = (long double)t->thr[j] / cap / (long double)n;
		if (j < np)
			p[j] += w;
		if (a < np)
			p[a] += 1.0L / (long double)n - w;
	}
	return (int)t->T + 1;
}

double
noise_fast_tv(const struct noise_fast *h)
{
	return h->tau;
}

void
noise_fast_get_info(const struct noise_fast *h, struct noise_fast_info *info)
{
	info->levels = h->p.levels;
	info->factor = h->p.k;
	info->inner_width = sqrt(h->p.w_in2);
	info->outer_width = sqrt(h->p.w_out2);
	info->table_entries = (h->p.levels > 1 ? (size_t)1 << h->inner.m : 0) +
	    ((size_t)1 << h->outer.m);
	info->tv = h->tau;
	info->gamma = h->gamma;
}

/* ---- sampling ---- */

/* 24 stream bits, little-endian (one unaligned load; the buffer has a
 * spare byte at the end). */
static inline uint32_t
load24(const unsigned char *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof w);
	return le32toh(w) & 0xffffff;
}

/*
 * The top bits of u equal hi = thr[j] >> rest: u < thr[j] iff the rest
 * bits of u, drawn fresh, are below those of thr[j] (lexicographically:
 * 16 bits against mid[j] first, then rest - 16, between 88 and 97).
 */
__attribute__((noinline)) static int64_t
tab_tie(const struct tab *t, uint32_t j, struct rng *r)
{
	uint32_t w = (uint32_t)rng_bits(r, 16), mid = t->mid[j];
	int below;

	if (w != mid)
		below = w < mid;
	else {
		u128 mask = ((u128)1 << (t->rest - 16)) - 1, lo;

		lo = (u128)rng_u64(r) << 64;
		lo |= rng_u64(r);
		below = (lo & mask) < (t->thr[j] & mask);
	}
	return below ? (int64_t)j : (int64_t)(t->hot[j] & 0xffff);
}

/*
 * One draw from 24 uniform bits c: slot j from the low m bits, the sign
 * from bit m, and the top `top` bits of the uniform u on [0, 2^(WBITS -
 * m)) from the highest bits of c.  u < thr iff its top bits are below
 * hi, or equal to it, thr has bits below them and the rest decides
 * (tab_tie, probability at most 2^-top <= 2^-7 per draw; with hi equal
 * and no bits below, u >= thr).  A negative zero is zero: the weights are
 * those of |Z|.
 */
static inline int64_t
tab_draw(const struct tab *t, uint32_t c, struct rng *r)
{
	uint32_t j = c & t->mask, u = c >> (CHUNK - t->top);
	uint32_t e = t->hot[j], hi = e >> 17;
	int64_t v = u < hi ? (int64_t)j : (int64_t)(e & 0xffff), neg;

	if (__builtin_expect(u == hi && (e & HOT_LOW), 0))
		v = tab_tie(t, j, r);
	neg = -(int64_t)((c >> t->m) & 1);
	return (v ^ neg) - neg;
}

/* One sample from its L 24-bit chunks at p: X = Z_0 + K (Z_1 + ... + K
 * Z_{L-1}) by Horner's rule, the outer table first.  The draws are
 * separate statements so that the order in which a rare tie reads the
 * stream is fixed. */
static inline int64_t
draw_one(const struct noise_fast *h, const unsigned char *p, struct rng *r)
{
	int64_t acc = tab_draw(&h->outer, load24(p), r);

	for (int l = 1; l < h->p.levels; l++) {
		p += 3;
		acc = acc * (int64_t)h->p.mult + tab_draw(&h->inner, load24(p),
		    r);
	}
	return acc;
}

/* cnt <= BLK samples from the scalar code: the stream bytes of the whole
 * block first (3 L per sample, in sample order), then each sample from
 * its own bytes, ties reading on from the stream. */
static void
draw_block_scalar(const struct noise_fast *h, struct src *s, int64_t *out,
    size_t cnt)
{
	unsigned char buf[BLK * NOISE_FAST_LMAX * 3 + 16];
	struct rng *r = s->r;
	const unsigned char *p = buf;
	const struct tab *ti = &h->inner, *to = &h->outer;
	int64_t k = (int64_t)h->p.mult;
	int L = h->p.levels;

	src_bytes(s, buf, cnt * (size_t)L * 3);
	switch (L) {
	case 1:
		for (size_t i = 0; i < cnt; i++, p += 3)
			out[i] = tab_draw(to, load24(p), r);
		break;
	case 2:
		for (size_t i = 0; i < cnt; i++, p += 6) {
			int64_t a = tab_draw(to, load24(p), r);

			out[i] = a * k + tab_draw(ti, load24(p + 3), r);
		}
		break;
	case 3:
		for (size_t i = 0; i < cnt; i++, p += 9) {
			int64_t a = tab_draw(to, load24(p), r);

			a = a * k + tab_draw(ti, load24(p + 3), r);
			out[i] = a * k + tab_draw(ti, load24(p + 6), r);
		}
		break;
	default:
		for (size_t i = 0; i < cnt; i++, p += 3 * (size_t)L)
			out[i] = draw_one(h, p, r);
		break;
	}
}

#if NF_HAVE_X86
#define AVX512_FN __attribute__((target("avx512f")))
#define VBMI_FN __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/* Bytes after a block's stream bytes that the vector code may load (its
 * 64-byte loads); they are zeroed first and never decide a value. */
#define SPARE 192

/* One level's draw of 16 lanes from their chunks c (draw16_tables's
 * work on one table, without the conversion), as 32-bit integers; the
 * lanes that tie are or-ed into *tie. */
AVX512_FN static inline __attribute__((always_inline)) __m512i
level32(__m512i c, const uint32_t *hot, __m512i jmask, __m512i shift,
    __m512i sign, __mmask16 *tie)
{
	const __m512i m16 = _mm512_set1_epi32(0xffff);
	const __m512i low = _mm512_set1_epi32((int)HOT_LOW);
	__m512i j = _mm512_and_si512(c, jmask), u = _mm512_srlv_epi32(c, shift);
	__m512i e = _mm512_i32gather_epi32(j, (const void *)hot, 4);
	__m512i hi = _mm512_srli_epi32(e, 17), v;

	*tie |= _mm512_mask_cmpeq_epu32_mask(_mm512_test_epi32_mask(e, low),
	    u, hi);
	v = _mm512_mask_blend_epi32(_mm512_cmplt_epu32_mask(u, hi),
	    _mm512_and_si512(e, m16), j);
	return _mm512_mask_sub_epi32(v, _mm512_test_epi32_mask(c, sign),
	    _mm512_setzero_si512(), v);
}

/*
 * Sixteen samples from their chunks c[l] (lane i: the 24 bits at p + 3 (L
 * i + l) of the block's bytes), as doubles times scale (a power of two):
 * |X| < 2^46, and every partial sum of Horner's rule is an integer of at
 * most that size, so the double arithmetic is exact and gives the integer
 * of the scalar code, scaled exactly.  Each lane does tab_draw's work.
 * @return the lanes where some draw tied: their values are wrong and must
 * be redone by draw_one.
 */
AVX512_FN static inline unsigned
draw16_tables(const struct noise_fast *h, const __m512i *c, double *out,
    double scale)
{
	const __m512d kd = _mm512_set1_pd((double)h->p.mult);
	__m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
	__mmask16 tie = 0;

	for (int l = 0; l < h->p.levels; l++) {
		const struct tab *t = l == 0 ? &h->outer : &h->inner;
		__m512i v = level32(c[l], t->hot, _mm512_set1_epi32((int)t->mask),
		    _mm512_set1_epi32(CHUNK - (int)t->top),
		    _mm512_set1_epi32(1 << t->m), &tie);
		__m512d d0, d1;

		d0 = _mm512_cvtepi32_pd(_mm512_castsi512_si256(v));
		d1 = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(v, 1));
		if (l == 0) {
			acc0 = d0;
			acc1 = d1;
		} else {
			acc0 = _mm512_add_pd(_mm512_mul_pd(acc0, kd), d0);
			acc1 = _mm512_add_pd(_mm512_mul_pd(acc1, kd), d1);
		}
	}
	_mm512_storeu_pd(out, _mm512_mul_pd(acc0, _mm512_set1_pd(scale)));
	_mm512_storeu_pd(out + 8, _mm512_mul_pd(acc1, _mm512_set1_pd(scale)));
	return tie;
}

/* The chunks by gathering 32 bits at p + 3 (L i + l) and masking. */
AVX512_FN static unsigned
draw16_gather(const struct noise_fast *h, const unsigned char *p,
    double *out, double scale)
{
	const int L = h->p.levels;
	const __m512i off = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3,
	    4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(3 *
	    L));
	__m512i c[NOISE_FAST_LMAX];

	for (int l = 0; l < L; l++)
		c[l] = _mm512_and_si512(_mm512_i32gather_epi32(
		    _mm512_add_epi32(off, _mm512_set1_epi32(3 * l)),
		    (const void *)p, 1), _mm512_set1_epi32(0xffffff));
	return draw16_tables(h, c, out, scale);
}

/*
 * draw_groups_vbmi for L = 3 when every |X| is below 2^31 (h->i32: the
 * DP-SGD scales): Horner's rule in 32-bit integers, exact, so the values
 * are those of the double code; one conversion to double at the end.
 */
VBMI_FN static void
draw_groups3_i32(const struct noise_fast *h, const unsigned char *p,
    double *out, size_t ng, double scale, uint16_t *ties)
{
	const __m512i i0 = _mm512_loadu_si512((const void *)h->pidx[0]);
	const __m512i i1 = _mm512_loadu_si512((const void *)h->pidx[1]);
	const __m512i i2 = _mm512_loadu_si512((const void *)h->pidx[2]);
	const __mmask64 k0 = h->pkeep[0], k1 = h->pkeep[1], k2 = h->pkeep[2];
	const __mmask64 s0 = h->phi[0], s1 = h->phi[1], s2 = h->phi[2];
	const uint32_t *ho = h->outer.hot, *hn = h->inner.hot;
	const __m512i jo = _mm512_set1_epi32((int)h->outer.mask);
	const __m512i jn = _mm512_set1_epi32((int)h->inner.mask);
	const __m512i so = _mm512_set1_epi32(CHUNK - (int)h->outer.top);
	const __m512i sn = _mm512_set1_epi32(CHUNK - (int)h->inner.top);
	const __m512i go = _mm512_set1_epi32(1 << h->outer.m);
	const __m512i gn = _mm512_set1_epi32(1 << h->inner.m);
	const __m512i kk = _mm512_set1_epi32((int)h->p.mult);
	const __m512d sc = _mm512_set1_pd(scale);

	for (size_t g = 0; g < ng; g++, p += 144, out += 16) {
		__m512i A = _mm512_loadu_si512((const void *)p);
		__m512i B = _mm512_loadu_si512((const void *)(p + 64));
		__m512i C = _mm512_loadu_si512((const void *)(p + 128));
		__m512i c0, c1, c2, x;
		__mmask16 tie = 0;

		c0 = _mm512_maskz_mov_epi8(k0, _mm512_mask_blend_epi8(s0,
		    _mm512_permutex2var_epi8(A, i0, B),
		    _mm512_permutexvar_epi8(i0, C)));
		c1 = _mm512_maskz_mov_epi8(k1, _mm512_mask_blend_epi8(s1,
		    _mm512_permutex2var_epi8(A, i1, B),
		    _mm512_permutexvar_epi8(i1, C)));
		c2 = _mm512_maskz_mov_epi8(k2, _mm512_mask_blend_epi8(s2,
		    _mm512_permutex2var_epi8(A, i2, B),
		    _mm512_permutexvar_epi8(i2, C)));
		{
			__m512i v0 = level32(c0, ho, jo, so, go, &tie);
			__m512i v1 = level32(c1, hn, jn, sn, gn, &tie);
			__m512i v2 = level32(c2, hn, jn, sn, gn, &tie);
			__m512i kk2 = _mm512_mullo_epi32(kk, kk);

			x = _mm512_add_epi32(_mm512_add_epi32(
			    _mm512_mullo_epi32(v0, kk2),
			    _mm512_mullo_epi32(v1, kk)), v2);
		}
		_mm512_storeu_pd(out, _mm512_mul_pd(_mm512_cvtepi32_pd(
		    _mm512_castsi512_si256(x)), sc));
		_mm512_storeu_pd(out + 8, _mm512_mul_pd(_mm512_cvtepi32_pd(
		    _mm512_extracti64x4_epi64(x, 1)), sc));
		ties[g] = tie;
	}
}

/*
 * ng groups of 16 samples from the 48 L bytes each at p (L <= 4), their
 * chunks taken by byte permutes (byte 4i + b of level l's vector is byte
 * 3 (L i + l) + b for b < 3, and 0), then draw16_tables.  ties[g] gets
 * group g's tie lanes.
 */
VBMI_FN static void
draw_groups_vbmi(const struct noise_fast *h, const unsigned char *p,
    double *out, size_t ng, double scale, uint16_t *ties)
{
	const int L = h->p.levels;
	const size_t step = 48 * (size_t)L;
	__m512i idx[4];
	__mmask64 keep[4], hisel[4];

	for (int l = 0; l < L; l++) {
		idx[l] = _mm512_loadu_si512((const void *)h->pidx[l]);
		keep[l] = h->pkeep[l];
		hisel[l] = h->phi[l];
	}
	for (size_t g = 0; g < ng; g++, p += step, out += 16) {
		__m512i A = _mm512_loadu_si512((const void *)p);
		__m512i B = _mm512_loadu_si512((const void *)(p + 64));
		__m512i C = _mm512_loadu_si512((const void *)(p + 128));
		__m512i c[4];

		for (int l = 0; l < L; l++)
			c[l] = _mm512_maskz_mov_epi8(keep[l],
			    _mm512_mask_blend_epi8(hisel[l],
			    _mm512_permutex2var_epi8(A, idx[l], B),
			    _mm512_permutexvar_epi8(idx[l], C)));
		ties[g] = (uint16_t)draw16_tables(h, c, out, scale);
	}
}
/* cnt <= BLK samples as doubles times scale, the same values and stream
 * use as draw_block_scalar: groups of 16 in order, then each group's
 * tied lanes redone in sample order (a tie reads on from r, whose other
 * reads, the keys of src_bytes, all come before the block's draws, so r
 * is read exactly as by the scalar code), then the last cnt mod 16. */
static void
draw_block_simd(const struct noise_fast *h, struct src *s, double *out,
    size_t cnt, double scale)
{
	struct rng *r = s->r;
	unsigned char buf[BLK * NOISE_FAST_LMAX * 3 + SPARE];
	size_t step = 3 * (size_t)h->p.levels, i = 0;
	int vbmi = h->simd == 2 && h->p.levels <= 4;

	src_bytes(s, buf, cnt * step);
	memset(buf + cnt * step, 0, SPARE);
	if (vbmi) {
		uint16_t ties[BLK / 16];
		size_t ng = cnt / 16;

		if (h->p.levels == 3 && h->i32)
			draw_groups3_i32(h, buf, out, ng, scale, ties);
		else
			draw_groups_vbmi(h, buf, out, ng, scale, ties);
		for (size_t g = 0; g < ng; g++) {
			unsigned tie = ties[g];

			while (tie != 0) {
				size_t b = g * 16 + (size_t)__builtin_ctz(tie);

				out[b] = (double)draw_one(h, buf + b * step, r) *
				    scale;
				tie &= tie - 1;
			}
		}
		i = ng * 16;
	}
	for (; i + 16 <= cnt; i += 16) {
		unsigned tie = draw16_gather(h, buf + i * step, out + i,
		    scale);

		while (tie != 0) {
			unsigned b = (unsigned)__builtin_ctz(tie);

			out[i + b] = (double)draw_one(h, buf + (i + b) * step,
			    r) * scale;
			tie &= tie - 1;
		}
	}
	for (; i < cnt; i++)
		out[i] = (double)draw_one(h, buf + i * step, r) * scale;
}
#endif

/* cnt <= BLK samples into out. */
static void
draw_block(const struct noise_fast *h, struct src *s, int64_t *out,
    size_t cnt)
{
#if NF_HAVE_X86
	if (h->simd) {
		double d[BLK];

		draw_block_simd(h, s, d, cnt, 1.0);
		for (size_t i = 0; i < cnt; i++)
			out[i] = (int64_t)d[i];
		return;
	}
#endif
	draw_block_scalar(h, s, out, cnt);
}

/* cnt <= BLK samples into out as doubles times scale, a power of two
 * (exact: |X| < 2^46, and the product is never subnormal for the scales
 * of grid handles). */
static void
draw_block_f64(const struct noise_fast *h, struct src *s, double *out,
    size_t cnt, double scale)
{
	int64_t k[BLK];

#if NF_HAVE_X86
	if (h->simd) {
		draw_block_simd(h, s, out, cnt, scale);
		return;
	}
#endif
	draw_block_scalar(h, s, k, cnt);
	for (size_t i = 0; i < cnt; i++)
		out[i] = (double)k[i] * scale;
}

/* *tv += n tau, rounded up. */
static void
charge(double *tv, size_t n, double tau)
{
	if (n == 0)
		return;
	*tv = nextafter(*tv + nextafter((double)n * tau, INFINITY), INFINITY);
}

int
noise_fast_sample(const struct noise_fast *h, struct rng *r, int64_t *out,
    size_t n, double *tv_out)
{
	struct src s;

	if (tv_out == NULL)
		return NOISE_E_RANGE;
	src_init(&s, h, r);
	for (size_t i = 0; i < n; i += BLK)
		draw_block(h, &s, out + i, n - i < BLK ? n - i : BLK);
	src_done(&s);
	charge(tv_out, n, h->tau);
	return 0;
}

int
noise_fast_grid_noise(const struct noise_fast *h, struct rng *r, double *z,
    size_t n, double *tv_out)
{
	struct src s;

	if (tv_out == NULL || h->gamma == 0)
		return NOISE_E_RANGE;
	src_init(&s, h, r);
	for (size_t i = 0; i < n; i += BLK) {
		size_t cnt = n - i < BLK ? n - i : BLK;

		/* k gamma: exact (gamma a power of two, |k| < 2^46). */
		draw_block_f64(h, &s, z + i, cnt, h->gamma);
	}
	src_done(&s);
	charge(tv_out, n, h->tau);
	return 0;
}

size_t
noise_fast_test_keys(void)
{
	size_t n = keys_taken;

	keys_taken = 0;
	return n;
}

int
noise_fast_test_aes(struct noise_fast *h, int on)
{
	int prev = h->aes;

	if (on && !aesctr_hw())
		return -1;
	h->aes = on != 0;
	return prev;
}

int
noise_fast_test_simd(struct noise_fast *h, int on)
{
	int prev = h->simd;

	if (on < 0 || on > simd_supported())
		return -1;
	h->simd = on;
	return prev;
}

/* ---- grid noise ---- */

/*
 * round(v) to nearest, ties to even, for |v| < 2^62, whatever the
 * floating-point rounding mode (the sensitivity bound of noise_sens_l2
 * needs nearest rounding): the conversion truncates toward zero, and the
 * fraction d = v - t is exact (a double's fractional part is a double,
 * and so is the difference when it is representable).
 */
static inline int64_t
round_even(double v)
{
	int64_t t = (int64_t)v, odd = t & 1;
	double d = v - (double)t;

	return t + ((d > 0.5) | ((d == 0.5) & odd)) -
	    ((d < -0.5) | ((d == -0.5) & odd));
}

/*
 * The checks of noise_add_dgauss on one block, before anything is drawn:
 * the first offending value decides, NOISE_E_RANGE if it is not finite,
 * else NOISE_E_OVERFLOW when |x / gamma| >= 2^62.  x * 2^-e is the
 * correctly rounded x / gamma, exactly what ldexp gives (both are exact
 * unless the result underflows, when both round the same real number;
 * then |v| < 2^-1022 and the grid point is 0 either way).
 */
static int
grid_check_one(const struct noise_fast *h, double x)
{
	if (!isfinite(x))
		return NOISE_E_RANGE;
	if (!(fabs(x * h->inv_gamma) < 0x1p62))
		return NOISE_E_OVERFLOW;
	return 0;
}

static int
grid_check(const struct noise_fast *h, const double *x, size_t cnt)
{
	int ok = 1, rc = 0;

	for (size_t j = 0; j < cnt; j++)
		ok &= fabs(x[j] * h->inv_gamma) < 0x1p62;	/* not NaN */
	for (size_t j = 0; !ok && rc == 0 && j < cnt; j++)
		rc = grid_check_one(h, x[j]);
	return rc;
}

static int
grid_check_f32(const struct noise_fast *h, const float *x, size_t cnt)
{
	int ok = 1, rc = 0;

	for (size_t j = 0; j < cnt; j++)
		ok &= fabs((double)x[j] * h->inv_gamma) < 0x1p62;
	for (size_t j = 0; !ok && rc == 0 && j < cnt; j++)
		rc = grid_check_one(h, (double)x[j]);
	return rc;
}

/*
 * The noised grid value (round(x / gamma) + k) gamma.  |round| <= 2^62
 * and |k| < 2^46, so the sum cannot overflow; (double)sum * gamma is
 * ldexp((double)sum, e) (exact unless it overflows, and never subnormal
 * for a nonzero integer sum).  A non-finite result is NOISE_E_OVERFLOW.
 */
static inline double
grid_noised(const struct noise_fast *h, double x, int64_t k)
{
	return (double)(round_even(x * h->inv_gamma) + k) * h->gamma;
}

int
noise_fast_add(const struct noise_fast *h, struct rng *r, double *x,
    size_t n, double *tv_out)
{
	int64_t k[BLK];
	struct src s;
	int rc = 0;

	if (tv_out == NULL || h->gamma == 0)
		return NOISE_E_RANGE;
	src_init(&s, h, r);
	for (size_t i = 0; i < n && rc == 0; i += BLK) {
		size_t cnt = n - i < BLK ? n - i : BLK;
		double *xb = x + i;
		int ok = 1;

		if ((rc = grid_check(h, xb, cnt)) != 0)
			break;
		draw_block(h, &s, k, cnt);
		for (size_t j = 0; j < cnt; j++) {
			xb[j] = grid_noised(h, xb[j], k[j]);
			ok &= isfinite(xb[j]) != 0;
		}
		if (!ok)
			rc = NOISE_E_OVERFLOW;
	}
	src_done(&s);
	if (rc != 0)
		return rc;
	charge(tv_out, n, h->tau);
	return 0;
}

int
noise_fast_add_f32(const struct noise_fast *h, struct rng *r, float *x,
    size_t n, double *tv_out)
{
	int64_t k[BLK];
	struct src s;
	int rc = 0;

	if (tv_out == NULL || h->gamma == 0)
		return NOISE_E_RANGE;
	src_init(&s, h, r);
	for (size_t i = 0; i < n && rc == 0; i += BLK) {
		size_t cnt = n - i < BLK ? n - i : BLK;
		float *xb = x + i;
		int ok = 1;

		if ((rc = grid_check_f32(h, xb, cnt)) != 0)
			break;
		draw_block(h, &s, k, cnt);
		for (size_t j = 0; j < cnt; j++) {
			/* Widening is exact; the rounding to float of the
			 * noised value is post-processing. */
			xb[j] = (float)grid_noised(h, (double)xb[j], k[j]);
			ok &= isfinite(xb[j]) != 0;
		}
		if (!ok)
			rc = NOISE_E_OVERFLOW;
	}
	src_done(&s);
	if (rc != 0)
		return rc;
	charge(tv_out, n, h->tau);
	return 0;
}

int
noise_fast_add_dgauss(struct rng *r, double *x, size_t n, double sigma,
    double *tv_out)
{
	struct noise_fast *h;
	int rc;

	if (tv_out == NULL)
		return NOISE_E_RANGE;
	if ((rc = noise_fast_new_grid(&h, sigma)) != 0)
		return rc;
	rc = noise_fast_add(h, r, x, n, tv_out);
	noise_fast_free(h);
	return rc;
}

int
noise_fast_add_dgauss_f32(struct rng *r, float *x, size_t n, double sigma,
    double *tv_out)
{
	struct noise_fast *h;
	int rc;

	if (tv_out == NULL)
		return NOISE_E_RANGE;
	if ((rc = noise_fast_new_grid(&h, sigma)) != 0)
		return rc;
	rc = noise_fast_add_f32(h, r, x, n, tv_out);
	noise_fast_free(h);
	return rc;
}

double
noise_fast_tv_epsilon(double eps)
{
	return eps > NOISE_FAST_EPS_REF ? eps : NOISE_FAST_EPS_REF;
}

double
noise_fast_delta_charge(double eps, double tau_total)
{
	double f;

	if (!isfinite(eps) || !isfinite(tau_total) || eps < 0 || tau_total < 0)
		return NAN;
	if (tau_total == 0)
		return 0;
	/* exp is within an ulp or so; two steps up cover it and the sum,
	 * the product and its rounding take three more. */
	f = nextafter(nextafter(exp(eps), INFINITY), INFINITY);
	f = nextafter(1 + f, INFINITY);
	return nextafter(nextafter(f * tau_total, INFINITY), INFINITY);
}
