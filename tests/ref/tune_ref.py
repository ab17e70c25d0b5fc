#!/usr/bin/python3
"""Reference values of the repeat-and-select RDP bounds (lib/dp/tune.c).

Papernot and Steinke, "Hyperparameter tuning with Renyi differential
privacy" (ICLR 2022, arXiv:2110.03620v2): Theorem 2 (truncated negative
binomial, including the geometric eta = 1 and logarithmic eta = 0
distributions) and Theorem 6 (Poisson), written here from the paper with
numpy/scipy, independently of the C code: gamma is solved from the mean
by scipy's brentq, deltahat of Theorem 6 by the conversion of Canonne,
Kamath and Steinke 2020 (Prop. 12) with the KL bound, and both bounds
are lowered by monotonicity in the order.

Usage: tests/ref/tune_ref.py > tests/data/tune/tune_ref.csv
Columns: dist, eta, mu, curve (pure: min(eps, a eps^2/2); gauss:
a/(2 sigma^2)), param (eps or sigma), order, rdp (the tuned bound).
"""
import sys

import numpy as np
from scipy import optimize

ORDERS = np.array([1 + x / 10.0 for x in range(1, 100)] +
                  list(range(11, 64)) + [128, 256, 512, 1024], dtype=float)


def tnb_mean(eta, gamma):
    if eta == 0:
        return (1 - gamma) / (gamma * np.log(1 / gamma))
    return eta * (1 - gamma) / (gamma * (1 - gamma ** eta))


def tnb_gamma(eta, mu):
    if eta == 1:
        return 1 / mu
    return optimize.brentq(lambda g: tnb_mean(eta, g) - mu, 1e-300,
                           1 - 1e-15, xtol=1e-300, rtol=8.9e-16,
                           maxiter=10000)


def delta_of(rdp, eps):
    """Smallest delta of the curve at eps (CKS 2020 Prop. 12 and KL)."""
    best = np.inf
    for a, r in zip(ORDERS, rdp):
        ld = -np.inf if r == 0 else 0.5 * np.log(-np.expm1(-r))
        if a > 1.01:
            ld = min(ld, (a - 1) * (r - eps + np.log(1 - 1 / a)) - np.log(a))
        best = min(best, ld)
    return min(np.exp(best), 1.0)


def monotone(v):
    out = v.copy()
    for i in range(len(v)):
        out[i] = np.min(v[ORDERS >= ORDERS[i]])
    return out


def tuned(dist, eta, mu, rdp):
    if dist == 'poisson':
        v = np.array([rdp[i] + mu * delta_of(rdp, np.log(1 + 1 / (a - 1)))
                      + np.log(mu) / (a - 1) for i, a in enumerate(ORDERS)])
    else:
        gamma = tnb_gamma(eta, mu)
        m = tnb_mean(eta, gamma)
        # Theorem 2, lambda-hat ranging over the orders.
        c = (1 + eta) * np.min((1 - 1 / ORDERS) * rdp
                               + np.log(1 / gamma) / ORDERS)
        v = rdp + c + np.log(m) / (ORDERS - 1)
    return monotone(v)


def main():
    w = sys.stdout.write
    w('dist,eta,mu,curve,param,order,rdp\n')
    dists = [('poisson', 0), ('geometric', 1), ('logarithmic', 0),
             ('negbin', 0.5), ('negbin', -0.5), ('negbin', 3)]
    curves = [('pure', e) for e in (0.1, 1.0, 4.0)] + \
             [('gauss', s) for s in (0.8, 3.0, 20.0)]
    for dist, eta in dists:
        for mu in (1.5, 5.0, 20.0, 100.0):
            for kind, p in curves:
                if kind == 'pure':
                    rdp = np.minimum(p, ORDERS * p * p / 2)
                else:
                    rdp = ORDERS / (2 * p * p)
                v = tuned(dist, eta, mu, rdp)
                for i in range(0, len(ORDERS), 5):
                    w('%s,%r,%r,%s,%r,%r,%.17g\n' % (dist, eta, mu, kind, p,
                                                     ORDERS[i], v[i]))


if __name__ == "__main__":
    main()
