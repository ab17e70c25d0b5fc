/*
 * Unit tests of lib/num/scatter: the filter bank against closed forms
 * (phi's DFT is a sampled Gaussian of height pi / 3.1415, Kymatio's
 * normalisation; every Morlet wavelet has zero mean, and its DFT peaks
 * near its centre frequency), the FFT path against closed forms (a
 * constant image: S0 = c phi^(0), every other channel 0; an image and its
 * scaled copy: coefficients scale alike), shapes and channel counts, the
 * J-too-large refusal, thread-count invariance bit for bit, and
 * GroupNorm against a direct computation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pverr.h"
#include "scatter.h"
#include "tap.h"

static void
test_shapes(void)
{
	struct scatter *s;

	ok(scatter_new(&s, 28, 28, 2, 8, 1) == 0, "28x28 J=2 L=8");
	ok(scatter_channels(s) == 81 && scatter_out_h(s) == 7 &&
	    scatter_out_w(s) == 7 && scatter_size(s) == 3969,
	    "81 channels of 7x7 (Tramer & Boneh's 3,969)");
	ok(scatter_pad_h(s) == 36 && scatter_pad_w(s) == 36, "padded to 36");
	scatter_free(s);
	ok(scatter_new(&s, 28, 20, 3, 4, 1) == 0, "28x20 J=3 L=4");
	ok(scatter_channels(s) == 1 + 12 + 48 && scatter_out_h(s) == 3 &&
	    scatter_out_w(s) == 2, "61 channels of 3x2");
	scatter_free(s);
	ok(scatter_new(&s, 28, 28, 5, 8, 1) == PV_E_OPTION,
	    "2^5 > 28: refused");
	ok(scatter_new(&s, 16, 16, 4, 8, 1) == PV_E_OPTION,
	    "2^4 = 16: padding as large as the side, refused");
	ok(scatter_new(&s, 17, 17, 4, 8, 1) == 0, "17x17 J=4 accepted");
	scatter_free(s);
	ok(scatter_new(&s, 28, 28, 0, 8, 1) == PV_E_OPTION, "J=0 refused");
	ok(scatter_new(&s, 28, 28, 2, 0, 1) == PV_E_OPTION, "L=0 refused");
}

static void
test_filters(void)
{
	struct scatter *s;
	const int J = 2, L = 8;
	double sigma = 0.8 * pow(2, J - 1), worst = 0;
	size_t m, n;
	const float *phi;

	ok(scatter_new(&s, 28, 28, J, L, 1) == 0, "bank");
	m = scatter_pad_h(s);
	n = scatter_pad_w(s);
	phi = scatter_filter(s, -1);
	/* The DFT of exp(-|u|^2 / 2 sigma^2) / (2 * 3.1415 sigma^2) sampled
	 * on Z^2: (pi / 3.1415) exp(-sigma^2 |w|^2 / 2) plus aliases below
	 * exp(-sigma^2 pi^2 / 2) = 7e-6 at sigma 1.6. */
	for (size_t a = 0; a < m; a++)
		for (size_t b = 0; b < n; b++) {
			double wa = 2 * M_PI * (double)(a <= m / 2 ? (long)a :
			    (long)a - (long)m) / (double)m;
			double wb = 2 * M_PI * (double)(b <= n / 2 ? (long)b :
			    (long)b - (long)n) / (double)n;
			double want = M_PI / 3.1415 * exp(-sigma * sigma *
			    (wa * wa + wb * wb) / 2);
			double d = fabs(phi[a * n + b] - want);
			worst = d > worst ? d : worst;
		}
	ok(fabs(phi[0] - M_PI / 3.1415) < 1e-6, "phi^(0) = pi / 3.1415 "
	    "(sum 1 up to Kymatio's 3.1415): %.9f", phi[0]);
	ok(worst < 2e-5, "phi^ is the sampled Gaussian: worst %.3g", worst);
	for (int k = 0; k < J * L; k++) {
		const float *p = scatter_filter(s, k);
		double mx = 0;
		size_t at = 0;
		int j = k / L, l = k % L;
		double theta = ((int)(L - L / 2.0 - 1) - l) * M_PI / L;
		double xi = 0.75 * M_PI / pow(2, j), wa, wb;
		for (size_t i = 0; i < m * n; i++) {
			if (fabs(p[i]) > mx) {
				mx = fabs(p[i]);
				at = i;
			}
		}
		ok(fabs(p[0]) < 1e-6 * mx, "psi %d: zero mean (|psi^(0)| = "
		    "%.3g)", k, fabs(p[0]));
		/* The peak is the centre frequency xi (cos, sin) or its
		 * mirror (only the real part of the DFT is kept), within a
		 * bin and a half. */
		wa = 2 * M_PI * (double)((at / n) <= m / 2 ? (long)(at / n) :
		    (long)(at / n) - (long)m) / (double)m;
		wb = 2 * M_PI * (double)((at % n) <= n / 2 ? (long)(at % n) :
		    (long)(at % n) - (long)n) / (double)n;
		{
			double d1 = hypot(wa - xi * cos(theta),
			    wb - xi * sin(theta));
			double d2 = hypot(wa + xi * cos(theta),
			    wb + xi * sin(theta));
			double bin = 2 * M_PI / (double)m;
			ok((d1 < d2 ? d1 : d2) < 1.5 * bin, "psi %d: peak at "
			    "(%.3f, %.3f), xi %.3f theta %.3f", k, wa, wb, xi,
			    theta);
		}
	}
	scatter_free(s);
}

