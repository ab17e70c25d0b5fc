#!/usr/bin/env bash
# covest on n = 10,000 rows x d = 4096 f64 features against numpy's np.cov
# in the same run, with the same number of BLAS threads on both sides: 1,
# pinned to one processor with taskset when it exists (as tests/bench/run
# sets it), then every processor, unpinned (COVEST_BENCH_THREADS lists
# them).  The DGEMM peak (numpy: the faster of 2048 x 2048 times 2048 x
# 2048, 2 m^3 flops, and X.T @ Y below, 2 n d^2 flops) is measured in the
# same run, per CPU second, and the runs are interleaved: each
# repeat (COVEST_BENCH_REPEATS, default 3) runs covest with the exact
# sampler (the default), covest --sampler fast, then numpy (the peak,
# np.cov, X.T @ X and X.T @ Y), and the medians are reported.
# Called by tests/bench/run as `bash tests/bench/covest.sh SCRATCHDIR`.
#
# Both CPU seconds (user + sys of the process: what the work costs, and
# what a shared machine does not inflate) and wall seconds are reported;
# the ratios are np.cov / covest (> 1: covest faster).  numpy computes
# X.T @ X (np.cov's dot(X, X.T.conj()) of real rows) with DSYRK, n d^2
# flops, as covest does, not with a full GEMM (2 n d^2): X.T @ Y, of a
# copy Y of X, shows the difference.  At the DGEMM peak, n d^2 flops
# bound either side's time from below.  The machine may be shared: the
# load average is printed before and after.
# Not a test: nothing here asserts a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: covest.sh SCRATCHDIR}
B=build/bin
PY=/usr/bin/python3
N=${COVEST_BENCH_N:-10000}
D=${COVEST_BENCH_D:-4096}
R=${COVEST_BENCH_REPEATS:-3}
NPROC=$(nproc)
THREADS_LIST=${COVEST_BENCH_THREADS:-1 $([ "$NPROC" -gt 1 ] && echo "$NPROC")}

echo "== covest: n=$N x d=$D f64, --sigma 1 --clip 100, BLAS threads: $THREADS_LIST; median of $R interleaved repeats"
echo "load average before: $(cut -d ' ' -f 1-3 /proc/loadavg)"
$PY - "$W/cov-x.npy" "$N" "$D" <<'EOF2'
import sys
import numpy as np
rng = np.random.default_rng(1)
np.save(sys.argv[1], rng.standard_normal((int(sys.argv[2]), int(sys.argv[3]))))
EOF2
$B/tns from-npy --name X -o "$W/cov-x.tns" "$W/cov-x.npy"
flops=$((N * D * D))

# run_covest FILE [OPTION...]: one covest run; appends its wall and CPU
# seconds to FILE.
run_covest() {
	local out=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		"${pin[@]}" /usr/bin/time -f '%U %S' -o "$W/cov-time" \
			$B/covest -q -v --sigma 1 --clip 100 --dataset bench --assume-raw \
			"$@" -o "$W/cov-out.tns" "$W/cov-x.tns" 2> "$W/cov-err"
	else
		echo "nan 0" > "$W/cov-time"
		"${pin[@]}" $B/covest -q -v --sigma 1 --clip 100 --dataset bench --assume-raw \
			"$@" -o "$W/cov-out.tns" "$W/cov-x.tns" 2> "$W/cov-err"
	fi
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" '{ print b - a, $1 + $2 }' "$W/cov-time" >> "$out"
}

