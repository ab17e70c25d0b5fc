"""An independent model of the floating-point margin that covest and
gmm-fit charge to their sensitivities (lib/dp/fpsum.h; Casacuberta,
Shoemate, Vadhan, Wagaman, CCS 2022), in exact rational arithmetic, and a
pair of neighbouring datasets whose computed sums differ by more than the
clip bound.  Python floats are IEEE-754 doubles rounded to nearest, so
the serial sums below are the ones the tools compute, operation for
operation."""
from fractions import Fraction
import math

U = Fraction(1, 2 ** 53)        # unit roundoff of double
ROWS = 2 ** 22                  # FPSUM_MAX_ROWS


def margin(n, h, u=U):
    """e = 2 n gamma_(n + h), gamma_k = k u / (1 - k u), exactly."""
    k = Fraction(n + h)
    return 2 * n * k * u / (1 - k * u)


def clip_row(x, C):
    """covest's prep_row and gmm_clip_rows on a row of one feature: the
    bound less (d + 8) 2^-52 with d = 1."""
    lim = C * (1 - 9 * 2.0 ** -52)
    norm = math.sqrt(x * x)
    if norm > lim:
        x *= lim / norm
    return x


def serial_sum(rows):
    s = 0.0
    for x in rows:
        s += x
    return s


def neighbours(C=1.0, m=4000):
    """D = [C/2, t x m] and D' = D plus the row C after the first, with t
    just above 2^-53 C: in D the running sum stays in [C/2, C), where t is
    just above one ulp and rounds to it; in D' it is in [C, 2C), where t is
    just above half an ulp and rounds up to a whole one.  The computed
    sums differ by C + (m/2 - 9) ulp(C), more than C for m > 18."""
    t = C * (2.0 ** -53 + 2.0 ** -63)
    d = [C / 2] + [t] * m
    return d, d[:1] + [C] + d[1:]
