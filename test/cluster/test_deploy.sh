#!/usr/bin/env bash
# kubectl apply -k: the DaemonSet's pod becomes Ready, its init container installs railyard-cni
# and railyard-sbr into the node's CNI bin dir, and the Node shows 8 bundles and 4 VFs per rail.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

kubectl apply -k "$(dirname "$0")/overlay" >/dev/null
k rollout status daemonset/railyard-device-plugin --timeout 120s >/dev/null ||
  { k describe pods -l app.kubernetes.io/name=railyard-device-plugin | tail -30; fail "the DaemonSet's pod is not Ready"; }
for b in railyard-cni railyard-sbr; do
  out=$(CNI_COMMAND=VERSION "$CNI_BIN/$b" </dev/null) || fail "$CNI_BIN/$b was not installed or does not run"
  grep -q supportedVersions <<<"$out" || fail "$b VERSION said: $out"
done
alloc() { kubectl get node "$NODE_NAME" -o jsonpath="{.status.allocatable.railyard\.io/$1}"; }
until_ok 60 "railyard.io/bundle in the Node's allocatable" 'test "$(alloc bundle)" = 8'
for ((r = 0; r < RAILS; r++)); do
  until_ok 30 "railyard.io/rail$r in the Node's allocatable" 'test "$(alloc "rail$r")" = "$VFS_PER_RAIL"'
done
echo "Node $NODE_NAME allocatable:"
kubectl get node "$NODE_NAME" -o json |
  python3 -c 'import json,sys; a=json.load(sys.stdin)["status"]["allocatable"]; [print("  %s: %s" % (k, v)) for k, v in sorted(a.items()) if k.startswith("railyard.io/")]'
echo "ok: DaemonSet Ready, plugins installed, 8 bundles and $VFS_PER_RAIL VFs on each of $RAILS rails"
