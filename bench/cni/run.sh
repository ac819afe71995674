#!/usr/bin/env bash
# Per-rail ADD+DEL and the 8-rail total: railyard-cni against the reference chain host-device +
# sbr (what operators run today without SR-IOV specifics), the same host-local IPAM, the same veth
# rails, one run, medians and the ratio. Target: railyard-cni at least 5x faster.
# Usage: bench/cni/run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh railyard railyard-cni railyard-fixture

work=$(mktemp -d)
node="rybench-cninode-$$"
pod="rybench-cnipod-$$"
cleanup() {
  ip netns del "$pod" 2>/dev/null || true
  ip netns del "$node" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$node"
ip netns add "$pod"
build/bin/railyard-fixture test/fixtures/sim-node-8rails.json "$work/root"
echo '{}' >"$work/rails.json"
for k in 0 1 2 3 4 5 6 7; do
  ip link add "ryvf$k" netns "$node" type veth peer name "ryvfx$k" netns "$node"
  ip -n "$node" link set "ryvf$k" up
done
ip netns exec "$node" python3 bench/cni/bench.py --pod "$pod" --work "$work" \
  --ours build/bin/railyard-cni --rounds "${1:-20}"
