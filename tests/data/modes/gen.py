#!/usr/bin/python3
# Generates the fixtures of tests/dpsgd-modes.bats (run once; the CSVs are
# committed).  Three classes in 2-D, Gaussian blobs of standard deviation
# 0.175 around the points at radius 1 and angles 90, 210 and 330 degrees
# (the source); the target is the same distribution rotated by 45 degrees
# about the origin and shifted by (0.25, -0.125).  A classifier trained on
# the source cuts through the rotated target clusters; both --mode assoc
# (source labels, unlabelled target) and --mode gmm-uda (a source model
# and a mixture of its features) can move the target clusters back onto
# their classes.  The scale matters for assoc: its softmaxes read raw
# inner products of embeddings, which inputs of radius 4 make so sharp
# that training often collapses.
import numpy as np

rng = np.random.default_rng(7)
K, N, ROT = 3, 300, np.deg2rad(45)
ANG = np.deg2rad([90, 210, 330])
MU = np.stack([np.cos(ANG), np.sin(ANG)], 1)
R = np.array([[np.cos(ROT), -np.sin(ROT)], [np.sin(ROT), np.cos(ROT)]])
SHIFT = np.array([0.25, -0.125])


def draw(n, target):
    y = rng.integers(0, K, n)
    x = MU[y] + 0.175 * rng.standard_normal((n, 2))
    return (x @ R.T + SHIFT if target else x), y


def write(name, x, y):
    with open(name, "w") as f:
        f.write("a,b" + (",label" if y is not None else "") + "\n")
        for i, r in enumerate(x):
            f.write("%.6f,%.6f" % (r[0], r[1]) +
                    (",%d" % y[i] if y is not None else "") + "\n")


xs, ys = draw(N, False)
xt, _ = draw(N, True)
xe, ye = draw(N, True)
write("source.csv", xs, ys)
write("target.csv", xt, None)
write("target-test.csv", xe, ye)
