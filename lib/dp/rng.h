/*
 * rng.h: the cryptographically secure random number generator of privada.
 *
 * A ChaCha20 keystream (RFC 8439) keyed either from the operating system's
 * entropy (getrandom(2), or /dev/urandom after checking that it is a
 * character device) or, in seeded mode, from a 64-bit seed and a work-item
 * string.  Seeded streams are reproducible and therefore NOT private: a
 * tool using one warns on stderr and marks its output's ledger entry
 * `seeded`.  Nothing here uses the libc rand family.
 *
 * Seeded key derivation (pinned: changing it changes every seeded output):
 *   K0 = LE64(seed) || "privada/rng/v1\0\0" || 8 zero bytes   (32 bytes)
 *   h  = XXH64(work item bytes, without the NUL; XXH64 seed 0)
 *   K  = first 32 bytes of ChaCha20_block(K0, counter 0,
 *        nonce = 4 zero bytes || LE64(h))
 * The stream of a handle, seeded or not, is ChaCha20 under its key K with a
 * 64-bit block counter in state words 12-13 (RFC 8439's 32-bit counter and
 * the first nonce word) and zero in words 14-15, starting at block 0.  So
 * the stream depends only on (seed, work item), never on the thread or the
 * order in which handles are created: give every unit of parallel work
 * its own handle and a work-item name that identifies it ("fold/3",
 * "step/17/layer/2").  Unseeded handles take K from 32 bytes of entropy.
 *
 * Ownership: a struct rng belongs to its creator; it is not thread-safe
 * (one handle per thread) and must not be used in both processes after
 * fork(2).  rng_free wipes the key and accepts NULL.  Nothing here prints,
 * exits or reads the environment.
 */
#ifndef PRIVADA_RNG_H
#define PRIVADA_RNG_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

enum rng_error {
	RNG_OK = PV_OK,
	RNG_E_ENTROPY = PV_E_ENTROPY,	/* no secure randomness (errno says why) */
	RNG_E_NOMEM = PV_E_NOMEM	/* out of memory */
};

struct rng;

/* Message for an rng_error, for a tool's "prog: MESSAGE: strerror(errno)".
 * Both errors are exit status 71 (EX_OSERR) and must be reported before
 * any output is written, e.g.
 *   if ((rc = rng_new(&r)) != 0)
 *       cli_die(EX_OSERR, "%s: %s", rng_strerror(rc), strerror(errno));
 * @return a static string ("cannot get secure randomness from getrandom(2)
 * or /dev/urandom", "out of memory"). */
const char *rng_strerror(int code);

/* Create a generator keyed from 32 bytes of operating-system entropy.
 * getrandom(2) is retried on EINTR and short reads; only if it fails
 * (e.g. ENOSYS) is /dev/urandom read, and only if fstat(2) shows it is a
 * character device.  @return 0 and *out set, or RNG_E_ENTROPY (errno set
 * to the last cause) or RNG_E_NOMEM with *out NULL. */
int rng_new(struct rng **out);

/* Fill buf with n bytes of operating-system entropy, as rng_new keys
 * itself (getrandom(2), else /dev/urandom), whatever any seed: for values
 * that must differ between runs even when the noise is seeded, such as
 * ledger release ids and split ids.  @return 0 or RNG_E_ENTROPY (errno
 * set). */
int rng_entropy(void *buf, size_t n);

/* Create a reproducible generator from seed and work_item (see the
 * derivation above; NULL work_item means "").  @return 0 and *out set, or
 * RNG_E_NOMEM with *out NULL. */
int rng_new_seeded(struct rng **out, uint64_t seed, const char *work_item);

/* Wipe and free (NULL is accepted). */
void rng_free(struct rng *r);

/* 1 if r came from rng_new_seeded (its output is not private), else 0. */
int rng_is_seeded(const struct rng *r);

/* 64 uniform bits (the next 8 keystream bytes, little-endian). */
uint64_t rng_u64(struct rng *r);

/* Fill buf with n keystream bytes. */
void rng_bytes(struct rng *r, void *buf, size_t n);

/* k uniform bits (0 <= k <= 64; larger k is taken as 64) in the low bits.
 * Small requests share one 64-bit draw. */
uint64_t rng_bits(struct rng *r, unsigned k);

/* Uniform integer in [0, n), exactly unbiased (multiply-and-reject:
 * draws are rejected until the product's low word clears 2^w mod n, w =
 * 32 for n <= 2^32, else 64).  n == 0 returns 0. */
uint64_t rng_uniform_below(struct rng *r, uint64_t n);

/* One ChaCha20 block (RFC 8439 section 2.3): 64 bytes of keystream for
 * key (8 words), block counter and nonce (3 words), words taken as the
 * little-endian reading of the RFC's byte strings.  Exposed for the RFC
 * test vectors. */
void rng_chacha20_block(const uint32_t key[8], uint32_t counter,
    const uint32_t nonce[3], unsigned char out[64]);

/* Read n bytes from the device at path, refusing anything that fstat(2)
 * does not show as a character device (errno EINVAL), a read error or
 * end of file (errno EIO).  The /dev/urandom fallback of rng_new; exposed
 * for tests.  @return 0 or RNG_E_ENTROPY. */
int rng_read_device(const char *path, void *buf, size_t n);

/* Test hooks (tests/unit/test_rng.c, tests/helpers/noise-bench.c only):
 * rng_test_blocks writes nblocks consecutive blocks from the 64-bit
 * counter `block` with w14, w15 in words 14-15 through implementation
 * impl (RNG_IMPL_*); rng_test_force makes r use impl from its next refill
 * (impl < 0 keeps it) and, unless block is UINT64_MAX, empties its buffer
 * and moves it to that block.  rng_test_blocks returns 0, rng_test_force
 * the implementation used before; both -1 when impl is unknown or not
 * supported by this build and CPU. */
enum { RNG_IMPL_PORTABLE = 0, RNG_IMPL_AVX2 = 1, RNG_IMPL_AVX512 = 2 };
int rng_test_blocks(int impl, const uint32_t key[8], uint64_t block,
    uint32_t w14, uint32_t w15, unsigned char *out, size_t nblocks);
int rng_test_force(struct rng *r, int impl, uint64_t block);

#endif
