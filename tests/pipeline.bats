#!/usr/bin/env bats
# pipelines/prima end to end on a reduced parameter set (one task, one
# epsilon, one repeat, two epochs: parameters overridden on the make
# command line), in a scratch output directory.  The run itself takes
# about two seconds; it is made once, in setup_file, and its exit status
# and output are checked by the first test.

load test_helper

PRIMA="$TOP/pipelines/prima"
BIN="${PRIVADA_BIN:-$TOP/build/bin}"
SMALL=(TASKS=surf/amazon:dslr EPS=2 REPS=1 EPOCHS=2 CLASSIFIERS=sgd
	"NP_OPTS=--batch full --epochs 20 --lr 2 --weight-decay 3e-4")

# prima DIR ARGS...: make the experiment into DIR/out, hermetically.
prima() {
	local dir=$1
	shift
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$PRIMA" \
		--no-print-directory OUT="$dir/out" B="$BIN" "${SMALL[@]}" "$@"
}

setup_file() {
	local dir="$BATS_FILE_TMPDIR"
	prima "$dir" > "$dir/make.out" 2> "$dir/make.err"
	echo $? > "$dir/make.status"
}

setup() {
	OUT="$BATS_FILE_TMPDIR/out"
}

@test "make runs the PRIMA pipeline on one task and writes a row per method and epsilon" {
	run -0 cat "$BATS_FILE_TMPDIR/make.status"
	assert_output 0
	run -0 cut -f 1-4 "$OUT/results.tsv"
	assert_output "task	method	epsilon	reps
amazon->dslr	prima	2	1
amazon->dslr	prima	np	1
amazon->dslr	noadapt	2	1
amazon->dslr	noadapt	np	1"
	run -0 head -n 1 "$OUT/results.tsv"
	assert_output "task	method	epsilon	reps	accuracy	accuracy_sd	eps_spent	wall_s	verdict	acc_private"
	# Issue 13, item 11 (fails on 7b23f82): the accuracies are computed
	# without privacy on the target's raw test rows: NOT private.
	run -0 awk -F '\t' 'NR > 1 { print $2, $3, $10 }' "$OUT/results.tsv"
	assert_output "prima 2 no
prima np no
noadapt 2 no
noadapt np no"
	grep -q '^| accuracy private (rdp-account, predict) | \*\*no\*\*: computed on protected rows | \*\*no\*\*: computed on protected rows |' "$OUT/results.md"
}

@test "every accuracy of the run is a percentage read from predict's report" {
	run -0 awk -F '\t' 'NR > 1 && !($5 >= 0 && $5 <= 100 && $5 != "" && $8 >= 0) { print "bad: " $0 }' \
		"$OUT/results.tsv"
	refute_output
	# The run's accuracy is the "all" line of its report, in percent.
	run -0 awk -F '\t' '$1 == "all" { printf "%.2f\n", 100 * $2 }' \
		"$OUT/pred/prima-surf-amazon-dslr-2-r1.report.tsv"
	want=$output
	run -0 awk -F '\t' '$2 == "prima" && $3 == "2" { print $5 }' "$OUT/results.tsv"
	assert_output "$want"
}

@test "the ledger check passes and the accounted epsilons compose both releases of the source" {
	run -0 cat "$OUT/ledger/prima-surf-amazon-dslr-2-r1.tsv"
	assert_line --partial "private: ("
	refute_output --partial "over budget"
	# Source: covest at 0.5 and dpsgd-train at 1.5, composed by RDP:
	# more than either release alone, at most the budget of 2.  Target:
	# covest at 2.  No adaptation: dpsgd-train at 2.
	run -0 awk -F '\t' '$3 == "2" {
		n = split($7, p, ","); delete e
		for (i = 1; i <= n; i++) { split(p[i], kv, "="); e[kv[1]] = kv[2] }
		ok = $9 == "private" && e["amazon"] <= 2 && \
		    ($2 == "prima" ? n == 2 && e["amazon"] > 1.55 && e["dslr"] > 1.999 && e["dslr"] <= 2 : n == 1 && e["amazon"] > 1.999)
		print $2, ok ? "ok" : "bad: " $0 }' "$OUT/results.tsv"
	assert_output "prima ok
noadapt ok"
}

@test "the sigma 0 reference is accounted as NOT private" {
	run -0 awk -F '\t' '$3 == "np" { print $2, $7, $9 }' "$OUT/results.tsv"
	assert_output "prima amazon=-,dslr=- not_private
noadapt amazon=- not_private"
	run -0 grep -c "NOT private" "$OUT/results.md"
	[ "$output" -ge 3 ]
}

