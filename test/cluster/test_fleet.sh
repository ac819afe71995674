#!/usr/bin/env bash
# The fleet Job as shipped (manifests/validate-fleet: its pod holds the node's eight bundles, its
# rails attached through the bundle NAD) across three nodes, the node and two simulated ones
# (sim_node.sh), with the node's rail 2 and rail 3 cables swapped between their leaves: the report
# names the miswire on the node, and --apply leaves a DeviceTaintRule on exactly those two NICs'
# devices (from the node's railyard.io slices), the node validated=false and the two healthy
# nodes validated=true. The simulated nodes read their own sysfs, the node's fixture, one with
# rail 4's NIC left on older firmware: the report names that node and rail, and only it.
# Everything is put back afterwards, every PF back on the host.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sim_node.sh"
here=$(cd "$(dirname "$0")" && pwd)
a=2 b=3 # the swapped rails
token=$W/fleet-token slices_made=$W/fleet-slices.json old_fw=$W/sim-old-firmware
uncross() {
  ip link set "rypf${a}p" master "ryleaf$a" 2>/dev/null || true
  ip link set "rypf${b}p" master "ryleaf$b" 2>/dev/null || true
}
cleanup() {
  uncross
  sim_node_down 1
  sim_node_down 2
  kubectl delete -k "$here/overlay-fleet" --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  kubectl delete devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate \
    --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete -f "$slices_made" --ignore-not-found >/dev/null 2>&1 || true
  kubectl label node "$NODE_NAME" railyard.io/validated- >/dev/null 2>&1 || true
  kubectl annotate node "$NODE_NAME" railyard.io/validated-at- railyard.io/validation-reason- >/dev/null 2>&1 || true
  k delete secret railyard-validate-token --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$token" "$slices_made" "$W/fleet" "$old_fw"
}
trap cleanup EXIT
(umask 077 && head -c 32 /dev/urandom | base64 -w0 >"$token")
k create secret generic railyard-validate-token --from-file=token="$token" >/dev/null
publish_node_slices "$slices_made"
sim_node_up 1
sim_node_up 2
# Simulated node 2's sysfs: the node's, but for rail 4's firmware.
mkdir -p "$old_fw"
sed '/^\/\//d' "$(dirname "$0")/node.json" |
  python3 -c 'import json, sys
d = json.load(sys.stdin)
for b in d["host_bridges"]:
    for p in b["ports"]:
        for s in p.get("switch", []):
            if s.get("nic", {}).get("rdma") == "mlx5_4": s["nic"]["fw_ver"] = "28.36.1010"
json.dump(d, sys.stdout)' >"$old_fw/node.json"
"$RAILYARD_BIN/railyard-fixture" "$old_fw/node.json" "$old_fw/root" >/dev/null
ip link set "rypf${a}p" master "ryleaf$b"
ip link set "rypf${b}p" master "ryleaf$a"

kubectl apply -k "$here/overlay-fleet" >/dev/null
pod= addr=
until_ok 120 "the fleet pod's rails attached" \
  'pod=$(k get pods -l batch.kubernetes.io/job-name=railyard-validate-fleet -o name) && addr=$(pod_rail0_addr "${pod#pod/}")'
for n in 1 2; do
  rails=$(seq -s, -f "rys${n}r%g" 0 $((RAILS - 1)))
  root=$SYSFS_ROOT
  [ "$n" = 1 ] || root=$old_fw/root
  sim_rank "$n" env RAILYARD_SYSFS_ROOT="$root" RAILYARD_RAILS_FILE="$RAILS_FILE" \
    "$RAILYARD_BIN/railyard-validate" fleet --rank "$n" --world-size 3 \
    --rendezvous "$addr:29600" --token-file "$token" --transport tcp --rails "$rails" \
    --node-name "$(sim_name "$n")" --size 8M --timeout 10 --repeat 1
done
finished() {
  k get job railyard-validate-fleet -o jsonpath='{range .status.conditions[*]}{.type}={.status}{"\n"}{end}' |
    grep -Eq '^(Complete|Failed)=True$'
}
until_ok 300 "the fleet Job to finish" finished
for n in 1 2; do sim_rank_wait "$n" || fail "simulated rank $n: $(tail -n 5 "$W/sim-$n.log")"; done
k logs -l batch.kubernetes.io/job-name=railyard-validate-fleet --tail -1 2>&1 |
  grep -E '^#   |^# Firmware|apply:' | sed 's/^/  /' | head -40

report=$W/fleet/fleet.json
[ -f "$report" ] || fail "the fleet Job wrote no report: $(k logs -l batch.kubernetes.io/job-name=railyard-validate-fleet --tail 20 2>&1)"
python3 - "$report" "$NODE_NAME" "$a" "$b" <<'PY' || fail "the fleet report did not name the miswire alone"
import json, sys
rep, node, a, b = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
got = sorted((c["kind"], c.get("node"), c.get("rail")) for c in rep["culprits"])
print("  culprits:", got)
sys.exit(0 if got == [("miswire", node, a), ("miswire", node, b)] else 1)
PY
echo "ok: the fleet Job named the miswire of rails $a and $b on $NODE_NAME"
python3 - "$report" <<'PY' || fail "the fleet report did not name simulated node 2's rail 4 firmware alone"
import json, sys
fw = json.load(open(sys.argv[1]))["firmware"]
print("  firmware:", fw)
want = [{"node": "railyard-sim-2", "rails": {"4": "28.36.1010 (board MT_0000000838)"}}]
sys.exit(0 if fw["majority"] == "28.39.1002 (board MT_0000000838)" and fw["known"] == 16
         and fw["differing"] == want else 1)
PY
echo "ok: the fleet report names railyard-sim-2's rail 4 as off the fleet's firmware"

rules=$(kubectl get devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate -o json)
python3 - "$slices_made" "$a" "$b" "$NODE_NAME" <(echo "$rules") <<'PY' || fail "the fleet's DeviceTaintRules are not rails $a and $b's NIC devices"
import json, sys
slices, a, b, node, rules = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], json.load(open(sys.argv[5]))
want = sorted(d["name"] for s in slices["items"] for d in s["spec"]["devices"]
              if d["attributes"]["railyard.io/rail"]["int"] in (a, b)
              and d["attributes"]["railyard.io/type"]["string"] != "gpu")
got = sorted(r["spec"]["deviceSelector"]["device"] for r in rules["items"])
for r in rules["items"]:
    sel, t = r["spec"]["deviceSelector"], r["spec"]["taint"]
    assert sel["pool"] == node and sel["driver"] == "railyard.io", sel
    assert (t["key"], t["value"], t["effect"]) == ("railyard.io/validation", "miswire", "NoSchedule"), t
print("  rules on %s: %s" % (node, got))
sys.exit(0 if want and got == want else 1)
PY
label() { kubectl get node "$1" -o jsonpath='{.metadata.labels.railyard\.io/validated}'; }
[ "$(label "$NODE_NAME")" = false ] || fail "$NODE_NAME is not validated=false: '$(label "$NODE_NAME")'"
for n in 1 2; do
  [ "$(label "$(sim_name "$n")")" = true ] || fail "$(sim_name "$n") is not validated=true: '$(label "$(sim_name "$n")")'"
done
echo "ok: --apply: a miswire rule on each of rails $a and $b's NIC devices, $NODE_NAME validated=false, the simulated nodes validated=true"
cleanup
trap - EXIT
until_ok 30 "all $RAILS PFs back on the host after the Job" 'test "$(host_pfs)" = "$RAILS"'
