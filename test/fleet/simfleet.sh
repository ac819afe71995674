# A fleet on one machine, for railyard-validate fleet: NODES network namespaces with RAILS rails
# each, rail-optimised (rail k of every node on leaf k: a bridge in its own namespace), plus a
# management network for the rendezvous. Faults are injected with tc and by moving cables.
# Source it; every name carries a prefix unique to this shell, and fleet_down removes them all.
#
#   fleet_up NODES RAILS [LINE]       build it (addresses: rail k of node i is 192.168.(100+k).(i+1));
#                                     LINE (tc rate, default 200mbit) is every cable's line rate:
#                                     a real fleet is bound by its links, not by the CPUs that
#                                     here carry every node's traffic at once. FLEET_ARP=default:
#                                     rails keep the kernel's ARP settings (else as railyard-cni
#                                     sets them: arp_ignore=1, arp_announce=2)
#   fleet_mgmt_gateway                every node's default route via the management network, as on
#                                     a real GPU node, counting what leaves that way for a rail
#   fleet_mgmt_rail_packets NODE      packets the node sent to a rail address via management
#   fault_slow_nic NODE RAIL RATE     that node's rail cable runs at RATE, both ways
#   fault_bad_cable A B RAIL RATE     only traffic between A and B on RAIL is limited
#   fault_miswire NODE RAIL_A RAIL_B  the node's two rail cables swapped between the leaves
#   fleet_run BIN OUTDIR ARGS...      one railyard-validate fleet rank per node; rank 0's output
#                                     in OUTDIR/rank0.out (the others: rankI.out); rank 0's status
#   fleet_down                        remove everything (idempotent; call it from a trap)
#   fleet_test                        for a test script: $work, a folder removed with the fleet
#                                     on exit, and fail MSG (prints rank 0's output, exits 1)

FLEET_PREFIX="rf$$"
FLEET_NODES=0
FLEET_RAILS=0
FLEET_LINE=200mbit

fleet_ns() { echo "$FLEET_PREFIX-n$1"; }
fleet_leaf() { echo "$FLEET_PREFIX-l$1"; }
fleet_addr() { echo "192.168.$((100 + $2)).$(($1 + 1))"; }  # node rail

fleet_up() {
  FLEET_NODES=$1 FLEET_RAILS=$2 FLEET_LINE=${3:-200mbit}
  local mgmt="$FLEET_PREFIX-m" i k
  ip netns add "$mgmt"
  ip -n "$mgmt" link add br0 type bridge
  ip -n "$mgmt" link set br0 up
  for ((k = 0; k < FLEET_RAILS; k++)); do
    ip netns add "$(fleet_leaf "$k")"
    ip -n "$(fleet_leaf "$k")" link add br0 type bridge
    ip -n "$(fleet_leaf "$k")" link set br0 up
  done
  for ((i = 0; i < FLEET_NODES; i++)); do
    local ns; ns=$(fleet_ns "$i")
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip link add eth0 netns "$ns" type veth peer name "n${i}m" netns "$mgmt"
    ip -n "$mgmt" link set "n${i}m" master br0 up
    ip -n "$ns" addr add "10.99.0.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    for ((k = 0; k < FLEET_RAILS; k++)); do
      ip link add "rail$k" netns "$ns" type veth peer name "n${i}r${k}" netns "$(fleet_leaf "$k")"
      ip -n "$(fleet_leaf "$k")" link set "n${i}r${k}" master br0 up
      # As railyard-cni sets a rail in a pod: a NIC answers ARP only for its own address.
      # (railyard's rail sockets are bound to their NIC, so a miswire shows without it too.)
      [[ ${FLEET_ARP:-rail} == default ]] ||
        ip netns exec "$ns" sysctl -qw "net.ipv4.conf.rail$k.arp_ignore=1" \
          "net.ipv4.conf.rail$k.arp_announce=2" "net.ipv4.conf.rail$k.rp_filter=0"
      ip -n "$ns" addr add "$(fleet_addr "$i" "$k")/24" dev "rail$k"
      ip -n "$ns" link set "rail$k" up
      fleet_cable_rate "$i" "$k" "$FLEET_LINE"
    done
  done
}

