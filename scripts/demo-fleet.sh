#!/usr/bin/env bash
# Fleet bring-up on one machine: 6 "nodes" (network namespaces) with 3 rails each, one leaf
# switch per rail (a bridge in its own namespace), every cable at the same line rate
# (test/fleet/simfleet.sh). Three faults are injected: node-1's rail-2 NIC is slow, the cable
# between node-0 and node-3 is slow on rail 0 only, and node-4's rail-0 and rail-1 cables are
# swapped between the leaves. railyard-validate fleet (one rank per node) runs every pair on
# every rail in 5 rounds and names exactly those three. Then the fleet is recabled with one fault
# on 8 nodes (node-5's rail-1 NIC slow) and the fast path (--mode bisect) corners it with ring allreduces
# over halves before testing only the suspects. Heatmaps, JUnit and node patches go to
# build/demo-fleet/. About a minute and a half; everything it creates is removed on exit. Needs
# root (namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh railyard-validate >/dev/null
bin=$PWD/build/bin out=$PWD/build/demo-fleet
work=$(mktemp -d)
. test/fleet/simfleet.sh
trap 'fleet_down; rm -rf "$work"' EXIT
rm -rf "$out" && mkdir -p "$out"

echo "== a fleet of 6 nodes x 3 rails, rail-optimised, 50 Mbit/s cables"
fleet_up 6 3 50mbit
echo "== faults: node-1 rail 2 NIC at 20 Mbit/s; node-0 - node-3 cable on rail 0 at 20 Mbit/s;"
echo "   node-4's rail 0 and rail 1 cables swapped between the leaves"
fault_slow_nic 1 2 20mbit
fault_bad_cable 0 3 0 20mbit 2>/dev/null
fault_miswire 4 0 1
opts=(-s 256K -n 5 -w 1 -c 0 --timeout 3)

echo
echo "== railyard-validate fleet (every pair, every rail)"
status=0
fleet_run "$bin" "$work" "${opts[@]}" --report "$out/fleet.json" --junit "$out/fleet.xml" \
  --node-patches "$out/node-patches.json" --heatmaps "$out/heatmaps" || status=$?
cat "$work/rank0.out"
echo "(exit status $status: 1 = culprits named)"
echo
echo "== what the operator applies (build/demo-fleet/node-patches.json)"
python3 - "$out/node-patches.json" <<'PY'
import json, sys
for p in json.load(open(sys.argv[1])):
    print(f"kubectl label node {p['node']} railyard.io/validated=false --overwrite")
    if p["taint"]:
        print(p["taint"])
PY

echo
echo "== the fast path: a fleet of 8 with one fault (node-5's rail-1 NIC at 20 Mbit/s), --mode bisect"
fleet_down
fleet_up 8 3 50mbit
fault_slow_nic 5 1 20mbit
status=0
fleet_run "$bin" "$work" "${opts[@]}" --mode bisect --report "$out/bisect.json" || status=$?
grep '^# halving\|^# all nodes\|^# suspects\|^# round\|^# repeat\|^# [0-9]* ring runs\|^#   \(nic\|cable\|miswire\|node\|leaf\) ' \
  "$work/rank0.out"
echo "(exit status $status; pairwise runs 7 rounds of every pair on 8 nodes)"
echo
echo "Heatmaps: $out/heatmaps/rail-{0,1,2}.svg; JSON: $out/fleet.json; JUnit: $out/fleet.xml"
