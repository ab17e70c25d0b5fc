/* test_aesctr: AES-256 against FIPS 197 and SP 800-38A vectors, and every
 * implementation against the portable one (tests/aesctr.bats compares the
 * stream with python3-cryptography). */
#include <stdint.h>
#include <string.h>

#include "aesctr.h"
#include "hex.h"
#include "rng.h"
#include "tap.h"


static const char *names[] = { "portable", "AES-NI", "VAES" };

int
main(void)
{
	unsigned char key[32], in[16], want[16], got[16 * 64];
	struct aesctr a;
	struct rng *r;

	/* FIPS 197 appendix C.3. */
	for (int i = 0; i < 32; i++)
		key[i] = (unsigned char)i;
	aesctr_key(&a, key);
	hex2bin("00112233445566778899aabbccddeeff", in, 16);
	hex2bin("8ea2b7ca516745bfeafc49904b496089", want, 16);
	aesctr_encrypt_block(&a, in, got);
	ok(memcmp(got, want, 16) == 0, "FIPS 197 C.3 (AES-256)");

	/* SP 800-38A F.1.5, first block. */
	hex2bin("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
	    key, 32);
	aesctr_key(&a, key);
	hex2bin("6bc1bee22e409f96e93d7e117393172a", in, 16);
	hex2bin("f3eed1bdb5d2a03c064b5a7e3db181f8", want, 16);
	aesctr_encrypt_block(&a, in, got);
	ok(memcmp(got, want, 16) == 0, "SP 800-38A F.1.5 (ECB-AES256)");

	/* The stream is AES(BE128(i)): block 1 of that key is AES(0..01). */
	memset(in, 0, 16);
	in[15] = 1;
	aesctr_encrypt_block(&a, in, want);
	for (int impl = 0; impl < 3; impl++) {
		struct aesctr b;
		int good;

		aesctr_key(&b, key);
		if (aesctr_test_force(&b, impl) < 0) {
			ok(1, "# SKIP %s: not supported here", names[impl]);
			continue;
		}
		aesctr_blocks(&b, got, 2);
		good = memcmp(got + 16, want, 16) == 0;
		aesctr_encrypt_block(&b, (const unsigned char[16]){ 0 }, in);
		ok(good && memcmp(got, in, 16) == 0,
		    "%s: blocks 0 and 1 are AES of the counter blocks",
		    names[impl]);
	}

	/* Every implementation equals the portable code, for random keys,
	 * lengths 1..64 and counters crossing 2^32 and byte carries. */
	rng_new_seeded(&r, 7, "test_aesctr");
	for (int impl = 1; impl < 3; impl++) {
		int same = 1, ran = 0;

		for (int t = 0; t < 200 && same; t++) {
			struct aesctr p, v;
			unsigned char ref[16 * 64];
			size_t n = 1 + (size_t)(rng_u64(r) % 64);
			uint64_t start = t % 3 == 0 ? 0xfffffff0u - (uint64_t)t :
			    t % 3 == 1 ? 0xf8 : rng_u64(r) >> 1;

			rng_bytes(r, key, 32);
			aesctr_key(&p, key);
			aesctr_key(&v, key);
			if (aesctr_test_force(&p, 0) < 0 ||
			    aesctr_test_force(&v, impl) < 0)
				break;
			p.ctr = v.ctr = start;
			aesctr_blocks(&p, ref, n);
			aesctr_blocks(&v, got, n);
			same = memcmp(ref, got, 16 * n) == 0 &&
			    p.ctr == start + n && v.ctr == start + n;
			ran++;
		}
		if (ran == 0)
			ok(1, "# SKIP %s: not supported here", names[impl]);
		else
			ok(same, "%s equals the portable code (%d streams)",
			    names[impl], ran);
	}

	/* Keying from an rng takes 32 of its bytes and nothing else. */
	{
		struct rng *r1, *r2;
		struct aesctr x;

		rng_new_seeded(&r1, 9, "k");
		rng_new_seeded(&r2, 9, "k");
		aesctr_key_rng(&x, r1);
		rng_bytes(r2, key, 32);
		aesctr_key(&a, key);
		ok(memcmp(x.rk, a.rk, sizeof a.rk) == 0 &&
		    rng_u64(r1) == rng_u64(r2),
		    "aesctr_key_rng keys from the next 32 bytes of the rng");
		aesctr_wipe(&x);
		ok(x.rk[0] == 0 && x.rk[200] == 0, "aesctr_wipe clears the key");
		rng_free(r1);
		rng_free(r2);
	}
	rng_free(r);
	return tap_done();
}