@test "the report has the task's row with the published references and gnuplot's plots are well-formed" {
	run -0 grep '^| amazon→dslr |' "$OUT/results.md"
	assert_line --index 0 --regexp '\| 25\.48 \| 39\.5 \|$'
	run -0 "$PY" -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
print(r.tag)' "$OUT/accuracy-surf.svg"
	assert_output "{http://www.w3.org/2000/svg}svg"
	run -0 head -c 8 "$OUT/accuracy-surf.png"
	assert_output --partial "PNG"
	# The SVG carries the methods' names as legend text.
	run -0 grep -c -e '>PRIMA (paper 001)<' -e '>no adaptation (not private)<' "$OUT/accuracy-surf.svg"
	[ "$output" -ge 2 ]
}

@test "a rebuilt predict reruns only the predictions and the report" {
	# A real run: GNU make 4.3 does not propagate a grouped target's
	# update to its dependents under -n.
	run -0 prima "$BATS_FILE_TMPDIR" -W "$BIN/predict"
	assert_line --partial "$BIN/predict "
	assert_line --partial "summarize.awk"
	assert_line --partial "runrow"
	refute_output --partial "$BIN/covest "
	refute_output --partial "$BIN/dpsgd-train "
	refute_output --partial "$BIN/coral-align "
	refute_output --partial "$BIN/rdp-account "
}

@test "make -n shows every step of the experiment and runs nothing" {
	run -0 prima "$BATS_TEST_TMPDIR" -n
	for step in featurize covest psdshrink coral-align dpsgd-train predict "rdp-account ledger"; do
		assert_line --partial "$BIN/$step "
	done
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}

# steps ARGS...: the tools make -n would run on the built miniature with
# ARGS, once each, then "+noadapt" if a no-adaptation model would be remade.
steps() {
	local n
	n=$(prima "$BATS_FILE_TMPDIR" -n "$@")
	echo "$(grep -o "$BIN/[a-z-]* " <<< "$n" | sed "s|^$BIN/||" | sort -u | xargs)" \
		"$(grep -q -- "-o $OUT/model/noadapt-" <<< "$n" && echo +noadapt)"
}

# Issue 15, "stale results" (fails on d8f2bef / 11187aa: a value overridden
# on the command line reached no prerequisite, make -n ran nothing and the
# old table stayed).  Each parameter of params.mk remakes the steps it
# reaches and the steps after them, and no others.
@test "each overridden parameter remakes exactly the steps it reaches" {
	run -0 steps
	assert_output " "
	# tns: the shrinkage of every new PSD covariance is read back for the
	# report's "Does adaptation pay under DP?" (issue 16).
	ALL="coral-align covest dpsgd-train featurize predict psdshrink rdp-account tns"
	COV="coral-align covest dpsgd-train predict psdshrink rdp-account tns"
	run -0 steps CLIP_ROWS=0.5
	assert_output "$ALL +noadapt"
	for v in COV_CLIP=2 COV_MEAN=estimate SUBSPACES=random:4 PART_SEED=7 SELECT_K=50 \
		TGT_SHARE=0.5 COV_SHARE=0.5; do
		run -0 steps $v
		assert_output "$COV " || { echo "$v"; return 1; }
	done
	for v in PSD=eigclip SHRINK_TARGET=identity; do
		run -0 steps $v
		assert_output "coral-align dpsgd-train predict psdshrink rdp-account tns " || { echo "$v"; return 1; }
	done
	for v in ALIGN=sa REG=1e-3 SA_DIM=5; do
		run -0 steps $v
		assert_output "coral-align dpsgd-train predict rdp-account " || { echo "$v"; return 1; }
	done
	run -0 steps DELTA=1e-6
	assert_output "${ALL/featurize /} +noadapt"
	for v in SGD_CLIP=2 BATCH=64 EPOCHS=3 LR=4 CLASSES_surf=12 ROWS_surf_amazon=900; do
		run -0 steps $v
		assert_output "dpsgd-train predict rdp-account +noadapt" || { echo "$v"; return 1; }
	done
	# Only the report names the domains and the number of repeats.
	run -0 prima "$BATS_FILE_TMPDIR" -n SURF_DOMAINS="amazon dslr"
	refute_output --partial "$BIN/"
	assert_output --partial "intro.md"
	# The grid parameters name new files: the old ones stay.
	run -0 steps EPS="2 4"
	assert_output "$COV +noadapt"
	run -0 prima "$BATS_FILE_TMPDIR" -n EPS="2 4"
	refute_output --partial -- "-o $OUT/model/noadapt-surf-amazon-2-r1.tns"
	# Nothing was written: the built configuration is still up to date.
	run -0 steps
	assert_output " "
}

