#!/usr/bin/env bash
# ctest (label lab): railyard-cni on a real PCI NIC (a lab node's e1000e, rail 1, soft-RoCE on it)
# with Debian's host-local IPAM: ADD into a pod namespace with SBR and traffic to the peer node;
# DEL gives the NIC back as itself; DEL after the pod's namespace is gone (a physical netdev
# returns to the host by itself, under its pod name) gives it back as itself too; the kernel's
# RDMA netns mode is read; in exclusive mode the NIC's RDMA device must follow it into the pod,
# which rxe cannot (the kernel deletes it when its netdev moves): a clear error naming it and a
# full rollback. Node 1 is the peer and waits for node 0. Usage: REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
cd "$repo"
exec python3 lab/lab.py run --nodes 2 --rails 2 --timeout 400 -- "
if [ \$LAB_NODE = 1 ]; then
  # The peer: its rail 1 answers until node 0 is done (the job directory is shared).
  i=0; while [ ! -e /lab/cni-done ] && [ \$i -lt 1500 ]; do sleep 0.2; i=\$((i + 1)); done
  exit 0
fi
trap 'touch /lab/cni-done' EXIT
set -e
fail() { echo \"FAIL: \$*\" >&2; exit 1; }
pci=\$(basename \"\$(readlink -f /sys/class/net/eth1/device)\")
mac=\$(cat /sys/class/net/eth1/address)
before=\$(ip -d -j link show dev eth1 | python3 -c 'import json,sys; l=json.load(sys.stdin)[0]; print(l[\"ifname\"], l[\"mtu\"], l[\"address\"], l[\"operstate\"], sorted(l[\"flags\"]))')
conf='{\"cniVersion\": \"1.1.0\", \"name\": \"rail1\", \"type\": \"railyard-cni\", \"deviceID\": \"'\$pci'\",
  \"ipam\": {\"type\": \"host-local\", \"dataDir\": \"/tmp/cni-ipam\",
  \"ranges\": [[{\"subnet\": \"10.101.0.0/24\", \"rangeStart\": \"10.101.0.10\", \"rangeEnd\": \"10.101.0.20\"}]]}}'
# The node policy: this lab's state directory, and eth1 by name: rxe leaves with its netdev's
# move on 6.1, so for the ADDs after the first eth1 is a plain NIC, not a rail function.
echo '{\"stateDir\": \"/tmp/cni-state\", \"netdevs\": [\"eth1\"]}' >/tmp/cni-policy.json
export RAILYARD_CNI_POLICY=/tmp/cni-policy.json
cni() { echo \"\$conf\" | CNI_COMMAND=\$1 CNI_CONTAINERID=\$2 CNI_NETNS=/var/run/netns/pod CNI_IFNAME=net1 \
  CNI_PATH=/usr/lib/cni $bin/railyard-cni; }
back_as_itself() {
  ip link show dev net1 >/dev/null 2>&1 && fail \"net1 left in the host\"
  now=\$(ip -d -j link show dev eth1 | python3 -c 'import json,sys; l=json.load(sys.stdin)[0]; print(l[\"ifname\"], l[\"mtu\"], l[\"address\"], l[\"operstate\"], sorted(l[\"flags\"]))')
  # Carrier comes back after the PHY renegotiates: wait for it, bounded.
  i=0; while [ \"\$now\" != \"\$before\" ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i + 1));
    now=\$(ip -d -j link show dev eth1 | python3 -c 'import json,sys; l=json.load(sys.stdin)[0]; print(l[\"ifname\"], l[\"mtu\"], l[\"address\"], l[\"operstate\"], sorted(l[\"flags\"]))'); done
  [ \"\$now\" = \"\$before\" ] || fail \"eth1 is '\$now', was '\$before'\"
}

rdma system | grep -q 'netns shared' || fail \"rdma system: \$(rdma system)\"
$bin/cni_integration_tests 'RDMA netns mode is reported as the kernel has it' >/dev/null ||
  fail 'the plugin reads the RDMA netns mode wrong'
echo 'ok RDMA netns mode: shared, as the kernel says'

ip netns add pod
out=\$(cni ADD c1)
echo \"\$out\" | grep -q '\"address\":\"10.101.0.10/24\"' || fail \"ADD: \$out\"
echo \"\$out\" | grep -q \"\\\"pciID\\\":\\\"\$pci\\\"\" || fail \"ADD result has no pciID: \$out\"
ip -n pod -o addr show dev net1 | grep -q 'inet 10.101.0.10/24' || fail 'no address in the pod'
ip -n pod rule | grep -q 'from 10.101.0.10 lookup 101' || fail \"no SBR rule: \$(ip -n pod rule)\"
# e1000e renegotiates its link after the move (1-3 s): wait for carrier in the pod, bounded.
i=0; until [ \"\$(ip netns exec pod cat /sys/class/net/net1/carrier 2>/dev/null)\" = 1 ] || [ \$i -ge 100 ]; do
  sleep 0.1; i=\$((i + 1)); done
ip netns exec pod busybox ping -c 3 -W 5 10.101.0.2 >/dev/null || fail 'no traffic to the peer node on rail 1'
echo 'ok ADD: the NIC in the pod, SBR on table 101, traffic to the peer node'
cni DEL c1
back_as_itself
echo 'ok DEL: the NIC back as itself'

cni ADD c2 >/dev/null
ip netns del pod
cni DEL c2
back_as_itself
[ -z \"\$(ls /tmp/cni-state 2>/dev/null | grep -v lock)\" ] || fail \"state left: \$(ls /tmp/cni-state)\"
echo 'ok DEL after the pod namespace was deleted: the NIC back as itself'

# Exclusive mode: the VF's RDMA device must follow it into the pod; rxe cannot (EOPNOTSUPP).
# (Moving its netdev deleted rxe1, as rxe does on 6.1: put it back first.)
rdma link add rxe1 type rxe netdev eth1
rdma system set netns exclusive
ip netns add pod
if out=\$(cni ADD c3); then fail \"ADD in exclusive mode moved an rxe device: \$out\"; fi
echo \"\$out\" | grep -q 'rxe1' || fail \"the error does not name the RDMA device: \$out\"
ip -n pod link show dev net1 >/dev/null 2>&1 && fail 'net1 left in the pod'
back_as_itself
[ -z \"\$(ls /tmp/cni-ipam/rail1 2>/dev/null | grep '^10\\.')\" ] || fail 'IPAM allocation left'
echo \"ok exclusive mode: \$(echo \"\$out\" | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"msg\"])'); rolled back\"
ip netns del pod
rdma system set netns shared
"
