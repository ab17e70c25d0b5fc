# plot.gp: accuracy against epsilon, drawn by pipelines/plot from the
# blocks it prepares.  Variables (gnuplot -e): data (the prepared file:
# one block per private method, "epsilon mean sd", blocks separated by
# two blank lines, a comment line "# name" first), nblocks, names (the
# blocks' names, space-separated), nrefs, refnames and refvals (the
# non-private references' names and mean accuracies, space-separated,
# drawn as dashed horizontal lines), title, out (the output name without
# .png/.svg), ylabel.
set xlabel "privacy budget ε per dataset (δ = 1e-5), log scale"
set ylabel ylabel
set title title noenhanced
set logscale x 2
set key outside right top noenhanced
set grid
set yrange [*:*]
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set style data yerrorlines
do for [term in "svg pngcairo"] {
	if (term eq "svg") {
		set terminal svg size 900,500 dynamic font "sans,12"
		set output out.".svg"
	} else {
		set terminal pngcairo size 900,500 font "sans,10"
		set output out.".png"
	}
	if (nrefs > 0) {
		plot for [i=0:nblocks-1] data index i using 1:2:3 title word(names, i+1) lw 2, \
		     for [j=1:nrefs] (word(refvals, j) + 0) with lines dt 2 lw 1.5 \
		         title word(refnames, j)." (NOT private)"
	} else {
		plot for [i=0:nblocks-1] data index i using 1:2:3 title word(names, i+1) lw 2
	}
	unset output
}
