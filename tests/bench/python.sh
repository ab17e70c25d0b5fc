#!/usr/bin/env bash
# The Python package (python/privada) next to its baselines, in the same run:
# privada.iter_rows over a 1 GiB stream (peak RSS: flat, against the RSS of
# the same process before reading; MB/s against tns verify), and
# privada.read of the Fashion-MNIST training stream (featurize: X f32
# 60000 x 784, y i32) against numpy.load of the same arrays saved as .npy
# (best of 3 wall seconds, CPU seconds (user + system) and peak RSS, each in
# a fresh process; on a shared machine the CPU seconds are the steadier
# figure, and the load average is printed).  BENCH_PY_BASE=DIR also measures
# the package in DIR (e.g. an older python/ tree: a before/after ratio in
# the same run).  Called by tests/bench/run as
# `bash tests/bench/python.sh SCRATCHDIR`.
# Not a test: nothing here asserts a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: python.sh SCRATCHDIR}
B=build/bin
PY=/usr/bin/python3
F=/usr/share/datasets/fashion-mnist
MB=${BENCH_MB:-1024}
export PYTHONPATH=$PWD/python LC_ALL=C

echo "== python: privada.iter_rows (chunk 4096 rows of 1 KiB) over 64 MiB and $MB MiB of f32 rows (USPS rows repeated)"
$B/featurize -q --label label --dataset usps data/mnist-usps/usps.csv.zst > "$W/py-usps.tns"
rows_rss() {	# rows_rss MB: iter_rows over MB MiB of rows in a fresh process
	build/bench/mkbig "$1" < "$W/py-usps.tns" > "$W/py-big.tns"
	t0=$(date +%s.%N)
	$B/tns verify "$W/py-big.tns"
	t1=$(date +%s.%N)
	$PY - "$W/py-big.tns" "$t0" "$t1" <<'EOF2'
import resource, sys, time
import privada
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
path = sys.argv[1]
base = rss()
t = time.perf_counter()
rows = nbytes = 0
for block in privada.iter_rows(path, "X", 4096):
    rows += len(block)
    nbytes += block.nbytes
dt = time.perf_counter() - t
tv = float(sys.argv[3]) - float(sys.argv[2])
mib = nbytes / 2**20
print("%-44s %8.1f MB/s, peak RSS %6.1f MiB (%.0f MiB of rows)"
      % ("privada.iter_rows", mib / dt, rss(), mib))
print("%-44s %8.1f MB/s, RSS before reading %6.1f MiB"
      % ("baseline: tns verify; python + numpy", mib / tv, base))
EOF2
}
rows_rss 64
rows_rss "$MB"
rm -f "$W/py-big.tns"

echo "== python: privada.read of Fashion-MNIST (X f32 60000 x 784, y i32) against numpy.load of .npy"
echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (before)"
$B/featurize -q --format idx --dataset fmnist --labels "$F/train-labels-idx1-ubyte.gz" \
	"$F/train-images-idx3-ubyte.gz" > "$W/py-fm.tns"
$PY - "$W/py-fm.tns" "$W" <<'EOF'
import subprocess, sys
import privada, numpy as np
s = privada.read(sys.argv[1])
np.save(sys.argv[2] + "/py-fm-X.npy", s["X"])
np.save(sys.argv[2] + "/py-fm-y.npy", s["y"])
EOF
one() {	# one KIND [PYTHONPATH]: "seconds cpu_seconds peak_rss_MiB" of one fresh process
	PYTHONPATH=${2:-$PYTHONPATH} $PY - "$1" "$W" <<'EOF'
import os, resource, sys, time
import numpy as np
import privada
kind, w = sys.argv[1], sys.argv[2]
t = time.perf_counter()
c = os.times()
if kind == "privada":
    s = privada.read(w + "/py-fm.tns")
    X, y = s["X"], s["y"]
else:
    X, y = np.load(w + "/py-fm-X.npy"), np.load(w + "/py-fm-y.npy")
dt = time.perf_counter() - t
d = os.times()
assert X.shape == (60000, 784) and y.shape == (60000,)
print(dt, d.user - c.user + d.system - c.system,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
EOF
}
best() {	# best KIND [PYTHONPATH]: the best of 3 runs' seconds and CPU seconds, the largest peak RSS
	for _ in 1 2 3; do one "$@"; done |
		awk 'NR == 1 || $1 < t { t = $1 } NR == 1 || $2 < u { u = $2 }
			$3 > m { m = $3 } END { print t, u, m }'
}
read -r t_py u_py m_py < <(best privada)
read -r t_np u_np m_np < <(best numpy)
if [ -n "${BENCH_PY_BASE:-}" ]; then
	read -r t_b u_b m_b < <(best privada "$BENCH_PY_BASE")
fi
t_z=999
for _ in 1 2 3; do	# the decompression alone: the floor of any reader
	t0=$(date +%s.%N)
	zstd -q -d -c "$W/py-fm.tns" > /dev/null
	t1=$(date +%s.%N)
	t_z=$(awk -v a="$t0" -v b="$t1" -v m="$t_z" 'BEGIN { d = b - a; print (d < m ? d : m) }')
done
awk -v a="$t_py" -v b="$t_np" -v c="$m_py" -v d="$m_np" -v z="$t_z" \
	-v ua="$u_py" -v ub="$u_np" 'BEGIN {
	printf "%-44s %8.3f s (CPU %.3f s), peak RSS %6.1f MiB\n", "privada.read", a, ua, c
	printf "%-44s %8.3f s (CPU %.3f s), peak RSS %6.1f MiB\n", "baseline: numpy.load of .npy", b, ub, d
	printf "%-44s %8.3f s\n", "baseline: zstd -d of the stream > /dev/null", z
	printf "%-44s %8.2f (time), %.2f (peak RSS)\n", "ratio privada.read / numpy.load", a / b, c / d
	printf "%-44s %8.2f\n", "ratio privada.read / zstd -d", a / z
}'
if [ -n "${BENCH_PY_BASE:-}" ]; then
	awk -v a="$t_py" -v b="$t_np" -v t="$t_b" -v u="$u_b" -v ua="$u_py" -v m="$m_b" 'BEGIN {
		printf "%-44s %8.3f s (CPU %.3f s), peak RSS %6.1f MiB\n", "baseline: privada.read of BENCH_PY_BASE", t, u, m
		printf "%-44s %8.2f (time)\n", "ratio BENCH_PY_BASE read / numpy.load", t / b
		printf "%-44s %8.2f (time), %.2f (CPU)\n", "ratio privada.read / BENCH_PY_BASE read", a / t, ua / u
	}'
fi
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"
rm -f "$W"/py-fm*
