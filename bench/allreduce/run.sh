#!/usr/bin/env bash
# 2 ranks in two network namespaces over one veth rail and over two: railyard-bench against
# OpenMPI's MPI_Allreduce (btl tcp) and Gloo's ring allreduce, same sizes, interleaved rounds,
# medians and busbw ratios, with iperf3's single-stream throughput on the same link as the
# physical reference (and iperf3 --bidir, both ways at once, which is what an allreduce does).
# Targets at >= 16 MiB: >= 1.3x OpenMPI, >= 0.8x iperf3, >= 0.9x iperf3 --bidir (and of the
# ceiling that 2 shared cores leave above it, printed beside it). --bidir runs right after
# railyard-bench in each round, and each round's ratio is printed: the machine drifts.
# Usage: bench/allreduce/run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh railyard-bench railyard-validate
work=$(mktemp -d)
a="ryab-a-$$" b="ryab-b-$$"
cleanup() { ip netns del "$a" 2>/dev/null || true; ip netns del "$b" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
mpicc -O2 -o "$work/mpi_allreduce" bench/allreduce/mpi_allreduce.c
g++ -O2 -std=c++17 -o "$work/gloo_allreduce" bench/allreduce/gloo_allreduce.cpp -lgloo -lpthread
source bench/allreduce/rails.sh
make_rails "$a" "$b"
# OpenMPI starts its daemon on the "remote host" (namespace b) through this agent, so its own
# traffic crosses the rails too (PMIx cannot reach a rank in another namespace otherwise).
cat >"$work/nsrsh" <<SH
#!/bin/sh
shift_host=\$1; shift
exec ip netns exec $b sh -c "\$*"
SH
chmod +x "$work/nsrsh"
mkdir -p bench/allreduce/plots
python3 bench/allreduce/bench.py --a "$a" --b "$b" --work "$work" --bin build/bin --rounds "${1:-3}" \
  --plots bench/allreduce/plots
