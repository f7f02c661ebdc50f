## bucket_sweep and sweep: per phase, latency vs one swept axis (the DDP bucket cap, or any
## other numeric axis); per system a p50 line, a p10-p90 band and p99 marks. {{title}},
## {{xlabel}}, {{ylabel}}: gnuplot strings; {{logscale}}: `set logscale x` when the values span
## 10x or more, else `unset logscale x`; {{xtics}}: tics at the swept values; {{plot}}: the
## plot command (series colours from harness/plot/style.cpp).
set title {{title}}
set xlabel {{xlabel}}
set ylabel {{ylabel}}
{{logscale}}
{{xtics}}
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
set grid
set key outside right top box opaque
set style fill transparent solid 0.18 noborder
{{plot}}
