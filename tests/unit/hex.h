/* hex.h: test vectors written in hex, for the C unit tests. */
#ifndef HEX_H
#define HEX_H
#include <stdio.h>

/* out[0..n-1] from the 2 n hex digits at hex. */
static void
hex2bin(const char *hex, unsigned char *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(hex + 2 * i, "%2x", &v);
		out[i] = (unsigned char)v;
	}
}
#endif
