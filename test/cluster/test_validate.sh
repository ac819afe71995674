#!/usr/bin/env bash
# The validation Job as shipped (manifests/validate: its pod holds the node's eight bundles, its
# rails attached through the bundle NAD) runs against a simulated second node (sim_node.sh) and
# names the rail degraded with tc (rail 5's cable, its PF's leaf port, limited to 200 Mbit/s).
# With --apply as shipped, the run leaves one DeviceTaintRule per rail 5 NIC device (from the
# node's railyard.io slices), the Node labelled railyard.io/validated=false, and (--findings) the
# device plugin marking rail 5's VFs and bundle Unhealthy; with tc removed and the findings
# cleared, the Job again: the rules are gone and the Node is validated=true. The bring-up gate: the Node tainted
# railyard.io/unvalidated:NoSchedule (as kubelet --register-with-taints does) keeps an ordinary pod
# Pending until that passing run lifts the taint. A role without DeviceTaintRule create: --apply
# exits 2 with the 403 and changes nothing. Everything is removed afterwards, and every VF and
# PF comes back to the host.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/sim_node.sh"
here=$(cd "$(dirname "$0")" && pwd)
bad=5
cable=rypf${bad}p # the node's rail 5 NIC's port on its leaf
token=$W/validate-token sim_config=$W/sim-validate.json
slices_made= state_file= saved_state=
cleanup() {
  sim_node_down 1
  rm -f "$token" "$sim_config"
  [ -z "$saved_state" ] || echo "$saved_state" >"$state_file"
  kubectl delete clusterrolebinding,clusterrole railyard-validate-limited --ignore-not-found >/dev/null 2>&1 || true
  k delete serviceaccount railyard-validate-limited --ignore-not-found >/dev/null 2>&1 || true
  tc qdisc del dev "$cable" root 2>/dev/null || true
  kubectl delete devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate \
    --ignore-not-found >/dev/null 2>&1 || true
  [ -z "$slices_made" ] || kubectl delete -f "$slices_made" --ignore-not-found >/dev/null 2>&1 || true
  [ -z "$slices_made" ] || rm -f "$slices_made"
  kubectl label node "$NODE_NAME" railyard.io/validated- >/dev/null 2>&1 || true
  kubectl taint node "$NODE_NAME" railyard.io/unvalidated- >/dev/null 2>&1 || true
  k delete pod gate-probe --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  kubectl annotate node "$NODE_NAME" railyard.io/validated-at- railyard.io/validation-reason- >/dev/null 2>&1 || true
  kubectl delete -k "$here/overlay-validate" --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  k delete pods -l batch.kubernetes.io/job-name --wait=true --timeout 60s >/dev/null 2>&1 || true
  k delete secret railyard-validate-token --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$W/validation"
}
trap cleanup EXIT
# The ranks' shared secret, made for this run as manifests/README.md tells users to; the
# simulated node reads it from a file.
(umask 077 && head -c 32 /dev/urandom | base64 -w0 >"$token")
k create secret generic railyard-validate-token --from-file=token="$token" >/dev/null
tc qdisc add dev "$cable" root tbf rate 200mbit burst 64kb latency 100ms
sim_node_up 1
# Rank 1's validation config: the ConfigMap's, with the benchmark where this host has it.
k get configmap railyard-config -o jsonpath='{.data.validate\.json}' |
  sed "s|/usr/local/bin/railyard-bench|$RAILYARD_BIN/railyard-bench|" >"$sim_config"

finished() { # <job>: Complete or Failed
  k get job "$1" -o jsonpath='{range .status.conditions[*]}{.type}={.status}{"\n"}{end}' |
    grep -Eq '^(Complete|Failed)=True$'
}

# This node's DRA pool as the driver publishes it (its `slices` command): --apply names a failed
# rail's devices from the node's slices.
slices_made=$W/validate-slices.json
publish_node_slices "$slices_made"

