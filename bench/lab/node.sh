#!/bin/sh
# One lab node's part of bench/lab/run.sh: on rail 0 (rxe0), per round and size, perftest's
# ib_write_bw (node 1 writes to node 0) and railyard-bench p2p (its 1->0 direction, the same
# writes); prints "RESULT tool size GB/s" lines. Usage: node.sh BIN_DIR ROUNDS
# RAILYARD_BENCH_ARGS: extra railyard-bench flags (--slots N, --slot-size S) to try variants.
set -eu
bin=$1 rounds=$2
sizes="65536:200 1048576:20"  # size:iterations, a few seconds each under TCG
port=29700
r=0
while [ $r -lt "$rounds" ]; do
  for si in $sizes; do
    size=${si%%:*} iters=${si##*:}
    # perftest: the server on node 0; the client on node 1 retries until the server listens.
    if [ "$LAB_NODE" = 0 ]; then
      timeout 120 ib_write_bw -d rxe0 -x 1 -F -s "$size" -n "$iters" --report_gbits -p $port >/dev/null
    else
      i=0
      until timeout 120 ib_write_bw -d rxe0 -x 1 -F -s "$size" -n "$iters" --report_gbits -p $port \
          10.100.0.1 >/tmp/perf 2>&1; do
        i=$((i + 1)); [ $i -lt 50 ] || { cat /tmp/perf >&2; exit 1; }; sleep 0.2
      done
      awk -v s="$size" '$1 == s { printf "RESULT ib_write_bw %s %.6f\n", s, $4 / 8 }' /tmp/perf
    fi
    port=$((port + 1))
    "$bin/railyard-bench" p2p --transport verbs --rank "$LAB_NODE" --world-size 2 --timeout 120 \
      --rendezvous 10.100.0.1:$port --rails rxe0 -b "$size" -e "$size" -n "$iters" -w 2 -c 0 \
      --json /tmp/p2p.json ${RAILYARD_BENCH_ARGS:-} >/dev/null
    if [ "$LAB_NODE" = 0 ]; then
      python3 -c "import json; r = json.load(open('/tmp/p2p.json'))['rows'][0]; print('RESULT railyard', r['size'], '%.6f' % r['gbps_1to0'])"
    fi
    port=$((port + 1))
  done
  r=$((r + 1))
done
