#!/usr/bin/env bash
# dpsgd.sh SCRATCHDIR: training throughput of dpsgd-train on Fashion-MNIST
# at batch 256, logistic regression (784-10) and MLP 784-256-10, DP-SGD
# (sigma 1, clip 1, --public-records 60000) next to training without
# privacy and next to Opacus 1.4.0 and plain torch on the same two models,
# all in the same run (run by tests/bench/run).
#
# Every measured process runs on one CPU of the current affinity
# (taskset -c; BENCH_CPU=N picks another) with one BLAS thread
# (OPENBLAS_NUM_THREADS=1; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are left
# as the environment sets them); everything else runs under nice.  Pinned
# to one CPU, dpsgd-train starts no noise workers (pv_cpus), so DP-SGD pays
# for its noise on the same core.  dpsgd-train runs BENCH_REPEATS (5) times
# per model and mode, interleaved (LR DP, LR non-DP, MLP DP, MLP non-DP,
# LR DP, ...); each run gives the tool's own examples/s (-v: wall clock
# over the training loop, reading the 60000 rows excluded; DP-SGD counts
# the expected batch size) and examples per CPU second (epochs x 60000
# over user + system time of the process from /usr/bin/time, reading and
# featurize-written input decoding included).  Medians with min-max;
# DP/non-DP from the medians.
#
# The peer (tests/bench/opacus_dense.py, one torch thread, the same CPU):
# Opacus v1.4.0 make_private defaults (Poisson sampling, flat clipping,
# noise multiplier 1, clip 1, SGD lr 0.05) and plain torch SGD, the two
# models, BENCH_OPACUS_REPEATS (3) rounds, each over about 60000 (LR) and
# BENCH_OPACUS_MLP (10240) examples (MLP).  Its source is extracted at
# bench time from git clones (OPACUS_GIT, OPT_EINSUM_GIT) into build/peers
# as cnn.sh does, never vendored; without torch or either clone the peer
# is skipped with the reason.  Ratios: privada DP / Opacus DP and privada
# non-DP / torch, per wall second and per CPU second, from the medians.
#
# The fraction of the SGEMM rate: tests/helpers/sgemm-peak (1024^3, best of
# 5, one thread, the same CPU) before and after the runs; the faster of the
# two is the peak.  Flops counted per MLP example: forward 2(784*256 +
# 256*10), backward the weight gradients, as many again, and the input
# gradient of the second layer only, 2*256*10 (the first layer's input
# gradient is not computed): 818,176 flops.  DP-SGD's per-example norms and
# clipping are not counted, nor the biases, the activations or the loss.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: dpsgd.sh SCRATCHDIR}
B=build/bin
F=/usr/share/datasets/fashion-mnist
export LC_ALL=C OPENBLAS_NUM_THREADS=1
REP=${BENCH_REPEATS:-5}
OREP=${BENCH_OPACUS_REPEATS:-3}
OMLP=${BENCH_OPACUS_MLP:-10240}
OLR=60000
LREP=20
MLPEP=3
MLP_FLOPS=$((2 * (784 * 256 + 256 * 10) * 2 + 2 * 256 * 10))
# one CPU of the current affinity: the last of the list
CPU=${BENCH_CPU:-$(awk '$1 == "Cpus_allowed_list:" { print $2 }' /proc/self/status |
	tr ',' '\n' | tail -n 1 | sed 's/.*-//')}
PIN="taskset -c $CPU"

echo "== dpsgd-train against Opacus 1.4.0, Fashion-MNIST 60000 x 784, batch 256, CPU $CPU only, 1 thread each"
echo "commit $(git describe --always --dirty 2>/dev/null || echo unknown);" \
	"OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
nice $B/featurize -q --format idx --dataset fmnist --labels "$F/train-labels-idx1-ubyte.gz" \
	"$F/train-images-idx3-ubyte.gz" > "$W/fm-train.tns"
sg0=$($PIN build/tests-bin/sgemm-peak 1024 5)

