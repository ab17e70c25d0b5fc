#!/usr/bin/env bash
# dpsgd.sh SCRATCHDIR: training throughput of dpsgd-train on Fashion-MNIST
# at batch 256, logistic regression and MLP 784-256-10, DP-SGD next to
# training without privacy in the same run (run by tests/bench/run).
# Examples/s is the tool's own count over its training loop (-v), so
# reading the 60000 rows is not included; DP-SGD counts the expected batch
# size.  Opacus's figures (../shared/reference/peers.md, torch 2 threads)
# are context from another run, not a baseline.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: dpsgd.sh SCRATCHDIR}
B=build/bin
F=/usr/share/datasets/fashion-mnist
export LC_ALL=C
OPACUS_LR=97300
OPACUS_MLP=3248

$B/featurize -q --format idx --dataset fmnist --labels "$F/train-labels-idx1-ubyte.gz" \
	"$F/train-images-idx3-ubyte.gz" > "$W/fm-train.tns"

# rate ARGS...: examples/s of the last epoch line of dpsgd-train -v
rate() {
	$B/dpsgd-train -v --batch 256 --lr 0.05 --classes 10 -o "$W/bench-model.tns" \
		"$@" "$W/fm-train.tns" 2>&1 >/dev/null |
		awk '/examples\/s/ { r = $(NF - 1) } END { print r + 0 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== dpsgd-train throughput, Fashion-MNIST 60000 x 784, batch 256 (examples/s)"
lr_plain=$(rate --no-dp --epochs 5)
lr_dp=$(rate --sigma 1 --clip 1 --public-records 60000 --epochs 3)
mlp_plain=$(rate --no-dp --hidden 256 --epochs 2)
mlp_dp=$(rate --sigma 1 --clip 1 --public-records 60000 --hidden 256 --epochs 1)
printf '%-22s %12s %10s %10s %14s\n' model non-private DP-SGD DP/non-DP "DP/Opacus"
printf '%-22s %12.0f %10.0f %10s %14s\n' "logistic 784-10" "$lr_plain" "$lr_dp" \
	"$(ratio "$lr_dp" "$lr_plain")" "$(ratio "$lr_dp" "$OPACUS_LR")"
printf '%-22s %12.0f %10.0f %10s %14s\n' "MLP 784-256-10" "$mlp_plain" "$mlp_dp" \
	"$(ratio "$mlp_dp" "$mlp_plain")" "$(ratio "$mlp_dp" "$OPACUS_MLP")"
echo "(Opacus 1.4 DP-SGD on this kind of machine: $OPACUS_LR logistic, $OPACUS_MLP MLP;"
echo " aim: DP-SGD >= 30x Opacus and within 1.3x of non-private)"
rm -f "$W/fm-train.tns" "$W/bench-model.tns"
