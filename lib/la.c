/* la.c: OpenBLAS and LAPACKE wrappers (see la.h). */
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

int
la_chol(size_t d, double *A)
{
	return LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', (lapack_int)d, A,
	    (lapack_int)d);
}
