/*
 * scatter.c: the 2-D scattering transform (see scatter.h).
 *
 * Every product in Fourier is followed by a "fold": the spectrum at one
 * resolution, multiplied by the filter, is summed over its k x k aliases,
 * which is the spectrum of the spatial product subsampled by k.  The
 * inverse FFT's 1/n is folded into the filters: a filter used on a
 * spectrum of n points is scaled by 1/n.
 */
#include <complex.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "scatter.h"

#define KY_PI 3.1415	/* Kymatio's gabor_2d divides by 2 * 3.1415 ... */
#define PERIODS 2	/* the grid periodised over -2 .. 2 periods */
#define NBUF 6		/* buffers a thread */

struct level {
	size_t h, w, n;
	fftwf_plan fwd, bwd;
};

struct scatter {
	size_t h, w, ph, pw, top, left, oh, ow, c;
	int J, L, threads;
	struct level lv[SCATTER_MAX_J + 1];
	float *phi0, **psi0;		/* resolution 0, unscaled (tests) */
	float *phi[SCATTER_MAX_J];	/* phi at resolution r, scaled */
	float **psi;			/* psi n at resolution r: [n * J + r] */
	fftwf_complex **buf;		/* NBUF buffers of ph pw a thread */
};

/* ---- filters ---- */

/* Kymatio's gabor_2d into g (m x n): exp(-u'Au + i xi (x cos + y sin)),
 * A = R diag(1, slant^2) R' / (2 sigma^2), summed over the periods. */
static void
gabor(double complex *g, size_t m, size_t n, double sigma, double theta,
    double xi, double slant)
{
	double c = cos(theta), s = sin(theta), k = 2 * sigma * sigma;
	double a00 = (c * c + slant * slant * s * s) / k;
	double a01 = (c * s - slant * slant * s * c) / k;
	double a11 = (s * s + slant * slant * c * c) / k;
	double norm = 2 * KY_PI * sigma * sigma / slant;

	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++) {
			double complex v = 0;
			for (int ex = -PERIODS; ex <= PERIODS; ex++)
				for (int ey = -PERIODS; ey <= PERIODS; ey++) {
					double x = (double)i + ex * (double)m;
					double y = (double)j + ey * (double)n;
					v += cexp(-(a00 * x * x + 2 * a01 * x * y +
					    a11 * y * y) + I * xi * (x * c + y * s));
				}
			g[i * n + j] = v / norm;
		}
}

/* The real part of the DFT of g (m x n) into out, in double. */
static int
dft_real(double complex *g, size_t m, size_t n, double *out)
{
	fftw_complex *b = fftw_malloc(m * n * sizeof *b);
	fftw_plan p;

	if (b == NULL)
		return PV_E_NOMEM;
	p = fftw_plan_dft_2d((int)m, (int)n, b, b, FFTW_FORWARD,
	    FFTW_ESTIMATE);
	if (p == NULL) {
		fftw_free(b);
		return PV_E_NOMEM;
	}
	memcpy(b, g, m * n * sizeof *b);
	fftw_execute(p);
	for (size_t i = 0; i < m * n; i++)
		out[i] = creal(b[i]);
	fftw_destroy_plan(p);
	fftw_free(b);
	return 0;
}

/* Kymatio's periodize_filter_fft: f (m x n) with the middle band of
 * frequencies zeroed, summed over its 2^r x 2^r aliases, times scale. */
static void
periodize(const double *f, size_t m, size_t n, int r, double scale,
    float *out)
{
	size_t k = (size_t)1 << r, mr = m / k, nr = n / k;
	size_t sx = (size_t)((double)m / (double)(2 * k));
	size_t lx = (size_t)((double)m * (1 - 1 / (double)k));
	size_t sy = (size_t)((double)n / (double)(2 * k));
	size_t ly = (size_t)((double)n * (1 - 1 / (double)k));

	for (size_t a = 0; a < mr; a++)
		for (size_t b = 0; b < nr; b++) {
			double v = 0;
			for (size_t i = 0; i < k; i++)
				for (size_t j = 0; j < k; j++) {
					size_t x = a + i * mr, y = b + j * nr;
					if ((x >= sx && x < sx + lx) ||
					    (y >= sy && y < sy + ly))
						continue;
					v += f[x * n + y];
				}
			out[a * nr + b] = (float)(v * scale);
		}
}

