/* Unit tests of the ChaCha20 generator: RFC 8439 vectors, seeding,
 * seeded-stream derivation, and uniformity of the integer outputs. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hex.h"
#include "rng.h"
#include "stat.h"
#include "tap.h"
#include "tstream.h"


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

/*
 * Test hooks of lib/dp/rng.c (not part of rng.h): the block function of one
 * implementation, and forcing a handle's implementation and position.
 */
#define IMPL_PORTABLE 0
#define IMPL_AVX2 1
#define IMPL_AVX512 2
#define NIMPL 3

static const char *const impl_name[NIMPL] = { "portable", "AVX2", "AVX-512" };
/* Whether each implementation runs on this build and CPU (set by main). */
static int avail[NIMPL];

/* Block b of the layout in rng.h through the RFC-tested single-block
 * function: counter word b mod 2^32, first nonce word b >> 32. */
static void
ref_blocks(const uint32_t key[8], uint64_t b, uint32_t w14, uint32_t w15,
    unsigned char *out, size_t nblocks)
{
	for (size_t i = 0; i < nblocks; i++, b++) {
		uint32_t nonce[3] = { (uint32_t)(b >> 32), w14, w15 };

		rng_chacha20_block(key, (uint32_t)b, nonce, out + 64 * i);
	}
}

/*
 * Known answers on each implementation, through the test hook: RFC 8439
 * sections 2.3.2 and 2.4.2 and appendix A.1 (tests 1 and 2), and two
 * blocks either side of the carry from word 12 into word 13, computed
 * with OpenSSL 3.0 (`openssl enc -chacha20`, whose 16-byte IV is the
 * counter and nonce words, and which carries word 12 into word 13):
 * key 03 0a 11 .. (byte i = 7i + 3), IV ffffffff 05000000 00..00.
 */
static void
test_rfc_impl(int impl)
{
	static const char b232_hex[] =
	    "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
	    "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e";
	static const char pt[] = "Ladies and Gentlemen of the class of '99: "
	    "If I could offer you only one tip for the future, sunscreen "
	    "would be it.";
	static const char ct_hex[] =
	    "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
	    "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
	    "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
	    "5af90bbf74a35be6b40b8eedf2785e42874d";
	static const char a1_hex[] =
	    "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
	    "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
	    "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
	    "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f";
	static const char carry_hex[] =
	    "b4e71553fb63b85aef557b821058c72c6a574140515a3519252e03cbde6ecb26"
	    "2454ecb060e83aca9548dfe91a82065635d89d342aed8f06e0b5dd3705cd92e0"
	    "d9335624fabce741eca3356fdf532c4ce2e9e479c06b90eba38b695ddc2d0fd2"
	    "5f145d4cb1f504dda074299153147ce16332ba9e7ee8566614bac18d2d679102";
	const char *name = impl_name[impl];
	unsigned char kb[32], want[128], got[8 * 64], ct[114];
	uint32_t key[8], zero[8] = { 0 };
	int good;

	if (!avail[impl]) {
		for (int i = 0; i < 5; i++)
			ok(1, "# SKIP %s path: not supported here", name);
		return;
	}
	for (int i = 0; i < 32; i++)
		kb[i] = (unsigned char)i;
	words(kb, key, 8);
	/* 2.3.2: counter 1, nonce 00000009 0000004a 00000000. */
	hex2bin(b232_hex, want, 64);
	good = rng_test_blocks(impl, key, 1 | UINT64_C(0x09000000) << 32,
	    0x4a000000, 0, got, 1) == 0;
	ok(good && memcmp(got, want, 64) == 0,
	    "%s path: RFC 8439 2.3.2 block test vector", name);
	/* 2.4.2: counters 1 and 2, nonce 00000000 0000004a 00000000. */
	hex2bin(ct_hex, want, 114);
	good = rng_test_blocks(impl, key, 1, 0x4a000000, 0, got, 2) == 0;
	for (int i = 0; i < 114; i++)
		ct[i] = (unsigned char)(pt[i] ^ got[i]);
	ok(good && memcmp(ct, want, 114) == 0,
	    "%s path: RFC 8439 2.4.2 encryption test vector", name);
	hex2bin(a1_hex, want, 128);
	good = rng_test_blocks(impl, zero, 0, 0, 0, got, 2) == 0;
	ok(good && memcmp(got, want, 128) == 0,
	    "%s path: RFC 8439 A.1 keystream tests 1 and 2", name);
	for (int i = 0; i < 32; i++)
		kb[i] = (unsigned char)(7 * i + 3);
	words(kb, key, 8);
	hex2bin(carry_hex, want, 128);
	/* Lanes 2 and 3 of eight blocks from 0x5fffffffd, then alone. */
	good = rng_test_blocks(impl, key, UINT64_C(0x5fffffffd), 0, 0, got,
	    8) == 0;
	ok(good && memcmp(got + 128, want, 128) == 0,
	    "%s path: counter carry into word 13 (OpenSSL known answer, "
	    "blocks 2-3 of a batch)", name);
	good = rng_test_blocks(impl, key, UINT64_C(0x5ffffffff), 0, 0, got,
	    2) == 0;
	ok(good && memcmp(got, want, 128) == 0,
	    "%s path: counter carry into word 13 (blocks 0-1)", name);
}

