#!/usr/bin/env bash
# cnn.sh SCRATCHDIR: DP-SGD throughput of a small CNN (Tramer and Boneh
# 2021's Fashion-MNIST network: c16k8s2p3, max-pool 2 stride 1, c32k4s2,
# max-pool 2 stride 1, d32, tanh) at batch 256, one BLAS thread, next to
# privada's own training of the same CNN without privacy in the same run
# (run by tests/bench/run).  Examples/s is the tool's own count over its
# training loop (-v).  Both convolutions (T 196 and T 25) take direct
# norms and materialised per-example gradients by nn_conv_ghost's cost
# model (lib/ml/nn.c; PRIVADA_TEST_CONV_PATH=dg forces conv 2 to ghost
# norms and the DGEMM clipped sum, as before issue 17's cost model).  The peer, Opacus 1.4.0 on
# Debian's torch 1.13 (make bench-deps), runs the same network in the same
# run (tests/bench/opacus_cnn.py, one torch thread): its source is
# extracted at bench time from a git clone (OPACUS_GIT, tag v1.4.0) into
# build/peers, with opt_einsum 3.3.0 (Opacus's one requirement Debian 12
# does not package; OPT_EINSUM_GIT, tag v3.3.0), never vendored.  When
# torch or either source is missing the peer is skipped with the reason.
# The SGEMM peak (1 thread, OpenBLAS Haswell kernels as the
# environment sets them) is peers.md's 154 GFLOP/s; a CNN example costs
# about 2.1 MFLOP of GEMM forward and backward (conv1 196 x 64 x 16 twice,
# conv2 25 x 256 x 32 three times, dense layers), so the fraction reached
# is examples/s x 2.1e6 / 154e9; the SGEMM rate of the same OpenBLAS is
# also measured in the run (tests/helpers/sgemm-peak, best of 5 of thread
# CPU time and of wall time: a shared machine lowers both), and so is the
# bound it puts on examples/s, next to what 30x Opacus would need.
# With CNN_BASE_BIN=DIR (another build's bin, e.g. main's) its rates are
# measured in the same run, interleaved with ours.  Besides the tool's
# examples/s (wall clock over its training loop), each line gives 60000
# examples over the run's CPU seconds (user + system, reading the input
# included), which other processes disturb less.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: cnn.sh SCRATCHDIR}
B=build/bin
F=/usr/share/datasets/fashion-mnist
export LC_ALL=C OPENBLAS_NUM_THREADS=1
ARCH="--arch c16k8s2p3,m2s1,c32k4s2,m2s1,d32 --activation tanh"

$B/featurize -q --format idx --dataset fmnist --labels "$F/train-labels-idx1-ubyte.gz" \
	"$F/train-images-idx3-ubyte.gz" > "$W/fm-train.tns"

