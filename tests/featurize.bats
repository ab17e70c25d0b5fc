#!/usr/bin/env bats
# featurize: raw data (CSV, IDX, text) to a tensor stream.  Values are read
# back with `tns to-csv` (%.17g) and compared with an independent Python
# computation from the fixtures in tests/data/featurize/.

load test_helper

FX="$DATA/featurize"
FASHION=/usr/share/datasets/fashion-mnist

setup_file() {
	# XXH64 from its specification, to check hashed columns.
	cp "$DATA/xxh.py" "$BATS_FILE_TMPDIR/xxh.py"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	export PYTHONPATH="$BATS_FILE_TMPDIR"
}

# meta FILE KEY [TENSOR]: print a stream (or tensor) metadata value.
meta() {
	tns info --format json "$1" > info.json || return
	$PY - "$2" "${3-}" <<'EOF'
import json, sys
d = json.load(open("info.json"))
key, t = sys.argv[1], sys.argv[2]
m = d["metadata"] if not t else \
    next(x for x in d["tensors"] if x["name"] == t)["metadata"]
print(m[key])
EOF
}

# shape FILE TENSOR: print the shape of a tensor as "R C".
shape() {
	tns info --format json "$1" > info.json || return
	$PY - "$2" <<'EOF'
import json, sys
d = json.load(open("info.json"))
print(*next(x for x in d["tensors"] if x["name"] == sys.argv[1])["shape"])
EOF
}

# values FILE [TENSOR]: the tensor as CSV in got.csv.
values() {
	tns to-csv -o got.csv ${2:+--tensor "$2"} "$1"
}

# idx FILE TYPE DIMS BYTES: write an IDX file; DIMS and BYTES are Python
# lists.
idx() {
	$PY - "$@" <<'EOF'
import sys
f, t, dims, data = sys.argv[1], int(sys.argv[2], 0), eval(sys.argv[3]), eval(sys.argv[4])
with open(f, "wb") as o:
    o.write(bytes([0, 0, t, len(dims)]))
    for d in dims:
        o.write(d.to_bytes(4, "big"))
    o.write(bytes(data))
EOF
}

# ---- the battery ----

@test "featurize --help prints the usage on stdout and exits 0" {
	run -0 --separate-stderr featurize --help
	assert_line --index 0 --partial "usage: featurize [-fhqV]"
	assert_output --partial "--scale-from"
	[ -z "$stderr" ]
}

@test "featurize --help synopsis matches the man page" {
	run -0 synopsis_matches featurize
}

@test "featurize --version prints the version" {
	run -0 featurize --version
	assert_output --regexp '^featurize \(privada\) [0-9]'
}

@test "featurize rejects an unknown option with 64 and usage on stderr" {
	run -64 --separate-stderr featurize --bogus "$FX/iris.csv"
	refute_output
	[[ $stderr == "featurize: unrecognized option '--bogus'"* ]]
	[[ $stderr == *"usage: featurize"* ]]
}

@test "featurize rejects a bad option value with 64, quoting it" {
	run -64 --separate-stderr featurize --no-label --dtype f16 "$FX/iris.csv"
	refute_output
	[[ $stderr == "featurize: invalid --dtype 'f16'"* ]]
	run -64 --separate-stderr featurize --no-label --clip-rows 0,5 "$FX/iris.csv"
	[[ $stderr == "featurize: invalid --clip-rows '0,5': not a number"* ]]
	run -64 --separate-stderr featurize --no-label --scale 1:1 "$FX/iris.csv"
	[[ $stderr == "featurize: invalid --scale '1:1': needs LO < HI"* ]]
	run -64 --separate-stderr featurize --format idx --resize 0x3 x.idx
	[[ $stderr == "featurize: invalid --resize '0x3'"* ]]
	run -64 --separate-stderr featurize --no-label --dataset Bad-Name "$FX/iris.csv"
	[[ $stderr == "featurize: invalid --dataset 'Bad-Name'"* ]]
}

@test "featurize needs --label or --no-label for CSV" {
	run -64 --separate-stderr featurize "$FX/iris.csv"
	refute_output
	[[ $stderr == "featurize: csv input needs --label COLUMN or --no-label"* ]]
}

@test "featurize refuses an option that does not apply to the format" {
	run -64 --separate-stderr featurize --no-label --resize 2x2 "$FX/iris.csv"
	refute_output
	[[ $stderr == "featurize: --resize applies to idx input only"* ]]
	run -64 --separate-stderr featurize --columns 0 "$FX/docs.txt"
	[[ $stderr == "featurize: --columns applies to csv input only"* ]]
}

@test "featurize rejects two operands with 64" {
	run -64 --separate-stderr featurize --no-label "$FX/iris.csv" "$FX/iris.csv"
	refute_output
}

@test "featurize names file, line and column of a bad number (65)" {
	run -65 --separate-stderr featurize --label label "$FX/bad-number.csv"
	refute_output
	[ "$stderr" = "featurize: $FX/bad-number.csv:3: column 1 ('b'): 'x7' is not a number" ]
}

@test "featurize reads a bad number on stdin as <stdin>:line" {
	run -65 --separate-stderr featurize --label 2 < "$FX/bad-number.csv"
	refute_output
	[ "$stderr" = "featurize: <stdin>:3: column 1 ('b'): 'x7' is not a number" ]
}

@test "featurize names the line of a record with the wrong number of fields" {
	run -65 --separate-stderr featurize --label label "$FX/bad-fields.csv"
	refute_output
	[ "$stderr" = "featurize: $FX/bad-fields.csv:5: 2 fields, expected 3" ]
}

