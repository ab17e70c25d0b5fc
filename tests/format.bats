#!/usr/bin/env bats
# Conformance of the tensor stream reader with formats/tensor-stream.md,
# through `tns verify`: every good vector reads; every bad vector is
# rejected with exit 65, empty stdout and one message "tns: FILE: offset N:"
# holding the text of its .err file.  An independent reader written from the
# spec (tests/vectors/specread.py) cross-checks the vectors and the spec.

load test_helper

SPEC="$TOP/formats/tensor-stream.md"
SPECREAD="$TOP/tests/vectors/specread.py"

# check_good NAME: tns verify accepts good/NAME.tns silently.
check_good() {
  run -0 --separate-stderr tns verify "$GOOD/$1.tns"
  assert_equal "$output" ""
  assert_equal "$stderr" ""
}

# check_bad NAME: tns verify rejects bad/NAME.tns with exit 65, nothing on
# stdout and one line on stderr naming the file and an offset, holding the
# text of bad/NAME.err.
check_bad() {
  local f="$BAD/$1.tns" want
  want=$(cat "$BAD/$1.err")
  [ -n "$want" ]
  run -65 --separate-stderr tns verify "$f"
  assert_equal "$output" ""
  [[ $stderr == "tns: $f: offset "[0-9]*": "* ]] || fail "stderr: $stderr"
  [[ $stderr != *$'\n'* ]] || fail "more than one line: $stderr"
  [[ $stderr == *"$want"* ]] || fail "stderr lacks '$want': $stderr"
}

# vectors DIR: names of the vectors in DIR, one a line.
vectors() {
  local f
  for f in "$1"/*.tns; do
    f=${f##*/}
    echo "${f%.tns}"
  done
}

@test "every vector in formats/testdata has its test in this file" {
  local n missing=
  for n in $(vectors "$GOOD"); do
    grep -qx "  check_good $n" "$BATS_TEST_FILENAME" || missing+=" good/$n"
  done
  for n in $(vectors "$BAD"); do
    grep -qx "  check_bad $n" "$BATS_TEST_FILENAME" || missing+=" bad/$n"
  done
  [ -z "$missing" ] || fail "no test for:$missing"
  [ "$(vectors "$GOOD" | wc -l)" -ge 14 ]
  [ "$(vectors "$BAD" | wc -l)" -ge 92 ]
}

