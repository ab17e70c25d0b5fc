#!/usr/bin/env bats
# lib/dp/aesctr (the fast noise sampler's random bits) against an
# independent AES-256-CTR: the python3-cryptography package (OpenSSL),
# for random keys, each implementation this CPU runs, and uneven draws.

load test_helper

AS="$TOP/build/tests-bin/aesctr-stream"

# ref KEYHEX NBLOCKS: the keystream of python3-cryptography, counter
# block 0 all zero, incremented as a 128-bit big-endian integer.
ref() {
	"$PY" -c '
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
k = bytes.fromhex(sys.argv[1]); n = int(sys.argv[2])
e = Cipher(algorithms.AES(k), modes.CTR(bytes(16))).encryptor()
print(e.update(bytes(16 * n)).hex())' "$1" "$2"
}

@test "aesctr: keystream equals python3-cryptography's AES-256-CTR (every implementation, 20 keys)" {
	ran=0
	for t in $(seq 1 20); do
		key=$("$PY" -c 'import os; print(os.urandom(32).hex())')
		n=$((t * 37 % 300 + 1))
		want=$(ref "$key" "$n")
		[ ${#want} -eq $((32 * n)) ]
		for impl in portable aesni vaes; do
			run "$AS" "$key" "$n" "$impl"
			if [ "$status" -eq 77 ]; then continue; fi
			[ "$status" -eq 0 ]
			[ "$output" = "$want" ] || {
				echo "$impl differs for key $key, $n blocks"; false; }
			ran=$((ran + 1))
		done
	done
	# At least the portable code ran every time.
	[ "$ran" -ge 20 ]
}

@test "aesctr: the comparison can fail (a different key, a different stream)" {
	key=$(printf '%064x' 1)
	other=$(printf '%064x' 2)
	run -0 "$AS" "$key" 4
	[ "$output" != "$(ref "$other" 4)" ]
	[ "$output" = "$(ref "$key" 4)" ]
}
