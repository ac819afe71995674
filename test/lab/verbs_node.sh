# Sourced on each lab node by the verbs lab tests (verbs_bench_test.sh, verbs_ring3_test.sh):
# railyard-bench over verbs with every rank meeting at rank 0's rail-0 address, a check of rank
# 0's output, and a rank killed mid-run. Needs BIN (the build's bin directory) and WORLD (ranks).

# bench PORT ARGS...: each run meets at a rendezvous port of its own (runs follow each other,
# and a port still in TIME_WAIT on one node must not refuse the next run).
bench() {
  port=$1
  shift
  timeout 300 "$BIN/railyard-bench" --transport verbs --rank "$LAB_NODE" --world-size "$WORLD" \
    --rendezvous "10.100.0.1:$port" --timeout 60 -n 2 -w 1 "$@"
}

# expect PATTERN: rank 0 prints the table (every rank checks its own elements and fails on a
# wrong one), so only rank 0 greps /tmp/out.
expect() {
  [ "$LAB_NODE" != 0 ] || grep -q "$1" /tmp/out || {
    cat /tmp/out
    echo "missing: $1" >&2
    exit 1
  }
}

# killed_mid_run VICTIM PORT: rank VICTIM is killed mid-run, a long allreduce on both rails under
# way; every other rank must fail, naming it, well within its 60 s timeout. "Under way": the
# victim's queue pairs are ready to send (RTS) on both rails, then 2 s more. (Killed at a fixed
# 8 s after its start, a slow set-up under TCG could let it die before it had connected, and a
# neighbour would rightly wait out its whole timeout for that connection.)
killed_mid_run() {
  victim=$1
  args="--transport verbs --rank $LAB_NODE --world-size $WORLD --rendezvous 10.100.0.1:$2
    --timeout 60 allreduce --rails rxe0,rxe1 -b 1M -e 1M -n 100000 -w 0"
  if [ "$LAB_NODE" = "$victim" ]; then
    # shellcheck disable=SC2086 # $args is a list of flags
    "$BIN/railyard-bench" $args >/dev/null 2>&1 &
    pid=$!
    i=0
    until [ "$(rdma res show qp 2>/dev/null | grep -cE "state RTS .*pid $pid( |\$)")" -ge 2 ]; do
      i=$((i + 1))
      [ "$i" -lt 1200 ] || { echo "rank $victim: no queue pair ready after 120 s" >&2; exit 1; }
      sleep 0.1
    done
    sleep 2
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    echo "ok rank $victim killed mid-run"
    return
  fi
  t0=$(date +%s)
  # shellcheck disable=SC2086
  if "$BIN/railyard-bench" $args >/tmp/out 2>/tmp/err; then
    echo "rank $LAB_NODE finished although rank $victim was killed" >&2
    exit 1
  fi
  took=$(($(date +%s) - t0))
  grep -q "rank $victim" /tmp/err || {
    cat /tmp/err
    echo "the dead rank is not named" >&2
    exit 1
  }
  [ "$took" -lt 60 ] || {
    echo "named after $took s" >&2
    exit 1
  }
  echo "ok rank $victim killed mid-run is named after $took s: $(tail -1 /tmp/err)"
}
