#!/usr/bin/env bash
# The DRA driver (manifests/dra/) on the node: labelled railyard.io/allocator=dra, the device
# plugin leaves it and railyard-dra-driver publishes its ResourceSlices through the API server
# (8 GPUs, 8 PFs, 32 VFs, with their attributes, owned by the Node); rail 5's port taken down in
# the fixture's sysfs taints its PF and VFs (railyard.io/rail-down, NoSchedule) within 2 s: a
# one-nic-per-rail pod stays Pending, a claim that tolerates the taint gets a VF of rail 5, and
# the taint goes within 2 s of the port coming back, the Pending pod starting; a pod that held a
# VF of rail 5 before it went down keeps running and its status shows the device Unhealthy with
# the reason, then Healthy (KEP-4680); a pod on the gpu-nic-bundles claim (8 switch-local pairs) and one on one-nic-per-rail start
# with the claimed VFs' device nodes, NCCL_IB_HCA, rails with SBR and traffic on each rail, and
# networkData in the claim's status; the driver restarted mid-life still knows the claims and
# unprepares them when the pods go, leaving nothing; a claim for a GPU and a NIC of another rail
# under one PCIe switch stays pending with the scheduler's reason. Everything it made is
# deleted, and the node goes back to the device plugin.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
bad=5
GPUS=8
state_file= saved_state=

cleanup() {
  [ -n "$state_file" ] && [ -n "$saved_state" ] && echo "$saved_state" >"$state_file"
  k delete pod dra-bundles dra-rails --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  kubectl delete -n "$NS" -k "$here/../../manifests/dra/claims" --ignore-not-found >/dev/null 2>&1 || true
  k delete pod dra-test-unmet dra-test-tolerant dra-test-holder --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  k delete resourceclaim dra-test-tolerant dra-test-holder --ignore-not-found --wait=true --timeout 30s >/dev/null 2>&1 || true
  k delete resourceclaim dra-test-unmet --ignore-not-found --wait=true --timeout 30s >/dev/null 2>&1 || true
  kubectl delete -k "$here/overlay-dra" --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  # The DaemonSet gone, its slices stay (owned by the Node): removed here, as a driver leaving
  # a node for good would with --delete-on-exit.
  kubectl delete resourceslices --field-selector "spec.nodeName=$NODE_NAME,spec.driver=railyard.io" \
    --ignore-not-found >/dev/null 2>&1 || true
  kubectl label node "$NODE_NAME" railyard.io/allocator- >/dev/null 2>&1 || true
  # The device plugin comes back to the node: its pod made, then Ready.
  for _ in $(seq 120); do [ -n "$(dp_pods 2>/dev/null)" ] && break; sleep 0.5; done
  k rollout status daemonset/railyard-device-plugin --timeout 120s >/dev/null 2>&1 || true
}
dp_pods() { k get pods -l app.kubernetes.io/name=railyard-device-plugin -o name; }
trap cleanup EXIT

kubectl api-resources --api-group resource.k8s.io -o name | grep -x 'resourceslices.resource.k8s.io' >/dev/null ||
  fail "the API server does not serve resource.k8s.io ResourceSlices: $(kubectl api-resources --api-group resource.k8s.io 2>&1)"

# A node changes allocator with no pod holding its VFs (dra/README.md, "One allocator per
# node"): pods an earlier test left (when run alone with ctest -R) go first.
k delete pods -l app.kubernetes.io/name=railyard-cluster-test --wait=true --timeout 60s >/dev/null
until_ok 30 "every VF back on the host before the switch" 'test "$(host_vfs)" = "$((RAILS * VFS_PER_RAIL))"'

# The switch: the node goes to the DRA driver; the device plugin's pod leaves it.
kubectl label node "$NODE_NAME" railyard.io/allocator=dra --overwrite >/dev/null
until_ok 60 "the device plugin's pod to leave the node labelled allocator=dra" 'test -z "$(dp_pods)"'
echo "ok: node labelled railyard.io/allocator=dra, the device plugin's pod is gone"

