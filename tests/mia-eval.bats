#!/usr/bin/env bats
# mia-eval: membership inference.  Data are Gaussian blobs drawn by numpy
# with fixed seeds (4 classes, 20 features).  A model trained without
# privacy for many epochs on 100 rows with random labels memorises them
# (the "overfitted" case); rows drawn afresh from the same distribution,
# never seen by it, give the "null" case, where members and non-members
# are exchangeable and every attack is a coin toss.  The figures are
# recomputed with numpy and sklearn from the --scores file and from
# predict's logits.  Statistical bounds state their false-failure rate
# (for a fresh draw of the data; the seeds are fixed).

load test_helper

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	$PY - <<'EOF'
import numpy as np
rng = np.random.default_rng(20260)
K, d = 4, 20
C = rng.normal(0, 1, (K, d))
def write(name, n, random_labels=False):
    y = rng.integers(0, K, n)
    X = C[y] + rng.normal(0, 1.5, (n, d))
    if random_labels:
        y = rng.integers(0, K, n)
    with open(name + ".csv", "w") as f:
        f.write(",".join("f%d" % i for i in range(d)) + ",label\n")
        for xi, yi in zip(X, y):
            f.write(",".join("%.6f" % v for v in xi) + ",%d\n" % yi)
write("train", 100, True)
write("out", 100)
write("in2", 1000)
write("out2", 1000)
write("shtrain", 100, True)
write("shout", 100)
EOF
	for f in train out in2 out2 shtrain shout; do
		featurize -q --label label --dataset mia $f.csv > $f.tns
	done
	local net="--no-dp --hidden 256 --epochs 300 --batch 32 --lr 0.05 --momentum 0.9 --classes 4"
	dpsgd-train -q $net -S 1 train.tns > over.tns 2> /dev/null
	dpsgd-train -q $net -S 2 shtrain.tns > shadow.tns 2> /dev/null
	printf 'a,b,label\n1,2,0\n' > two.csv
	featurize -q --label label --dataset two two.csv > two.tns
	tns pick -q -i train.tns -o nolabel.tns X
	printf 'f0,label\n1,0\n' > one.csv
	cat > check.py <<'EOF'
import csv, sys
import numpy as np
def report(path):
    rows = list(csv.DictReader(open(path), delimiter="\t"))
    return {r["class"]: r for r in rows}
def scores(path):
    rows = list(csv.DictReader(open(path), delimiter="\t"))
    m = np.array([r["set"] == "member" for r in rows])
    s = np.array([float(r["score"]) for r in rows])
    y = np.array([int(r["label"]) for r in rows])
    i = np.array([int(r["row"]) for r in rows])
    return m, s, y, i
def bacc(m, s, t):
    return ((s[m] >= t).mean() + (s[~m] < t).mean()) / 2
def best(m, s):
    b, bt = 0.5, np.inf
    for t in np.unique(s)[::-1]:
        a = bacc(m, s, t)
        if a > b:
            b, bt = a, t
    return b, bt
EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

# ---- the battery ----

@test "mia-eval --help prints the usage on stdout and exits 0" {
	run -0 --separate-stderr mia-eval --help
	[[ ${lines[0]} == "usage: mia-eval "* ]]
	[ -z "$stderr" ]
}

@test "mia-eval's --help synopsis matches its man page" {
	synopsis_matches mia-eval
}

@test "mia-eval's man page is lint-clean" {
	run -0 mandoc -Tlint -W warning "$TOP/man/mia-eval.1"
	refute_output
}

@test "mia-eval rejects an unknown option with usage on stderr" {
	run -64 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns --bogus
	refute_output
	[[ $stderr == *"usage: mia-eval"* ]]
}

@test "mia-eval needs --model, --members and --nonmembers" {
	run -64 --separate-stderr mia-eval --members train.tns --nonmembers out.tns
	refute_output
	[[ $stderr == *"--model is required"* ]]
	run -64 --separate-stderr mia-eval --model over.tns --nonmembers out.tns
	[[ $stderr == *"--members is required"* ]]
	run -64 --separate-stderr mia-eval --model over.tns --members train.tns
	[[ $stderr == *"--nonmembers is required"* ]]
}

