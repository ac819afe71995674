#!/usr/bin/env bash
# The benchmark command railyard-validate runs in the simulated bring-up (scripts/demo.sh): it
# starts railyard-bench rank 1 in pod B and rank 0 in pod A, over the rails NCCL_IB_HCA names
# ("=mlx5_3:1" -> rail 3 -> net4; a list -> every rail), and prints rank 0's table.
# Needs: DEMO_POD_A, DEMO_POD_B (namespace names), DEMO_BENCH (the binary); extra args pass through.
# DEMO_BAD_CABLE: a fixture counter file that grows by 37 symbol errors whenever rail 5 runs (the
# degraded rail's cable, as a NIC would count it).
set -euo pipefail
hca=${NCCL_IB_HCA#=}
rails=() ifs=()
IFS=',' read -ra entries <<<"$hca"
for e in "${entries[@]}"; do
  dev=${e%%:*}
  k=${dev#mlx5_}
  rails+=("$k")
  ifs+=("net$((k + 1))")
done
rail_list=$(IFS=,; echo "${ifs[*]}")
if [[ " ${rails[*]} " == *" 5 "* && -n "${DEMO_BAD_CABLE:-}" ]]; then
  echo $(($(cat "$DEMO_BAD_CABLE") + 37)) >"$DEMO_BAD_CABLE"
fi
first=${rails[0]}
port=$((29500 + ${#rails[@]} * 10 + first))
rv="10.10.$first.1:$port"
ip netns exec "$DEMO_POD_B" "$DEMO_BENCH" allreduce --rank 1 --world-size 2 --rendezvous "$rv" \
  --rails "$rail_list" --timeout 30 "$@" >/dev/null &
peer=$!
status=0
ip netns exec "$DEMO_POD_A" "$DEMO_BENCH" allreduce --rank 0 --world-size 2 --rendezvous "$rv" \
  --rails "$rail_list" --timeout 30 "$@" || status=$?
wait "$peer" || true
exit "$status"
