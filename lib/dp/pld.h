/*
 * pld.h: privacy loss distribution (PLD) accounting of the
 * Poisson-subsampled Gaussian mechanism (DP-SGD).
 *
 * A PLD accountant (Koskela, Jalko, Honkela 2020; Google's dp_accounting
 * PLDAccountant) discretises the distribution of the privacy loss
 * L = log(P(x)/Q(x)), x ~ P, of one step onto a grid of spacing h,
 * composes it `steps` times by an FFT convolution, and reads (epsilon,
 * delta) off the composed distribution through the hockey-stick
 * divergence
 *
 *	delta(eps) = p_inf + sum over l > eps of p(l) (1 - e^(eps - l)),
 *
 * where p_inf is the mass at +infinity.  Up to the discretisation it is
 * exact, so its epsilons are smaller than RDP's (rdp.h): RDP's are 6 to
 * 80% larger for 0.5 <= eps <= 10 and 1000 or more steps, and several
 * times larger for few steps.
 *
 * Pessimism.  Every approximation errs on the side of privacy, so each
 * epsilon returned is an upper bound on the true epsilon(delta):
 *  - one step is discretised by "connect the dots" (Doroshenko, Ghazi,
 *    Kamath, Kumar, Manurangsi 2022, Algorithm 1; dp_accounting's
 *    default): the discrete PLD has exactly the true delta(eps) at every
 *    grid point and a delta never smaller in between and beyond (a chord
 *    of a convex curve), so it dominates the mechanism, and so does its
 *    composition.  (Rounding every loss up to the grid is pessimistic
 *    too, but biases epsilon by about steps h / 2, 0.5 for 10^4 steps at
 *    h = 1e-4; connect the dots errs by about steps h^2 / 12.)
 *  - the mechanism's tail beyond 10 standard deviations (below 1e-23 per
 *    step) goes to +infinity;
 *  - the composition keeps a window of losses outside which the composed
 *    mass is at most PLD_TAIL_MASS per side (a Chernoff bound on the
 *    discrete PLD): the upper tail is charged to p_inf, and the lower
 *    tail, which the circular convolution folds onto the top of the
 *    window, only adds mass at larger losses;
 *  - the FFT's rounding noise (about 1e-16 relative per frequency,
 *    raised to the power steps) is charged to every grid point as the
 *    most negative mass it produced, so delta is not underestimated
 *    where the true tail is below the noise.  This sets a floor on the
 *    useful delta: summed over the whole window the charge is at most
 *    about 4e-12 at 10^4 steps, 1e-10 at 10^5 and 10^6, and 5e-8 at 10^8
 *    (q = 0.01 or 0.001, sigma about 1); near it epsilon grows fast, and
 *    it is infinite below PLD_TAIL_MASS.
 * Both neighbouring directions (remove a record: P = (1-q) N(0, s^2) +
 * q N(1, s^2), Q = N(0, s^2); add a record: P and Q swapped) are
 * composed; epsilon (delta) is the larger of the two, as in
 * dp_accounting.
 *
 * The grid.  grid = 0 picks the default, starting from h =
 * PLD_DEFAULT_GRID (1e-4, dp_accounting's value_discretization_interval):
 *  - refined while one step's loss has a standard deviation below 4 h
 *    (large sigma or small q: q = 0.001 with sigma >= 4), down to
 *    PLD_MIN_GRID, since connect the dots adds up to h^2/4 to each step's
 *    loss variance (there dp_accounting's fixed grid overstates epsilon
 *    by up to 9%, which this avoids);
 *  - then coarsened, if need be, until neither one step nor the composed
 *    window needs more than PLD_DEFAULT_POINTS points per direction.
 *    This costs accuracy, epsilon growing by about steps h^2 / 12 (the
 *    result stays an upper bound): in the reference grid (q 0.001 to 1,
 *    sigma 0.5 to 8, up to 10^5 steps) only epsilons above about 20 are
 *    affected, by at most 2e-5 relative; at 2^30 steps, by 10 to 20%.
 * Time and memory are linear in the points: over that reference grid a
 * PLD takes 0.03 s of CPU on average and at most 0.14 s (q = 0.01,
 * sigma = 1.1, 10^4 steps: 0.03 s), and peak memory is at most 48 bytes
 * per point of the limit, 24 MiB by default.  An explicit grid > 0 is
 * used as given, up to PLD_MAX_POINTS points (then PLD_E_SIZE): at most
 * 384 MiB and about 1.5 s.
 *
 * Both RDP and PLD epsilons are valid upper bounds, so the smaller one
 * may be used.  RDP is the better of the two far outside the reference
 * grid: at 10^8 steps or more (the coarse grid), and when q is so small
 * that a whole run samples a record with probability near delta (there
 * the rounding noise dominates).
 *
 * Ownership: a struct pld is an opaque handle from pld_sgm_new, released
 * with pld_free (which accepts NULL); queries only read it.  Nothing
 * here prints, exits, reads the environment or keeps hidden state: all
 * functions are safe to call from several threads on distinct handles,
 * and queries on one handle from several threads.
 *
 * Errors are negative PLD_E_* values (pinned: never renumbered), named by
 * pld_strerror.  On error the outputs are left unspecified.
 */
