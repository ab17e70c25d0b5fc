#!/usr/bin/env bats
# teacher-vote: PATE aggregation (LNMax, GNMax, Confident GNMax) with the
# exact discrete samplers.  Known answers are recomputed with numpy from
# tests/data/teacher-vote/votes.csv; the ledger is checked against
# rdp-account and tests/data/accounting/pate*.csv; the audits use queries
# with one fixed histogram, each answered with fresh noise (independent
# releases), fixed seeds, and Clopper-Pearson bounds at alpha = 1e-7 per
# side: a correct mechanism fails an audit with probability at most 2e-7.

load test_helper
load audit

FX="$DATA/teacher-vote"
ACC="$DATA/accounting"
PARENT=00112233aabbccdd

setup_file() {
	cd "$BATS_FILE_TMPDIR"
	# votes.csv: 7 teachers x 10 queries, 4 classes.
	tns from-csv --dtype i32 --name votes "$FX/votes.csv" > raw.tns
	tns meta set --unsafe-ledger -i raw.tns -o votes.tns dp.raw.priv=row-local
	"$PY" - <<-EOF
	import numpy as np
	v = np.loadtxt("$FX/votes.csv", delimiter=",", dtype=np.int32)
	for i in range(v.shape[0]):
	    np.save("yp%d.npy" % i, v[i])
	np.save("yp_short.npy", v[0, :9])
	np.save("yp_f64.npy", v[0].astype(np.float64))
	np.save("yp_bad.npy", np.where(np.arange(10) == 4, 4, v[1]).astype(np.int32))
	Q = 200000
	# Two teachers: (m, m) = (1, 1) against (m - 1, m + 1) = (0, 2), and
	# for the threshold check a largest count of 2 against 1.
	np.save("lap_d.npy", np.array([[0] * Q, [1] * Q], dtype=np.int32))
	np.save("lap_d2.npy", np.array([[1] * Q, [1] * Q], dtype=np.int32))
	np.save("chk_d.npy", np.array([[0] * Q, [0] * Q], dtype=np.int32))
	np.save("chk_d2.npy", np.array([[0] * Q, [1] * Q], dtype=np.int32))
	np.save("tie.npy", np.array([[0] * 30000, [1] * 30000, [2] * 30000], dtype=np.int32))
	EOF
	# Vote tensors made here, so of known provenance: --unsafe-ledger
	# drops the mark of unknown provenance that from-npy writes.
	for f in lap_d lap_d2 chk_d chk_d2 tie; do
		tns from-npy --name votes $f.npy > $f.raw.tns
		tns meta set --unsafe-ledger -i $f.raw.tns -o $f.tns data.source=test
	done
	# Teacher streams: teacher i predicts row i, trained on part i/7.
	for i in 0 1 2 3 4 5 6; do
		tns from-npy --name y_pred yp$i.npy > p.tns
		tns meta set --unsafe-ledger -i p.tns -o t$i.tns split.part=$i/7 \
			split.parent=$PARENT split.seed_source=seed \
			dp.raw.mnist=aggregate data.name=usps
	done
	tns from-npy --name y_pred yp_short.npy > short.tns
	tns meta set --unsafe-ledger -i short.tns -o t_short.tns split.part=3/7 \
		split.parent=$PARENT dp.raw.mnist=aggregate
	tns from-npy --name y_pred yp_f64.npy > f64.tns
	tns from-npy --name y_pred yp_bad.npy > bad.tns
	tns meta set --unsafe-ledger -i bad.tns -o t_bad.tns split.part=1/7 \
		split.parent=$PARENT dp.raw.mnist=aggregate
	tns from-npy --name y_pred yp1.npy > p.tns
	tns meta set --unsafe-ledger -i p.tns -o t_other_parent.tns split.part=1/7 \
		split.parent=ffffffffffffffff dp.raw.mnist=aggregate
	tns meta set --unsafe-ledger -i p.tns -o t_other_n.tns split.part=1/8 \
		split.parent=$PARENT dp.raw.mnist=aggregate
	tns meta set --unsafe-ledger -i p.tns -o t_nopart.tns dp.raw.mnist=aggregate
	tns meta set --unsafe-ledger -i p.tns -o t_noparent.tns split.part=1/7 \
		dp.raw.mnist=aggregate
	tns meta set --unsafe-ledger -i p.tns -o t_badpart.tns split.part=7/7 \
		split.parent=$PARENT dp.raw.mnist=aggregate
	tns meta set --unsafe-ledger -i p.tns -o t_id.tns split.part=1/7 \
		split.parent=$PARENT split.id=aaaa dp.raw.mnist=aggregate
	tns meta set --unsafe-ledger -i p.tns -o t_other_ds.tns split.part=1/7 \
		split.parent=$PARENT dp.raw.cifar=aggregate
	tns meta set --unsafe-ledger -i p.tns -o t_rowlocal.tns split.part=1/7 \
		split.parent=$PARENT dp.raw.mnist=row-local
	tns meta set --unsafe-ledger -i p.tns -o t_unmarked.tns split.part=1/7 \
		split.parent=$PARENT
	tns meta set --unsafe-ledger -i p.tns -o t_preagg.tns split.part=1/7 \
		split.parent=$PARENT split.raw.mnist=aggregate dp.raw.mnist=aggregate
	# Data-dependent release.  big: 250 teachers (part i/250 of split
	# $PARENT), 200 queries: the reference histograms H1, H2, H4, H5, H6,
	# H8 of pate2018_rdp.csv, then 194 unanimous ones (H1).  small: 25
	# teachers, 20 queries of 4 classes, 90% agreement.
	"$PY" - <<-EOF
	import numpy as np
	H = {1: [250] + [0] * 9, 2: [240, 4, 2, 1, 1, 1, 1, 0, 0, 0],
	     4: [150, 50, 20, 10, 8, 5, 3, 2, 1, 1],
	     5: [120, 100, 10, 5, 5, 4, 3, 1, 1, 1],
	     6: [90, 85, 30, 15, 10, 8, 5, 4, 2, 1], 8: [25] * 10}
	order = [1, 2, 4, 5, 6, 8] + [1] * 194
	V = np.array([np.repeat(np.arange(10), H[h]) for h in order], dtype=np.int32).T
	np.save("big_hist.npy", np.array([np.bincount(V[:, q], minlength=10) for q in range(V.shape[1])]))
	for i in range(250):
	    np.save("bigy%d.npy" % i, V[i])
	rng = np.random.default_rng(7)
	W = np.zeros((25, 20), dtype=np.int32)
	for q in range(20):
	    W[:, q] = np.where(rng.random(25) < 0.9, q % 4, rng.integers(0, 4, 25))
	np.save("small_hist.npy", np.array([np.bincount(W[:, q], minlength=4) for q in range(20)]))
	for i in range(25):
	    np.save("smally%d.npy" % i, W[i])
	EOF
	mkdir -p big small
	for i in $(seq 0 249); do
		tns from-npy --name y_pred bigy$i.npy > p.tns
		tns meta set --unsafe-ledger -i p.tns -o big/t$i.tns split.part=$i/250 \
			split.parent=$PARENT dp.raw.mnist=aggregate
	done
	for i in $(seq 0 24); do
		tns from-npy --name y_pred smally$i.npy > p.tns
		tns meta set --unsafe-ledger -i p.tns -o small/t$i.tns split.part=$i/25 \
			split.parent=$PARENT dp.raw.mnist=aggregate
	done
	cp "$FX/pate_ss.py" .
	printf 'garbage, not a tensor stream\n' > garbage.tns
	head -c 60 votes.tns > cut.tns
	# Read outputs back: info(path) = tns info as JSON, entry(path) = the
	# fields of the one release, col(path, tensor) = its values.
	cat > tv.py <<-EOF
	import json, subprocess
	import numpy as np
	def info(path):
	    r = subprocess.run(["tns", "info", "--format", "json", path],
	                       capture_output=True, check=True, text=True)
	    return json.loads(r.stdout)
	def entry(path):
	    E = {}
	    for k, v in info(path)["metadata"].items():
	        if k.startswith("dp.release."):
	            E[k.split(".", 3)[3]] = v
	    return E
	def col(path, name):
	    r = subprocess.run(["tns", "to-csv", "--tensor", name, path],
	                       capture_output=True, check=True, text=True)
	    return np.array([int(x) for x in r.stdout.split()])
	def votes():
	    v = np.loadtxt("$FX/votes.csv", delimiter=",", dtype=int)
	    return np.array([np.bincount(v[:, q], minlength=4)
	                     for q in range(v.shape[1])])
	EOF
}

