/*
 * fuzz_reader.c: libFuzzer target for the tensor stream reader.
 *
 * Feeds the input through ts_reader_open and reads every tensor: even
 * tensors row by row into a small buffer (partial chunks), odd ones whole
 * with ts_read_data.  Limits are lowered to 1 MiB so memory stays bounded,
 * and a run stops after 64 MiB of decompressed data (zstd turns 64 KiB of
 * input into gigabytes).  Besides the sanitizers, it checks that every
 * error message names the input and an offset.
 *
 * Random changes to compressed bytes mostly break the frame checksum, so
 * a custom mutator decompresses the input, mutates the stream bytes and
 * compresses them again (with the checksum) three times in four; the
 * fourth time it mutates the compressed bytes, to test the frame layer.
 *
 * Each input is read twice, by the synchronous reader and with read-ahead
 * (ts_reader_set_async): the result, the message and the digest must be
 * the same.
 *
 * Build and run: make fuzz-run FUZZ_SECONDS=60 (clang -fsanitize=fuzzer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "tstream.h"

#define BUF_BYTES 4096
#define LIMIT (UINT64_C(1) << 20)
#define MAX_OUT (UINT64_C(64) << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
    unsigned int seed);

static unsigned char buf[BUF_BYTES];

/* Read the rows of the current tensor a few at a time.
 * @return 0 at its end, 1 to stop the run, or a negative TS_E* code. */
static int64_t
read_rows(struct ts_reader *r)
{
	uint64_t rb = ts_reader_row_bytes(r), max;
	void *dst = buf;
	int64_t n;

	if (rb == 0)
		max = UINT64_MAX;	/* no bytes to copy: take whole chunks */
	else if (rb > BUF_BYTES)
		max = 1, dst = NULL;	/* discard rows that do not fit */
	else
		max = BUF_BYTES / rb < 3 ? BUF_BYTES / rb : 3;
	while ((n = ts_read_rows(r, dst, max)) > 0) {
		if ((uint64_t)n > max)
			__builtin_trap();	/* more rows than asked for */
		if (ts_reader_offset(r) > MAX_OUT)
			return 1;
	}
	return n;
}

/* Read the input once; its result, message and digest into *rcp, msg,
 * *digest. */
static void
read_once(const uint8_t *data, size_t size, int async, int64_t *rcp,
    char *msg, size_t msglen, uint64_t *digest)
{
	FILE *fp;
	struct ts_reader *r;
	struct tensor t;
	int64_t rc;
	uint64_t i = 0;

	/* fmemopen refuses a zero-length buffer. */
	fp = size ? fmemopen((void *)data, size, "rb") : fopen("/dev/null", "rb");
	*rcp = 0;
	msg[0] = '\0';
	*digest = 0;
	if (fp == NULL)
		return;
	if ((r = ts_reader_open(fp, "fuzz")) == NULL)
		__builtin_trap();
	ts_reader_set_limits(r, LIMIT, LIMIT);
	if (async && ts_reader_set_async(r, 1) != 0)
		__builtin_trap();
	while ((rc = ts_read_next(r, &t)) == 1) {
		if (i++ % 2 == 0) {
			tensor_free(&t);
			rc = read_rows(r);
		} else {
			rc = ts_read_data(r, &t);
			tensor_free(&t);
		}
		if (rc != 0)
			break;
	}
	if (rc < 0) {
		const char *msg = ts_reader_errmsg(r);
		/* "fuzz: offset N: what is wrong" */
		if (strncmp(msg, "fuzz: offset ", 13) != 0 ||
		    strcmp(ts_strerror((int)rc), "unknown error") == 0 ||
		    ts_read_next(r, &t) != rc)
			__builtin_trap();
	} else if (rc == 0) {
		(void)ts_reader_digest(r);
		if (ts_reader_tensors(r) != i || ts_read_next(r, &t) != 0)
			__builtin_trap();
		(void)ts_reader_meta(r);
	}
	*rcp = rc;
	snprintf(msg, msglen, "%s", ts_reader_errmsg(r));
	*digest = ts_reader_digest(r);
	ts_reader_close(r);
	fclose(fp);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char m1[1024], m2[1024];
	int64_t rc1, rc2;
	uint64_t d1, d2;

	read_once(data, size, 0, &rc1, m1, sizeof m1, &d1);
	read_once(data, size, 1, &rc2, m2, sizeof m2, &d2);
	if (rc1 != rc2 || strcmp(m1, m2) != 0 || d1 != d2)
		__builtin_trap();
	return 0;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
    unsigned int seed)
{
	static unsigned char raw[1 << 16];
	static ZSTD_CCtx *cz;
	size_t n, z;

	if (seed % 4 == 0)
		return LLVMFuzzerMutate(data, size, max);
	if (cz == NULL) {
		if ((cz = ZSTD_createCCtx()) == NULL ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(cz,
		    ZSTD_c_checksumFlag, 1)))
			__builtin_trap();
	}
	n = ZSTD_decompress(raw, sizeof raw, data, size);
	if (ZSTD_isError(n))
		return LLVMFuzzerMutate(data, size, max);
	n = LLVMFuzzerMutate(raw, n, sizeof raw);
	z = ZSTD_compress2(cz, data, max, raw, n);
	if (ZSTD_isError(z))
		return LLVMFuzzerMutate(data, size, max);
	return z;
}