#ifndef PRIVADA_PLD_H
#define PRIVADA_PLD_H

#include "pverr.h"

#include <stddef.h>
#include <stdint.h>

enum pld_error {
	PLD_OK = PV_OK,
	PLD_E_PARAM = PV_E_RANGE,	/* an argument is out of its range */
	PLD_E_NOMEM = PV_E_NOMEM,	/* out of memory */
	PLD_E_SIZE = PV_E_SIZE		/* over PLD_MAX_POINTS points: choose
				 * a coarser grid, or 0 */
};

#define PLD_DEFAULT_GRID 1e-4	/* grid spacing h tried first */
#define PLD_DEFAULT_POINTS (1u << 19)	/* per direction, default grid */
#define PLD_MAX_POINTS (1u << 23)	/* per direction, any grid */
#define PLD_MIN_GRID 1e-9	/* finest grid spacing */
#define PLD_TAIL_MASS 1e-15	/* composed mass cut per tail */
#define PLD_MIN_SIGMA 0.05	/* smallest noise multiplier accepted */
#define PLD_MAX_STEPS (UINT64_C(1) << 30)	/* most steps accepted */

/* Name of an error code, e.g. "argument out of range". */
const char *pld_strerror(int code);

struct pld;

/*
 * The composed PLD pair of `steps` steps of the Poisson-subsampled
 * Gaussian mechanism, add/remove-one neighbours, L2 sensitivity 1.
 * @param q      sampling probability, 0 <= q <= 1 (q = 0: no loss)
 * @param sigma  noise multiplier, finite, >= PLD_MIN_SIGMA
 * @param steps  0 <= steps <= PLD_MAX_STEPS (0: no loss)
 * @param grid   loss grid spacing h: 0 for the default (see above), else
 *               PLD_MIN_GRID <= grid <= 1
 * @param out    receives the handle (the caller frees it with pld_free)
 * @return 0, PLD_E_PARAM, PLD_E_NOMEM, or PLD_E_SIZE (an explicit grid
 *         too fine, or, with the default grid, no grid fitting
 *         PLD_DEFAULT_POINTS, which does not happen within the limits
 *         above).
 */
int pld_sgm_new(double q, double sigma, uint64_t steps, double grid,
    struct pld **out);

/* Release a PLD; NULL is a no-op. */
void pld_free(struct pld *p);

/* The grid spacing h actually used (the default grid may be finer or
 * coarser than PLD_DEFAULT_GRID). */
double pld_grid(const struct pld *p);

/* Grid points held over both directions (8 bytes each). */
size_t pld_points(const struct pld *p);

/*
 * Smallest eps >= 0 with delta(eps) <= delta in both directions, solved
 * exactly on the discrete PLD (between grid points delta(eps) has the
 * form a - b e^eps), so the only errors are those above.  +inf when the
 * mass at infinity exceeds delta.
 * @param delta  0 <= delta <= 1 (delta = 1 gives 0)
 * @return 0 or PLD_E_PARAM.
 */
int pld_epsilon(const struct pld *p, double delta, double *eps);

/* delta(eps), the larger of the two directions, for eps >= 0 (+inf
 * allowed: the mass at infinity).  @return 0 or PLD_E_PARAM. */
int pld_delta(const struct pld *p, double eps, double *delta);

/*
 * One-shot queries: pld_sgm_new, then pld_epsilon or pld_delta, then
 * pld_free.  Arguments and errors as there.  Reuse a handle for several
 * deltas: building it is nearly all the cost.
 */
int pld_sgm_epsilon(double q, double sigma, uint64_t steps, double delta,
    double grid, double *eps);
int pld_sgm_delta(double q, double sigma, uint64_t steps, double eps,
    double grid, double *delta);

#endif
