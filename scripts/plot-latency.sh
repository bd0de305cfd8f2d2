#!/usr/bin/env bash
# Draws send→delivered latency percentiles against offered rate from the CSV that
# `chatbench --plot-csv FILE latency --rates ...` writes.
#   scripts/plot-latency.sh latency.csv docs/latency.png
# Installs gnuplot (Debian's gnuplot-nox) when it is missing.
set -euo pipefail
csv=${1:?usage: plot-latency.sh latency.csv out.png}
out=${2:?usage: plot-latency.sh latency.csv out.png}
if ! command -v gnuplot >/dev/null; then
	apt-get install -y -q gnuplot-nox >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q gnuplot-nox >/dev/null; }
fi
title=${PLOT_TITLE:-"chatbench latency: send → delivered (embedded backend, loopback)"}
gnuplot <<GP
set terminal pngcairo size 900,560 font "sans,10" noenhanced
set output "$out"
set datafile separator ","
set key top left
set grid
set title "$title"
set xlabel "offered load (messages/s)"
set ylabel "latency (ms, log scale)"
set logscale y
set yrange [0.1:*]
set style data linespoints
plot "$csv" every ::1 using 1:3 title "p50" lw 2 pt 7, \
     "" every ::1 using 1:4 title "p95" lw 2 pt 5, \
     "" every ::1 using 1:5 title "p99" lw 2 pt 9, \
     "" every ::1 using 1:6 title "p99.9" lw 2 pt 11, \
     50 title "p99 target (50 ms)" with lines dt 2 lc rgb "red"
GP
echo "wrote $out"
