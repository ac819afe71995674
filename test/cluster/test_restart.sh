#!/usr/bin/env bash
# The kubelet restarted: the device plugin registers again and the Node's allocatable comes back;
# the DaemonSet rolled to a new image tag: the pods already running keep their rails, and a new
# pod gets its rails from the new plugin. Needs test_rails.sh's pods.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

declare -A before
for p in rails-a rails-b; do
  for ((r = 0; r < RAILS; r++)); do before[$p.$r]=$(rail_addr "$p" "$r"); done
done
alloc() { kubectl get node "$NODE_NAME" -o jsonpath="{.status.allocatable.railyard\.io/$1}"; }
registrations() { k logs daemonset/railyard-device-plugin -c device-plugin | grep -c 'registered railyard.io/bundle ' || true; }
regs=$(registrations)
[ "$regs" -ge 1 ] || fail "the device plugin's log shows no registration: $(k logs daemonset/railyard-device-plugin -c device-plugin | tail -5)"

"$(dirname "$0")/cluster.sh" restart-kubelet
until_ok 60 "the node Ready again after the kubelet restart" \
  kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout 1s
until_ok 60 "the device plugin registering again" 'test "$(registrations)" -gt "$regs"'
until_ok 60 "railyard.io/bundle back in the Node's allocatable" 'test "$(alloc bundle)" = 8'
for ((r = 0; r < RAILS; r++)); do
  until_ok 30 "railyard.io/rail$r back in the Node's allocatable" 'test "$(alloc "rail$r")" = "$VFS_PER_RAIL"'
done
echo "ok: kubelet restarted, plugin registered again ($(registrations) registrations), allocatable back"

ctr=("$(cached_bin)/ctr" --address "$CONTAINERD_SOCK" -n k8s.io)
"${ctr[@]}" images tag --force "$RAILYARD_IMAGE" "${RAILYARD_IMAGE%:*}:0.1.0-rolled" >/dev/null 2>&1
k set image daemonset/railyard-device-plugin install-cni=railyard:0.1.0-rolled device-plugin=railyard:0.1.0-rolled >/dev/null
k rollout status daemonset/railyard-device-plugin --timeout 120s >/dev/null || fail "the rollout to 0.1.0-rolled did not finish"
image=$(k get pods -l app.kubernetes.io/name=railyard-device-plugin -o jsonpath='{.items[0].spec.containers[0].image}')
[ "$image" = railyard:0.1.0-rolled ] || fail "the plugin's pod runs $image after the rollout"
for p in rails-a rails-b; do
  for ((r = 0; r < RAILS; r++)); do
    now=$(rail_addr "$p" "$r")
    [ "$now" = "${before[$p.$r]}" ] || fail "$p net$((r + 1)) had ${before[$p.$r]}, now '$now'"
  done
done
in_pod rails-a ping -c 1 -W 2 -I "${before[rails-a.7]}" "${before[rails-b.7]}" >/dev/null ||
  fail "rails-a and rails-b lost rail 7 in the rollout"
rail_pod rails-c railyard:0.1.0-rolled | kubectl apply -f - >/dev/null
k wait --for=condition=Ready pod/rails-c --timeout 120s >/dev/null ||
  { k describe pod rails-c | tail -20; fail "a new pod did not get its rails after the rollout"; }
for ((r = 0; r < RAILS; r++)); do
  c=$(rail_addr rails-c "$r")
  in_pod rails-c ping -c 1 -W 2 -I "$c" "${before[rails-a.$r]}" >/dev/null || fail "rails-c rail $r: no traffic to rails-a"
done
echo "ok: rolled to railyard:0.1.0-rolled; rails-a and rails-b kept their 8 rails; rails-c got 8 and reaches rails-a on each"
