#!/usr/bin/env bats
# End-to-end privacy audits (tests/audit.bash) of the mechanisms that
# tests/audit.bats, covest.bats and dpsgd-train.bats do not reach:
# dpsgd-train --mode dann (--protect target and source) and --mode ncm,
# --normalize dp's statistics (through the helper dpnorm-audit, which
# calls lib/mech/dpnorm as the tool does), gmm-fit's whole DP-EM run (a DP start and five iterations) and
# teacher-vote gnmax on teacher prediction streams, every query of a run
# at once.  Each correct mechanism's lower bound stays at or below the
# claim read from its own ledger, and is clearly above 0; each mutation
# control (a test-only --unsafe-test-* option) gives a bound above the
# claim.  Fixed seeds, Clopper-Pearson at alpha = 1e-7 per side: a correct
# mechanism fails an audit with probability at most 2e-7.
#
# The measured bounds (seeds as written) are in each test's comment.
# About 65 s in all on a quiet machine, most of it in python reading
# the audit streams.

load test_helper
load audit

FX="$DATA/audit-mech"

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	for s in src-d src-d2; do
		featurize -q --label label --dataset src "$FX/$s.csv" > $s.tns
	done
	for s in tgt-d tgt-d2; do
		featurize -q --no-label --dataset tgt "$FX/$s.csv" > $s.tns
	done
	# load(path) -> T (name -> numpy array), S (stream metadata), E
	# (the fields of the one ledger release, without its id).
	cat > load.py <<EOF
import subprocess, sys
import numpy as np
sys.path.insert(0, "$TOP/tests/vectors")
from tnsload import read, release
def load(path):
    T, M, S = read(path); return T, S, release(S)
def meta(path):
    import json
    r = subprocess.run(["tns", "info", "--format", "json", path],
                       capture_output=True, check=True, text=True)
    return json.loads(r.stdout)["metadata"]
def entry(path):
    return release(meta(path))
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

# ---- dpsgd-train --mode dann ----

# dann_audit DOMAIN [OPTION...]: one full-batch step (q = 1: B = 16 >
# N) of DANN with DOMAIN protected, 200000 trainings on D and on D' (D
# and one more row of the protected domain: the canary).  Every row is
# x = 0, so the feature extractor's output is exactly 0 (its biases start
# at 0 and ReLU'(0) = 0) whatever its random weights: no row moves F or
# the weights of H and D, and every softmax is (1/2, 1/2).  A target
# example's whole gradient is D's bias gradient (1/2, -1/2); a source
# example with label 0 adds H's (-1/2, 1/2) (norms 0.71 and 1).  Both
# exceed the clip 0.05 many times: the canary moves the noisy sum by
# exactly C along a known direction u, the worst case of the clipped
# mechanism and 14 (target) or 20 (source) times C without the clipping.
# The projection u . theta * B / noise_std is N(m, 1) on D and N(m - c,
# 1) on D', c = C / noise_std <= 1 / sigma: the mechanism's mu.
dann_audit() {
	local dom=$1 other d d2
	shift
	# The declared public size is the same for D and D' (q = 16 / 6).
	if [ $dom = target ]; then
		d="--target tgt-d.tns src-d.tns" d2="--target tgt-d2.tns src-d.tns"
		set -- --target-public-records 6 "$@"
	else
		d="--target tgt-d.tns src-d.tns" d2="--target tgt-d.tns src-d2.tns"
		set -- --public-records 6 "$@"
	fi
	dpsgd-train -q --mode dann --protect $dom --hidden 3 --audit-repeat 200000 \
		--sigma 1 --clip 0.05 --batch 16 --epochs 1 --lr 1 --classes 2 -S 51 "$@" $d > a.tns 2>/dev/null
	dpsgd-train -q --mode dann --protect $dom --hidden 3 --audit-repeat 200000 \
		--sigma 1 --clip 0.05 --batch 16 --epochs 1 --lr 1 --classes 2 -S 52 "$@" $d2 > a2.tns 2>/dev/null
	# B / noise_std, the noise's standard deviation on the step's sum
	sd=$($PY -c 'from load import entry; print(16 / float(entry("a.tns")["param.noise_std"]))')
	for f in a a2; do
		tns to-csv --tensor domain/fc1/b $f.tns > db.csv
		if [ $dom = target ]; then
			awk -F, -v k="$sd" '{ print ($1 - $2) / sqrt(2) * k }' db.csv > $f.p
		else
			tns to-csv --tensor model/fc2/b $f.tns > hb.csv
			paste -d, hb.csv db.csv > hd.csv
			awk -F, -v k="$sd" '{ print ($2 - $1 + $4 - $3) / 2 * k }' hd.csv > $f.p
		fi
	done
}