@test "featurize names the line of a misplaced quote" {
	run -65 --separate-stderr featurize --label label "$FX/quote.csv"
	refute_output
	[[ $stderr == "featurize: $FX/quote.csv:3: misplaced quote"* ]]
}

@test "featurize counts lines across CRLF and quoted line ends" {
	run -65 --separate-stderr featurize --label label "$FX/crlf-bad.csv"
	refute_output
	[ "$stderr" = "featurize: $FX/crlf-bad.csv:4: column 1 ('y'): 'oops' is not a number" ]
}

@test "featurize exits 66 on a missing input file" {
	run -66 --separate-stderr featurize --no-label no-such.csv
	refute_output
	[ "$stderr" = "featurize: no-such.csv: No such file or directory" ]
	run -66 --separate-stderr featurize --format idx --labels no-such.idx no.idx
	refute_output
}

@test "featurize exits 65 on empty input" {
	: > empty.csv
	run -65 --separate-stderr featurize --no-label empty.csv
	refute_output
	[[ $stderr == "featurize: empty.csv: empty input"* ]]
}

@test "featurize exits 74 when stdout is /dev/full" {
	run -74 --separate-stderr bash -c 'featurize --label species "$1" > /dev/full' _ "$FX/iris.csv"
	[[ $stderr == "featurize: <stdout>: write error"* ]]
}

@test "featurize refuses to write to a terminal without -f" {
	command -v script > /dev/null || skip "script(1) is not installed"
	run -64 script -qec "featurize --label species '$FX/iris.csv'" /dev/null
	assert_output --partial "refusing to write a tensor stream to a terminal"
}

@test "featurize -o leaves no file behind on a data error" {
	run -65 featurize -o out.tns --label label "$FX/bad-number.csv"
	[ ! -e out.tns ]
	run ! compgen -G 'out.tns*'
}

@test "featurize -o writes a complete stream" {
	run -0 featurize -o out.tns --label species "$FX/iris.csv"
	refute_output
	run -0 tns verify out.tns
}

# ---- CSV ----

@test "featurize copies CSV values exactly into f64 X" {
	run -0 featurize --dtype f64 --label species -o out.tns "$FX/iris.csv"
	run -0 values out.tns
	$PY - "$FX/iris.csv" > want.csv <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
for r in rows[1:]:
    print(",".join("%.17g" % float(v) for v in r[:3]))
EOF
	run -0 diff want.csv got.csv
	run -0 shape out.tns X
	assert_output "4 3"
	run -0 meta out.tns features.names X
	assert_output '["id","width, cm","height"]'
}

@test "featurize writes f32 by default" {
	run -0 featurize --label species -o out.tns "$FX/iris.csv"
	run -0 tns info --format json out.tns
	assert_output --partial '"name":"X","dtype":"f32"'
}

@test "featurize maps string labels to 0..K-1 in order of first appearance" {
	run -0 featurize --label species -o out.tns "$FX/iris.csv"
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n1\n0\n2' ]
	run -0 meta out.tns label.names y
	assert_output '["setosa","versi,color","virginica"]'
}

@test "featurize keeps integer labels as they are" {
	run -0 featurize --label 2 --dtype f64 -o out.tns "$FX/intlabels.csv"
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'3\n1\n3\n-2' ]
	run -1 meta out.tns label.names y
	# No header was guessed: the first record is data.
	run -0 shape out.tns X
	assert_output "4 2"
}

@test "featurize --header yes takes a numeric first record as names" {
	run -0 featurize --header yes --label 2 -o out.tns "$FX/intlabels.csv"
	run -0 shape out.tns X
	assert_output "3 2"
	run -0 meta out.tns features.names X
	assert_output '["0.5","1"]'
}

@test "featurize --header no reads a header as data and fails on it" {
	run -65 --separate-stderr featurize --header no --label 3 "$FX/iris.csv"
	[ "$stderr" = "featurize: $FX/iris.csv:1: column 0: 'id' is not a number" ]
}

@test "featurize --no-label writes X only" {
	run -0 featurize --no-label --columns 0-1 -o out.tns "$FX/intlabels.csv"
	run -0 tns info --format json out.tns
	refute_output --partial '"name":"y"'
	run -0 shape out.tns X
	assert_output "4 2"
}

@test "featurize --columns selects by index, range and name, in order" {
	run -0 featurize --dtype f64 --label species --columns 'height,0-1' -o out.tns "$FX/iris.csv"
	run -0 values out.tns
	$PY - "$FX/iris.csv" > want.csv <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
for r in rows[1:]:
    print(",".join("%.17g" % float(r[i]) for i in (2, 0, 1)))
EOF
	run -0 diff want.csv got.csv
	run -0 meta out.tns features.names X
	assert_output '["height","id","width, cm"]'
}

@test "featurize --columns may not include the label or repeat a column" {
	run -64 --separate-stderr featurize --label species --columns 0-3 "$FX/iris.csv"
	refute_output
	[[ $stderr == *"column 3 is the label"* ]]
	run -64 --separate-stderr featurize --label species --columns 0,id "$FX/iris.csv"
	[[ $stderr == *"column 0 is listed twice"* ]]
	run -64 --separate-stderr featurize --label species --columns 9 "$FX/iris.csv"
	[[ $stderr == *"the input has 4 columns"* ]]
	run -64 --separate-stderr featurize --label nope "$FX/iris.csv"
	[[ $stderr == "featurize: invalid --label 'nope': no such column"* ]]
}