kubectl apply -k "$here/overlay-dra" >/dev/null
k rollout status daemonset/railyard-dra-driver --timeout 120s >/dev/null ||
  { k describe pods -l app.kubernetes.io/name=railyard-dra-driver | tail -30; fail "the DRA driver's pod is not Ready"; }

slices() {
  kubectl get resourceslices --field-selector "spec.nodeName=$NODE_NAME,spec.driver=railyard.io" -o json
}
# <python expression on d (the devices of the pool, by name), slices, gen>: prints its value.
pool() {
  slices | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
d = {x["name"]: x for s in items for x in s["spec"].get("devices", [])}
gen = max([s["spec"]["pool"]["generation"] for s in items] or [0])
slices = items
def a(dev, name):
    v = dev["attributes"].get(name, {})
    return next(iter(v.values()), None)
def typ(dev): return a(dev, "railyard.io/type")
print(eval(sys.argv[1]))' "$1"
}
expected=$((GPUS + RAILS + RAILS * VFS_PER_RAIL))
count() { pool 'len(d)'; }
until_ok 30 "$expected devices in the node's ResourceSlices" 'test "$(count)" = "$expected"'
echo "ok: the node's pool has $expected devices ($GPUS GPUs, $RAILS PFs, $((RAILS * VFS_PER_RAIL)) VFs) in $(pool 'len(slices)') slice(s), generation $(pool gen)"
t=$(pool 'sorted(typ(x) for x in d.values()).count("gpu"), sorted(typ(x) for x in d.values()).count("nic"), sorted(typ(x) for x in d.values()).count("vf")')
[ "$t" = "($GPUS, $RAILS, $((RAILS * VFS_PER_RAIL)))" ] || fail "(gpu, nic, vf) counts are $t"

# Attributes: each rail has one PF and its VFs; a GPU shares its switch with its rail's PF and
# is PIX to it; every device has the standard pcieRoot and pciBusID; the slices are the Node's.
uid=$(kubectl get node "$NODE_NAME" -o jsonpath='{.metadata.uid}')
checks=$(pool '[
  sorted(a(x, "railyard.io/rail") for x in d.values() if typ(x) == "nic") == list(range('"$RAILS"')),
  all(sum(1 for x in d.values() if typ(x) == "vf" and a(x, "railyard.io/rail") == r) == '"$VFS_PER_RAIL"' for r in range('"$RAILS"')),
  all(a(g, "railyard.io/pathClass") == "PIX" and any(typ(n) == "nic" and a(n, "railyard.io/rail") == a(g, "railyard.io/rail") and a(n, "railyard.io/pcieSwitch") == a(g, "railyard.io/pcieSwitch") for n in d.values()) for g in d.values() if typ(g) == "gpu"),
  all(a(x, "resource.kubernetes.io/pcieRoot") and a(x, "resource.kubernetes.io/pciBusID") for x in d.values()),
  all(x.get("capacity", {}).get("railyard.io/linkSpeed") for x in d.values() if typ(x) != "gpu"),
  all(s["metadata"]["ownerReferences"][0]["kind"] == "Node" and s["metadata"]["ownerReferences"][0]["uid"] == "'"$uid"'" for s in slices),
]')
[ "$checks" = "[True, True, True, True, True, True]" ] ||
  fail "attribute checks (rails' PFs, VFs per rail, GPU switch and PIX, standard attributes, link speed, owner) gave $checks"
echo "ok: one PF and $VFS_PER_RAIL VFs per rail; each GPU under its rail PF's switch (PIX); pcieRoot and pciBusID on all; linkSpeed on the NICs; owned by Node $NODE_NAME"
echo "One GPU and one VF as published:"
pool 'json.dumps([next(x for x in d.values() if typ(x) == "gpu"), next(x for x in d.values() if typ(x) == "vf" and a(x, "railyard.io/rail") == '"$bad"')], indent=2)' | sed 's/^/  /'

