# plot.awk: out/results.svg, a grouped bar chart of our target accuracies
# per pair, with paper 000's DPDA (Table V) as a black tick.  Plain SVG,
# written by awk (no plotting dependency).  Inputs as report.awk.
function ab(d) { return toupper(substr(d, 1, 1)) }
function y(v) { return top + (1 - (v - lo) / (hi - lo)) * ph }
BEGIN {
	FS = "\t"
	lo = 0.5; hi = 0.9
	W = 1100; H = 460; left = 60; top = 30; ph = 340; right = 20
	ne = split(eps, E, " ")
	ng = split(geps, G, " ")
	ns = 0
	ser[++ns] = "nn"; lab[ns] = "NN"; colr[ns] = "#9e9e9e"
	ser[++ns] = "dann"; lab[ns] = "DANN"; colr[ns] = "#1f77b4"
	split("#ff9f40 #d62728 #8c564b #e377c2", pal, " ")
	for (i = 1; i <= ne; i++) {
		ser[++ns] = "dpda-" E[i]; lab[ns] = "DPDA ε=" E[i]
		colr[ns] = pal[i]
	}
	for (i = 1; i <= ng; i++) {
		ser[++ns] = "gdpda-" G[i]; lab[ns] = "G-DPDA ε=" G[i]
		colr[ns] = "#2ca02c"
	}
}
FILENAME ~ /paper000/ {
	if ($0 ~ /^#/ || $1 == "source")
		next
	np++
	ps[np] = $1; pt[np] = $2; PD[$1, $2] = $5
	next
}
FILENAME ~ /results/ {
	if ($1 == "source")
		next
	R[$1, $2, $3 (($4 == "-") ? "" : "-" $4)] = $5
	have[$1, $2] = 1
}
END {
	for (i = 1; i <= np; i++)
		if ((ps[i], pt[i]) in have)
			pairs[++n] = i
	gw = (W - left - right) / (n ? n : 1)
	bw = gw * 0.8 / ns
	printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" " \
	    "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
	printf "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H
	printf "<text x=\"%d\" y=\"18\" font-size=\"14\">Amazon reviews: " \
	    "target test accuracy (bars: ours; black tick: paper 000's " \
	    "DPDA)</text>\n", left
	for (v = lo; v <= hi + 1e-9; v += 0.05) {
		printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" " \
		    "stroke=\"#ddd\"/>\n", left, W - right, y(v), y(v)
		printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f" \
		    "</text>\n", left - 6, y(v) + 4, v
	}
	for (k = 1; k <= n; k++) {
		i = pairs[k]; s = ps[i]; t = pt[i]
		x0 = left + (k - 1) * gw + gw * 0.1
		for (j = 1; j <= ns; j++) {
			v = R[s, t, ser[j]]
			if (v == "")
				continue
			vv = v < lo ? lo : v > hi ? hi : v
			printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" " \
			    "height=\"%.1f\" fill=\"%s\"><title>%s→%s %s: " \
			    "%.3f</title></rect>\n", x0 + (j - 1) * bw, y(vv),
			    bw * 0.95, y(lo) - y(vv), colr[j], s, t, lab[j], v
		}
		if (PD[s, t] != "")
			printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" " \
			    "y2=\"%.1f\" stroke=\"black\" stroke-width=\"2\"/>\n",
			    x0, x0 + ns * bw, y(PD[s, t]), y(PD[s, t])
		printf "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">" \
		    "%s→%s</text>\n", x0 + ns * bw / 2, y(lo) + 16, ab(s), ab(t)
	}
	printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" " \
	    "stroke=\"black\"/>\n", left, W - right, y(lo), y(lo)
	for (j = 1; j <= ns; j++) {
		lx = left + (j - 1) * 130
		printf "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" " \
		    "fill=\"%s\"/>\n", lx, H - 36, colr[j]
		printf "<text x=\"%d\" y=\"%d\">%s</text>\n", lx + 16, H - 26,
		    lab[j]
	}
	printf "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" " \
	    "stroke=\"black\" stroke-width=\"2\"/>\n", left + ns * 130,
	    left + ns * 130 + 14, H - 30, H - 30
	printf "<text x=\"%d\" y=\"%d\">paper 000 DPDA (ε=8)</text>\n",
	    left + ns * 130 + 18, H - 26
	print "</svg>"
}
