#!/usr/bin/env bash
# The README's main command. On a fresh machine: installs what is missing, builds, then
#  1. shows railyard's view of a simulated DGX H100-like node (railyard topo), and
#  2. runs a simulated two-node bring-up: two "nodes" (network namespaces) whose 8 VFs are veth
#     ends cabled rail to rail; railyard-cni attaches all 8 rails into a pod on each node;
#     railyard-validate checks the node and runs railyard-bench per rail and across rails between
#     the pods; rail 5 is deliberately degraded (rate-limited, and its cable counts symbol
#     errors), and the report names it by its bandwidth and by its counters; the bring-up checks
#     (ACS, hop links, MTU, port errors, flaps) run on the simulated hardware, and a timeline
#     plot of every rail's throughput during the all-rail run is written to build/demo-timeline.svg.
# Everything it creates is removed on exit, failure included. Needs root (namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh railyard railyard-fixture railyard-cni railyard-sbr railyard-bench railyard-validate

bin=$PWD/build/bin
work=$(mktemp -d)
tag="rydemo$$"
node_a="$tag-node-a" node_b="$tag-node-b" pod_a="$tag-pod-a" pod_b="$tag-pod-b"
mirror=
cleanup() {
  [ -n "$mirror" ] && kill "$mirror" 2>/dev/null
  for ns in "$pod_a" "$pod_b" "$node_a" "$node_b"; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

echo "== 1. railyard topo on a simulated DGX H100-like node (test/fixtures/dgx-h100.json)"
build/bin/railyard-fixture test/fixtures/dgx-h100.json "$work/dgx"
echo '{"selectors": {"linkTypes": ["infiniband"]}}' >"$work/ib-rails.json"
build/bin/railyard topo --sysfs-root "$work/dgx" --rails "$work/ib-rails.json" | sed -n '/^Bundles/,$p'

echo
echo "== 2. simulated bring-up: two nodes, 8 rails, a pod on each"
# One hardware description for both nodes: 8 GPU+NIC pairs, one VF each, the VF's netdev ryvf<k>.
build/bin/railyard-fixture test/fixtures/sim-node-8rails.json "$work/root"
echo '{}' >"$work/rails.json"
for ns in "$node_a" "$node_b" "$pod_a" "$pod_b"; do ip netns add "$ns"; done
for k in 0 1 2 3 4 5 6 7; do  # rail k: node A's VF k cabled to node B's VF k
  ip link add "ryvf$k" netns "$node_a" type veth peer name "ryvf$k" netns "$node_b"
done
export RAILYARD_SYSFS_ROOT="$work/root" RAILYARD_RAILS_FILE="$work/rails.json"
# Rail k's VF PCI address, as the device plugin would hand it to Multus: one discovery for both
# nodes (same hardware).
mapfile -t vf_pci < <(build/bin/railyard topo --json | python3 -c "
import json, sys
nics = sorted((n for n in json.load(sys.stdin)['nics'] if n['rail'] is not None), key=lambda n: n['rail'])
print('\n'.join(n['vfs'][0]['pci'] for n in nics))")
# Each simulated node's CNI node policy (cni/README.md): its own state directory.
policy() { echo "$work/cni-policy-$1.json"; }
attach() {  # node pod host-octet
  local node=$1 pod=$2 host=$3 k pci
  echo '{"stateDir": "'"$work/state-$node"'"}' >"$(policy "$node")"
  for k in 0 1 2 3 4 5 6 7; do
    pci=${vf_pci[$k]}
    printf '{"cniVersion":"1.0.0","name":"rails","type":"railyard-cni","deviceID":"%s","logLevel":"warning",
      "ipam":{"type":"static","addresses":[{"address":"10.10.%d.%d/24"}]}}' "$pci" "$k" "$host" |
      CNI_COMMAND=ADD CNI_CONTAINERID="$pod" CNI_NETNS="/var/run/netns/$pod" CNI_IFNAME="net$((k + 1))" \
        CNI_PATH=/usr/lib/cni RAILYARD_CNI_POLICY="$(policy "$node")" \
        ip netns exec "$node" "$bin/railyard-cni" >/dev/null
  done
  echo "   $pod: $(ip -n "$pod" -o -4 addr show | awk '$2 ~ /^net/ {printf "%s=%s ", $2, $4}')"
}
attach "$node_a" "$pod_a" 1
attach "$node_b" "$pod_b" 2
echo "   degrading rail 5: pod A's net6 limited to 200 Mbit/s (tc tbf)"
ip netns exec "$pod_a" tc qdisc add dev net6 root tbf rate 200mbit burst 64kb latency 100ms

# The simulated NICs' byte counters follow the pod's real veth traffic (~20 Hz), as a NIC counts
# what its rail moves: railyard-validate's timeline reads them.
mirror_counters() {
  while :; do
    k=0
    while read -r tx; do
      echo $((tx / 4)) >"$work/root/sys/class/infiniband/mlx5_$k/ports/1/counters/port_xmit_data"
      k=$((k + 1))
    done < <(ip netns exec "$pod_a" sh -c 'for k in 1 2 3 4 5 6 7 8; do cat /sys/class/net/net$k/statistics/tx_bytes; done')
    sleep 0.05
  done
}
mirror_counters &
mirror=$!

cat >"$work/validate.json" <<JSON
{"checks": {"maxPathClass": "PXB", "gpuDirect": "off", "ncclPath": false},
 "benchmark": {"command": "$PWD/scripts/demo-bench.sh", "args": ["-b", "1M", "-e", "4M", "-f", "4", "-n", "20", "-w", "1"],
               "largeMessageBytes": 4194304, "minFractionOfMedianRail": 0.5, "repeats": 1, "timeoutSeconds": 120,
               "env": {"DEMO_POD_A": "$pod_a", "DEMO_POD_B": "$pod_b", "DEMO_BENCH": "$bin/railyard-bench",
                       "DEMO_BAD_CABLE": "$work/root/sys/class/infiniband/mlx5_5/ports/1/counters/symbol_error"}}}
JSON
echo
echo "== 3. railyard-validate run (node checks, then railyard-bench per rail and across all 8)"
status=0
build/bin/railyard-validate run --config "$work/validate.json" --report "$work/report.json" \
  --node-patch "$work/patch.json" --timeline build/demo-timeline.svg || status=$?
kill "$mirror" 2>/dev/null
mirror=
echo
echo "   throughput per rail during the all-rail run (mean of the samples; plot: build/demo-timeline.svg):"
python3 - "$work/report.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["timeline"]
for r in t["rails"]:
    g = r["gbps"]
    print("     %-18s %6.3f GB/s mean, %6.3f peak, %d samples" % (r["name"], sum(g) / max(len(g), 1), max(g or [0]), len(g)))
PY
echo
echo "   exit status $status (0 pass, 1 fail, 2 could not run); kubectl node patch:"
python3 -c "import json; print('  ', json.load(open('$work/patch.json'))['metadata']['labels'])"

echo
echo "== 4. detaching every rail (railyard-cni DEL) and cleaning up"
for node in "$node_a" "$node_b"; do
  pod=$pod_a; [ "$node" = "$node_b" ] && pod=$pod_b
  for k in 0 1 2 3 4 5 6 7; do
    echo '{"cniVersion":"1.0.0","name":"rails","type":"railyard-cni","deviceID":"0000:00:00.0","logLevel":"warning"}' |
      CNI_COMMAND=DEL CNI_CONTAINERID="$pod" CNI_NETNS="/var/run/netns/$pod" CNI_IFNAME="net$((k + 1))" \
        CNI_PATH=/usr/lib/cni RAILYARD_CNI_POLICY="$(policy "$node")" \
        ip netns exec "$node" "$bin/railyard-cni" >/dev/null
  done
done
echo "   VFs back on node A: $(ip -n "$node_a" -o link show | grep -c ryvf) of 8"
python3 - "$work/report.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
slow = [r["name"] for r in rep["runs"] if not r["ok"] and r["name"] != "all rails"]
counted = [c["rail"] + " " + c["check"] for c in rep["checks"] if c["status"] == "fail"]
print("   named by its bandwidth:", ", ".join(slow) or "none")
print("   named by its counters: ", ", ".join(counted) or "none")
PY