@test "featurize --missing error stops at an empty value" {
	run -65 --separate-stderr featurize --label label "$FX/missing.csv"
	refute_output
	[ "$stderr" = "featurize: $FX/missing.csv:2: column 1 ('b'): missing value" ]
}

@test "featurize rejects NaN and Inf unless --missing says otherwise" {
	sed '2d' "$FX/missing.csv" > nan.csv
	run -65 --separate-stderr featurize --label label nan.csv
	[ "$stderr" = "featurize: nan.csv:2: column 1 ('b'): 'nan' is not finite" ]
}

@test "featurize --missing zero replaces bad values by 0 and warns" {
	run -0 --separate-stderr featurize --missing zero --dtype f64 --label label -o out.tns "$FX/missing.csv"
	[ "$stderr" = "featurize: warning: 3 bad or missing values replaced by 0" ]
	run -0 values out.tns
	[ "$(cat got.csv)" = $'1,0\n2,0\n3,4\n0,5' ]
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n1\n0\n1' ]
}

@test "featurize --missing drop-row drops rows and their labels" {
	run -0 --separate-stderr featurize --missing drop-row --dtype f64 --label label -o out.tns "$FX/missing.csv"
	[ "$stderr" = "featurize: warning: 3 rows with bad or missing values dropped" ]
	run -0 values out.tns
	[ "$(cat got.csv)" = "3,4" ]
	run -0 values out.tns y
	[ "$(cat got.csv)" = "0" ]
}

@test "featurize treats a missing label as an error unless drop-row" {
	run -65 --separate-stderr featurize --missing zero --label label "$FX/missing-label.csv"
	[ "$stderr" = "featurize: $FX/missing-label.csv:3: column 2 ('label'): missing label" ]
	run -0 featurize -q --missing drop-row --label label -o out.tns "$FX/missing-label.csv"
	run -0 meta out.tns label.names y
	assert_output '["x","y"]'
}

@test "featurize reads CRLF records with quoted commas, quotes and line ends" {
	run -0 featurize --dtype f64 --label label -o out.tns "$FX/crlf.csv"
	run -0 values out.tns
	[ "$(cat got.csv)" = $'1.5,2\n-3,0.25\n7,8' ]
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n1\n0' ]
	run -0 meta out.tns label.names y
	assert_output '["a\u000d\u000ab","say \"hi\""]'
}

@test "featurize reads zstd- and gzip-compressed CSV" {
	zstd -q "$FX/iris.csv" -o iris.csv.zst
	gzip -nc "$FX/iris.csv" > iris.csv.gz
	run -0 featurize --dtype f64 --label species -o plain.tns "$FX/iris.csv"
	run -0 values plain.tns
	mv got.csv plain.csv
	for f in iris.csv.zst iris.csv.gz; do
		run -0 featurize --dtype f64 --label species -o out.tns "$f"
		run -0 values out.tns
		run -0 cmp plain.csv got.csv
	done
}

@test "featurize rejects truncated gzip input with 65" {
	gzip -nc "$FX/iris.csv" > iris.csv.gz
	head -c 40 iris.csv.gz > cut.csv.gz
	run -65 --separate-stderr featurize --label species cut.csv.gz
	refute_output
	[[ $stderr == "featurize: cut.csv.gz: gzip: truncated"* ]]
}

@test "featurize refuses a value that does not fit in f32" {
	printf '1e39,0\n' > big.csv
	run -65 --separate-stderr featurize --label 1 big.csv
	refute_output
	[[ $stderr == "featurize: big.csv:1: feature 0: 1e+39 does not fit in f32"* ]]
	run -0 featurize --dtype f64 --label 1 -o out.tns big.csv
}

# ---- scaling, normalization, clipping ----

@test "featurize --scale maps [lo,hi] to [0,1] and clamps" {
	run -0 featurize --dtype f64 --label label --scale -5:5 -o out.tns "$FX/norms.csv"
	run -0 values out.tns
	$PY - "$FX/norms.csv" > want.csv <<'EOF'
import csv, sys
for r in list(csv.reader(open(sys.argv[1])))[1:]:
    print(",".join("%.17g" % min(1.0, max(0.0, (float(v) + 5) / 10)) for v in r[:3]))
EOF
	run -0 diff want.csv got.csv
	run -0 meta out.tns scale X
	assert_output "-5:5"
}

@test "featurize --scale-from learns bounds from a public file, with a warning" {
	run -0 --separate-stderr featurize --dtype f64 --label label --scale-from "$FX/public.csv" -o out.tns "$FX/norms.csv"
	[[ $stderr == "featurize: warning: --scale-from: "*"which you declare public"* ]]
	run -0 values out.tns
	$PY - "$FX/public.csv" "$FX/norms.csv" > want.csv <<'EOF'
import csv, sys
pub = [[float(v) for v in r[:3]] for r in list(csv.reader(open(sys.argv[1])))[1:]]
lo = [min(c) for c in zip(*pub)]
hi = [max(c) for c in zip(*pub)]
for r in list(csv.reader(open(sys.argv[2])))[1:]:
    print(",".join("%.17g" % min(1.0, max(0.0, (float(v) - lo[j]) / (hi[j] - lo[j])))
                   for j, v in enumerate(r[:3])))
EOF
	run -0 diff want.csv got.csv
}

@test "featurize refuses to learn scaling bounds from the input itself" {
	run -64 --separate-stderr featurize --label label --scale-from "$FX/norms.csv" "$FX/norms.csv"
	refute_output
	[[ $stderr == *"is the input itself"* ]]
	run -64 --separate-stderr featurize --label label --scale-from - "$FX/norms.csv"
	[[ $stderr == *"--scale-from needs a file, not stdin"* ]]
}

