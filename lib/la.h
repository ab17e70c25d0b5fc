/*
 * la.h: thin wrappers over OpenBLAS (CBLAS) and LAPACKE for dense
 * row-major double matrices, the shapes later tools need.
 *
 * Ownership: callers own every buffer.  Functions return 0, or the
 * LAPACK info value (nonzero) on failure; none prints or exits.
 */
#ifndef PRIVADA_LA_H
#define PRIVADA_LA_H

#include <stddef.h>

/* S (d x d, upper triangle) += X^T X for X (n x d).  Blocks of rows can be
 * accumulated one after another (SYRK). */
void la_syrk_acc(size_t n, size_t d, const double *X, double *S);
/* Same for a float block, accumulated into a double S (converted in
 * panels of rows through the scratch buffer of panel*d doubles). */
void la_syrk_acc_f32(size_t n, size_t d, const float *X, double *S,
    double *scratch, size_t panel);
/* Copy the upper triangle of the d x d matrix S to its lower triangle. */
void la_sym_fill(size_t d, double *S);
/* C (m x n) = alpha * op(A) op(B) + beta * C, row-major, op = transpose
 * when ta/tb is nonzero.  k is the inner dimension. */
void la_gemm(int ta, int tb, size_t m, size_t n, size_t k, double alpha,
    const double *A, const double *B, double beta, double *C);
/* Eigen-decomposition of the symmetric d x d matrix A (upper triangle
 * used): eigenvalues ascending into w, eigenvectors as the columns of A. */
int la_eigh(size_t d, double *A, double *w);
/* Cholesky factor A = U^T U in the upper triangle (lower part left). */
int la_chol(size_t d, double *A);

#endif