static float *
falloc(size_t n)
{
	return fftwf_malloc(n * sizeof(float));
}

static int
make_filters(struct scatter *s)
{
	size_t m = s->ph, n = s->pw, mn = m * n;
	double complex *g = malloc(mn * sizeof *g);
	double complex *g0 = malloc(mn * sizeof *g0);
	double *f = malloc(mn * sizeof *f);
	int J = s->J, L = s->L, rc = PV_E_NOMEM;

	if (g == NULL || g0 == NULL || f == NULL)
		goto out;
	/* phi */
	gabor(g, m, n, 0.8 * ldexp(1, J - 1), 0, 0, 1);
	if ((rc = dft_real(g, m, n, f)) != 0)
		goto out;
	rc = PV_E_NOMEM;
	if ((s->phi0 = falloc(mn)) == NULL)
		goto out;
	periodize(f, m, n, 0, 1, s->phi0);
	for (int r = 0; r < J; r++) {
		if ((s->phi[r] = falloc(s->lv[r].n)) == NULL)
			goto out;
		periodize(f, m, n, r, 1 / (double)s->lv[r].n, s->phi[r]);
	}
	/* psi */
	for (int j = 0; j < J; j++)
		for (int l = 0; l < L; l++) {
			int k = j * L + l;
			double sigma = 0.8 * ldexp(1, j);
			double theta = (double)(int)(L - L / 2.0 - 1) - l;
			double xi = 3.0 / 4.0 * M_PI / ldexp(1, j);
			double slant = 4.0 / L;
			double complex kk, sw = 0, sm = 0;
			theta *= M_PI / L;
			gabor(g, m, n, sigma, theta, xi, slant);
			gabor(g0, m, n, sigma, theta, 0, slant);
			for (size_t i = 0; i < mn; i++) {
				sw += g[i];
				sm += g0[i];
			}
			kk = sw / sm;
			for (size_t i = 0; i < mn; i++)
				g[i] -= kk * g0[i];
			if ((rc = dft_real(g, m, n, f)) != 0)
				goto out;
			rc = PV_E_NOMEM;
			if ((s->psi0[k] = falloc(mn)) == NULL)
				goto out;
			periodize(f, m, n, 0, 1, s->psi0[k]);
			for (int r = 0; r <= j; r++) {
				float **p = &s->psi[(size_t)k * (size_t)J +
				    (size_t)r];
				if ((*p = falloc(s->lv[r].n)) == NULL)
					goto out;
				periodize(f, m, n, r, 1 / (double)s->lv[r].n,
				    *p);
			}
		}
	rc = 0;
out:
	free(g);
	free(g0);
	free(f);
	return rc;
}

/* ---- setup ---- */

static size_t
padded(size_t n, int J)
{
	size_t k = (size_t)1 << J;

	return ((n + k) / k + 1) * k;
}