@test "mia-eval refuses the shadow attack without shadow models, and a bad --shadow" {
	run -64 --separate-stderr mia-eval --attack shadow --model over.tns --members train.tns --nonmembers out.tns
	refute_output
	[[ $stderr == *"needs at least one --shadow"* ]]
	run -64 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns --shadow a.tns:b.tns
	[[ $stderr == *"invalid --shadow 'a.tns:b.tns'"* ]]
	run -64 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns --shadow a::c
	[[ $stderr == *"empty file name"* ]]
	run -64 --separate-stderr mia-eval --attack guess --model over.tns --members train.tns --nonmembers out.tns
	[[ $stderr == *"invalid --attack 'guess'"* ]]
}

@test "mia-eval takes no operands and at most one standard input" {
	run -64 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns extra
	refute_output
	run -64 --separate-stderr mia-eval --model over.tns --members - --nonmembers -
	refute_output
}

@test "mia-eval reports a missing input with 66" {
	run -66 --separate-stderr mia-eval --model over.tns --members nope.tns --nonmembers out.tns
	refute_output
	run -66 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns --shadow shadow.tns:nope.tns:shout.tns
	refute_output
}

@test "mia-eval rejects garbage with 65, naming the input" {
	printf 'garbage\n' > g
	run -65 --separate-stderr mia-eval --model over.tns --members - --nonmembers out.tns < g
	refute_output
	[[ $stderr == "mia-eval: <stdin>: "* ]]
	run -65 --separate-stderr mia-eval --model g --members train.tns --nonmembers out.tns
	refute_output
}

@test "mia-eval rejects a model that is not one, and wrong widths" {
	run -65 --separate-stderr mia-eval --model train.tns --members train.tns --nonmembers out.tns
	[[ $stderr == *"no model.arch key"* ]]
	run -65 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers two.tns
	refute_output
	[[ $stderr == *"two.tns: tensor 'X' has 2 features, the model takes 20"* ]]
}

@test "mia-eval needs the labels y and keeps them in the model's classes" {
	run -65 --separate-stderr mia-eval --model over.tns --members nolabel.tns --nonmembers out.tns
	refute_output
	[[ $stderr == *"nolabel.tns: no tensor 'y'"* ]]
	sed 's/,[0-9]$/,7/' out.csv > bad.csv
	featurize -q --label label --dataset mia bad.csv > bad.tns
	run -65 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers bad.tns
	[[ $stderr == *"label 7 outside the model's classes [0, 4)"* ]]
}

@test "mia-eval rejects a shadow model with another number of classes" {
	featurize -q --label label --dataset one one.csv > one.tns
	dpsgd-train -q --no-dp -S 1 --epochs 1 --classes 2 one.tns > m2.tns 2> /dev/null
	run -65 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns --shadow m2.tns:one.tns:one.tns
	refute_output
	[[ $stderr == *"m2.tns: the shadow model has 2 classes, the model 4"* ]]
}

@test "mia-eval reports a write error on /dev/full with 74" {
	run -74 --separate-stderr bash -c 'mia-eval --model over.tns --members train.tns --nonmembers out.tns > /dev/full'
}

@test "mia-eval cannot create the report in a missing directory: 73, nothing left" {
	run -73 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns -o nodir/r.txt
	refute_output
	run -73 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns --scores nodir/s.tsv -o r2.txt
	[ ! -e r2.txt ]
}

@test "mia-eval's text report says it is not a DP release" {
	run -0 mia-eval --model over.tns --members train.tns --nonmembers out.tns
	[[ $output == *"not a differentially private release"* ]]
	[[ ${lines[0]} == "membership inference: loss threshold (Yeom et al. 2018)"* ]]
}

@test "mia-eval -o writes the report to the file, nothing to stdout" {
	run -0 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns --report-format tsv -o r.tsv
	refute_output
	run -0 head -1 r.tsv
	[ "$output" = $'attack\tclass\tmembers\tnonmembers\tmodel_acc_members\tmodel_acc_nonmembers\tauc\tacc_best\tacc_half\tacc_mean\tacc_shadow\tthr_best\tthr_mean\tthr_shadow' ]
	run -0 wc -l < r.tsv
	[ "$output" = 6 ]
}

# ---- known answers ----

