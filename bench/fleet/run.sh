#!/usr/bin/env bash
# railyard-validate fleet on the simulated fleet (test/fleet/simfleet.sh: NODES netns nodes,
# RAILS rails, a leaf bridge per rail, every cable at 50 Mbit/s), healthy, against the way
# pairs are tested by hand: every pair one after another with railyard-bench p2p (the same
# measurement per rail, the same message size and iterations). Per fleet size: wall time of
# each, the ratio, and our round count against the N-1 bound of any schedule of disjoint pairs;
# and the fast path (--mode bisect), which on a healthy fleet stops after 3 ring allreduces.
#   bench/fleet/run.sh [ROUNDS] [--json FILE] [--sizes "4 6 8"] [--rails 3]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
rounds=3 json="" sizes="4 6 8" rails=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --json) json=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --rails) rails=$2; shift 2 ;;
    *) rounds=$1; shift ;;
  esac
done
"$repo/scripts/install-deps.sh" >/dev/null
"$repo/scripts/build.sh" >/dev/null
bin=$repo/build/bin
work=$(mktemp -d)
. "$repo/test/fleet/simfleet.sh"
trap 'fleet_down; rm -rf "$work"' EXIT
opts=(-s 256K -n 5 -w 1 -c 0 --timeout 5)

now() { date +%s.%N; }
# Every pair in turn, every rail of it: what one does with a p2p benchmark and a node list.
by_hand() {
  local a b port=$((40000 + RANDOM % 10000))
  for ((a = 0; a < FLEET_NODES; a++)); do
    for ((b = a + 1; b < FLEET_NODES; b++)); do
      port=$((port + 1))
      ip netns exec "$(fleet_ns "$b")" "$bin/railyard-bench" p2p --rank 1 --world-size 2 \
        --rendezvous "10.99.0.$((a + 1)):$port" --rails "$(fleet_rails_of "$b")" \
        -b 256K -e 256K -n 5 -w 1 -c 0 --streams 1 >/dev/null &
      ip netns exec "$(fleet_ns "$a")" "$bin/railyard-bench" p2p --rank 0 --world-size 2 \
        --rendezvous "10.99.0.$((a + 1)):$port" --rails "$(fleet_rails_of "$a")" \
        -b 256K -e 256K -n 5 -w 1 -c 0 --streams 1 >/dev/null
      wait
    done
  done
}

echo "# railyard-validate fleet vs every pair by hand (railyard-bench p2p), $rails rails, healthy, $rounds rounds"
printf "# %5s  %6s  %6s  %11s  %11s  %11s  %8s  %8s  %s\n" nodes rounds "N-1" "pairwise(s)" "bisect(s)" "by hand(s)" "pairwise" "bisect" "alarms"
results="[]"
for n in $sizes; do
  fleet_down
  fleet_up "$n" "$rails" 50mbit
  ours=() fast=() theirs=() alarms=0 used=0
  for ((r = 1; r <= rounds; r++)); do
    t0=$(now)
    fleet_run "$bin" "$work" "${opts[@]}" --report "$work/r.json" || alarms=$((alarms + 1))
    used=$(grep -c '^# round ' "$work/rank0.out")
    t1=$(now)
    fleet_run "$bin" "$work" "${opts[@]}" --mode bisect --report "$work/b.json" ||
      alarms=$((alarms + 1))
    t2=$(now)
    by_hand
    t3=$(now)
    ours+=("$(echo "$t1 - $t0" | bc)") fast+=("$(echo "$t2 - $t1" | bc)")
    theirs+=("$(echo "$t3 - $t2" | bc)")
  done
  line=$(python3 - "$n" "$used" "$alarms" "${ours[*]}" "${fast[*]}" "${theirs[*]}" <<'PY'
import json, statistics, sys
n, used, alarms = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ours, fast, theirs = ([float(x) for x in a.split()] for a in sys.argv[4:7])
bound = n - 1 if n % 2 == 0 else n
o, f, t = statistics.median(ours), statistics.median(fast), statistics.median(theirs)
print(json.dumps({"nodes": n, "rounds": used, "bound": bound, "pairwise_s": o, "bisect_s": f,
                  "by_hand_s": t, "speedup_pairwise": t / o, "speedup_bisect": t / f,
                  "alarms": alarms, "runs": len(ours), "pairwise_runs_s": ours,
                  "bisect_runs_s": fast, "by_hand_runs_s": theirs}))
PY
)
  results=$(python3 -c 'import json,sys; a=json.loads(sys.argv[1]); a.append(json.loads(sys.argv[2])); print(json.dumps(a))' "$results" "$line")
  python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print("  %5d  %6d  %6d  %11.1f  %11.1f  %11.1f  %7.1fx  %7.1fx  %d of %d runs" % (r["nodes"], r["rounds"], r["bound"], r["pairwise_s"], r["bisect_s"], r["by_hand_s"], r["speedup_pairwise"], r["speedup_bisect"], r["alarms"], 2 * r["runs"]))' "$line"
done
echo "# rounds: the schedule's, against N-1 (N even) or N (N odd), the fewest rounds of disjoint pairs"
echo "# speedup: by hand / ours, medians; alarms: healthy runs (both modes) naming a culprit (should be 0)"
[[ -z $json ]] || echo "$results" >"$json"
