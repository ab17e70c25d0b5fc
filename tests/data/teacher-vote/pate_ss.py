"""Independent numpy/scipy evaluation of the data-dependent PATE bounds and
their smooth sensitivity, written from the formulas of Papernot, Song,
Mironov, Raghunathan, Talwar and Erlingsson, "Scalable Private Learning
with PATE" (ICLR 2018): Prop. 7 (q~), Thm. 6 with Prop. 10 (mu1, mu2),
the threshold step (section 4.2), Prop. 13 / Algorithms 3-5 (local
sensitivity at distance d), smooth sensitivity max_d e^(-beta d) LS(d),
and Thm. 23 (GNSS).  Test-only; teacher-vote is checked against it.
Conventions of teacher-vote's man page: LS is a running maximum over d
(and beyond the walk at least the plateau), the threshold step's LS at d
is the largest change of its bound within d of the largest count, and
SS is raised by a relative 2^-20.  teacher-vote's noise is the discrete
Gaussian, so its q are the bounds for it (teacher-vote(1)): gaps less 1,
times C = (1 + tau(sigma/sqrt 2)) / (1 - tau(sigma))^2, and for the
threshold step Phi_c((m - 1)/sigma1) / (1 - tau(sigma1)), m the integer
distance of the less likely outcome; Prop. 13's bounds become
C bl(q/C), C bu(q/C) (discrete=True)."""
import math
import numpy as np
from scipy import optimize, special, stats


def logq_gauss(c, s):
    c = np.asarray(c, dtype=float)
    i = int(np.argmax(c))
    t = [special.log_ndtr(-(c[i] - c[j]) / (math.sqrt(2) * s))
         for j in range(len(c)) if j != i]
    return min(special.logsumexp(t), math.log1p(-1 / len(c)))


def tau(s):
    return 2 * sum(math.exp(-2 * math.pi ** 2 * j * j * s * s) for j in range(1, 65))


def logc(s):
    return math.log1p(tau(s / math.sqrt(2))) - 2 * math.log1p(-tau(s))


def logq_dgauss(c, s):
    c = np.asarray(c, dtype=float)
    i = int(np.argmax(c))
    t = [special.log_ndtr(-(c[i] - c[j] - 1) / (math.sqrt(2) * s))
         for j in range(len(c)) if j != i]
    return min(special.logsumexp(t) + logc(s), math.log1p(-1 / len(c)))


def thr_dep_d(a, maxc, t, s1):
    m = math.ceil(t - maxc)
    m = m if m >= 1 else 1 - m
    lq = special.log_ndtr(-(m - 1) / s1) - math.log1p(-tau(s1))
    return rdp_dep(a, min(lq, -math.log(2)), math.sqrt(2) * s1)


def _dep_raw(a, lq, s):
    mu2 = s * math.sqrt(-lq)
    mu1 = mu2 + 1
    e1, e2 = mu1 / s ** 2, mu2 / s ** 2
    l1q = math.log(-math.expm1(lq))
    la = (a - 1) * (l1q - math.log(-math.expm1((lq + e2) * (1 - 1 / mu2))))
    lb = (a - 1) * (e1 - lq / (mu1 - 1))
    return np.logaddexp(l1q + la, lq + lb) / (a - 1)


def rdp_dep(a, lq, s):
    """Thm. 6 where its conditions hold, else (and never above) a/s^2."""
    ind = a / s ** 2
    if lq == -math.inf:
        return 0.0
    mu2 = s * math.sqrt(-lq)
    mu1 = mu2 + 1
    if not (mu1 > a and mu2 > 1):
        return ind
    e2 = mu2 / s ** 2
    if not (lq <= (mu2 - 1) * e2 - mu2 * math.log(mu1 / (mu1 - 1) * mu2 / (mu2 - 1))
            and -lq > e2):
        return ind
    return min(_dep_raw(a, lq, s), ind)


def thr_dep(a, logpr, s1):
    l1 = math.log(-math.expm1(logpr)) if logpr < 0 else -math.inf
    return rdp_dep(a, min(logpr, l1), math.sqrt(2) * s1)


def logpr_answered(maxc, t, s1):
    return stats.norm.logsf((t - maxc) / s1)