# claimed_pod <name> <claim reference> [networks]: a pod holding one claim as "claim", given by
# `resourceClaimName: X` or `resourceClaimTemplateName: X`, with Multus networks if named.
claimed_pod() {
  pod_yaml claimed.yaml "name=$1" "claim=$2" \
    "annotations=${3:+k8s.v1.cni.cncf.io/networks: \"$3\"}"
}
# A pod on a DRA claim template, with a rail from each of its VFs through railyard-dra-rails.
dra_pod() { # <name> <claim template>
  local nets="" r
  for ((r = 0; r < RAILS; r++)); do nets+="${nets:+, }railyard-dra-rails@net$((r + 1))"; done
  claimed_pod "$1" "resourceClaimTemplateName: $2" "$nets"
}
# claim_pod <name>: a ResourceClaim <name>, its spec.devices on stdin (YAML as under
# "devices:"), and a pod that holds it.
claim_pod() {
  local devices
  devices=$(sed 's/^/    /')
  kubectl apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1, namespace: $NS}
spec:
  devices:
$devices
---
$(claimed_pod "$1" "resourceClaimName: $1")
YAML
}
# A pod on a claim of its own for one VF of rail 5 that tolerates railyard.io/rail-down.
tolerant_pod() { # <name>
  claim_pod "$1" <<YAML
requests:
  - name: nic
    exactly:
      deviceClassName: rail-nic.railyard.io
      selectors:
        - cel: {expression: 'device.attributes["railyard.io"].type == "vf" && device.attributes["railyard.io"].rail == $bad'}
      tolerations:
        - {key: railyard.io/rail-down, operator: Exists, effect: NoSchedule}
YAML
  k wait --for=condition=Ready "pod/$1" --timeout 60s >/dev/null ||
    { k describe pod "$1" | tail -20; fail "pod $1, whose claim tolerates rail-down, did not start"; }
}
# <pod>: "Health message" of each device in its containers' allocatedResourcesStatus (KEP-4680)
pod_health() {
  k get pod "$1" -o json | python3 -c '
import json, sys
for cs in json.load(sys.stdin)["status"].get("containerStatuses", []):
    for ars in cs.get("allocatedResourcesStatus") or []:
        for r in ars.get("resources") or []:
            print(r.get("health", ""), r.get("message", ""))'
}
host_vfs_before=$(host_vfs)
# A pod already holding a VF of rail 5 when it goes down: it keeps running (NoSchedule), and its
# status shows the device's health from the driver's health stream.
tolerant_pod dra-test-holder
until_ok 30 "dra-test-holder's status to show its VF Healthy" 'pod_health dra-test-holder | grep -q "^Healthy"'
echo "ok: dra-test-holder holds a VF of rail $bad; its status: $(pod_health dra-test-holder)"

# Rail 5 down: its PF's port leaves ACTIVE in the fixture's sysfs, where the driver reads it.
pf=$(pool 'next(a(x, "resource.kubernetes.io/pciBusID") + " " + a(x, "railyard.io/rdmaDevice") for x in d.values() if typ(x) == "nic" and a(x, "railyard.io/rail") == '"$bad"')')
read -r pci rdma <<<"$pf"
state_file=$SYSFS_ROOT/sys/bus/pci/devices/$pci/infiniband/$rdma/ports/1/state
[ -f "$state_file" ] || fail "no port state for rail $bad's PF at $state_file"
saved_state=$(cat "$state_file")
gen0=$(pool gen)
# <python expression on x>: the rail's PF and VFs it holds for
rail_devices() { pool 'sum(1 for x in d.values() if typ(x) in ("nic", "vf") and a(x, "railyard.io/rail") == '"$bad"' and '"$1"')'; }
tainted='any(t["key"] == "railyard.io/rail-down" and t["effect"] == "NoSchedule" for t in x.get("taints", []))'
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
t0=$(date +%s%N)
echo "1: DOWN" >"$state_file"
until_ok 5 "rail $bad's PF and VFs to carry the rail-down taint after its port went DOWN" \
  'test "$(rail_devices "$tainted")" = "$((1 + VFS_PER_RAIL))"'
