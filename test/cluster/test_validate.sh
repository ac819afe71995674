#!/usr/bin/env bash
# The validation Indexed Job between its two pods on the node names a rail degraded with tc
# (rail 5's leaf ports limited to 200 Mbit/s), and so does the fleet Job. The degradation and
# both Jobs are removed afterwards, and every VF comes back to the host.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
bad=5
ports() { for ((j = 0; j < VFS_PER_RAIL; j++)); do echo "ryr${bad}v${j}p"; done; }
cleanup() {
  for p in $(ports); do tc qdisc del dev "$p" root 2>/dev/null || true; done
  kubectl delete -k "$here/overlay-validate" --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  kubectl delete -k "$here/overlay-fleet" --ignore-not-found --wait=true --timeout 60s >/dev/null 2>&1 || true
  k delete pods -l batch.kubernetes.io/job-name --wait=true --timeout 60s >/dev/null 2>&1 || true
  k delete secret railyard-validate-token --ignore-not-found >/dev/null 2>&1 || true
  rm -rf "$W/fleet"
}
trap cleanup EXIT
# The ranks' shared secret, made for this run as manifests/README.md tells users to.
k create secret generic railyard-validate-token \
  --from-literal=token="$(head -c 32 /dev/urandom | base64 -w0)" >/dev/null
for p in $(ports); do tc qdisc add dev "$p" root tbf rate 200mbit burst 64kb latency 100ms; done

finished() { # <job>: Complete or Failed
  k get job "$1" -o jsonpath='{range .status.conditions[*]}{.type}={.status}{"\n"}{end}' |
    grep -Eq '^(Complete|Failed)=True$'
}

kubectl apply -k "$here/overlay-validate" >/dev/null
until_ok 300 "the validation Job to finish" finished railyard-validate
log=$(k logs -l batch.kubernetes.io/job-name=railyard-validate --tail -1 --prefix 2>&1)
# Each rank's verdict and benchmark table (rank 0 measures; rank 1's runs are judged by exit).
echo "$log" | grep -E 'railyard-validate: |FAIL|GB/s|measured by rank 0' | sed 's/^/  /' | head -60
grep -q "FAIL  rail $bad (mlx5_$bad)" <<<"$log" || fail "the validation did not name rail $bad"
others=$(echo "$log" | grep -E 'FAIL  rail [0-9]+ ' | grep -v "rail $bad " || true)
[ -z "$others" ] || fail "the validation named other rails too: $others"
echo "ok: the validation Job named rail $bad"

kubectl apply -k "$here/overlay-fleet" >/dev/null
until_ok 300 "the fleet Job to finish" finished railyard-validate-fleet
report=$W/fleet/fleet.json
[ -f "$report" ] || fail "the fleet Job wrote no report: $(k logs -l batch.kubernetes.io/job-name=railyard-validate-fleet --tail 20 2>&1)"
python3 - "$report" "$bad" <<'PY' || fail "the fleet report did not name rail $bad"
import json, sys
rep, bad = json.load(open(sys.argv[1])), int(sys.argv[2])
for c in rep["culprits"]:
    print("  culprit: %s on %s, rail %s: %s" % (c["kind"], c.get("node"), c.get("rail"), c.get("evidence")))
sys.exit(0 if any(c.get("rail") == bad for c in rep["culprits"]) else 1)
PY
echo "ok: the fleet Job named rail $bad"
cleanup
trap - EXIT
total=$((RAILS * VFS_PER_RAIL))
until_ok 30 "all $total VFs back on the host after the Jobs" 'test "$(host_vfs)" = "$total"'
