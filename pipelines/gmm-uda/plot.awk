# plot.awk: out/results.svg, target test accuracy against the total
# source epsilon (log scale), one line per method averaged over the pairs,
# the non-private accuracies as dashed horizontal lines.  Plain SVG
# written by awk (no plotting dependency).  Input: out/results.tsv;
# -v eps (the epsilons).
function x(e) { return left + (log(e) - log(emin)) / (log(emax) - log(emin)) * pw }
function y(v) { return top + (1 - (v - lo) / (hi - lo)) * ph }
BEGIN {
	FS = "\t"
	lo = 0.5; hi = 0.9
	W = 740; H = 460; left = 60; top = 30; pw = 620; ph = 340
	ne = split(eps, EP, " ")
	emin = EP[1]; emax = EP[ne]
	if (emin == emax) { emin /= 2; emax *= 2 }
	ns = split("src dann gmmuda", ser, " ")
	split("nn dann gmmuda", npser, " ")
	split("no adaptation|DANN (source data)|gmm-uda", lab, "|")
	split("#9e9e9e #1f77b4 #d62728", colr, " ")
}
$1 == "source" { next }
{ S[$3, $4] += $5; N[$3, $4]++ }
END {
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" " \
	    "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
	printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H
	printf "<text x=\"%d\" y=\"18\" font-size=\"14\">Amazon reviews: " \
	    "target test accuracy vs total source ε (dashed: non-private)" \
	    "</text>\n", left
	for (v = lo; v <= hi + 1e-9; v += 0.05) {
		printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" " \
		    "stroke=\"#ddd\"/>\n", left, left + pw, y(v), y(v)
		printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f" \
		    "</text>\n", left - 6, y(v) + 4, v
	}
	for (j = 1; j <= ne; j++)
		printf "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">" \
		    "ε=%s</text>\n", x(EP[j]), y(lo) + 16, EP[j]
	printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" " \
	    "stroke=\"black\"/>\n", left, left + pw, y(lo), y(lo)
	for (i = 1; i <= ns; i++) {
		if (N[npser[i], "-"]) {
			v = S[npser[i], "-"] / N[npser[i], "-"]
			v = v < lo ? lo : v > hi ? hi : v
			printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" " \
			    "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" " \
			    "stroke-dasharray=\"6,4\"/>\n", left, left + pw, y(v),
			    y(v), colr[i]
			npv[i] = sprintf(" (non-private %.3f)", S[npser[i], "-"] / N[npser[i], "-"])
		}
		pts = ""
		for (j = 1; j <= ne; j++) {
			if (!N[ser[i], EP[j]])
				continue
			v = S[ser[i], EP[j]] / N[ser[i], EP[j]]
			v = v < lo ? lo : v > hi ? hi : v
			pts = pts sprintf("%.1f,%.1f ", x(EP[j]), y(v))
			printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" " \
			    "fill=\"%s\"/>\n", x(EP[j]), y(v), colr[i]
		}
		if (pts != "")
			printf "<polyline points=\"%s\" fill=\"none\" " \
			    "stroke=\"%s\" stroke-width=\"2\"/>\n", pts, colr[i]
		printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" " \
		    "fill=\"%s\"/>\n", left + (i - 1) * 250, H - 36, colr[i]
		printf "<text x=\"%d\" y=\"%d\">%s%s</text>\n",
		    left + (i - 1) * 250 + 16, H - 26, lab[i], npv[i]
	}
	print "</svg>"
}
