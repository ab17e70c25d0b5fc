#!/usr/bin/env bash
# coral-align and psdshrink at d = 4096 (n = 2000 rows, as in
# reference/peers.md, "Covariance and CORAL"), each next to numpy doing
# the same computation in the same run; reports seconds and the ratio.
# Called by tests/bench/run as `bash tests/bench/coral.sh SCRATCHDIR`.
#
# Threads: both sides run with OPENBLAS_NUM_THREADS=$CORAL_THREADS
# (default 2: numpy's BLAS and privada's OpenBLAS alike).  Wall-clock
# times of whole processes, inputs read from files, outputs written, one
# run each (a run takes tens of seconds).  Not a test: nothing asserts a
# time.
#
#   CORAL_D (4096)  CORAL_N (2000)  CORAL_THREADS (2)
#   CORAL_TOL (1e-3): the bisection tolerance of both psdshrink and the
#   numpy bisection; every numpy step is a full eigvalsh at d = 4096, so
#   1e-6 (psdshrink's default, 20 steps) takes minutes on the numpy side.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: coral.sh SCRATCHDIR}/coral
B=build/bin
PY=/usr/bin/python3
D=${CORAL_D:-4096}
N=${CORAL_N:-2000}
TOL=${CORAL_TOL:-1e-3}
export OPENBLAS_NUM_THREADS=${CORAL_THREADS:-2} LC_ALL=C
mkdir -p "$W"

wall() {	# wall CMD: seconds of one bash -c run
	local t0 t1
	t0=$(date +%s.%N)
	bash -c "$1" || return
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== CORAL and PSD shrinking, d = $D, n = $N rows, f64," \
	"OPENBLAS_NUM_THREADS=$OPENBLAS_NUM_THREADS on both sides"
$PY - "$W" "$D" "$N" <<'EOF'
import sys
import numpy as np
w, d, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = np.random.default_rng(4)
def rows(shift):
    # Correlated features: a rank-32 signal plus scaled noise.
    z = r.normal(size=(n, 32)) @ r.normal(size=(32, d)) * 0.2
    return z + r.normal(size=(n, d)) * r.uniform(0.5, 2, size=d) + shift
def cov(x):
    m = x.mean(axis=0)
    return (x - m).T @ (x - m) / x.shape[0]
xs, xt = rows(0.0), rows(1.0)
cs, ct = cov(xs), cov(xt)
e = r.normal(size=(d, d)) * 0.05
np.save(f"{w}/xs.npy", xs)
np.save(f"{w}/cs.npy", cs)
np.save(f"{w}/ct.npy", ct)
np.save(f"{w}/noisy.npy", ct + (e + e.T) / 2)
np.save(f"{w}/sub.npy", np.arange(d, dtype=np.int64))
EOF
for f in cs ct noisy; do
	$B/tns from-npy --name cov/0 "$W/$f.npy" > "$W/$f.c.tns"
done
$B/tns from-npy --name subspace/0 "$W/sub.npy" > "$W/sub.tns"
$B/tns from-npy --name X "$W/xs.npy" > "$W/xs.tns"
for f in cs ct noisy; do
	$B/tns cat "$W/$f.c.tns" "$W/sub.tns" > "$W/$f.tns"
	rm -f "$W/$f.c.tns"
done

cat > "$W/np_coral.py" <<'EOF'
import sys
import numpy as np
w = sys.argv[1]
cs, ct, xs = (np.load(f"{w}/{f}.npy") for f in ("cs", "ct", "xs"))
i = np.eye(cs.shape[0])
ws, vs = np.linalg.eigh(cs + i)
wt, vt = np.linalg.eigh(ct + i)
a = ((vs * ws ** -0.5) @ vs.T) @ ((vt * np.sqrt(wt)) @ vt.T)
np.save(f"{w}/np-aligned.npy", xs @ a)
EOF
t_tool=$(wall "$B/coral-align --source-cov $W/cs.tns --target-cov $W/ct.tns < $W/xs.tns > $W/aligned.tns")
t_np=$(wall "$PY $W/np_coral.py $W")
$B/tns to-npy --tensor X -o "$W/aligned.npy" "$W/aligned.tns"
diff=$($PY -c "import numpy as np; print('%.2g' % np.max(np.abs(np.load('$W/aligned.npy') - np.load('$W/np-aligned.npy'))))")
printf '%-52s %8s s\n' "coral-align (2 dsyevd, product, GEMM on rows)" "$t_tool"
printf '%-52s %8s s\n' "numpy (2 eigh, product, apply to Xs)" "$t_np"
printf '%-52s %8s\n' "ratio numpy / coral-align" "$(ratio "$t_np" "$t_tool")"
printf '%-52s %8s\n' "max |coral-align - numpy|" "$diff"
rm -f "$W/aligned.tns" "$W/aligned.npy" "$W/np-aligned.npy" "$W/xs.tns"

cat > "$W/np_bisect.py" <<'EOF'
import sys
import numpy as np
w, tol = sys.argv[1], float(sys.argv[2])
c = np.load(f"{w}/noisy.npy")
s = np.eye(c.shape[0])
lo, hi, steps = 0.0, 1.0, 1
if np.linalg.eigvalsh(c)[0] < 0:
    while hi - lo > tol:
        mid = (lo + hi) / 2
        steps += 1
        if np.linalg.eigvalsh(mid * s + (1 - mid) * c)[0] >= 0:
            hi = mid
        else:
            lo = mid
else:
    hi = 0.0
np.save(f"{w}/np-shrunk.npy", hi * s + (1 - hi) * c)
print(f"{hi!r} {steps}")
EOF
cat > "$W/np_exact.py" <<'EOF'
import sys
import numpy as np
import scipy.linalg
w = sys.argv[1]
c = np.load(f"{w}/noisy.npy")
lam = scipy.linalg.eigh(c, eigvals_only=True, subset_by_index=[0, 0])[0]
print(repr(-lam / (1 - lam) if lam < 0 else 0.0))
EOF
t_tool=$(wall "$B/psdshrink --tol $TOL < $W/noisy.tns > $W/shrunk.tns 2> $W/psd.log")
t_np=$(wall "$PY $W/np_bisect.py $W $TOL > $W/np.out")
t_ex=$(wall "$PY $W/np_exact.py $W > $W/exact.out")
a_tool=$($B/tns info --format json "$W/shrunk.tns" | $PY -c "import json, sys; print(json.load(sys.stdin)['tensors'][0]['metadata']['psd.alpha'])")
read -r a_np steps < "$W/np.out"
printf '%-52s %8s s\n' "psdshrink --tol $TOL (Cholesky bisection)" "$t_tool"
printf '%-52s %8s s\n' "numpy eigvalsh bisection ($steps eigvalsh)" "$t_np"
printf '%-52s %8s\n' "ratio numpy / psdshrink" "$(ratio "$t_np" "$t_tool")"
printf '%-52s %8s s\n' "scipy exact alpha (one lowest-eigenvalue solve)" "$t_ex"
printf '%-52s %s / %s / %s\n' "alpha: psdshrink / numpy / exact" "$a_tool" "$a_np" "$(cat "$W/exact.out")"
rm -rf "$W"
