#!/usr/bin/env bash
# rest-sigma.sh B ENCODER EPS DELTA COUNT: the noise multiplier z of the
# mixture's releases (COUNT Gaussian mechanisms of multiplier z, as
# gmm-fit --sigma z records them) that spends "the rest" of EPS on the
# source dataset: the smallest z (to 1e-4 relative) for which the RDP
# composition of the DP-SGD ENCODER's release (its train.q, train.sigma,
# train.steps) with them converts to at most EPS at DELTA.  Computed with
# rdp-account's event composition, the same curves the ledger composes;
# the pipeline still checks the result with rdp-account ledger --budget.
set -euo pipefail
B=$1 enc=$2 eps=$3 delta=$4 count=$5
read -r q sigma steps < <("$B/tns" info "$enc" | awk '
	$1 == "train.q" { q = $2 } $1 == "train.sigma" { s = $2 }
	$1 == "train.steps" { n = $2 }
	END { if (q == "" || s == "" || n == "") exit 1; print q, s, n }') ||
	{ echo "rest-sigma.sh: $enc: no DP-SGD parameters" >&2; exit 1; }
total() {
	"$B/rdp-account" -q -d "$delta" --format tsv sgm --q "$q" \
		--sigma "$sigma" --steps "$steps" + gaussian --sigma "$1" \
		--count "$count" | awk '$1 == "epsilon" { print $2 }'
}
lo=0.01 hi=100000
if awk -v e="$(total $hi)" -v t="$eps" 'BEGIN { exit !(e > t) }'; then
	echo "rest-sigma.sh: the encoder alone spends more than $eps" >&2
	exit 1
fi
# Invariant: total(hi) <= eps < total(lo) (bisection on log z).
while awk -v l="$lo" -v h="$hi" 'BEGIN { exit !(h / l > 1.0001) }'; do
	mid=$(awk -v l="$lo" -v h="$hi" 'BEGIN { printf "%.10g", sqrt(l * h) }')
	if awk -v e="$(total "$mid")" -v t="$eps" 'BEGIN { exit !(e <= t) }'; then
		hi=$mid
	else
		lo=$mid
	fi
done
echo "$hi"