int
scatter_new(struct scatter **sp, size_t h, size_t w, int J, int L,
    int threads)
{
	struct scatter *s;
	size_t nf, nb;
	fftwf_complex *tmp, *tmp2;

	*sp = NULL;
	if (J < 1 || J > SCATTER_MAX_J || L < 1 || L > SCATTER_MAX_L ||
	    threads < 1 || threads > SCATTER_MAX_THREADS || h == 0 ||
	    w == 0 || h > 1 << 14 || w > 1 << 14)
		return PV_E_OPTION;
	if ((s = calloc(1, sizeof *s)) == NULL)
		return PV_E_NOMEM;
	s->h = h;
	s->w = w;
	s->J = J;
	s->L = L;
	s->threads = threads;
	s->ph = padded(h, J);
	s->pw = padded(w, J);
	s->top = (s->ph - h) / 2;
	s->left = (s->pw - w) / 2;
	/* Reflection without repeating the edge reaches n - 1 at most;
	 * at least one coefficient must remain after unpadding (2^J <=
	 * each side, as Kymatio requires). */
	if (s->ph - h - s->top > h - 1 || s->pw - w - s->left > w - 1 ||
	    s->ph >> J < 3 || s->pw >> J < 3) {
		free(s);
		return PV_E_OPTION;
	}
	s->oh = (s->ph >> J) - 2;
	s->ow = (s->pw >> J) - 2;
	s->c = 1 + (size_t)J * (size_t)L + (size_t)L * (size_t)L *
	    (size_t)J * (size_t)(J - 1) / 2;
	nf = (size_t)J * (size_t)L;
	nb = (size_t)threads * NBUF;
	s->psi0 = calloc(nf, sizeof *s->psi0);
	s->psi = calloc(nf * (size_t)J, sizeof *s->psi);
	s->buf = calloc(nb, sizeof *s->buf);
	tmp = fftwf_malloc(s->ph * s->pw * sizeof *tmp);
	tmp2 = fftwf_malloc(s->ph * s->pw * sizeof *tmp2);
	if (s->psi0 == NULL || s->psi == NULL || s->buf == NULL ||
	    tmp == NULL || tmp2 == NULL)
		goto nomem;
	for (int r = 0; r <= J; r++) {
		struct level *v = &s->lv[r];
		v->h = s->ph >> r;
		v->w = s->pw >> r;
		v->n = v->h * v->w;
		/* FFTW_ESTIMATE: the same plan, so the same bits, on every
		 * run; planned out of place, as every execution is (in
		 * place costs copies at sizes not a power of 2). */
		v->fwd = fftwf_plan_dft_2d((int)v->h, (int)v->w, tmp, tmp2,
		    FFTW_FORWARD, FFTW_ESTIMATE);
		v->bwd = fftwf_plan_dft_2d((int)v->h, (int)v->w, tmp, tmp2,
		    FFTW_BACKWARD, FFTW_ESTIMATE);
		if (v->fwd == NULL || v->bwd == NULL)
			goto nomem;
	}
	for (size_t i = 0; i < nb; i++)
		if ((s->buf[i] = fftwf_malloc(s->ph * s->pw *
		    sizeof **s->buf)) == NULL)
			goto nomem;
	if (make_filters(s) != 0)
		goto nomem;
	fftwf_free(tmp);
	fftwf_free(tmp2);
	*sp = s;
	return 0;
nomem:
	fftwf_free(tmp);
	fftwf_free(tmp2);
	scatter_free(s);
	return PV_E_NOMEM;
}

void
scatter_free(struct scatter *s)
{
	size_t nf;

	if (s == NULL)
		return;
	nf = (size_t)s->J * (size_t)s->L;
	for (int r = 0; r <= s->J; r++) {
		if (s->lv[r].fwd)
			fftwf_destroy_plan(s->lv[r].fwd);
		if (s->lv[r].bwd)
			fftwf_destroy_plan(s->lv[r].bwd);
	}
	for (int r = 0; r < s->J; r++)
		fftwf_free(s->phi[r]);
	fftwf_free(s->phi0);
	if (s->psi0)
		for (size_t i = 0; i < nf; i++)
			fftwf_free(s->psi0[i]);
	if (s->psi)
		for (size_t i = 0; i < nf * (size_t)s->J; i++)
			fftwf_free(s->psi[i]);
	if (s->buf)
		for (size_t i = 0; i < (size_t)s->threads * NBUF; i++)
			fftwf_free(s->buf[i]);
	free(s->psi0);
	free(s->psi);
	free(s->buf);
	free(s);
}

