#!/usr/bin/env bash
# ctest (label lab): railyard-device-plugin on a lab node's live sysfs (deviceplugin_lab_test.cpp
# runs inside the VM). Usage: REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
cd "$repo"
exec python3 lab/lab.py run --nodes 1 --rails 2 --timeout 300 -- "$bin/deviceplugin_lab_tests"
