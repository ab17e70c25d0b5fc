/*
 * uda.h: the batch losses of two unsupervised domain adaptation modes of
 * dpsgd-train, with their gradients, as pure functions of float arrays.
 *
 * Associative domain adaptation (Haeusser, Frerix, Mordvintsev and
 * Cremers, "Associative domain adaptation", ICCV 2017; paper 004 of
 * ../shared/seeds, section 3).  A holds the embeddings of na labelled
 * source rows, B those of nb target rows (h values each).  With
 *   M = A B^T,  P^ab = row-softmax(M),  P^ba = row-softmax(M^T),
 *   P^aba = P^ab P^ba,
 * the losses are cross-entropies (natural logarithm, a constant
 * UDA_LOG_EPS added inside every logarithm, as Haeusser's own
 * implementation does, so that an underflowed probability stays finite):
 *   walker  (1/na) sum_i H(T_i, P^aba_i),
 *           T_ij = [y_i = y_j] / |{k : y_k = y_i}|   (within the batch)
 *   visit   H(V, P^visit),  P^visit_j = (1/na) sum_i P^ab_ij,  V_j = 1/nb
 *   cover   H(U, P^cover),  P^cover_i = (1/nb) sum_j P^ba_ji,  U_i = 1/na
 * Paper 004 writes the cover loss as H(P^cover, U) with a sum in place of
 * the mean; read literally that is log(na) sum_i P^cover_i = nb log(na),
 * a constant with no gradient.  The cover loss here is the reading that
 * has the effect the paper describes (every source row is reached from
 * the target equally often): the visit loss of the return walk.
 *
 * Knowledge distillation at temperature T (Hinton, Vinyals and Dean,
 * "Distilling the knowledge in a neural network", 2015, who scale by T^2
 * so that the gradients keep their size; paper 003, eq. 5): for a row
 * with teacher logits s and student logits z,
 *   T^2 H(softmax(s / T), softmax(z / T)),
 *   gradient in z: T (softmax(z / T) - softmax(s / T)).
 *
 * Information maximisation (Liang, Hu and Feng, "Do we really need to
 * access the source data?", ICML 2020; paper 003, eq. 6): for n rows of
 * logits with p_i = softmax(z_i) and the batch mean pbar,
 *   (1/n) sum_i H(p_i) - H(pbar)
 * (confident predictions, diverse over the batch).
 *
 * Every function evaluates in double.  Gradients are of the batch loss
 * exactly as returned (the 1/na, 1/nb and 1/n included), except uda_kd,
 * which is per row.  Nothing here allocates, prints or exits.
 */
#ifndef PRIVADA_UDA_H
#define PRIVADA_UDA_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

#define UDA_LOG_EPS 1e-8

enum uda_error {
	UDA_OK = PV_OK,
	UDA_E_RANGE = PV_E_RANGE	/* a size of 0 or too large, a negative label,
				 * a weight or temperature out of range */
};

/* The unweighted parts of the associative loss. */
struct uda_assoc_parts {
	double walker, visit, cover;
};

/* Doubles of the work array uda_assoc needs for na x nb batches of
 * embeddings of h values, or 0 when na, nb or h is 0 or a size is too
 * large (more than 65536 rows). */
size_t uda_assoc_work(size_t na, size_t nb, size_t h);

/* The associative loss w[0] walker + w[1] visit + w[2] cover of the
 * embeddings A (na x h), B (nb x h), labels y (na values >= 0) into
 * *loss, its parts into *parts (may be NULL), and, when gA and gB are not
 * NULL, its gradients with respect to A (na x h) and B (nb x h), written
 * (not added).  work: uda_assoc_work(na, nb, h) doubles.  @return 0, or
 * UDA_E_RANGE (nothing written). */
int uda_assoc(const float *A, const float *B, size_t na, size_t nb,
    size_t h, const int32_t *y, const double w[3], double *loss,
    struct uda_assoc_parts *parts, float *gA, float *gB, double *work);

/* Knowledge distillation of n rows of k logits: the sum over the rows of
 * temp^2 H(softmax(s_i / temp), softmax(z_i / temp)), and g (n x k, may
 * be NULL) = the per-row gradients in z.  temp > 0.  A row with a
 * non-finite logit gets g = 0 and adds 0. */
double uda_kd(const float *s, const float *z, size_t n, size_t k,
    double temp, float *g);

/* Information maximisation of n >= 1 rows of k logits: returns
 * (1/n) sum_i H(p_i) - H(pbar); *ent and *div (may be NULL) receive the
 * mean entropy and H(pbar); g (n x k, may be NULL) the gradient of the
 * returned value in z.  work: k doubles.  Rows with a non-finite logit
 * are left out (g = 0, and n counts only the others); with none left, 0. */
double uda_im(const float *z, size_t n, size_t k, float *g, double *ent,
    double *div, double *work);

#endif
