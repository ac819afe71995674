#!/usr/bin/env bash
# How fast a rail's fault reaches the scheduler through railyard-dra-driver, in the one-node
# cluster (test/cluster/): rail 5's PF port set DOWN in the node's sysfs -> its devices' taint
# visible in the API server's ResourceSlices, and ACTIVE again -> the taint gone. ROUNDS of each
# (default 5); prints every round, the medians and the 2 s target; --json FILE writes them.
# No peer: neither dranet nor the SR-IOV DRA driver taints a device (dra/README.md).
#
#   bench/dra/taint.sh [ROUNDS] [--json FILE]
#
# Needs the image (scripts/image.sh --archive build-image/railyard.tar) and the cluster's
# programs (test/cluster/build.sh, cached under /var/cache). Brings the cluster up unless it is
# up, and leaves it as it found it. The API is polled with kubectl as fast as it answers (its
# start-up, ~0.1 s here, is the resolution); the driver looks at sysfs every second (--interval
# 1000, the shipped DaemonSet's), so a change waits 0.5 s for it on average.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=5 json=""
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=$2; shift 2 ;;
    *) rounds=$1; shift ;;
  esac
done
scripts/install-deps.sh >/dev/null
source test/cluster/lib.sh
here=test/cluster
bad=5

state_file="" saved_state=""
cleanup() {
  [ -n "$state_file" ] && [ -n "$saved_state" ] && echo "$saved_state" >"$state_file"
  kubectl delete -k "$here/overlay-dra" --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  kubectl delete resourceslices --field-selector "spec.nodeName=$NODE_NAME,spec.driver=railyard.io" \
    --ignore-not-found >/dev/null 2>&1 || true
  kubectl label node "$NODE_NAME" railyard.io/allocator- >/dev/null 2>&1 || true
  cluster_down_if_started
}
trap cleanup EXIT

cluster_up_unless_up
kubectl apply -k "$here/overlay" >/dev/null # the namespace, the CNI and its policy
kubectl label node "$NODE_NAME" railyard.io/allocator=dra --overwrite >/dev/null
kubectl apply -k "$here/overlay-dra" >/dev/null
k rollout status daemonset/railyard-dra-driver --timeout 120s >/dev/null || fail "the DRA driver's pod is not Ready"

# <python expression over d, the pool's devices by name>
pool() {
  kubectl get resourceslices --field-selector "spec.nodeName=$NODE_NAME,spec.driver=railyard.io" -o json |
    python3 -c '
import json, sys
d = {x["name"]: x for s in json.load(sys.stdin)["items"] for x in s["spec"].get("devices", [])}
def a(dev, name): return next(iter(dev["attributes"].get(name, {}).values()), None)
print(eval(sys.argv[1]))' "$1"
}
until_ok 60 "rail $bad's PF in the slices" \
  'test -n "$(pool "next((a(x, \"resource.kubernetes.io/pciBusID\") for x in d.values() if a(x, \"railyard.io/type\") == \"nic\" and a(x, \"railyard.io/rail\") == '$bad'), \"\")")"'
read -r pci rdma <<<"$(pool 'next(a(x, "resource.kubernetes.io/pciBusID") + " " + a(x, "railyard.io/rdmaDevice") for x in d.values() if a(x, "railyard.io/type") == "nic" and a(x, "railyard.io/rail") == '"$bad"')')"
state_file=$SYSFS_ROOT/sys/bus/pci/devices/$pci/infiniband/$rdma/ports/1/state
saved_state=$(cat "$state_file")
tainted() { pool 'sum(1 for x in d.values() if any(t["key"] == "railyard.io/rail-down" for t in x.get("taints", [])))'; }
want=$(pool 'sum(1 for x in d.values() if a(x, "railyard.io/rail") == '"$bad"' and a(x, "railyard.io/type") in ("nic", "vf"))')

# <value> : ms until tainted() prints it (fails after 30 s)
time_until() {
  local t0
  t0=$(date +%s%N)
  until [ "$(tainted)" = "$1" ]; do
    [ $((($(date +%s%N) - t0) / 1000000000)) -lt 30 ] || fail "tainted devices never became $1"
  done
  echo $((($(date +%s%N) - t0) / 1000000))
}

printf '%-6s %12s %12s\n' round "DOWN->taint" "ACTIVE->gone"
downs=() ups=()
for ((i = 1; i <= rounds; i++)); do
  echo "1: DOWN" >"$state_file"
  down=$(time_until "$want")
  echo "$saved_state" >"$state_file"
  up=$(time_until 0)
  downs+=("$down") ups+=("$up")
  printf '%-6s %9s ms %9s ms\n' "$i" "$down" "$up"
done
md=$(median "${downs[@]}") mu=$(median "${ups[@]}")
printf '%-6s %9s ms %9s ms   (target: at most 2000 ms each; %s devices of rail %s)\n' median "$md" "$mu" "$want" "$bad"
[ -z "$json" ] || bench_json "$json" down_to_taint_ms active_to_untainted_ms 2000 "${downs[*]}" "${ups[*]}"
