#!/usr/bin/env bash
# Two pods, each with a bundle and one VF per rail through the 8 rail NADs (Multus, railyard-cni):
# net1..net8 on the right rails with their SBR tables, and traffic between the pods on every
# rail, over that rail's leaf bridge and no other.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

leaf_rx() { # packets rail $1's leaf took in from its VFs' peers
  local j n=0
  for ((j = 0; j < VFS_PER_RAIL; j++)); do n=$((n + $(cat "/sys/class/net/ryr${1}v${j}p/statistics/rx_packets"))); done
  echo "$n"
}
for p in rails-a rails-b; do rail_pod "$p" | kubectl apply -f - >/dev/null; done
for p in rails-a rails-b; do
  k wait --for=condition=Ready "pod/$p" --timeout 120s >/dev/null ||
    { k describe pod "$p" | tail -20; fail "pod $p not Ready"; }
done
for ((r = 0; r < RAILS; r++)); do
  n=net$((r + 1)) table=$((100 + r))
  for p in rails-a rails-b; do
    addr=$(rail_addr "$p" "$r")
    case $addr in 10.$((100 + r)).*) ;; *) fail "$p $n has '$addr', not an address of rail $r (10.$((100 + r)).0.0/16)" ;; esac
    rules=$(in_pod "$p" ip rule show)
    grep -q "from $addr lookup $table" <<<"$rules" || fail "$p: no SBR rule 'from $addr lookup $table': $rules"
    routes=$(in_pod "$p" ip route show table "$table")
    grep -q "dev $n" <<<"$routes" || fail "$p: table $table has no route via $n: $routes"
  done
  # The VFs in the pods are rail r's: what they send enters rail r's leaf by their peers.
  before=$(leaf_rx "$r")
  b=$(rail_addr rails-b "$r")
  in_pod rails-a ping -c 3 -i 0.2 -W 2 -I "$(rail_addr rails-a "$r")" "$b" >/dev/null ||
    fail "no traffic on rail $r: rails-a $n -> rails-b $b"
  after=$(leaf_rx "$r")
  [ "$after" -ge $((before + 6)) ] || fail "rail $r's pings did not cross ryleaf$r ($before -> $after packets)"
done
echo "rails-a, as the pod sees its rails:"
in_pod rails-a ip -d addr show dev net1 | sed 's/^/  /'
for ((r = 0; r < RAILS; r++)); do
  in_pod rails-a ip rule show | grep "lookup $((100 + r))" | sed "s/^/  net$((r + 1)): /"
done
echo "ok: 2 pods x $RAILS rails, addresses and SBR per rail, pings on every rail over its own leaf"