# The claim: 1 / sigma, and the ledger charges every training at q = 1:
# RDP 200000 a / (2 sigma^2).
dann_claim() {
	$PY - a.tns <<'EOF'
import sys
import numpy as np
from load import entry
E = entry(sys.argv[1])
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
s = float(E["param.sigma"])
assert E["param.q"] == "1" and E["param.steps"] == "1", E
assert np.allclose(r, 200000 * o / (2 * s * s), rtol=1e-12), r[:3]
print(1 / s)
EOF
}

@test "dann --protect target: the canary's mu lower bound stays at or below 1/sigma" {
	# fails on 7b23f82: --audit-repeat did not go with --mode dann.
	# Measured: mu_lb 0.952 against the claim 1.
	dann_audit target
	run -0 dann_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_le "$output" "$claim"
	audit_gt "$output" 0.8		# the audit has power
	run -0 $PY -c 'from load import meta; S = meta("a.tns"); print(S["train.protect"], S["dp.audit"], S["dp.raw.src"])'
	[ "$output" = "target 200000 aggregate" ]
}

@test "dann --protect target: the audit catches the target rows' gradients unclipped" {
	# Measured: mu_lb 6.52 against the claim 1 (no error in 100000:
	# the bound's ceiling at this sample size).
	PRIVADA_TEST_UNSAFE=1 dann_audit target --unsafe-test-no-clip
	run -0 dann_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_gt "$output" "$claim"
}

@test "dann --protect source: the canary's mu lower bound stays at or below 1/sigma" {
	# fails on 7b23f82: --audit-repeat did not go with --mode dann.
	# Measured: mu_lb 0.956 against the claim 1.
	dann_audit source
	run -0 dann_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_le "$output" "$claim"
	audit_gt "$output" 0.8
	run -0 $PY -c 'from load import meta; S = meta("a.tns"); print(S["train.protect"], S["dp.raw.tgt"])'
	[ "$output" = "source aggregate" ]
}

@test "dann --protect source: the audit catches the source rows' gradients unclipped" {
	# Measured: mu_lb 6.56 against the claim 1 (the ceiling, as above).
	PRIVADA_TEST_UNSAFE=1 dann_audit source --unsafe-test-no-clip
	run -0 dann_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_gt "$output" "$claim"
}

# ---- gmm-fit: the whole DP-EM run ----

# gmm_audit [OPTION...]: D is two zero rows, D' the same and a canary
# 1000 long along the first feature, clipped to B = 4.  One component
# (every responsibility is 1, whatever the model), a DP start and five
# iterations: six releases of the count, the sums and the second moments
# (the start's squares, the iterations' upper triangles), each moved by
# 1, (B, 0) and (B^2, 0, 0) by the canary.  The projection is the
# likelihood-ratio statistic of all six, sum_p v_p . x_p / sigma_p^2, so
# its shift in standard deviations is the run's mu.  3 x 12000 runs per
# input (a stream holds at most 65536 tensors, five per run).
gmm_audit() {
	local s
	featurize -q --no-label --dataset can "$DATA/gmm/canary-d.csv" > gd.tns
	featurize -q --no-label --dataset can "$DATA/gmm/canary-d2.csv" > gd2.tns
	: > a.p; : > a2.p
	for s in 1 2 3; do
		gmm-fit -q --sigma 2 --clip 4 -k 1 --iters 5 --init dp --stats \
			--audit-repeat 12000 -S 6$s "$@" gd.tns > a.tns 2>/dev/null
		gmm-fit -q --sigma 2 --clip 4 -k 1 --iters 5 --init dp --stats \
			--audit-repeat 12000 -S 7$s "$@" gd2.tns > a2.tns 2>/dev/null
		for f in a a2; do
			$PY - $f.tns >> $f.p <<'EOF'
import sys
from load import load
T, S, E = load(sys.argv[1])
sc, ss, sm = (float(E["param.sigma" + p]) for p in ("_count", "_sum", ""))
B = 4.0
for r in range(int(S["dp.audit"])):
    # the iterations' (n, s_a, s_b, S_aa, S_ab, S_bb) and the start's
    # (n, s_a, s_b, q_a, q_b), with the same noise scales: entry 3 moves
    # by B^2
    v = T["gmm/0/stats/%d" % r][:, 0, :4].sum(0) + T["gmm/0/init_stats/%d" % r][:4]
    print(repr(v[0] / sc ** 2 + B * v[1] / ss ** 2 + B * B * v[3] / sm ** 2))
EOF
		done
	done
}