median() {	# median of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 }
	    END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for THREADS in $THREADS_LIST; do
	export OPENBLAS_NUM_THREADS=$THREADS
	pin=()
	if [ "$THREADS" = 1 ] && command -v taskset > /dev/null; then
		pin=(taskset -c "$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')")
	fi
	: > "$W/cov-c" ; : > "$W/cov-f" ; : > "$W/cov-n"
	for _ in $(seq "$R"); do
		run_covest "$W/cov-c"
		run_covest "$W/cov-f" --sampler fast
		# wall and CPU seconds of: the peak GEMM, np.cov, X.T @ X, X.T @ Y
		"${pin[@]}" $PY - "$W/cov-x.npy" >> "$W/cov-n" <<'EOF2'
import sys, time
import numpy as np
X = np.load(sys.argv[1])
Y = X.copy()
rng = np.random.default_rng(2)
A = rng.standard_normal((2048, 2048))
Bm = rng.standard_normal((2048, 2048))
out = []
for f in (lambda: A @ Bm, lambda: np.cov(X, rowvar=False),
    lambda: X.T @ X, lambda: X.T @ Y):
    w, c = time.perf_counter(), time.process_time()
    f()
    out += [time.perf_counter() - w, time.process_time() - c]
print(*out)
EOF2
	done
	rm -f "$W/cov-out.tns"
	col() { awk -v k="$2" '{ print $k }' "$1" | median; }
	cw=$(col "$W/cov-c" 1) cc=$(col "$W/cov-c" 2)
	fw=$(col "$W/cov-f" 1) fc=$(col "$W/cov-f" 2)
	gc=$(col "$W/cov-n" 2)
	vw=$(col "$W/cov-n" 3) vc=$(col "$W/cov-n" 4)
	sw=$(col "$W/cov-n" 5) sc=$(col "$W/cov-n" 6)
	yw=$(col "$W/cov-n" 7) yc=$(col "$W/cov-n" 8)
	gfl() { awk -v f="$1" -v t="$2" 'BEGIN { printf "%.1f", f / t / 1e9 }'; }
	# The peak: the faster of the two DGEMMs (the short square one pays
	# more for packing and start-up).
	peak=$(awk -v a="$(gfl $((2 * 2048 * 2048 * 2048)) "$gc")" \
	    -v b="$(gfl $((2 * flops)) "$yc")" 'BEGIN { print (a > b ? a : b) }')
	echo "-- OPENBLAS_NUM_THREADS=$THREADS (covest and numpy)${pin:+, pinned: ${pin[*]}}"
	printf '%-46s %8s %8s\n' "" "CPU s" "wall s"
	printf '%-46s %8.3f %8.3f\n' "covest (read, clip, SYRK, noise, write)" "$cc" "$cw"
	printf '%-46s %8.3f %8.3f\n' "covest --sampler fast" "$fc" "$fw"
	printf '%-46s %8.3f %8.3f\n' "numpy np.cov (in memory)" "$vc" "$vw"
	printf '%-46s %8.3f %8.3f\n' "numpy X.T @ X (DSYRK, n d^2 flops)" "$sc" "$sw"
	printf '%-46s %8.3f %8.3f\n' "numpy X.T @ Y (DGEMM, 2 n d^2 flops)" "$yc" "$yw"
	printf '%-46s %8.3f %8.3f\n' "ratio np.cov / covest (> 1: covest faster)" \
	    "$(awk -v a="$vc" -v b="$cc" 'BEGIN { print a / b }')" \
	    "$(awk -v a="$vw" -v b="$cw" 'BEGIN { print a / b }')"
	printf '%-46s %8.3f %8.3f\n' "ratio np.cov / covest --sampler fast" \
	    "$(awk -v a="$vc" -v b="$fc" 'BEGIN { print a / b }')" \
	    "$(awk -v a="$vw" -v b="$fw" 'BEGIN { print a / b }')"
	printf '%-46s %8s GFLOP/s (CPU)\n' "numpy 2048^3 DGEMM (2 m^3 flops)" "$(gfl $((2 * 2048 * 2048 * 2048)) "$gc")"
	printf '%-46s %8s GFLOP/s (CPU)\n' "numpy X.T @ Y (2 n d^2 flops)" "$(gfl $((2 * flops)) "$yc")"
	printf '%-46s %8s GFLOP/s (CPU)\n' "DGEMM peak, this run (the faster of the two)" "$peak"
	printf '%-46s %8s GFLOP/s (CPU)\n' "numpy X.T @ X (n d^2 flops)" "$(gfl "$flops" "$sc")"
	printf '%-46s %8s GFLOP/s (CPU)\n' "covest whole run (n d^2 flops)" "$(gfl "$flops" "$cc")"
	printf '%-46s %8s\n' "covest whole run, fraction of the DGEMM peak" \
	    "$(awk -v f="$flops" -v t="$cc" -v p="$peak" 'BEGIN { printf "%.2f", f / t / 1e9 / p }')"
	printf '%-46s %8s\n' "covest --sampler fast, fraction of the peak" \
	    "$(awk -v f="$flops" -v t="$fc" -v p="$peak" 'BEGIN { printf "%.2f", f / t / 1e9 / p }')"
	printf '%-46s %8s\n' "np.cov, fraction of the DGEMM peak" \
	    "$(awk -v f="$flops" -v t="$vc" -v p="$peak" 'BEGIN { printf "%.2f", f / t / 1e9 / p }')"
	printf '%-46s %8s\n' "ceiling of the ratio (covest at n d^2 / peak)" \
	    "$(awk -v f="$flops" -v t="$vc" -v p="$peak" 'BEGIN { printf "%.2f", t / (f / p / 1e9) }')"
done
rm -f "$W/cov-x.npy" "$W/cov-x.tns" "$W/cov-time" "$W/cov-err" "$W/cov-c" "$W/cov-f" "$W/cov-n"
echo "load average after: $(cut -d ' ' -f 1-3 /proc/loadavg)"
