/*
 * aesctr-stream: print AES-256-CTR keystream of lib/dp/aesctr in hex, for
 * tests/aesctr.bats to compare with the python3-cryptography package.
 *
 * usage: aesctr-stream KEYHEX NBLOCKS [portable | aesni | vaes]
 * KEYHEX: 64 hex digits.  Prints one line of 32 NBLOCKS hex digits, the
 * blocks 0 .. NBLOCKS-1 of the stream of that key (counter blocks 0, 1,
 * ... big-endian), through the implementation named (default the
 * fastest), drawn in uneven pieces so that the split between the vector
 * code and its tail is exercised.  Exit 77 when the implementation named
 * does not run on this CPU, 64 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>

#include "aesctr.h"

int
main(int argc, char **argv)
{
	static const char *names[] = { "portable", "aesni", "vaes" };
	unsigned char key[32], *out;
	struct aesctr a;
	size_t n, done = 0, piece = 1;
	char *end;

	if (argc < 3 || argc > 4 || strlen(argv[1]) != 64) {
		fprintf(stderr, "usage: aesctr-stream KEYHEX NBLOCKS "
		    "[portable | aesni | vaes]\n");
		return EX_USAGE;
	}
	for (int i = 0; i < 32; i++) {
		unsigned v;

		if (sscanf(argv[1] + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "aesctr-stream: bad key\n");
			return EX_USAGE;
		}
		key[i] = (unsigned char)v;
	}
	n = strtoul(argv[2], &end, 10);
	if (*end != '\0' || n == 0 || n > 1 << 20) {
		fprintf(stderr, "aesctr-stream: bad NBLOCKS\n");
		return EX_USAGE;
	}
	aesctr_key(&a, key);
	if (argc == 4) {
		int impl = -1;

		for (int i = 0; i < 3; i++)
			if (strcmp(argv[3], names[i]) == 0)
				impl = i;
		if (impl < 0) {
			fprintf(stderr, "aesctr-stream: unknown implementation\n");
			return EX_USAGE;
		}
		if (aesctr_test_force(&a, impl) < 0)
			return 77;
	}
	if ((out = malloc(16 * n)) == NULL)
		return EX_OSERR;
	/* Pieces of 1, 2, 3, ... blocks, then 17, 33, ... */
	while (done < n) {
		size_t k = piece < n - done ? piece : n - done;

		aesctr_blocks(&a, out + 16 * done, k);
		done += k;
		piece = piece < 8 ? piece + 1 : 2 * piece + 1;
	}
	for (size_t i = 0; i < 16 * n; i++)
		printf("%02x", out[i]);
	printf("\n");
	aesctr_wipe(&a);
	free(out);
	return 0;
}
