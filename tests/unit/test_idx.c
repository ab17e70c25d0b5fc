/*
 * Unit tests of lib/format/idx: IDX headers (good ones of 1 to 4
 * dimensions, each refusal with its offset), and the area-averaging
 * resize against a brute-force computation on a fine grid (each source
 * pixel cut into th x tw sub-cells, each target pixel the mean of the
 * h x w sub-cells it covers), plus invariants: a constant image stays
 * constant, the same size is the identity, 2x2 blocks average.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idx.h"
#include "tap.h"

static int
hdr(const unsigned char *b, size_t n, struct idx_header *x, char *msg)
{
	FILE *fp = fmemopen((void *)(uintptr_t)b, n, "rb");
	int rc = idx_read_header(fp, x, msg);

	fclose(fp);
	return rc;
}

/* Brute force on the fine grid of (h*th) x (w*tw) sub-cells. */
static void
brute(const unsigned char *pix, uint64_t h, uint64_t w, uint64_t th,
    uint64_t tw, double *out)
{
	for (uint64_t i = 0; i < th; i++)
		for (uint64_t j = 0; j < tw; j++) {
			double s = 0;
			/* target (i, j) covers fine rows [i*h, (i+1)*h) and
			 * fine columns [j*w, (j+1)*w); fine row f lies in
			 * source row f / th. */
			for (uint64_t fr = i * h; fr < (i + 1) * h; fr++)
				for (uint64_t fc = j * w; fc < (j + 1) * w; fc++)
					s += pix[(fr / th) * w + fc / tw];
			out[i * tw + j] = s / (double)(h * w);
		}
}

static double
maxdiff(const double *a, const double *b, size_t n)
{
	double m = 0;

	for (size_t i = 0; i < n; i++)
		if (fabs(a[i] - b[i]) > m)
			m = fabs(a[i] - b[i]);
	return m;
}

static void
check_resize(uint64_t h, uint64_t w, uint64_t th, uint64_t tw,
    unsigned seed)
{
	unsigned char *pix = malloc(h * w);
	double *got = malloc(th * tw * sizeof *got);
	double *want = malloc(th * tw * sizeof *want);
	struct idx_resize *rs;
	uint32_t x = seed;

	for (uint64_t k = 0; k < h * w; k++) {
		x = x * 1103515245u + 12345u;
		pix[k] = (unsigned char)(x >> 16);
	}
	ok(idx_resize_new(&rs, h, w, th, tw) == 0, "resize %llux%llu -> "
	    "%llux%llu: set up", (unsigned long long)h, (unsigned long long)w,
	    (unsigned long long)th, (unsigned long long)tw);
	idx_resize_apply(rs, pix, got);
	brute(pix, h, w, th, tw, want);
	ok(maxdiff(got, want, th * tw) < 1e-9, "resize %llux%llu -> %llux%llu "
	    "equals the fine-grid mean (max diff %g)", (unsigned long long)h,
	    (unsigned long long)w, (unsigned long long)th,
	    (unsigned long long)tw, maxdiff(got, want, th * tw));
	idx_resize_free(rs);
	free(pix);
	free(got);
	free(want);
}

