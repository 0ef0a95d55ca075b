#!/bin/bash
# CPU time (perf stat task-clock) and write_seconds of `h5 import` for several h5
# binaries, interleaved run by run. Usage: scripts/cpu_compare.sh CODEC THREADS RUNS H5...
# e.g. scripts/cpu_compare.sh lz4:1:shuffle 1 10 old/h5 target/release/h5
# NPY names the input .npy (required: e.g. the phantom that shared/bench/run_reference.py caches).
# usage: cmp.sh codec threads runs binA binB ...
c=$1; t=$2; n=$3; shift 3
I=${NPY:?set NPY to the input .npy}
for b in "$@"; do : > ${TMPDIR:-/tmp}/cpu_compare_tc_$(echo $b | md5sum | cut -c1-6); done
for i in $(seq $n); do for b in "$@"; do
  f=${TMPDIR:-/tmp}/cpu_compare_tc_$(echo $b | md5sum | cut -c1-6)
  rm -f ${TMPDIR:-/tmp}/cpu_compare_cmp.h5
  perf stat -x, -e task-clock $b import $I ${TMPDIR:-/tmp}/cpu_compare_cmp.h5 image --chunks 128,64,64 --filter blosc2:$c --threads $t 2>&1 >${TMPDIR:-/tmp}/cpu_compare_ws.txt | grep task-clock | cut -d, -f1 | tr '\n' ' ' >> $f
  grep write_seconds ${TMPDIR:-/tmp}/cpu_compare_ws.txt | cut -d' ' -f2 | tr '\n' ' ' >> $f; echo >> $f
done; done
for b in "$@"; do f=${TMPDIR:-/tmp}/cpu_compare_tc_$(echo $b | md5sum | cut -c1-6); python3 -c "
import sys,statistics as s
rows=[l.split() for l in open('$f') if l.strip()]
tc=[float(r[0]) for r in rows]; ws=[float(r[1]) for r in rows]
print('$b', '$c', 't=$t', 'task-clock ms median %.1f min %.1f' % (s.median(tc), min(tc)), 'write_s median %.3f min %.3f' % (s.median(ws), min(ws)))
"; done
