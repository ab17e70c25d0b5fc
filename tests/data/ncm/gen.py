# tests/data/ncm/train.csv: 60 rows of 5 features, labels 0..2 in turn,
# three Gaussian blobs (means N(0, 1.2^2), spread 0.8), so that many rows
# exceed the clip bound 1.5 that tests/ncm.bats uses.  /usr/bin/python3 gen.py
import numpy as np
r = np.random.default_rng(16)
n, d, K = 60, 5, 3
y = np.arange(n) % K
M = r.normal(0, 1.2, (K, d))
X = M[y] + r.normal(0, 0.8, (n, d))
with open("train.csv", "w") as f:
    f.write(",".join("f%d" % j for j in range(d)) + ",label\n")
    for i in range(n):
        f.write(",".join("%.6f" % v for v in X[i]) + ",%d\n" % y[i])