int
main(void)
{
	static const unsigned char mnist[] = {
		0, 0, 8, 3, 0, 0, 0xea, 0x60, 0, 0, 0, 28, 0, 0, 0, 28
	};
	static const unsigned char labels[] = { 0, 0, 8, 1, 0, 0, 0, 9, 7 };
	unsigned char b[32];
	struct idx_header x;
	char msg[IDX_MSG];

	ok(hdr(mnist, sizeof mnist, &x, msg) == 0 && x.ndim == 3 &&
	    x.n == 60000 && x.dims[1] == 28 && x.dims[2] == 28 &&
	    x.elems == 784, "MNIST images: 60000 x 28 x 28, 784 bytes each");
	{
		FILE *fp = fmemopen((void *)(uintptr_t)labels, sizeof labels,
		    "rb");
		ok(idx_read_header(fp, &x, msg) == 0 && x.ndim == 1 &&
		    x.n == 9 && x.elems == 1 && fgetc(fp) == 7,
		    "labels: 1 dimension, the file left at the first label");
		fclose(fp);
	}
	memcpy(b, mnist, sizeof mnist);
	b[1] = 1;
	ok(hdr(b, sizeof mnist, &x, msg) == PV_E_FORMAT &&
	    strcmp(msg, "offset 0: not an IDX file (magic 00 01 08 03)") == 0,
	    "bad magic: %s", msg);
	memcpy(b, mnist, sizeof mnist);
	b[2] = 0x0d;
	ok(hdr(b, sizeof mnist, &x, msg) == PV_E_FORMAT &&
	    strncmp(msg, "offset 2: IDX type 0x0d", 23) == 0,
	    "floats refused at offset 2: %s", msg);
	b[2] = 8;
	b[3] = 5;
	ok(hdr(b, sizeof mnist, &x, msg) == PV_E_FORMAT &&
	    strncmp(msg, "offset 3: IDX with 5 dimensions", 31) == 0,
	    "5 dimensions refused at offset 3");
	b[3] = 0;
	ok(hdr(b, sizeof mnist, &x, msg) == PV_E_FORMAT,
	    "0 dimensions refused");
	ok(hdr(mnist, 3, &x, msg) == PV_E_TRUNCATED &&
	    strcmp(msg, "truncated: no IDX header") == 0, "3 bytes: truncated");
	ok(hdr(mnist, 13, &x, msg) == PV_E_TRUNCATED &&
	    strcmp(msg, "truncated: IDX dimensions") == 0,
	    "dims cut short: truncated");
	{
		/* 2 x 4096 x 4097: one image of 16781312 > 2^24 bytes. */
		static const unsigned char big[] = {
			0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0x10, 0, 0, 0, 0x10, 1
		};
		static const unsigned char edge[] = {
			0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0x10, 0, 0, 0, 0x10, 0
		};
		ok(hdr(big, sizeof big, &x, msg) == PV_E_LIMIT &&
		    strncmp(msg, "offset 12: images of more than 16777216",
		    39) == 0, "an image over 2^24 bytes refused at the dim "
		    "that passes it: %s", msg);
		ok(hdr(edge, sizeof edge, &x, msg) == 0 &&
		    x.elems == IDX_MAX_ELEMS, "an image of exactly 2^24 bytes "
		    "is fine");
	}
	{
		/* 4 dims (N, C, H, W) */
		static const unsigned char four[] = {
			0, 0, 8, 4, 0, 0, 0, 5, 0, 0, 0, 3, 0, 0, 0, 2,
			0, 0, 0, 2
		};
		ok(hdr(four, sizeof four, &x, msg) == 0 && x.ndim == 4 &&
		    x.n == 5 && x.elems == 12, "4 dimensions: 12 bytes an item");
	}

	check_resize(28, 28, 14, 14, 1);
	check_resize(28, 28, 10, 10, 2);
	check_resize(5, 7, 3, 2, 3);
	check_resize(4, 6, 9, 13, 4);	/* upscaling */
	check_resize(1, 9, 1, 4, 5);
	{
		static const unsigned char p[16] = {
			0, 2, 10, 20,
			4, 6, 30, 40,
			1, 1, 100, 100,
			3, 3, 200, 0
		};
		double out[16], want[4] = { 3, 25, 2, 100 };
		struct idx_resize *rs;
		unsigned char c[12];
		int same = 1;

		idx_resize_new(&rs, 4, 4, 2, 2);
		idx_resize_apply(rs, p, out);
		ok(maxdiff(out, want, 4) == 0, "4x4 -> 2x2 averages 2x2 blocks "
		    "exactly");
		idx_resize_free(rs);
		idx_resize_new(&rs, 4, 4, 4, 4);
		idx_resize_apply(rs, p, out);
		for (int i = 0; i < 16; i++)
			same &= out[i] == p[i];
		ok(same, "the same size is the identity");
		idx_resize_free(rs);
		memset(c, 77, sizeof c);
		idx_resize_new(&rs, 3, 4, 5, 3);
		idx_resize_apply(rs, c, out);
		same = 1;
		for (int i = 0; i < 15; i++)
			same &= fabs(out[i] - 77) < 1e-12;
		ok(same, "a constant image stays constant");
		idx_resize_free(rs);
	}
	{
		struct idx_resize *rs;
		ok(idx_resize_new(&rs, 4, 4, 0, 2) == PV_E_RANGE && rs == NULL,
		    "a zero target side is refused");
		idx_resize_free(NULL);
	}
	return tap_done();
}
