#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest: the normal build, then
# the ASan+UBSan build. Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

sanitize=1
[ "${1:-}" = "--no-sanitize" ] && sanitize=0
jobs=$(nproc)

echo "== format check"
scripts/format.sh --check

echo "== build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"
echo "== tests"
(cd build && ctest --output-on-failure -j "$jobs")

if [ "$sanitize" = 1 ]; then
  echo "== build (ASan+UBSan)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRAILYARD_SANITIZE=ON >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== tests under ASan+UBSan"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs")
fi
