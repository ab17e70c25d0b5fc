#!/usr/bin/env bats
# pipelines/dp-vision in miniature: Fashion-MNIST (Debian
# dataset-fashion-mnist) reduced to 1% of the training rows and 2% of the
# test rows (public seeded splits), every method at one epsilon with two
# repeats and a few epochs, in a scratch output directory.  Made once in
# setup_file; the tests check the table against the tools' own reports,
# the 95% intervals against an independent computation, the ledgers and
# the report's stamp.

load test_helper

VIS="$TOP/pipelines/dp-vision"
BIN="${PRIVADA_BIN:-$TOP/build/bin}"
SMALL=(TRAIN_FRACTION=0.01 TEST_FRACTION=0.02 EPS=3 "SEEDS=1 2"
	"DP_COMMON=--classes 10 --batch 128 --lr 2 --momentum 0.9 --clip 0.1 --epochs 3"
	"NP_LR_OPTS=--classes 10 --batch 64 --lr 0.1 --epochs 3"
	"NP_MLP_OPTS=--classes 10 --batch 64 --lr 0.1 --epochs 3 --hidden 16"
	"SCATTER_MLP_OPTS=--classes 10 --batch 128 --lr 2 --clip 0.1 --epochs 3 --hidden 16"
	"SCATTER_LR_TUNED_OPTS=--classes 10 --momentum 0.9 --tune 'lr=1,2;clip=0.1;epochs=2,3;batch=128' --tune-trials geometric:2 --val-fraction 0.2"
	"DP_CNN=--classes 10 --batch 128 --lr 2 --momentum 0.9 --clip 0.1 --epochs 2 --activation tanh")

vis() {
	local dir=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$VIS" \
		--no-print-directory OUT="$dir/out" B="$BIN" "${SMALL[@]}" "$@"
}

# smeta FILE KEY: the stream metadata KEY of FILE.
smeta() {
	"$BIN/tns" info --format json "$1" | $PY -c 'import json, sys; print(json.load(sys.stdin)["metadata"][sys.argv[1]])' "$2"
}

setup_file() {
	local dir="$BATS_FILE_TMPDIR"
	vis "$dir" > "$dir/make.out" 2> "$dir/make.err"
	echo $? > "$dir/make.status"
}

setup() {
	OUT="$BATS_FILE_TMPDIR/out"
	cd "$BATS_FILE_TMPDIR"
}

@test "dp-vision: make writes a row per method and epsilon, each private where DP" {
	run -0 cat make.status
	run -0 cut -f 1-4,9,10 "$OUT/results.tsv"
	local m want=$'task\tmethod\tepsilon\treps\tverdict\tacc_private'
	for m in pixels-lr scatter-lr scatter-lr-tuned scatter-ncm pixels-cnn scatter-cnn; do
		[ $m = scatter-lr-tuned ] ||
			want+=$'\n'"fmnist	$m	np	2	not_private	yes"
		want+=$'\n'"fmnist	$m	3	2	private	yes"
	done
	[ "$output" = "$want" ]
	# Every DP run spent at most its epsilon on fmnist, and nothing else.
	run -0 awk -F '\t' 'NR > 1 && $3 == 3 { split($7, a, "="); if (a[1] != "fmnist" || a[2] + 0 > 3.0000001) print }' "$OUT/results.tsv"
	assert_output ''
}

@test "dp-vision: the scatter features are 3969 group-normalised values per image" {
	run -0 "$BIN/tns" info "$OUT/data/train-scatter.tns"
	assert_output --partial '3969'
	# GroupNorm 27: each group of 147 values has mean 0 and squared norm
	# 147 var/(var + 1e-5) <= 147, so a row's norm is at most 63 (the
	# clip bound of DP-NCM in params.mk clips nothing).
	run -0 "$BIN/tns" to-npy -o "$BATS_TEST_TMPDIR/x.npy" --tensor X "$OUT/data/train-scatter.tns"
	run -0 $PY -c '
import numpy as np, sys
x = np.load(sys.argv[1]).astype(np.float64)
n = (x * x).sum(1)
assert x.shape[1] == 3969, x.shape
assert n.max() <= 3969 * (1 + 1e-4) and n.min() > 0, (n.min(), n.max())
g = x.reshape(len(x), 27, -1)
assert abs(g.mean(2)).max() < 1e-4
assert (g * g).sum(2).max() <= 147 * (1 + 1e-4)
' "$BATS_TEST_TMPDIR/x.npy"
}

