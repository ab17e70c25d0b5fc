#!/usr/bin/env bash
# vote.sh TEACHER_VOTE LABELS ORDER SS_SIGMA VOTE_ARGS...: one release of
# teacher-vote into LABELS, and LABELS.dd saying what happened to the
# data-dependent release.
#
# ORDER "-": no data-dependent release ("none" in LABELS.dd).  Otherwise
# the vote is made with --data-dependent --ss-order ORDER --ss-sigma
# SS_SIGMA.  teacher-vote refuses it (exit 65, nothing written) when the
# bound cannot beat the data-independent one for any histogram of this
# many teachers, or when conditions C5 and C6 fail at that order: both
# depend on the number of teachers, the classes and the noise only, never
# on the votes, so falling back to the plain vote leaks nothing.  Then
# the vote is made without it and LABELS.dd is "refused: <reason>".  Any
# other failure stops.  On success with the release, LABELS.dd is
# "released ORDER".
set -euo pipefail
tv=$1 out=$2 order=$3 sss=$4
shift 4
if [ "$order" = - ]; then
	"$tv" -q "$@" -o "$out"
	echo none > "$out.dd"
	exit 0
fi
err=$(mktemp)
trap 'rm -f "$err"' EXIT
st=0
"$tv" -q "$@" --data-dependent --ss-order "$order" --ss-sigma "$sss" \
    -o "$out" 2> "$err" || st=$?
if [ $st -eq 0 ]; then
	echo "released $order" > "$out.dd"
	exit 0
fi
if [ $st -eq 65 ] && grep -qE 'nothing to release|conditions C5 and C6' "$err"; then
	"$tv" -q "$@" -o "$out"
	if grep -q 'nothing to release' "$err"; then
		echo "refused: the bound never beats the data-independent one" > "$out.dd"
	else
		echo "refused: conditions C5 and C6 fail at order $order" > "$out.dd"
	fi
	exit 0
fi
cat "$err" >&2
exit $st
