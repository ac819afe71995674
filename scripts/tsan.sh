#!/usr/bin/env bash
# ThreadSanitizer over the multithreaded daemons' tests: the device plugin (gRPC threads, the
# metrics thread, the main loop), the DRA driver (the kubelet plugin beside the publisher), the
# fleet and the ranks' rendezvous (admission threads). Not in scripts/test.sh: it does not fit
# CI's time budget (about 10 min to build, 5 to run on 2 cores); run it by hand after changing
# threads. Usage: scripts/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAILYARD_TSAN=ON \
  -DRAILYARD_WITH_CUDA=OFF -DRAILYARD_WITH_NCCL=OFF >/dev/null
cmake --build build-tsan -j "$(nproc)" --target deviceplugin_tests dra_tests validate_tests \
  rdma_unit_tests railyard-device-plugin railyard-validate
cd build-tsan
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j "$(nproc)" -R '^(deviceplugin|dra|validate:fleet|rdma:)'