@test "dp-vision: the CNNs are Tramer & Boneh's, on pixels and on channel-last ScatterNet features" {
	# The architectures of params.mk as the models record them, every
	# default written out (dpsgd-train(1)); the DP ones spent epsilon 3.
	local m want
	for m in pixels-cnn-e3-r1 pixels-cnn-np-r2; do
		run -0 smeta "$OUT/model/$m.tns" model.arch
		assert_output 'cnn:28x28x1:c16k8s2p2,m2s1,c32k4s2p0,m2s1,d32,d10'
	done
	for m in scatter-cnn-e3-r2 scatter-cnn-np-r1; do
		run -0 smeta "$OUT/model/$m.tns" model.arch
		assert_output 'cnn:7x7x81:c16k3s2p1,c32k3s1p1,d32,d10'
	done
	run -0 smeta "$OUT/model/scatter-cnn-e3-r1.tns" model.activation
	assert_output 'tanh'
	# The channel-last features are the channel-major ones reordered
	# (featurize --layout hwc), row by row.
	run -0 "$BIN/tns" to-npy -o "$BATS_TEST_TMPDIR/c.npy" --tensor X "$OUT/data/train-scatter.tns"
	run -0 "$BIN/tns" to-npy -o "$BATS_TEST_TMPDIR/h.npy" --tensor X "$OUT/data/train-scatterhwc.tns"
	run -0 $PY -c '
import numpy as np, sys
c = np.load(sys.argv[1]); h = np.load(sys.argv[2])
assert c.shape == h.shape and c.shape[1] == 3969, (c.shape, h.shape)
assert np.array_equal(c.reshape(-1, 81, 7, 7).transpose(0, 2, 3, 1).reshape(len(c), -1), h)
' "$BATS_TEST_TMPDIR/c.npy" "$BATS_TEST_TMPDIR/h.npy"
	grep -qF '89.0' "$OUT/results.md"
	grep -qF '86.1' "$OUT/results.md"
}

@test "dp-vision: results.md gives mean and 95% interval, the stamp and the published numbers" {
	run -0 head -3 "$OUT/results.md"
	assert_output --regexp 'privada [0-9.]+, commit [0-9a-f]+'
	# The interval: t(0.975, 1) * sd / sqrt(2), from results.tsv.
	local row acc sd want
	row=$(awk -F '\t' '$2 == "scatter-lr" && $3 == 3' "$OUT/results.tsv")
	acc=$(cut -f 5 <<< "$row")
	sd=$(cut -f 6 <<< "$row")
	# The table's cell (rounded to 0.1) against scipy's quantile, within
	# the rounding of the cell (the table prints t to 3 decimals).
	local cell
	cell=$(awk -v h='## ScatterNet + logistic regression' 'index($0, h) == 1 { f = 1 } f && /^\| fmnist \|/ { print; exit }' "$OUT/results.md" |
		awk -F ' \\| ' '{ print $3 }')
	run -0 $PY -c "
import sys
from scipy.stats import t
a, s = map(float, sys.argv[1:3])
m, h = (float(v) for v in sys.argv[3].split(' ± '))
assert abs(m - a) <= 0.051 and abs(h - t.ppf(0.975, 1) * s / 2 ** 0.5) <= 0.051, (a, s, sys.argv[3])
" "$acc" "$sd" "$cell"
	grep -qF "| fmnist | " "$OUT/results.md"
	grep -qF '89.7' "$OUT/results.md"
	grep -qF 'NOT private' "$OUT/results.md"
	[ "$(head -c 4 "$OUT/accuracy-fmnist.png" | tail -c 3)" = PNG ]
}

@test "dp-vision: a run is redone only when its parameters change" {
	run -0 vis "$BATS_FILE_TMPDIR" -n
	refute_output --partial 'dpsgd-train'
	run -0 vis "$BATS_FILE_TMPDIR" -n SCATTER=1:8
	assert_output --partial 'train-scatter.tns'
	refute_output --partial 'train-pixels.tns'
	refute_output --partial 'model/pixels-lr'
	assert_output --partial 'model/scatter-lr-e3-r1'
	run -0 vis "$BATS_FILE_TMPDIR" -n 'NCM_OPTS=--classes 10 --mode ncm --clip 10'
	assert_output --partial 'model/scatter-ncm-e3-r2'
	refute_output --partial 'model/scatter-lr'
	refute_output --partial 'featurize'
	# The CNNs' regime retrains the CNNs only (their references too: a
	# method's options are one group); SCATTER redoes the channel-last
	# features and the ScatterNet CNN too.
	run -0 vis "$BATS_FILE_TMPDIR" -n 'DP_CNN=--classes 10 --batch 128 --lr 1 --clip 0.1 --epochs 2 --activation tanh'
	assert_output --partial 'model/pixels-cnn-e3-r1'
	assert_output --partial 'model/scatter-cnn-e3-r2'
	refute_output --partial 'model/pixels-lr'
	refute_output --partial 'model/scatter-lr'
	refute_output --partial 'featurize'
	run -0 vis "$BATS_FILE_TMPDIR" -n SCATTER=1:8
	assert_output --partial 'train-scatterhwc.tns'
	assert_output --partial 'model/scatter-cnn-np-r1'
	refute_output --partial 'model/pixels-cnn'
}

@test "dp-vision: scatter-lr-tuned is one repeat_select release of at most epsilon 3, with its chosen configuration" {
	run -0 tns info --format json "$OUT/model/scatter-lr-tuned-e3-r1.tns"
	echo "$output" > tuned.json
	run -0 "$PY" - tuned.json <<'EOF2'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
rel = {k.split(".")[2] for k in m if k.startswith("dp.release.")}
assert len(rel) == 1, rel
p = "dp.release.%s." % rel.pop()
assert m[p + "mechanism"] == "repeat_select", m[p + "mechanism"]
assert m[p + "dataset"] == "fmnist"
assert float(m["tune.epsilon"]) <= 3
assert m["tune.config"] in ["lr=%s;clip=0.1;epochs=%s;batch=128" % (a, b)
                            for a in ("1", "2") for b in ("2", "3")], m["tune.config"]
EOF2
}
