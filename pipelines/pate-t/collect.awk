# collect.awk: results.tsv of the PATE-T experiment, one line per number of
# teachers x mechanism x noise level x student (means over the repeats),
# then the baselines.  Inputs, recognised by their names:
#   nN/CFG-rR.labels.acc      labelacc.awk: queries answered, label accuracy
#   nN/CFG-rR.labels.tns.dd   vote.sh: the data-dependent release's fate
#   nN/CFG-rR.vote.ms         wall milliseconds of the vote
#   nN/CFG-rR.S.student.acc   predict --report-format tsv on the test rows
#   nN/CFG-rR.S.ledger.tsv    rdp-account ledger --format tsv
#   nN/CFG-rR.S.student.ms    wall milliseconds of student S's training
#   nN/part-I.votes.acc       predict's report of teacher I on the queries
#   base/NAME.acc, base/NAME.ledger.tsv   np, true-labels-S, dp-E-rR
# CFG is MECH-LEVEL (lnmax-GAMMA, gnmax-SIGMA, cgnmax-S1_T_S, exact-0), S
# the student (classify, assoc).
# Output (the common shape of pipelines/README.md, then this
# experiment's columns): task method epsilon reps accuracy accuracy_sd
# eps_spent wall_s verdict acc_private, then teachers mechanism noise
# student answered (acc_private: "no" unless every raw mark of the test
# rows, in predict's report, is of a dataset declared public: -v public,
# or the verdict "public" in the ledger)
# label_acc teacher_acc epsilon_data_dependent data_dependent_released.
# task is "mnist->usps n=N" (N teachers; "mnist->usps" for the
# baselines); method MECH-STUDENT (lnmax-classify, cgnmax-assoc, ...; the
# baselines no-teachers, no-teachers-dpsgd, usps-true-labels-STUDENT);
# epsilon the guarantee for the protected dataset (-v protected) at the
# ledger's delta, data-independent (with the smooth-sensitivity
# release's cost when there is one), the mean over the repeats, "-" when
# not private; the DP-SGD baseline's is the epsilon it was asked for.
# accuracy and accuracy_sd: the student's accuracy on the held-out rows,
# percent, mean and sample sd over the repeats; eps_spent every ledger
# dataset's epsilon (the largest over the repeats; "-" where its verdict
# is not private or data_dependent); verdict the protected dataset's
# ("-" where it is not in the ledger); answered the queries answered and
# label_acc their labels' accuracy (fraction); teacher_acc the teachers'
# mean accuracy on the queries; epsilon_data_dependent the mean over the
# repeats of the ledger's sanitised data-dependent epsilon ("-" when never
# released: an estimate, not a guarantee); data_dependent_released
# "r/runs" for the mechanisms that try it (gnmax, cgnmax), "-" otherwise.
BEGIN { FS = OFS = "\t" }

function fail(msg) {
	printf "collect.awk: %s: %s\n", FILENAME, msg > "/dev/stderr"
	bad = 1
	exit 1
}

function noise(mech, lv,   a) {
	if (mech == "lnmax")
		return "gamma=" lv
	if (mech == "gnmax")
		return "sigma=" lv
	if (mech == "cgnmax") {
		split(lv, a, "_")
		return "sigma1=" a[1] ",T=" a[2] "n,sigma=" a[3]
	}
	return "none"
}

function addgroup(g) {
	if (!(g in known)) {
		known[g] = 1
		grp[++ng] = g
	}
}

FNR == 1 {
	np = split(FILENAME, p, "/")
	dir = p[np - 1]
	base = p[np]
	kind = ""
	g = g0 = ""
	if (dir ~ /^n[0-9]+$/ && base ~ /^part-[0-9]+\.votes\.acc$/) {
		kind = "teacher"
		tn = substr(dir, 2)
	} else if (dir ~ /^n[0-9]+$/) {
		if (!match(base, /-r[0-9]+\./))
			fail("unexpected file name")
		cfg = substr(base, 1, RSTART - 1)
		rest = substr(base, RSTART + 2)
		rep = rest
		sub(/\..*/, "", rep)
		kind = substr(rest, length(rep) + 2)
		mech = cfg
		sub(/-.*/, "", mech)
		lv = substr(cfg, length(mech) + 2)
		g0 = substr(dir, 2) SUBSEP mech SUBSEP noise(mech, lv)
		if (kind ~ /^(classify|assoc)\./) {
			st = kind
			sub(/\..*/, "", st)
			kind = substr(kind, length(st) + 2)
			g = g0 SUBSEP st
			addgroup(g)
			if (!((g, rep) in hasrun)) {
				hasrun[g, rep] = 1
				nrun[g]++
			}
		} else if (kind !~ /^(labels\.acc|labels\.tns\.dd|vote\.ms)$/)
			fail("unexpected file name")
	} else if (dir == "base") {
		name = base
		sub(/\.(ledger\.tsv|acc)$/, "", name)
		kind = (base ~ /\.acc$/) ? "student.acc" : "ledger.tsv"
		rep = 1
		if (name ~ /^dp-/) {
			split(name, a, "-")
			g = "-" SUBSEP "no-teachers-dpsgd" SUBSEP "eps=" a[2] SUBSEP "-"
			rep = substr(a[3], 2)
		} else if (name == "np")
			g = "-" SUBSEP "no-teachers" SUBSEP "none" SUBSEP "-"
		else if (name ~ /^true-labels-(classify|assoc)$/)
			g = "-" SUBSEP "usps-true-labels" SUBSEP "none" SUBSEP \
			    substr(name, 13)
		else
			fail("unexpected file name")
		addgroup(g)
		if (!((g, rep) in hasrun)) {
			hasrun[g, rep] = 1
			nrun[g]++
		}
	} else
		fail("unexpected file name")
}