# The claim: six Gaussian mechanisms of multiplier z, mu = sqrt(6) / z,
# which is what the ledger charges (RDP 12000 x 6 a / (2 z^2)).
gmm_claim() {
	$PY - a.tns <<'EOF'
import sys
import numpy as np
from load import load
T, S, E = load(sys.argv[1])
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
z = float(E["param.noise_multiplier"])
n = int(E["param.steps"]) + int(E["param.init_releases"])
assert n == 6, E
assert np.allclose(r, 12000 * n * o / (2 * z * z), rtol=1e-12), r[:3]
print(np.sqrt(n) / z)
EOF
}

@test "gmm-fit DP-EM, a DP start and five iterations: the mu lower bound stays at or below sqrt(6)/z" {
	# Measured: mu_lb 1.129 against the claim 1.2247.
	gmm_audit
	run -0 gmm_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_le "$output" "$claim"
	audit_gt "$output" 0.9		# the audit has power
}

@test "gmm-fit DP-EM: the audit catches second moments calibrated to B instead of B^2" {
	# The broken run's ledger still claims 1.2247; its true mu is
	# sqrt(6 (1/12 + 1/12 + 4/3)) = 3.  Measured: mu_lb 2.868.
	PRIVADA_TEST_UNSAFE=1 gmm_audit --unsafe-test-miscalibrate moments-b
	run -0 gmm_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_gt "$output" "$claim"
}

# ---- teacher-vote gnmax ----

# gnmax_audit [OPTION...]: 20 teacher streams (parts i/20 of one split),
# each predicting 4 queries; on D the canary teacher 0 votes class 0 on
# every query, on D' class 3.  Nine other teachers vote 0 and ten vote 3,
# so the histograms are (10, 0, 0, 10) and (9, 0, 0, 11) on every query:
# a tie the canary breaks, with classes 1 and 2 five sigma behind.  One
# release answers all 4 queries; the projection is the number of answers
# 3.  30000 releases per input.
gnmax_audit() {
	local i P=00112233aabbccdd
	$PY - <<'EOF'
import numpy as np
for i in range(20):
    np.save("t%d.npy" % i, np.full(4, 0 if i < 10 else 3, dtype=np.int32))
np.save("c.npy", np.full(4, 3, dtype=np.int32))
EOF
	for i in $(seq 0 19) c; do
		tns from-npy --name y_pred t$i.npy > p.tns 2>/dev/null ||
			tns from-npy --name y_pred c.npy > p.tns
		tns meta set --unsafe-ledger -i p.tns -o t$i.tns \
			split.part=${i/c/0}/20 split.parent=$P split.seed_source=seed \
			dp.raw.mnist=aggregate
	done
	teacher-vote -q --mechanism gnmax --classes 4 --sigma 2 --audit-repeat 30000 \
		-S 81 "$@" -o a.tns t{0..19}.tns 2>/dev/null
	teacher-vote -q --mechanism gnmax --classes 4 --sigma 2 --audit-repeat 30000 \
		-S 82 "$@" -o a2.tns tc.tns t{1..19}.tns 2>/dev/null
	for f in a a2; do
		$PY - $f.tns > $f.p <<'EOF'
import sys
from load import load
T, S, E = load(sys.argv[1])
for r in range(int(S["dp.audit"])):
    print(int((T["y/%d" % r] == 3).sum()))
EOF
	done
}

# The claim: Q queries of the Gaussian mechanism with L2 sensitivity
# sqrt(2) and noise sigma, mu = sqrt(2 Q) / sigma = 1.4142 (the ledger's
# RDP is 30000 Q a / sigma^2).
gnmax_claim() {
	$PY - a.tns <<'EOF'
import sys
import numpy as np
from load import load
T, S, E = load(sys.argv[1])
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
s, q = float(E["param.sigma"]), int(E["param.queries"])
assert q == 4 and E["neighbours"] == "replace_one", E
assert np.allclose(r, 30000 * q * o / (s * s), rtol=1e-12), r[:3]
print(np.sqrt(2 * q) / s)
EOF
}

@test "teacher-vote gnmax on teacher streams, 4 queries a release: the mu lower bound stays at or below sqrt(8)/sigma" {
	# Measured: mu_lb 1.066 against the claim 1.4142 (the answers are
	# a coarser release than the noisy counts the claim is for).
	gnmax_audit
	run -0 gnmax_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_le "$output" "$claim"
	audit_gt "$output" 1		# the audit has power
}