@test "mia-eval's loss scores are minus the cross-entropy of predict's logits" {
	mia-eval --model over.tns --members train.tns --nonmembers out.tns --scores s.tsv > /dev/null
	predict -q --model over.tns --emit logits train.tns > lt.tns
	predict -q --model over.tns --emit logits out.tns > lo.tns
	tns to-csv --tensor logits -o lt.csv lt.tns
	tns to-csv --tensor logits -o lo.csv lo.tns
	run -0 $PY -c '
from check import *
from scipy.special import logsumexp
m, s, y, i = scores("s.tsv")
Z = np.vstack([np.loadtxt("lt.csv", delimiter=","), np.loadtxt("lo.csv", delimiter=",")])
yl = np.concatenate([np.loadtxt(f, delimiter=",", skiprows=1, usecols=20) for f in ("train.csv", "out.csv")]).astype(int)
ref = Z[np.arange(len(yl)), yl] - logsumexp(Z, axis=1)
assert (y == yl).all() and m.sum() == 100 and (~m).sum() == 100
assert np.abs(s - ref).max() < 1e-4 * (1 + np.abs(ref).max()), np.abs(s - ref).max()
print("ok")'
	[ "$output" = ok ]
}

@test "mia-eval's AUC and accuracies agree with sklearn and numpy on its scores" {
	for a in loss confidence; do
		mia-eval --attack $a --model over.tns --members train.tns --nonmembers out.tns --scores s-$a.tsv --report-format tsv -o r-$a.tsv
	done
	run -0 $PY -c '
from check import *
from sklearn.metrics import roc_auc_score
for a in ("loss", "confidence"):
    R = report("r-%s.tsv" % a)
    m, s, y, i = scores("s-%s.tsv" % a)
    for c in ["all"] + [str(k) for k in range(4)]:
        sel = np.ones(len(m), bool) if c == "all" else (y == int(c))
        mm, ss, ii = m[sel], s[sel], i[sel]
        r = R[c]
        assert int(r["members"]) == mm.sum() and int(r["nonmembers"]) == (~mm).sum()
        assert abs(float(r["auc"]) - roc_auc_score(mm, ss)) < 1e-5, (a, c)
        b, bt = best(mm, ss)
        assert abs(float(r["acc_best"]) - b) < 1e-5, (a, c, r["acc_best"], b)
        # two folds by the parity of the row index
        h = []
        for f in (0, 1):
            A, B = (ii % 2 == f), (ii % 2 != f)
            _, t = best(mm[A], ss[A])
            h.append(bacc(mm[B], ss[B], t))
        assert abs(float(r["acc_half"]) - np.mean(h)) < 1e-5, (a, c)
        t = ss[mm].mean()
        assert abs(float(r["acc_mean"]) - bacc(mm, ss, t)) < 1e-5, (a, c)
        sgn = -1 if a == "loss" else 1
        assert abs(float(r["thr_mean"]) - sgn * t) < 1e-5 * (1 + abs(t))
print("ok")'
	[ "$output" = ok ]
}

@test "mia-eval counts ties in the AUC as one half" {
	# Logistic regression with zero weights gives every row the same loss:
	# ln 4.  AUC exactly 1/2, best accuracy 1/2 at a loss threshold of
	# -inf (nobody is a member), mean threshold ln 4 (everybody).
	$PY -c 'import numpy as np; np.save("W.npy", np.zeros((20, 4), np.float32)); np.save("b.npy", np.zeros(4, np.float32))'
	tns from-npy --name model/fc1/W -o W.tns W.npy
	tns from-npy --name model/fc1/b -o b.tns b.npy
	tns cat -o f0.tns W.tns b.tns
	tns meta set -i f0.tns -o flat.tns model.arch=logreg:20-4 model.classes=4
	run -0 mia-eval --model flat.tns --members train.tns --nonmembers out.tns --report-format tsv
	[[ ${lines[1]} == $'loss\tall\t100\t100\t'*$'\t0.5\t0.5\t0.5\t0.5\t-\t-inf\t1.38629\t-' ]]
}

