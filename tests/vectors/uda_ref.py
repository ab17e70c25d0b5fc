#!/usr/bin/python3
"""Reference values of the lib/uda losses for tests/unit/test_uda.c,
computed independently with numpy from the formulas of lib/ml/uda.h on the
fixed inputs below (the same inputs are in the C test).  Run it to
regenerate the constants: /usr/bin/python3 tests/vectors/uda_ref.py"""
import numpy as np

EPS = 1e-8
# A: 5 x 3, B: 4 x 3 (multiples of 1/8, exact in f32), labels of A.
A = np.array([[1, -2, 3], [0, 4, -1], [2, 2, 2], [-3, 1, 0], [5, -1, -2]],
             dtype=np.float64) / 8
B = np.array([[2, 0, -1], [-1, 3, 1], [4, -2, 2], [0, -3, 5]],
             dtype=np.float64) / 8
y = np.array([0, 1, 0, 2, 1])
# logits for kd/im: 3 rows x 4 classes
S = np.array([[8, 2, -4, 0], [1, 1, 1, 1], [-6, 3, 10, 2]], dtype=np.float64) / 4
Z = np.array([[2, -1, 0, 5], [7, -3, 1, 0], [0, 2, 4, -2]], dtype=np.float64) / 4


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def assoc(A, B, y):
    M = A @ B.T
    Pab = softmax(M, 1)
    Pba = softmax(M.T, 1)
    Paba = Pab @ Pba
    eq = (y[:, None] == y[None, :]).astype(float)
    T = eq / eq.sum(1, keepdims=True)
    walker = -(T * np.log(Paba + EPS)).sum(1).mean()
    visit = -np.log(Pab.mean(0) + EPS).mean()
    cover = -np.log(Pba.mean(0) + EPS).mean()
    return walker, visit, cover


def kd(S, Z, t):
    q = softmax(S / t)
    logp = np.log(softmax(Z / t))
    return (t * t * -(q * logp).sum(1)).sum()


def im(Z):
    P = softmax(Z)
    ent = -(P * np.log(P)).sum(1).mean()
    pb = P.mean(0)
    div = -(pb * np.log(pb)).sum()
    return ent - div, ent, div


w, v, c = assoc(A, B, y)
print("walker %.17g\nvisit %.17g\ncover %.17g" % (w, v, c))
# a scaled copy: sharper softmaxes
w, v, c = assoc(4 * A, 4 * B, y)
print("walker4 %.17g\nvisit4 %.17g\ncover4 %.17g" % (w, v, c))
print("kd1 %.17g\nkd20 %.17g" % (kd(S, Z, 1), kd(S, Z, 20)))
print("im %.17g %.17g %.17g" % im(Z))
