#!/usr/bin/env bash
# modes.sh SCRATCHDIR: seconds per epoch of dpsgd-train's adaptation modes
# next to plain classification on the same rows, in the same run (run by
# tests/bench/run).  Fashion-MNIST, 10000 labelled rows (one sixth of the
# training set) and 10000 other rows as the target, MLP 784-256-10, batch
# 100, no privacy.  Seconds per epoch are the rows of an epoch divided by
# the tool's own examples/s over its training loop (-v), so reading the
# input is not included.  The ratio is against classify: assoc adds a
# second forward/backward pass (the target batch) and the B x B
# association (about 4 B^2 h + 2 B^3 flops per step, as DGEMMs);
# gmm-uda adds the teacher's forward pass and the domain classifier.
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${1:?usage: modes.sh SCRATCHDIR}
B=build/bin
F=/usr/share/datasets/fashion-mnist
export LC_ALL=C

$B/featurize -q --format idx --dataset fmnist --labels "$F/train-labels-idx1-ubyte.gz" \
	"$F/train-images-idx3-ubyte.gz" > "$W/fm-all.tns"
$B/tns split -q --parts 6 --prefix "$W/fm" -S 1 "$W/fm-all.tns" 2>/dev/null
N=10000

# spe ARGS...: seconds per epoch from the last epoch line of dpsgd-train -v
spe() {
	$B/dpsgd-train -v -q --batch 100 --lr 0.01 --momentum 0.9 --classes 10 \
		-o "$W/bench-out.tns" "$@" 2>&1 >/dev/null |
		awk -v n=$N '/examples\/s/ { r = $(NF - 1) } END { printf "%.3f", n / r }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== dpsgd-train modes, Fashion-MNIST 10000 x 784, MLP 784-256-10, batch 100 (s/epoch)"
t_clf=$(spe --no-dp --hidden 256 --epochs 2 -S 1 "$W/fm0.tns")
cp "$W/bench-out.tns" "$W/src-model.tns"
t_assoc=$(spe --mode assoc --target "$W/fm1.tns" --hidden 256 --epochs 2 -S 1 "$W/fm0.tns")
$B/predict -q --model "$W/src-model.tns" --features 1 "$W/fm0.tns" > "$W/feat.tns"
$B/gmm-fit -q --sigma 0 -k 2 --by-label --classes 10 --covariance diag -S 1 \
	"$W/feat.tns" > "$W/gmm.tns" 2>/dev/null
$B/gmm-fit sample -q --model "$W/gmm.tns" --n $N -S 1 > "$W/samples.tns" 2>/dev/null
t_gmm=$(spe --mode gmm-uda --init "$W/src-model.tns" --source-features "$W/samples.tns" \
	--epochs 2 -S 1 "$W/fm1.tns")
printf '%-10s %10s %12s\n' mode s/epoch "vs classify"
printf '%-10s %10s %12s\n' classify "$t_clf" 1.00
printf '%-10s %10s %12s\n' assoc "$t_assoc" "$(ratio "$t_assoc" "$t_clf")"
printf '%-10s %10s %12s\n' gmm-uda "$t_gmm" "$(ratio "$t_gmm" "$t_clf")"
rm -f "$W"/fm*.tns "$W"/bench-out.tns "$W"/src-model.tns "$W"/feat.tns "$W"/gmm.tns \
	"$W"/samples.tns
