#!/usr/bin/env bash
# A NAD with a bad config: the pod's event names the error, and nothing moved (every VF still
# on the host, no lease).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

kubectl apply -f - >/dev/null <<'YAML'
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: railyard-bad
  namespace: railyard-system
  annotations:
    k8s.v1.cni.cncf.io/resourceName: railyard.io/rail0
spec:
  config: '{"cniVersion": "1.0.0", "name": "railyard-bad", "type": "railyard-cni", "mtu": "jumbo",
            "ipam": {"type": "host-local", "dataDir": "/var/lib/railyard-cluster/ipam", "ranges": [[{"subnet": "10.99.0.0/16"}]]}}'
YAML
pod_yaml sleeper.yaml name=bad-nad image=railyard:0.1.0 'command=["sleep", "infinity"]' \
  'resources=, railyard.io/rail0: "1"' 'annotations=k8s.v1.cni.cncf.io/networks: railyard-bad@net1' |
  kubectl apply -f - >/dev/null
events() { k get events --field-selector involvedObject.name=bad-nad -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}'; }
until_ok 90 "a FailedCreatePodSandBox event naming the bad field" 'events | grep FailedCreatePodSandBox | grep -q mtu'
echo "the pod's event:"
events | grep FailedCreatePodSandBox | tail -1 | fold -w 160 | sed 's/^/  /'
total=$((RAILS * VFS_PER_RAIL))
[ "$(host_vfs)" = "$total" ] || fail "a VF left the host: $(host_vfs)/$total there"
[ -z "$(find "$W/ipam/railyard-bad" -type f -name '10.*' 2>/dev/null)" ] || fail "a lease was taken for the bad NAD"
k delete pod bad-nad --wait=true --timeout 60s >/dev/null
k delete network-attachment-definition railyard-bad >/dev/null
echo "ok: the event names the error; $total/$total VFs on the host, no lease"
