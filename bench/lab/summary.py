#!/usr/bin/env python3
"""Reads the "RESULT tool size GB/s" lines of bench/lab/node.sh; prints, per size and peer, the
medians of the peer and of railyard and their ratio ("ib_send_bw+events" reads as the flag)."""
import re
import statistics
import sys

got = {}
for line in sys.stdin:
    m = re.search(r"RESULT (\S+) (\d+) ([0-9.]+)", line)
    if m:
        got.setdefault(m[1], {}).setdefault(int(m[2]), []).append(float(m[3]))
if "railyard" not in got or len(got) < 2:
    sys.exit(f"missing results: {got}")
print("%10s  %-24s  %10s  %14s  %6s  %s" % ("size", "peer", "peer MB/s", "railyard MB/s", "ratio",
                                             "rounds"))
for size in sorted(got["railyard"]):
    ours = statistics.median(got["railyard"][size])
    for peer in sorted(t for t in got if t != "railyard"):
        if size not in got[peer]:
            sys.exit(f"missing {peer} results for {size} B")
        p = statistics.median(got[peer][size])
        print("%10d  %-24s  %10.2f  %14.2f  %5.2fx  %d" % (size, peer.replace("+", " --"), p * 1000,
                                                         ours * 1000, ours / p,
                                                         len(got["railyard"][size])))