@test "featurize --normalize l1 and l2 divide rows by their norms" {
	for k in l1 l2; do
		run -0 featurize --dtype f64 --label label --normalize $k -o out.tns "$FX/norms.csv"
		run -0 values out.tns
		$PY - "$FX/norms.csv" $k > want.csv <<'EOF'
import csv, math, sys
for r in list(csv.reader(open(sys.argv[1])))[1:]:
    x = [float(v) for v in r[:3]]
    if sys.argv[2] == "l1":
        n = 0.0
        for v in x: n += abs(v)
    else:
        s = 0.0
        for v in x: s += v * v
        n = math.sqrt(s)
    print(",".join("%.17g" % (v / n if n > 0 else v) for v in x))
EOF
		run -0 diff want.csv got.csv
		run -0 meta out.tns normalize X
		assert_output "$k"
	done
}

@test "featurize --clip-rows bounds every row norm and keeps small rows" {
	for t in f64 f32; do
		run -0 featurize --dtype $t --label label --clip-rows 2.5 -o out.tns "$FX/norms.csv"
		run -0 values out.tns
		run -0 $PY - "$FX/norms.csv" got.csv <<'EOF'
import csv, math, sys
raw = [[float(v) for v in r[:3]] for r in list(csv.reader(open(sys.argv[1])))[1:]]
got = [[float(v) for v in l.split(",")] for l in open(sys.argv[2])]
assert len(got) == len(raw)
for x, y in zip(raw, got):
    n = math.sqrt(sum(v * v for v in x))
    m = math.sqrt(sum(v * v for v in y))
    assert m <= 2.5, (y, m)
    if n <= 2.5:
        assert all(abs(a - b) <= 1e-7 * max(1, abs(a)) for a, b in zip(x, y)), (x, y)
    else:
        assert abs(m - 2.5) < 1e-6, (y, m)
        assert all(abs(a * 2.5 / n - b) < 1e-6 for a, b in zip(x, y)), (x, y)
EOF
	done
	run -0 meta out.tns clip_rows X
	assert_output "2.5"
}

# ---- metadata ----

@test "featurize marks the stream with dp.raw.NAME = row-local" {
	run -0 featurize --label species --dataset clinic_a -o out.tns "$FX/iris.csv"
	run -0 meta out.tns dp.raw.clinic_a
	assert_output "row-local"
	run -0 meta out.tns data.name
	assert_output "clinic_a"
	run -0 meta out.tns prov.tool
	assert_output "featurize"
}

@test "featurize names the dataset after the input file by default" {
	cp "$FX/iris.csv" My-Data.v2.csv
	run -0 featurize --label species -o out.tns My-Data.v2.csv
	run -0 meta out.tns dp.raw.my_data
	assert_output "row-local"
	run -0 featurize --label species -o out.tns < My-Data.v2.csv
	run -0 meta out.tns dp.raw.stdin
	assert_output "row-local"
}

@test "featurize records the input name and no digest of the raw records" {
	# fails on 7b23f82: prov.input.0.xxh64 was the XXH64 of the CSV, a
	# membership test for anyone who knows the other records.
	run -0 featurize --label species -o out.tns "$FX/iris.csv"
	run -0 meta out.tns prov.input.0.name
	assert_output "$FX/iris.csv"
	run -1 meta out.tns prov.input.0.xxh64
	want=$($PY -c 'import sys, xxh; print("%016x" % xxh.xxh64(open(sys.argv[1], "rb").read()))' "$FX/iris.csv")
	run -0 tns info -v out.tns
	refute_output --partial "$want"
}

@test "featurize output is the same bytes on every run" {
	run -0 featurize --label species -o out.tns "$FX/iris.csv"
	mv out.tns a.tns
	run -0 featurize --label species -o out.tns "$FX/iris.csv"
	run -0 cmp a.tns out.tns
}

# ---- IDX ----

@test "featurize reads raw and gzip IDX images and labels, pixels / 255" {
	idx img.idx 8 '[3, 2, 3]' 'range(0, 18 * 14, 14)'
	idx lab.idx 8 '[3]' '[9, 0, 4]'
	gzip -nc img.idx > img.idx.gz
	gzip -nc lab.idx > lab.idx.gz
	run -0 featurize --dtype f64 --labels lab.idx -o a.tns img.idx
	run -0 values a.tns
	$PY -c 'for i in range(3): print(",".join("%.17g" % (14 * (6 * i + j) / 255) for j in range(6)))' > want.csv
	run -0 diff want.csv got.csv
	run -0 values a.tns y
	[ "$(cat got.csv)" = $'9\n0\n4' ]
	run -0 featurize --dtype f64 --labels lab.idx.gz -o b.tns img.idx.gz
	run -0 values b.tns
	run -0 diff want.csv got.csv
	run -0 meta b.tns image.width X
	assert_output "3"
}

@test "featurize --resize 4x4 to 2x2 gives block means" {
	idx img.idx 8 '[1, 4, 4]' '[0,10,20,30, 40,50,60,70, 80,90,100,110, 120,130,140,255]'
	run -0 featurize --dtype f64 --resize 2x2 -o out.tns img.idx
	run -0 values out.tns
	$PY - > want.csv <<'EOF'
p = [0,10,20,30, 40,50,60,70, 80,90,100,110, 120,130,140,255]
blk = lambda r, c: sum(p[(2 * r + i) * 4 + 2 * c + j] for i in (0, 1) for j in (0, 1)) / 4
print(",".join("%.17g" % (blk(r, c) / 255) for r in (0, 1) for c in (0, 1)))
EOF
	run -0 diff want.csv got.csv
	run -0 shape out.tns X
	assert_output "1 4"
}

