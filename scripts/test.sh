#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test through ctest: the Release build (what
# the image ships), a fuzz run, the image and the one-node cluster that runs it, then the
# ASan+UBSan build. Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

sanitize=1
[ "${1:-}" = "--no-sanitize" ] && sanitize=0
jobs=$(nproc)

echo "== format check"
scripts/format.sh --check

# CUDA and NCCL (from PyPI, by install-deps.sh) are required here: the GPU paths (CUDA memory,
# the sum kernel, the NCCL backend) must compile and link in every test run, never drop out of
# the build unseen.
gpu=(-DRAILYARD_WITH_CUDA=ON -DRAILYARD_WITH_NCCL=ON)

# Release: the configuration manifests/Dockerfile builds the shipped image with (-O3, where GCC
# warns differently than at -O2). The tests run on it, so what ships is what was tested.
echo "== build (Release, as the image)"
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release "${gpu[@]}" | grep '^-- railyard:'
cmake --build build-release -j "$jobs"
build-release/bin/railyard-bench --version
echo "== tests"
(cd build-release && ctest --output-on-failure -j "$jobs" -LE cluster)

echo "== fuzz: CNI inputs and peers' messages, ${FUZZ_SECONDS:-30} s each (libFuzzer, clang, ASan+UBSan)"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAILYARD_FUZZ=ON >/dev/null
cmake --build build-fuzz -j "$jobs" --target cni_input_fuzz peer_input_fuzz
for target in cni_input_fuzz:corpus peer_input_fuzz:peer-corpus; do
  name=${target%%:*} seeds=${target#*:}
  corpus=$(mktemp -d)
  cp "test/fuzz/$seeds"/* "$corpus/"
  "build-fuzz/bin/$name" -max_total_time="${FUZZ_SECONDS:-30}" -artifact_prefix=build-fuzz/ "$corpus" \
    2>"build-fuzz/$name.log" || { tail -40 "build-fuzz/$name.log"; rm -rf "$corpus"; exit 1; }
  rm -rf "$corpus"
  echo "$name: $(tail -1 "build-fuzz/$name.log")"
done

# The image users deploy, built offline around the Release binaries the tests above passed (not
# compiled a second time) and checked from inside, then run by the cluster tests: a one-node
# Kubernetes (test/cluster/; its programs are built once and cached under /var/cache).
echo "== image"
scripts/image.sh --clean --binaries build-release/bin --archive build-image/railyard.tar
echo "== cluster tests (test/cluster/)"
(cd build-release && ctest --output-on-failure -L cluster)

if [ "$sanitize" = 1 ]; then
  echo "== build (ASan+UBSan)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRAILYARD_SANITIZE=ON "${gpu[@]}" >/dev/null
  cmake --build build-asan -j "$jobs"
  echo "== tests under ASan+UBSan"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs" -LE 'lab|cluster')
fi