static void
test_transform(void)
{
	struct scatter *s1, *s2, *s3;
	size_t h = 28, w = 28, d, n = 7;
	float *img = malloc(n * h * w * sizeof *img);
	double *o1, *o2, *o3, worst = 0;
	int same;
	unsigned r = 12345;

	ok(scatter_new(&s1, h, w, 2, 8, 1) == 0 &&
	    scatter_new(&s2, h, w, 2, 8, 2) == 0 &&
	    scatter_new(&s3, h, w, 2, 8, 3) == 0, "1, 2 and 3 threads");
	d = scatter_size(s1);
	o1 = calloc(n * d, sizeof *o1);
	o2 = calloc(n * d, sizeof *o2);
	o3 = calloc(n * d, sizeof *o3);
	/* Image 0: constant 0.5. */
	for (size_t i = 0; i < h * w; i++)
		img[i] = 0.5f;
	for (size_t i = h * w; i < n * h * w; i++) {
		r = r * 1103515245u + 12345u;
		img[i] = (float)((r >> 8) & 0xffff) / 65536.0f;
	}
	/* Image 2 is image 1 times 3. */
	for (size_t i = 0; i < h * w; i++)
		img[2 * h * w + i] = 3 * img[h * w + i];
	ok(scatter_run(s1, img, n, o1) == 0 && scatter_run(s2, img, n, o2) ==
	    0 && scatter_run(s3, img, n, o3) == 0, "run");
	same = memcmp(o1, o2, n * d * sizeof *o1) == 0 &&
	    memcmp(o1, o3, n * d * sizeof *o1) == 0;
	ok(same, "1, 2, 3 threads: the same bits");
	for (size_t i = 0; i < 49; i++) {
		double dd = fabs(o1[i] - 0.5 * M_PI / 3.1415);
		worst = dd > worst ? dd : worst;
	}
	ok(worst < 1e-6, "constant image: S0 = c phi^(0) (worst %.3g)",
	    worst);
	worst = 0;
	for (size_t i = 49; i < d; i++)
		worst = fabs(o1[i]) > worst ? fabs(o1[i]) : worst;
	ok(worst < 1e-6, "constant image: S1 = S2 = 0 (worst %.3g)", worst);
	worst = 0;
	for (size_t i = 0; i < d; i++) {
		double dd = fabs(o1[2 * d + i] - 3 * o1[d + i]);
		worst = dd > worst ? dd : worst;
	}
	ok(worst < 1e-5, "homogeneous of degree 1 (worst %.3g)", worst);
	/* Shrinking the batch changes nothing. */
	ok(scatter_run(s2, img + 3 * h * w, 1, o2) == 0 &&
	    memcmp(o2, o1 + 3 * d, d * sizeof *o2) == 0,
	    "one image alone: the same bits");
	scatter_free(s1);
	scatter_free(s2);
	scatter_free(s3);
	free(img);
	free(o1);
	free(o2);
	free(o3);
}

static void
test_group_norm(void)
{
	double x[12], y[12];
	int good = 1;

	for (int i = 0; i < 12; i++)
		x[i] = y[i] = (i * 7 % 5) + 0.25 * i;
	/* 6 channels of 2 values, 3 groups: groups of 4 values. */
	scatter_group_norm(y, 6, 2, 3);
	for (int g = 0; g < 3; g++) {
		double m = 0, v = 0;
		for (int i = 0; i < 4; i++)
			m += x[4 * g + i] / 4;
		for (int i = 0; i < 4; i++)
			v += (x[4 * g + i] - m) * (x[4 * g + i] - m) / 4;
		for (int i = 0; i < 4; i++)
			if (fabs(y[4 * g + i] - (x[4 * g + i] - m) /
			    sqrt(v + 1e-5)) > 1e-12)
				good = 0;
	}
	ok(good, "GroupNorm: each group standardised with eps 1e-5");
}

int
main(void)
{
	test_shapes();
	test_filters();
	test_transform();
	test_group_norm();
	return tap_done();
}