@test "featurize --resize 2x2 to 3x3 weights pixels by shared area" {
	idx img.idx 8 '[1, 2, 2]' '[10, 20, 40, 200]'
	run -0 featurize --dtype f64 --resize 3x3 --scale 0:1024 -o out.tns img.idx
	run -0 values out.tns
	# By hand: with a=10 b=20 c=40 d=200 the 3x3 image is
	#   a        (a+b)/2      b
	#   (a+c)/2  (a+b+c+d)/4  (b+d)/2
	#   c        (c+d)/2      d
	want="$($PY -c 'print(",".join("%.17g" % (v / 1024) for v in (10, 15, 20, 25, 67.5, 110, 40, 120, 200)))')"
	[ "$(cat got.csv)" = "$want" ]
}

@test "featurize --resize matches an exact area-weighted box filter (5x3 to 2x4)" {
	idx img.idx 8 '[1, 5, 3]' '[3, 250, 17, 90, 1, 64, 128, 77, 5, 0, 255, 33, 200, 100, 9]'
	run -0 featurize --dtype f64 --resize 2x4 --scale 0:1 -o out.tns img.idx
	run -0 values out.tns
	run -0 $PY - got.csv <<'EOF'
from fractions import Fraction as F
import sys
p = [3, 250, 17, 90, 1, 64, 128, 77, 5, 0, 255, 33, 200, 100, 9]
h, w, H, W = 5, 3, 2, 4
def ov(a0, a1, b0, b1): return max(F(0), min(a1, b1) - max(a0, b0))
want = []
for i in range(H):
    for j in range(W):
        y0, y1, x0, x1 = F(i * h, H), F((i + 1) * h, H), F(j * w, W), F((j + 1) * w, W)
        s = sum(ov(y0, y1, r, r + 1) * ov(x0, x1, c, c + 1) * p[r * w + c]
                for r in range(h) for c in range(w))
        want.append(min(1, s / ((y1 - y0) * (x1 - x0))))
got = [float(v) for v in open(sys.argv[1]).read().split(",")]
assert len(got) == len(want)
for g, v in zip(got, want):
    assert abs(g - float(v)) <= 1e-15, (g, float(v))
EOF
}

# --crop-bbox against numpy: the box of pixels > T, padded to a square
# (box at floor((s - bh) / 2), floor((s - bw) / 2)), then the area
# average, written here as the overlap matrices of the two axes.
@test "featurize --crop-bbox matches a numpy crop, square pad and area resize" {
	$PY - <<'EOF'
import numpy as np
rng = np.random.default_rng(16)
n, h, w = 40, 13, 11
img = np.zeros((n, h, w), np.uint8)
for i in range(n):
    if i == 3:
        continue                          # empty: the whole frame
    r0, c0 = rng.integers(0, h - 1), rng.integers(0, w - 1)
    r1, c1 = rng.integers(r0, h), rng.integers(c0, w)
    img[i, r0:r1 + 1, c0:c1 + 1] = rng.integers(0, 256, (r1 - r0 + 1, c1 - c0 + 1))
img[5] = rng.integers(0, 30, (h, w))      # faint noise only: below T=40
img[6, 0, 0] = 255                        # one pixel in a corner
with open("img.idx", "wb") as o:
    o.write(bytes([0, 0, 8, 3]) + b"".join(d.to_bytes(4, "big") for d in (n, h, w)))
    o.write(img.tobytes())
np.save("img.npy", img)
EOF
	run -0 featurize --dtype f64 --resize 5x7 --crop-bbox=40 -o out.tns img.idx
	run -0 values out.tns
	run -0 meta out.tns image.crop_threshold X
	assert_output 40
	run -0 $PY - got.csv <<'EOF'
import numpy as np, sys
img = np.load("img.npy").astype(float)
H, W, T = 5, 7, 40
def area(n, m):
    # m x n: target cell i covers [i n/m, (i+1) n/m) of the source, weight overlap/(n/m)
    A = np.zeros((m, n))
    for i in range(m):
        a, b = i * n / m, (i + 1) * n / m
        for r in range(n):
            A[i, r] = max(0.0, min(b, r + 1) - max(a, r)) * m / n
    return A
want = []
for x in img:
    rows, cols = np.nonzero(x > T)
    if len(rows) == 0:
        box = x
    else:
        box = x[rows.min():rows.max() + 1, cols.min():cols.max() + 1]
    bh, bw = box.shape
    s = max(bh, bw)
    sq = np.zeros((s, s))
    sq[(s - bh) // 2:(s - bh) // 2 + bh, (s - bw) // 2:(s - bw) // 2 + bw] = box
    want.append(area(s, H) @ sq @ area(s, W).T)
want = np.array(want).reshape(len(img), -1) / 255
got = np.loadtxt(sys.argv[1], delimiter=",")
assert got.shape == want.shape, (got.shape, want.shape)
err = np.abs(got - want).max()
assert err <= 1e-9, err
# the check can fail: the whole-frame resize differs
assert np.abs(got[6] - (area(13, H) @ img[6] @ area(11, W).T).ravel() / 255).max() > 0.1
EOF
}

@test "featurize --crop-bbox needs --resize and idx input, and a threshold in [0, 254]" {
	idx img.idx 8 '[1, 2, 2]' '[1, 2, 3, 4]'
	run -64 --separate-stderr featurize --crop-bbox img.idx
	[[ $stderr == "featurize: --crop-bbox needs --resize HxW"* ]]
	run -64 --separate-stderr featurize --crop-bbox=255 --resize 2x2 img.idx
	[[ $stderr == "featurize: invalid --crop-bbox '255'"* ]]
	run -64 --separate-stderr featurize --crop-bbox=x --resize 2x2 img.idx
	[[ $stderr == "featurize: invalid --crop-bbox 'x'"* ]]
	run -64 --separate-stderr featurize --no-label --crop-bbox "$FX/iris.csv"
	[[ $stderr == "featurize: --crop-bbox applies to idx input only"* ]]
	run -0 featurize --dtype f64 --crop-bbox --resize 1x1 -o out.tns img.idx
	run -0 values out.tns
	[ "$(cat got.csv)" = "$($PY -c 'print("%.17g" % (10 / 4 / 255))')" ]
}

@test "featurize --binary turns counts into presence, per value" {
	run -0 featurize --dtype f64 --label 0 --hash-dim 16 -o c.tns "$FX/docs.txt"
	run -0 values c.tns
	mv got.csv counts.csv
	run -0 featurize --dtype f64 --label 0 --hash-dim 16 --binary -o b.tns "$FX/docs.txt"
	run -0 values b.tns
	run -0 $PY - counts.csv got.csv <<'EOF'
import numpy as np, sys
c = np.loadtxt(sys.argv[1], delimiter=",")
b = np.loadtxt(sys.argv[2], delimiter=",")
assert (c > 1).any()                      # the check can fail
assert (b == (c != 0)).all()
EOF
	run -0 meta b.tns binary X
	run -0 featurize --dtype f64 --label 0 --hash-dim 16 --binary --normalize l2 -o n.tns "$FX/docs.txt"
	run -0 values n.tns
	run -0 $PY - counts.csv got.csv <<'EOF'
import numpy as np, sys
c = (np.loadtxt(sys.argv[1], delimiter=",") != 0).astype(float)
n = np.loadtxt(sys.argv[2], delimiter=",")
want = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-300)
assert np.abs(n - want).max() < 1e-15
EOF
}

