#!/usr/bin/env bats
# Every shell example of the documentation runs: the EXAMPLES section of
# every man page and the ```sh blocks of README.md, extracted by
# tests/examples/extract and run in order, one page per test, in a scratch
# directory holding small cuts of the shipped data under the names the
# examples use (tests/examples/fixtures).  A block that cannot run is listed
# with its reason in tests/examples/skip.
#
# Fails on d8f2bef (issue 15): teacher-vote.1's loop, rdp-account.1's covest
# line, kde-publish.1, gmm-fit.1's predict --features, tns.1's --rename,
# dpsgd-train.1's examples, README's predict.

load test_helper

EX="$TOP/tests/examples"

# run_page FILE: run every example block of FILE (relative to TOP)
run_page() {
	local page=$1 dir=$BATS_TEST_TMPDIR/ex block where n=0 fail=0 skip
	mkdir -p "$dir" && cd "$dir"
	"$EX/fixtures" "$TOP" > fixtures.log 2>&1 || { cat fixtures.log; return 1; }
	"$EX/extract" "$TOP/$page" | sed "s|^#@ $TOP/|#@ |" > blocks
	while IFS= read -r -d '' block; do
		where=${block%%$'\n'*}
		block=${block#*$'\n'}
		skip=$(awk -F'\t' -v p="$page" '$1 == p { print $2 "\t" $3 }' "$EX/skip" |
			while IFS=$'\t' read -r text why; do
				case $block in *"$text"*) echo "$why";; esac
			done)
		if [ -n "$skip" ]; then
			echo "# skip $where: $skip"
			continue
		fi
		n=$((n + 1))
		if ! timeout 60 bash -eu -o pipefail -c "$block" > out 2>&1 < /dev/null; then
			echo "FAILED $where:"
			sed 's/^/    | /' <<< "$block"
			sed 's/^/    > /' out | tail -n 15
			fail=$((fail + 1))
		fi
	done < <(awk 'NR > 1 && /^#@ / { printf "%c", 0 } { print }' blocks; printf '\0')
	echo "# $page: $n blocks run, $fail failed"
	[ "$fail" -eq 0 ] && [ "$n" -gt 0 ]
}

@test "examples: every documented page has examples that are extracted" {
	for f in "$TOP"/man/*.[157] "$TOP/README.md"; do
		"$EX/extract" "$f" | grep -q '^#@ ' || { echo "no examples in $f"; return 1; }
	done
}

# Fails on d8f2bef (issue 15): dpsgd-train.1's MLP line was wrapped in two.
@test "examples: no .Dl example line is wrapped by man (80 columns)" {
	local f line bad=0
	cd "$BATS_TEST_TMPDIR"
	for f in "$TOP"/man/*.[157]; do
		mandoc -T ascii -O width=80 "$f" | col -bx | tr -s ' ' > rendered
		while IFS= read -r line; do
			line=$(tr -s ' ' <<< "$line")
			line=${line# }
			grep -qF -- "$line" rendered ||
				{ echo "${f##*/}: wrapped: $line"; bad=1; }
		done < <("$EX/extract" --dl "$f")
	done
	[ "$bad" -eq 0 ]
}

# Fails on d8f2bef (issue 15): "featurize: command not found".
@test "examples: README says how to reach the tools before the first tool command" {
	local first path install
	first=$(grep -n '^featurize \|^covest \|^tns ' "$TOP/README.md" | head -n 1 | cut -d: -f1)
	path=$(grep -n '^export PATH=\$PWD/build/bin:\$PATH' "$TOP/README.md" | head -n 1 | cut -d: -f1)
	install=$(grep -n 'make install PREFIX=~/.local' "$TOP/README.md" | head -n 1 | cut -d: -f1)
	[ -n "$first" ] && [ -n "$path" ] && [ -n "$install" ]
	[ "$path" -lt "$first" ] && [ "$install" -lt "$first" ]
}

@test "examples: the skip list names blocks that exist" {
	grep -v '^#' "$EX/skip" | while IFS=$'\t' read -r page text why; do
		[ -n "$why" ] || { echo "no reason for $page: $text"; return 1; }
		"$EX/extract" "$TOP/$page" | grep -qF -- "$text" ||
			{ echo "stale skip: $page: $text"; return 1; }
	done
}

@test "examples: README.md" { run_page README.md; }
@test "examples: man/coral-align.1" { run_page man/coral-align.1; }
@test "examples: man/covest.1" { run_page man/covest.1; }
@test "examples: man/dpsgd-train.1" { run_page man/dpsgd-train.1; }
@test "examples: man/featurize.1" { run_page man/featurize.1; }
@test "examples: man/gmm-fit.1" { run_page man/gmm-fit.1; }
@test "examples: man/kde-publish.1" { run_page man/kde-publish.1; }
@test "examples: man/mia-eval.1" { run_page man/mia-eval.1; }
@test "examples: man/predict.1" { run_page man/predict.1; }
@test "examples: man/psdshrink.1" { run_page man/psdshrink.1; }
@test "examples: man/rdp-account.1" { run_page man/rdp-account.1; }
@test "examples: man/teacher-vote.1" { run_page man/teacher-vote.1; }
@test "examples: man/tns.1" { run_page man/tns.1; }
@test "examples: man/privada.7" { run_page man/privada.7; }
@test "examples: man/tensor-stream.5" { run_page man/tensor-stream.5; }
@test "examples: every page is tested here" {
	for f in "$TOP"/man/*.[157]; do
		grep -q "run_page man/${f##*/};" "$BATS_TEST_FILENAME" || { echo "untested: $f"; return 1; }
	done
}