kind == "teacher" && $1 == "all" { tsum[tn] += $2; tcnt[tn]++ }
kind == "labels.acc" && FNR == 2 {
	ans[g0] += $2; nl[g0]++
	if ($4 != "-") { lacc[g0] += $4; nla[g0]++ }
}
kind == "labels.tns.dd" { if ($0 ~ /^released /) ddrel[g0]++; if ($0 != "none") ddtry[g0]++ }
kind == "vote.ms" { vms[g0] += $1 }
kind == "student.acc" && FNR == 1 && $NF != "raw" { accraw[g] = "?" }
kind == "student.acc" && $1 == "all" {
	sacc[g] += $2; sacc2[g] += $2 * $2; ns[g]++
	# The test rows' raw marks (predict): NOT private unless the ledger
	# reports every such dataset public (checked at the end).
	if ($NF != "-")
		accraw[g] = accraw[g] (accraw[g] == "" ? "" : ",") $NF
}
kind == "ledger.tsv" && FNR > 1 && $11 == "public" { pubd[g, $1] = 1 }
BEGIN { npub = split(public, pl, " "); for (i = 1; i <= npub; i++) declared[pl[i]] = 1 }
kind == "ledger.tsv" && FNR > 1 {
	if (!((g, $1) in spent)) {
		dsets[g] = dsets[g] (dsets[g] == "" ? "" : SUBSEP) $1
		spent[g, $1] = "-"
	}
	if ($11 == "private" || $11 == "data_dependent") {
		if (spent[g, $1] == "-" || $3 + 0 > spent[g, $1] + 0)
			spent[g, $1] = sprintf("%.4g", $3)
	}
}
kind == "ledger.tsv" && FNR > 1 && $1 == protected {
	verdict[g] = $11
	if ($11 == "private" || $11 == "data_dependent") {
		eps[g] += $3; ne[g]++
	}
	if ($13 != "-" && $13 != "") {
		edd[g] += $13; nedd[g]++
	}
}
kind == "student.ms" { sms[g] += $1 }

function num(s) { return s == "-" ? -1 : s + 0 }
END {
	if (bad)
		exit 1
	print "task", "method", "epsilon", "reps", "accuracy", "accuracy_sd",
	    "eps_spent", "wall_s", "verdict", "acc_private", "teachers",
	    "mechanism", "noise",
	    "student", "answered", "label_acc", "teacher_acc",
	    "epsilon_data_dependent", "data_dependent_released"
	mo["lnmax"] = 1; mo["gnmax"] = 2; mo["cgnmax"] = 3; mo["exact"] = 4
	mo["no-teachers"] = 5; mo["no-teachers-dpsgd"] = 6
	mo["usps-true-labels"] = 7
	for (i = 1; i <= ng; i++) {
		g = grp[i]
		split(g, f, SUBSEP)
		h = f[1] SUBSEP f[2] SUBSEP f[3]
		r = nrun[g]
		m = ns[g] ? sacc[g] / ns[g] : 0
		sd = ns[g] > 1 ? sqrt((sacc2[g] - ns[g] * m * m) / (ns[g] - 1)) : 0
		if (sd != sd || sacc2[g] - ns[g] * m * m < 0)
			sd = 0
		e = ne[g] ? sprintf("%.4f", eps[g] / ne[g]) : "-"
		if (f[2] == "no-teachers-dpsgd")
			e = substr(f[3], 5)
		ap = "yes"
		na = split(accraw[g], ar, ",")
		for (j = 1; j <= na; j++) {
			split(ar[j], dm, "=")
			if (ar[j] == "?" || !((g, dm[1]) in pubd || dm[1] in declared))
				ap = "no"
		}
		nd = split(dsets[g], d, SUBSEP)
		sp = ""
		for (j = 1; j <= nd; j++)
			sp = sp (j > 1 ? "," : "") d[j] "=" spent[g, d[j]]
		line[i] = "mnist->usps" (f[1] != "-" ? " n=" f[1] : "") OFS \
		    f[2] (f[4] != "-" ? "-" f[4] : "") OFS e OFS r OFS \
		    sprintf("%.2f", 100 * m) OFS sprintf("%.2f", 100 * sd) OFS \
		    (sp == "" ? "-" : sp) OFS \
		    (f[1] != "-" ? sprintf("%.3f", (vms[h] / nl[h] + sms[g] / r) / 1000) : "-") OFS \
		    ((g in verdict) ? verdict[g] : "-") OFS ap OFS \
		    f[1] OFS f[2] OFS f[3] OFS f[4] OFS \
		    (nl[h] ? sprintf("%.1f", ans[h] / nl[h]) : "-") OFS \
		    (nla[h] ? sprintf("%.4f", lacc[h] / nla[h]) : "-") OFS \
		    (tcnt[f[1]] ? sprintf("%.4f", tsum[f[1]] / tcnt[f[1]]) : "-") OFS \
		    (nedd[g] ? sprintf("%.4f", edd[g] / nedd[g]) : "-") OFS \
		    (ddtry[h] ? (ddrel[h] + 0) "/" ddtry[h] : "-")
		key[i] = sprintf("%06d %d %s %012.4f %s", f[1] == "-" ? 999999 : f[1],
		    mo[f[2]], f[4], num(e), f[3])
		ord[i] = i
	}
	for (i = 2; i <= ng; i++)
		for (j = i; j > 1 && key[ord[j - 1]] > key[ord[j]]; j--) {
			t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t
		}
	for (i = 1; i <= ng; i++)
		print line[ord[i]]
}