@test "featurize --binary on CSV and IDX, and not with --scale" {
	printf 'a,b,l\n0,-2.5,x\n3,0,y\n' > in.csv
	run -0 featurize --dtype f64 --label l --binary -o out.tns in.csv
	run -0 values out.tns
	[ "$(cat got.csv)" = $'0,1\n1,0' ]
	idx img.idx 8 '[1, 2, 2]' '[0, 2, 255, 0]'
	run -0 featurize --dtype f64 --binary -o out.tns img.idx
	run -0 values out.tns
	[ "$(cat got.csv)" = "0,1,1,0" ]
	run -64 --separate-stderr featurize --label l --binary --scale 0:2 in.csv
	[[ $stderr == "featurize: --binary excludes --scale"* ]]
}

@test "featurize rejects labels that do not match the images" {
	idx img.idx 8 '[2, 2, 2]' '[1,2,3,4,5,6,7,8]'
	idx lab.idx 8 '[3]' '[1,2,3]'
	run -65 --separate-stderr featurize --labels lab.idx img.idx
	refute_output
	[ "$stderr" = "featurize: lab.idx: 3 labels for 2 images in img.idx" ]
}

@test "featurize rejects truncated IDX data and trailing bytes" {
	idx img.idx 8 '[3, 2, 2]' '[1,2,3,4,5,6,7,8]'
	run -65 --separate-stderr featurize img.idx
	refute_output
	[ "$stderr" = "featurize: img.idx: truncated: image 2 of 3" ]
	idx img.idx 8 '[1, 2, 2]' '[1,2,3,4,5]'
	run -65 --separate-stderr featurize img.idx
	[ "$stderr" = "featurize: img.idx: trailing bytes after 1 images" ]
}

@test "featurize rejects hostile IDX headers before allocating" {
	idx img.idx 8 '[1, 65535, 65535]' '[]'
	run -65 --separate-stderr featurize img.idx
	refute_output
	[[ $stderr == "featurize: img.idx: offset 12: images of more than"* ]]
	idx img.idx 8 '[4294967295, 1, 1]' '[7]'
	run -65 --separate-stderr featurize img.idx
	[ "$stderr" = "featurize: img.idx: truncated: image 1 of 4294967295" ]
	idx img.idx 0x0d '[1, 1, 1]' '[0, 0, 0, 0]'
	run -65 --separate-stderr featurize img.idx
	[[ $stderr == "featurize: img.idx: offset 2: IDX type 0x0d"* ]]
	printf 'P5\n2 2\n255\n' > img.idx
	run -65 --separate-stderr featurize img.idx
	[[ $stderr == "featurize: img.idx: offset 0: not an IDX file"* ]]
}

@test "featurize reads the Fashion-MNIST test images as 10000x784" {
	[ -r "$FASHION/t10k-images-idx3-ubyte.gz" ] || skip "dataset-fashion-mnist is not installed"
	run -0 featurize --labels "$FASHION/t10k-labels-idx1-ubyte.gz" -o out.tns "$FASHION/t10k-images-idx3-ubyte.gz"
	run -0 shape out.tns X
	assert_output "10000 784"
	run -0 shape out.tns y
	assert_output "10000"
	run -0 meta out.tns dp.raw.t10k_images_idx3_ubyte
	assert_output "row-local"
}

