# The two-namespace, two-rail set-up the allreduce benches share (sourced): namespaces $1 and $2,
# veth rails rail0 and rail1 between them, 10.77.0.1/.2 and 10.78.0.1/.2, loopback up.
# shellcheck shell=bash
make_rails() { # <namespace a> <namespace b>
  local a=$1 b=$2 k
  ip netns add "$a"
  ip netns add "$b"
  for k in 0 1; do
    ip link add "rail$k" netns "$a" type veth peer name "rail$k" netns "$b"
    ip -n "$a" addr add "10.7$((7 + k)).0.1/24" dev "rail$k"
    ip -n "$b" addr add "10.7$((7 + k)).0.2/24" dev "rail$k"
    ip -n "$a" link set "rail$k" up
    ip -n "$b" link set "rail$k" up
  done
  ip -n "$a" link set lo up
  ip -n "$b" link set lo up
}
