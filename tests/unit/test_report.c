/*
 * Unit tests of lib/ml/report: a confusion matrix worked by hand
 * (precision, recall, F1, supports, accuracy and macro means), rows
 * without a prediction counted wrong, undefined ratios as 0, and the
 * labels it refuses.
 */
#include <math.h>
#include <stdint.h>

#include "pverr.h"
#include "report.h"
#include "tap.h"

#define EQ(a, b) (fabs((a) - (b)) < 1e-15)

int
main(void)
{
	/* true:  0 0 0 1 1 2 2 2
	 * pred:  0 0 1 1 - 2 0 2	(- : no prediction) */
	const int64_t y[] = { 0, 0, 0, 1, 1, 2, 2, 2 };
	const int32_t p[] = { 0, 0, 1, 1, -1, 2, 0, 2 };
	const int64_t ybad[] = { 0, 3 };
	const int32_t pbad[] = { 0, 3 };
	struct report r;
	double f0 = 2 * (2.0 / 3) * (2.0 / 3) / (4.0 / 3);
	double f1 = 2 * 0.5 * 0.5 / 1.0, f2 = 2 * 1.0 * (2.0 / 3) / (5.0 / 3);

	ok(report_compute(&r, y, p, 8, 3) == 0, "report computed");
	ok(r.n == 8 && r.right == 5 && r.none == 1 && EQ(r.accuracy, 5.0 / 8),
	    "accuracy 5 of 8, one row without a prediction");
	ok(r.cm[0 * 4 + 0] == 2 && r.cm[0 * 4 + 1] == 1 &&
	    r.cm[1 * 4 + 1] == 1 && r.cm[1 * 4 + 3] == 1 &&
	    r.cm[2 * 4 + 0] == 1 && r.cm[2 * 4 + 2] == 2, "confusion matrix");
	ok(r.support[0] == 3 && r.support[1] == 2 && r.support[2] == 3 &&
	    r.pred[0] == 3 && r.pred[1] == 2 && r.pred[2] == 2,
	    "supports count the unpredicted row, columns do not");
	ok(EQ(r.precision[0], 2.0 / 3) && EQ(r.recall[0], 2.0 / 3) &&
	    EQ(r.f1[0], f0), "class 0: 2/3, 2/3");
	ok(EQ(r.precision[1], 0.5) && EQ(r.recall[1], 0.5) && EQ(r.f1[1], f1),
	    "class 1: 1/2, 1/2");
	ok(EQ(r.precision[2], 1) && EQ(r.recall[2], 2.0 / 3) && EQ(r.f1[2], f2),
	    "class 2: 1, 2/3");
	ok(EQ(r.macro_p, (2.0 / 3 + 0.5 + 1) / 3) &&
	    EQ(r.macro_r, (2.0 / 3 + 0.5 + 2.0 / 3) / 3) &&
	    EQ(r.macro_f, (f0 + f1 + f2) / 3), "macro means");
	report_free(&r);
	ok(report_compute(&r, y, p, 8, 4) == 0 && r.precision[3] == 0 &&
	    r.recall[3] == 0 && r.f1[3] == 0, "an empty class scores 0");
	report_free(&r);
	ok(report_compute(&r, y, p, 0, 3) == 0 && r.accuracy == 0,
	    "no rows: accuracy 0");
	report_free(&r);
	ok(report_compute(&r, ybad, p, 2, 3) == PV_E_RANGE,
	    "a true label outside the classes is refused");
	ok(report_compute(&r, y, pbad, 2, 3) == PV_E_RANGE,
	    "a prediction outside the classes is refused");
	ok(report_compute(&r, y, p, 8, 0) == PV_E_RANGE, "no classes refused");
	report_free(&r);
	return tap_done();
}
