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

# same_but_ids A B: the streams A and B hold the same tensors (each one's
# bytes, through tns to-npy) and the same metadata up to the release ids,
# which are fresh on every run, seeded or not (formats/tensor-stream.md
# 10.1, rule 4).  For "the same seed gives the same output".
same_but_ids() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, subprocess, sys
def info(path):
    j = json.loads(subprocess.run(["tns", "info", "--format", "json", path],
        check=True, capture_output=True).stdout)
    m = j["metadata"]
    ids = {k.split(".")[2] for k in m if k.startswith("dp.release.")}
    def body(i):
        p = "dp.release.%s." % i
        return json.dumps(sorted((k[len(p):], v) for k, v in m.items()
            if k.startswith(p) and k[len(p):] != "sanitizes"))
    name = {i: "ID%d" % n for n, i in enumerate(sorted(ids, key=body))}
    del j["file"], j["xxh64"]
    text = json.dumps(j, sort_keys=True)
    for i, r in name.items():
        text = text.replace(i, r)
    j = json.loads(text)
    for g in j.get("ledger", {}).values():
        if isinstance(g, list):
            g.sort(key=lambda x: json.dumps(x, sort_keys=True))
    data = [subprocess.run(["tns", "to-npy", "-f", "--tensor", t["name"], path],
        check=True, capture_output=True).stdout for t in j["tensors"]]
    return j, data
a, b = info(sys.argv[1]), info(sys.argv[2])
if a[0] != b[0]:
    x, y = (json.dumps(v[0], sort_keys=True) for v in (a, b))
    n = next(k for k in range(min(len(x), len(y))) if x[k] != y[k])
    sys.exit("metadata differ at: %s | %s" % (x[n - 40:n + 80], y[n - 40:n + 80]))
if a[1] != b[1]:
    sys.exit("tensor data differ")
PYEOF
}

# Run "$@" with stdin, stdout and stderr on a pseudo-terminal (script(1)):
# prints what the terminal received, carriage returns and escapes included,
# and returns the command's status.
on_tty() {
	script -qec "$(printf '%q ' "$@")" /dev/null < /dev/null
}