@test "mia-eval finds about 1/2 on a model that never saw the members" {
	# in2 and out2 (1000 rows each) are exchangeable for the model.  AUC:
	# sd sqrt((n1+n0+1)/(12 n1 n0)) = 0.0129, bound 4.5 sd (two-sided
	# false failure 7e-6).  best: 1/2 + D/2 with D the two-sample KS
	# statistic, P(D > 2.4/sqrt(500)) <= 2 exp(-2 2.4^2) = 2e-5.  half and
	# mean: a threshold independent of the rows scored (mean: nearly),
	# balanced accuracy sd <= 0.0158 (half) and 0.0112 (mean); bound 0.071
	# (4.5 sd).  Total false-failure rate below 1e-4.
	for a in loss confidence; do
		mia-eval --attack $a --model over.tns --members in2.tns --nonmembers out2.tns --report-format tsv -o n-$a.tsv
	done
	mia-eval --attack shadow --shadow shadow.tns:shtrain.tns:shout.tns --model over.tns --members in2.tns --nonmembers out2.tns --report-format tsv -o n-shadow.tsv
	run -0 $PY -c '
from check import *
for a in ("loss", "confidence", "shadow"):
    r = report("n-%s.tsv" % a)["all"]
    assert abs(float(r["auc"]) - 0.5) < 0.058, (a, r["auc"])
    assert 0.5 <= float(r["acc_best"]) < 0.554, (a, r["acc_best"])
    assert abs(float(r["acc_half"]) - 0.5) < 0.071, (a, r["acc_half"])
    if a != "shadow":
        assert abs(float(r["acc_mean"]) - 0.5) < 0.071, (a, r["acc_mean"])
    else:
        assert abs(float(r["acc_shadow"]) - 0.5) < 0.071, (a, r["acc_shadow"])
print("ok")'
	[ "$output" = ok ]
}

@test "mia-eval finds the members of an overfitted model" {
	# 100 rows with random labels, memorised (training accuracy 1, test
	# accuracy near 1/4): deterministic (fixed seeds), with a wide margin.
	mia-eval --model over.tns --members train.tns --nonmembers out.tns --report-format tsv -o o.tsv
	mia-eval --attack shadow --shadow shadow.tns:shtrain.tns:shout.tns --model over.tns --members train.tns --nonmembers out.tns --report-format tsv -o os.tsv
	mia-eval --attack loss --shadow shadow.tns:shtrain.tns:shout.tns --model over.tns --members train.tns --nonmembers out.tns --report-format tsv -o ol.tsv
	run -0 $PY -c '
from check import *
r = report("o.tsv")["all"]
assert float(r["model_acc_members"]) == 1 and float(r["model_acc_nonmembers"]) < 0.5, r
assert float(r["auc"]) > 0.8 and float(r["acc_half"]) > 0.75 and float(r["acc_mean"]) > 0.75, r
r = report("os.tsv")["all"]
assert float(r["auc"]) > 0.8 and float(r["acc_shadow"]) > 0.75 and r["thr_shadow"] == "0.5", r
r = report("ol.tsv")["all"]
assert float(r["acc_shadow"]) > 0.75, r
print("ok")'
	[ "$output" = ok ]
}

@test "mia-eval's shadow scores are probabilities, one per row" {
	mia-eval --attack shadow --shadow shadow.tns:shtrain.tns:shout.tns --model over.tns --members train.tns --nonmembers out.tns --scores ss.tsv > /dev/null
	run -0 $PY -c '
from check import *
m, s, y, i = scores("ss.tsv")
assert len(s) == 200 and ((s >= 0) & (s <= 1)).all()
print("ok")'
	[ "$output" = ok ]
}

@test "mia-eval gives the same report twice" {
	mia-eval --attack shadow --shadow shadow.tns:shtrain.tns:shout.tns --model over.tns --members train.tns --nonmembers out.tns -o a.txt
	mia-eval --attack shadow --shadow shadow.tns:shtrain.tns:shout.tns --model over.tns --members train.tns --nonmembers out.tns -o b.txt
	cmp a.txt b.txt
}