# run KEY EPOCHS ARGS...: one pinned dpsgd-train; appends "KEY wall cpu
# outside" (examples/s of the last epoch line, EPOCHS x 60000 over CPU
# seconds, and the CPU seconds outside the training loop: the process's
# less the loop's wall time, the loop being CPU-bound on its pinned CPU)
# to $W/dpsgd-rates
run() {
	local key=$1 ep=$2 r
	shift 2
	r=$( { /usr/bin/time -f 'cpu %U %S' -o "$W/bench-time" $PIN \
		$B/dpsgd-train -v --batch 256 --lr 0.05 --classes 10 --epochs "$ep" \
		-o "$W/bench-model.tns" "$@" "$W/fm-train.tns"; } 2>&1 >/dev/null |
		awk '/examples\/s/ { r = $(NF - 1) } END { print r + 0 }')
	awk -v k="$key" -v r="$r" -v n=$((ep * 60000)) \
		'$1 == "cpu" { c = $2 + $3; o = r > 0 ? c - n / r : 0
			printf "%s %s %.0f %.3f\n", k, r, n / c, o }' \
		"$W/bench-time" >> "$W/dpsgd-rates"
}
DP="--sigma 1 --clip 1 --public-records 60000"
: > "$W/dpsgd-rates"
for _ in $(seq "$REP"); do
	run lr-dp $LREP $DP
	run lr-plain $LREP --no-dp
	run mlp-dp $MLPEP $DP --hidden 256
	run mlp-plain $MLPEP --no-dp --hidden 256
done

# spread FILE KEY COL: "median min max" of column COL of FILE's KEY lines
spread() {
	awk -v k="$2" -v c="$3" '$1 == k { print $c }' "$1" | sort -g |
		awk 'function f(x) { return sprintf(x >= 100 ? "%.0f" : "%.3f", x) }
		{ v[NR] = $1 } END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			print f(m), f(v[1]), f(v[NR]) }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# cell "median min max": "median (min-max)"
cell() { awk '{ printf "%s (%s-%s)", $1, $2, $3 }' <<<"$1"; }
med() { cut -d' ' -f1 <<<"$1"; }

echo "dpsgd-train, $REP runs each interleaved, medians (min-max); LR $LREP epochs, MLP $MLPEP epochs a run"
printf '%-16s %-8s %-24s %-24s %9s\n' model per non-private DP-SGD DP/non-DP
declare -A M
for m in lr mlp; do
	for col in 2 3; do
		p=$(spread "$W/dpsgd-rates" "$m-plain" $col)
		d=$(spread "$W/dpsgd-rates" "$m-dp" $col)
		M[$m-plain-$col]=$(med "$p")
		M[$m-dp-$col]=$(med "$d")
		printf '%-16s %-8s %-24s %-24s %9s\n' \
			"$([ $m = lr ] && echo 'LR 784-10' || echo 'MLP 784-256-10')" \
			"$([ $col = 2 ] && echo wall-s || echo CPU-s)" \
			"$(cell "$p")" "$(cell "$d")" "$(ratio "$(med "$d")" "$(med "$p")")"
	done
done
echo "(aim: DP/non-DP >= 0.9 for both models on one core; wall-s is the tool's -v rate over"
echo " its training loop, CPU-s the epochs' examples over the process's user + system time)"
echo "CPU seconds outside the training loop (reading the input, setup; medians):" \
	"LR $(med "$(spread "$W/dpsgd-rates" lr-plain 4)")/$(med "$(spread "$W/dpsgd-rates" lr-dp 4)")," \
	"MLP $(med "$(spread "$W/dpsgd-rates" mlp-plain 4)")/$(med "$(spread "$W/dpsgd-rates" mlp-dp 4)")" \
	"(non-private/DP)"

sg1=$($PIN build/tests-bin/sgemm-peak 1024 5)
read -r sgcpu sgwall <<<"$(printf '%s\n%s\n' "$sg0" "$sg1" |
	awk '{ if ($4 > c) c = $4; if ($6 > w) w = $6 } END { print c, w }')"
