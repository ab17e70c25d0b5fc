/* la.c: OpenBLAS and LAPACKE wrappers (see la.h). */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <cblas.h>
#include <lapacke.h>

#include "la.h"

void
la_syrk_acc(size_t n, size_t d, const double *X, double *S)
{
	if (n == 0 || d == 0)
		return;
	cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, (int)d, (int)n, 1.0,
	    X, (int)d, 1.0, S, (int)d);
}

void
la_syrk_acc_f32(size_t n, size_t d, const float *X, double *S,
    double *scratch, size_t panel)
{
	for (size_t r = 0; r < n; r += panel) {
		size_t k = n - r < panel ? n - r : panel;
		for (size_t i = 0; i < k * d; i++)
			scratch[i] = X[r * d + i];
		la_syrk_acc(k, d, scratch, S);
	}
}

void
la_sym_fill(size_t d, double *S)
{
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < i; j++)
			S[i * d + j] = S[j * d + i];
}

void
la_gemm(int ta, int tb, size_t m, size_t n, size_t k, double alpha,
    const double *A, const double *B, double beta, double *C)
{
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
	    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A,
	    ta ? (int)m : (int)k, B, tb ? (int)k : (int)n, beta, C, (int)n);
}

int
la_eigh(size_t d, double *A, double *w)
{
	return LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'U', (lapack_int)d, A,
	    (lapack_int)d, w);
}

struct eigh_job {
	size_t d;
	double *A, *w;
	int rc;
};

static void *
eigh_run(void *arg)
{
	struct eigh_job *j = arg;

	j->rc = la_eigh(j->d, j->A, j->w);
	return NULL;
}

/*
 * Two decompositions side by side when the BLAS may use two or more
 * threads: the tridiagonal reduction of dsyevd is matrix-vector work
 * that gains little from a second BLAS thread, so two single-threaded
 * solves at once beat two two-threaded ones in a row.  The BLAS thread
 * count is 1 while they run and restored after.  Nothing else may call
 * the BLAS meanwhile (the count is global).
 */
void
la_eigh2(size_t d, double *A, double *wa, int *rca, double *B, double *wb,
    int *rcb)
{
	struct eigh_job ja = { d, A, wa, 0 }, jb = { d, B, wb, 0 };
	int nt = openblas_get_num_threads();
	pthread_t th;

	if (nt >= 2) {
		openblas_set_num_threads(1);
		if (pthread_create(&th, NULL, eigh_run, &jb) != 0) {
			openblas_set_num_threads(nt);
			nt = 1;
		}
	}
	if (nt < 2) {
		*rca = la_eigh(d, A, wa);
		*rcb = la_eigh(d, B, wb);
		return;
	}
	(void)eigh_run(&ja);
	pthread_join(th, NULL);
	openblas_set_num_threads(nt);
	*rca = ja.rc;
	*rcb = jb.rc;
}

int
la_chol(size_t d, double *A)
{
	return LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)d, A,
	    (lapack_int)d);
}

/* ---- psdshrink and coral-align ---- */

int
la_eig_min(size_t d, double *A, double *w)
{
	double z[1], *ev;
	lapack_int m = 0, isuppz[2];
	int rc;

	/* Eigenvalues only, the first in ascending order: the tridiagonal
	 * reduction dominates, bisection on it is cheap.  dsyevr's W must
	 * have d elements even when one eigenvalue is asked for (it is
	 * also used as workspace): a single double overflowed into the
	 * caller's stack. */
	if (d > SIZE_MAX / sizeof *ev)
		return -1;
	if ((ev = malloc((d ? d : 1) * sizeof *ev)) == NULL)
		return -1;
	rc = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', 'I', 'U', (lapack_int)d, A,
	    (lapack_int)d, 0.0, 0.0, 1, 1, 0.0, &m, ev, z, 1, isuppz);
	if (rc == 0 && m > 0)
		*w = ev[0];
	free(ev);
	return rc;
}

void
la_sym_from_eig(size_t d, const double *V, const double *f, double *out,
    double *work)
{
	if (d == 0)
		return;
	/* The d square roots once, in out's first row (SYRK overwrites
	 * out: beta is 0). */
	for (size_t j = 0; j < d; j++)
		out[j] = sqrt(f[j]);
	for (size_t i = 0; i < d; i++)
		for (size_t j = 0; j < d; j++)
			work[i * d + j] = V[i * d + j] * out[j];
	/* out = W W^T: SYRK computes one triangle, which is then mirrored,
	 * so the result is exactly symmetric (a GEMM need not be). */
	cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)d, (int)d,
	    1.0, work, (int)d, 0.0, out, (int)d);
	la_sym_fill(d, out);
}

double
la_asymmetry(size_t d, const double *A)
{
	double big = 0, diff = 0;

	for (size_t i = 0; i < d * d; i++) {
		if (!isfinite(A[i]))
			return -1;
		if (fabs(A[i]) > big)
			big = fabs(A[i]);
	}
	for (size_t i = 0; i < d; i++)
		for (size_t j = i + 1; j < d; j++)
			if (fabs(A[i * d + j] - A[j * d + i]) > diff)
				diff = fabs(A[i * d + j] - A[j * d + i]);
	return big > 0 ? diff / big : 0;
}

/* ---- dpsgd-train and predict (f32) ---- */

void
la_sgemm_ld(int ta, int tb, size_t m, size_t n, size_t k, float alpha,
    const float *A, size_t lda, const float *B, size_t ldb, float beta,
    float *C, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	if (k == 0) {		/* BLAS refuses lda = 0: scale C here */
		for (size_t i = 0; i < m; i++)
			for (size_t j = 0; j < n; j++)
				C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];
		return;
	}
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
	    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A,
	    (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

void
la_sgemm(int ta, int tb, size_t m, size_t n, size_t k, float alpha,
    const float *A, const float *B, float beta, float *C)
{
	la_sgemm_ld(ta, tb, m, n, k, alpha, A, ta ? m : k, B, tb ? k : n,
	    beta, C, n);
}

void
la_set_threads(int n)
{
	openblas_set_num_threads(n);
}

/* ---- covest ---- */

int
la_blas_threads(void)
{
	return openblas_get_num_threads();
}

/* ---- gmm-fit ---- */

void
la_gemm_ld(int ta, int tb, size_t m, size_t n, size_t k, double alpha,
    const double *A, size_t lda, const double *B, size_t ldb, double beta,
    double *C, size_t ldc)
{
	if (m == 0 || n == 0)
		return;
	if (k == 0) {		/* BLAS refuses lda = 0: scale C here */
		for (size_t i = 0; i < m; i++)
			for (size_t j = 0; j < n; j++)
				C[i * ldc + j] = beta == 0 ? 0 :
				    beta * C[i * ldc + j];
		return;
	}
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
	    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A,
	    (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

int
la_tri_inv_upper(size_t d, double *U)
{
	return LAPACKE_dtrtri(LAPACK_ROW_MAJOR, 'U', 'N', (lapack_int)d, U,
	    (lapack_int)d);
}
