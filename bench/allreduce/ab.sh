#!/usr/bin/env bash
# Two builds of railyard-bench side by side: 2 ranks in two network namespaces over two veth
# rails, OLD and NEW alternating run by run (the machine drifts by more than most changes), the
# median busbw of each at 16 MiB and 64 MiB and NEW/OLD. For "did this change slow anything":
# build the earlier commit into a folder of its own and pass both binaries.
# Usage: bench/allreduce/ab.sh OLD_BENCH NEW_BENCH [PAIRS]
set -euo pipefail
old=$1 new=$2 pairs=${3:-6}
a="ryab2-a-$$" b="ryab2-b-$$"
work=$(mktemp -d)
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
source "$(dirname "$0")/rails.sh"
make_rails "$a" "$b"
# One run of BIN: both ranks, rank 0's busbw per size (out-of-place), "size busbw" lines.
run() {
  local bin=$1 out=$work/out port=$((29700 + RANDOM % 200))
  local args=(allreduce --world-size 2 --rendezvous "10.77.0.1:$port" -b 16M -e 64M -f 4 -n 20 -w 3
              --timeout 60)
  ip netns exec "$b" "$bin" "${args[@]}" --rank 1 --rails 10.77.0.2,10.78.0.2 >/dev/null 2>&1 &
  ip netns exec "$a" "$bin" "${args[@]}" --rank 0 --rails 10.77.0.1,10.78.0.1 >"$out" 2>/dev/null
  wait
  awk '$1 ~ /^[0-9]+$/ && NF >= 8 { print $1, $8 }' "$out"
}
for ((i = 1; i <= pairs; i++)); do
  run "$old" | sed 's/^/old /' >>"$work/all"
  run "$new" | sed 's/^/new /' >>"$work/all"
  echo "pair $i/$pairs done" >&2
done
python3 - "$work/all" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    who, size, busbw = line.split()
    runs.setdefault((int(size), who), []).append(float(busbw))
print(f"{'size':>10} {'old GB/s':>9} {'new GB/s':>9} {'new/old':>8}   (medians of {len(runs[next(iter(runs))])} runs each)")
for size in sorted({s for s, _ in runs}):
    o, n = statistics.median(runs[(size, 'old')]), statistics.median(runs[(size, 'new')])
    print(f"{size:>10} {o:>9.3f} {n:>9.3f} {n / o:>8.3f}")
PY
