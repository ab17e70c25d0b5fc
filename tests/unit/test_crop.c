/*
 * Unit tests of lib/format/crop: the square of a crop written out by hand
 * (the box, its centring with offsets rounded down, the margin, the
 * whole frame when no pixel passes the threshold), the resize of a
 * square to 1x1 as the square's mean, and the range checks.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "crop.h"
#include "tap.h"

int
main(void)
{
	/* 4x5, ink in rows 1-2, columns 1-3 (the 9 below the threshold 10). */
	static const unsigned char img[20] = {
		0, 0, 0, 0, 9,
		0, 50, 0, 70, 0,
		0, 0, 60, 0, 0,
		0, 0, 0, 0, 0,
	};
	static const unsigned char blank[20] = { 0 };
	struct crop *c = NULL;
	const unsigned char *sq;
	uint64_t s = 0;
	double out[4];

	ok(crop_new(&c, 4, 5, 10, 0, 1, 1) == 0, "crop_new 4x5 -> 1x1");
	ok(crop_apply(c, img, out) == 0, "crop_apply");
	sq = crop_square(c, &s);
	/* The box: rows 1-2, columns 1-3 (2x3); side 3; offsets
	 * floor((3 - 2) / 2) = 0 and 0. */
	{
		static const unsigned char w0[9] = {
			50, 0, 70,
			0, 60, 0,
			0, 0, 0,
		};
		ok(s == 3 && memcmp(sq, w0, 9) == 0, "box 2x3 in a 3x3 square "
		    "at (0, 0)");
	}
	ok(fabs(out[0] - (50.0 + 70 + 60) / 9) < 1e-12, "1x1: the square's "
	    "mean");
	crop_free(c);

	/* Threshold 8: the 9 in the corner joins the box: rows 0-2,
	 * columns 1-4 -> side 4, rows offset floor(1 / 2) = 0. */
	ok(crop_new(&c, 4, 5, 8, 0, 2, 2) == 0 && crop_apply(c, img, out) == 0,
	    "threshold 8");
	sq = crop_square(c, &s);
	{
		static const unsigned char w1[16] = {
			0, 0, 0, 9,
			50, 0, 70, 0,
			0, 60, 0, 0,
			0, 0, 0, 0,
		};
		ok(s == 4 && memcmp(sq, w1, 16) == 0, "box 3x4, 4x4 square");
		ok(out[0] == 50 / 4.0 && out[1] == (70 + 9) / 4.0 &&
		    out[2] == 60 / 4.0 && out[3] == 0, "2x2: means of the "
		    "quarters");
	}
	crop_free(c);

	/* Margin 1 and a tall box: one column of ink, rows 1-2. */
	{
		unsigned char col[20] = { 0 };
		col[1 * 5 + 2] = 5;
		col[2 * 5 + 2] = 6;
		ok(crop_new(&c, 4, 5, 0, 1, 3, 3) == 0 &&
		    crop_apply(c, col, out) == 0, "margin 1");
		sq = crop_square(c, &s);
		/* box 2x1 -> side 2 + 2 margins, at row (4 - 2) / 2 = 1,
		 * column floor((4 - 1) / 2) = 1. */
		ok(s == 4, "side 2 + 2 margins");
		ok(sq[1 * 4 + 1] == 5 && sq[2 * 4 + 1] == 6 &&
		    sq[0] == 0 && sq[15] == 0, "box at (1, 1): floor((4 - 1) "
		    "/ 2) = 1");
		crop_free(c);
	}

	/* Nothing above the threshold: the whole frame, padded. */
	ok(crop_new(&c, 4, 5, 0, 0, 1, 1) == 0 &&
	    crop_apply(c, blank, out) == 0, "blank image");
	sq = crop_square(c, &s);
	ok(s == 5 && out[0] == 0, "blank: the whole 4x5 frame in a 5x5 square");
	ok(crop_apply(c, img, out) == 0 && crop_square(c, &s) != NULL && s == 4,
	    "the same crop takes other sides in turn (4: the 9 is ink at 0)");
	crop_free(c);
	crop_free(NULL);

	ok(crop_new(&c, 0, 5, 0, 0, 1, 1) == PV_E_RANGE && c == NULL,
	    "zero side: PV_E_RANGE");
	ok(crop_new(&c, 4, 5, 0, 0, 0, 1) == PV_E_RANGE, "zero target side");
	ok(crop_new(&c, 4, 5, 0, CROP_MAX_MARGIN + 1, 1, 1) == PV_E_RANGE,
	    "margin above CROP_MAX_MARGIN");
	return tap_done();
}
