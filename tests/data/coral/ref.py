"""Fixtures and independent numpy/scipy references for psdshrink and
coral-align (tests/psdshrink.bats, tests/coral-align.bats).

    ref.py gen DIR                 write the fixture .npy files into DIR
    ref.py coral DIR OUT SIDE REG  check OUT (.npy, aligned rows) against
                                   numpy; SIDE is source or target
    ref.py sa DIR OUT SIDE DIM     the same for subspace alignment
    ref.py alpha IN NAME TARGET INFO OUT TOL [TFILE]
                                   check psdshrink's alpha (from tns info
                                   --format json) and matrix against the
                                   generalised eigenproblem and a numpy
                                   bisection
    ref.py eigclip IN OUT FLOOR    check an eigclip result

Exit status 0 when the check passes; a failure prints what differs.
Nothing here shares code with the C tools: matrix square roots come from
numpy.linalg.eigh, the exact shrinkage from scipy.linalg.eigh(C, Sigma).
"""
import json
import sys

import numpy as np

BLOCKS = [[5, 0, 3], [1, 6]]          # features 2 and 4 are in no block
D = 7


def cov(x):
    """Centred covariance with divisor n, as covest writes it."""
    m = x.mean(axis=0)
    return (x - m).T @ (x - m) / x.shape[0]


def gen(d):
    rng = np.random.default_rng(20240501)
    mix_s = rng.normal(size=(D, D))
    mix_t = rng.normal(size=(D, D)) * 0.5 + np.eye(D)
    xs = rng.normal(size=(40, D)) @ mix_s + 1.0
    xt = rng.normal(size=(30, D)) @ mix_t - 0.5
    np.save(f"{d}/xs.npy", xs)
    np.save(f"{d}/xs32.npy", xs.astype(np.float32))
    np.save(f"{d}/xt.npy", xt)
    np.save(f"{d}/y.npy", rng.integers(0, 3, size=40).astype(np.int32))
    for i, b in enumerate(BLOCKS):
        np.save(f"{d}/sub{i}.npy", np.array(b, dtype=np.int64))
        np.save(f"{d}/cs{i}.npy", cov(xs[:, b]))
        np.save(f"{d}/ct{i}.npy", cov(xt[:, b]))
    np.save(f"{d}/subbad1.npy", np.array([1, 2], dtype=np.int64))
    np.save(f"{d}/count.npy", np.float64(40))
    # psdshrink: noisy (indefinite) blocks, a definite one, a singular
    # positive semi-definite one, and a definite target for --target FILE.
    for i, k in enumerate([6, 4]):
        a = rng.normal(size=(k, k))
        c = a @ a.T / k
        z = rng.normal(size=(k, k)) * 0.7
        np.save(f"{d}/noisy{i}.npy", c + (z + z.T) / 2)
        b = rng.normal(size=(k, k))
        np.save(f"{d}/tgt{i}.npy", b @ b.T / k + 0.1 * np.eye(k))
        np.save(f"{d}/psub{i}.npy", np.arange(k, dtype=np.int64) + 6 * i)
    a = rng.normal(size=(5, 5))
    np.save(f"{d}/pd.npy", a @ a.T + np.eye(5))
    a = rng.normal(size=(2, 5))
    np.save(f"{d}/singular.npy", a.T @ a)          # rank 2 of 5
    # A tiny covariance: identity target violates Theorem 2.
    a = rng.normal(size=(3, 3)) * 0.05
    np.save(f"{d}/small.npy", a @ a.T - 0.01 * np.eye(3))
    # An indefinite matrix that --reg 0 cannot fix.
    np.save(f"{d}/indef.npy", np.diag([1.0, -0.5]))


def sqrtm(c, inverse=False):
    w, v = np.linalg.eigh(c)
    f = 1 / np.sqrt(w) if inverse else np.sqrt(w)
    return (v * f) @ v.T


def report(name, got, want, tol):
    err = np.max(np.abs(got - want)) if got.size else 0.0
    scale = max(1.0, np.max(np.abs(want)) if want.size else 0.0)
    if got.shape != want.shape or not err <= tol * scale:
        print(f"{name}: shape {got.shape} vs {want.shape}, max |diff| "
              f"{err:.3g} > {tol:.3g} x {scale:.3g}")
        return 1
    return 0


def rows(d, dtype):
    return np.load(f"{d}/xs32.npy").astype(np.float64) if dtype == "f32" \
        else np.load(f"{d}/xs.npy")


def coral(d, out, side, reg, dtype="f64"):
    x, got = rows(d, dtype), np.load(out)
    parts = []
    for i, b in enumerate(BLOCKS):
        if side == "target":
            parts.append(x[:, b])
            continue
        cs = np.load(f"{d}/cs{i}.npy") + reg * np.eye(len(b))
        ct = np.load(f"{d}/ct{i}.npy") + reg * np.eye(len(b))
        parts.append(x[:, b] @ sqrtm(cs, True) @ sqrtm(ct))
    tol = 1e-10 if dtype == "f64" else 1e-6
    return report("coral", got.astype(np.float64), np.hstack(parts), tol)


