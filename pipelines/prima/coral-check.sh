#!/usr/bin/env bash
# coral-check.sh BIN SRC.csv SRC TGT.tns CT.tns TRIAL PER GRID
#
# One trial of the CORAL paper's protocol (Sun, Feng and Saenko, AAAI
# 2016) on one task, with privada's tools and NO privacy: SRC.csv is the
# source prepared by zscore.awk (named SRC), TGT.tns the prepared target
# (featurize) and CT.tns its covariance (covest --sigma 0).  PER labelled
# source rows per class are drawn with the public seed TRIAL (sample.awk;
# PER 0: the whole source, and TRIAL is only the seed of the folds), the
# source covariance released without noise (covest --sigma 0, centred,
# one block), the rows aligned by CORAL with lambda 1 (coral-align
# --reg 1), and a logistic regression (dpsgd-train --no-dp, a fixed seed)
# trained on the raw and on the aligned source, its L2 weight decay picked
# from GRID (space-separated) by 2-fold cross-validation on the source
# rows (tns split), as the paper's linear SVM's C was.  Prints two lines:
#   trial method accuracy weight_decay
# with method noadapt or coral, accuracy in percent on all target rows.
set -euo pipefail
B=$1 csv=$2 src=$3 tgt=$4 ct=$5 trial=$6 per=$7 grid=$8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
here=$(cd "$(dirname "$0")" && pwd)
TRAIN=(--no-dp -S "$trial" --dataset "$src" --batch 32 --epochs 50 --lr 0.01)

acc() { # acc MODEL ROWS: accuracy (fraction) of MODEL on ROWS
	"$B/predict" -q --model "$1" --report-format tsv --report "$tmp/r.tsv" -o /dev/null "$2"
	awk -F '\t' '$1 == "all" { print $2 }' "$tmp/r.tsv"
}

if [ "$per" -gt 0 ]; then
	awk -v per="$per" -v seed="$trial" -f "$here/sample.awk" "$csv" > "$tmp/sub.csv"
else
	cp "$csv" "$tmp/sub.csv"
fi
"$B/featurize" -q --label label --dataset "$src" --dtype f64 -o "$tmp/noadapt.tns" "$tmp/sub.csv"
"$B/covest" -q --sigma 0 --clip 1e6 --mean released --subspaces none -o "$tmp/cs.tns" "$tmp/noadapt.tns"
"$B/coral-align" -q --reg 1 --source-cov "$tmp/cs.tns" --target-cov "$ct" -o "$tmp/coral.tns" "$tmp/noadapt.tns"

for m in noadapt coral; do
	rows=$tmp/$m.tns
	"$B/tns" split -q --parts 2 -S "$trial" --prefix "$tmp/$m-fold" "$rows"
	best= bestacc=-1
	for wd in $grid; do
		s=0
		for k in 0 1; do
			"$B/dpsgd-train" -q "${TRAIN[@]}" --weight-decay "$wd" -o "$tmp/cv.tns" "$tmp/$m-fold$k.tns"
			a=$(acc "$tmp/cv.tns" "$tmp/$m-fold$((1 - k)).tns")
			s=$(awk -v s="$s" -v a="$a" 'BEGIN { print s + a }')
		done
		if awk -v s="$s" -v b="$bestacc" 'BEGIN { exit !(s > b) }'; then
			best=$wd bestacc=$s
		fi
	done
	"$B/dpsgd-train" -q "${TRAIN[@]}" --weight-decay "$best" -o "$tmp/model.tns" "$rows"
	a=$(acc "$tmp/model.tns" "$tgt")
	awk -v t="$trial" -v m="$m" -v a="$a" -v w="$best" \
	    'BEGIN { printf "%s\t%s\t%.4f\t%s\n", t, m, 100 * a, w }'
done