setup() {
	cd "$BATS_FILE_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

# tsv_get KEY: a value of rdp-account's tsv output in $output.
tsv_get() {
	awk -F '\t' -v k="$1" '$1 == k { print $2; f = 1 } END { exit !f }' <<< "$output"
}

# ledger_eps FILE: the epsilon of dataset mnist or priv at delta 1e-5.
ledger_eps() {
	run -0 --separate-stderr rdp-account ledger --allow-seeded --format tsv --delta 1e-5 "$1"
	awk -F '\t' 'NR > 1 { print $3 }' <<< "$output"
}

# near A B TOL: |A - B| <= TOL |B|.
near() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {
		d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b
		exit !(a != "" && d <= t * m) }' || {
		echo "got '$1', want '$2' (relative tolerance $3)" >&2
		return 1
	}
}

# ---- the battery ----

@test "teacher-vote --help prints the usage on stdout and exits 0" {
	run -0 --separate-stderr teacher-vote --help
	[[ ${lines[0]} == "usage: teacher-vote "* ]]
	[[ $output == *"--mechanism NAME"* ]]
	[ -z "$stderr" ]
}

@test "teacher-vote --help synopsis matches the man page" {
	synopsis_matches teacher-vote
}

@test "teacher-vote --version prints the version" {
	run -0 teacher-vote --version
	[[ $output == "teacher-vote (privada) "[0-9]* ]]
}

@test "teacher-vote rejects an unknown option with 64 and usage on stderr" {
	run -64 --separate-stderr teacher-vote --bogus --classes 4 --gamma 1 votes.tns
	refute_output
	[[ $stderr == *"usage: teacher-vote "* ]]
}

