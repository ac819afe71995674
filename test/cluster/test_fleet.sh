#!/usr/bin/env bash
# The fleet Job as shipped (manifests/validate-fleet: its pod holds the node's eight bundles, its
# rails attached through the bundle NAD) across three nodes, the node and two simulated ones
# (sim_node.sh), with the node's rail 2 and rail 3 cables swapped between their leaves: the report
# names the miswire on the node, and --apply leaves a DeviceTaintRule on exactly those two NICs'
# devices (from the node's railyard.io slices), the node validated=false and the two healthy
# nodes validated=true. Everything is put back afterwards, every PF back on the host.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sim_node.sh"
here=$(cd "$(dirname "$0")" && pwd)
a=2 b=3 # the swapped rails
token=$W/fleet-token slices_made=$W/fleet-slices.json
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
  rm -rf "$token" "$slices_made" "$W/fleet"
}
trap cleanup EXIT
(umask 077 && head -c 32 /dev/urandom | base64 -w0 >"$token")
k create secret generic railyard-validate-token --from-file=token="$token" >/dev/null
publish_node_slices "$slices_made"
sim_node_up 1
sim_node_up 2
ip link set "rypf${a}p" master "ryleaf$b"
ip link set "rypf${b}p" master "ryleaf$a"

kubectl apply -k "$here/overlay-fleet" >/dev/null
pod= addr=
until_ok 120 "the fleet pod's rails attached" \
  'pod=$(k get pods -l batch.kubernetes.io/job-name=railyard-validate-fleet -o name) && addr=$(pod_rail0_addr "${pod#pod/}")'
for n in 1 2; do
  rails=$(seq -s, -f "rys${n}r%g" 0 $((RAILS - 1)))
  sim_rank "$n" "$RAILYARD_BIN/railyard-validate" fleet --rank "$n" --world-size 3 \
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
  grep -E '^#   |apply:' | sed 's/^/  /' | head -30

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
