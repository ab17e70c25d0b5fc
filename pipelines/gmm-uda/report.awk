# report.awk: out/results.md from out/results.tsv (the common shape with
# acc_private, then source, target, source_epsilon_spent): per method, the target
# test accuracy without privacy and at each total source epsilon, averaged
# over the pairs (and per pair when there are several).  -v eps (the
# epsilons), delta, share (the encoder's share), gmmuda (yes/no).
function f(x) { return x == "" ? "–" : sprintf("%.1f", 100 * x) }
function cell(k,   c) {
	if (!(k in N))
		return "–"
	c = f(S[k] / N[k])
	if (k in E && E[k] != "")
		c = c sprintf(" (%.2f)", E[k] / N[k])
	return c
}
BEGIN {
	FS = "\t"
	ne = split(eps, EP, " ")
	nm = split("nn:no adaptation (source model):src|dann:DANN (source data):dann|" \
	    "gmmuda:gmm-uda (mixture samples):gmmuda", M, "|")
	for (i = 1; i <= nm; i++) {
		split(M[i], part, ":")
		npm[i] = part[1]; lab[i] = part[2]; dpm[i] = part[3]
	}
}
FNR == 1 && $1 == "source" { next }
FNR == 1 {
	if ($1 != "task" || $10 != "acc_private" || $13 != "source_epsilon_spent") {
		print "report.awk: " FILENAME ": not gmm-uda's results.tsv" > "/dev/stderr"
		exit 1
	}
	next
}
FILENAME ~ /privacy/ {
	npv++
	pv[npv] = sprintf("| %s | %s | %s | %.6g | %s |", $1, $2, $3, $4, $5)
	next
}
{
	pair = $11 "→" $12
	if (!(pair in seen)) {
		seen[pair] = 1; P[++np] = pair
	}
	for (g = 1; g <= 2; g++) {
		k = (g == 1 ? "all" : pair) SUBSEP $2 SUBSEP $3
		S[k] += $5 / 100; N[k]++
		if ($13 != "-")
			E[k] += $13
		T[k] += $8
	}
	if ($10 != "yes")
		accno = 1
}
function table(grp,   i, j, line, k) {
	line = "| method | non-private |"
	rule = "|---|---|"
	for (j = 1; j <= ne; j++) {
		line = line " ε=" EP[j] " |"; rule = rule "---|"
	}
	print line
	print rule
	for (i = 1; i <= nm; i++) {
		line = "| " lab[i] " | " cell(grp SUBSEP npm[i] SUBSEP "-") " |"
		for (j = 1; j <= ne; j++)
			line = line " " cell(grp SUBSEP dpm[i] SUBSEP EP[j]) " |"
		print line
	}
}
END {
	print "# gmm-uda on the Amazon reviews (paper 003's pipeline, made DP)"
	print ""
	if (stamp != "") {
		print "_" stamp "_"
		print ""
	}
	print "Target test accuracy (%) with, in brackets, the epsilon that"
	print "`rdp-account ledger` gives the source dataset for what the source"
	printf "side publishes (δ = %s), averaged over %d pair(s)%s", delta, np,
	    (np <= 4 ? ": " : " (per pair below).\n")
	if (np <= 4)
		for (i = 1; i <= np; i++)
			printf "%s%s", P[i], (i < np ? ", " : ".\n")
	print ""
	print "- no adaptation: the source MLP on the target; non-private, and"
	print "  at ε the DP-SGD encoder of the gmm-uda branch alone (trained at"
	print "  " share " ε, so its bracket is below ε)."
	print "- DANN: dpsgd-train --mode dann with the source rows; at ε the"
	print "  source protected (DP-SGD at ε; the target is not protected)."
	print "- gmm-uda: the source MLP, its features of the source rows, one"
	print "  Gaussian per class fitted by gmm-fit --by-label (non-private: EM"
	print "  on the non-private MLP's features, no DP anywhere; at ε: DP-SGD"
	print "  encoder at " share " ε and DP-EM with the rest, composed in RDP),"
	print "  samples from it, then dpsgd-train --mode gmm-uda on the target."
	if (gmmuda != "yes") {
		print ""
		print "**The gmm-uda rows are missing**: the dpsgd-train used has no"
		print "`--mode gmm-uda`. The source side (mixtures, samples and their"
		print "budget checks) was built; see `make samples`."
	}
	if (accno) {
		print ""
		print "**The accuracies are NOT private** (results.tsv `acc_private` ="
		print "no): they are computed without privacy on the target's test"
		print "rows, records of a protected dataset (`predict` marks them)."
	}
	print ""
	table("all")
	if (np > 1)
		for (i = 1; i <= np; i++) {
			print ""
			print "## " P[i]
			print ""
			table(P[i])
		}
	print ""
	print "Every DP branch was checked by `rdp-account ledger --budget ε`"
	print "before its result was used. One run each: DP runs draw fresh"
	print "noise, so differences of a point or two are within run-to-run"
	print "variation."
	if (npv) {
		print ""
		print "## What the source side publishes"
		print ""
		print "The ledger of the mixture's samples (which carries the"
		print "encoder's DP-SGD release and the mixture's DP-EM release) with"
		print "the encoder's model, composed per dataset by `rdp-account"
		print "ledger` at δ = " delta ":"
		print ""
		print "| source | ε asked | releases | ε accounted | verdict |"
		print "|---|---|---|---|---|"
		for (i = 1; i <= npv; i++)
			print pv[i]
	}
}
