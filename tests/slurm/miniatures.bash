# The pipelines' miniatures of tests/*.bats, run by tests/slurm.bats with
# and without SLURM=1.  Each one's parameters are read from its own bats
# file (the SMALL=(...) array, gmm-uda's args heredoc), so that the Slurm
# test runs exactly the miniature the local test runs.
#
#   miniature EXP DIR [MAKE ARGS...]: make EXP's miniature into DIR
#   (DIR/out/results.tsv, or DIR/out/summary.txt for demo).
# Needs TOP and BIN (absolute).

# small_of BATSFILE: the SMALL=( ... ) assignment of a bats file.
small_of() {
	awk '/^SMALL=\(/ { on = 1 } on { print } on && /\)$/ { exit }' "$TOP/tests/$1"
}

miniature() {
	local exp=$1 dir=$2 bats f SMALL=()
	shift 2
	mkdir -p "$dir"
	case $exp in
	demo) bats= ;;
	prima) bats=pipeline.bats ;;
	gmm-uda) miniature_gmm_uda "$dir" "$@"; return ;;
	*) bats=$exp.bats ;;
	esac
	[ -z "$bats" ] || eval "$(small_of "$bats")"
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TOP/pipelines/$exp" -s \
		--no-print-directory OUT="$dir/out" B="$BIN" "${SMALL[@]}" "$@" \
		"$dir/out/$([ "$exp" = demo ] && echo summary.txt || echo results.tsv)"
}

# gmm-uda runs with make -f in a scratch directory, on 120 reviews of
# each file (tests/gmm-uda.bats: setup_file).
miniature_gmm_uda() {
	local dir=$1 f ARGS
	shift
	mkdir -p "$dir/amz"
	for f in kitchen_train kitchen_test dvd_train dvd_test; do
		[ -e "$dir/amz/$f.csv.zst" ] ||
			zstd -dcq "$TOP/data/amazon-reviews-5000/$f.csv.zst" | head -n 121 |
			zstd -q -o "$dir/amz/$f.csv.zst"
	done
	# The args heredoc of tests/gmm-uda.bats, with B and the data here.
	mapfile -t ARGS < <(B=$BIN BATS_FILE_TMPDIR=$dir eval "cat <<EOF
$(sed -n '/^\tcat > args <<EOF$/,/^EOF$/{//!p}' "$TOP/tests/gmm-uda.bats")
EOF")
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$dir" -f "$TOP/pipelines/gmm-uda/Makefile" \
		"${ARGS[@]}" "$@" out/results.tsv
}