down_ms=$(ms_since "$t0")
[ "$(count)" = "$expected" ] || fail "the pool has $(count) devices with rail $bad DOWN, expected all $expected (tainted, not dropped)"
[ "$(pool 'sum(1 for x in d.values() if x.get("taints"))')" = "$((1 + VFS_PER_RAIL))" ] ||
  fail "devices off rail $bad are tainted: $(pool '[x["name"] for x in d.values() if x.get("taints")]')"
[ "$down_ms" -le 2000 ] || fail "the taint took $down_ms ms to show in the API, more than 2 s"
echo "ok: rail $bad ($rdma, $pci) DOWN: its PF and $VFS_PER_RAIL VFs tainted in the slices within $down_ms ms, still published (generation $gen0 -> $(pool gen))"
pool 'json.dumps(next(x["taints"] for x in d.values() if typ(x) == "nic" and a(x, "railyard.io/rail") == '"$bad"'))' | sed 's/^/  taint: /'

# While it is down: a pod asking for a VF of every rail stays Pending; one whose claim
# tolerates the taint gets a VF of rail 5 and starts.
kubectl apply -n "$NS" -k "$here/../../manifests/dra/claims" >/dev/null
dra_pod dra-rails one-nic-per-rail | kubectl apply -f - >/dev/null
tolerant_pod dra-test-tolerant
got=$(k get resourceclaim dra-test-tolerant -o jsonpath='{.status.allocation.devices.results[0].device}')
[ "$(pool "a(d['$got'], 'railyard.io/rail')")" = "$bad" ] && [ "$(pool "bool(d['$got'].get('taints'))")" = True ] ||
  fail "the tolerating claim got $got, not a tainted VF of rail $bad"
echo "ok: a claim that tolerates railyard.io/rail-down got the tainted $got and its pod is Running"
until_ok 30 "dra-test-holder's status to show its VF Unhealthy" 'pod_health dra-test-holder | grep -q "^Unhealthy .*is not ACTIVE"'
[ "$(k get pod dra-test-holder -o jsonpath='{.status.phase}')" = Running ] || fail "dra-test-holder is not Running with its rail down (NoSchedule must not evict)"
echo "ok: dra-test-holder keeps running on the tainted rail; its status: $(pod_health dra-test-holder)"
scheduled() { k get pod dra-rails -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}'; }
until_ok 30 "the one-nic-per-rail pod to be marked Unschedulable while rail $bad is tainted" 'test "$(scheduled)" = Unschedulable'
event=$(k get events --field-selector involvedObject.name=dra-rails,reason=FailedScheduling -o jsonpath='{.items[-1:].message}')
echo "ok: the one-nic-per-rail pod is Pending: $event"
# The scheduler (1.36) says "cannot allocate all claims" without naming the taint; the driver's
# Event on the Node does, with the devices and the reason.
node_event() { # <reason>: the newest such Event's message on the Node
  kubectl get events -A --field-selector "involvedObject.kind=Node,involvedObject.name=$NODE_NAME,reason=$1" \
    -o jsonpath='{.items[-1:].message}'
}
pf_name=$(pool 'next(x["name"] for x in d.values() if typ(x) == "nic" and a(x, "railyard.io/rail") == '"$bad"')')
until_ok 10 "a RailDown Event on the Node naming $pf_name" 'node_event RailDown | grep -q "$pf_name.*is not ACTIVE"'
echo "ok: kubectl describe node shows: RailDown: $(node_event RailDown)"

