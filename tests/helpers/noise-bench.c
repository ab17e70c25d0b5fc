/*
 * noise-bench: print the keystream rate of lib/rng (with each ChaCha20
 * block function this CPU runs) and samples per second of each exact
 * sampler of lib/noise and of the fast sampler of lib/noise_fast (a
 * test-only helper for `make bench`).  Fast-path lines are the best of three runs and
 * also give the thread's CPU time, which other processes on a shared
 * machine disturb less than wall time.
 *
 * usage: noise-bench [count [portable | avx2 | avx512]]
 * (default 1000000 samples per line; the block function of lib/rng used
 * by every line after the keystream ones, default the fastest)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "aesctr.h"
#include "noise.h"
#include "noise_fast.h"
#include "rng.h"

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double
cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void
report(const char *what, long n, double secs, long long sink)
{
	printf("%-44s %12.0f samples/s  (%ld in %.3f s)%s\n", what,
	    (double)n / secs, n, secs, sink == 0x7fffffffffffffffLL ? " " : "");
}

/* Wall and CPU time of a fast-path run (best of three). */
static void
report2(const char *what, long n, double secs, double csecs)
{
	printf("%-44s %12.0f samples/s  (%ld in %.3f s; %.0f/s of CPU)\n",
	    what, (double)n / secs, n, secs, (double)n / csecs);
}

/* Time one fast-path call three times: the best wall and CPU times. */
enum fast_op { OP_SAMPLE, OP_ADD, OP_ADD_F32, OP_ONESHOT };

static void
time_fast(enum fast_op op, const struct noise_fast *h, struct rng *r,
    long n, void *buf, const char *what)
{
	double bw = INFINITY, bc = INFINITY, tv = 0;

	for (int rep = 0; rep < 3; rep++) {
		double t0 = now(), c0 = cpu(), w, c;

		switch (op) {
		case OP_SAMPLE:
			noise_fast_sample(h, r, buf, (size_t)n, &tv);
			break;
		case OP_ADD:
			noise_fast_add(h, r, buf, (size_t)n, &tv);
			break;
		case OP_ADD_F32:
			noise_fast_add_f32(h, r, buf, (size_t)n, &tv);
			break;
		case OP_ONESHOT:
			noise_fast_add_dgauss(r, buf, (size_t)n, 0.37, &tv);
			break;
		}
		w = now() - t0;
		c = cpu() - c0;
		bw = w < bw ? w : bw;
		bc = c < bc ? c : bc;
	}
	report2(what, n, bw, bc);
}

/* Test hook of lib/dp/rng.c (see tests/unit/test_rng.c): force a handle's
 * block function, 0 portable, 1 AVX2, 2 AVX-512; -1 if unsupported. */

/* Keystream bytes per second of rng_bytes (64 KiB reads, best of three)
 * with the handle's default block function, then each one forced. */
static double
bench_keystream(void)
{
	double best = 0;

	static const char *const name[] = { "default", "portable", "AVX2",
	    "AVX-512" };
	static unsigned char buf[1 << 16];
	const int reps = 512;		/* 32 MiB */

	for (int impl = -1; impl < 3; impl++) {
		double bw = INFINITY, bc = INFINITY;
		struct rng *r;
		char what[64];

		if (rng_new(&r) != 0)
			return best;
		if (rng_test_force(r, impl, UINT64_MAX) < 0) {
			rng_free(r);
			continue;
		}
		for (int rep = 0; rep < 3; rep++) {
			double t0 = now(), c0 = cpu(), w, c;

			for (int i = 0; i < reps; i++)
				rng_bytes(r, buf, sizeof buf);
			w = now() - t0;
			c = cpu() - c0;
			bw = w < bw ? w : bw;
			bc = c < bc ? c : bc;
		}
		snprintf(what, sizeof what, "keystream rng_bytes (%s)",
		    name[impl + 1]);
		printf("%-44s %12.0f MB/s       (%d MiB in %.3f s; %.0f MB/s of "
		    "CPU)\n", what, reps * (double)sizeof buf / bw / 1e6,
		    reps / 16, bw, reps * (double)sizeof buf / bc / 1e6);
		if (reps * (double)sizeof buf / bc > best)
			best = reps * (double)sizeof buf / bc;
		rng_free(r);
	}
	return best;
}

/* AES-256-CTR (the fast sampler's bits) with each implementation this
 * CPU runs, in 64 KiB pieces as noise_fast uses it; *best_out gets the
 * fastest rate in bytes per CPU second. */
