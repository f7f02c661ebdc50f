## planner: the DAPPLE planner's estimated speedup vs global batch size, a panel per plan.csv.
## {{rows}}, {{columns}}: the panel grid; {{title}}: gnuplot string; {{xrange}}: the global
## batch sizes' range; {{panels}}: per panel its `set title` and plot command.
set multiplot layout {{rows}},{{columns}} title {{title}}
set xlabel "global batch size (samples, log scale)"
set ylabel "estimated speedup over 1 GPU (×)"
set logscale x 2
set xrange {{xrange}}
set format x "%g"
set yrange [0:*]
set offsets 0, 0, graph 0.06, 0
set grid
set key bottom right box opaque
{{panels}}
unset multiplot
