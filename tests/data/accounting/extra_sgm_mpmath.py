#!/usr/bin/env python3
"""Regenerate extra_sgm_mpmath.csv: RDP of one step of the Poisson-subsampled
Gaussian mechanism outside the reference grid (extreme q, sigma, orders),
computed independently of lib/dp/rdp.c with mpmath at 40 digits.

Integer order m: log1p(sum_{i=2}^m C(m,i) (1-q)^(m-i) q^i expm1((i^2-i)/(2 s^2)))/(m-1).
Fractional order a: log1p(A-1)/(a-1), A-1 = E_{z~N(0,s^2)}[(1-q+q exp((2z-1)/(2s^2)))^a - 1]
by mpmath.quad split at the points where the integrand changes shape; each value
is computed twice (40 and 50 digits, different splits) and kept only if both agree
to 1e-20 relative.  Usage: python3 extra_sgm_mpmath.py > extra_sgm_mpmath.csv
"""
import sys
import mpmath as mp


def rdp_int(q, s, m):
    A = mp.fsum(mp.binomial(m, i) * (1 - q) ** (m - i) * q ** i *
                mp.expm1((i * i - i) / (2 * s * s)) for i in range(2, m + 1))
    return mp.log1p(A) / (m - 1)


def rdp_frac(q, s, a, extra):
    f = lambda z: mp.npdf(z, 0, s) * mp.expm1(a * mp.log1p(q * mp.expm1((2 * z - 1) / (2 * s * s))))
    z0 = s * s * mp.log(1 / q - 1) + mp.mpf(1) / 2
    pts = [-40 * s, 0, mp.mpf(1) / 2, z0, a, a + 40 * s, z0 + 40 * s, z0 - 40 * s]
    pts += [mp.mpf(k) / extra for k in range(-5 * extra, (int(a) + 6) * extra)]
    pts = sorted(set(pts))
    A = mp.quad(f, [-mp.inf] + pts + [mp.inf])
    return mp.log1p(A) / (a - 1)


def value(q, s, a):
    q, s = mp.mpf(q), mp.mpf(s)
    if a == int(a):
        mp.mp.dps = 40
        return rdp_int(q, s, int(a))
    mp.mp.dps = 40
    v1 = rdp_frac(q, s, mp.mpf(a), 1)
    mp.mp.dps = 50
    v2 = rdp_frac(q, s, mp.mpf(a), 2)
    if abs(v1 - v2) > mp.mpf('1e-20') * abs(v2):
        return None
    return v2


cases = []
for q in [1e-6, 1e-3, 0.3, 0.9, 0.999]:
    for s in [0.3, 1.0, 20.0, 300.0]:
        for a in [1.01, 1.5, 2.5, 7.3, 20.5, 3.0, 30.0]:
            cases.append((q, s, a))
for (q, s) in [(0.01, 1.1), (0.5, 0.7), (1e-4, 5.0)]:
    for a in [1.0001, 1.999999, 2.000001, 64.5, 100.25, 200.0, 1024.0]:
        cases.append((q, s, a))
print("q,sigma,order,rdp_mpmath")
for (q, s, a) in cases:
    v = value(q, s, a)
    if v is None:
        print("skipped (quadratures disagree):", q, s, a, file=sys.stderr)
        continue
    print("%r,%r,%r,%r" % (q, s, a, float(v)))