@test "teacher-vote refuses to spend budget without privacy parameters" {
	run -64 --separate-stderr teacher-vote --classes 4 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: no privacy parameters: lnmax needs --gamma"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax votes.tns
	refute_output
	[[ $stderr == "teacher-vote: no privacy parameters: gnmax needs --sigma"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism confident-gnmax --sigma 4 --sigma1 4 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: no privacy parameters: confident-gnmax needs --sigma1, --threshold and --sigma"* ]]
}

@test "teacher-vote requires --classes" {
	run -64 --separate-stderr teacher-vote --gamma 1 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: --classes is required"* ]]
}

@test "teacher-vote quotes a bad option value" {
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 0,5 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: invalid --gamma '0,5'"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 0 votes.tns
	[[ $stderr == "teacher-vote: invalid --gamma '0'"* ]]
	run -64 --separate-stderr teacher-vote --classes 1 --gamma 1 votes.tns
	[[ $stderr == "teacher-vote: invalid --classes '1'"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma -1 votes.tns
	[[ $stderr == "teacher-vote: invalid --sigma '-1'"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism bnmax --sigma 1 votes.tns
	[[ $stderr == "teacher-vote: invalid --mechanism 'bnmax'"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 1 --dataset Bad votes.tns
	[[ $stderr == "teacher-vote: invalid --dataset 'Bad'"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 1 -S x votes.tns
	refute_output
}

@test "teacher-vote refuses options that the mechanism does not take" {
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 1 --sigma 2 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: --sigma does not apply to --mechanism lnmax"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --max-answers 3 votes.tns
	[[ $stderr == "teacher-vote: --max-answers does not apply to --mechanism gnmax"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism confident-gnmax --sigma 0 --sigma1 2 --threshold 1 votes.tns
	[[ $stderr == "teacher-vote: --sigma 0 and --sigma1 0 go together"* ]]
}

@test "teacher-vote refuses --data-dependent where its smooth-sensitivity release does not apply" {
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 1 --data-dependent --ss-order 8 --ss-sigma 1 t0.tns
	refute_output
	[[ $stderr == "teacher-vote: --data-dependent applies to gnmax and confident-gnmax: "*"lnmax has only its data-independent bound"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --data-dependent t0.tns
	[[ $stderr == "teacher-vote: --data-dependent needs --ss-order and --ss-sigma"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --ss-order 8 t0.tns
	[[ $stderr == "teacher-vote: --ss-beta, --ss-order and --ss-sigma go with --data-dependent"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --data-dependent --ss-order 7.55 --ss-sigma 1 t0.tns
	[[ $stderr == "teacher-vote: invalid --ss-order '7.55': one of the default orders"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --data-dependent --ss-order 20 --ss-beta 0.03 --ss-sigma 1 t0.tns
	[[ $stderr == "teacher-vote: --ss-beta 0.03 and --ss-order 20: the GNSS release needs 2 order beta < 1"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 0 --data-dependent --ss-order 8 --ss-sigma 1 t0.tns
	[[ $stderr == "teacher-vote: --data-dependent needs noise"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --data-dependent --ss-order 8 --ss-sigma 1 --audit-repeat 2 t0.tns
	[[ $stderr == "teacher-vote: --data-dependent does not go with --audit-repeat"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --data-dependent --ss-order 8 --ss-sigma 1 --unsafe-test-reveal-ss t0.tns
	[[ $stderr == "teacher-vote: --unsafe-test-reveal-ss is refused unless PRIVADA_TEST_UNSAFE=1"* ]]
	# A votes tensor: add-remove neighbours, not the paper's setting.
	run -65 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --data-dependent --ss-order 8 --ss-sigma 1 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: votes.tns: --data-dependent needs the teachers' prediction streams"* ]]
	# 7 teachers and sigma 2: not even a unanimous vote beats alpha/sigma^2.
	run -65 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 2 --data-dependent --ss-order 8 --ss-sigma 1 -o out.tns t0.tns t1.tns t2.tns t3.tns t4.tns t5.tns t6.tns
	refute_output
	[ ! -e out.tns ]
	[[ $stderr == "teacher-vote: --data-dependent: with 7 teachers, 4 classes and these noise levels, the data-dependent bound at order 8 equals the data-independent one for every vote histogram, even a unanimous one: nothing to release"* ]]
	# 25 teachers, sigma 1, order 8: the bound applies, but the paper's
	# conditions C5-C6 fail for these parameters.
	run -65 --separate-stderr teacher-vote --classes 4 --mechanism gnmax --sigma 1 --data-dependent --ss-order 8 --ss-sigma 1 small/t*.tns
	[[ $stderr == "teacher-vote: --data-dependent: conditions C5 and C6 of Papernot et al. (2018, Appendix B.4) fail for sigma 1, 4 classes at order 8"* ]]
}

@test "teacher-vote refuses --unsafe-test-half-noise without PRIVADA_TEST_UNSAFE=1" {
	run -64 --separate-stderr teacher-vote --unsafe-test-half-noise --classes 4 --gamma 1 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: --unsafe-test-half-noise is refused unless PRIVADA_TEST_UNSAFE=1"* ]]
	PRIVADA_TEST_UNSAFE=0 run -64 --separate-stderr teacher-vote --unsafe-test-half-noise --classes 4 --gamma 1 votes.tns
	refute_output
}

@test "teacher-vote rejects a garbage stream with 65 and the reader's message" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 garbage.tns
	refute_output
	[[ $stderr == "teacher-vote: garbage.tns: "* ]]
}

@test "teacher-vote rejects a truncated stream with 65 and writes nothing" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 -o out.tns cut.tns
	refute_output
	[[ $stderr == "teacher-vote: cut.tns: "* ]]
	[ ! -e out.tns ]
}

@test "teacher-vote rejects wrong dtypes and shapes with 65" {
	tns from-csv --name votes "$FX/votes.csv" > f64.votes.tns
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 --dataset priv f64.votes.tns
	refute_output
	[[ $stderr == "teacher-vote: f64.votes.tns: tensor 'votes': expected i32 of 2 dimensions"* ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 f64.tns
	refute_output
	[[ $stderr == "teacher-vote: f64.tns: tensor 'y_pred': expected i32 labels"* ]]
}

@test "teacher-vote rejects a stream without votes or predictions" {
	tns from-csv --dtype i32 --name x "$FX/votes.csv" > x.tns
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 x.tns
	refute_output
	[[ $stderr == "teacher-vote: x.tns: no tensor 'votes' (i32 [teachers, queries]) or 'y_pred'"* ]]
}

@test "teacher-vote rejects a label outside the classes, naming teacher and query" {
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 1 votes.tns
	refute_output
	[[ $stderr == "teacher-vote: votes.tns: tensor 'votes': teacher 0, query 3: label 3 outside [0, 3) (--classes 3)" ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_bad.tns t2.tns
	refute_output
	[[ $stderr == "teacher-vote: t_bad.tns: tensor 'y_pred': teacher 1, query 4: label 4 outside [0, 4)"* ]]
}

@test "teacher-vote gives 66 for a missing input" {
	run -66 --separate-stderr teacher-vote --classes 4 --gamma 1 nothere.tns
	refute_output
	[[ $stderr == "teacher-vote: nothere.tns: "* ]]
}

@test "teacher-vote reports a write error to /dev/full with 74" {
	run -74 --separate-stderr bash -c 'teacher-vote -q --classes 4 --gamma 1 votes.tns > /dev/full'
	[[ $stderr == *"teacher-vote: "* ]]
}

@test "teacher-vote refuses other operands with a votes stream, and stdin twice" {
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 1 votes.tns t0.tns
	refute_output
	[[ $stderr == "teacher-vote: a stream of 'votes' is the only input"* ]]
	run -64 --separate-stderr teacher-vote --classes 4 --gamma 1 - - < votes.tns
	refute_output
	[[ $stderr == "teacher-vote: the standard input can be read only once"* ]]
}

# ---- known answers ----

@test "teacher-vote without noise gives the plurality vote, ties among the winners" {
	for m in "--gamma inf" "--mechanism gnmax --sigma 0"; do
		run -0 --separate-stderr teacher-vote --classes 4 $m -S 7 -o out.tns votes.tns
		[[ $stderr == *"no noise: the output is NOT private"* ]]
		run -0 "$PY" -c '
import numpy as np, tv
c = tv.votes(); y = tv.col("out.tns", "y"); a = tv.col("out.tns", "answered")
assert len(y) == 10 and (a == 1).all(), (y, a)
for q in range(10):
    win = np.flatnonzero(c[q] == c[q].max())
    assert y[q] in win, (q, y[q], win)
    if len(win) == 1:
        assert y[q] == win[0]
print("ok")'
	done
}

@test "teacher-vote breaks ties uniformly at random" {
	# 30000 three-way ties without noise, seed fixed: each class should
	# win 10000 times; the chi-square statistic (2 degrees of freedom)
	# exceeds 27.6 with probability 1e-6 for a uniform choice.
	run -0 --separate-stderr teacher-vote --classes 3 --gamma inf --dataset d -S 3 -o out.tns tie.tns
	run -0 "$PY" -c '
import numpy as np, tv
n = np.bincount(tv.col("out.tns", "y"), minlength=3)
chi2 = ((n - 10000) ** 2 / 10000).sum()
assert n.sum() == 30000 and chi2 < 27.6, (n, chi2)
print(n)'
}

@test "teacher-vote confident-gnmax without noise answers exactly the queries whose top count reaches the threshold" {
	run -0 --separate-stderr teacher-vote --classes 4 --mechanism confident-gnmax --sigma 0 --sigma1 0 --threshold 3.5 -o out.tns votes.tns
	run -0 "$PY" -c '
import numpy as np, tv
c = tv.votes(); y = tv.col("out.tns", "y"); a = tv.col("out.tns", "answered")
for q in range(10):
    if c[q].max() >= 3.5:
        assert a[q] == 1 and c[q][y[q]] == c[q].max(), (q, y[q])
    else:
        assert a[q] == 0 and y[q] == -1, (q, y[q], a[q])
assert a.sum() == 5, a
print("ok")'
}

@test "teacher-vote without noise marks its output not private and records no release" {
	run -0 --separate-stderr teacher-vote --classes 4 --gamma inf -o out.tns votes.tns
	run -0 "$PY" -c '
import tv
m = tv.info("out.tns")["metadata"]
assert m["dp.raw.priv"] == "aggregate", m
assert not any(k.startswith("dp.release.") for k in m), m
print("ok")'
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 out.tns
	[[ $output == *"not_private"* ]]
}

@test "teacher-vote gives the same bytes for the same seed and other noise for another" {
	teacher-vote -q --classes 4 --mechanism gnmax --sigma 2 -S 5 votes.tns > a.tns 2>/dev/null
	teacher-vote -q --classes 4 --mechanism gnmax --sigma 2 -S 5 votes.tns > b.tns 2>/dev/null
	same_but_ids a.tns b.tns
	teacher-vote -q --classes 3 --mechanism gnmax --sigma 2 --dataset d -S 5 tie.tns > c.tns 2>/dev/null
	teacher-vote -q --classes 3 --mechanism gnmax --sigma 2 --dataset d -S 6 tie.tns > d.tns 2>/dev/null
	run -0 "$PY" -c '
import tv
assert (tv.col("c.tns", "y") != tv.col("d.tns", "y")).any()
print("ok")'
}

@test "teacher-vote marks a seeded release in the ledger and warns even with -q" {
	run -0 --separate-stderr teacher-vote -q --classes 4 --gamma 1 -S 5 -o out.tns votes.tns
	[[ $stderr == *"--seed 5: the noise is reproducible and this output is NOT private"* ]]
	run -0 "$PY" -c '
import tv
E = tv.entry("out.tns")
assert E["seeded"] == "true" and E["mechanism"] == "pate_lnmax", E
print("ok")'
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 out.tns
	[[ $output == *"not_private"*"--seed"* ]]
}

@test "teacher-vote's votes release drops the row-local mark and is private" {
	run -0 --separate-stderr teacher-vote --classes 4 --gamma 0.1 -o out.tns votes.tns
	[ -z "$stderr" ]
	run -0 "$PY" -c '
import tv
m = tv.info("out.tns")["metadata"]; E = tv.entry("out.tns")
assert "dp.raw.priv" not in m, m
assert E["dataset"] == "priv" and E["neighbours"] == "add_remove", E
assert E["seeded"] == "false" and "data_dependent" not in E, E
assert m["vote.teachers"] == "7" and m["vote.queries"] == "10", m
print("ok")'
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 out.tns
	[[ ${lines[1]} == "priv	1	"*"	private	"* ]]
}

@test "teacher-vote keeps an aggregate mark of a votes stream and warns" {
	tns meta set --unsafe-ledger -i raw.tns -o agg.tns dp.raw.priv=aggregate
	run -0 --separate-stderr teacher-vote --classes 4 --gamma 0.1 -o out.tns agg.tns
	[[ $stderr == *"this release is NOT private for priv"* ]]
	run -0 "$PY" -c '
import tv
assert tv.info("out.tns")["metadata"]["dp.raw.priv"] == "aggregate"
print("ok")'
}

# ---- accounting ----

@test "teacher-vote's lnmax ledger epsilon equals rdp-account pate-lnmax" {
	teacher-vote -q --classes 4 --gamma 0.05 -o out.tns votes.tns
	e=$(ledger_eps out.tns)
	run -0 --separate-stderr rdp-account --format tsv pate-lnmax --gamma 0.05 --queries 10 --delta 1e-5
	near "$e" "$(tsv_get epsilon)" 1e-12
}

@test "teacher-vote's gnmax ledger epsilon equals rdp-account pate-gnmax" {
	teacher-vote -q --classes 4 --mechanism gnmax --sigma 3.5 -o out.tns votes.tns
	e=$(ledger_eps out.tns)
	run -0 --separate-stderr rdp-account --format tsv pate-gnmax --sigma 3.5 --queries 10 --delta 1e-5
	near "$e" "$(tsv_get epsilon)" 1e-12
}

@test "teacher-vote's confident-gnmax charges every check and every possible answer" {
	teacher-vote -q --classes 4 --mechanism confident-gnmax --sigma1 5 --threshold 4 --sigma 2 -o out.tns votes.tns
	e=$(ledger_eps out.tns)
	run -0 --separate-stderr rdp-account --format tsv gaussian --sigma 5 --count 10 + pate-gnmax --sigma 2 --queries 10 --delta 1e-5
	near "$e" "$(tsv_get epsilon)" 1e-12
}

@test "teacher-vote --max-answers caps the answers and the charge" {
	teacher-vote -q --classes 4 --mechanism confident-gnmax --sigma1 1 --threshold -100 --sigma 2 --max-answers 3 -o out.tns votes.tns
	run -0 "$PY" -c '
import tv
a = tv.col("out.tns", "answered"); y = tv.col("out.tns", "y")
assert list(a) == [1, 1, 1] + [0] * 7 and (y[3:] == -1).all(), (a, y)
assert tv.entry("out.tns")["param.answers_charged"] == "3"
print("ok")'
	e=$(ledger_eps out.tns)
	run -0 --separate-stderr rdp-account --format tsv gaussian --sigma 1 --count 10 + pate-gnmax --sigma 2 --queries 3 --delta 1e-5
	near "$e" "$(tsv_get epsilon)" 1e-12
}

@test "teacher-vote confident-gnmax answers nothing below an unreachable threshold" {
	teacher-vote -q --classes 4 --mechanism confident-gnmax --sigma1 1 --threshold 1000 --sigma 2 -o out.tns votes.tns
	run -0 "$PY" -c '
import tv
assert (tv.col("out.tns", "answered") == 0).all() and (tv.col("out.tns", "y") == -1).all()
print("ok")'
}

@test "teacher-vote's ledger curve equals the data-independent RDP of pate2018_rdp.csv" {
	# One query per release; the CSV's orders that are among the default
	# orders (2, 3, 5, 8, 10, 16, 20, 32, 50).
	teacher-vote -q --classes 4 --mechanism gnmax --sigma 40 --dataset priv -o g40.tns tie.tns
	teacher-vote -q --classes 4 --mechanism gnmax --sigma 100 --dataset priv -o g100.tns tie.tns
	teacher-vote -q --classes 4 --gamma 0.05 --dataset priv -o l.tns tie.tns
	teacher-vote -q --classes 4 --mechanism confident-gnmax --sigma1 150 --threshold 200 --sigma 40 --dataset priv -o c.tns tie.tns
	run -0 "$PY" -c '
import csv, tv
files = {("gnmax", "sigma=40.0"): "g40.tns", ("gnmax", "sigma=100.0"): "g100.tns",
         ("lnmax", "lambda=20.0"): "l.tns",
         ("gnmax_conf", "sigma1=150.0;sigma2=40.0;t=200.0"): "c.tns"}
curves = {}
for key, f in files.items():
    E = tv.entry(f); q = float(E["param.queries"])
    curves[key] = dict(zip(map(float, E["orders"].split(",")),
                           [float(x) / q for x in E["rdp"].split(",")]))
seen = set()
for row in csv.DictReader(open("'"$ACC"'/pate2018_rdp.csv")):
    key = (row["mechanism"], row["params"])
    if key not in curves:
        continue
    a = float(row["order"]); want = float(row["rdp_data_independent"])
    if a not in curves[key]:
        continue
    got = curves[key][a]
    assert abs(got - want) <= 1e-12 * want, (key, a, got, want)
    seen.add(key)
assert len(seen) == 4, seen
print(sorted(seen))'
	[[ $output == *gnmax_conf* && $output == *lnmax* ]]
}

@test "rdp-account pate-gnmax and pate-lnmax reproduce the PATE epsilons of the reference tables" {
	# The chain: ledger = rdp-account (tests above) = the tables, at the
	# tables' orders and conversion (PATE 2018: its order list, classic;
	# PATE 2017: the moments 1..8 are the classic conversion at orders
	# 2..9).
	run -0 "$PY" -c '
import csv
for r in csv.DictReader(open("'"$ACC"'/pate2018_epsilon.csv")):
    if r["mechanism"] == "gnmax" and r["hist_id"].startswith("H1"):
        print("gnmax", r["params"].split("=")[1], r["queries"], r["delta"], r["eps_data_independent"])
for r in csv.DictReader(open("'"$ACC"'/pate2017_epsilon.csv")):
    if r["hist_id"].startswith(("H1", "H2")):
        print("lnmax", r["gamma"], r["queries"], r["delta"], r["eps_data_independent"])'
	local rows=$output n=0
	while read -r mech p queries delta want; do
		if [ "$mech" = gnmax ]; then
			run -0 --separate-stderr rdp-account --format tsv --orders pate --conversion classic pate-gnmax --sigma "$p" --queries "$queries" --delta "$delta"
		else
			run -0 --separate-stderr rdp-account --format tsv --orders 2,3,4,5,6,7,8,9 --conversion classic pate-lnmax --gamma "$p" --queries "$queries" --delta "$delta"
		fi
		near "$(tsv_get epsilon)" "$want" 1e-9
		n=$((n + 1))
	done <<< "$rows"
	[ "$n" -ge 6 ]
}

# ---- audits ----

@test "the lnmax audit's epsilon lower bound stays at or below 2 gamma" {
	# gamma = 1: claim 2.  Exact value of this test: log(0.5 / 0.1302) = 1.35.
	teacher-vote -q --classes 2 --gamma 1 --dataset d -S 21 -o od.tns lap_d.tns 2>/dev/null
	teacher-vote -q --classes 2 --gamma 1 --dataset d -S 22 -o od2.tns lap_d2.tns 2>/dev/null
	tns to-csv --tensor y od.tns > d.txt
	tns to-csv --tensor y od2.tns > d2.txt
	audit_run d.txt d2.txt --objective eps --delta 0 --threshold 0.5
	e=$(audit_get eps_lb)
	audit_le "$e" 2
	audit_gt "$e" 1.2		# the audit is not vacuous
}

@test "the lnmax audit catches half the noise" {
	# Half the noise: exact value 3.07 > the claim 2.
	export PRIVADA_TEST_UNSAFE=1
	teacher-vote -q --unsafe-test-half-noise --classes 2 --gamma 1 --dataset d -S 23 -o od.tns lap_d.tns 2>/dev/null
	teacher-vote -q --unsafe-test-half-noise --classes 2 --gamma 1 --dataset d -S 24 -o od2.tns lap_d2.tns 2>/dev/null
	tns to-csv --tensor y od.tns > d.txt
	tns to-csv --tensor y od2.tns > d2.txt
	audit_run d.txt d2.txt --objective eps --delta 0 --threshold 0.5
	audit_gt "$(audit_get eps_lb)" 2
	run -0 "$PY" -c '
import tv
E = tv.entry("od.tns"); m = tv.info("od.tns")["metadata"]
assert E["param.unsafe_test_half_noise"] == "1" and E["param.scale"] == "0.5", E
assert m["dp.raw.d"] == "aggregate"
print("ok")'
}

@test "the gnmax audit's mu lower bound stays at or below sqrt(2)/sigma" {
	# sigma = 2: the continuous Gaussian mechanism with L2 sensitivity
	# sqrt(2) is mu = 0.7071-GDP; this test's exact value with the
	# discrete Gaussian and random ties is 0.6997.
	teacher-vote -q --mechanism gnmax --classes 2 --sigma 2 --dataset d -S 31 -o od.tns lap_d.tns 2>/dev/null
	teacher-vote -q --mechanism gnmax --classes 2 --sigma 2 --dataset d -S 32 -o od2.tns lap_d2.tns 2>/dev/null
	tns to-csv --tensor y od.tns > d.txt
	tns to-csv --tensor y od2.tns > d2.txt
	audit_run d.txt d2.txt --objective mu --threshold 0.5
	m=$(audit_get mu_lb)
	audit_le "$m" 0.7071067811865476
	audit_gt "$m" 0.6
}

@test "the gnmax audit catches half the noise" {
	# Half the noise: exact value 1.357 > 0.7071.
	export PRIVADA_TEST_UNSAFE=1
	teacher-vote -q --unsafe-test-half-noise --mechanism gnmax --classes 2 --sigma 2 --dataset d -S 33 -o od.tns lap_d.tns 2>/dev/null
	teacher-vote -q --unsafe-test-half-noise --mechanism gnmax --classes 2 --sigma 2 --dataset d -S 34 -o od2.tns lap_d2.tns 2>/dev/null
	tns to-csv --tensor y od.tns > d.txt
	tns to-csv --tensor y od2.tns > d2.txt
	audit_run d.txt d2.txt --objective mu --threshold 0.5
	audit_gt "$(audit_get mu_lb)" 0.7071067811865476
}

@test "the confident-gnmax threshold audit stays within the check's claim and catches half the noise" {
	# The answered mask is a function of the check alone: RDP alpha /
	# (2 sigma1^2), epsilon 3.537 at delta 1e-3 for sigma1 = 1.  Largest
	# count 2 against 1, threshold 0.5, guessing D' when unanswered:
	# exact values 1.57 (sigma1 = 1) and 5.4 (half the noise).
	run -0 --separate-stderr rdp-account --format tsv gaussian --sigma 1 --delta 1e-3
	claim=$(tsv_get epsilon)
	for half in 0 1; do
		u=; [ $half = 1 ] && u=--unsafe-test-half-noise
		PRIVADA_TEST_UNSAFE=1 teacher-vote -q $u --mechanism confident-gnmax --classes 2 --sigma1 1 --threshold 0.5 --sigma 1 --dataset d -S $((41 + 2 * half)) -o od.tns chk_d.tns 2>/dev/null
		PRIVADA_TEST_UNSAFE=1 teacher-vote -q $u --mechanism confident-gnmax --classes 2 --sigma1 1 --threshold 0.5 --sigma 1 --dataset d -S $((42 + 2 * half)) -o od2.tns chk_d2.tns 2>/dev/null
		tns to-csv --tensor answered od.tns > d.txt
		tns to-csv --tensor answered od2.tns > d2.txt
		audit_run d.txt d2.txt --objective eps --delta 1e-3 --threshold 0.5 --below
		if [ $half = 0 ]; then
			audit_le "$(audit_get eps_lb)" "$claim"
			audit_gt "$(audit_get eps_lb)" 1.3
		else
			audit_gt "$(audit_get eps_lb)" "$claim"
		fi
	done
}

@test "teacher-vote --audit-repeat makes independent releases and charges them all" {
	teacher-vote -q --audit-repeat 3 --classes 4 --mechanism gnmax --sigma 1 -S 9 votes.tns > out.tns 2>/dev/null
	teacher-vote -q --audit-repeat 3 --classes 4 --mechanism gnmax --sigma 1 -S 9 votes.tns > again.tns 2>/dev/null
	same_but_ids out.tns again.tns
	run -0 "$PY" -c '
import tv
I = tv.info("out.tns"); E = tv.entry("out.tns")
names = [t["name"] for t in I["tensors"]]
assert names == ["y/0", "answered/0", "y/1", "answered/1", "y/2", "answered/2"], names
assert I["metadata"]["dp.audit"] == "3" and E["param.audit_releases"] == "3", E
ys = [tuple(tv.col("out.tns", "y/%d" % i)) for i in range(3)]
print(len(set(ys)))'
	[ "$output" -ge 2 ]
	e=$(ledger_eps out.tns)
	run -0 --separate-stderr rdp-account --format tsv pate-gnmax --sigma 1 --queries 30 --delta 1e-5
	near "$e" "$(tsv_get epsilon)" 1e-12
	run -64 --separate-stderr teacher-vote --audit-repeat 2 --classes 4 --gamma inf votes.tns
	[[ $stderr == "teacher-vote: --audit-repeat needs noise"* ]]
}

# ---- teachers and their partitions ----

@test "teacher-vote on teacher streams equals the votes tensor with the same seed" {
	teacher-vote -q --classes 4 --mechanism gnmax --sigma 1 -S 11 -o v.tns votes.tns 2>/dev/null
	teacher-vote -q --classes 4 --mechanism gnmax --sigma 1 -S 11 -o t.tns t0.tns t1.tns t2.tns t3.tns t4.tns t5.tns t6.tns 2>/dev/null
	run -0 "$PY" -c '
import tv
assert (tv.col("v.tns", "y") == tv.col("t.tns", "y")).all()
print("ok")'
}

@test "teacher-vote's release for disjoint teachers is private under replace-one" {
	run -0 --separate-stderr teacher-vote --classes 4 --gamma 0.1 -o out.tns t6.tns t0.tns t3.tns
	[ -z "$stderr" ]
	run -0 "$PY" -c '
import tv
m = tv.info("out.tns")["metadata"]; E = tv.entry("out.tns")
assert "dp.raw.mnist" not in m and not any(k.startswith("split.") for k in m), m
assert E["dataset"] == "mnist" and E["neighbours"] == "replace_one", E
assert E["param.teachers"] == "3" and m["data.name"] == "usps", m
assert m["prov.input.2.name"] == "t3.tns", m
print("ok")'
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 out.tns
	[[ ${lines[1]} == "mnist	1	"*"	replace_one	0	none	0	private	"* ]]
}

@test "teacher-vote refuses two teachers trained on the same part" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t1.tns t2.tns t1.tns
	refute_output
	[[ $stderr == "teacher-vote: t1.tns and t1.tns were trained on the same part 1/7: teachers must be disjoint" ]]
}

@test "teacher-vote refuses parts of different splits or of splits into other numbers of parts" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_other_parent.tns
	refute_output
	[[ $stderr == "teacher-vote: t0.tns and t_other_parent.tns come from different splits (split.parent $PARENT and ffffffffffffffff)"* ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_other_n.tns
	refute_output
	[[ $stderr == "teacher-vote: t0.tns and t_other_n.tns come from splits into 7 and 8 parts, which overlap"* ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_id.tns
	refute_output
	[[ $stderr == "teacher-vote: t0.tns and t_id.tns come from different splits (split.id none and aaaa)"* ]]
}

@test "teacher-vote refuses a teacher without a valid partition id" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_nopart.tns
	refute_output
	[[ $stderr == "teacher-vote: t_nopart.tns: no partition id (split.part): teachers must be trained on disjoint parts from tns split" ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_noparent.tns
	[[ $stderr == "teacher-vote: t_noparent.tns: split.part without split.parent"* ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_badpart.tns
	[[ $stderr == "teacher-vote: t_badpart.tns: split.part '7/7' is not i/n with i < n" ]]
}

@test "teacher-vote refuses teachers of different datasets or with public-looking queries" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_other_ds.tns
	refute_output
	[[ $stderr == "teacher-vote: t_other_ds.tns: the teachers protect different datasets (mnist and cifar)" ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t_unmarked.tns
	[[ $stderr == "teacher-vote: t_unmarked.tns: no dataset is marked 'aggregate'"*"--dataset" ]]
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 --dataset mnist t0.tns t_rowlocal.tns
	refute_output
	[[ $stderr == "teacher-vote: t_rowlocal.tns: the predictions are row-local in the protected dataset mnist"*"must be public" ]]
}

@test "teacher-vote refuses teachers that answered different numbers of queries" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_short.tns
	refute_output
	[[ $stderr == "teacher-vote: t_short.tns: tensor 'y_pred' has 9 queries, the first teacher 10"* ]]
}

@test "teacher-vote refuses a votes tensor among teacher streams" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns votes.tns
	refute_output
	[[ $stderr == "teacher-vote: votes.tns: tensor 'votes': expected the predictions 'y_pred' of a teacher"* ]]
}

@test "teacher-vote labels queries with teachers made by tns split, dpsgd-train and predict" {
	featurize -q --label label --dataset blobs "$DATA/dpsgd/blobs.csv" > blobs.tns
	featurize -q --label label --dataset pub "$DATA/dpsgd/blobs.csv" > pub.tns
	featurize -q --label label --dataset pub2 "$DATA/dpsgd/blobs.csv" > pub2.tns
	tns split -q --parts 3 -S 5 --prefix part- blobs.tns
	for i in 0 1 2; do
		dpsgd-train -q --no-dp --classes 3 --epochs 20 -S 1 -o m$i.tns part-$i.tns 2>/dev/null
		predict -q --model m$i.tns -o v$i.tns pub.tns
	done
	predict -q --model m2.tns -o w2.tns pub2.tns
	run -0 --separate-stderr teacher-vote --classes 3 --gamma 0.5 -o out.tns v0.tns v1.tns v2.tns
	[ -z "$stderr" ]
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 out.tns
	[[ $output == *"blobs	1	"*"	replace_one	0	none	0	private	"* ]]
	run -0 "$PY" -c '
import tv
m = tv.info("out.tns")["metadata"]
assert m["dp.raw.pub"] == "row-local" and "dp.raw.blobs" not in m, m
assert len(tv.col("out.tns", "y")) == 60
print("ok")'
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 0.5 v0.tns v1.tns w2.tns
	refute_output
	# The queries carry raw marks (of pub, pub2): predict writes no digest
	# of them, so teacher-vote compares their marks.
	[[ $stderr == *"are predictions on different inputs (their raw marks differ: 'pub=row-local;' and 'pub2=row-local;')"* ]]
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 0.5 v0.tns v1.tns v1.tns
	[[ $stderr == *"were trained on the same part 1/3"* ]]
}

@test "teacher-vote refuses a part that was already an aggregate of the dataset when split" {
	run -65 --separate-stderr teacher-vote --classes 4 --gamma 1 t0.tns t_preagg.tns
	refute_output
	[[ $stderr == "teacher-vote: t_preagg.tns: the part was already an aggregate of mnist when it was split (split.raw.mnist = aggregate)"* ]]
}

# ---- the data-dependent release (Papernot et al. 2018, with smooth sensitivity) ----

# ss_run OUT ARGS...: a seeded run revealing f and SS (PRIVADA_TEST_UNSAFE).
ss_run() {
	local out=$1
	shift
	PRIVADA_TEST_UNSAFE=1 teacher-vote -q --unsafe-test-reveal-ss -S 5 --classes "$@" -o "$out" 2>/dev/null
}

@test "teacher-vote --data-dependent's f equals pate2018_rdp.csv and its smooth sensitivity the paper's algorithms (numpy)" {
	ss_run big3.tns 10 --mechanism gnmax --sigma 40 --data-dependent --ss-order 3 --ss-sigma 10 big/t*.tns
	ss_run big16.tns 10 --mechanism gnmax --sigma 40 --data-dependent --ss-order 16 --ss-sigma 10 big/t*.tns
	ss_run small.tns 4 --mechanism gnmax --sigma 3 --data-dependent --ss-order 2 --ss-sigma 1 small/t*.tns
	run -0 "$PY" -c '
import csv, math, numpy as np, tv, pate_ss as P
# 1. The independent evaluation reproduces every data-dependent RDP of
#    the reference table (gnmax and the threshold step of gnmax_conf).
n = 0
for r in csv.DictReader(open("'"$ACC"'/pate2018_rdp.csv")):
    c = [float(x) for x in r["counts"].split(";")]; a = float(r["order"])
    p = dict(kv.split("=") for kv in r["params"].split(";"))
    if r["mechanism"] == "gnmax":
        got = P.rdp_dep(a, P.logq_gauss(c, float(p["sigma"])), float(p["sigma"]))
    elif r["mechanism"] == "gnmax_conf":
        s1, s2, t = float(p["sigma1"]), float(p["sigma2"]), float(p["t"])
        l1 = P.logpr_answered(max(c), t, s1)
        got = P.thr_dep(a, l1, s1) + math.exp(l1) * P.rdp_dep(a, P.logq_gauss(c, s2), s2)
    else:
        continue
    want = float(r["rdp_data_dependent"])
    assert abs(got - want) <= 1e-12 + 1e-9 * want, (r, got)
    n += 1
assert n > 100, n
# 2. teacher-vote: f at order 3 is the sum of the reference values (H1,
#    H2, H4, H5, H6, H8 and 194 more H1, all in the table at sigma 40).
ref = {}
for r in csv.DictReader(open("'"$ACC"'/pate2018_rdp.csv")):
    if r["mechanism"] == "gnmax" and r["params"] == "sigma=40.0" and r["order"] == "3.0":
        ref[r["hist_id"][:2]] = float(r["rdp_data_dependent"])
want = sum(ref[h] for h in ["H1", "H2", "H4", "H5", "H6", "H8"]) + 194 * ref["H1"]
def dd(path):
    m = tv.info(path)["metadata"]; E = {}
    for k, v in m.items():
        if k.startswith("dp.release."):
            i, f = k.split(".", 3)[2:]
            E.setdefault(i, {})[f] = v
    (g,) = [e for e in E.values() if e["mechanism"] == "pate_smooth_sensitivity"]
    (l,) = [e for e in E.values() if e["mechanism"] != "pate_smooth_sensitivity"]
    return g, l, E
g, l, E = dd("big3.tns")
f = float(g["param.unsafe_test_rdp_data_dependent"])
# teacher-vote bounds q for its discrete Gaussian (gaps less 1): a
# little above the continuous reference, never below it.
assert want <= f <= 1.5 * want, (f, want)
fc = sum(P.rdp_dep(3, P.logq_gauss(c, 40), 40) for c in np.load("big_hist.npy"))
assert abs(fc - want) <= 1e-12 + 1e-9 * want, (fc, want)
# 3. f and SS against the numpy evaluation, at orders 3 and 16 on the
#    big histograms and order 2 on the small ones.
for path, hist, n_t, a, s in [("big3.tns", "big_hist.npy", 250, 3, 40),
                              ("big16.tns", "big_hist.npy", 250, 16, 40),
                              ("small.tns", "small_hist.npy", 25, 2, 3)]:
    g, l, E = dd(path)
    beta = float(g["param.beta"]); assert beta == 0.4 / a, beta
    fp, ssp = P.release(np.load(hist), n_t, a, beta, s)
    f = float(g["param.unsafe_test_rdp_data_dependent"])
    ss = float(g["param.unsafe_test_smooth_sensitivity"])
    assert abs(f - fp) <= 1e-12 + 1e-9 * fp, (path, f, fp)
    assert abs(ss - ssp) <= 1e-7 * ssp, (path, ss, ssp)
    assert ss > 0
    # The entry: labelled, linked, and its cost is Thm. 23 at every order
    # below 1/(2 beta) (the grid terms add a relative 2^-19 at most).
    assert g["data_dependent"] == "true" and g["neighbours"] == "replace_one", g
    assert g["sanitizes"] == [i for i in E if E[i] is l][0]
    assert float(g["param.order"]) == a and float(g["param.sigma"]) in (10, 1)
    for o, r in zip(map(float, g["orders"].split(",")), g["rdp"].split(",")):
        w = P.gnss_rdp(o, beta, float(g["param.sigma"]))
        if math.isinf(w):
            assert r == "inf", (o, r)
        else:
            assert w <= float(r) <= w * (1 + 2 ** -18), (o, r, w)
    print(path, f, ss)'
}

@test "teacher-vote --data-dependent's confident-gnmax f and smooth sensitivity match numpy, answered queries only" {
	ss_run conf.tns 10 --mechanism confident-gnmax --sigma1 150 --threshold 200 --sigma 40 --data-dependent --ss-order 16 --ss-sigma 10 big/t*.tns
	ss_run conf3.tns 10 --mechanism confident-gnmax --sigma1 150 --threshold 200 --sigma 40 --max-answers 3 --data-dependent --ss-order 16 --ss-sigma 10 big/t*.tns
	run -0 "$PY" -c '
import numpy as np, tv, pate_ss as P
for path, cap in [("conf.tns", None), ("conf3.tns", 3)]:
    m = tv.info(path)["metadata"]
    (gid,) = {k.split(".")[2] for k, v in m.items() if k.endswith(".mechanism") and v == "pate_smooth_sensitivity"}
    g = lambda f: m["dp.release.%s.%s" % (gid, f)]
    ans = tv.col(path, "answered")
    assert 0 < ans.sum() < len(ans) and (cap is None or ans.sum() == cap), ans.sum()
    assert float(g("param.answered")) == ans.sum()
    fp, ssp = P.release(np.load("big_hist.npy"), 250, 16, 0.025, 40, answered=ans, t=200, sigma1=150, max_answers=cap)
    f, ss = float(g("param.unsafe_test_rdp_data_dependent")), float(g("param.unsafe_test_smooth_sensitivity"))
    assert abs(f - fp) <= 1e-12 + 1e-9 * fp, (path, f, fp)
    assert abs(ss - ssp) <= 1e-7 * ssp, (path, ss, ssp)
    print(path, f, ss, ans.sum())'
}

@test "teacher-vote --data-dependent on a consensus: the sanitised epsilon is below the data-independent one, and rdp-account ledger reads it" {
	teacher-vote -q --classes 10 --mechanism gnmax --sigma 40 --data-dependent --ss-order 16 --ss-sigma 10 -o dd.tns big/t*.tns
	ss_run ddr.tns 10 --mechanism gnmax --sigma 40 --data-dependent --ss-order 16 --ss-sigma 10 big/t*.tns
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 dd.tns
	local row=${lines[1]}
	[[ $row == "mnist	2	"*"	replace_one	0	none	1	data_dependent	"*"data-dependent epsilon "*"released with smooth sensitivity"* ]]
	run -0 --separate-stderr rdp-account --format tsv --orders default pate-gnmax --sigma 40 --queries 200 --delta 1e-5
	local ind=$(tsv_get epsilon)
	run -0 "$PY" -c '
import math, sys, tv, pate_ss as P
row = sys.argv[1].split("\t"); ind = float(sys.argv[2])
eps_all, eps_dd, order_dd = float(row[2]), float(row[12]), float(row[13])
assert order_dd == 16
m = tv.info("dd.tns")["metadata"]
E = {}
for k, v in m.items():
    if k.startswith("dp.release."):
        i, f = k.split(".", 3)[2:]
        E.setdefault(i, {})[f] = v
(g,) = [e for e in E.values() if e["mechanism"] == "pate_smooth_sensitivity"]
(l,) = [e for e in E.values() if e["mechanism"] == "pate_gnmax"]
assert "data_dependent" not in l and "param.unsafe_test_smooth_sensitivity" not in g
# rdp-account: the released value in place of the labels at order 16,
# plus the release cost, improved conversion at 1e-5.
rdp = lambda e: dict(zip(map(float, e["orders"].split(",")), map(float, e["rdp"].split(","))))
r = max(float(g["param.rdp_released"]), 0) + rdp(g)[16.0]
a, d = 16.0, 1e-5
want = r + math.log1p(-1 / a) - math.log(d * a) / (a - 1)
assert abs(eps_dd - want) <= 1e-9 * want, (eps_dd, want)
# The guarantee composes the labels data-independently plus the release.
assert eps_all > ind
# With f and SS revealed: even f + the cost + 4 SS sigma_s (the released
# value 4 standard deviations high) gives less than the data-independent
# epsilon of the labels alone.
gr = [e for e in [dict((k.split(".", 3)[3], v) for k, v in tv.info("ddr.tns")["metadata"].items()
      if k.startswith("dp.release.") and k.split(".")[2] == i) for i in
      {k.split(".")[2] for k in tv.info("ddr.tns")["metadata"] if k.startswith("dp.release.")}]
      if e["mechanism"] == "pate_smooth_sensitivity"][0]
f = float(gr["param.unsafe_test_rdp_data_dependent"]); ss = float(gr["param.unsafe_test_smooth_sensitivity"])
hi = f + 4 * ss * 10 + rdp(g)[16.0]
hi_eps = hi + math.log1p(-1 / a) - math.log(d * a) / (a - 1)
assert hi_eps < ind, (hi_eps, ind, f, ss)
print(eps_dd, hi_eps, ind, f, ss)' "$row" "$ind"
}

# ---- the teacher chain ----

@test "the PATE chain with 5 teachers: featurize, tns split, dpsgd-train, predict, teacher-vote" {
	featurize -q --label label --dataset blobs "$DATA/dpsgd/blobs.csv" > blobs.tns
	featurize -q --label label --dataset pub "$DATA/dpsgd/blobs.csv" > pub.tns
	# The queries are a part of a split of their own (public) data: their
	# split keys must not pass for the teachers'.
	tns split -q --parts 2 -S 9 --prefix pub- pub.tns
	tns split -q --parts 5 -S 5 --prefix part- blobs.tns
	for i in 0 1 2 3 4; do
		dpsgd-train -q --no-dp --classes 3 --epochs 10 -S $i -o m$i.tns part-$i.tns 2>/dev/null
		predict -q --model m$i.tns -o v$i.tns pub-0.tns
	done
	run -0 --separate-stderr teacher-vote --classes 3 --mechanism gnmax --sigma 1 -o out.tns v0.tns v1.tns v2.tns v3.tns v4.tns
	[ -z "$stderr" ]
	teacher-vote -q --classes 3 --gamma inf -o exact.tns v0.tns v1.tns v2.tns v3.tns v4.tns 2>/dev/null
	run -0 "$PY" -c '
import numpy as np, tv
P = tv.info("part-0.tns")["metadata"]; Q = tv.info("pub-0.tns")["metadata"]
for i in range(5):
    m = tv.info("v%d.tns" % i)["metadata"]
    # The model'"'"'s partition, not the queries'"'"' (part 0/2 of pub).
    assert m["split.part"] == "%d/5" % i, m
    assert m["split.parent"] == P["split.parent"] != Q["split.parent"], m
    assert m["split.id"] == P["split.id"] != Q["split.id"], m
    assert m["predict.raw.pub"] == "row-local" and "predict.raw.blobs" not in m, m
    assert m["dp.raw.blobs"] == "aggregate", m
Y = np.array([tv.col("v%d.tns" % i, "y_pred") for i in range(5)])
H = np.array([np.bincount(Y[:, q], minlength=3) for q in range(Y.shape[1])])
y = tv.col("exact.tns", "y")
assert len(y) == len(tv.col("pub-0.tns", "y")) == Y.shape[1]
assert all(H[q, y[q]] == H[q].max() for q in range(len(y)))
o = tv.info("out.tns")["metadata"]
assert o["vote.teachers"] == "5" and "dp.raw.blobs" not in o and not any(k.startswith("split.") for k in o), o
print("ok")'
	run -0 --separate-stderr rdp-account ledger --format tsv --delta 1e-5 out.tns
	[[ $output == *"blobs	1	"*"	replace_one	0	none	0	private	"* ]]
}

@test "the teacher chain refuses overlapping partitions, duplicated teachers and private queries" {
	featurize -q --label label --dataset blobs "$DATA/dpsgd/blobs.csv" > blobs.tns
	featurize -q --label label --dataset pub "$DATA/dpsgd/blobs.csv" > pub.tns
	tns split -q --parts 5 -S 5 --prefix part- blobs.tns
	tns split -q --parts 5 -S 6 --prefix alt- blobs.tns
	tns split -q --parts 2 -S 7 --prefix sub- part-0.tns
	tns pick -q -i part-1.tns --rename X=X1 --rename y=y1 X y > p1r.tns
	tns cat -q part-0.tns p1r.tns > mixed.tns
	for d in part-0 part-1 part-2 part-3 part-4 alt-1 sub-1 mixed; do
		dpsgd-train -q --no-dp --classes 3 --epochs 5 -S 1 -o m_$d.tns $d.tns 2>/dev/null
		predict -q --model m_$d.tns -o v_$d.tns pub.tns
	done
	predict -q --model m_part-1.tns -o v_again.tns pub.tns
	predict -q --model m_part-1.tns -o v_private.tns part-4.tns
	predict -q --model m_part-2.tns -o v_private2.tns part-4.tns
	ok="v_part-0.tns v_part-2.tns v_part-3.tns"
	rm -f out.tns
	# Another split of the same data into as many parts: another parent
	# (random on every run of tns split).
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 1 -o out.tns $ok v_alt-1.tns
	refute_output
	[ ! -e out.tns ]
	[[ $stderr == "teacher-vote: v_part-0.tns and v_alt-1.tns come from different splits (split.parent "*"), whose parts overlap: teachers must be disjoint parts of one split" ]]
	# A part of a part: another split too.
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 1 $ok v_sub-1.tns
	[[ $stderr == "teacher-vote: v_part-0.tns and v_sub-1.tns come from different splits (split.parent "*"), whose parts overlap: teachers must be disjoint parts of one split" ]]
	# Trained on a stream made of two parts: tns cat marks it mixed.
	run -0 "$PY" -c 'import tv; print(tv.info("mixed.tns")["metadata"]["split.part"], tv.info("v_mixed.tns")["metadata"]["split.part"])'
	[ "$output" = "mixed mixed" ]
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 1 $ok v_mixed.tns
	[[ $stderr == "teacher-vote: v_mixed.tns: split.part is 'mixed' (made so by tns: p1r.tns): the teacher derives from several parts"* ]]
	# The same teacher twice: the same stream, or the same model predicting again.
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 1 $ok v_part-1.tns v_part-1.tns
	[[ $stderr == "teacher-vote: v_part-1.tns and v_part-1.tns were trained on the same part 1/5: teachers must be disjoint" ]]
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 1 $ok v_part-1.tns v_again.tns
	[[ $stderr == "teacher-vote: v_part-1.tns and v_again.tns were trained on the same part 1/5: teachers must be disjoint" ]]
	# Queries from the protected dataset itself (part 4 of the split).
	run -65 --separate-stderr teacher-vote --classes 3 --gamma 1 v_private.tns v_private2.tns
	[[ $stderr == "teacher-vote: v_private.tns: the queries derive from the protected dataset blobs (predict.raw.blobs = row-local): they must be public" ]]
	run -0 --separate-stderr teacher-vote --classes 3 --gamma 1 -o out.tns $ok v_part-1.tns v_part-4.tns
}

# ---- progress (issue 15) ----
# Fail on the code before issue 15: teacher-vote showed progress only
# across --audit-repeat releases, none within one release.

@test "teacher-vote shows the queries voted on a terminal, with a rate and an ETA" {
	run -0 on_tty teacher-vote --classes 4 --gamma 1 -S 1 -o out.tns votes.tns
	[[ $output == *"teacher-vote: queries voted 10/10 (100%) "*"/s ETA 0:00"* ]]
	[[ $output != *"answered"* ]]
}

@test "teacher-vote shows no query progress with -q or when stderr is not a terminal" {
	run -0 on_tty teacher-vote -q --classes 4 --gamma 1 -S 1 -o out.tns votes.tns
	[[ $output != *"queries voted"* ]]
	run -0 --separate-stderr teacher-vote --classes 4 --gamma 1 -S 1 -o out.tns votes.tns
	[[ $stderr != *"queries voted"* ]]
}
