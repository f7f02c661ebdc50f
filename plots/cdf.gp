## cdf: per point, the empirical CDF of iteration latency, one step curve per system.
## {{title}}: the figure's title (a gnuplot string); {{plot}}: the plot command, one
## `datafile index K` per system (columns: iteration_ms, fraction).
set title {{title}}
set xlabel "iteration latency (ms)"
set ylabel "fraction of iterations at most this latency"
set yrange [0:1.02]
set ytics 0.1
set grid
set key bottom right box opaque
{{plot}}
