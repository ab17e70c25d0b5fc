#!/usr/bin/env bash
# timed.sh SECFILE COMMAND [ARG ...]: run COMMAND, then write its wall
# time in seconds to SECFILE (only when it succeeds).
set -euo pipefail
out=$1
shift
t0=$(date +%s.%N)
"$@"
t1=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' > "$out"
