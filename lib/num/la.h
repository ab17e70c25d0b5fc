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
/* la_eigh of A (into wa, *rca its result) and of B (wb, *rcb), both d x
 * d.  When the BLAS may use two or more threads, the two run at once in
 * two threads, each with a single-threaded BLAS (faster than one after
 * the other); the caller must make no other BLAS call meanwhile. */
void la_eigh2(size_t d, double *A, double *wa, int *rca, double *B,
    double *wb, int *rcb);
/* Cholesky factor A = U^T U in the upper triangle (lower part left). */
int la_chol(size_t d, double *A);

/* ---- psdshrink and coral-align ---- */

/* Smallest eigenvalue of the symmetric d x d matrix A (upper triangle
 * used, A overwritten) into *w, without eigenvectors (dsyevr with
 * IL = IU = 1).  @return 0 or the LAPACK info value, -1 when out of
 * memory. */
int la_eig_min(size_t d, double *A, double *w);
/* out = V diag(f) V^T for the d x d matrix V (row-major, eigenvectors
 * as columns, as la_eigh leaves them) and f[j] >= 0: formed as W W^T
 * with W = V diag(sqrt f) by SYRK, so out is symmetric to the last bit.
 * work holds d * d doubles; out may not alias V or work. */
void la_sym_from_eig(size_t d, const double *V, const double *f,
    double *out, double *work);
/* Asymmetry of the d x d matrix A: max |a_ij - a_ji| / max |a_ij| (0 for
 * the zero matrix), or -1 when an entry is not finite. */
double la_asymmetry(size_t d, const double *A);

/* ---- dpsgd-train and predict (f32) ---- */

/* C (m x n) = alpha * op(A) op(B) + beta * C in single precision
 * (SGEMM), row-major, op = transpose when ta/tb is nonzero, k the inner
 * dimension; lda, ldb, ldc are the row strides of A, B and C as stored.
 * Nothing is done when m or n is 0; k = 0 scales C by beta. */
void la_sgemm_ld(int ta, int tb, size_t m, size_t n, size_t k, float alpha,
    const float *A, size_t lda, const float *B, size_t ldb, float beta,
    float *C, size_t ldc);
/* la_sgemm_ld with packed operands (lda = k or m, ldb = n or k,
 * ldc = n). */
void la_sgemm(int ta, int tb, size_t m, size_t n, size_t k, float alpha,
    const float *A, const float *B, float beta, float *C);
/* Limit OpenBLAS to n threads (a tool running threads of its own keeps
 * the products on one core instead of oversubscribing the machine). */
void la_set_threads(int n);

/* ---- covest ---- */

/* The number of threads BLAS calls use (OpenBLAS: OPENBLAS_NUM_THREADS or
 * its default), so a tool can leave them the cores and use the rest. */
int la_blas_threads(void);

/* ---- gmm-fit ---- */

/* la_gemm with the row strides lda, ldb, ldc of A, B and C as stored
 * (DGEMM).  Nothing is done when m or n is 0; k = 0 scales C by beta. */
void la_gemm_ld(int ta, int tb, size_t m, size_t n, size_t k, double alpha,
    const double *A, size_t lda, const double *B, size_t ldb, double beta,
    double *C, size_t ldc);

/* Inverse of the upper triangular d x d matrix U in place (DTRTRI).
 * @return 0 or the LAPACK info value (> 0: U is singular). */
int la_tri_inv_upper(size_t d, double *U);

#endif
