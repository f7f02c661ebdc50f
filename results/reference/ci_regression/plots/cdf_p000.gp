# cdf_p000.gp: ci_regression: CDF of iteration latency (default)
# Written by `harness plot`; the numbers are in cdf_p000.dat. Edit and redraw with: gnuplot cdf_p000.gp
# Text is not 'enhanced' so that names with underscores print as written.
datafile = "cdf_p000.dat"
do for [format in "png svg"] {
  if (format eq "png") {
    set terminal pngcairo size 1000,650 noenhanced font "DejaVu Sans,11"
  } else {
    set terminal svg size 1000,650 noenhanced font "DejaVu Sans,11" background rgb "white"
  }
  set output "cdf_p000." . format
  reset
  set title "ci_regression: distribution of iteration latency\npoint: default (samples pooled over ranks and repeats)"
  set xlabel "iteration latency (ms)"
  set ylabel "fraction of iterations at most this latency"
  set yrange [0:1.02]
  set ytics 0.1
  set grid
  set key bottom right box opaque
  plot datafile index 0 using 1:2 with steps lw 2 lc rgb "#0072B2" title "overlap (n=80)", \
       datafile index 1 using 1:2 with steps lw 2 lc rgb "#D55E00" title "sync (n=80)"
  set output
}
