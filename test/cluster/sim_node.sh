# A second (or third) node for the validation Jobs as shipped, which run one rank per node and
# take all eight bundles of a node: the cluster has one node, so each other rank runs on this host
# in a network namespace of its own, cabled to the fabric as a node is, under a Node object of
# its name (so --apply judges it as it would a real node). Sourced after lib.sh.
#   sim_node_up <n>          namespace rysim<n>: a veth per rail (rys<n>r<K>) cabled to ryleaf<K>,
#                            address 10.(100+K).200.<n>/16 (far above what the pods' host-local
#                            ranges hand out), and the Node railyard-sim-<n>
#   sim_node_down <n>        all of it gone (idempotent)
#   sim_rank <n> <cmd...>    runs cmd in rysim<n>, in the background, output to $W/sim-<n>.log
#   sim_name <n>             the Node's name
#   pod_rail0_addr <pod>     the pod's rail 0 address from Multus's network-status: where a
#                            simulated rank reaches rank 0's rendezvous (it has no pod network)
# shellcheck shell=bash
sim_name() { echo "railyard-sim-$1"; }

sim_node_up() {
  local n=$1 k ns=rysim$1
  sim_node_down "$n"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  for ((k = 0; k < RAILS; k++)); do
    ip link add "rys${n}r$k" mtu 4092 type veth peer name "rys${n}r${k}p" mtu "$LEAF_MTU"
    ip link set "rys${n}r${k}p" master "ryleaf$k" up
    ip link set "rys${n}r$k" netns "$ns"
    ip -n "$ns" addr add "10.$((100 + k)).200.$n/16" dev "rys${n}r$k"
    ip -n "$ns" link set "rys${n}r$k" up
  done
  # No kubelet answers for it: the taint keeps the DaemonSets' pods off it, so that nothing
  # waits on it and its deletion leaves no pod behind.
  kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: $(sim_name "$n")
  labels: {app.kubernetes.io/managed-by: railyard-cluster-test}
spec:
  taints: [{key: railyard.io/simulated, effect: NoSchedule}]
YAML
}

sim_node_down() {
  local n=$1 k pidfile=$W/sim-$1.pid
  if [ -f "$pidfile" ]; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile"
  fi
  ip netns del "rysim$n" 2>/dev/null || true
  for ((k = 0; k < RAILS; k++)); do ip link del "rys${n}r${k}p" 2>/dev/null || true; done
  kubectl delete node "$(sim_name "$n")" --ignore-not-found >/dev/null 2>&1 || true
}

sim_rank() {
  local n=$1
  shift
  # Bounded: a rank that never hears from rank 0 must not hold the test past its Job.
  timeout 300 ip netns exec "rysim$n" "$@" >"$W/sim-$n.log" 2>&1 &
  echo $! >"$W/sim-$n.pid"
}

# sim_rank_wait <n>: the simulated rank's exit status (its log printed on failure's side).
sim_rank_wait() {
  local n=$1 rc=0
  wait "$(cat "$W/sim-$n.pid")" || rc=$?
  rm -f "$W/sim-$n.pid"
  return "$rc"
}

pod_rail0_addr() {
  k get pod "$1" -o jsonpath='{.metadata.annotations.k8s\.v1\.cni\.cncf\.io/network-status}' |
    python3 -c 'import json, sys
print(next(ip for n in json.load(sys.stdin) for ip in n.get("ips", []) if ip.startswith("10.100.")))'
}
