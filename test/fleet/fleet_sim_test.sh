#!/usr/bin/env bash
# railyard-validate fleet on a simulated fleet (simfleet.sh: 8 nodes, 3 rails, one leaf bridge
# per rail, every cable at the same line rate). Healthy, it raises nothing, RUNS times out of
# RUNS (and once more with --mode bisect, in 3 ring runs and no pairs). With three faults
# injected (node 2's rail-1 NIC slow; the cable between nodes 0 and 3 on rail 0 slow; node 5's
# rail 0 and 1 cables swapped between the leaves) it names exactly those, and nothing else, in
# every output. Bisection corners a slow NIC and a miswired node in 3 halvings and tests only
# them. A rank killed mid-run is its node's culprit; a rank that never comes is named.
#   fleet_sim_test.sh BIN_DIR [RUNS]
set -euo pipefail
bin=$1 runs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/simfleet.sh"
fleet_test

fleet_up 8 3 50mbit
opts=(-s 256K -n 5 -w 1 -c 0 --timeout 3)

for ((r = 1; r <= runs; r++)); do
  status=0
  fleet_run "$bin" "$work" "${opts[@]}" --report "$work/healthy.json" || status=$?
  [[ $status == 0 ]] || fail "healthy run $r/$runs exited $status"
  python3 - "$work/healthy.json" <<'PY' || fail "healthy run $r/$runs"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "healthy" and r["culprits"] == [], r["culprits"]
assert len(r["pairs"]) == 28 * 3, len(r["pairs"])
assert all(p["busbw"] and p["busbw"] > 0 for p in r["pairs"])
PY
  echo "healthy run $r/$runs: no culprits ($(grep -c '^# round' "$work/rank0.out") rounds)"
done

status=0
fleet_run "$bin" "$work" "${opts[@]}" --mode bisect --report "$work/bisect.json" || status=$?
[[ $status == 0 ]] || fail "healthy bisection exited $status"
python3 - "$work/bisect.json" <<'PY' || fail "healthy bisection"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["culprits"] == [] and r["pairs"] == [], r
assert [g["title"] for g in r["rings"]] == ["all nodes", "halving 1", "halving 1"], r["rings"]
PY
echo "healthy bisection: no culprits, 3 ring runs, no pairs"

fault_slow_nic 2 1 15mbit
fault_bad_cable 0 3 0 15mbit
fault_miswire 5 0 1
status=0
fleet_run "$bin" "$work" "${opts[@]}" --report "$work/faults.json" --junit "$work/faults.xml" \
  --node-patches "$work/patches.json" --heatmaps "$work/heatmaps" || status=$?
[[ $status == 1 ]] || fail "the faulty fleet exited $status, not 1"
python3 - "$work" <<'PY' || fail "the faulty fleet's report"
import json, os, sys
w = sys.argv[1]
r = json.load(open(w + "/faults.json"))
got = sorted((c["kind"], c["node"], c["peer"], c["rail"], c.get("other_rail")) for c in r["culprits"])
want = sorted([("nic", "node-2", None, 1, None), ("cable", "node-0", "node-3", 0, None),
               ("miswire", "node-5", None, 0, 1), ("miswire", "node-5", None, 1, 0)])
assert got == want, got
for c in r["culprits"]:
    assert c["evidence"], c
junit = open(w + "/faults.xml").read()
assert 'failures="4"' in junit, junit
patches = {p["node"]: p for p in json.load(open(w + "/patches.json"))}
assert sorted(patches) == ["node-0", "node-2", "node-3", "node-5"], sorted(patches)
for n in patches:
    assert patches[n]["patch"]["metadata"]["labels"]["railyard.io/validated"] == "false"
assert "NoSchedule" in patches["node-2"]["taint"] and "NoSchedule" in patches["node-5"]["taint"]
assert patches["node-0"]["taint"] is None and patches["node-3"]["taint"] is None
for k in range(3):
    assert open(f"{w}/heatmaps/rail-{k}.svg").read().startswith("<svg")
PY
echo "faulty fleet: named exactly node-2's rail-1 NIC, the node-0 - node-3 cable on rail 0, node-5's swapped rails 0 and 1"
grep '^#   \(nic\|cable\|miswire\)' "$work/rank0.out"

