#!/usr/bin/env bash
# Per-rail ADD+DEL through libcni (the library container runtimes and Multus use), on the 512-VF
# fixture node (scale-8x8x64: 8 rails, 64 VFs each): railyard-cni against the chain host-device +
# sbr (what operators run without SR-IOV specifics), the same host-local IPAM, the same veth VF
# stand-ins, interleaved in one run. The floor both pay is measured in the same run: the two
# netns moves done with `ip link`, and host-local ADD+DEL exec'd alone, each less what starting
# two processes from the script costs (/bin/true, twice). Prints medians, each side's time above
# the floor, and both ratios.
# Usage: bench/cni/run.sh [ROUNDS] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh railyard railyard-cni railyard-fixture libcni-driver

# The fixture on tmpfs: sysfs is in memory on a node, and a fixture on disk would make every
# readlink a block read on a cold cache.
work=$(mktemp -d -p /dev/shm)
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
build/bin/railyard-fixture test/fixtures/scale-8x8x64.json "$work/root"
echo '{}' >"$work/rails.json"
ip netns exec "$node" python3 bench/cni/bench.py --pod "$pod" --work "$work" --bin "$PWD/build/bin" "$@"
