#!/usr/bin/env bash
# A finding acts, end to end, in the one-node Kubernetes 1.36 cluster (test/cluster/; its programs
# are built once and cached under /var/cache): the node's rails handed out by railyard's DRA driver;
#  1. rail 5's link trains down to 100 Gb/s (its port's rate in the node's sysfs fixture);
#  2. railyard-validate run --apply (as the validation Job's ServiceAccount) fails rail 5 and
#     writes one DeviceTaintRule per rail 5 device, with the evidence;
#  3. a pod asking for a NIC of every rail (claim template one-nic-per-rail) stays Pending;
#  4. the link is healed, the validation passes and deletes its rules, and the pod runs.
# Every step is printed as it happens, with the time since the start. Everything it creates is
# removed on exit, failure included; a cluster it brought up it takes down again.
# The validation runs on the host, not in a Job: the shipped Job gets its rails from the device
# plugin, and this node's rails belong to the DRA driver (test/cluster/test_validate.sh runs
# the Job itself). Needs root. Usage: scripts/demo-cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
echo "== building (build-release) and the image, once per change"
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release -j "$(nproc)" >/dev/null
[ -f build-image/railyard.tar ] ||
  scripts/image.sh --clean --binaries build-release/bin --archive build-image/railyard.tar >/dev/null
export RAILYARD_BIN=$PWD/build-release/bin
source test/cluster/lib.sh
here=test/cluster
bad=5
t_start=$(date +%s%N)
say() { printf '[%6s s] %s\n' "$(awk -v a="$t_start" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')" "$*"; }

rate_file="" saved_rate=""
cleanup() {
  [ -n "$saved_rate" ] && echo "$saved_rate" >"$rate_file"
  k delete pod demo-rails --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  kubectl delete -n "$NS" -k manifests/dra/claims --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate \
    --ignore-not-found >/dev/null 2>&1 || true
  kubectl delete -k "$here/overlay-dra" --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  kubectl delete resourceslices --field-selector "spec.nodeName=$NODE_NAME,spec.driver=railyard.io" \
    --ignore-not-found >/dev/null 2>&1 || true
  kubectl label node "$NODE_NAME" railyard.io/allocator- railyard.io/validated- >/dev/null 2>&1 || true
  kubectl annotate node "$NODE_NAME" railyard.io/validated-at- railyard.io/validation-reason- >/dev/null 2>&1 || true
  rm -f "$W/demo-slices.json"
  cluster_down_if_started
}
trap cleanup EXIT

cluster_up_unless_up
kubectl apply -k "$here/overlay" >/dev/null 2>&1 # the namespace, the CNI, the validator's role
kubectl label node "$NODE_NAME" railyard.io/allocator=dra --overwrite >/dev/null
kubectl apply -k "$here/overlay-dra" >/dev/null 2>&1
k rollout status daemonset/railyard-dra-driver --timeout 120s >/dev/null || fail "the DRA driver's pod is not Ready"
kubectl apply -n "$NS" -k manifests/dra/claims >/dev/null 2>&1
slices=$W/demo-slices.json
until_ok 60 "the node's slices" \
  "kubectl get resourceslices --field-selector spec.nodeName=$NODE_NAME,spec.driver=railyard.io -o json >$slices && grep -q '\"railyard.io/rail\"' $slices"
say "railyard-dra-driver publishes $(grep -c '"name": "vf-' "$slices") VFs of $RAILS rails on $NODE_NAME"

rate_file=$(dirname "$(rail_port_state "$bad" "$slices")")/rate
[ -f "$rate_file" ] || fail "no port rate for rail $bad at $rate_file"
validate() {
  host_validate_apply railyard-validate 400 2>&1 | grep -E 'railyard-validate: |FAIL|apply:' |
    sed 's/^/             /' || true
}
rules() {
  kubectl get devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate \
    -o custom-columns='RULE:.metadata.name,DEVICE:.spec.deviceSelector.device,TAINT:.spec.taint.key,VALUE:.spec.taint.value,EFFECT:.spec.taint.effect' --no-headers
}
phase() { k get pod demo-rails -o jsonpath='{.status.phase}'; }

saved_rate=$(cat "$rate_file")
echo "100 Gb/sec (4X EDR)" >"$rate_file"
say "1. rail $bad's link trained down: $(cat "$rate_file") (was $saved_rate)"
say "2. railyard-validate run --apply:"
validate
say "   its DeviceTaintRules:"
rules | sed 's/^/             /'
say "3. a pod asking for a NIC of every rail (one-nic-per-rail):"
pod_yaml claimed.yaml name=demo-rails "claim=resourceClaimTemplateName: one-nic-per-rail" |
  k apply -f - >/dev/null
until_ok 30 "the pod to be marked Unschedulable" \
  'test "$(k get pod demo-rails -o jsonpath="{.status.conditions[?(@.type==\"PodScheduled\")].reason}")" = Unschedulable'
say "   $(phase): $(k get pod demo-rails -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
echo "$saved_rate" >"$rate_file"
saved_rate=
say "4. rail $bad healed: $(cat "$rate_file"); railyard-validate run --apply again:"
validate
say "   DeviceTaintRules left: $(rules | wc -l)"
until_ok 60 "the pod to run" 'test "$(phase)" = Running'
say "   the pod is $(phase), holding: $(k get resourceclaim -o jsonpath='{.items[0].status.allocation.devices.results[*].device}')"
say "done; removing everything the demo made"