static void
bench_aes(double *best_out)
{
	static const char *const name[] = { "portable", "AES-NI", "VAES" };
	static unsigned char buf[1 << 16];
	unsigned char key[32] = { 1 };

	*best_out = 0;
	for (int impl = 0; impl < 3; impl++) {
		const int reps = impl == 0 ? 16 : 512;
		double bc = INFINITY;
		struct aesctr a;
		char what[64];

		aesctr_key(&a, key);
		if (aesctr_test_force(&a, impl) < 0)
			continue;
		for (int rep = 0; rep < 3; rep++) {
			double c0 = cpu(), c;

			for (int i = 0; i < reps; i++)
				aesctr_blocks(&a, buf, sizeof buf / 16);
			c = cpu() - c0;
			bc = c < bc ? c : bc;
		}
		snprintf(what, sizeof what, "keystream AES-256-CTR (%s)",
		    name[impl]);
		printf("%-44s %12.0f MB/s of CPU (%d MiB in %.3f s)\n", what,
		    reps * (double)sizeof buf / bc / 1e6, reps / 16, bc);
		if (reps * (double)sizeof buf / bc > *best_out)
			*best_out = reps * (double)sizeof buf / bc;
	}
}

/* The fast sampler as DP-SGD calls it: noise_fast_grid_noise on 203,530
 * values (the MLP 784-256-10) at sigma 0.37, in CPU ns a sample, beside
 * the cost of its 9 bytes a sample from ChaCha20 measured now (the bits
 * it used before). */
static void
bench_grid(struct rng *r, double chacha_bps)
{
	const size_t n = 203530;
	struct noise_fast *h;
	double *z, best = INFINITY, tv = 0;

	if (noise_fast_new_grid(&h, 0.37) != 0 ||
	    (z = malloc(n * sizeof *z)) == NULL)
		return;
	for (int rep = 0; rep < 5; rep++) {
		double c0 = cpu(), c;

		for (int i = 0; i < 50; i++)
			noise_fast_grid_noise(h, r, z, n, &tv);
		c = (cpu() - c0) / (50.0 * (double)n);
		best = c < best ? c : best;
	}
	printf("%-44s %12.2f ns/sample of CPU (ChaCha20 bytes alone for "
	    "it: %.2f ns)\n", "fast grid noise (sigma 0.37, 203530 values)",
	    best * 1e9, 9 / chacha_bps * 1e9);
	free(z);
	noise_fast_free(h);
}

/* The fast sampler at scale s, with its setup time and TV bound. */
static void
bench_fast(struct rng *r, double s, long n, int64_t *z)
{
	struct noise_fast *h;
	struct noise_fast_info in;
	double t0 = now();
	char what[64];

	if (noise_fast_new(&h, s) != 0) {
		printf("noise_fast_new(%g) failed\n", s);
		return;
	}
	noise_fast_get_info(h, &in);
	printf("fast s=2^%-5.2f L=%d K=%-4llu tables %6zu slots, "
	    "setup %.2f ms, TV/sample 2^%.1f\n", log2(s), in.levels,
	    (unsigned long long)in.factor, in.table_entries,
	    (now() - t0) * 1e3, log2(in.tv));
	snprintf(what, sizeof what, "fast dgauss(s 2^%.2f, L=%d)", log2(s),
	    in.levels);
	time_fast(OP_SAMPLE, h, r, n, z, what);
	noise_fast_free(h);
}