# Both ends of node's rail cable send at most RATE. A deep queue (limit) instead of drops: a
# drop costs TCP a 200 ms retransmit timeout, which on short tests reads as half the bandwidth.
# The 32 KB bucket (the least tbf takes at this rate and HZ) lets transfers of a few tens of KB
# through above the rate: a bisection ring's per-rail slices at small sizes read high.
fleet_cable_rate() {
  local node=$1 rail=$2 rate=$3
  ip netns exec "$(fleet_ns "$node")" tc qdisc replace dev "rail$rail" root tbf rate "$rate" \
    burst 32kb limit 4mb
  ip netns exec "$(fleet_leaf "$rail")" tc qdisc replace dev "n${node}r${rail}" root tbf \
    rate "$rate" burst 32kb limit 4mb
}

fleet_mgmt_gateway() {
  local i ns
  ip -n "$FLEET_PREFIX-m" addr add 10.99.0.254/24 dev br0
  for ((i = 0; i < FLEET_NODES; i++)); do
    ns=$(fleet_ns "$i")
    ip -n "$ns" route add default via 10.99.0.254
    ip netns exec "$ns" iptables -w -A OUTPUT -o eth0 -d 192.168.0.0/16 -j ACCEPT
  done
}

fleet_mgmt_rail_packets() {
  ip netns exec "$(fleet_ns "$1")" iptables -w -L OUTPUT -v -x -n | awk '$7 == "eth0" {print $1}'
}

fault_slow_nic() { fleet_cable_rate "$1" "$2" "$3"; }

fault_bad_cable() {
  local a=$1 b=$2 rail=$3 rate=$4 x y
  for x in "$a:$b" "$b:$a"; do
    local from=${x%:*} to=${x#*:}
    local ns; ns=$(fleet_ns "$from")
    ip netns exec "$ns" tc qdisc replace dev "rail$rail" root handle 1: htb default 1 r2q 100
    ip netns exec "$ns" tc class add dev "rail$rail" parent 1: classid 1:1 htb rate "$FLEET_LINE"
    ip netns exec "$ns" tc class add dev "rail$rail" parent 1: classid 1:2 htb rate "$rate"
    y=$(fleet_addr "$to" "$rail")
    ip netns exec "$ns" tc filter add dev "rail$rail" parent 1: protocol ip u32 \
      match ip dst "$y/32" flowid 1:2
  done
}

fault_miswire() {
  local node=$1 ra=$2 rb=$3
  ip -n "$(fleet_leaf "$ra")" link set "n${node}r${ra}" netns "$(fleet_leaf "$rb")"
  ip -n "$(fleet_leaf "$rb")" link set "n${node}r${rb}" netns "$(fleet_leaf "$ra")"
  ip -n "$(fleet_leaf "$rb")" link set "n${node}r${ra}" master br0 up
  ip -n "$(fleet_leaf "$ra")" link set "n${node}r${rb}" master br0 up
}

fleet_rails_of() {
  local i=$1 k out=""
  for ((k = 0; k < FLEET_RAILS; k++)); do out+="${out:+,}$(fleet_addr "$i" "$k")"; done
  echo "$out"
}

fleet_run() {
  local bin=$1 outdir=$2 i pids=() status=0
  shift 2
  local port=$((20000 + RANDOM % 20000))
  for ((i = FLEET_NODES - 1; i >= 0; i--)); do
    ip netns exec "$(fleet_ns "$i")" "$bin/railyard-validate" fleet --rank "$i" \
      --world-size "$FLEET_NODES" --rendezvous "10.99.0.1:$port" --rails "$(fleet_rails_of "$i")" \
      --node-name "node-$i" "$@" >"$outdir/rank$i.out" 2>&1 &
    pids[i]=$!
  done
  for ((i = 1; i < FLEET_NODES; i++)); do wait "${pids[i]}" || echo "rank $i exited $?" >&2; done
  wait "${pids[0]}" || status=$?
  return "$status"
}

fleet_down() {
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep "^$FLEET_PREFIX-"); do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  return 0
}

fleet_test() {
  work=$(mktemp -d)
  trap 'fleet_down; rm -rf "$work"' EXIT
}

fail() {
  echo "FAIL: $*" >&2
  cat "$work/rank0.out" >&2 || true
  exit 1
}
