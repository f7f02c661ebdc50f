## scaling: iteration time (p50, p10-p90 bars) and throughput vs world size, side by side.
## {{title}}: gnuplot string; {{xtics}}: tics at the swept world sizes; {{time_plot}} and
## {{throughput_plot}}: the two plot commands; {{throughput_ylabel}}: gnuplot string.
set multiplot layout 1,2 title {{title}}
set xlabel "world size (ranks)"
{{xtics}}
set offsets graph 0.05, graph 0.05, graph 0.08, graph 0.08
set grid
set key top left box opaque
set title "iteration time: p50, bars p10-p90"
set ylabel "iteration time (ms)"
{{time_plot}}
set title "throughput (from the mean iteration time)"
set ylabel {{throughput_ylabel}}
{{throughput_plot}}
unset multiplot
