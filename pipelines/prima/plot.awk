# plot.awk: accuracy.svg, the mean accuracy over tasks against epsilon
# (log scale), one line per method, from the data's README.md (published
# accuracies) and results.tsv (summarize.awk).  Non-private references are
# horizontal lines: the sigma = 0 runs and the published means over the
# same tasks.  -v eps: the private epsilons, in order; -v delta.
BEGIN { FS = "\t" }

FNR == NR {
	if ($0 !~ /^\|/)
		next
	nf = split($0, c, "|")
	for (i = 2; i < nf; i++)
		gsub(/^ +| +$/, "", c[i])
	if (c[2] == "") {
		for (i = 3; i < nf; i++)
			col[i] = c[i]
	} else if (c[2] ~ /^NN \(JDA/ || c[2] ~ /^CORAL \(AAAI/) {
		ref = (c[2] ~ /^NN/) ? "nn" : "coral"
		for (i = 3; i < nf; i++)
			pub[ref, col[i]] = c[i]
	}
	next
}

FNR == 1 { next }

{
	sum[$1, $4] += $6
	n[$1, $4]++
	if (!(($2, $3) in istask)) {
		istask[$2, $3] = 1
		nt++
		lab = toupper(substr($2, 1, 1)) "→" toupper(substr($3, 1, 1))
		for (r = 1; r <= 2; r++) {
			ref = r == 1 ? "coral" : "nn"
			if ((ref, lab) in pub) {
				psum[ref] += pub[ref, lab]
				pn[ref]++
			}
		}
	}
}

function X(v) { return x0 + (log(v) / log(2) - lmin) / (lmax - lmin) * (x1 - x0) }
function Y(v) { return y1 - v / ymax * (y1 - y0) }

function series(m, color, name, shape, ly,    j, pts, v) {
	pts = ""
	for (j = 1; j <= ne; j++) {
		v = sum[m, e[j]] / n[m, e[j]]
		pts = pts sprintf("%.1f,%.1f ", X(e[j]), Y(v))
	}
	printf "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", pts, color
	for (j = 1; j <= ne; j++) {
		v = sum[m, e[j]] / n[m, e[j]]
		marker(shape, X(e[j]), Y(v), color)
	}
	printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n", lx, ly, lx + 28, ly, color
	marker(shape, lx + 14, ly, color)
	printf "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 36, ly + 4, name
}

function marker(shape, x, y, color) {
	if (shape == "circle")
		printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>\n", x, y, color
	else
		printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"/>\n", x - 4, y - 4, color
}

function hline(v, color, dash, name, ly) {
	printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"%s\"/>\n", x0, Y(v), x1, Y(v), color, dash
	printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"%s\"/>\n", lx, ly, lx + 28, ly, color, dash
	printf "<text x=\"%d\" y=\"%d\">%s (%.1f)</text>\n", lx + 36, ly + 4, name, v
}

END {
	ne = split(eps, e, " ")
	if (ne == 0 || nt == 0) {
		print "plot.awk: nothing to plot" > "/dev/stderr"
		exit 1
	}
	W = 760; H = 420; x0 = 64; x1 = 440; y0 = 44; y1 = 360; lx = 460
	lmin = lmax = log(e[1]) / log(2)
	for (j = 2; j <= ne; j++) {
		l = log(e[j]) / log(2)
		if (l < lmin) lmin = l
		if (l > lmax) lmax = l
	}
	lmin -= 0.3; lmax += 0.3
	top = 0
	for (k in sum) {
		split(k, kk, SUBSEP)
		v = sum[k] / n[k]
		if (v > top) top = v
	}
	for (r in psum)
		if (pn[r] == nt && psum[r] / nt > top) top = psum[r] / nt
	ymax = 10 * int(top / 10 + 1)
	printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H
	printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H
	printf "<text x=\"%d\" y=\"24\" font-size=\"15\">PRIMA on Office-Caltech10 SURF: mean accuracy over %d task(s)</text>\n", x0, nt
	for (v = 0; v <= ymax; v += 10) {
		printf "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", x0, Y(v), x1, Y(v)
		printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d</text>\n", x0 - 6, Y(v) + 4, v
	}
	for (j = 1; j <= ne; j++) {
		printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#dddddd\"/>\n", X(e[j]), y0, X(e[j]), y1
		printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", X(e[j]), y1 + 18, e[j]
	}
	printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", x0, y1, x1, y1
	printf "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", x0, y0, x0, y1
	printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">ε per dataset (δ = %s), log scale</text>\n", (x0 + x1) / 2, y1 + 40, delta
	printf "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">target accuracy (%%)</text>\n", (y0 + y1) / 2, (y0 + y1) / 2
	series("prima", "#1f77b4", "PRIMA (DP)", "circle", y0 + 10)
	series("noadapt", "#ff7f0e", "no adaptation (DP)", "square", y0 + 32)
	ly = y0 + 54
	if (("prima", "np") in n) {
		hline(sum["prima", "np"] / n["prima", "np"], "#1f77b4", "6,4", "CORAL, σ = 0, NOT private", ly)
		ly += 22
	}
	if (("noadapt", "np") in n) {
		hline(sum["noadapt", "np"] / n["noadapt", "np"], "#ff7f0e", "6,4", "no adaptation, σ = 0, NOT private", ly)
		ly += 22
	}
	if (pn["coral"] == nt) {
		hline(psum["coral"] / nt, "#555555", "2,3", "CORAL, published", ly)
		ly += 22
	}
	if (pn["nn"] == nt) {
		hline(psum["nn"] / nt, "#999999", "8,3,2,3", "1-NN, published", ly)
		ly += 22
	}
	print "</svg>"
}