@test "teacher-vote gnmax: the audit catches half the noise on teacher streams" {
	# The ledger still claims sigma = 2.  Measured: mu_lb 2.088.
	PRIVADA_TEST_UNSAFE=1 gnmax_audit --unsafe-test-half-noise
	run -0 gnmax_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_gt "$output" "$claim"
}

# ---- dpsgd-train --mode ncm ----

# ncm_audit [OPTION...]: D is two zero rows (classes 0 and 1), D' the same
# and a canary 1000 long along the first feature in class 0, clipped to
# C = 1.  One release of the four class sums per run, 200000 runs per
# input; the projection is the canary's coordinate (class 0, feature 0),
# which it moves by C: its shift in noise standard deviations is the
# release's mu.
ncm_audit() {
	printf 'a,b,label\n0,0,0\n0,0,1\n' > nd.csv
	printf 'a,b,label\n0,0,0\n0,0,1\n1000,0,0\n' > nd2.csv
	featurize -q --label label --dataset can nd.csv > nd.tns
	featurize -q --label label --dataset can nd2.csv > nd2.tns
	dpsgd-train -q --mode ncm --sigma 1 --clip 1 --classes 2 \
		--audit-repeat 200000 -S 81 "$@" nd.tns > a.tns 2>/dev/null
	dpsgd-train -q --mode ncm --sigma 1 --clip 1 --classes 2 \
		--audit-repeat 200000 -S 82 "$@" nd2.tns > a2.tns 2>/dev/null
	for f in a a2; do
		$PY -c "
import numpy as np
from load import load
T, S, E = load('$f.tns')
np.savetxt('$f.p', T['ncm/sums'][:, 0], fmt='%r')"
	done
}

# The claim: one Gaussian mechanism of multiplier z per run, mu = 1 / z,
# which is what the ledger charges (RDP 200000 a / (2 z^2)).
ncm_claim() {
	$PY - a.tns <<'EOF'
import sys
import numpy as np
from load import load
T, S, E = load(sys.argv[1])
o = np.array(E["orders"].split(","), float)
r = np.array(E["rdp"].split(","), float)
z = float(E["param.noise_multiplier"])
assert np.allclose(r, 200000 * o / (2 * z * z), rtol=1e-12), r[:3]
print(1 / z)
EOF
}

@test "dpsgd-train --mode ncm: the canary's mu lower bound stays at or below 1/z" {
	# Measured: mu_lb 0.952 against the claim 1.
	ncm_audit
	run -0 ncm_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_le "$output" "$claim"
	audit_gt "$output" 0.8		# the audit has power
}

@test "dpsgd-train --mode ncm: the audit catches the noise calibrated to half the sensitivity" {
	# The broken run's ledger still claims mu = 1; its true mu is about
	# 2.  Measured: mu_lb 1.950.
	PRIVADA_TEST_UNSAFE=1 ncm_audit --unsafe-test-half-sensitivity
	run -0 ncm_claim
	claim=$output
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_gt "$output" "$claim"
}

# ---- dpsgd-train --normalize dp (lib/mech/dpnorm) ----

# dpnorm_audit [-b]: the helper dpnorm-audit releases the sums and sums of
# squares of two zero rows (D) or of those and a canary clipped to C = 4
# (D'), 200000 times each, multiplier 1; one likelihood-ratio projection
# per release.  The claim is the plan's mu, on the helper's stderr.
dpnorm_audit() {
	dpnorm-audit "$@" -n 200000 -S 91 > a.p 2> claim
	dpnorm-audit "$@" -c -n 200000 -S 92 > a2.p 2>/dev/null
}

@test "dpsgd-train --normalize dp: the canary's mu lower bound stays at or below the claim" {
	# Measured: mu_lb 0.951 against the claim 1.
	dpnorm_audit
	claim=$(awk '$1 == "claim_mu" { print $2 }' claim)
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_le "$output" "$claim"
	audit_gt "$output" 0.8		# the audit has power
}

@test "dpsgd-train --normalize dp: the audit catches the sums of squares calibrated to C instead of C^2" {
	# True mu sqrt(1/2 + 8) = 2.92 against the claim 1.  Measured:
	# mu_lb 2.841.
	dpnorm_audit -b
	claim=$(awk '$1 == "claim_mu" { print $2 }' claim)
	run -0 --separate-stderr audit_mu_lb a.p a2.p
	audit_gt "$output" "$claim"
}
