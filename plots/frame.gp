## The frame of every figure: the same drawing once as PNG and once as SVG. `harness plot`
## fills {{stem}}, {{title}}, {{width}}, {{height}} and {{body}} (the figure kind's template,
## filled). Lines starting with ## stay here; every other line goes into each NAME.gp.
# {{stem}}.gp: {{title}}
# Written by `harness plot`; the numbers are in {{stem}}.dat. Edit and redraw with: gnuplot {{stem}}.gp
# Text is not 'enhanced' so that names with underscores print as written.
datafile = "{{stem}}.dat"
do for [format in "png svg"] {
  if (format eq "png") {
    set terminal pngcairo size {{width}},{{height}} noenhanced font "DejaVu Sans,11"
  } else {
    set terminal svg size {{width}},{{height}} noenhanced font "DejaVu Sans,11" background rgb "white"
  }
  set output "{{stem}}." . format
  reset
{{body}}
  set output
}
