#!/bin/sh
# One lab node's part of bench/lab/run.sh: on rail 0 (rxe0), per round and size, perftest's
# ib_write_bw (node 1 writes to node 0; it busy-polls, having no event mode), perftest's ib_send_bw
# --events (sleeps on the completion channel, as railyard does when idle; SENDs, not writes),
# then railyard-bench p2p (its 1->0 direction); prints "RESULT tool size GB/s" lines.
# Usage: node.sh BIN_DIR ROUNDS
# RAILYARD_BENCH_ARGS: extra railyard-bench flags (--slots N, --slot-size S) to try variants.
set -eu
bin=$1 rounds=$2
sizes="65536:200 1048576:20"  # size:iterations, a few seconds each under TCG
port=29700
perftest() {  # NAME TOOL SIZE ITERS [FLAGS]: the server on node 0; node 1's client retries until it listens
  name=$1 tool=$2 size=$3 iters=$4
  shift 4
  if [ "$LAB_NODE" = 0 ]; then
    timeout 120 "$tool" -d rxe0 -x 1 -F -s "$size" -n "$iters" -p $port "$@" >/dev/null
  else
    i=0
    until timeout 120 "$tool" -d rxe0 -x 1 -F -s "$size" -n "$iters" -p $port "$@" \
        10.100.0.1 >/tmp/perf 2>&1; do
      i=$((i + 1)); [ $i -lt 50 ] || { cat /tmp/perf >&2; exit 1; }; sleep 0.2
    done
    # Its average in MiB/s (2 decimals; --report_gbits' 0.01 Gb/s steps are 4-8% at these rates).
    awk -v t="$name" -v s="$size" '$1 == s { printf "RESULT %s %s %.6f\n", t, s, $4 * 1048576 / 1e9 }' /tmp/perf
  fi
  port=$((port + 1))
}
r=0
while [ $r -lt "$rounds" ]; do
  for si in $sizes; do
    size=${si%%:*} iters=${si##*:}
    perftest ib_write_bw ib_write_bw "$size" "$iters"
    perftest ib_send_bw+events ib_send_bw "$size" "$iters" --events
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