@test "every bad vector has a one-line .err file and every .err file a vector" {
  local f
  for f in "$BAD"/*.tns; do
    [ -s "${f%.tns}.err" ] || fail "no .err for $f"
    [ "$(wc -l < "${f%.tns}.err")" -eq 0 ] || fail "${f%.tns}.err has a newline"
  done
  for f in "$BAD"/*.err; do
    [ -e "${f%.err}.tns" ] || fail "no vector for $f"
  done
}

@test "the spec lists exactly the vectors in formats/testdata" {
  local listed actual
  listed=$(sed -n '/^## 13\. /,/^## 14\. /p' "$SPEC" |
    grep -o '`[a-z0-9-]*`' | tr -d '`' | sort)
  actual=$( { vectors "$GOOD"; vectors "$BAD"; } | sort)
  assert_equal "$listed" "$actual"
}

@test "zstd decompresses every good vector" {
  local f
  for f in "$GOOD"/*.tns; do
    zstd -dcq "$f" > "$BATS_TEST_TMPDIR/out" || fail "zstd rejects $f"
  done
}

# prefixes FILE: tns verify on every strict prefix of FILE must exit 65.
prefixes() {
  local f=$1 len cut st accepted=0 other=
  len=$(wc -c < "$f")
  [ "$len" -gt 50 ]
  for ((cut = 0; cut < len; cut++)); do
    head -c "$cut" "$f" > "$BATS_TEST_TMPDIR/prefix.tns"
    st=0
    tns verify "$BATS_TEST_TMPDIR/prefix.tns" 2> /dev/null || st=$?
    if [ "$st" -eq 0 ]; then
      accepted=$((accepted + 1))
    elif [ "$st" -ne 65 ]; then
      other+=" $cut:$st"
    fi
  done
  [ "$accepted" -eq 0 ] || fail "$accepted prefixes of $f accepted"
  [ -z "$other" ] || fail "prefixes with exit status other than 65:$other"
}

@test "tns verify rejects every strict prefix of a two-tensor stream" {
  prefixes "$GOOD/example.tns"
}

@test "tns verify rejects every strict prefix of a stream in two frames" {
  prefixes "$GOOD/multi-frame.tns"
}

@test "reader messages name the offset of the offending field" {
  run -65 --separate-stderr tns verify "$BAD/version-2.tns"
  assert_equal "$stderr" "tns: $BAD/version-2.tns: offset 8: version 2.0: this reader supports major version 1"
  run -65 --separate-stderr tns verify "$BAD/header-flags.tns"
  assert_equal "$stderr" "tns: $BAD/header-flags.tns: offset 10: header flags 0x0001: must be zero"
  run -65 --separate-stderr tns verify "$BAD/record-flags.tns"
  assert_equal "$stderr" "tns: $BAD/record-flags.tns: offset 16: record flags 0x00000001: must be zero"
  # Header 12 + record header 16 + name length 2 + name 1: dtype at 31.
  run -65 --separate-stderr tns verify "$BAD/dtype-6.tns"
  assert_equal "$stderr" "tns: $BAD/dtype-6.tns: offset 31: tensor 'x': unknown dtype code 6"
  run -65 --separate-stderr tns verify "$BAD/trailing-garbage.tns"
  [[ $stderr == *": input byte 91: trailing bytes after the last zstd frame "* ]]
}

@test "reader messages name <stdin> when the stream comes from standard input" {
  run -65 --separate-stderr tns verify < "$BAD/end-rows.tns"
  refute_output
  assert_equal "$stderr" "tns: <stdin>: offset 183: end record counts 9 rows, the stream has 2"
}

@test "the worked example in the spec is good/example.tns byte for byte" {
  local tmp=$BATS_TEST_TMPDIR
  awk '/`zstd -dc example.tns \| xxd`/ { f = 1; next }
    f && /^```/ { if (c) exit; c = 1; next }
    c { print }' "$SPEC" > "$tmp/spec.hex"
  [ "$(wc -l < "$tmp/spec.hex")" -eq 20 ]
  zstd -dcq "$GOOD/example.tns" > "$tmp/example.bin"
  xxd "$tmp/example.bin" > "$tmp/actual.hex"
  run -0 diff "$tmp/spec.hex" "$tmp/actual.hex"
  grep -q '^- \*\*Format version:\*\* 1\.0$' "$SPEC"
}

@test "a reader written from the spec alone accepts every good vector" {
  local f files=()
  for f in "$GOOD"/*.tns; do
    f=${f##*/}
    zstd -dcq "$GOOD/$f" > "$BATS_TEST_TMPDIR/$f.bin"
    files+=("$BATS_TEST_TMPDIR/$f.bin")
  done
  run -0 --separate-stderr "$PY" "$SPECREAD" "${files[@]}"
  [ "${#lines[@]}" -eq "${#files[@]}" ]
  run -1 grep -v ': ok$' <<< "$output"
}

@test "a reader written from the spec alone rejects every bad vector zstd can decompress" {
  local f files=()
  for f in "$BAD"/*.tns; do
    f=${f##*/}
    # Rules of the compressed layer, invisible after decompression.
    case $f in no-checksum.tns | skippable-frame.tns) continue ;; esac
    zstd -dcq "$BAD/$f" > "$BATS_TEST_TMPDIR/$f.bin" 2> /dev/null || continue
    files+=("$BATS_TEST_TMPDIR/$f.bin")
  done
  [ "${#files[@]}" -ge 75 ]
  run -0 --separate-stderr "$PY" "$SPECREAD" "${files[@]}"
  [ "${#lines[@]}" -eq "${#files[@]}" ]
  run -1 grep -v ': offset [0-9]*: ' <<< "$output"
}

@test "the spec reader decodes good/example.tns to the values of section 14" {
  zstd -dcq "$GOOD/example.tns" > "$BATS_TEST_TMPDIR/s.bin"
  run -0 --separate-stderr "$PY" "$SPECREAD" "$BATS_TEST_TMPDIR/s.bin"
  assert_output - <<'END'
x f32 [2,2] 1.0 2.0 3.0 -0.5
y u8 [2] 0 1
  classes=2
meta dp.raw.demo=row-local
END
}

@test "the spec reader decodes every dtype of good/dtypes.tns exactly" {
  zstd -dcq "$GOOD/dtypes.tns" > "$BATS_TEST_TMPDIR/s.bin"
  run -0 --separate-stderr "$PY" "$SPECREAD" "$BATS_TEST_TMPDIR/s.bin"
  assert_output - <<'END'
a_f32 f32 [3] 1.0 -0.0 3.4028234663852886e+38
b_f64 f64 [3] 0.1 -2.5 5e-324
c_i32 i32 [3] -2147483648 -1 2147483647
d_i64 i64 [3] -9223372036854775808 -1 42
e_u8 u8 [4] 0 1 128 255
END
}