t0=$(date +%s%N)
echo "$saved_state" >"$state_file"
until_ok 5 "rail $bad's taint to go when its port is ACTIVE again" 'test "$(rail_devices "$tainted")" = 0'
up_ms=$(ms_since "$t0")
[ "$up_ms" -le 2000 ] || fail "the taint took $up_ms ms to leave, more than 2 s"
echo "ok: rail $bad ACTIVE again: the taint left within $up_ms ms ($expected devices, generation $(pool gen))"
until_ok 10 "a RailUp Event on the Node naming $pf_name" 'node_event RailUp | grep -q "$pf_name"'
echo "ok: and then: RailUp: $(node_event RailUp)"
until_ok 30 "dra-test-holder's status to show its VF Healthy again" 'pod_health dra-test-holder | grep -q "^Healthy"'
echo "ok: dra-test-holder's status: $(pod_health dra-test-holder)"
k delete pod dra-test-tolerant dra-test-holder --wait=true --timeout 60s >/dev/null
k delete resourceclaim dra-test-tolerant dra-test-holder --wait=true --timeout 30s >/dev/null

# A slice deleted by hand: the driver's resync (--resync=3 in the overlay) publishes it again.
kubectl delete resourceslice "$NODE_NAME-railyard.io-0" >/dev/null
until_ok 10 "the slice deleted by hand to be published again" 'test "$(count)" = "$expected"'
echo "ok: the slice deleted by hand is back: $expected devices, generation $(pool gen)"
k logs daemonset/railyard-dra-driver -c dra-driver | grep -E 'found|published|nic-|differ' | sed 's/^/  driver: /'

# Two pods on DRA claims (manifests/dra/claims): dra-bundles takes gpu-nic-bundles (8 GPU+VF
# pairs, each under one switch), dra-rails one-nic-per-rail (a VF of each rail). The scheduler
# allocates, the kubelet calls the driver (NodePrepareResources: a CDI spec per claim), and
# railyard-cni, attached 8 times through railyard-dra-rails, moves the claimed VFs in, rail by
# rail, with their addresses and SBR.
dra_pod dra-bundles gpu-nic-bundles | kubectl apply -f - >/dev/null
for p in dra-bundles dra-rails; do
  k wait --for=condition=Ready "pod/$p" --timeout 120s >/dev/null || {
    k describe pod "$p" | tail -25
    k logs daemonset/railyard-dra-driver -c dra-driver | tail -20
    fail "pod $p on a DRA claim is not Ready"
  }
