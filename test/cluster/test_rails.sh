#!/usr/bin/env bash
# Two pods, each with a bundle and one VF per rail through the 8 rail NADs (Multus, railyard-cni):
# net1..net8 on the right rails with their SBR tables, and traffic between the pods on every
# rail, over that rail's leaf bridge and no other.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

for p in rails-a rails-b; do rail_pod "$p" | kubectl apply -f - >/dev/null; done
for p in rails-a rails-b; do
  k wait --for=condition=Ready "pod/$p" --timeout 120s >/dev/null ||
    { k describe pod "$p" | tail -20; fail "pod $p not Ready"; }
done
check_rails rails-a rails-b
echo "rails-a, as the pod sees its rails:"
in_pod rails-a ip -d addr show dev net1 | sed 's/^/  /'
for ((r = 0; r < RAILS; r++)); do
  in_pod rails-a ip rule show | grep "lookup $((100 + r))" | sed "s/^/  net$((r + 1)): /"
done
echo "ok: 2 pods x $RAILS rails, addresses and SBR per rail, pings on every rail over its own leaf"
