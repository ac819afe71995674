#!/usr/bin/env bash
# The sriov-cni NAD example works with railyard-cni by changing only `type`: its config parses and
# ADD/DEL succeed on a simulated VF (the VF settings the PF cannot take are left out here: veth
# PFs report no VFs, so vlan/spoofchk/trust would be refused, as tested elsewhere).
set -euo pipefail
bin=$1 fixture=$2 example=$3
work=$(mktemp -d)
node="rynad-node-$$" pod="rynad-pod-$$"
cleanup() { ip netns del "$pod" 2>/dev/null || true; ip netns del "$node" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
ip netns add "$node"
ip netns add "$pod"
cat >"$work/n.json" <<'J'
{"host_bridges": [{"id": "0000:10", "numa": 0, "ports": [{"switch": [{"gpu": {}},
  {"nic": {"rdma": "mlx5_0", "netdev": "rypf0", "vfs": 1, "vf_netdevs": ["ryvf0"]}}]}]}]}
J
"$fixture" "$work/n.json" "$work/root"
echo '{}' >"$work/rails.json"
ip link add ryvf0 netns "$node" type veth peer name ryvfx0 netns "$node"
config=$(python3 - "$example" "$work" <<'PY'
import json, re, sys
text = open(sys.argv[1]).read()
conf = json.loads(re.search(r"config: \|-\n((?:    .*\n?)+)", text).group(1))
assert conf["type"] == "railyard-cni"
for k in ("vlan", "spoofchk", "trust", "link_state"):
    conf.pop(k)
conf["deviceID"] = "0000:14:00.2"  # what Multus injects
conf["ipam"]["dataDir"] = sys.argv[2] + "/ipam"
print(json.dumps(conf))
PY
)
echo '{"stateDir": "'"$work"'/state"}' >"$work/cni-policy.json"
export RAILYARD_CNI_POLICY="$work/cni-policy.json"
export RAILYARD_SYSFS_ROOT="$work/root" RAILYARD_RAILS_FILE="$work/rails.json" CNI_CONTAINERID=nad
export CNI_NETNS="/var/run/netns/$pod" CNI_IFNAME=net1 CNI_PATH=/usr/lib/cni
echo "$config" | CNI_COMMAND=ADD ip netns exec "$node" "$bin" | grep -q '"address":"10.10.0.2/24"'
ip -n "$pod" addr show dev net1 | grep -q "inet 10.10.0.2/24"
echo "$config" | CNI_COMMAND=DEL ip netns exec "$node" "$bin"
ip -n "$node" link show dev ryvf0 >/dev/null
echo "1 passed, 0 failed"