done
claim() { k get pod "$1" -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}'; }
bundle_claim=$(claim dra-bundles) rails_claim=$(claim dra-rails)
results=$(k get resourceclaim "$bundle_claim" -o json)
pairs=$(RESULTS=$results pool '
[(r["request"], r["device"], a(d[r["device"]], "railyard.io/rail"), a(d[r["device"]], "railyard.io/pcieSwitch"))
 for r in json.loads(__import__("os").environ["RESULTS"])["status"]["allocation"]["devices"]["results"]]')
echo "  claim $bundle_claim allocated (request, device, rail, pcieSwitch):"
python3 -c 'import ast,sys; [print("    %s %s rail %s switch %s" % p) for p in ast.literal_eval(sys.argv[1])]' "$pairs"
python3 - "$pairs" "$RAILS" <<'PY' || fail "the allocation is not 8 switch-local GPU+VF pairs, one per rail: $pairs"
import ast, sys
pairs = {req: (dev, rail, switch) for req, dev, rail, switch in ast.literal_eval(sys.argv[1])}
rails = int(sys.argv[2])
assert len(pairs) == 2 * rails
for k in range(rails):
    g, n = pairs[f"gpu{k}"], pairs[f"nic{k}"]
    assert g[0].startswith("gpu-") and n[0].startswith("vf-"), (g, n)
    assert g[1] == n[1] == k and g[2] == n[2], (g, n)
PY
echo "ok: the scheduler allocated 8 GPU+VF pairs, each under one switch on its rail; both pods Ready"

container_env() { tr '\0' '\n' <"/proc/$1/environ" | sed -n "s/^$2=//p"; } # <pid> <name>
# What the container sees: the claimed VFs' uverbs nodes and rdma_cm, NCCL_IB_HCA naming them
# rail by rail, the GPUs by index.
# <claim>: "pci rdma" of its VFs, rail by rail
claim_vfs() {
  RESULTS=$(k get resourceclaim "$1" -o json) pool '
"\n".join(a(d[r["device"]], "resource.kubernetes.io/pciBusID") + " " + a(d[r["device"]], "railyard.io/rdmaDevice")
  for r in sorted(json.loads(__import__("os").environ["RESULTS"])["status"]["allocation"]["devices"]["results"],
                  key=lambda r: a(d[r["device"]], "railyard.io/rail"))
  if typ(d[r["device"]]) == "vf")'
}
for p in dra-bundles dra-rails; do
  c=$(claim "$p")
  want_hca="" want_nodes="rdma_cm"
  while read -r pci rdma; do
    want_hca+="${want_hca:+,}$rdma:1"
    want_nodes+=" $(ls "$SYSFS_ROOT/sys/bus/pci/devices/$pci/infiniband_verbs")"
  done < <(claim_vfs "$c")
  pid=$(pod_pid "$p")
  hca=$(container_env "$pid" NCCL_IB_HCA)
  [ "$hca" = "=$want_hca" ] || fail "$p: NCCL_IB_HCA is '$hca', expected '=$want_hca'"
  nodes=$(nsenter -t "$pid" -m ls /dev/infiniband | sort | tr '\n' ' ')
  want=$(tr ' ' '\n' <<<"$want_nodes" | sort | tr '\n' ' ')
  [ "$nodes" = "$want" ] || fail "$p: /dev/infiniband has '$nodes', expected '$want'"
  echo "ok: $p: NCCL_IB_HCA=$hca; /dev/infiniband: $nodes"
done
gpus=$(container_env "$(pod_pid dra-bundles)" NVIDIA_VISIBLE_DEVICES)
[ "$gpus" = "0,1,2,3,4,5,6,7" ] || fail "dra-bundles: NVIDIA_VISIBLE_DEVICES is '$gpus'"

# Rails up with their addresses, SBR rules and tables, and traffic between the pods on
# every rail over its own leaf.
check_rails dra-bundles dra-rails
echo "dra-bundles, as the pod sees its rails:"
in_pod dra-bundles ip -br addr show | grep net | sed 's/^/  /'
in_pod dra-bundles ip rule show | grep lookup | grep -v -E 'local|main|default' | sed 's/^/  /'
echo "ok: 2 DRA pods x $RAILS rails, addresses and SBR per rail, pings on every rail over its own leaf"

# networkData: the driver reports each VF's interface, address and MAC in the claim's status.
netdata() {
  k get resourceclaim "$bundle_claim" -o json | python3 -c '
import json, sys
c = json.load(sys.stdin)
print(sorted((d["networkData"]["interfaceName"], d["networkData"]["ips"][0].split("/")[0], d["device"])
             for d in c["status"].get("devices", []) if "networkData" in d))'
}
until_ok 15 "networkData for the 8 VFs in claim $bundle_claim's status" 'test "$(netdata | grep -o net | wc -l)" = "$RAILS"'
for ((r = 0; r < RAILS; r++)); do
  grep -q "('net$((r + 1))', '$(rail_addr dra-bundles "$r")'" <<<"$(netdata)" ||
    fail "claim status has no networkData net$((r + 1)) $(rail_addr dra-bundles "$r"): $(netdata)"
done
echo "  status.devices[0] of $bundle_claim:"
k get resourceclaim "$bundle_claim" -o jsonpath='{.status.devices[0]}' | sed 's/^/    /'
echo
echo "ok: claim $bundle_claim's status carries networkData for its 8 VFs (interface, address, MAC)"

# The driver restarted mid-life: the prepared claims are read back from its state directory.
old=$(k get pods -l app.kubernetes.io/name=railyard-dra-driver -o name)
k delete "$old" --wait=true --timeout 60s >/dev/null
until_ok 60 "a new DRA driver pod" 'test -n "$(k get pods -l app.kubernetes.io/name=railyard-dra-driver -o name)" && test "$(k get pods -l app.kubernetes.io/name=railyard-dra-driver -o name)" != "$old"'
k rollout status daemonset/railyard-dra-driver --timeout 120s >/dev/null || fail "the restarted DRA driver is not Ready"
until_ok 30 "the restarted driver to read its 2 prepared claims" \
  'k logs daemonset/railyard-dra-driver -c dra-driver | grep "2 prepared claims in"'
until_ok 30 "the restarted driver to register with the kubelet" \
  'k logs daemonset/railyard-dra-driver -c dra-driver | grep "plugin railyard.io registered"'
k logs daemonset/railyard-dra-driver -c dra-driver | grep -E "prepared claims in|registered" | sed 's/^/  driver: /'
echo "ok: the driver restarted mid-life and knows the 2 prepared claims"

# Pods deleted: the kubelet unprepares the claims with the restarted driver; every VF is back
# on the host, no CDI spec, no state, no handoff file left.
for p in dra-bundles dra-rails; do k delete pod "$p" --wait=true --timeout 60s >/dev/null; done
for c in "$bundle_claim" "$rails_claim"; do
  until_ok 30 "the generated claim $c to go with its pod" '! k get resourceclaim "$c" >/dev/null 2>&1'
done
until_ok 30 "every VF back on the host ($host_vfs_before)" 'test "$(host_vfs)" = "$host_vfs_before"'
left=$(find "$W/cdi" "$W/dra" -type f 2>/dev/null | grep -v '/locks/' || true)
[ -z "$left" ] || fail "left behind after the claims were unprepared: $left"
n=$(k logs daemonset/railyard-dra-driver -c dra-driver | grep -c "devices returned" || true)
[ "$n" = 2 ] || fail "the restarted driver unprepared $n claims, not 2: $(k logs daemonset/railyard-dra-driver -c dra-driver | grep unprepare)"
k logs daemonset/railyard-dra-driver -c dra-driver | grep "devices returned" | sed 's/^/  driver: /'
echo "ok: pods deleted: both claims unprepared by the restarted driver, $host_vfs_before VFs on the host, nothing left in the CDI and state directories"
kubectl delete -n "$NS" -k "$here/../../manifests/dra/claims" >/dev/null

# A claim that cannot be met: the GPU of rail 0's bundle and a VF of rail 1 under one PCIe
# switch; on this node each GPU shares a switch with its own rail's NIC only.
claim_pod dra-test-unmet <<YAML
requests:
  - name: gpu
    exactly:
      deviceClassName: gpu-nic-bundle.railyard.io
      selectors:
        - cel: {expression: 'device.attributes["railyard.io"].rail == 0'}
  - name: nic
    exactly:
      deviceClassName: rail-nic.railyard.io
      selectors:
        - cel: {expression: 'device.attributes["railyard.io"].type == "vf" && device.attributes["railyard.io"].rail == 1'}
constraints:
  - requests: [gpu, nic]
    matchAttribute: railyard.io/pcieSwitch
YAML
unschedulable() {
  test "$(k get pod dra-test-unmet -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable
}
until_ok 30 "the pod with the unmet claim to be marked Unschedulable" unschedulable
reason=$(k get pod dra-test-unmet -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')
event=$(k get events --field-selector involvedObject.name=dra-test-unmet,reason=FailedScheduling -o jsonpath='{.items[-1:].message}')
echo "  PodScheduled=False: $reason"
echo "  event FailedScheduling: $event"
grep -qi "claim" <<<"$reason" || fail "the scheduler's reason does not name the claim: $reason"
phase=$(k get pod dra-test-unmet -o jsonpath='{.status.phase}')
node=$(k get pod dra-test-unmet -o jsonpath='{.spec.nodeName}')
alloc=$(k get resourceclaim dra-test-unmet -o jsonpath='{.status.allocation}')
[ "$phase" = Pending ] && [ -z "$node" ] && [ -z "$alloc" ] ||
  fail "the pod is $phase on '$node', claim allocation '$alloc'"
echo "ok: the switch-local pair the node lacks stays Pending, unallocated"