# The stamp follows the last configuration made: back to the defaults,
# the steps of the changed parameter are made again.
@test "a parameter changed and changed back remakes its steps each time" {
	local dir=$BATS_TEST_TMPDIR
	cp -a "$OUT" "$dir/out"
	run -0 prima "$dir" EPOCHS=3
	assert_output --partial "$BIN/dpsgd-train "
	refute_output --partial "$BIN/covest "
	grep -qx 'EPOCHS=3' "$dir/out/params/sgd"
	run -0 prima "$dir" EPOCHS=3
	refute_output --partial "$BIN/dpsgd-train "
	run -0 prima "$dir"
	assert_output --partial "$BIN/dpsgd-train "
	grep -qx 'EPOCHS=2' "$dir/out/params/sgd"
}

# Issue 15, publish (fails on d8f2bef / 11187aa: publish copied whatever
# out/ held, a partial table or a stale plot, and took any override).
# publish-check makes every file it publishes, then refuses a table with
# fewer rows (or repeats) than the parameters declare, and a missing or
# stale plot.  (Two surf domains and one coral-check trial: the miniature.)
@test "publish remakes what it copies and refuses an incomplete grid or a stale plot" {
	local dir=$BATS_TEST_TMPDIR
	cp -a "$OUT" "$dir/out"
	pub=(SURF_DOMAINS="amazon dslr" CC_TRIALS=1 PUBLISH_DIR="$dir/results")
	rm "$dir/out/results.md"
	run -0 prima "$dir" "${pub[@]}" publish
	for f in results.md results.tsv accuracy-surf.png accuracy-surf.svg coral-check.md; do
		cmp "$dir/results/$f" "$(find "$dir/out" -name "$f")"
	done
	[ ! -e "$dir/results/accuracy-amz.svg" ]
	rm -r "$dir/results"
	# A row lost: refused, nothing copied.
	sed -i '$d' "$dir/out/results.tsv"
	run -2 --separate-stderr prima "$dir" "${pub[@]}" publish
	[[ $stderr == *"publish: $dir/out/results.tsv: 3 rows, the parameters declare 4: not published"* ]]
	[ ! -e "$dir/results" ]
	rm "$dir/out/results.tsv"
	run -0 prima "$dir" "${pub[@]}" publish-check
	# The whole grid at fewer repeats than declared (the table kept): refused.
	run -2 --separate-stderr prima "$dir" "${pub[@]}" publish-check REPS=2 -o "$dir/out/results.tsv"
	[[ $stderr == *"publish: $dir/out/results.tsv:2: fewer repeats than the 2 declared: not published"* ]]
	run -0 prima "$dir" "${pub[@]}" publish-check
	# A plot lost, or older than the table: refused.
	rm "$dir/out/accuracy-surf.svg"
	run -2 --separate-stderr prima "$dir" "${pub[@]}" publish
	[[ $stderr == *"publish: $dir/out/accuracy-surf.svg: missing or empty: not published"* ]]
	echo "<svg/>" > "$dir/out/accuracy-surf.svg"
	touch -d '1 hour ago' "$dir/out/accuracy-surf.png"
	run -2 --separate-stderr prima "$dir" "${pub[@]}" publish
	[[ $stderr == *"publish: $dir/out/accuracy-surf.png: older than $dir/out/results.tsv: not published"* ]]
	[ ! -e "$dir/results" ]
}

@test "make -C pipelines publish refuses a parameter set on the command line" {
	run -2 --separate-stderr env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP/pipelines" \
		--no-print-directory publish TASKS=surf/amazon:dslr
	[[ $stderr == *"publish: TASKS set on the command line: the snapshots are made at the parameters of params.mk"* ]]
	refute_output --partial "make -C prima"
}

