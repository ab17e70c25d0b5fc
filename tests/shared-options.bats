#!/usr/bin/env bats
# Issue 15: the shared options mean the same in every tool (privada(7),
# "Conventions").  Fails on h/int3: kde-publish took no --epsilon/--delta
# and defaulted delta to 1e-5, teacher-vote took no -v, mia-eval no -f,
# and dpsgd-train --epochs 3 -v said "epoch 4/4".
load test_helper

# Every tool: each shared option its --help documents is accepted in its
# long and short form alike (the usage line lists the short ones).
@test "shared options: every documented short option has its long form and both parse" {
	local t s l
	for t in coral-align covest dpsgd-train featurize gmm-fit kde-publish \
	    mia-eval predict psdshrink rdp-account teacher-vote; do
		run -0 "$t" --help
		local help=$output
		for s in f q v V h; do
			case $s in f) l=force ;; q) l=quiet ;; v) l=verbose ;;
			    V) l=version ;; h) l=help ;; esac
			if grep -Eq -- "^ +-$s, --$l" <<<"$help"; then
				:
			elif grep -Eq -- "^ +-$s[, ]|--$l" <<<"$help"; then
				echo "$t: -$s and --$l not documented together" >&2
				return 1
			fi
		done
		for s in e d o S; do
			case $s in e) l=epsilon ;; d) l=delta ;; o) l=output ;;
			    S) l=seed ;; esac
			# predict's --output is the old spelling of --emit
			# (kept for one release, predict(1)): not checked.
			[[ $t == predict && $s == o ]] && continue
			if grep -Eq -- "^ +-$s[, ]" <<<"$help" &&
			    ! grep -Eq -- "^ +-$s, --$l " <<<"$help"; then
				echo "$t: -$s without --$l" >&2
				return 1
			fi
		done
		run -0 "$t" --version
		run -0 "$t" -V
	done
}

@test "shared options: kde-publish takes --epsilon and --delta and defaults neither" {
	run -64 --separate-stderr kde-publish -q -e 1 x.tns y.tns
	[[ $stderr == *"-d is required"* ]]
	run -64 --separate-stderr kde-publish -q --epsilon 1 x.tns y.tns
	[[ $stderr == *"-d is required"* ]]
	# the long forms parse (the inputs are then missing: 66)
	run -66 kde-publish -q --epsilon 1 --delta 1e-5 x.tns y.tns
}

@test "shared options: teacher-vote -v and mia-eval -f are accepted" {
	run -0 tns from-csv --dtype i32 --name votes -o raw.tns \
	    "$TOP/tests/data/teacher-vote/votes.csv"
	run -0 tns meta set --unsafe-ledger -i raw.tns -o votes.tns \
	    dp.raw.priv=row-local
	run -0 --separate-stderr teacher-vote -S 1 -v --classes 10 --gamma 1 \
	    -o v.tns votes.tns
	[[ $stderr == *"queries answered"* ]]
	run -0 teacher-vote --verbose --help
	run -0 mia-eval -f --help
	run -0 mia-eval --force --help
}

@test "dpsgd-train --epochs 3 -v counts three epochs under DP" {
	run -0 featurize -q --label label --classes 3 --dataset blobs -o b.tns \
	    "$TOP/tests/data/dpsgd/blobs.csv"
	run -0 --separate-stderr dpsgd-train -S 1 --classes 3 --epochs 3 \
	    --batch 32 --public-records 1000 -e 1 -d 1e-5 -v -o m.tns b.tns
	[[ $stderr == *"epoch 3/3"* ]]
	[[ $stderr != *"epoch 4"* ]]
}

# --level, --dataset and --clip: every tool that documents one takes it
# with the same range and the same message for a bad value (privada(7),
# "Conventions"; opts.h).  Fails on main before h/i15opts2: featurize
# spelled its row clip --clip-rows (its --help had no --clip), took any
# positive bound up to DBL_MAX and said "must be positive" for 0, where
# covest and gmm-fit say "must be in [1e-50, 1e+50]".
@test "shared options: --level, --dataset and --clip parse and fail alike" {
	local t help sub lv=0 ds=0 cl=0
	for t in coral-align covest dpsgd-train featurize gmm-fit kde-publish \
	    mia-eval predict psdshrink rdp-account teacher-vote tns; do
		run -0 "$t" --help
		help=$output
		sub=()
		[[ $t == tns ]] && sub=(cat)	# tns: the command comes first
		if grep -Eq -- "^ +--level [A-Za-z]" <<<"$help"; then
			lv=$((lv + 1))
			run -64 --separate-stderr "$t" "${sub[@]}" --level 23
			[[ $stderr == "$t: invalid --level '23': must be in [-131072, 22]"* ]]
			run -64 --separate-stderr "$t" "${sub[@]}" --level x
			[[ $stderr == "$t: invalid --level 'x': not an integer"* ]]
		fi
		if grep -Eq -- "^ +--dataset NAME" <<<"$help"; then
			ds=$((ds + 1))
			run -64 --separate-stderr "$t" --dataset Bad-Name
			[[ $stderr == "$t: invalid --dataset 'Bad-Name': dataset name may only use [a-z0-9_]"* ]]
		fi
		if grep -Eq -- "^ +--clip [A-Z]" <<<"$help"; then
			cl=$((cl + 1))
			run -64 --separate-stderr "$t" --clip 0
			[[ $stderr == "$t: invalid --clip '0': must be in ["* ]]
			run -64 --separate-stderr "$t" --clip nan
			[[ $stderr == "$t: invalid --clip 'nan': out of range"* ]]
			run -64 --separate-stderr "$t" --clip x
			[[ $stderr == "$t: invalid --clip 'x': not a number"* ]]
		fi
	done
	# who documents what: every tool writing a stream takes --level;
	# every tool reading raw records takes --dataset; the row and
	# gradient clippers take --clip.
	(( lv == 10 && ds == 6 && cl == 4 ))
	# the row clippers share one range
	for t in covest featurize gmm-fit; do
		run -64 --separate-stderr "$t" --clip 1e51
		[[ $stderr == "$t: invalid --clip '1e51': must be in [1e-50, 1e+50]"* ]]
	done
	# featurize's old spelling still works, with its own name in messages
	run -64 --separate-stderr featurize --clip-rows 0
	[[ $stderr == "featurize: invalid --clip-rows '0': must be in [1e-50, 1e+50]"* ]]
	run -0 featurize -q --label label --clip-rows 2.5 -o a.tns "$TOP/tests/data/featurize/norms.csv"
	run -0 featurize -q --label label --clip 2.5 -o b.tns "$TOP/tests/data/featurize/norms.csv"
}