def logq0(a, s):
    ind = a / s ** 2
    ub = min(-(1 + 1 / s) ** 2, -((a - .99) / s) ** 2, -1 / s ** 2)
    if rdp_dep(a, ub, s) < ind:
        return ub
    lb = 2 * ub
    while not rdp_dep(a, lb, s) < ind:
        lb *= 1.5
    return optimize.brentq(lambda x: _dep_raw(a, x, s) - ind, lb, ub,
                           xtol=1e-14)


def logb(lq, s, k, sign, discrete=False):
    if discrete:
        lc = logc(s)
        return min(lc + logb(lq - lc, s, k, sign), 0.0)
    q = math.exp(lq)
    x = special.erfcinv(2 * q / (k - 1))
    v = (k - 1) / 2 * special.erfc(x + sign / s)
    return min(math.log(v), 0.0) if v > 0 else -math.inf


def ls_at(lq, s, k, a, q0, q1, dis):
    if q1 <= lq <= q0:
        lq = q1
    b = rdp_dep(a, lq, s)
    bu = rdp_dep(a, logb(lq, s, k, -1, dis), s)
    bl = rdp_dep(a, logb(lq, s, k, +1, dis), s)
    return max(bu - b, b - bl)


def ls_gnmax(c, n, s, a, dis=True):
    k = len(c)
    lqf = logq_dgauss if dis else logq_gauss
    q0 = logq0(a, s)
    q1 = logb(q0, s, k, +1, dis)
    plateau = ls_at(q1, s, k, a, q0, q1, dis)
    v = sorted((float(x) for x in c), reverse=True)
    lq = lqf(v, s)
    if q1 <= lq <= q0:
        return [plateau] * (n + 1)
    res = [ls_at(lq, s, k, a, q0, q1, dis)]
    left = lq > q0
    d = 0
    while d < n and ((left and lq > q0 and v[1] > 0) or (not left and lq < q1)):
        d += 1
        if left:
            v[0] += 1
            v[1] -= 1
        else:
            v[0] -= 1
            v[1] += 1
        v = sorted(v, reverse=True)
        lq = lqf(v, s)
        res.append(max(res[-1], ls_at(lq, s, k, a, q0, q1, dis)))
    res += [max(res[-1], plateau)] * (n - d)
    return res


def ls_threshold(maxc, n, t, s1, a):
    r = [thr_dep_d(a, v, t, s1) for v in range(n + 1)]

    def lsv(v):
        out = 0.0
        if v > 0:
            out = max(out, abs(r[v - 1] - r[v]))
        if v < n:
            out = max(out, abs(r[v + 1] - r[v]))
        return out
    res, best, m = [], 0.0, int(round(maxc))
    for d in range(n + 1):
        for v in (m - d, m + d):
            if 0 <= v <= n:
                best = max(best, lsv(v))
        res.append(best)
    return res


def release(hists, n, a, beta, sigma, answered=None, t=None, sigma1=None,
            max_answers=None):
    """f (data-dependent RDP at order a) and SS for histograms [Q, k], as
    teacher-vote computes them for its discrete Gaussian noise."""
    f, tot, cache, na = 0.0, np.zeros(n + 1), {}, 0
    for q, c in enumerate(hists):
        key = tuple(sorted(c, reverse=True))
        if max_answers is not None and na == max_answers:
            break
        if t is not None:
            na += int(answered[q])
            f += thr_dep_d(a, max(c), t, sigma1)
            if ("t", key) not in cache:
                cache[("t", key)] = np.array(ls_threshold(max(c), n, t, sigma1, a))
            tot += cache[("t", key)]
            if not answered[q]:
                continue
        f += rdp_dep(a, logq_dgauss(c, sigma), sigma)
        if key not in cache:
            cache[key] = np.array(ls_gnmax(list(c), n, sigma, a))
        tot += cache[key]
    ss = float(np.max(np.exp(-beta * np.arange(n + 1)) * tot)) * (1 + 2 ** -20)
    return f, ss


def gnss_rdp(a, beta, sigma):
    """Thm. 23 (without teacher-vote's grid terms)."""
    if not 2 * a * beta < 1:
        return math.inf
    return (a * math.exp(2 * beta) / sigma ** 2
            + (beta * a - 0.5 * math.log1p(-2 * a * beta)) / (a - 1))