echo "SGEMM 1024^3, 1 thread, CPU $CPU: $(awk '{ print $4 "/" $6 }' <<<"$sg0") before," \
	"$(awk '{ print $4 "/" $6 }' <<<"$sg1") after (CPU time/wall, GFLOP/s); peak taken: $sgcpu / $sgwall"
frac() { awk -v r="$1" -v f="$MLP_FLOPS" -v s="$2" 'BEGIN { printf "%.1f%%", r * f / (s * 1e9) * 100 }'; }
echo "MLP fraction of that SGEMM rate at $MLP_FLOPS flops an example:" \
	"non-private $(frac "${M[mlp-plain-2]}" "$sgwall") (wall) / $(frac "${M[mlp-plain-3]}" "$sgcpu") (CPU)," \
	"DP-SGD $(frac "${M[mlp-dp-2]}" "$sgwall") (wall) / $(frac "${M[mlp-dp-3]}" "$sgcpu") (CPU)"

# shellcheck source=tests/bench/peers.bash
. tests/bench/peers.bash
echo "== Opacus 1.4.0 and torch on the same models, batch 256, 1 torch thread, CPU $CPU"
if ! why=$(nice "$PY" -c 'import torch' 2>&1 | tail -n 1); then
	echo "skipped: python3 cannot import torch ($why; make bench-deps installs python3-torch)"
elif ! why=$(peer "$OPACUS_GIT" v1.4.0 "$P/opacus") ||
	! why=$(peer "$OPT_EINSUM_GIT" v3.3.0 "$P/opt_einsum"); then
	echo "skipped: $why"
elif ! PYTHONPATH="$P/opacus:$P/opt_einsum" $PIN "$PY" tests/bench/opacus_dense.py \
	"$F/train-images-idx3-ubyte.gz" "$F/train-labels-idx1-ubyte.gz" 256 \
	"$OREP" "$OLR" "$OMLP" > "$W/opacus-rates" 2>&1; then
	echo "skipped: Opacus did not run: $(tail -n 1 "$W/opacus-rates")"
else
	echo "Opacus v1.4.0 extracted by git archive from $OPACUS_GIT," \
		"opt_einsum v3.3.0 from $OPT_EINSUM_GIT, torch $(nice "$PY" -c \
		'import torch; print(torch.__version__)') (Debian); $OREP rounds," \
		"LR over $OLR examples, MLP over $OMLP"
	printf '%-16s %-8s %-24s %-24s %11s %11s\n' model per torch Opacus \
		"privada/tor" "DP/Opacus"
	for m in lr mlp; do
		for col in 3 4; do
			awk -v k="$m" -v c="$col" '$1 == k && $2 == "opacus" { print $1, $c }' \
				"$W/opacus-rates" > "$W/opacus-dp"
			o=$(spread "$W/opacus-dp" "$m" 2)
			awk -v k="$m" -v c="$col" '$1 == k && $2 == "torch" { print $1, $c }' \
				"$W/opacus-rates" > "$W/opacus-plain"
			t=$(spread "$W/opacus-plain" "$m" 2)
			printf '%-16s %-8s %-24s %-24s %11s %11s\n' \
				"$([ $m = lr ] && echo 'LR 784-10' || echo 'MLP 784-256-10')" \
				"$([ $col = 3 ] && echo wall-s || echo CPU-s)" \
				"$(cell "$t")" "$(cell "$o")" \
				"$(ratio "${M[$m-plain-$((col - 1))]}" "$(med "$t")")x" \
				"$(ratio "${M[$m-dp-$((col - 1))]}" "$(med "$o")")x"
		done
	done
	echo "(aim: DP MLP >= 100x Opacus, DP LR >= 30x, per core; privada/tor is privada non-DP over"
	echo " torch; Opacus's CPU-s is over its timed loop only, privada's over the whole process)"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$W/fm-train.tns" "$W/bench-model.tns" "$W/bench-time" "$W/dpsgd-rates" \
	"$W/opacus-rates" "$W/opacus-dp" "$W/opacus-plain"