@test "an overspending configuration stops make at the ledger check" {
	run -2 --separate-stderr prima "$BATS_TEST_TMPDIR" TGT_SHARE=1.5
	[[ $stderr == *"rdp-account: dataset dslr: over budget: epsilon 3 > 2"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out/ledger/prima-surf-amazon-dslr-2-r1.tsv" ]
	[ ! -e "$BATS_TEST_TMPDIR/out/results.tsv" ]
}

@test "the ablations reach the tools: forward selection, eigclip, subspace alignment" {
	run -0 prima "$BATS_TEST_TMPDIR" SUBSPACES=forward SELECT_K=50 PSD=eigclip ALIGN=sa SA_DIM=5
	# The target's blocks are chosen by forward selection on its release,
	# the source is released in the same blocks.
	assert_line --regexp "covest .*--subspaces select:50 .*surf-dslr-tgt-2-r1"
	assert_line --regexp "covest .*--subspaces from:$BATS_TEST_TMPDIR/out/cov/surf-dslr-tgt-2-r1.tns .*surf-amazon-src-to-dslr-2-r1"
	assert_line --partial "psdshrink -q --method eigclip "
	assert_line --partial "coral-align -q --method sa --dim 5 "
	run -0 awk -F '\t' '$3 == "2" { print $2, $9 }' "$BATS_TEST_TMPDIR/out/results.tsv"
	assert_output "prima private
noadapt private"
}

@test "ALIGN=none releases no covariance and an unknown ablation is refused" {
	run -0 prima "$BATS_TEST_TMPDIR" ALIGN=none -n
	refute_output --partial "covest"
	refute_output --partial "coral-align"
	assert_line --regexp "dpsgd-train -q --epsilon 2 .*model/prima-surf-amazon-dslr-2-r1"
	run -2 prima "$BATS_TEST_TMPDIR" PSD=clip -n
	assert_output --partial "PSD=clip: shrink, eigclip or none"
}

@test "a larger grid on the command line (SEEDS=2) runs only the missing repeats" {
	run -0 prima "$BATS_TEST_TMPDIR"
	run -0 prima "$BATS_TEST_TMPDIR" SEEDS=2 REPS=2
	assert_line --regexp "dpsgd-train .*prima-surf-amazon-dslr-2-r2"
	refute_line --regexp "dpsgd-train .*-r1\.tns"
	refute_line --regexp "covest .*-r1\.tns"
	run -0 cut -f 4 "$BATS_TEST_TMPDIR/out/results.tsv"
	assert_output "reps
2
2
2
2"
}

# Issue 16: the small-data classifiers as options of both arms, the
# converged NOT-private reference, and the report's "Does adaptation pay
# under DP?" section with the shrinkage psdshrink chose for every block.
@test "CLASSIFIERS adds full-batch DP-GD and DP-NCM rows; the report compares the arms with the measured alpha" {
	local dir=$BATS_TEST_TMPDIR
	cp -a "$OUT" "$dir/out"
	run -0 prima "$dir" "CLASSIFIERS=sgd gd ncm" GD_EPOCHS=3
	run -0 cut -f 2,3 "$dir/out/results.tsv"
	assert_output "method	epsilon
prima	2
prima	np
noadapt	2
noadapt	np
prima-gd	2
prima-gd	np
noadapt-gd	2
noadapt-gd	np
prima-ncm	2
prima-ncm	np
noadapt-ncm	2
noadapt-ncm	np"
	# Every DP row private at 2, every np row NOT private.
	run -0 awk -F '\t' 'NR > 1 && (($3 == 2) != ($9 == "private")) { print }' "$dir/out/results.tsv"
	refute_output
	# The np classifier is the converged reference, without privacy.
	run -0 "$BIN/tns" info "$dir/out/model/noadapt-surf-amazon-np-r1.tns"
	assert_output --partial 'NOT private'
	assert_line --regexp '^ +train\.mode +no_dp$'
	assert_line --regexp '^ +train\.batch +958$'
	run -0 "$BIN/tns" info "$dir/out/model/noadapt-ncm-surf-amazon-2-r1.tns"
	assert_line --regexp '^ +train\.mode +dp_ncm$'
	# alpha.tsv: one line per block of the two DP covariances, each the
	# psd.alpha of that tensor.
	run -0 awk 'NR > 1 { n++ } END { print n }' "$dir/out/alpha.tsv"
	assert_output 16
	local f=surf-amazon-src-2-r1 want
	want=$("$BIN/tns" info --format json "$dir/out/psd/$f.tns" | $PY -c '
import json, sys
d = json.load(sys.stdin)
t = d["tensors"] if "tensors" in d else d[0]["tensors"]
print(" ".join(x["metadata"]["psd.alpha"] for x in t if x["name"].startswith("cov/")))')
	run -0 awk -F '\t' -v f=$f '$1 == f { printf "%s%s", s, $3; s = " " }' "$dir/out/alpha.tsv"
	assert_output "$want"
	grep -q '^## Does adaptation pay under DP?' "$dir/out/results.md"
	grep -Eq '^\| surf \| DP nearest class mean \| 2 \| [-+][0-9.]+ \| [01] / 1 \| [0-9.e-]+ \| [0-9]+ / 16 \|$' "$dir/out/results.md"
}

# Issue 18: the classifier's hyper-parameters chosen by accounted private
# tuning on the source rows (dpsgd-train --tune), never on a target: one
# repeat_select release per run, within the classifier's share of the
# budget, charged once to the pipeline's budget store.
@test "CLASSIFIERS=sgd-tuned tunes DP-SGD privately on the source rows, one release a run, charged once to the store" {
	local dir=$BATS_TEST_TMPDIR
	cp -a "$OUT" "$dir/out"
	run -0 prima "$dir" "CLASSIFIERS=sgd sgd-tuned" "TUNE_GRID=lr=4,8;epochs=2,3;batch=128;clip=1" \
		TUNE_TRIALS=geometric:2
	# The tuned models read the (aligned) source only, and the classifier's
	# share of the budget: 1.5 for PRIMA, 2 without adaptation.
	assert_line --regexp "dpsgd-train -q --epsilon 1\.5 .*--tune 'lr=4,8;epochs=2,3;batch=128;clip=1' --tune-trials geometric:2 --val-fraction 0\.2 --tune-score-sigma 10 .*-o $dir/out/model/prima-sgd-tuned-surf-amazon-dslr-2-r1\.tns $dir/out/align/surf-amazon-dslr-2-r1\.tns\$"
	assert_line --regexp "dpsgd-train -q --epsilon 2 .*--tune .*-o $dir/out/model/noadapt-sgd-tuned-surf-amazon-2-r1\.tns $dir/out/feat/surf-amazon\.tns\$"
	refute_line --regexp "dpsgd-train .*--tune .*np-r1"
	# The hand-tuned rows were not remade; no NOT-private row of its own.
	refute_line --regexp "dpsgd-train .*-o $dir/out/model/(prima|noadapt)-surf"
	run -0 cut -f 2,3,9 "$dir/out/results.tsv"
	assert_output "method	epsilon	verdict
prima	2	private
prima	np	not_private
noadapt	2	private
noadapt	np	not_private
prima-sgd-tuned	2	private
noadapt-sgd-tuned	2	private"
	grep -q '^## PRIMA, then DP-SGD tuned privately on the aligned source' "$dir/out/results.md"
	grep -q 'tuned privately" (sgd-tuned)' "$dir/out/results.md"
	grep -q '^| surf | DP-SGD tuned privately | 2 |' "$dir/out/results.md"
	# Each tuned model: one repeat_select release on amazon within its
	# share, its configuration from the grid, and that release in the store
	# once.
	"$BIN/rdp-account" store status --format tsv "$dir/out/budget.db" > "$dir/store.tsv"
	local m
	for m in prima-sgd-tuned-surf-amazon-dslr noadapt-sgd-tuned-surf-amazon; do
		"$BIN/tns" info --format json "$dir/out/model/$m-2-r1.tns" > "$dir/tuned.json"
		run -0 "$PY" - "$dir/tuned.json" "$dir/store.tsv" "$m" <<'EOF2'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
rel = {k.split(".")[2] for k in m if k.startswith("dp.release.")}
# the model's own release; PRIMA's also carries the covariances it read
own = [r for r in rel if m["dp.release.%s.tool" % r] == "dpsgd-train"]
assert len(own) == 1, own
rid = own[0]
p = "dp.release.%s." % rid
assert m[p + "mechanism"] == "repeat_select", m[p + "mechanism"]
assert m[p + "dataset"] == "amazon", m[p + "dataset"]
assert all(m["dp.release.%s.tool" % r] == "covest" for r in rel - {rid})
assert len(rel) == (3 if sys.argv[3].startswith("prima") else 1), rel
share = 1.5 if sys.argv[3].startswith("prima") else 2
assert 0.5 * share < float(m["tune.epsilon"]) <= share, m["tune.epsilon"]
assert m["tune.config"] in ["lr=%s;clip=1;epochs=%s;batch=128" % (a, b)
                            for a in ("4", "8") for b in ("2", "3")], m["tune.config"]
rows = [l.split("\t") for l in open(sys.argv[2]).read().splitlines()]
hits = [r for r in rows if r[0] == "release" and rid in r]
assert len(hits) == 1, (rid, hits)
EOF2
	done
	# A changed grid remakes the tuned models only.
	run -0 prima "$dir" -n "CLASSIFIERS=sgd sgd-tuned" "TUNE_GRID=lr=4;epochs=2;batch=128;clip=1" \
		TUNE_TRIALS=geometric:2
	assert_line --regexp "dpsgd-train .*-o $dir/out/model/prima-sgd-tuned-"
	refute_line --regexp "dpsgd-train .*-o $dir/out/model/(prima|noadapt)-surf"
	refute_line --partial "$BIN/covest "
}
