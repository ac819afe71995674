#!/usr/bin/env bash
# The test pods deleted: every VF back on the host under its own name, no railyard-cni state
# file, no address lease left in host-local's files, no Multus cache entry.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

k delete pods -l app.kubernetes.io/name=railyard-cluster-test --wait=true --timeout 90s >/dev/null
total=$((RAILS * VFS_PER_RAIL))
until_ok 30 "all $total VFs back on the host" 'test "$(host_vfs)" = "$total"'
state=/var/lib/cni/railyard
left=$(grep -ls 'ryr[0-9]*v[0-9]' "$state"/* 2>/dev/null || true)
[ -z "$left" ] || fail "railyard-cni state files left: $left"
leases=$(find "$W/ipam" -type f -name '10.*' 2>/dev/null || true)
[ -z "$leases" ] || fail "IPAM leases left: $leases"
cache=$(find "$W/multus" -type f 2>/dev/null | head -5)
[ -z "$cache" ] || fail "Multus cache entries left: $cache"
echo "ok: $total/$total VFs on the host, no state file, no lease, no Multus cache entry"
