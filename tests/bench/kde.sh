#!/usr/bin/env bash
# kde.sh SCRATCHDIR: kde-publish (DP-PG) on the paper's MNIST-Net size,
# M = 50 models of mlp:784-1500-10 (N = 1192510 parameters), against a
# numpy implementation of the same KDE + exponential mechanism in the same
# run (run by tests/bench/run as `bash tests/bench/kde.sh SCRATCHDIR`).
#
# The models are synthetic: parameter j of model m is mu_j + N(0, 0.02^2)
# with mu_j ~ N(0, 0.05^2), float32.  Both sides use a fixed bandwidth
# 0.01, 201 candidates on [-1, 1] (step 0.01), a window of one step,
# epsilon 1 per parameter.  kde-publish's figure is its wall time for the
# whole run (reading 50 streams, the release, writing the model) with
# --threads 2, best of 3.  numpy's is the same computation written the
# way it is usually written: float32 broadcasting of the slices against
# the window ends, [chunk, ends, M], Phi by the same rational formula as
# lib/kde (numpy has no erf), the window masses, the EM weights
# exp(eps U / (2 p)) and one inverse-CDF draw per parameter (a float
# sampler, not exact); single-threaded as numpy is.  It is timed on the
# first 1/16 of the parameters (the whole would take minutes) and scaled
# to N: the ratio is per parameter.  Not a test: nothing here asserts a
# time.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: kde.sh SCRATCHDIR}
B=build/bin
PY=/usr/bin/python3
M=${KDE_BENCH_MODELS:-50}
export LC_ALL=C

echo "== kde-publish: $M models of mlp:784-1500-10 (N = 1192510), 201 candidates, fixed bandwidth"
mkdir -p "$W/kde"
$PY - "$W/kde" "$M" <<'EOF'
import sys
import numpy as np
d, M = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(1)
shapes = [("W1", (784, 1500)), ("b1", (1500,)), ("W2", (1500, 10)), ("b2", (10,))]
mu = {n: rng.normal(0, 0.05, s).astype(np.float32) for n, s in shapes}
for m in range(M):
    for n, s in shapes:
        np.save("%s/%s_%d.npy" % (d, n, m), (mu[n] + rng.normal(0, 0.02, s)).astype(np.float32))
EOF
for m in $(seq 0 $((M - 1))); do
	for t in W1:fc1/W b1:fc1/b W2:fc2/W b2:fc2/b; do
		$B/tns from-npy -q --name "model/${t#*:}" -o "$W/kde/${t%%:*}.tns" "$W/kde/${t%%:*}_$m.npy"
	done
	# Models made here: --unsafe-ledger drops the mark of unknown
	# provenance that from-npy writes (kde-publish refuses it).
	$B/tns cat -q "$W/kde/W1.tns" "$W/kde/b1.tns" "$W/kde/W2.tns" "$W/kde/b2.tns" |
		$B/tns meta set -q --unsafe-ledger -o "$W/kde/m$m.tns" \
		model.arch=mlp:784-1500-10 model.classes=10 data.name=bench
done
rm -f "$W"/kde/*_*.npy "$W"/kde/[Wb][12].tns

best=999999
for _ in 1 2 3; do
	t0=$(date +%s.%N)
	$B/kde-publish -q -e 1 -d 1e-5 --bandwidth 0.01 --threads 2 -o "$W/kde/pub.tns" "$W"/kde/m*.tns
	t1=$(date +%s.%N)
	best=$(awk -v a="$t0" -v b="$t1" -v m="$best" 'BEGIN { d = b - a; print (d < m ? d : m) }')
done

t_np=$($PY - "$W/kde" "$M" <<'EOF'
import sys, time, subprocess
import numpy as np
d, M = sys.argv[1], int(sys.argv[2])
# the models' flat parameter vectors, as numpy would hold them
P = []
for m in range(M):
    parts = []
    for t in ("model/fc1/W", "model/fc1/b", "model/fc2/W", "model/fc2/b"):
        out = subprocess.run(["build/bin/tns", "to-npy", "--tensor", t, "-o", d + "/t.npy",
                              "%s/m%d.tns" % (d, m)], check=True)
        parts.append(np.load(d + "/t.npy").ravel())
    P.append(np.concatenate(parts))
P = np.stack(P, axis=1).astype(np.float32)          # [N, M]
N = P.shape[0]
n_sub = N // 16
A = np.float32([0.0705230784, 0.0422820123, 0.0092705272, 0.0001520143, 0.0002765672, 0.0000430638])
def phi(z):
    y = np.minimum(np.abs(z) * np.float32(0.70710678), np.float32(9))
    p = ((((((A[5] * y + A[4]) * y + A[3]) * y + A[2]) * y + A[1]) * y + A[0]) * y) + np.float32(1)
    r = np.float32(1) / p
    r = r * r; r = r * r; r = r * r; r = r * r
    h = np.float32(0.5) * r
    return np.where(z >= 0, np.float32(1) - h, h)
G, step, b, eps = 201, 0.01, 0.01, 1.0
t_c = (-1 + np.arange(G) * step).astype(np.float32)
ends = (-1 - step / 2 + np.arange(G + 1) * step).astype(np.float32)
kinv = np.float32(1 / b)
from math import erf, sqrt
p = erf(step / (2 * sqrt(2) * b))
rng = np.random.default_rng(0)
out = np.empty(n_sub, np.float32)
t0 = time.perf_counter()
for s in range(0, n_sub, 512):
    x = P[s:min(s + 512, n_sub)]                        # [c, M]
    z = (ends[None, :, None] - x[:, None, :]) * kinv    # [c, G+1, M]
    F = phi(z).sum(axis=2, dtype=np.float32)            # [c, G+1]
    U = F[:, 1:] - F[:, :-1]                            # [c, G]
    w = np.exp(np.float32(eps / (2 * p)) * (U - U.max(axis=1, keepdims=True)))
    cw = np.cumsum(w, axis=1)
    r = rng.random(len(x), dtype=np.float32) * cw[:, -1]
    idx = np.minimum((cw < r[:, None]).sum(axis=1), G - 1)
    out[s:s + len(x)] = t_c[idx]
t1 = time.perf_counter()
print("%.3f" % ((t1 - t0) * N / n_sub))
EOF
)
printf '%-44s %8s s\n' "kde-publish (2 threads, whole run)" "$best"
printf '%-44s %8s s\n' "baseline: numpy float32 (scaled from N/16)" "$t_np"
printf '%-44s %8s\n' "ratio kde-publish / baseline (speed-up)" "$(awk -v a="$t_np" -v b="$best" 'BEGIN { printf "%.1f", a / b }')"
rm -rf "$W/kde"