# ---- text ----

@test "featurize hashes unigrams and bigrams with XXH64 seed 0" {
	run -0 featurize --dtype f64 --label 0 --hash-dim 16 -o out.tns "$FX/docs.txt"
	run -0 values out.tns
	$PY - "$FX/docs.txt" > want.csv <<'EOF'
import re, sys, xxh
for line in open(sys.argv[1], "rb"):
    line = line.rstrip(b"\r\n")
    if not line:
        continue
    doc = line.split(b"\t", 1)[1]
    t = re.findall(rb"[a-z0-9']+", doc.lower())
    keys = t + [a + b" " + b for a, b in zip(t, t[1:])]
    x = [0] * 16
    for k in keys:
        x[xxh.xxh64(k) % 16] += 1
    print(",".join(str(v) for v in x))
EOF
	run -0 diff want.csv got.csv
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n1\n1' ]
	run -0 meta out.tns label.names y
	assert_output '["pos","neg"]'
	run -0 meta out.tns features.hash X
	assert_output "xxh64"
}

@test "featurize text hashing is deterministic" {
	run -0 featurize --hash-dim 64 -o out.tns "$FX/docs.txt"
	mv out.tns a.tns
	run -0 featurize --hash-dim 64 -o out.tns "$FX/docs.txt"
	run -0 cmp a.tns out.tns
}

@test "featurize --vocab counts listed unigrams and bigrams" {
	run -0 featurize --label 0 --vocab "$FX/vocab.txt" -o out.tns "$FX/docs.txt"
	run -0 values out.tns
	# Columns: good, "good movie", bad, "movie good", not.
	[ "$(cat got.csv)" = $'2,1,0,1,0\n0,0,1,0,0\n1,0,0,0,1' ]
	run -0 meta out.tns features.names X
	assert_output '["good","good movie","bad","movie good","not"]'
}

@test "featurize rejects a malformed vocabulary entry with its line" {
	run -65 --separate-stderr featurize --vocab "$FX/vocab-bad.txt" "$FX/docs.txt"
	refute_output
	[[ $stderr == "featurize: $FX/vocab-bad.txt:2: 'Good' is not a token"* ]]
}

@test "featurize text without --label has no y and one row per non-empty line" {
	run -0 featurize --hash-dim 8 -o out.tns "$FX/docs.txt"
	run -0 shape out.tns X
	assert_output "3 8"
	run -0 tns info --format json out.tns
	refute_output --partial '"name":"y"'
}

@test "featurize leaves out features.names longer than 1 MiB" {
	$PY -c '
n = 70000
print(",".join("feature_name_%05d" % i for i in range(n)) + ",label")
print(",".join("1" for i in range(n)) + ",0")' > wide.csv
	run -0 featurize --label label -o out.tns wide.csv
	run -0 shape out.tns X
	assert_output "1 70000"
	run -1 meta out.tns features.names X
	run -0 meta out.tns normalize X
}

# ---- the label set: learnt (data) or declared public ----

# fails on 7b23f82: the line without a tab became its own label, so the
# document's text was published in label.names.
@test "featurize text refuses a line without a tab separator, never a label" {
	printf 'pos\tgood film\nmy neighbour Jane Roe has cancer\nneg\tbad\n' > d.txt
	run -65 --separate-stderr featurize --label 0 -o out.tns d.txt
	refute_output
	[ "$stderr" = "featurize: d.txt:2: no tab separator between the label (field 0) and the document" ]
	[ ! -e out.tns ]
	run -65 --separate-stderr featurize --label 1 -o out.tns d.txt
	[ "$stderr" = "featurize: d.txt:2: no tab separator between the label (field 1) and the document" ]
	# Without --label a line is a document, tab or not.
	run -0 featurize -o out.tns d.txt
}

# Fails before issue 15: a text line had no length cap (getline grew
# to the whole line; RSS ~4x it) and this run exited 0.
@test "featurize --format text caps a line at 256 MiB, as a CSV field" {
	run -65 --separate-stderr featurize --format text --hash-dim 16 -o out.tns - \
		< <(printf 'a b\n'; head -c 268435457 /dev/zero | tr '\0' a; printf '\n')
	refute_output
	[ "$stderr" = "featurize: <stdin>:2: line longer than 268435456 bytes (256 MiB, the limit of a CSV field)" ]
	[ ! -e out.tns ]
}

@test "featurize marks a label set learnt from the rows with label.source=data" {
	run -0 featurize --label species -o out.tns "$FX/iris.csv"
	run -0 meta out.tns label.source y
	assert_output "data"
	run -0 featurize --label 2 -o out.tns "$FX/intlabels.csv"
	run -0 meta out.tns label.source y
	assert_output "data"
	run -1 meta out.tns label.classes y
}

@test "featurize --label-map numbers the classes by the lines of a public file" {
	printf 'virginica\r\nversi,color\r\nsetosa\r\nunseen\r\n' > map.txt
	run -0 featurize --label species --label-map map.txt -o out.tns "$FX/iris.csv"
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'2\n1\n2\n0' ]
	run -0 meta out.tns label.names y
	assert_output '["virginica","versi,color","setosa","unseen"]'
	run -0 meta out.tns label.source y
	assert_output "public"
	run -0 meta out.tns label.classes y
	assert_output "4"
	# The map is an input: its name and digest are in the provenance.
	run -0 meta out.tns prov.input.1.name
	assert_output "map.txt"
	# Integer labels are looked up as strings: line i is class i.
	printf '3\n1\n-2\n' > imap.txt
	run -0 featurize --label 2 --label-map imap.txt -o out.tns "$FX/intlabels.csv"
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n1\n0\n2' ]
}

