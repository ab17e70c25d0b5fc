#!/usr/bin/env bats
# The Python package python/privada (issue 19): its unittest suite (vectors,
# round trips C -> Python -> C and Python -> C -> Python, ledger merging,
# ledger_report against rdp-account), the README's example, and an offline
# pip install into a venv.

load test_helper

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "python: the privada unittest suite passes with Debian's python3" {
	run -0 "$PY" -W error::ResourceWarning -m unittest discover -s "$TOP/python/tests" -v
	[[ $output == *"Ran "*" tests"* ]]
	[[ ${lines[-1]} == "OK" ]]
	# Every test ran: none skipped.
	[[ $output != *skipped* ]]
}

@test "python: the README example runs and its ledger agrees with rdp-account" {
	ln -s "$TOP/tests" tests
	awk '/^## Python/ { on = 1 } /^## Tools/ { on = 0 }
		on && /^```sh$/ { n++; if (n == 2) grab = 1; next }
		grab && /^```$/ { grab = 0 } grab' "$TOP/README.md" > example.sh
	awk '/^## Python/ { on = 1 } /^## Tools/ { on = 0 }
		on && /^```python$/ { grab = 1; next }
		grab && /^```$/ { grab = 0 } grab' "$TOP/README.md" > example.py
	grep -q 'gmm-fit sample' example.sh
	grep -q 'privada.write' example.py
	bash -e example.sh
	run -0 env PYTHONPATH="$TOP/python" "$PY" example.py
	[[ $output == *"Stream('synth.tns', {X: f32[2000, 2], y: i32[2000]}"* ]]
	assert_line --regexp '^blobs (1\.0|0\.99)[0-9]* private$'
	assert_line 'blobs inf not_private'
	run -0 rdp-account ledger --delta 1e-5 --format json pred.tns
	[[ $output == *'"dataset":"blobs"'*'"raw":"aggregate"'*'"verdict":"not_private"'* ]]
	run -0 rdp-account ledger --delta 1e-5 --format json synth.tns
	[[ $output == *'"verdict":"private"'* ]]
	tns verify pred.tns
}

@test "python: pip installs ./python into a venv without network" {
	cp -r "$TOP/python" src
	rm -rf src/build src/*.egg-info
	"$PY" -m venv --system-site-packages venv
	run -0 env PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
		venv/bin/pip install --no-build-isolation --no-deps ./src
	cd /
	run -0 "$BATS_TEST_TMPDIR/venv/bin/python" -c 'import privada; print(privada.__file__, privada.__version__)'
	[[ $output == "$BATS_TEST_TMPDIR/venv/lib/python3"*"/site-packages/privada/__init__.py 0.1.0" ]]
	run -0 "$BATS_TEST_TMPDIR/venv/bin/python" -c '
import privada, sys
s = privada.read(sys.argv[1])
print(s["x"].tolist())' "$GOOD/example.tns"
	[ "$output" = "[[1.0, 2.0], [3.0, -0.5]]" ]
}
