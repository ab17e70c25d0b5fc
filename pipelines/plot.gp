# plot.gp: accuracy against epsilon, drawn by pipelines/plot from the
# blocks it prepares and the variables it loads first (vars.gp):
# data (one block per private method, "epsilon mean halfwidth", blocks
# separated by two blank lines, a comment line "# name" first);
# for panel p in 1, 2: nblocksp, blocksp (the data's block indices),
# namesp (legend names, quoted words), stylesp (yerrorlines, or
# yerrorbars for a one-point series), xlabelp; nrefs, refnames (quoted
# words) and refvals (non-private references, dashed horizontal lines);
# ylo, yhi (the y range), errlabel, title, out (without .png/.svg), ylabel.
# Two panels side by side when nblocks2 > 0: two kinds of epsilon never
# share an axis.
set ylabel ylabel
set logscale x 2
set key below noenhanced
set format x "%.3g"
set grid
set yrange [ylo:yhi]
set offsets graph 0.05, graph 0.05, 0, 0
set pointsize 1.2
panels = (nblocks2 > 0) ? 2 : 1
do for [term in "svg pngcairo"] {
	if (term eq "svg") {
		set terminal svg size 900*panels,560 dynamic font "sans,12"
		set output out.".svg"
	} else {
		set terminal pngcairo size 900*panels,560 font "sans,10"
		set output out.".png"
	}
	set multiplot layout 1,panels title title."\n{/*0.8 ".errlabel."}"
	do for [p=1:panels] {
		nb = (p == 1) ? nblocks1 : nblocks2
		bl = (p == 1) ? blocks1 : blocks2
		nm = (p == 1) ? names1 : names2
		st = (p == 1) ? styles1 : styles2
		set xlabel ((p == 1) ? xlabel1 : xlabel2) noenhanced
		cmd = "plot"
		do for [i=1:nb] {
			# past 8 series the colours repeat: another point type
			b = word(bl, i) + 0
			cmd = cmd.sprintf("%s data index %d using 1:2:3 with %s pt %s lw 2 lc %d title word(nm, %d)", \
			    (i > 1 ? "," : ""), b, word(st, i), word("7 5 9 11", b / 8 % 4 + 1), b + 1, i)
		}
		do for [j=1:nrefs] {
			cmd = cmd.sprintf(", %s with lines dt 2 lw 1.5 lc %d title word(refnames, %d)", \
			    word(refvals, j), nblocks1 + nblocks2 + j, j)
		}
		eval cmd
	}
	unset multiplot
	unset output
}
