#!/usr/bin/env bash
# How fast a validation verdict becomes the cluster's state, in the one-node cluster
# (test/cluster/): `railyard-validate run --apply` on the node's fixture with rail 5's PF port
# DOWN (a failing rail: one DeviceTaintRule per rail 5 NIC device and the Node patched), then
# ACTIVE (a pass: the rules deleted, the Node validated=true). Per round, the validator's own
# clock from the verdict to the API server's last accepted write ("apply: ... done in N ms"), then
# the rules checked in the API right after it exits. ROUNDS of each (default 5); prints every
# round, the medians and the 1 s target; --json FILE writes them. No peer: no other validator
# writes DeviceTaintRules (README, "From finding to schedule").
#
#   bench/validate/apply.sh [ROUNDS] [--json FILE]
#
# Needs build-release (railyard-validate, railyard-dra-driver) and the cluster's programs
# (test/cluster/build.sh, cached under /var/cache). Brings the cluster up unless it is up, and
# leaves it as it found it.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=5 json=""
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=$2; shift 2 ;;
    *) rounds=$1; shift ;;
  esac
done
scripts/install-deps.sh >/dev/null
export RAILYARD_BIN=${RAILYARD_BIN:-$PWD/build-release/bin}
[ -x "$RAILYARD_BIN/railyard-validate" ] || { echo "no $RAILYARD_BIN/railyard-validate: build build-release first" >&2; exit 2; }
source test/cluster/lib.sh
bad=5
slices=$W/bench-apply-slices.json

state_file="" saved_state=""
cleanup() {
  [ -n "$saved_state" ] && echo "$saved_state" >"$state_file"
  kubectl delete devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate \
    --ignore-not-found >/dev/null 2>&1 || true
  [ -f "$slices" ] && kubectl delete -f "$slices" --ignore-not-found >/dev/null 2>&1 || true
  rm -f "$slices"
  kubectl label node "$NODE_NAME" railyard.io/validated- >/dev/null 2>&1 || true
  kubectl annotate node "$NODE_NAME" railyard.io/validated-at- railyard.io/validation-reason- >/dev/null 2>&1 || true
  cluster_down_if_started
}
trap cleanup EXIT

cluster_up_unless_up
kubectl apply -k test/cluster/overlay >/dev/null 2>&1 # the namespace, the ServiceAccount and its role
publish_node_slices "$slices"
state_file=$(rail_port_state "$bad" "$slices")
saved_state=$(cat "$state_file")
want=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
a = lambda d, n: next(iter(d["attributes"].get(n, {}).values()), None)
print(sum(1 for x in s["items"] for d in x["spec"]["devices"]
          if a(d, "railyard.io/rail") == int(sys.argv[2]) and a(d, "railyard.io/type") != "gpu"))' "$slices" "$bad")
rules() {
  kubectl get devicetaintrules.resource.k8s.io -l app.kubernetes.io/managed-by=railyard-validate -o name | wc -l
}
# <expected exit> <expected rules>: the validator's "done in N ms"
apply_ms() {
  local out rc=0
  out=$(host_validate_apply railyard-validate 2>&1) || rc=$?
  [ "$rc" = "$1" ] || { echo "$out" | tail -5 >&2; fail "railyard-validate exited $rc, not $1"; }
  [ "$(rules)" = "$2" ] || fail "$(rules) rules in the API right after the run, expected $2"
  sed -n 's/^apply: Node .* done in \([0-9]*\) ms$/\1/p' <<<"$out"
}

printf '%-6s %16s %16s\n' round "fail->rules" "pass->no rules"
fails=() passes=()
for ((i = 1; i <= rounds; i++)); do
  echo "1: DOWN" >"$state_file"
  f=$(apply_ms 1 "$want")
  echo "$saved_state" >"$state_file"
  p=$(apply_ms 0 0)
  fails+=("$f") passes+=("$p")
  printf '%-6s %13s ms %13s ms\n' "$i" "$f" "$p"
done
mf=$(median "${fails[@]}") mp=$(median "${passes[@]}")
printf '%-6s %13s ms %13s ms   (target: at most 1000 ms; %s rules of rail %s and the Node)\n' median "$mf" "$mp" "$want" "$bad"
[ -z "$json" ] || bench_json "$json" verdict_to_rules_ms pass_to_no_rules_ms 1000 "${fails[*]}" "${passes[*]}"
