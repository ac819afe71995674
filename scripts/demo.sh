#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, and shows railyard's view of a
# simulated DGX H100-like node (a sysfs fixture; nothing on this machine is touched).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target railyard railyard-fixture

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build/bin/railyard-fixture test/fixtures/dgx-h100.json "$work/node"
cat >"$work/rails.json" <<'JSON'
{"selectors": {"linkTypes": ["infiniband"]}}
JSON

echo "== railyard topo on a simulated DGX H100-like node (test/fixtures/dgx-h100.json)"
echo "   rails: InfiniBand NICs only ($work/rails.json), so the Ethernet storage NICs are left out"
echo
build/bin/railyard topo --sysfs-root "$work/node" --rails "$work/rails.json"
echo
echo "== the same as JSON (first bundle):"
build/bin/railyard topo --sysfs-root "$work/node" --rails "$work/rails.json" --json |
  python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["bundles"][0], indent=2))'
echo
echo "== this machine:"
build/bin/railyard topo
