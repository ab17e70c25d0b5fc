/*
 * aesctr.h: AES-256 in counter mode, the bulk random bits of the fast
 * noise sampler (noise_fast.h).
 *
 * AES-256 is FIPS 197; counter mode is NIST SP 800-38A.  The keystream of
 * a key K is the concatenation of the blocks
 *   AES-256_K(BE128(i)),  i = 0, 1, 2, ...
 * (BE128: the 16-byte big-endian integer), i.e. SP 800-38A's CTR mode
 * with the initial counter block all zero and the whole block incremented
 * as a big-endian integer.  Keys are 32 uniform bytes drawn from a
 * struct rng (ChaCha20, rng.h), so a seeded rng gives a reproducible
 * stream and an unseeded one a secret stream.
 *
 * Why a second cipher: on CPUs with the AES instructions a VAES/AVX-512
 * core produces AES-CTR keystream about three times faster than the best
 * ChaCha20 code of rng.c (16 GB/s against 4.9 GB/s on the development
 * machine, one thread), and the noise of a DP-SGD step needs hundreds of
 * thousands of samples.  Its pseudo-randomness is the standard assumption
 * that AES-256 is a pseudo-random permutation, the same kind of
 * assumption as ChaCha20 being a pseudo-random function.
 *
 * The one statistical cost: counter-mode blocks under one key never
 * repeat, while q uniform 16-byte blocks repeat with probability at most
 * q (q - 1) / 2^129.  So even an ideal random permutation gives q blocks
 * within total variation q (q - 1) / 2^129 of uniform bits (the
 * PRP/PRF switching lemma).  A user of this stream must charge that
 * distance as it charges its other TV terms (noise_fast.h does: it
 * re-keys every AESCTR_REKEY blocks and charges the bound per block).
 *
 * Three implementations, chosen per handle when it is keyed: VAES on
 * 512-bit vectors (16 blocks at a time), AES-NI (8 blocks at a time), and
 * portable C with lookup tables (about 90 MB/s: the reference for the
 * tests, and not used by noise_fast, which keeps ChaCha20 on CPUs
 * without AES instructions).  All give the same bytes
 * (tests/unit/test_aesctr.c compares them; tests/aesctr.bats compares
 * them with the python3-cryptography package).  The portable code's
 * table lookups depend on the key and counter: cache timing is not
 * addressed, as for the samplers that use the stream.
 *
 * Ownership: a struct aesctr belongs to its creator (usually on the
 * stack); aesctr_wipe clears its key.  Thread-safe as long as each thread
 * has its own.  Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_AESCTR_H
#define PRIVADA_AESCTR_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

/* Blocks a user should draw under one key before taking a new one: the
 * TV bound per block is then below AESCTR_REKEY / 2^129 = 2^-117. */
#define AESCTR_REKEY 4096u

enum { AESCTR_IMPL_PORTABLE = 0, AESCTR_IMPL_AESNI = 1, AESCTR_IMPL_VAES = 2 };

struct aesctr {
	unsigned char rk[15 * 16];	/* round keys, FIPS 197 byte order */
	uint64_t ctr;			/* next block index */
	int impl;
};

/* Key a with the 32 bytes key (FIPS 197 key expansion) and set its counter
 * to 0, using the fastest implementation this build and CPU support. */
void aesctr_key(struct aesctr *a, const unsigned char key[32]);

/* Key a with 32 bytes drawn from r. */
void aesctr_key_rng(struct aesctr *a, struct rng *r);

/* Write the next nblocks keystream blocks (16 nblocks bytes) to out and
 * advance the counter.  The 64-bit counter cannot wrap in practice (2^68
 * bytes); it is the low half of the 128-bit counter block. */
void aesctr_blocks(struct aesctr *a, unsigned char *out, size_t nblocks);

/* 1 when this build and CPU have AES instructions (AES-NI or VAES), so
 * that the stream is fast; else 0 (only the portable code, about 90
 * MB/s: slower than ChaCha20). */
int aesctr_hw(void);

/* Clear the round keys. */
void aesctr_wipe(struct aesctr *a);

/* One AES-256 block with the portable code: out = AES-256_K(in), rk from
 * aesctr_key.  For the FIPS 197 test vectors. */
void aesctr_encrypt_block(const struct aesctr *a, const unsigned char in[16],
    unsigned char out[16]);

/* Test hook: make a use implementation impl (AESCTR_IMPL_*) from now on.
 * @return the implementation used before, or -1 (nothing changed) when
 * impl is unknown or not supported by this build and CPU. */
int aesctr_test_force(struct aesctr *a, int impl);

#endif
