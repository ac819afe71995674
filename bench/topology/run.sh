#!/usr/bin/env bash
# Discovery time of a large node: 8 GPUs, 8 NICs, 64 VFs per NIC (test/fixtures/scale-8x8x64.json),
# median over runs. Target: under 20 ms. Usage: bench/topology/run.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh railyard-fixture railyard-topo-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/bin/railyard-fixture test/fixtures/scale-8x8x64.json "$work"
runs=${1:-50}
echo "railyard discovery (cold page cache is not measured: one warm-up run first)"
build/bin/railyard-topo-bench --sysfs-root "$work" --runs "$runs"
median=$(build/bin/railyard-topo-bench --sysfs-root "$work" --runs "$runs" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
python3 - "$median" <<'PY'
import sys
m = float(sys.argv[1])
print(f"target: median under 20 ms -> {'met' if m < 20 else 'MISSED'} ({m:.2f} ms, {20/m:.1f}x headroom)")
PY
