#!/usr/bin/env bash
# ctest (label lab): railyard-validate run on a lab node against the peer node over verbs, one
# rail degraded with tc inside the VM: the verdict is fail (exit 1) and that rail, only that
# rail, is named. Usage: REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
cd "$repo"
exec python3 lab/lab.py run --nodes 2 --rails 2 --timeout 600 -- sh test/lab/validate_node.sh "$bin" /tmp/validate
