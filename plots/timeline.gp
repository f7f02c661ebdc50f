## timeline: a Gantt chart of one traced iteration, a row per rank, lanes for compute and each
## communication kind. {{title}}: gnuplot string; {{xrange}}, {{yrange}}: `[a:b]`; {{ytics}}:
## the rows' labels; {{plot}}: the plot command (bars drawn as boxxyerror from the data).
set title {{title}}
set xlabel "time since the first event of the iteration (ms)"
set xrange {{xrange}}
set yrange {{yrange}}
{{ytics}}
set ytics nomirror scale 0
set grid xtics lc rgb "#BBBBBB" lw 0.5
## Beside the chart, not below it: below, gnuplot sets the key over the x label.
set key outside right top vertical Left reverse samplen 1.5 spacing 1.4 box
set border 3
{{plot}}
