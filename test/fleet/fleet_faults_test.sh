#!/usr/bin/env bash
# Rails that stay on their rail: railyard-validate fleet on small simulated fleets (simfleet.sh)
# whose nodes have a management default route, as real GPU nodes do, with one fault each:
#  - a rail NIC down: named within the run's timeouts, and not one packet for a rail address left
#    by the management NIC (an unbound socket's SYNs took that route and hung for two minutes);
#  - a rail that silently drops what it receives (iptables DROP): named within the timeouts;
#  - two swapped cables under the kernel's default ARP settings (every NIC answers for every
#    address of its node, so unbound traffic crossed over at full rate): the miswire named.
#   fleet_faults_test.sh BIN_DIR
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/simfleet.sh"
fleet_test

timeout_s=3
opts=(-s 256K -n 3 -w 1 -c 0 --timeout "$timeout_s")
# Every wait ends within the timeout: 3 rounds of pairs, a round of suspects, the probes, each a
# few waits at most. Far below the kernel's 127 s of SYN retries that one wait took before.
limit_s=$((15 * timeout_s))

# culprits REPORT KIND NODE RAIL [OTHER_RAIL]: the report names exactly that one fault (both
# rails of a miswire: give the first; the second is implied).
expect_culprits() {
  python3 - "$@" <<'PY'
import json, sys
report, kind, node, rail = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
r = json.load(open(report))
got = sorted((c["kind"], c["node"], c["rail"], c.get("other_rail")) for c in r["culprits"])
if kind == "miswire":
    other = int(sys.argv[5])
    want = sorted([(kind, node, rail, other), (kind, node, other, rail)])
else:
    want = [(kind, node, rail, None)]
assert got == want, f"culprits {got}, want {want}"
PY
}

run_timed() {  # NAME ARGS...: runs the fleet, fails unless exit 1 within the limit
  local name=$1 status=0 start=$SECONDS
  shift
  fleet_run "$bin" "$work" "${opts[@]}" --report "$work/$name.json" "$@" || status=$?
  local took=$((SECONDS - start))
  [[ $status == 1 ]] || fail "$name: exited $status, not 1"
  ((took <= limit_s)) || fail "$name: took $took s (limit $limit_s s)"
  echo "$name: named in $took s: $(grep -m1 '^#   \(nic\|cable\|miswire\|node\)' "$work/rank0.out")"
}

# 1. A rail NIC down on a node with a management default route.
fleet_up 4 2 50mbit
fleet_mgmt_gateway
ip -n "$(fleet_ns 1)" link set rail0 down
run_timed nic-down
expect_culprits "$work/nic-down.json" nic node-1 0 || fail "nic-down: wrong culprits"
grep -q 'rail0 is down' "$work"/rank*.out || fail "nic-down: no error names rail0 as down"
for ((i = 0; i < FLEET_NODES; i++)); do
  n=$(fleet_mgmt_rail_packets "$i")
  [[ $n == 0 ]] || fail "nic-down: node $i sent $n packets for a rail address via management"
done
echo "nic-down: no packet for a rail address left by a management NIC"
fleet_down

# 2. A rail that drops everything it receives, silently.
fleet_up 4 2 50mbit
fleet_mgmt_gateway
ip netns exec "$(fleet_ns 2)" iptables -w -A INPUT -i rail1 -j DROP
run_timed silent-drop
expect_culprits "$work/silent-drop.json" nic node-2 1 || fail "silent-drop: wrong culprits"
fleet_down

# 3. Two cables swapped between the leaves, under the kernel's default ARP settings.
FLEET_ARP=default fleet_up 4 2 50mbit
fleet_mgmt_gateway
fault_miswire 3 0 1
run_timed miswire-default-arp
expect_culprits "$work/miswire-default-arp.json" miswire node-3 0 1 ||
  fail "miswire-default-arp: wrong culprits"