@test "the spec reader gives streamed and zero-length shapes their row counts" {
  zstd -dcq "$GOOD/zero-rows.tns" > "$BATS_TEST_TMPDIR/s.bin"
  run -0 --separate-stderr "$PY" "$SPECREAD" "$BATS_TEST_TMPDIR/s.bin"
  assert_output - <<'END'
no_rows f64 [0,4]
no_cols f32 [3,0]
zeros/3d i32 [0,0,7]
cube u8 [2,1,2] 1 2 3 4
END
  zstd -dcq "$GOOD/f32-streamed.tns" > "$BATS_TEST_TMPDIR/s.bin"
  run -0 --separate-stderr "$PY" "$SPECREAD" "$BATS_TEST_TMPDIR/s.bin"
  assert_output "features f32 [5,3] -1.0 -0.75 -0.5 -0.25 0.0 0.25 0.5 0.75 1.0 1.25 1.5 1.75 2.0 2.25 2.5"
}

@test "tns verify accepts a stream with no tensors (good/empty)" {
  check_good empty
}

@test "tns verify accepts a scalar (good/scalar)" {
  check_good scalar
}

@test "tns verify accepts a streamed f32 matrix in three chunks (good/f32-streamed)" {
  check_good f32-streamed
}

@test "tns verify accepts all five dtypes (good/dtypes)" {
  check_good dtypes
}

@test "tns verify accepts NaN and infinities (good/nonfinite)" {
  check_good nonfinite
}

@test "tns verify accepts zero-length dims (good/zero-rows)" {
  check_good zero-rows
}

@test "tns verify accepts zero rows of 2^43 bytes (good/wide-empty)" {
  check_good wide-empty
}

@test "tns verify accepts a stream split across two frames (good/multi-frame)" {
  check_good multi-frame
}

@test "tns verify accepts empty frames around the stream (good/empty-frames)" {
  check_good empty-frames
}

@test "tns verify accepts UTF-8 metadata (good/metadata-utf8)" {
  check_good metadata-utf8
}

@test "tns verify accepts ancillary records, skipping them (good/ancillary)" {
  check_good ancillary
}

@test "tns verify accepts a higher minor version with header flags (good/minor-version)" {
  check_good minor-version
}

@test "tns verify accepts a frame with a 2^27-byte window (good/window-max)" {
  check_good window-max
}

@test "tns verify accepts the worked example of the spec (good/example)" {
  check_good example
}

@test "tns verify rejects an empty file (bad/empty-file)" {
  check_bad empty-file
}

@test "tns verify rejects input that is not zstd-compressed (bad/not-zstd)" {
  check_bad not-zstd
}

@test "tns verify rejects zstd data that is not a tensor stream (bad/bad-magic)" {
  check_bad bad-magic
}

@test "tns verify rejects a skippable zstd frame (bad/skippable-frame)" {
  check_bad skippable-frame
}

@test "tns verify rejects a frame without the content checksum flag (bad/no-checksum)" {
  check_bad no-checksum
}

@test "tns verify rejects a content checksum mismatch (bad/bad-checksum)" {
  check_bad bad-checksum
}

@test "tns verify rejects input that ends inside a zstd frame (bad/truncated-frame)" {
  check_bad truncated-frame
}

@test "tns verify rejects garbage after the last frame (bad/trailing-garbage)" {
  check_bad trailing-garbage
}

@test "tns verify rejects a single byte after the last frame (bad/trailing-byte)" {
  check_bad trailing-byte
}

@test "tns verify rejects a second stream concatenated after the first (bad/second-stream)" {
  check_bad second-stream
}

@test "tns verify rejects a frame that needs a 2^28-byte window (bad/window-too-large)" {
  check_bad window-too-large
}

@test "tns verify rejects a frame that needs a dictionary (bad/dictionary)" {
  check_bad dictionary
}

@test "tns verify rejects a reserved zstd block type (bad/corrupt-block)" {
  check_bad corrupt-block
}

@test "tns verify rejects a magic with a wrong letter case (bad/magic-case)" {
  check_bad magic-case
}

@test "tns verify rejects a stream shorter than its header (bad/short-header)" {
  check_bad short-header
}

@test "tns verify rejects major version 2, naming both versions (bad/version-2)" {
  check_bad version-2
}

@test "tns verify rejects major version 0 (bad/version-0)" {
  check_bad version-0
}

@test "tns verify rejects nonzero header flags in version 1.0 (bad/header-flags)" {
  check_bad header-flags
}

@test "tns verify rejects nonzero record flags (bad/record-flags)" {
  check_bad record-flags
}

