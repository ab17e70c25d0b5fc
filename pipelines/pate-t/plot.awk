# plot.awk: accuracy-STUDENT.svg, one student's accuracy on held-out USPS
# against epsilon (log scale), one line per number of teachers and
# mechanism (circles lnmax, squares gnmax, diamonds confident GNMax):
# solid lines and filled marks at the guarantee (data-independent
# epsilon), dashed lines and hollow marks at the sanitised data-dependent
# epsilon where it was released (an estimate, not a guarantee); the "no
# teachers" DP-SGD baseline (black triangles) and dashed horizontal lines
# for the NOT private references.  Plain SVG written by awk.  Input:
# results.tsv; variables delta, share, student.
function X(e) { return left + (log(e) - log(elo)) / (log(ehi) - log(elo)) * pw }
function Y(v) { return top + (1 - v) * ph }
BEGIN {
	FS = "\t"
	elo = 0.25; ehi = 64
	W = 900; H = 520; left = 60; top = 40; pw = 600; ph = 420
	split("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b", pal, " ")
}
NR == 1 { next }
$13 != student && $13 != "-" { next }
function point(s, x, dd) {
	if (!(s in sid)) {
		sid[s] = ++ns; sn[ns] = $1; sm[ns] = $2; sdd[ns] = dd
		if (!($1 in cid))
			cid[$1] = ++nc
	}
	k = ++np[s]; PX[s, k] = x; PY[s, k] = $9 + 0
}
$5 != "-" && $1 != "-" {
	point($1 " " $2, $5 + 0, 0)
	if ($14 != "-")
		point($1 " " $2 " dd", $14 + 0, 1)
	next
}
$2 == "no-teachers-dpsgd" && $5 != "-" { ++nb; BX[nb] = $5 + 0; BY[nb] = $9 + 0; next }
$2 == "exact" { ++nh; HL[nh] = "exact vote, " $1 " teachers"; HV[nh] = $9 + 0; HC[nh] = $1; next }
$2 == "no-teachers" { ++nh; HL[nh] = "MNIST model, no teachers"; HV[nh] = $9 + 0; HC[nh] = "-"; next }
$2 == "usps-true-labels" { ++nh; HL[nh] = "true USPS labels"; HV[nh] = $9 + 0; HC[nh] = "+"; next }
END {
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" " \
	    "font-family=\"sans-serif\" font-size=\"12\">\n", W, H
	printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H
	printf "<text x=\"%d\" y=\"20\" font-size=\"14\">PATE-T, MNIST teachers " \
	    "-&gt; USPS %s student (%s queries): accuracy vs epsilon " \
	    "(delta %s)</text>\n", left, student, share, delta
	for (v = 0; v <= 1.0001; v += 0.1) {
		printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
		    left, left + pw, Y(v), Y(v)
		printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.1f</text>\n",
		    left - 6, Y(v) + 4, v
	}
	for (e = elo; e <= ehi * 1.0001; e *= 2) {
		printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n",
		    X(e), X(e), top, top + ph
		printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
		    X(e), top + ph + 16, e
	}
	printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">epsilon " \
	    "(log scale; solid: guarantee, dashed: sanitised data-dependent)</text>\n", left + pw / 2, top + ph + 34
	printf "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" " \
	    "text-anchor=\"middle\">student accuracy on held-out USPS</text>\n",
	    top + ph / 2, top + ph / 2
	for (i = 1; i <= nh; i++) {
		c = (HC[i] in cid) ? pal[cid[HC[i]]] : (HC[i] == "+" ? "#000" : "#777")
		printf "<g><title>%s: %.3f (NOT private)</title><line x1=\"%d\" " \
		    "x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" " \
		    "stroke-dasharray=\"6,4\"/></g>\n",
		    HL[i], HV[i], left, left + pw, Y(HV[i]), Y(HV[i]), c
	}
	for (s in sid) {
		j = sid[s]; c = pal[cid[sn[j]]]
		# points sorted by epsilon
		n = np[s]
		for (a = 1; a <= n; a++) { ox[a] = PX[s, a]; oy[a] = PY[s, a] }
		for (a = 2; a <= n; a++)
			for (b = a; b > 1 && ox[b - 1] > ox[b]; b--) {
				t = ox[b]; ox[b] = ox[b - 1]; ox[b - 1] = t
				t = oy[b]; oy[b] = oy[b - 1]; oy[b - 1] = t
			}
		d = ""
		for (a = 1; a <= n; a++)
			d = d sprintf("%s%.1f,%.1f ", a == 1 ? "M" : "L", X(ox[a]), Y(oy[a]))
		printf "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s/>\n",
		    d, c, sdd[j] ? " stroke-dasharray=\"6,3\"" : ""
		fill = sdd[j] ? "white\" stroke=\"" c : c
		for (a = 1; a <= n; a++) {
			printf "<g><title>%s teachers, %s: %s epsilon %.3g, accuracy %.3f</title>",
			    sn[j], sm[j], sdd[j] ? "sanitised data-dependent" : "guaranteed",
			    ox[a], oy[a]
			if (sm[j] == "gnmax")
				printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\"/></g>\n",
				    X(ox[a]) - 4, Y(oy[a]) - 4, fill
			else if (sm[j] == "cgnmax")
				printf "<path d=\"M%.1f,%.1f l5,5 l-5,5 l-5,-5 z\" fill=\"%s\"/></g>\n",
				    X(ox[a]), Y(oy[a]) - 5, fill
			else
				printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/></g>\n",
				    X(ox[a]), Y(oy[a]), fill
		}
	}
	for (i = 1; i <= nb; i++)
		printf "<g><title>DP-SGD on MNIST, no teachers: epsilon %g, " \
		    "accuracy %.3f</title><path d=\"M%.1f,%.1f l5,9 l-10,0 z\" " \
		    "fill=\"black\"/></g>\n", BX[i], BY[i], X(BX[i]), Y(BY[i]) - 5
	# legend
	lx = left + pw + 20; ly = top + 10
	for (n in cid) {
		printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>" \
		    "<text x=\"%d\" y=\"%d\">%s teachers</text>\n",
		    lx, ly + 20 * (cid[n] - 1), pal[cid[n]], lx + 18, ly + 20 * (cid[n] - 1) + 10, n
	}
	ly += 20 * nc + 10
	printf "<circle cx=\"%d\" cy=\"%d\" r=\"4.5\" fill=\"#555\"/><text x=\"%d\" y=\"%d\">lnmax</text>\n",
	    lx + 6, ly + 6, lx + 18, ly + 10
	printf "<rect x=\"%d\" y=\"%d\" width=\"8\" height=\"8\" fill=\"#555\"/><text x=\"%d\" y=\"%d\">gnmax</text>\n",
	    lx + 2, ly + 22, lx + 18, ly + 30
	printf "<path d=\"M%d,%d l5,5 l-5,5 l-5,-5 z\" fill=\"#555\"/><text x=\"%d\" y=\"%d\">confident GNMax</text>\n",
	    lx + 6, ly + 37, lx + 18, ly + 46
	ly += 18
	printf "<path d=\"M%d,%d l5,9 l-10,0 z\" fill=\"black\"/><text x=\"%d\" y=\"%d\">DP-SGD on MNIST</text>\n",
	    lx + 6, ly + 41, lx + 18, ly + 50
	printf "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#555\" stroke-dasharray=\"6,3\"/>" \
	    "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"white\" stroke=\"#555\"/>" \
	    "<text x=\"%d\" y=\"%d\">data-dependent</text>\n", lx, lx + 14, ly + 64, ly + 64, lx + 7, ly + 64, lx + 18, ly + 68
	ly += 18
	printf "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#777\" stroke-dasharray=\"6,4\"/>" \
	    "<text x=\"%d\" y=\"%d\">NOT private:</text>\n", lx, lx + 14, ly + 66, ly + 66, lx + 18, ly + 70
	printf "<text x=\"%d\" y=\"%d\">exact vote (team colour),</text>\n", lx + 18, ly + 86
	printf "<text x=\"%d\" y=\"%d\">MNIST model (grey),</text>\n", lx + 18, ly + 102
	printf "<text x=\"%d\" y=\"%d\">true USPS labels (black)</text>\n", lx + 18, ly + 118
	print "</svg>"
}
