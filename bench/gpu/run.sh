#!/usr/bin/env bash
# The GPU checks of railyard-bench, for a machine with a GPU (and no RDMA needed): the CUDA sum
# kernel per type, every element checked, beside the CPU's; the ring over TCP on CUDA memory
# (staged through pinned host memory), 2 ranks on loopback, every type checked; NCCL on one GPU.
# Prints the tables and a summary line per check; exit 1 when any check fails.
# Usage: bench/gpu/run.sh [BUILD_DIR]   (a build configured with CUDA, default build/)
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/bin/railyard-bench
[ -x "$bin" ] || { echo "no $bin: build first (scripts/build.sh railyard-bench)" >&2; exit 2; }
fail=0
check() { local name=$1; shift; if "$@"; then echo "== $name: ok"; else echo "== $name: FAILED"; fail=1; fi; }

for d in float half bfloat16 int32; do
  check "CUDA sum kernel, $d" "$bin" reduce --memory cuda -d "$d" -b 1M -e 1G -f 4 -n 20 -w 3 -c 1
  check "CPU sum, $d" "$bin" reduce --memory host -d "$d" -b 1M -e 256M -f 16 -n 5 -w 1 -c 1
done

port=$((29000 + RANDOM % 1000))
for d in float half bfloat16 int32; do
  args=(allreduce --memory cuda --world-size 2 --rendezvous 127.0.0.1:$port --rails 127.0.0.1,127.0.0.1
        -d "$d" -b 8 -e 256M -f 4 -n 10 -w 2 -c 1 --timeout 60)
  "$bin" --rank 1 "${args[@]}" >/dev/null 2>&1 &
  peer=$!
  check "ring over TCP on CUDA memory, 2 rails, $d" "$bin" --rank 0 "${args[@]}"
  wait $peer || fail=1
  port=$((port + 1))
done

check "NCCL, 1 rank" "$bin" allreduce --transport nccl --memory cuda --world-size 1 --rank 0 \
  --rails 127.0.0.1 -b 1M -e 1G -f 4 -n 20 -w 3 -c 1
exit $fail
