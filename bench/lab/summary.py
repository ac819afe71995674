#!/usr/bin/env python3
"""Reads the "RESULT tool size GB/s" lines of bench/lab/node.sh; prints medians and the ratio."""
import re
import statistics
import sys

got = {}
for line in sys.stdin:
    m = re.search(r"RESULT (\S+) (\d+) ([0-9.]+)", line)
    if m:
        got.setdefault((m[1], int(m[2])), []).append(float(m[3]))
print("%10s  %17s  %14s  %6s  %s" % ("size", "ib_write_bw MB/s", "railyard MB/s", "ratio", "rounds"))
for size in sorted({s for _, s in got}):
    perf, ours = got.get(("ib_write_bw", size), []), got.get(("railyard", size), [])
    if not perf or not ours:
        sys.exit(f"missing results for {size} B: {got}")
    p, o = statistics.median(perf), statistics.median(ours)
    print("%10d  %17.2f  %14.2f  %5.2fx  %d/%d" % (size, p * 1000, o * 1000, o / p, len(perf), len(ours)))
if not got:
    sys.exit("no results")
