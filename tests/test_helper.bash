# Loaded by every tests/*.bats file: hermetic environment and helpers.
bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

TOP="$(cd "$BATS_TEST_DIRNAME/.." && pwd)"
export PATH="${PRIVADA_BIN:-$TOP/build/bin}:$TOP/tests/bin:/usr/bin:/bin"
export LC_ALL=C OPENBLAS_NUM_THREADS=1
unset PRIVADA_LEVEL PRIVADA_THREADS
DATA="$TOP/tests/data"
GOOD="$TOP/formats/testdata/good"
BAD="$TOP/formats/testdata/bad"
# numpy is a test-only dependency of Debian's python3 (not a pyenv one).
PY=/usr/bin/python3

# synopsis_matches TOOL: the --help synopsis lines equal the man page SYNOPSIS
# (rendered by mandoc, whitespace folded).
synopsis_matches() {
	local tool=$1 man help
	man=$(mandoc -T ascii -O width=200 "$TOP/man/$tool.1" | col -bx |
		sed -n '/^SYNOPSIS/,/^DESCRIPTION/p' | sed '1d;$d' | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')
	help=$("$tool" --help | sed -n '/^usage:/,/^$/p' | sed 's/^usage://' | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')
	[ "$man" = "$help" ] || { echo "man:  $man"; echo "help: $help"; return 1; }
}
