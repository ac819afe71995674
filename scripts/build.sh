#!/usr/bin/env bash
# Installs what is missing and builds the given targets (all when none) in build/ (RelWithDebInfo).
# The demo and the benchmarks start with it. Usage: scripts/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}" >/dev/null
