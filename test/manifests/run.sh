#!/usr/bin/env bash
# ctest entry: the manifest checks (check_manifests.mjs) on a simulated 8-rail node.
# Usage: run.sh REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/railyard-fixture" "$repo/test/fixtures/sim-node-8rails.json" "$work/root"
exec node "$repo/test/manifests/check_manifests.mjs" "$repo" "$bin" "$work/root" "$work/work"