size_t scatter_channels(const struct scatter *s) { return s->c; }
size_t scatter_out_h(const struct scatter *s) { return s->oh; }
size_t scatter_out_w(const struct scatter *s) { return s->ow; }
size_t scatter_size(const struct scatter *s) { return s->c * s->oh * s->ow; }
size_t scatter_pad_h(const struct scatter *s) { return s->ph; }
size_t scatter_pad_w(const struct scatter *s) { return s->pw; }

const float *
scatter_filter(const struct scatter *s, int n)
{
	if (n < 0)
		return s->phi0;
	return s->psi0[n];
}

/* ---- the transform ---- */

/* dst (level of src / k) = the k x k aliases of src (level v) times f,
 * summed. */
static void
fold(const fftwf_complex *src, const struct level *v, const float *f,
    size_t k, fftwf_complex *dst)
{
	size_t h = v->h / k, w = v->w / k;

	if (k == 1) {
		for (size_t i = 0; i < v->n; i++)
			dst[i] = src[i] * f[i];
		return;
	}
	memset(dst, 0, h * w * sizeof *dst);
	for (size_t i = 0; i < v->h; i++) {
		fftwf_complex *d = dst + (i % h) * w;
		for (size_t jb = 0; jb < k; jb++) {
			const fftwf_complex *a = src + i * v->w + jb * w;
			const float *b = f + i * v->w + jb * w;
			for (size_t j = 0; j < w; j++)
				d[j] += a[j] * b[j];
		}
	}
}

/* The modulus of x (n points, complex) into y (real, stored as
 * complex). */
static void
modulus(const fftwf_complex *x, fftwf_complex *y, size_t n)
{
	float big = 0;

	/* sqrtf vectorises with -fno-math-errno (Makefile) where cabsf
	 * (hypotf) does not; the rare square beyond FLT_MAX is redone. */
	for (size_t i = 0; i < n; i++) {
		float re = crealf(x[i]), im = cimagf(x[i]), m;
		m = sqrtf(re * re + im * im);
		big = big > m ? big : m;
		y[i] = m;
	}
	if (!(big <= FLT_MAX))
		for (size_t i = 0; i < n; i++)
			y[i] = cabsf(x[i]);
}

/* The real part of the inner oh x ow of e (level J) into out. */
static void
unpad(const struct scatter *s, const fftwf_complex *e, double *out)
{
	size_t w = s->lv[s->J].w;

	for (size_t i = 0; i < s->oh; i++)
		for (size_t j = 0; j < s->ow; j++)
			out[i * s->ow + j] = crealf(e[(i + 1) * w + j + 1]);
}

/* S = fold(u at level r, phi r, to level J), inverse, unpadded; e
 * and e2 are scratch. */
static void
lowpass(const struct scatter *s, const fftwf_complex *u, int r,
    fftwf_complex *e, fftwf_complex *e2, double *out)
{
	fold(u, &s->lv[r], s->phi[r], (size_t)1 << (s->J - r), e);
	fftwf_execute_dft(s->lv[s->J].bwd, e, e2);
	unpad(s, e2, out);
}

/* u = the spectrum of |inverse FFT of t| at level v; t is scratch
 * and is overwritten. */
static void
modspec(const struct level *v, fftwf_complex *t, fftwf_complex *u)
{
	fftwf_execute_dft(v->bwd, t, u);
	modulus(u, t, v->n);
	fftwf_execute_dft(v->fwd, t, u);
}

static size_t
reflect(size_t i, size_t top, size_t n)
{
	if (i < top)
		return top - i;
	i -= top;
	return i < n ? i : 2 * (n - 1) - i;
}

