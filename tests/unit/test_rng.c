/* Unit tests of the ChaCha20 generator: RFC 8439 vectors, seeding,
 * seeded-stream derivation, and uniformity of the integer outputs. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rng.h"
#include "stat.h"
#include "tap.h"
#include "tstream.h"

static void
hex2bin(const char *hex, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (unsigned char)v;
	}
}

/* Words of a 32-byte key or 12-byte nonce given as the RFC's byte string. */
static void
words(const unsigned char *b, uint32_t *w, int n)
{
	for (int i = 0; i < n; i++)
		w[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
		    (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
}

static void
test_rfc(void)
{
	/* RFC 8439 section 2.3.2: key 00..1f, nonce 000000090000004a00000000,
	 * block counter 1. */
	static const char block_hex[] =
	    "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
	    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e";
	/* Section 2.4.2: same key, nonce 000000000000004a00000000, initial
	 * counter 1, the "sunscreen" plaintext (114 bytes). */
	static const char pt[] = "Ladies and Gentlemen of the class of '99: "
	    "If I could offer you only one tip for the future, sunscreen "
	    "would be it.";
	static const char ct_hex[] =
	    "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
	    "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
	    "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
	    "5af90bbf74a35be6b40b8eedf2785e42874d";
	unsigned char kb[32], nb[12], want[114], got[128], ks[64];
	uint32_t key[8], nonce[3];

	for (int i = 0; i < 32; i++)
		kb[i] = (unsigned char)i;
	words(kb, key, 8);
	hex2bin("000000090000004a00000000", nb, 12);
	words(nb, nonce, 3);
	hex2bin(block_hex, want, 64);
	rng_chacha20_block(key, 1, nonce, ks);
	ok(memcmp(ks, want, 64) == 0, "RFC 8439 2.3.2 block test vector");

	hex2bin("000000000000004a00000000", nb, 12);
	words(nb, nonce, 3);
	hex2bin(ct_hex, want, 114);
	for (uint32_t b = 0; b < 2; b++) {
		rng_chacha20_block(key, 1 + b, nonce, ks);
		for (int i = 0; i < 64 && 64 * b + (uint32_t)i < 114; i++)
			got[64 * b + (uint32_t)i] = (unsigned char)(pt[64 * b + (uint32_t)i] ^ ks[i]);
	}
	ok(sizeof pt - 1 == 114 && memcmp(got, want, 114) == 0,
	    "RFC 8439 2.4.2 encryption test vector");
}

/* The seeded stream recomputed from the documented derivation with the
 * (RFC-tested) block function and XXH64. */
static void
test_seeded_derivation(void)
{
	uint64_t seed = UINT64_C(0x0123456789abcdef);
	const char *item = "fold/3";
	unsigned char k0[32] = { 0 }, blk[64], want[3000], got[3000];
	uint32_t key0[8], key[8], nonce[3];
	struct ts_xxh64 h;
	struct rng *r;
	uint64_t d;
	int same;

	for (int i = 0; i < 8; i++)
		k0[i] = (unsigned char)(seed >> (8 * i));
	memcpy(k0 + 8, "privada/rng/v1", 14);
	words(k0, key0, 8);
	ts_xxh64_init(&h, 0);
	ts_xxh64_update(&h, item, strlen(item));
	d = ts_xxh64_final(&h);
	nonce[0] = 0;
	nonce[1] = (uint32_t)d;
	nonce[2] = (uint32_t)(d >> 32);
	rng_chacha20_block(key0, 0, nonce, blk);
	words(blk, key, 8);
	for (uint32_t b = 0; 64 * b < sizeof want; b++) {
		uint32_t z[3] = { 0, 0, 0 };

		rng_chacha20_block(key, b, z, blk);
		memcpy(want + 64 * b, blk,
		    sizeof want - 64 * b < 64 ? sizeof want - 64 * b : 64);
	}
	ok(rng_new_seeded(&r, seed, item) == 0 && rng_is_seeded(r),
	    "rng_new_seeded succeeds and says so");
	rng_bytes(r, got, 5);
	rng_bytes(r, got + 5, 1500);	/* crosses a refill */
	rng_bytes(r, got + 1505, sizeof got - 1505);
	ok(memcmp(got, want, sizeof got) == 0,
	    "seeded stream is ChaCha20 under the documented derived key");
	rng_free(r);

	/* rng_u64 reads the same stream, little-endian. */
	rng_new_seeded(&r, seed, item);
	same = 1;
	for (int i = 0; i < 300; i++) {
		uint64_t v = rng_u64(r), w = 0;

		for (int j = 7; j >= 0; j--)
			w = w << 8 | want[8 * i + j];
		same &= v == w;
	}
	ok(same, "rng_u64 is the keystream read little-endian");
	rng_free(r);
}

static int
streams_equal(uint64_t s1, const char *i1, uint64_t s2, const char *i2)
{
	struct rng *a, *b;
	int eq = 1;

	rng_new_seeded(&a, s1, i1);
	rng_new_seeded(&b, s2, i2);
	for (int i = 0; i < 64; i++)
		eq &= rng_u64(a) == rng_u64(b);
	rng_free(a);
	rng_free(b);
	return eq;
}

static void
test_seeding(void)
{
	struct rng *a, *b;
	int rc, same = 1;
	unsigned char buf[64];
	char path[] = "/tmp/test_rng_XXXXXX";
	int fd;

	ok(streams_equal(7, "x", 7, "x"), "same seed and work item, same stream");
	ok(!streams_equal(7, "x", 7, "y"), "another work item, another stream");
	ok(!streams_equal(7, "x", 8, "x"), "another seed, another stream");
	ok(streams_equal(7, NULL, 7, ""), "a NULL work item is the empty one");

	rc = rng_new(&a);
	ok(rc == 0 && a != NULL && !rng_is_seeded(a),
	    "rng_new gets entropy and is not seeded");
	rc = rng_new(&b);
	for (int i = 0; i < 4; i++)
		same &= rng_u64(a) == rng_u64(b);
	ok(rc == 0 && !same, "two entropy-seeded generators differ");
	rng_free(a);
	rng_free(b);
	rng_free(NULL);

	ok(rng_read_device("/dev/urandom", buf, sizeof buf) == 0,
	    "the /dev/urandom fallback reads a character device");
	fd = mkstemp(path);
	if (write(fd, "not random at all, a planted regular file........"
	    "...............", 64) != 64)
		ok(0, "write temp file");
	close(fd);
	errno = 0;
	rc = rng_read_device(path, buf, sizeof buf);
	ok(rc == RNG_E_ENTROPY && errno == EINVAL,
	    "the fallback refuses a regular file");
	unlink(path);
	errno = 0;
	rc = rng_read_device("/dev/null", buf, sizeof buf);
	ok(rc == RNG_E_ENTROPY && errno == EIO,
	    "the fallback fails on a device at end of file");
	errno = 0;
	rc = rng_read_device("/nonexistent/urandom", buf, sizeof buf);
	ok(rc == RNG_E_ENTROPY && errno == ENOENT,
	    "the fallback fails on a missing device");
	ok(strstr(rng_strerror(RNG_E_ENTROPY), "secure randomness") != NULL &&
	    strcmp(rng_strerror(RNG_E_NOMEM), "out of memory") == 0,
	    "rng_strerror names the errors");
}

/*
 * Uniformity in thirds of [0, n) for n = 3 * 2^61 (64-bit path) and
 * n = 3 * 2^29 (32-bit path): a plain "x mod n" would put 3/8, 3/8 and
 * 2/8 of the mass in the thirds, which this chi-square test detects.
 */
static void
test_uniform(void)
{
	struct rng *r;
	const long N = 60000;
	uint64_t ns[2] = { 3 * (UINT64_C(1) << 61), 3 * (UINT64_C(1) << 29) };
	long double p3[3] = { 1.0L / 3, 1.0L / 3, 1.0L / 3 }, p7[7];
	long obs[7];
	int inrange = 1;

	rng_new_seeded(&r, 1, "uniform");
	for (int j = 0; j < 2; j++) {
		memset(obs, 0, sizeof obs);
		for (long i = 0; i < N; i++) {
			uint64_t v = rng_uniform_below(r, ns[j]);

			inrange &= v < ns[j];
			obs[v / (ns[j] / 3)]++;
		}
		ok(inrange && chi2_stat(obs, p3, 3, N) < chi2_crit(2),
		    "rng_uniform_below(%llu) is uniform over thirds (chi2 %.2f < %.2f)",
		    (unsigned long long)ns[j], chi2_stat(obs, p3, 3, N), chi2_crit(2));
	}
	memset(obs, 0, sizeof obs);
	for (int i = 0; i < 7; i++)
		p7[i] = 1.0L / 7;
	for (long i = 0; i < N; i++)
		obs[rng_uniform_below(r, 7)]++;
	ok(chi2_stat(obs, p7, 7, N) < chi2_crit(6),
	    "rng_uniform_below(7) is uniform (chi2 %.2f < %.2f)",
	    chi2_stat(obs, p7, 7, N), chi2_crit(6));
	inrange = 1;
	for (int i = 0; i < 100; i++)
		inrange &= rng_uniform_below(r, 1) == 0 &&
		    rng_uniform_below(r, 0) == 0;
	ok(inrange, "rng_uniform_below(1) and (0) return 0");

	/* Each bit of rng_bits(k) is fair: |z| <= 5 per bit position. */
	{
		long ones[13] = { 0 };
		int fair = 1, small = 1;

		for (long i = 0; i < N; i++) {
			uint64_t v = rng_bits(r, 13);

			small &= v < 8192;
			for (int b = 0; b < 13; b++)
				ones[b] += (long)(v >> b & 1);
		}
		for (int b = 0; b < 13; b++)
			fair &= fabs((ones[b] - N / 2.0) / sqrt(N / 4.0)) <= STAT_Z;
		ok(small && fair, "rng_bits(13) gives 13 fair bits");
		ok(rng_bits(r, 0) == 0, "rng_bits(0) is 0");
	}
	rng_free(r);
}

static void
bench(void)
{
	struct rng *r;
	struct timespec t0, t1;
	static unsigned char buf[1 << 16];
	uint64_t acc = 0;
	double s;
	int reps = 256;		/* 16 MiB */

	rng_new(&r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < reps; i++) {
		rng_bytes(r, buf, sizeof buf);
		acc += buf[i];
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("# rng_bytes: %.0f MB/s (%d)\n", reps * (double)sizeof buf / s / 1e6,
	    (int)(acc & 1));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 2000000; i++)
		acc += rng_u64(r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("# rng_u64: %.1f M/s (%d)\n", 2.0 / s, (int)(acc & 1));
	rng_free(r);
}

int
main(void)
{
	test_rfc();
	test_seeded_derivation();
	test_seeding();
	test_uniform();
	bench();
	return tap_done();
}