int
main(int argc, char **argv)
{
	long n = 1000000;
	struct rng *r;
	struct noise_dg *g;
	long long sink = 0;
	int64_t k;
	double t0, *x;
	char *end;
	int impl = -1;			/* the handle's default */

	if (argc > 1) {
		n = strtol(argv[1], &end, 10);
		if (*end != '\0' || n <= 0 || argc > 3) {
			fprintf(stderr, "usage: noise-bench [count "
			    "[portable | avx2 | avx512]]\n");
			return EX_USAGE;
		}
	}
	if (argc > 2) {
		static const char *const fn[] = { "portable", "avx2", "avx512" };

		for (impl = 0; impl < 3 && strcmp(argv[2], fn[impl]) != 0; impl++)
			continue;
		if (impl == 3) {
			fprintf(stderr, "noise-bench: unknown block function "
			    "'%s'\n", argv[2]);
			return EX_USAGE;
		}
	}
	if (rng_new(&r) != 0) {
		fprintf(stderr, "noise-bench: %s\n", rng_strerror(RNG_E_ENTROPY));
		return EX_OSERR;
	}
	if (rng_test_force(r, impl, UINT64_MAX) < 0) {
		fprintf(stderr, "noise-bench: block function '%s' is not "
		    "supported here\n", argv[2]);
		return EX_USAGE;
	}
	if ((x = calloc((size_t)n, sizeof *x)) == NULL)
		return EX_OSERR;

	{
		double chacha = bench_keystream(), aes;

		bench_aes(&aes);
		printf("%-44s %12.2fx\n", "AES-256-CTR / ChaCha20 (CPU, fastest)",
		    aes / chacha);
		bench_grid(r, chacha);
	}
	t0 = now();
	for (long i = 0; i < n; i++)
		sink += noise_bernoulli(r, 1, 3);
	report("bernoulli(1/3)", n, now() - t0, sink);

	t0 = now();
	for (long i = 0; i < n; i++)
		sink += noise_bernoulli_exp(r, 3, 2);
	report("bernoulli(exp(-3/2))", n, now() - t0, sink);

	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dlaplace(r, 1u << 20, 1, &k);
		sink += k;
	}
	report("dlaplace(scale 2^20)", n, now() - t0, sink);

	noise_dg_new(&g, (uint64_t)1 << 40, 1);
	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dg_sample(g, r, &k);
		sink += k;
	}
	report("dgauss(sigma 2^20, integer: words)", n, now() - t0, sink);
	noise_dg_free(g);

	noise_dg_new_sigma(&g, 1234567.890123);
	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dg_sample(g, r, &k);
		sink += k;
	}
	report("dgauss(sigma 1234567.890123 exact: GMP)", n, now() - t0, sink);
	noise_dg_free(g);

	noise_dg_new(&g, 2, 1);
	t0 = now();
	for (long i = 0; i < n; i++) {
		noise_dg_sample(g, r, &k);
		sink += k;
	}
	report("dgauss(sigma^2 2: GMP)", n, now() - t0, sink);
	noise_dg_free(g);

	t0 = now();
	noise_add_dgauss(r, x, (size_t)n, 0.37, 0);
	report("noise_add_dgauss(sigma 0.37, grid 2^-24)", n, now() - t0, sink);

	t0 = now();
	noise_add_dgauss(r, x, (size_t)n, 0.37, NOISE_EXACT_SCALE);
	report("noise_add_dgauss(.., NOISE_EXACT_SCALE)", n, now() - t0, sink);

	t0 = now();
	noise_add_dlaplace(r, x, (size_t)n, 0.37, 0);
	report("noise_add_dlaplace(b 0.37, grid 2^-24)", n, now() - t0, sink);

	{
		static const double fs[] = { 0x1p10, 0x1p12, 0x1p16, 0x1p20,
			0x1p24, 0x1p25, 0x1p30 };
		int64_t *z = calloc((size_t)n, sizeof *z);
		float *xf = calloc((size_t)n, sizeof *xf);
		struct noise_fast *h;

		if (z == NULL || xf == NULL)
			return EX_OSERR;
		/* Touch the pages first, so page faults are not timed. */
		memset(z, 1, (size_t)n * sizeof *z);
		memset(xf, 0, (size_t)n * sizeof *xf);
		for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
			bench_fast(r, fs[i], n, z);
		time_fast(OP_ONESHOT, NULL, r, n, x,
		    "noise_fast_add_dgauss(sigma 0.37, one-shot)");
		noise_fast_new_grid(&h, 0.37);
		time_fast(OP_ADD, h, r, n, x,
		    "noise_fast_add(sigma 0.37, handle)");
		time_fast(OP_ADD_F32, h, r, n, xf,
		    "noise_fast_add_f32(sigma 0.37, handle)");
		printf("%-44s 2^%.1f\n", "TV bound per value at sigma 0.37",
		    log2(noise_fast_tv(h)));
		noise_fast_free(h);
		free(z);
		free(xf);
	}
	{
		double sc[100];
		size_t pick;
		long m = n / 100;

		for (int i = 0; i < 100; i++)
			sc[i] = i * 0.1;
		t0 = now();
		for (long i = 0; i < m; i++) {
			noise_pf_select(r, sc, 100, 1.0, 1.0, &pick);
			sink += (long long)pick;
		}
		report("pf_select(100 candidates, eps 1)", m, now() - t0, sink);
	}
	free(x);
	rng_free(r);
	return 0;
}
