#!/usr/bin/env bash
# railyard-bench p2p over verbs against perftest's ib_write_bw on the same soft-RoCE rail of two
# lab nodes (lab/), in one run: medians of ROUNDS rounds at 64 KiB and 1 MiB, and the ratio
# (goal >= 0.9x). Soft-RoCE under TCG moves a few MB/s: the ratio compares the two programs on
# one RDMA stack, not the hardware. Usage: bench/lab/run.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build.sh railyard-bench
rounds=${1:-3}
echo "railyard-bench p2p vs ib_write_bw and ib_send_bw --events, lab rail 0 (rxe0 over e1000e), node 1 -> node 0, $rounds rounds"
python3 lab/lab.py run --nodes 2 --rails 1 --timeout 1800 -- \
  sh bench/lab/node.sh "$PWD/build/bin" "$rounds" | python3 bench/lab/summary.py