@test "featurize refuses a label that is not in the label map, or drops it" {
	printf 'setosa\nvirginica\n' > map.txt
	run -65 --separate-stderr featurize --label species --label-map map.txt -o out.tns "$FX/iris.csv"
	refute_output
	[ "$stderr" = "featurize: $FX/iris.csv:3: label 'versi,color' is not in the label map map.txt (or give --drop-unknown)" ]
	[ ! -e out.tns ]
	run -0 --separate-stderr featurize --label species --label-map map.txt --drop-unknown -o out.tns "$FX/iris.csv"
	[ "$stderr" = "featurize: warning: 1 rows with a label outside the declared label set dropped" ]
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n0\n1' ]
	run -0 values out.tns
	[ "$(cut -d, -f1 got.csv)" = $'1\n3\n4' ]	# the rows of ids 1, 3, 4
	run -0 meta out.tns label.classes y
	assert_output "2"
}

@test "featurize --classes K keeps the integer labels 0 .. K-1 and declares them public" {
	printf 'a,label\n1,0\n2,2\n3,1\n' > c.csv
	run -0 featurize --label label --classes 3 -o out.tns c.csv
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n2\n1' ]
	run -0 meta out.tns label.source y
	assert_output "public"
	run -0 meta out.tns label.classes y
	assert_output "3"
	run -1 meta out.tns label.names y
	run -65 --separate-stderr featurize --label label --classes 2 -o out.tns c.csv
	[ "$stderr" = "featurize: c.csv:3: label '2' is not a class 0 .. 1 (--classes 2; or give --drop-unknown)" ]
	printf 'a,label\n1,0\n2,x\n' > c.csv
	run -65 --separate-stderr featurize --label label --classes 2 -o out.tns c.csv
	[[ $stderr == "featurize: c.csv:3: label 'x' is not a class 0 .. 1"* ]]
	run -0 featurize -q --label label --classes 2 --drop-unknown -o out.tns c.csv
	run -0 values out.tns y
	[ "$(cat got.csv)" = "0" ]
}

@test "featurize declares the label set of IDX and text input too" {
	idx img.idx 8 '[3, 1, 2]' '[1, 2, 3, 4, 5, 6]'
	idx lab.idx 8 '[3]' '[9, 0, 4]'
	run -65 --separate-stderr featurize --labels lab.idx --classes 5 -o out.tns img.idx
	[ "$stderr" = "featurize: lab.idx: label 0 of 3: label '9' is not a class 0 .. 4 (--classes 5; or give --drop-unknown)" ]
	run -0 featurize -q --labels lab.idx --classes 5 --drop-unknown -o out.tns img.idx
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'0\n4' ]
	run -0 shape out.tns X
	assert_output "2 2"
	run -0 featurize --labels lab.idx --classes 10 -o out.tns img.idx
	run -0 meta out.tns label.classes y
	assert_output "10"
	printf 'neg\npos\n' > map.txt
	run -0 featurize --label 0 --label-map map.txt -o out.tns "$FX/docs.txt"
	run -0 values out.tns y
	[ "$(cat got.csv)" = $'1\n0\n0' ]
	run -0 meta out.tns label.names y
	assert_output '["neg","pos"]'
}

@test "featurize rejects a malformed label map with its line" {
	printf 'a\n\nb\n' > map.txt
	run -65 --separate-stderr featurize --label species --label-map map.txt "$FX/iris.csv"
	refute_output
	[ "$stderr" = "featurize: map.txt:2: empty line: a label map has one label a line" ]
	printf 'a\nb\na\n' > map.txt
	run -65 --separate-stderr featurize --label species --label-map map.txt "$FX/iris.csv"
	[ "$stderr" = "featurize: map.txt:3: label 'a' is listed twice" ]
	: > map.txt
	run -65 --separate-stderr featurize --label species --label-map map.txt "$FX/iris.csv"
	[ "$stderr" = "featurize: map.txt: empty label map" ]
	printf 'a\n\377\n' > map.txt
	run -65 --separate-stderr featurize --label species --label-map map.txt "$FX/iris.csv"
	[ "$stderr" = "featurize: map.txt:2: the label is not valid UTF-8" ]
	run -66 --separate-stderr featurize --label species --label-map no-such.txt "$FX/iris.csv"
	refute_output
}

@test "featurize rejects label-set options that do not fit with 64" {
	printf 'setosa\n' > map.txt
	run -64 --separate-stderr featurize --label species --label-map map.txt --classes 2 "$FX/iris.csv"
	[[ $stderr == "featurize: --classes and --label-map exclude each other"* ]]
	run -64 --separate-stderr featurize --label species --drop-unknown "$FX/iris.csv"
	[[ $stderr == "featurize: --drop-unknown needs the declared label set"* ]]
	run -64 --separate-stderr featurize --no-label --classes 2 "$FX/iris.csv"
	[[ $stderr == "featurize: --classes declares the label set: it needs labels (--label)"* ]]
	run -64 --separate-stderr featurize --label species --label-map - "$FX/iris.csv"
	[[ $stderr == "featurize: --label-map needs a file, not stdin"* ]]
	run -64 --separate-stderr featurize --label species --label-map "$FX/iris.csv" "$FX/iris.csv"
	[[ $stderr == *"is the input itself"* ]]
	run -64 --separate-stderr featurize --label species --classes 0 "$FX/iris.csv"
	refute_output
}