static void
one(const struct scatter *s, const float *img, fftwf_complex **b,
    double *out)
{
	fftwf_complex *t = b[0], *a = b[1], *u1 = b[2], *u2 = b[3];
	fftwf_complex *e = b[4], *e2 = b[5];
	size_t per = s->oh * s->ow, ch = 1 + (size_t)s->J * (size_t)s->L;
	int J = s->J, L = s->L, nf = J * L;

	for (size_t i = 0; i < s->ph; i++) {
		const float *row = img + reflect(i, s->top, s->h) * s->w;
		for (size_t j = 0; j < s->pw; j++)
			t[i * s->pw + j] = row[reflect(j, s->left, s->w)];
	}
	fftwf_execute_dft(s->lv[0].fwd, t, a);
	lowpass(s, a, 0, e, e2, out);
	for (int n1 = 0; n1 < nf; n1++) {
		int j1 = n1 / L;
		const struct level *v1 = &s->lv[j1];
		fold(a, &s->lv[0], s->psi[(size_t)n1 * (size_t)J],
		    (size_t)1 << j1, t);
		modspec(v1, t, u1);
		lowpass(s, u1, j1, e, e2, out + (size_t)(1 + n1) * per);
		for (int n2 = (j1 + 1) * L; n2 < nf; n2++) {
			int j2 = n2 / L;
			const struct level *v2 = &s->lv[j2];
			fold(u1, v1, s->psi[(size_t)n2 * (size_t)J +
			    (size_t)j1], (size_t)1 << (j2 - j1), t);
			modspec(v2, t, u2);
			lowpass(s, u2, j2, e, e2, out + ch++ * per);
		}
	}
}

struct job {
	struct scatter *s;
	const float *img;
	double *out;
	size_t lo, hi;
	int t;
};

static void *
run_job(void *arg)
{
	struct job *j = arg;
	size_t in = j->s->h * j->s->w, on = scatter_size(j->s);

	for (size_t i = j->lo; i < j->hi; i++)
		one(j->s, j->img + i * in, j->s->buf + (size_t)j->t * NBUF,
		    j->out + i * on);
	return NULL;
}

int
scatter_run(struct scatter *s, const float *img, size_t n, double *out)
{
	struct job jobs[SCATTER_MAX_THREADS];
	pthread_t th[SCATTER_MAX_THREADS];
	int started[SCATTER_MAX_THREADS] = { 0 };
	int t, nt = s->threads, rc = 0;

	if ((size_t)nt > n)
		nt = n ? (int)n : 1;
	for (t = 0; t < nt; t++) {
		jobs[t].s = s;
		jobs[t].img = img;
		jobs[t].out = out;
		jobs[t].lo = n * (size_t)t / (size_t)nt;
		jobs[t].hi = n * (size_t)(t + 1) / (size_t)nt;
		jobs[t].t = t;
	}
	for (t = 1; t < nt; t++)
		started[t] = pthread_create(&th[t], NULL, run_job,
		    &jobs[t]) == 0;
	run_job(&jobs[0]);
	/* A thread that did not start: its share runs here. */
	for (t = 1; t < nt; t++) {
		if (started[t])
			pthread_join(th[t], NULL);
		else {
			jobs[t].t = 0;
			run_job(&jobs[t]);
		}
	}
	return rc;
}

void
scatter_group_norm(double *x, size_t c, size_t per, size_t g)
{
	size_t gn = c / g * per;

	for (size_t k = 0; k < g; k++) {
		double *v = x + k * gn, m = 0, q = 0, sd;
		for (size_t i = 0; i < gn; i++)
			m += v[i];
		m /= (double)gn;
		for (size_t i = 0; i < gn; i++)
			q += (v[i] - m) * (v[i] - m);
		sd = sqrt(q / (double)gn + SCATTER_GN_EPS);
		for (size_t i = 0; i < gn; i++)
			v[i] = (v[i] - m) / sd;
	}
}

void
scatter_hwc(const double *x, size_t c, size_t per, double *out)
{
	for (size_t ch = 0; ch < c; ch++)
		for (size_t p = 0; p < per; p++)
			out[p * c + ch] = x[ch * per + p];
}