def top(c, k):
    w, v = np.linalg.eigh(c)
    p = v[:, np.argsort(w)[::-1][:k]]
    # The tool's sign rule: the entry of largest magnitude is positive.
    for j in range(p.shape[1]):
        if p[np.argmax(np.abs(p[:, j])), j] < 0:
            p[:, j] = -p[:, j]
    return p


def sa(d, out, side, dim):
    x, got = np.load(f"{d}/xs.npy"), np.load(out)
    parts = []
    for i, b in enumerate(BLOCKS):
        k = min(dim, len(b))
        ps = top(np.load(f"{d}/cs{i}.npy"), k)
        pt = top(np.load(f"{d}/ct{i}.npy"), k)
        parts.append(x[:, b] @ pt if side == "target"
                     else x[:, b] @ ps @ (ps.T @ pt))
    return report("sa", got, np.hstack(parts), 1e-10)


def target_of(c, target, tfile):
    if target == "identity":
        return np.eye(c.shape[0])
    if target == "diag":
        dg = np.diag(c)
        m = np.mean(np.abs(dg))
        return np.diag(np.maximum(dg, 1e-6 * m if m > 0 else 1.0))
    return np.load(tfile)


def bisect(c, s, tol):
    lo, hi = 0.0, 1.0
    if np.linalg.eigvalsh(c)[0] >= 0:
        return 0.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if np.linalg.eigvalsh(mid * s + (1 - mid) * c)[0] >= 0:
            hi = mid
        else:
            lo = mid
    return hi


def alpha(inp, name, target, info, out, tol, tfile=None):
    import scipy.linalg
    c, got = np.load(inp), np.load(out)
    s = target_of(c, target, tfile)
    meta = next(t for t in json.load(open(info))["tensors"]
                if t["name"] == name)["metadata"]
    a = float(meta["psd.alpha"])
    # Exact: alpha S + (1 - alpha) C >= 0  iff  (1 - alpha) mu + alpha >= 0
    # for mu the smallest eigenvalue of the pencil (C, S), S definite.
    mu = scipy.linalg.eigh(c, s, eigvals_only=True)[0]
    exact = 0.0 if mu >= 0 else -mu / (1 - mu)
    bad = 0
    if not (exact - 1e-12 <= a <= exact + tol + 1e-12):
        print(f"alpha {a!r} not in [exact {exact!r}, exact + tol]")
        bad = 1
    nb = bisect(c, s, tol)
    if abs(a - nb) > tol + 1e-12:
        print(f"alpha {a!r} vs numpy bisection {nb!r}")
        bad = 1
    thm = np.linalg.norm(s) < np.linalg.norm(c)
    if meta["psd.theorem2"] != ("true" if thm else "false"):
        print(f"psd.theorem2 {meta['psd.theorem2']} but numpy says {thm}")
        bad = 1
    bad |= report("matrix", got, a * s + (1 - a) * c, 1e-12)
    if np.linalg.eigvalsh(got)[0] < -1e-12 * max(1, np.linalg.norm(c)):
        print("result is not positive semi-definite")
        bad = 1
    print(f"alpha {a!r} exact {exact!r} bisection {nb!r}")
    return bad


def eigclip(inp, out, floor):
    c, got = np.load(inp), np.load(out)
    w, v = np.linalg.eigh(c)
    want = (v * np.maximum(w, floor)) @ v.T
    bad = report("eigclip", got, want, 1e-12)
    lmin = np.linalg.eigvalsh(got)[0]
    if lmin < floor - 1e-12 * max(1, np.abs(w).max()):
        print(f"smallest eigenvalue {lmin} below the floor {floor}")
        bad = 1
    if floor == 0:
        # Nearest PSD matrix: the distance is the norm of the negative
        # eigenvalues, and no shrinkage towards I gets closer.
        dist = np.linalg.norm(got - c)
        if abs(dist - np.linalg.norm(np.minimum(w, 0))) > 1e-12:
            print(f"distance {dist} is not that of the clipped part")
            bad = 1
        lam = w[0]
        a = -lam / (1 - lam) if lam < 0 else 0.0
        if np.linalg.norm(a * np.eye(len(w)) + (1 - a) * c - c) < dist - 1e-12:
            print("shrinkage is closer than eigclip")
            bad = 1
    return bad


def main(argv):
    cmd = argv[1]
    if cmd == "gen":
        gen(argv[2])
        return 0
    if cmd == "coral":
        return coral(argv[2], argv[3], argv[4], float(argv[5]),
                     *(argv[6:7] or ["f64"]))
    if cmd == "sa":
        return sa(argv[2], argv[3], argv[4], int(argv[5]))
    if cmd == "alpha":
        return alpha(argv[2], argv[3], argv[4], argv[5], argv[6],
                     float(argv[7]), *argv[8:9])
    if cmd == "eigclip":
        return eigclip(argv[2], argv[3], float(argv[4]))
    print(f"unknown command {cmd}")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