# The Job as shipped, its one pod rank 0 on this node; rank 1, the simulated node, joins it at the
# pod's rail 0 address once Multus has attached the rails.
run_validation() {
  kubectl apply -k "$here/overlay-validate" >/dev/null
  local pod= addr
  until_ok 120 "the validation pod's rails attached" \
    'pod=$(k get pods -l batch.kubernetes.io/job-name=railyard-validate -o name) && addr=$(pod_rail0_addr "${pod#pod/}")'
  sim_rank 1 env WORLD_SIZE=2 RANK=1 MASTER_ADDR="$addr" MASTER_PORT=29500 RAILYARD_TOKEN_FILE="$token" \
    "$RAILYARD_BIN/railyard-validate" run --config "$sim_config" --sysfs-root "$SYSFS_ROOT" \
    --rails "$RAILS_FILE" --rank 1
  until_ok 300 "the validation Job to finish" finished railyard-validate
  # Rank 1's exit is its own rank's verdict (rank 0 measured the rails): shown, not judged.
  local rc=0
  sim_rank_wait 1 || rc=$?
  echo "  the simulated node's rank 1 exited $rc: $(tail -n 1 "$W/sim-1.log")"
  log=$(k logs -l batch.kubernetes.io/job-name=railyard-validate --tail -1 --prefix 2>&1)
}
run_validation
# Each rank's verdict and benchmark table (rank 0 measures; rank 1's runs are judged by exit).
echo "$log" | grep -E 'railyard-validate: |FAIL|GB/s|measured by rank 0' | sed 's/^/  /' | head -60
grep -q "FAIL  rail $bad (mlx5_$bad)" <<<"$log" || fail "the validation did not name rail $bad"
others=$(echo "$log" | grep -E 'FAIL  rail [0-9]+ ' | grep -v "rail $bad " || true)
[ -z "$others" ] || fail "the validation named other rails too: $others"
echo "ok: the validation Job named rail $bad"
echo "$log" | grep -E 'apply:|--apply' | sed 's/^/  /' | head -20

# --apply: a rule for each of rail 5's NIC devices (the PF and its VFs, not its GPU), nothing else.
rules_of_node() {
  kubectl get devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate -o json
}
python3 - "$slices_made" "$bad" "$NODE_NAME" <(rules_of_node) <<'PY' || fail "the validation's DeviceTaintRules are not rail $bad's devices"
import json, sys
slices, bad, node, rules = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3], json.load(open(sys.argv[4]))
want = sorted(d["name"] for s in slices["items"] for d in s["spec"]["devices"]
              if d["attributes"]["railyard.io/rail"]["int"] == bad
              and d["attributes"]["railyard.io/type"]["string"] != "gpu")
got = sorted(r["spec"]["deviceSelector"]["device"] for r in rules["items"])
for r in rules["items"]:
    sel, t = r["spec"]["deviceSelector"], r["spec"]["taint"]
    print("  rule %s: %s/%s/%s %s=%s:%s, evidence: %s" % (r["metadata"]["name"], sel["driver"], sel["pool"],
          sel["device"], t["key"], t["value"], t["effect"], r["metadata"]["annotations"]["railyard.io/evidence"][:100]))
    assert sel["pool"] == node and sel["driver"] == "railyard.io" and t["key"] == "railyard.io/validation"
    assert "rail %d" % bad in r["metadata"]["annotations"]["railyard.io/evidence"]
print("  want %s, got %s" % (want, got))
sys.exit(0 if want and got == want else 1)
PY
validated() { kubectl get node "$NODE_NAME" -o jsonpath='{.metadata.labels.railyard\.io/validated}'; }
[ "$(validated)" = false ] || fail "the Node is not labelled railyard.io/validated=false: '$(validated)'"
kubectl get node "$NODE_NAME" -o jsonpath='{.spec.taints}' | grep -q railyard.io/unvalidated &&
  fail "a rail's finding tainted the whole Node"
echo "ok: --apply left one DeviceTaintRule per rail $bad device, the Node validated=false and untainted"

# The device plugin's side (--findings): rail 5's VFs and the bundle on it turn Unhealthy, and the
# kubelet takes them out of the Node's allocatable.
alloc() { kubectl get node "$NODE_NAME" -o jsonpath="{.status.allocatable.railyard\.io/$1}"; }
until_ok 60 "rail $bad's VFs out of the Node's allocatable" 'test "$(alloc "rail$bad")" = 0'
until_ok 30 "the bundle on rail $bad out of the Node's allocatable" 'test "$(alloc bundle)" = $((RAILS - 1))'
for r in $(seq 0 $((RAILS - 1))); do
  [ "$r" = "$bad" ] || [ "$(alloc "rail$r")" = "$VFS_PER_RAIL" ] || fail "rail $r's VFs left the schedule too"
done
echo "ok: the device plugin marked rail $bad: allocatable railyard.io/rail$bad 0, bundle $(alloc bundle) of $RAILS"