@test "tns verify rejects record type 0 (bad/record-type-0)" {
  check_bad record-type-0
}

@test "tns verify rejects unknown critical record type 6 (bad/record-type-6)" {
  check_bad record-type-6
}

@test "tns verify rejects unknown critical record type 256 (bad/record-type-256)" {
  check_bad record-type-256
}

@test "tns verify rejects an unknown critical record inside a tensor (bad/record-type-7-in-tensor)" {
  check_bad record-type-7-in-tensor
}

@test "tns verify rejects a metadata record of 2^40 bytes (bad/record-huge)" {
  check_bad record-huge
}

@test "tns verify rejects a tensor header one byte over the limit (bad/tensor-header-huge)" {
  check_bad tensor-header-huge
}

@test "tns verify rejects an ancillary record over the limit (bad/ancillary-huge)" {
  check_bad ancillary-huge
}

@test "tns verify rejects a chunk outside a tensor (bad/chunk-outside)" {
  check_bad chunk-outside
}

@test "tns verify rejects an end-of-tensor record outside a tensor (bad/tensor-end-outside)" {
  check_bad tensor-end-outside
}

@test "tns verify rejects stream metadata inside a tensor (bad/meta-inside-tensor)" {
  check_bad meta-inside-tensor
}

@test "tns verify rejects bytes after the tensor header's metadata (bad/tensor-header-long)" {
  check_bad tensor-header-long
}

@test "tns verify rejects a tensor header cut inside its dims (bad/tensor-header-short)" {
  check_bad tensor-header-short
}

@test "tns verify rejects a tensor header without its metadata block (bad/tensor-header-no-meta)" {
  check_bad tensor-header-no-meta
}

@test "tns verify rejects dtype code 0 (bad/dtype-0)" {
  check_bad dtype-0
}

@test "tns verify rejects unknown dtype code 6 (bad/dtype-6)" {
  check_bad dtype-6
}

@test "tns verify rejects ndim 9 (bad/ndim-9)" {
  check_bad ndim-9
}

@test "tns verify rejects unknown tensor flags (bad/tensor-flags)" {
  check_bad tensor-flags
}

@test "tns verify rejects an empty tensor name (bad/name-empty)" {
  check_bad name-empty
}

@test "tns verify rejects a tensor name of 256 bytes (bad/name-too-long)" {
  check_bad name-too-long
}

@test "tns verify rejects a space in a tensor name (bad/name-bad-char)" {
  check_bad name-bad-char
}

@test "tns verify rejects a non-ASCII tensor name (bad/name-non-ascii)" {
  check_bad name-non-ascii
}

@test "tns verify rejects a tensor name starting with a dot (bad/name-leading-dot)" {
  check_bad name-leading-dot
}

@test "tns verify rejects a tensor name starting with a slash (bad/name-leading-slash)" {
  check_bad name-leading-slash
}

@test "tns verify rejects a NUL byte in a tensor name (bad/name-nul)" {
  check_bad name-nul
}

@test "tns verify rejects two tensors with one name (bad/name-duplicate)" {
  check_bad name-duplicate
}

@test "tns verify rejects dims whose product overflows (2^32 x 2^32 x 8) (bad/dims-overflow)" {
  check_bad dims-overflow
}

@test "tns verify rejects dims whose byte size overflows (bad/bytes-overflow)" {
  check_bad bytes-overflow
}

@test "tns verify rejects a tensor over the element limit (bad/elements-limit)" {
  check_bad elements-limit
}

@test "tns verify rejects more rows than the row limit, even 0 bytes wide (bad/rows-limit)" {
  check_bad rows-limit
}

@test "tns verify rejects dims[0] = 2^64-1 without the streamed flag (bad/unknown-rows-not-streamed)" {
  check_bad unknown-rows-not-streamed
}

@test "tns verify rejects a streamed row over the element limit (bad/row-elements-limit)" {
  check_bad row-elements-limit
}

@test "tns verify rejects a streamed row size that overflows (bad/row-overflow)" {
  check_bad row-overflow
}

@test "tns verify rejects the streamed flag with dims[0] other than 2^64-1 (bad/streamed-dims0)" {
  check_bad streamed-dims0
}

@test "tns verify rejects a streamed scalar (bad/streamed-scalar)" {
  check_bad streamed-scalar
}

@test "tns verify rejects a chunk length that is not 8 + nrows x row bytes (bad/chunk-length)" {
  check_bad chunk-length
}

@test "tns verify rejects a chunk too short for its row count (bad/chunk-short)" {
  check_bad chunk-short
}

@test "tns verify rejects a chunk whose nrows x row bytes overflows (bad/chunk-overflow)" {
  check_bad chunk-overflow
}

