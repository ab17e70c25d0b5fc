/*
 * scatter.h: the 2-D scattering transform of order 2 (Bruna & Mallat
 * 2013, Oyallon & Mallat 2015) with Kymatio's definition: a Morlet filter
 * bank of J scales and L orientations built in space on a grid
 * periodised over 5x5 periods, only the real part of each filter's DFT
 * kept; phi a Gaussian of sigma 0.8 * 2^(J-1) (Kymatio's value); psi
 * j,l of sigma 0.8 * 2^j, xi 3pi/4 / 2^j, slant 4/L, angle
 * (int(L - L/2 - 1) - l) pi / L.  The image is padded by reflection to
 * ((n + 2^J) / 2^J + 1) 2^J on each side, and the coefficients are
 * computed at that size with FFTs (FFTW3, single precision), subsampled
 * by 2^J and unpadded by one coefficient on each side.
 *
 * Channels (Kymatio's order): S0 = x * phi; then S1 for each (j1, l1),
 * j1 major; then S2 = ||x * psi_j1,l1| * psi_j2,l2| * phi for each
 * (j1, l1) and then each (j2 > j1, l2).  One image gives C x H' x W'
 * values, channel major.
 *
 * Ownership: struct scatter owns its filters, FFT plans and per-thread
 * buffers.  Plans are made once by scatter_new (FFTW's planner is not
 * thread-safe, so scatter_new must not run while another thread plans);
 * scatter_run may then use threads.  Output does not depend on the
 * thread count.  Nothing here prints, exits or reads the environment.
 * Errors: PV_E_OPTION (bad J, L, or J too large for the image),
 * PV_E_NOMEM, PV_E_SYS (a thread could not start).
 */
#ifndef PRIVADA_SCATTER_H
#define PRIVADA_SCATTER_H

#include "pverr.h"

#include <stddef.h>

#define SCATTER_MAX_J 8
#define SCATTER_MAX_L 32
#define SCATTER_MAX_THREADS 256
#define SCATTER_GN_EPS 1e-5	/* GroupNorm's epsilon, as PyTorch's */

struct scatter;

/* The transform of h x w images with J scales and L orientations for
 * up to threads threads.  @return 0, PV_E_OPTION (J not in [1,
 * SCATTER_MAX_J], L not in [1, SCATTER_MAX_L], 2^J too large for the
 * image: the padding must be below each side) or PV_E_NOMEM. */
int scatter_new(struct scatter **sp, size_t h, size_t w, int J, int L,
    int threads);
void scatter_free(struct scatter *s);

/* Channels C = 1 + J L + L^2 J (J - 1) / 2, and the output's sides. */
size_t scatter_channels(const struct scatter *s);
size_t scatter_out_h(const struct scatter *s);
size_t scatter_out_w(const struct scatter *s);
/* C H' W': the values of one image. */
size_t scatter_size(const struct scatter *s);
/* The padded sides (the size of the filters in Fourier). */
size_t scatter_pad_h(const struct scatter *s);
size_t scatter_pad_w(const struct scatter *s);

/* The filter in Fourier, real, pad_h x pad_w row major at resolution 0
 * and not scaled by the inverse FFT's 1/n: phi (n = -1) or psi n = j L
 * + l.  For tests.  @return a pointer into s. */
const float *scatter_filter(const struct scatter *s, int n);

/* Transform n images (img: n x h x w, row major) into out (n x
 * scatter_size), with the threads given to scatter_new.  @return 0 or
 * PV_E_SYS. */
int scatter_run(struct scatter *s, const float *img, size_t n,
    double *out);

/* GroupNorm without affine parameters of one transformed image x
 * (c channels of per values each): the channels in g groups of c / g
 * consecutive channels, each group minus its mean, divided by
 * sqrt(biased variance + SCATTER_GN_EPS).  c must be a multiple of g. */
void scatter_group_norm(double *x, size_t c, size_t per, size_t g);

/* The channel-major row x (c channels of per positions: value c' per + p)
 * channel last into out (value p c + c'), as a convolution over the
 * positions reads it; out and x do not overlap. */
void scatter_hwc(const double *x, size_t c, size_t per, double *out);

#endif