/* A splitmix64 step: the test's own source of parameters, independent of
 * the generator under test. */
static uint64_t
mix(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/*
 * Every implementation against the single-block reference for many keys,
 * counters (around 0, every carry of word 12 into word 13 that a batch of
 * 8 or 16 can straddle, and the wrap of the 64-bit counter), extra words
 * and lengths of 1 to 40 blocks.
 */
static void
test_impl_blocks(void)
{
	static const uint64_t base[] = { 0, UINT64_C(1) << 32,
	    UINT64_C(2) << 32, UINT64_C(0x7fffffff) << 32,
	    UINT64_C(0xffffffff) << 32, 0 /* wrap of 2^64 */ };
	static unsigned char want[40 * 64], got[40 * 64];
	uint64_t st = 42;
	int same[NIMPL] = { 1, 1, 1 }, trials = 0, straddle = 0;

	for (int t = 0; t < 600; t++) {
		uint32_t key[8], w14 = 0, w15 = 0;
		uint64_t b = base[t % 6] - 20 + mix(&st) % 24;
		size_t n = 1 + (size_t)(mix(&st) % 40);

		if (t % 10 == 0)
			b = mix(&st);
		for (int i = 0; i < 8; i++)
			key[i] = (uint32_t)mix(&st);
		if (t % 3 == 0) {
			w14 = (uint32_t)mix(&st);
			w15 = (uint32_t)mix(&st);
		}
		ref_blocks(key, b, w14, w15, want, n);
		for (int impl = 0; impl < NIMPL; impl++)
			if (avail[impl])
				same[impl] &= rng_test_blocks(impl, key, b, w14,
				    w15, got, n) == 0 &&
				    memcmp(got, want, 64 * n) == 0;
		straddle += (uint32_t)b > (uint32_t)(b + n - 1);
		trials++;
	}
	for (int impl = 0; impl < NIMPL; impl++) {
		if (!avail[impl])
			ok(1, "# SKIP %s blocks: not supported here",
			    impl_name[impl]);
		else
			ok(same[impl] && straddle > 200,
			    "%s blocks equal the reference (%d keys and "
			    "counters, 1-40 blocks, %d across a word-13 carry)",
			    impl_name[impl], trials, straddle);
	}
	ok(rng_test_blocks(NIMPL, (const uint32_t[8]){ 0 }, 0, 0, 0, got, 1) ==
	    -1 && rng_test_blocks(-1, (const uint32_t[8]){ 0 }, 0, 0, 0, got,
	    1) == -1, "the test hook refuses an unknown implementation");
}

/* Read a stream with a mix of calls chosen by pattern seed ps, logging
 * every output into log (at most cap bytes); @return bytes logged. */
static size_t
read_mixed(struct rng *r, uint64_t ps, unsigned char *log, size_t cap)
{
	static const size_t lens[] = { 1, 3, 5, 7, 8, 63, 64, 65, 200, 1000,
	    1023, 1024, 1025, 2048, 2304, 3000, 5121 };
	size_t at = 0;

	while (at + 6000 < cap) {
		uint64_t op = mix(&ps), v;

		switch (op % 5) {
		case 0:
		case 1: {
			size_t n = lens[(op >> 8) % (sizeof lens / sizeof lens[0])];

			rng_bytes(r, log + at, n);
			at += n;
			continue;
		}
		case 2:
			v = rng_u64(r);
			break;
		case 3:
			v = rng_bits(r, (unsigned)((op >> 8) % 65));
			break;
		default:
			v = rng_uniform_below(r, (op >> 8) % 1000 + 1);
			break;
		}
		memcpy(log + at, &v, 8);
		at += 8;
	}
	return at;
}

/* The key of a seeded handle, from the derivation documented in rng.h. */
static void
derived_key(uint64_t seed, const char *item, uint32_t key[8])
{
	unsigned char k0[32] = { 0 }, blk[64];
	uint32_t key0[8], nonce[3];
	struct ts_xxh64 h;
	uint64_t d;

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
}

/*
 * Handles: a new handle uses the fastest implementation available.
 * Forced to each implementation, at block counters whose refills
 * straddle the carry into word 13, a handle gives the same values as the
 * portable one through every call, and its bytes, read in pieces that
 * take both the buffered and the whole-buffer paths of rng_bytes, equal
 * the reference blocks.
 */
static void
test_impl_handles(void)
{
	static const uint64_t starts[] = { 0, 5, UINT64_C(0xfffffff0),
	    UINT64_C(0xfffffff8), UINT64_C(0xfffffffb),
	    UINT64_C(0x3ffffffe7) };
	static const size_t pieces[] = { 5, 1019, 1024, 3, 2048, 4096, 1,
	    1500, 3072, 700, 5000 };
	enum { NS = sizeof starts / sizeof starts[0] };
	static unsigned char la[1 << 17], lb[1 << 17], want[1 << 17];
	struct rng *a, *b;
	int best = 0, same[NIMPL] = { 1, 1, 1 }, refok[NIMPL] = { 1, 1, 1 };
	int cases = 0;
	size_t total = 0, nref = 0;

	for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
		nref += pieces[i];
	for (int impl = 0; impl < NIMPL; impl++)
		if (avail[impl])
			best = impl;
	rng_new_seeded(&a, 9, "impl");
	ok(rng_test_force(a, -1, UINT64_MAX) == best,
	    "new handles use the %s path", impl_name[best]);
	rng_free(a);

	for (int s = 0; s < 4; s++) {
		for (size_t k = 0; k < NS; k++) {
			uint64_t seed = (uint64_t)s * 1000003, ps = (uint64_t)s * NS + k;
			char item[32];
			uint32_t key[8];
			size_t na, nb;

			snprintf(item, sizeof item, "impl/%d", s);
			rng_new_seeded(&a, seed, item);
			rng_test_force(a, IMPL_PORTABLE, starts[k]);
			na = read_mixed(a, ps, la, sizeof la);
			rng_free(a);
			total += na;
			for (int impl = 1; impl < NIMPL; impl++) {
				if (!avail[impl])
					continue;
				rng_new_seeded(&b, seed, item);
				rng_test_force(b, impl, starts[k]);
				nb = read_mixed(b, ps, lb, sizeof lb);
				same[impl] &= na == nb && memcmp(la, lb, na) == 0;
				rng_free(b);
			}

			derived_key(seed, item, key);
			ref_blocks(key, starts[k], 0, 0, want, (nref + 63) / 64);
			for (int impl = 0; impl < NIMPL; impl++) {
				size_t at = 0;

				if (!avail[impl])
					continue;
				rng_new_seeded(&a, seed, item);
				rng_test_force(a, impl, starts[k]);
				for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
					rng_bytes(a, la + at, pieces[i]);
					at += pieces[i];
				}
				refok[impl] &= memcmp(la, want, nref) == 0;
				rng_free(a);
			}
			cases++;
		}
	}
	for (int impl = 0; impl < NIMPL; impl++) {
		if (!avail[impl]) {
			ok(1, "# SKIP %s handles: not supported here",
			    impl_name[impl]);
			if (impl > 0)
				ok(1, "# SKIP %s handles: not supported here",
				    impl_name[impl]);
			continue;
		}
		ok(refok[impl], "%s handles read the reference blocks (%d "
		    "streams of %zu bytes, counters across the word-13 carry)",
		    impl_name[impl], cases, nref);
		if (impl > 0)
			ok(same[impl], "%s and portable handles agree through "
			    "rng_bytes, rng_u64, rng_bits and rng_uniform_below "
			    "(%d streams, %zu bytes each)", impl_name[impl],
			    cases, total / (size_t)cases);
	}
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
bench(int impl)
{
	struct rng *r;
	struct timespec t0, t1;
	static unsigned char buf[1 << 16];
	uint64_t acc = 0;
	double s;
	int reps = 256;		/* 16 MiB */

	rng_new(&r);
	rng_test_force(r, impl, UINT64_MAX);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < reps; i++) {
		rng_bytes(r, buf, sizeof buf);
		acc += buf[i];
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("# %s rng_bytes: %.0f MB/s (%d)\n", impl_name[impl], reps * (double)sizeof buf / s / 1e6,
	    (int)(acc & 1));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 2000000; i++)
		acc += rng_u64(r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("# %s rng_u64: %.1f M/s (%d)\n", impl_name[impl], 2.0 / s, (int)(acc & 1));
	rng_free(r);
}

int
main(void)
{
	unsigned char probe[64];

	for (int impl = 0; impl < NIMPL; impl++) {
		avail[impl] = rng_test_blocks(impl, (const uint32_t[8]){ 0 }, 0,
		    0, 0, probe, 1) == 0;
		printf("# %s path: %s\n", impl_name[impl],
		    avail[impl] ? "available" : "not available");
	}
#if !defined(PRIVADA_NO_SIMD) && defined(__GNUC__) && \
    (defined(__x86_64__) || defined(__i386__))
	ok(avail[IMPL_PORTABLE] &&
	    avail[IMPL_AVX2] == (__builtin_cpu_supports("avx2") != 0) &&
	    avail[IMPL_AVX512] == (__builtin_cpu_supports("avx512f") != 0),
	    "the vector paths run exactly where the CPU has AVX2 and AVX-512F");
#else
	ok(avail[IMPL_PORTABLE] && !avail[IMPL_AVX2] && !avail[IMPL_AVX512],
	    "only the portable path is built (PRIVADA_NO_SIMD or not x86)");
#endif
	test_rfc();
	for (int impl = 0; impl < NIMPL; impl++)
		test_rfc_impl(impl);
	test_impl_blocks();
	test_impl_handles();
	test_seeded_derivation();
	test_seeding();
	test_uniform();
	for (int impl = 0; impl < NIMPL; impl++)
		if (avail[impl])
			bench(impl);
	return tap_done();
}
