#!/usr/bin/env bash
# railyard-device-plugin on a large simulated node (8 GPUs, 8 NICs, 64 VFs each:
# test/fixtures/scale-8x8x64.json) against a kubelet stand-in: RSS once serving (target
# < 15 MiB), Allocate p50/p99 over CALLS calls (target p99 < 1 ms), and kubelet.sock recreation
# to every resource registered again (target < 1 s). Usage: bench/deviceplugin/run.sh [CALLS]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh railyard-fixture railyard-device-plugin railyard-deviceplugin-bench
work=$(mktemp -d)
# Device-info files go to /var/run on a node, a tmpfs: so here too.
devinfo=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$work" "$devinfo"' EXIT
build/bin/railyard-fixture test/fixtures/scale-8x8x64.json "$work/root"
echo "railyard-device-plugin, scale-8x8x64 fixture, ${1:-10000} Allocate calls"
build/bin/railyard-deviceplugin-bench --sysfs-root "$work/root" --calls "${1:-10000}" \
  --devinfo-dir "$devinfo" --json "$work/result.json"
echo "(no peer runs here: sriov-network-device-plugin is not packaged in Debian; the targets are absolute)"
