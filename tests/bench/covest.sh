#!/usr/bin/env bash
# covest on n = 10,000 rows x d = 4096 f64 features against numpy (np.cov,
# X.T @ X, and np.linalg.eigh for reference) in the same run, with the
# same number of BLAS threads on both sides: 1 (as tests/bench/run sets
# it), then every processor (COVEST_BENCH_THREADS lists them).  Called by
# tests/bench/run as `bash tests/bench/covest.sh SCRATCHDIR`.  Reports
# seconds (best of 3 wall clock, and covest's CPU seconds), the ratios, and
# the GFLOP/s of covest's SYRK step (n d^2 flops) next to the machine's
# DGEMM peak of this machine class (copied below from the project's peer
# measurements, peers.md, "Dense algebra ceiling").  The machine may be
# shared: the load average is printed before and after.
# Not a test: nothing here asserts a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: covest.sh SCRATCHDIR}
B=build/bin
PY=/usr/bin/python3
N=${COVEST_BENCH_N:-10000}
D=${COVEST_BENCH_D:-4096}
NPROC=$(nproc)
THREADS_LIST=${COVEST_BENCH_THREADS:-1 $([ "$NPROC" -gt 1 ] && echo "$NPROC")}
# DGEMM GFLOP/s, numpy -> OpenBLAS 2048x2048 with OPENBLAS_CORETYPE=Haswell,
# median of 9 on a quiet machine (peers.md): 1 thread, 2 threads.
PEAK_1=75.6
PEAK_2=143

echo "== covest: n=$N x d=$D f64, --sigma 1 --clip 100, BLAS threads: $THREADS_LIST"
echo "load average before: $(cut -d ' ' -f 1-3 /proc/loadavg)"
$PY - "$W/cov-x.npy" "$N" "$D" <<'EOF'
import sys
import numpy as np
rng = np.random.default_rng(1)
np.save(sys.argv[1], rng.standard_normal((int(sys.argv[2]), int(sys.argv[3]))))
EOF
$B/tns from-npy --name X -o "$W/cov-x.tns" "$W/cov-x.npy"
flops=$(awk -v n="$N" -v d="$D" 'BEGIN { print n * d * d }')

for THREADS in $THREADS_LIST; do
	export OPENBLAS_NUM_THREADS=$THREADS
	best=999999 gf=0 cpu=999999
	for _ in 1 2 3; do
		t0=$(date +%s.%N)
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f '%U %S' -o "$W/cov-time" \
				$B/covest -q -v --sigma 1 --clip 100 --dataset bench --assume-raw \
				-o "$W/cov-out.tns" "$W/cov-x.tns" 2> "$W/cov-err"
		else
			echo "nan 0" > "$W/cov-time"
			$B/covest -q -v --sigma 1 --clip 100 --dataset bench --assume-raw \
				-o "$W/cov-out.tns" "$W/cov-x.tns" 2> "$W/cov-err"
		fi
		t1=$(date +%s.%N)
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		best=$(awk -v a="$t" -v m="$best" 'BEGIN { print (a < m ? a : m) }')
		c=$(awk '{ print $1 + $2 }' "$W/cov-time")
		cpu=$(awk -v a="$c" -v m="$cpu" 'BEGIN { print (a < m ? a : m) }')
		g=$(sed -n 's/.*syrk [0-9.]* s, \([0-9.]*\) GFLOP\/s.*/\1/p' "$W/cov-err")
		gf=$(awk -v a="$g" -v m="$gf" 'BEGIN { print (a > m ? a : m) }')
	done
	rm -f "$W/cov-out.tns"

	read -r t_load t_cov t_syrk t_eigh < <($PY - "$W/cov-x.npy" "$THREADS" <<'EOF'
import sys, time
import numpy as np
t = time.perf_counter(); X = np.load(sys.argv[1]); t_load = time.perf_counter() - t
best = best_g = 1e9
for _ in range(3):
    t = time.perf_counter(); C = np.cov(X, rowvar=False); best = min(best, time.perf_counter() - t)
    t = time.perf_counter(); G = X.T @ X; best_g = min(best_g, time.perf_counter() - t)
t_eigh = float("nan")
if sys.argv[2] == "1":           # once, for reference (slow)
    t = time.perf_counter(); np.linalg.eigh(C); t_eigh = time.perf_counter() - t
print(t_load, best, best_g, t_eigh)
EOF
)
	# DGEMM peak of this machine class (Haswell kernels, as the
	# environment sets them).
	peak=$([ "$THREADS" -ge 2 ] && echo "$PEAK_2" || echo "$PEAK_1")
	echo "-- OPENBLAS_NUM_THREADS=$THREADS (covest and numpy)"
	printf '%-50s %8.3f s\n' "covest (read, clip, SYRK, noise, write)" "$best"
	printf '%-50s %8.3f s\n' "covest CPU time (user + sys, best)" "$cpu"
	printf '%-50s %8.3f s\n' "numpy np.cov (in memory)" "$t_cov"
	printf '%-50s %8.3f s\n' "numpy np.load + np.cov" "$(awk -v a="$t_load" -v b="$t_cov" 'BEGIN { print a + b }')"
	printf '%-50s %8.3f s\n' "numpy X.T @ X (SYRK, in memory)" "$t_syrk"
	[ "$THREADS" = 1 ] && printf '%-50s %8.3f s\n' "numpy np.linalg.eigh of the covariance (reference)" "$t_eigh"
	printf '%-50s %8.3f\n' "ratio np.cov / covest (> 1: covest faster)" "$(awk -v a="$t_cov" -v b="$best" 'BEGIN { print a / b }')"
	printf '%-50s %8.1f GFLOP/s\n' "covest SYRK step (n d^2 flops)" "$gf"
	printf '%-50s %8.1f GFLOP/s\n' "numpy X.T @ X (n d^2 flops)" "$(awk -v f="$flops" -v t="$t_syrk" 'BEGIN { print f / t / 1e9 }')"
	printf '%-50s %8s GFLOP/s\n' "DGEMM peak, $THREADS thread(s) (peers.md, 2 n d^2 flops)" "${peak:-?}"
done
rm -f "$W/cov-x.npy" "$W/cov-x.tns" "$W/cov-time" "$W/cov-err"
echo "load average after: $(cut -d ' ' -f 1-3 /proc/loadavg)"
