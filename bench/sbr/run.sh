#!/usr/bin/env bash
# ADD then DEL of source-based routing on 8 rails of one pod, railyard-sbr against Debian's
# reference sbr, same inputs, same namespaces, one run; medians and the ratio.
# Target: railyard-sbr at least 5x faster. Usage: bench/sbr/run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh railyard-sbr

pod="rybench-sbr-$$"
peer="rybench-sbrpeer-$$"
cleanup() { ip netns del "$pod" 2>/dev/null || true; ip netns del "$peer" 2>/dev/null || true; }
trap cleanup EXIT
ip netns add "$pod"
ip netns add "$peer"
for k in 0 1 2 3 4 5 6 7; do
  ip link add "net$((k + 1))" netns "$pod" type veth peer name "p$k" netns "$peer"
  ip -n "$pod" link set "net$((k + 1))" up
  ip -n "$peer" link set "p$k" up
  ip -n "$peer" addr add "10.10.$k.1/24" dev "p$k"
done
python3 bench/sbr/bench.py --pod "$pod" --ours build/bin/railyard-sbr --reference /usr/lib/cni/sbr \
  --rounds "${1:-30}"
