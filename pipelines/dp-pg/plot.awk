# plot.awk: mia-auc.svg from results.tsv (collect.awk): test accuracy
# (left) and the loss attack's AUC (right) against the record-level
# epsilon of the ledger (log scale), DP-SGD and DP-PG as lines, the
# non-private models as dashed horizontal lines.  Plain SVG by awk.
function X(p, e) { return px[p] + (log(e) / log(10) - x0) / (x1 - x0) * pw }
function Y(p, v) { return top + (1 - (v - ylo[p]) / (yhi[p] - ylo[p])) * ph }
BEGIN { FS = "\t" }
NR == 1 { next }
{
	n++
	meth[n] = $2; e[n] = $11; acc[n] = $5 / 100; auc[n] = $13
	if ($11 != "inf") {
		l = log($11) / log(10)
		if (!have || l < x0) x0 = l
		if (!have || l > x1) x1 = l
		have = 1
	}
}
END {
	if (!have) { x0 = -1; x1 = 1 }
	x0 = int(x0 < 0 ? x0 - 1 : x0); x1 = int(x1 + 1)
	if (x1 <= x0) x1 = x0 + 1
	W = 1000; H = 420; top = 40; ph = 300; pw = 380
	px[1] = 70; px[2] = 570
	ylo[1] = 0; yhi[1] = 1; ylo[2] = 0.4; yhi[2] = 1
	title[1] = "test accuracy"; title[2] = "membership inference AUC (loss attack)"
	col["dpsgd"] = "#1f77b4"; col["dp-pg"] = "#d62728"
	col["all"] = "#2ca02c"; col["single"] = "#9467bd"
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " \
	    "font-family=\"sans-serif\" font-size=\"12\">\n", W, H
	printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H
	for (p = 1; p <= 2; p++) {
		printf "<text x=\"%d\" y=\"24\" font-size=\"14\">Fashion-MNIST: %s</text>\n",
		    px[p], title[p]
		for (v = ylo[p]; v <= yhi[p] + 1e-9; v += 0.1) {
			printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			    px[p], px[p] + pw, Y(p, v), Y(p, v)
			printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n",
			    px[p] - 6, Y(p, v) + 4, v
		}
		for (k = x0; k <= x1; k++) {
			xx = px[p] + (k - x0) / (x1 - x0) * pw
			printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n",
			    xx, xx, top, top + ph
			printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">1e%d</text>\n",
			    xx, top + ph + 16, k
		}
		printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ε (record level, " \
		    "rdp-account ledger)</text>\n", px[p] + pw / 2, top + ph + 34
		printf "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" " \
		    "stroke=\"black\"/>\n", px[p], top, pw, ph
		for (i = 1; i <= n; i++) {
			v = p == 1 ? acc[i] : auc[i]
			s = meth[i] == "dpsgd-matched" ? "dpsgd" : meth[i]
			if (e[i] == "inf") {
				printf "<g><title>%s: %.3f</title><line x1=\"%d\" " \
				    "x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" " \
				    "stroke-dasharray=\"6 4\"/></g>\n", meth[i], v, px[p],
				    px[p] + pw, Y(p, v), Y(p, v), col[s]
				continue
			}
			printf "<g><title>%s ε=%.4g: %.3f</title><circle cx=\"%.1f\" " \
			    "cy=\"%.1f\" r=\"4\" fill=\"%s\"/></g>\n", meth[i], e[i], v,
			    X(p, e[i]), Y(p, v), col[s]
			# a line to the next point of the same series, by epsilon
			best = 0
			for (j = 1; j <= n; j++) {
				t = meth[j] == "dpsgd-matched" ? "dpsgd" : meth[j]
				if (t != s || e[j] == "inf" || e[j] + 0 <= e[i] + 0)
					continue
				if (!best || e[j] + 0 < e[best] + 0)
					best = j
			}
			if (best) {
				w = p == 1 ? acc[best] : auc[best]
				printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" " \
				    "stroke=\"%s\"/>\n", X(p, e[i]), X(p, e[best]), Y(p, v),
				    Y(p, w), col[s]
			}
		}
	}
	split("dpsgd dp-pg all single", L, " ")
	split("DP-SGD|DP-PG (kde-publish)|non-private, all rows|non-private, one partition", N, "|")
	for (k = 1; k <= 4; k++) {
		printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>\n",
		    70 + (k - 1) * 220, H - 28, col[L[k]]
		printf "<text x=\"%d\" y=\"%d\">%s</text>\n", 86 + (k - 1) * 220, H - 18, N[k]
	}
	print "</svg>"
}