# Bisection: a slow NIC and a miswired node in the same quarter of the fleet.
fleet_down
fleet_up 8 3 50mbit
fault_slow_nic 2 1 15mbit
fault_miswire 3 0 1
status=0
fleet_run "$bin" "$work" "${opts[@]}" --mode bisect --report "$work/bisect-faults.json" || status=$?
[[ $status == 1 ]] || fail "bisection of the faulty fleet exited $status, not 1"
python3 - "$work/bisect-faults.json" <<'PY' || fail "bisection of the faulty fleet"
import json, sys
r = json.load(open(sys.argv[1]))
got = sorted((c["kind"], c["node"], c["rail"], c.get("other_rail")) for c in r["culprits"])
assert got == [("miswire", "node-3", 0, 1), ("miswire", "node-3", 1, 0), ("nic", "node-2", 1, None)], got
# Suspects only: 2 rounds of 4 pairs, not the 7 rounds of every pair.
assert len(r["pairs"]) == 2 * 4 * 3, len(r["pairs"])
PY
echo "bisection: named node-2's rail-1 NIC and node-3's swapped rails after $(grep -c '^# halving' "$work/rank0.out") halving rings and 2 rounds"

# A rank killed after the first round: rank 0 carries on and names its node, nothing else.
fleet_down
fleet_up 8 3 50mbit
status=0
fleet_run "$bin" "$work" "${opts[@]}" --report "$work/killed.json" &
runner=$!
for ((t = 0; t < 600; t++)); do  # until round 1 is reported, at most a minute
  grep -q '^# round 1/7' "$work/rank0.out" 2>/dev/null && break
  sleep 0.1
done
ip netns pids "$(fleet_ns 7)" | xargs -r kill -9
wait "$runner" || status=$?
[[ $status == 1 ]] || fail "the fleet with a killed rank exited $status, not 1"
python3 - "$work/killed.json" <<'PY' || fail "the fleet with a killed rank"
import json, sys
r = json.load(open(sys.argv[1]))
got = [(c["kind"], c["node"]) for c in r["culprits"]]
assert got == [("node", "node-7")], r["culprits"]
assert "stopped answering" in r["culprits"][0]["evidence"], r["culprits"][0]
PY
echo "a rank killed mid-run: its node named ($(grep -o 'rank 7 (node-7) stopped answering[^:]*' "$work/rank0.out" | head -1))"

# A rank that never joins is named by rank 0 within the timeout, and the run could not be made;
# rank 0 still writes its report and JUnit, naming who joined and who did not.
FLEET_NODES=3
status=0
for i in 0 1; do
  outputs=()
  ((i == 0)) && outputs=(--report "$work/missing.json" --junit "$work/missing.xml")
  ip netns exec "$(fleet_ns "$i")" "$bin/railyard-validate" fleet --rank "$i" --world-size 3 \
    --rendezvous 10.99.0.1:29411 --rails "$(fleet_rails_of "$i")" --node-name "node-$i" \
    --timeout 3 "${outputs[@]}" \
    >"$work/missing$i.out" 2>&1 &
done
wait %1 || status=$?
wait %2 || true
[[ $status == 2 ]] || fail "a fleet missing rank 2 exited $status, not 2"
grep -q "rank 2 to join" "$work/missing0.out" || fail "rank 2 not named: $(cat "$work/missing0.out")"
python3 - "$work" <<'PY' || fail "the report of a fleet missing rank 2: $(cat "$work/missing0.out")"
import json, sys
w = sys.argv[1]
r = json.load(open(w + "/missing.json"))
assert r["verdict"] == "could not run", r["verdict"]
assert "rank 2 to join" in r["reason"], r["reason"]
assert r["missing"] == [2], r["missing"]
assert r["joined"] == [{"rank": 0, "node": "node-0"}, {"rank": 1, "node": "node-1"}], r["joined"]
assert r["pairs"] == [] and r["culprits"] == [], r
junit = open(w + "/missing.xml").read()
assert 'errors="1"' in junit and "<error message=" in junit, junit
assert "never joined: rank 2" in junit, junit
PY
echo "a missing rank: named, report and JUnit written ($(tail -1 "$work/missing0.out"))"