@test "tns verify rejects more rows than declared (bad/rows-too-many)" {
  check_bad rows-too-many
}

@test "tns verify rejects fewer rows than declared (bad/rows-too-few)" {
  check_bad rows-too-few
}

@test "tns verify rejects an end-of-tensor count that differs from the chunks (bad/tensor-end-count)" {
  check_bad tensor-end-count
}

@test "tns verify rejects an end-of-tensor record of the wrong length (bad/tensor-end-length)" {
  check_bad tensor-end-length
}

@test "tns verify rejects an end record inside a tensor (bad/tensor-end-missing)" {
  check_bad tensor-end-missing
}

@test "tns verify rejects a tensor header inside a tensor (bad/tensor-end-missing-next)" {
  check_bad tensor-end-missing-next
}

@test "tns verify rejects a stream that ends inside a chunk (bad/truncated-chunk)" {
  check_bad truncated-chunk
}

@test "tns verify rejects an end record with a wrong record count (bad/end-records)" {
  check_bad end-records
}

@test "tns verify rejects an end record with a wrong tensor count (bad/end-tensors)" {
  check_bad end-tensors
}

@test "tns verify rejects an end record with a wrong row count (bad/end-rows)" {
  check_bad end-rows
}

@test "tns verify rejects an end record of the wrong length (bad/end-length)" {
  check_bad end-length
}

@test "tns verify rejects a stream without its end record, cut at a frame boundary (bad/end-missing)" {
  check_bad end-missing
}

@test "tns verify rejects stream bytes after the end record (bad/trailing-bytes)" {
  check_bad trailing-bytes
}

@test "tns verify rejects a metadata count over the limit (bad/meta-count-limit)" {
  check_bad meta-count-limit
}

@test "tns verify rejects a metadata count larger than the entries (bad/meta-count-short)" {
  check_bad meta-count-short
}

@test "tns verify rejects bytes after a metadata block (bad/meta-record-long)" {
  check_bad meta-record-long
}

@test "tns verify rejects an empty metadata key (bad/key-empty)" {
  check_bad key-empty
}

@test "tns verify rejects a metadata key of 256 bytes (bad/key-too-long)" {
  check_bad key-too-long
}

@test "tns verify rejects a metadata key with upper case (bad/key-uppercase)" {
  check_bad key-uppercase
}

@test "tns verify rejects a metadata key with a hyphen (bad/key-hyphen)" {
  check_bad key-hyphen
}

@test "tns verify rejects a metadata key with a NUL byte (bad/key-nul)" {
  check_bad key-nul
}

@test "tns verify rejects a metadata key with an empty segment (bad/key-empty-segment)" {
  check_bad key-empty-segment
}

@test "tns verify rejects a metadata key starting with a dot (bad/key-leading-dot)" {
  check_bad key-leading-dot
}

@test "tns verify rejects a metadata key ending with a dot (bad/key-trailing-dot)" {
  check_bad key-trailing-dot
}

@test "tns verify rejects a duplicate key in one metadata block (bad/key-duplicate)" {
  check_bad key-duplicate
}

@test "tns verify rejects a key repeated in two stream metadata records (bad/key-duplicate-records)" {
  check_bad key-duplicate-records
}

@test "tns verify rejects a duplicate key in tensor metadata (bad/key-duplicate-tensor)" {
  check_bad key-duplicate-tensor
}

@test "tns verify rejects metadata value type 0 (bad/value-type-0)" {
  check_bad value-type-0
}

@test "tns verify rejects metadata value type 2 (bad/value-type-2)" {
  check_bad value-type-2
}

@test "tns verify rejects a metadata value over the length limit (bad/value-length-limit)" {
  check_bad value-length-limit
}

@test "tns verify rejects a metadata value longer than its record (bad/value-runs-past)" {
  check_bad value-runs-past
}

@test "tns verify rejects a metadata value that is not UTF-8 (bad/value-not-utf8)" {
  check_bad value-not-utf8
}

@test "tns verify rejects an overlong UTF-8 form (bad/value-overlong)" {
  check_bad value-overlong
}

@test "tns verify rejects a UTF-8 surrogate (bad/value-surrogate)" {
  check_bad value-surrogate
}

@test "tns verify rejects a code point above U+10FFFF (bad/value-above-10ffff)" {
  check_bad value-above-10ffff
}

@test "tns verify rejects a truncated UTF-8 sequence (bad/value-truncated-utf8)" {
  check_bad value-truncated-utf8
}

@test "tns verify rejects a NUL byte in a metadata value (bad/value-nul)" {
  check_bad value-nul
}