# Healed: tc removed, the validation Job again passes and takes back what it made.
tc qdisc del dev "$cable" root
kubectl delete -k "$here/overlay-validate" --wait=true --timeout 60s >/dev/null
# The repair step a person takes on a device-plugin node (README, "From finding to schedule"):
# the marked rail's bundle is what the next validation needs, so its findings are cleared first.
rm "$W/validation/findings.json"
until_ok 60 "rail $bad's VFs back in the Node's allocatable" 'test "$(alloc "rail$bad")" = "$VFS_PER_RAIL"'
until_ok 30 "rail $bad's bundle back in the Node's allocatable" 'test "$(alloc bundle)" = "$RAILS"'
# The bring-up gate, closed: an ordinary pod (no toleration) waits for the node.
kubectl taint node "$NODE_NAME" railyard.io/unvalidated=:NoSchedule --overwrite >/dev/null
pod_yaml sleeper.yaml name=gate-probe "image=$PAUSE_IMAGE" command=null | k apply -f - >/dev/null
# The scheduler says only "untolerated taint(s)"; the Node's sole taint is the gate's (checked).
unschedulable_for_gate() {
  k get pod gate-probe -o jsonpath='{range .status.conditions[?(@.type=="PodScheduled")]}{.reason} {.message}{end}' |
    grep -q '^Unschedulable .*untolerated taint'
}
[ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.spec.taints[*].key}')" = railyard.io/unvalidated ] ||
  fail "the Node has taints besides the gate's: $(kubectl get node "$NODE_NAME" -o jsonpath='{.spec.taints}')"
until_ok 30 "the ordinary pod to be held by the bring-up taint" unschedulable_for_gate
echo "ok: gate closed: $(k get pod gate-probe -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
run_validation
echo "$log" | grep -E 'railyard-validate: |FAIL|apply:' | sed 's/^/  /' | head -30
[ "$(rules_of_node | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" = 0 ] ||
  fail "the passing run left DeviceTaintRules behind"
[ "$(validated)" = true ] || fail "the Node is not validated=true after a passing run: '$(validated)'"
kubectl get node "$NODE_NAME" -o jsonpath='{.spec.taints}' | grep -q railyard.io/unvalidated &&
  fail "the passing run left the bring-up taint"
until_ok 60 "the ordinary pod to run once the gate opened" \
  'test "$(k get pod gate-probe -o jsonpath={.status.phase})" = Running'
echo "ok: gate opened by the passing run: the ordinary pod is Running"
grep -q '"verdict": "pass"' "$W/validation/findings.json" || fail "the passing run wrote no pass for the device plugin"
[ "$(alloc bundle)" = "$RAILS" ] || fail "the bundles are not all back after the pass: $(alloc bundle)"
echo "ok: healed, the Job again: no rule left, the Node validated=true at $(kubectl get node "$NODE_NAME" -o jsonpath='{.metadata.annotations.railyard\.io/validated-at}')"
# Bad input: a role without DeviceTaintRule create. The validator runs on the host as a
# ServiceAccount bound to it, with rail 5's port DOWN in the fixture: exit 2, the 403's message,
# and the Node and rules exactly as the passing run left them.
k create serviceaccount railyard-validate-limited >/dev/null
kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: railyard-validate-limited}
rules:
  - {apiGroups: [resource.k8s.io], resources: [resourceslices], verbs: [list]}
  - {apiGroups: [resource.k8s.io], resources: [devicetaintrules], verbs: [get, list, update, delete]}
  - {apiGroups: [""], resources: [nodes], verbs: [get, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: railyard-validate-limited}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: railyard-validate-limited}
subjects: [{kind: ServiceAccount, name: railyard-validate-limited, namespace: $NS}]
EOF
state_file=$(rail_port_state "$bad" "$slices_made")
saved_state=$(cat "$state_file")
echo "1: DOWN" >"$state_file"
node_before=$(kubectl get node "$NODE_NAME" -o jsonpath='{.metadata.labels.railyard\.io/validated} {.metadata.annotations.railyard\.io/validated-at} {.spec.taints}')
rc=0
out=$(host_validate_apply railyard-validate-limited 2>&1) || rc=$?
echo "$out" | grep -E 'FAIL|refused|apply:' | sed 's/^/  /'
[ "$rc" = 2 ] || fail "--apply without create rights exited $rc, not 2"
grep -q 'refused: POST DeviceTaintRule .*HTTP 403 Forbidden: .*cannot create resource' <<<"$out" ||
  fail "the 403's message is not in the output"
[ "$(rules_of_node | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" = 0 ] ||
  fail "a refused --apply left DeviceTaintRules"
[ "$(kubectl get node "$NODE_NAME" -o jsonpath='{.metadata.labels.railyard\.io/validated} {.metadata.annotations.railyard\.io/validated-at} {.spec.taints}')" = "$node_before" ] ||
  fail "a refused --apply changed the Node"
echo "$saved_state" >"$state_file"
saved_state=
echo "ok: without create rights: exit 2 with the API server's 403, no rule, the Node untouched"
cleanup
trap - EXIT
total=$((RAILS * VFS_PER_RAIL))
until_ok 30 "all $total VFs back on the host after the Jobs" 'test "$(host_vfs)" = "$total"'
until_ok 30 "all $RAILS PFs back on the host after the Jobs" 'test "$(host_pfs)" = "$RAILS"'
