#!/usr/bin/python3
# Generates the fixtures of tests/dpsgd-train.bats's --mode dann tests
# (run once; the CSVs are committed).  A covariate shift with a spurious
# feature: in the source, both a and b carry the class (b much more
# cleanly); in the target, b is pure noise with the same variance as in
# the source.  A classifier trained on the source leans on b and loses
# accuracy on the target; features that make the domains
# indistinguishable must drop b, which is what DANN learns.
import numpy as np

rng = np.random.default_rng(2)
N, SA, SB = 400, 0.7, 0.3


def source(n):
    y = rng.integers(0, 2, n)
    s = 2.0 * y - 1
    return np.c_[s + rng.normal(0, SA, n), s + rng.normal(0, SB, n)], y


def target(n):
    y = rng.integers(0, 2, n)
    s = 2.0 * y - 1
    return np.c_[s + rng.normal(0, SA, n),
                 rng.normal(0, np.sqrt(1 + SB * SB), n)], y


def write(name, x, y):
    with open(name, "w") as f:
        f.write("a,b" + (",label" if y is not None else "") + "\n")
        for i in range(len(x)):
            f.write("%.6f,%.6f" % tuple(x[i]) +
                    (",%d" % y[i] if y is not None else "") + "\n")


x, y = source(N)
write("source.csv", x, y)
x, _ = target(N)
write("target.csv", x, None)        # unlabelled: DANN never sees labels
x, y = target(N)
write("target-test.csv", x, y)