# rate BIN ARGS...: examples/s of the last epoch line of BIN/dpsgd-train
# -v, and 60000 / its CPU seconds
rate() {
	local bin=$1 r
	shift
	r=$( { /usr/bin/time -f 'cpu %U %S' -o "$W/bench-time" \
		"$bin/dpsgd-train" -v --batch 256 --lr 0.05 --classes 10 $ARCH \
		-o "$W/bench-model.tns" "$@" "$W/fm-train.tns"; } 2>&1 >/dev/null |
		awk '/examples\/s/ { r = $(NF - 1) } END { print r + 0 }')
	awk -v r="$r" '$1 == "cpu" { printf "%s %.0f\n", r, 60000 / ($2 + $3) }' "$W/bench-time"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
peak() { awk -v r="$1" 'BEGIN { printf "%.1f%%", r * 2.1e6 / 154e9 * 100 }'; }

echo "== dpsgd-train CNN throughput, Fashion-MNIST 28x28x1, batch 256, 1 BLAS thread (examples/s)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
sg=$(OPENBLAS_NUM_THREADS=1 build/tests-bin/sgemm-peak 1024 5)
sgwall=$(awk '{ print $6 }' <<<"$sg")
NODP="--no-dp --epochs 1"
DP="--sigma 1 --clip 1 --public-records 60000 --epochs 1"
if [ -n "${CNN_BASE_BIN:-}" ]; then
	bplain=$(rate "$CNN_BASE_BIN" $NODP)
fi
read -r plain cplain <<<"$(rate $B $NODP)"
if [ -n "${CNN_BASE_BIN:-}" ]; then
	bdp=$(rate "$CNN_BASE_BIN" $DP)
fi
read -r dp cdp <<<"$(rate $B $DP)"
printf '%-34s %12s %10s %10s %12s\n' model non-private DP-SGD DP/non-DP "of 154 GF/s"
printf '%-34s %12.0f %10.0f %10s %12s\n' "CNN c16k8s2p3,m2s1,c32k4s2,m2s1,d32" \
	"$plain" "$dp" "$(ratio "$dp" "$plain")" "$(peak "$plain") / $(peak "$dp")"
printf '%-34s %12.0f %10.0f %10s\n' "  per CPU second" "$cplain" "$cdp" \
	"$(ratio "$cdp" "$cplain")"
if [ -n "${CNN_BASE_BIN:-}" ]; then
	read -r bp bcp <<<"$bplain"
	read -r bd bcd <<<"$bdp"
	printf '%-34s %12.0f %10.0f %10s\n' "base $CNN_BASE_BIN" "$bp" "$bd" "$(ratio "$bd" "$bp")"
	printf '%-34s %12.0f %10.0f %10s\n' "  per CPU second" "$bcp" "$bcd" "$(ratio "$bcd" "$bcp")"
	printf '%-34s %12s %10s\n' "speed-up over base (wall, CPU)" \
		"$(ratio "$plain" "$bp")/$(ratio "$cplain" "$bcp")" \
		"$(ratio "$dp" "$bd")/$(ratio "$cdp" "$bcd")"
fi
echo "(aim: DP-SGD within 1.3x of non-private, i.e. DP/non-DP >= 0.77)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$W/fm-train.tns" "$W/bench-model.tns" "$W/bench-time"
echo "SGEMM 1024^3, 1 thread, now: $(awk '{ print $4 " (CPU time), " $6 " (wall)" }' <<<"$sg") GFLOP/s;" \
	"peers.md quiet-machine peak 154: the CNN at most $(awk 'BEGIN { printf "%.0f", 154e9 / 2.1e6 }')" \
	"examples/s at 2.1 MFLOP each (non-private; more under DP)"
echo "fraction of the SGEMM rate measured now (wall): non-private $(awk -v r="$plain" -v s="$sgwall" \
	'BEGIN { printf "%.1f%%", r * 2.1e6 / (s * 1e9) * 100 }'), DP-SGD $(awk -v r="$dp" \
	-v s="$sgwall" 'BEGIN { printf "%.1f%%", r * 2.1e6 / (s * 1e9) * 100 }')"

# shellcheck source=tests/bench/peers.bash
. tests/bench/peers.bash
echo "== Opacus 1.4.0 on the same CNN, batch 256, 1 torch thread (examples/s)"
if ! why=$("$PY" -c 'import torch' 2>&1 | tail -n 1); then
	echo "skipped: python3 cannot import torch ($why; make bench-deps installs python3-torch)"
elif ! why=$(peer "$OPACUS_GIT" v1.4.0 "$P/opacus") ||
	! why=$(peer "$OPT_EINSUM_GIT" v3.3.0 "$P/opt_einsum"); then
	echo "skipped: $why"
elif ! out=$(PYTHONPATH="$P/opacus:$P/opt_einsum" "$PY" tests/bench/opacus_cnn.py \
	"$F/train-images-idx3-ubyte.gz" "$F/train-labels-idx1-ubyte.gz" 256 \
	"${BENCH_OPACUS_EXAMPLES:-10240}" 2>&1); then
	echo "skipped: Opacus did not run: $(tail -n 1 <<<"$out")"
else
	torch=$(awk '$1 == "torch" { print $2 }' <<<"$out")
	opacus=$(awk '$1 == "opacus" { print $2 }' <<<"$out")
	echo "Opacus v1.4.0 extracted by git archive from $OPACUS_GIT," \
		"opt_einsum v3.3.0 from $OPT_EINSUM_GIT, torch $("$PY" -c 'import torch; print(torch.__version__)') (Debian)"
	printf '%-34s %12s %10s %10s\n' "" torch/privada DP-SGD "DP/Opacus"
	printf '%-34s %12.0f %10.0f %10s\n' "Opacus (make_private defaults)" "$torch" "$opacus" -
	printf '%-34s %12.0f %10.0f %10s\n' "privada dpsgd-train" "$plain" "$dp" "$(ratio "$dp" "$opacus")x"
	echo "(aim: DP-SGD >= 30x Opacus; Opacus timed over ${BENCH_OPACUS_EXAMPLES:-10240} examples, privada over an epoch)"
	# The bound: even at the SGEMM rate measured now (wall clock, the way
	# Opacus and we are timed), a 2.1 MFLOP example caps the ratio.
	awk -v o="$opacus" -v s="$sgwall" 'BEGIN {
		cap = s * 1e9 / 2.1e6
		printf "bound: 30x Opacus needs %.0f examples/s = %.0f GFLOP/s of GEMM;" \
			" at 100%% of the %.1f GFLOP/s SGEMM rate measured now the CNN" \
			" runs at most %.0f examples/s = %.1fx Opacus: ", 30 * o,
			30 * o * 2.1e6 / 1e9, s, cap, cap / o
		print (cap < 30 * o ? "30x is not reachable" : "30x is within the peak")
	}'
fi