@test "mia-eval's shadow attack models are sklearn's weighted, penalised logistic regressions" {
	# Per class: features = sorted log-probabilities then the true class's
	# (clamped at -50), standardised with the shadow rows' mean and
	# population sd; members and non-members weighted n/(2 n1), n/(2 n0);
	# penalty 0.01 n ||w||^2 / 2, intercept free: sklearn's C = 1/(0.01 n).
	mia-eval --attack shadow --shadow shadow.tns:shtrain.tns:shout.tns --model over.tns --members train.tns --nonmembers out.tns --scores sk.tsv > /dev/null
	for p in shadow:shtrain shadow:shout over:train over:out; do
		predict -q --model ${p%%:*}.tns --emit logits -o l.tns ${p#*:}.tns
		tns to-csv --tensor logits -o ${p/:/-}.logits.csv l.tns
	done
	run -0 $PY -c '
from check import *
from scipy.special import logsumexp
from sklearn.linear_model import LogisticRegression
def feats(z, y):
    lp = z - logsumexp(z, axis=1, keepdims=True)
    lp = np.maximum(lp, -50)
    return np.hstack([-np.sort(-lp, axis=1), lp[np.arange(len(y)), y][:, None]])
def lab(name):
    return np.loadtxt(name + ".csv", delimiter=",", skiprows=1, usecols=20).astype(int)
def lz(name):
    return np.loadtxt(name + ".logits.csv", delimiter=",")
ys_in, ys_out = lab("shtrain"), lab("shout")
F_in, F_out = feats(lz("shadow-shtrain"), ys_in), feats(lz("shadow-shout"), ys_out)
yt = np.concatenate([lab("train"), lab("out")])
Ft = np.vstack([feats(lz("over-train"), lab("train")), feats(lz("over-out"), lab("out"))])
m, s, y, i = scores("sk.tsv")
assert (y == yt).all()
worst = 0
for c in range(4):
    A = np.vstack([F_in[ys_in == c], F_out[ys_out == c]])
    t = np.r_[np.ones((ys_in == c).sum()), np.zeros((ys_out == c).sum())]
    n, n1 = len(t), t.sum()
    assert n1 >= 10 and n - n1 >= 10
    mu, sd = A.mean(0), A.std(0)
    sd[sd <= 1e-12] = 1
    w = np.where(t == 1, n / (2 * n1), n / (2 * (n - n1)))
    lr = LogisticRegression(C=1 / (0.01 * n), tol=1e-12, max_iter=100000)
    lr.fit((A - mu) / sd, t, sample_weight=w)
    q = lr.predict_proba((Ft[yt == c] - mu) / sd)[:, 1]
    worst = max(worst, np.abs(q - s[yt == c]).max())
assert worst < 1e-4, worst
print("ok")'
	[ "$output" = ok ]
}

@test "mia-eval shows '-' for what one member cannot give: the two-fold accuracy" {
	head -2 train.csv > one-member.csv
	featurize -q --label label --dataset mia one-member.csv > one-member.tns
	run -0 mia-eval --model over.tns --members one-member.tns --nonmembers out.tns --report-format tsv
	# all: 1 member (row 0: the even half only); the odd half has none.
	[[ ${lines[1]} == $'loss\tall\t1\t100\t'* ]]
	[ "$(printf '%s\n' "${lines[1]}" | cut -f 9)" = - ]
	[ "$(printf '%s\n' "${lines[1]}" | cut -f 7)" != - ]
}

# ---- progress (issue 15) ----
# Fail on the code before issue 15: mia-eval showed no progress at all.

@test "mia-eval shows the rows scored of every set and shadow model on a terminal" {
	run -0 on_tty mia-eval --model over.tns --members train.tns --nonmembers out.tns --shadow over.tns:train.tns:out.tns
	[[ $output == *"mia-eval: members: rows scored "*"(100%) "*"/s ETA 0:00"* ]]
	[[ $output == *"mia-eval: non-members: rows scored "*"(100%) "* ]]
	[[ $output == *"mia-eval: shadow model 1/1: members: rows scored "* ]]
	[[ $output == *"mia-eval: shadow model 1/1: non-members: rows scored "* ]]
}

@test "mia-eval shows no progress with -q or when stderr is not a terminal" {
	run -0 on_tty mia-eval -q --model over.tns --members train.tns --nonmembers out.tns
	[[ $output != *"rows scored"* ]]
	run -0 --separate-stderr mia-eval --model over.tns --members train.tns --nonmembers out.tns
	[[ $stderr != *"rows scored"* ]]
}
