#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, for the `cluster` tests and by hand:
#   test/cluster/cluster.sh up      build (cached) and start: certificates, etcd, kube-apiserver,
#                                   kube-controller-manager, kube-scheduler, containerd, kubelet,
#                                   kube-proxy, CoreDNS, Multus; the GPU node's rails (fabric.sh);
#                                   the images imported. Prints how to reach it.
#   test/cluster/cluster.sh down    stop everything and remove what it made (idempotent)
#   test/cluster/cluster.sh restart-kubelet
#   test/cluster/cluster.sh env     the KUBECONFIG line to eval
# Everything lives under $RAILYARD_CLUSTER_DIR (/var/lib/railyard-cluster) and /run/railyard-cluster,
# except what the peers insist on: the kubelet's /var/lib/kubelet (Multus and the device plugin
# read it there), /dev/infiniband (the stand-in uverbs nodes), cgroups, iptables chains. The API
# server, DNS and node address sit on the pod bridge (10.244.0.1), not on any outside interface.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=common.sh
source "$here/common.sh"

start_process() { # <name> <command...>: in the background, its log under $W/log
  local name=$1
  shift
  mkdir -p "$W/log" "$RUN"
  setsid "$@" >"$W/log/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}

stop_process() { # <name>: TERM, then KILL after 10 s
  local pidfile=$RUN/$1.pid pid
  [ -f "$pidfile" ] || return 0
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

wait_for() { # <what> <seconds> <command...>: polls until the command succeeds
  local what=$1 limit=$2 start=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    if [ $((SECONDS - start)) -ge "$limit" ]; then
      echo "cluster: $what not ready after ${limit} s" >&2
      return 1
    fi
    sleep 0.2
  done
}

certificates() {
  local pki=$W/pki
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=railyard-cluster-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  cert() { # <name> <CN> <O or -> [subjectAltName]
    local name=$1 cn=$2 org=$3 san=${4:-} subj="/CN=$2"
    [ "$org" != - ] && subj="/O=$org/CN=$cn"
    openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$pki/$name.key" \
      -out "$pki/$name.csr" 2>/dev/null
    local ext=$pki/$name.ext
    printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n' >"$ext"
    if [ -n "$san" ]; then
      printf 'extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=%s\n' "$san" >>"$ext"
    else
      printf 'extendedKeyUsage=clientAuth\n' >>"$ext"
    fi
    openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
      -CAcreateserial -days 2 -extfile "$ext" -out "$pki/$name.crt" 2>/dev/null
    rm -f "$pki/$name.csr" "$ext"
  }
  cert apiserver kube-apiserver - \
    "IP:$NODE_IP,IP:$API_SERVICE_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  cert admin railyard-cluster-admin system:masters
  cert controller-manager system:kube-controller-manager -
  cert scheduler system:kube-scheduler -
  cert kube-proxy system:kube-proxy -
  cert kubelet "system:node:$NODE_NAME" system:nodes
  cert kubelet-serving "system:node:$NODE_NAME" system:nodes "IP:$NODE_IP,DNS:$NODE_NAME"
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  for who in admin controller-manager scheduler kube-proxy kubelet; do
    KUBECONFIG=$pki/$who.kubeconfig kubectl config set-cluster railyard --server="https://$NODE_IP:$API_PORT" \
      --certificate-authority="$pki/ca.crt" --embed-certs >/dev/null
    KUBECONFIG=$pki/$who.kubeconfig kubectl config set-credentials "$who" --embed-certs \
      --client-certificate="$pki/$who.crt" --client-key="$pki/$who.key" >/dev/null
    KUBECONFIG=$pki/$who.kubeconfig kubectl config set-context railyard --cluster=railyard \
      --user="$who" >/dev/null
    KUBECONFIG=$pki/$who.kubeconfig kubectl config use-context railyard >/dev/null
  done
}

containerd_config() {
  mkdir -p "$W/containerd" "$W/cdi" "$CNI_BIN" "$CNI_CONF"
  cat >"$W/containerd/config.toml" <<EOF
version = 3
root = "$W/containerd/root"
state = "$RUN/containerd"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.cri.v1.runtime"]
  # Root here lacks CAP_SYS_RESOURCE: runc may not lower a container's oom_score_adj below ours.
  restrict_oom_score_adj = true
  enable_cdi = true
  cdi_spec_dirs = ["$W/cdi"]
  [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
      BinaryName = "/usr/sbin/runc"
      SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN", "/usr/lib/cni"]
    conf_dir = "$CNI_CONF"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$PAUSE_IMAGE"
EOF
}

cni_config() {
  cp "$BIN/multus" "$CNI_BIN/multus"
  # Multus, thin: the pod network first (a bridge, host-local addresses), then each NAD the pod
  # names; it reads the NADs and the kubelet's device assignments itself.
  cat >"$CNI_CONF/00-multus.conf" <<EOF
{"cniVersion": "1.0.0", "name": "multus-cni-network", "type": "multus",
 "kubeconfig": "$W/pki/admin.kubeconfig", "cniDir": "$W/multus", "binDir": "$CNI_BIN",
 "logFile": "$W/log/multus.log", "logLevel": "verbose",
 "delegates": [{"cniVersion": "1.0.0", "name": "pods", "plugins": [
   {"type": "bridge", "bridge": "$POD_BRIDGE", "isGateway": true, "ipMasq": false,
    "ipam": {"type": "host-local", "dataDir": "$W/ipam",
             "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
             "routes": [{"dst": "0.0.0.0/0"}]}}]}]}
EOF
}

kubelet_config() {
  mkdir -p "$W/kubelet"
  cat >"$W/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $W/pki/ca.crt}
authorization: {mode: Webhook}
address: $NODE_IP
tlsCertFile: $W/pki/kubelet-serving.crt
tlsPrivateKeyFile: $W/pki/kubelet-serving.key
cgroupDriver: cgroupfs
# This machine has cgroup v1 only.
failCgroupV1: false
failSwapOn: false
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
resolvConf: $W/kubelet/resolv.conf
podCIDR: $POD_CIDR
featureGates: {$(sed 's/=/: /g; s/,/, /g' <<<"$FEATURE_GATES")}
maxPods: 40
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
syncFrequency: 5s
fileCheckFrequency: 5s
nodeStatusUpdateFrequency: 2s
EOF
  # Pods resolve only cluster names: nothing outside this machine is reachable.
  echo "nameserver $NODE_IP" >"$W/kubelet/resolv.conf"
}

corefile() {
  cat >"$W/Corefile" <<EOF
.:53 {
  bind $NODE_IP
  errors
  kubernetes cluster.local in-addr.arpa ip6.arpa {
    kubeconfig $W/pki/admin.kubeconfig
    pods insecure
    fallthrough in-addr.arpa ip6.arpa
  }
}
EOF
}

start_kubelet() {
  start_process kubelet "$BIN/kubelet" --config "$W/kubelet/config.yaml" \
    --kubeconfig "$W/pki/kubelet.kubeconfig" --hostname-override "$NODE_NAME" \
    --node-ip "$NODE_IP" --node-labels "railyard.io/rails=true" --v 1
}

up() {
  [ "$(id -u)" = 0 ] || { echo "cluster: needs root (namespaces, cgroups, mounts)" >&2; exit 1; }
  if [ -f "$RUN/kubelet.pid" ] || pgrep -x kubelet >/dev/null; then
    echo "cluster: a kubelet already runs here; 'cluster.sh down' first" >&2
    exit 1
  fi
  local t0=$SECONDS
  BIN=$("$here/build.sh")
  export PATH=$BIN:$PATH
  step "node network: $POD_BRIDGE $NODE_IP/24 (API server, DNS, node address)"
  ip link add "$POD_BRIDGE" type bridge
  ip addr add "$NODE_IP/24" dev "$POD_BRIDGE"
  ip link set "$POD_BRIDGE" up
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 2>/dev/null ||
    sysctl -qw net.ipv4.ip_forward=1
  step "GPU node fabric: 8 rails, 4 VFs each, a leaf bridge per rail"
  "$here/fabric.sh" up
  certificates
  step "etcd"
  start_process etcd "$BIN/etcd" --data-dir "$W/etcd" --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" --listen-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((ETCD_PORT + 1))" \
    --initial-cluster "default=http://127.0.0.1:$((ETCD_PORT + 1))" --listen-metrics-urls "" \
    --unsafe-no-fsync --quota-backend-bytes 1073741824
  step "kube-apiserver"
  start_process kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged=true \
    --authorization-mode Node,RBAC --client-ca-file "$W/pki/ca.crt" \
    --tls-cert-file "$W/pki/apiserver.crt" --tls-private-key-file "$W/pki/apiserver.key" \
    --kubelet-client-certificate "$W/pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$W/pki/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority "$W/pki/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$W/pki/sa.pub" --service-account-signing-key-file "$W/pki/sa.key" \
    --profiling=false --enable-priority-and-fairness=false \
    --feature-gates "$FEATURE_GATES" --runtime-config "$RUNTIME_CONFIG"
  export KUBECONFIG=$W/pki/admin.kubeconfig
  wait_for "kube-apiserver" 60 kubectl get --raw /readyz
  step "kube-apiserver ready ($((SECONDS - t0)) s)"
  start_process kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$W/pki/controller-manager.kubeconfig" --leader-elect=false \
    --authentication-kubeconfig "$W/pki/controller-manager.kubeconfig" \
    --authorization-kubeconfig "$W/pki/controller-manager.kubeconfig" \
    --service-account-private-key-file "$W/pki/sa.key" --root-ca-file "$W/pki/ca.crt" \
    --use-service-account-credentials=true --bind-address 127.0.0.1 --secure-port "$CM_PORT" \
    --cluster-signing-cert-file "$W/pki/ca.crt" --cluster-signing-key-file "$W/pki/ca.key" \
    --concurrent-gc-syncs 2 --profiling=false --feature-gates "$FEATURE_GATES"
  start_process kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$W/pki/scheduler.kubeconfig" \
    --authentication-kubeconfig "$W/pki/scheduler.kubeconfig" \
    --authorization-kubeconfig "$W/pki/scheduler.kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --profiling=false \
    --feature-gates "$FEATURE_GATES"
  step "containerd and the images"
  containerd_config
  cni_config
  start_process containerd env RAILYARD_SYSFS_ROOT="$SYSFS_ROOT" RAILYARD_RAILS_FILE="$RAILS_FILE" \
    RAILYARD_CNI_POLICY="$CNI_POLICY" "$BIN/containerd" --config "$W/containerd/config.toml"
  wait_for containerd 30 "$BIN/ctr" --address "$CONTAINERD_SOCK" version
  "$here/images.sh" import
  step "kubelet"
  kubelet_config
  start_kubelet
  wait_for "node $NODE_NAME" 90 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout 1s
  step "kube-proxy and CoreDNS"
  start_process kube-proxy "$BIN/kube-proxy" --kubeconfig "$W/pki/kube-proxy.kubeconfig" \
    --hostname-override "$NODE_NAME" --cluster-cidr "$POD_CIDR" --proxy-mode iptables \
    --bind-address "$NODE_IP" --metrics-bind-address "127.0.0.1:$PROXY_METRICS_PORT" \
    --healthz-bind-address "127.0.0.1:$PROXY_HEALTH_PORT" --conntrack-max-per-core 0
  corefile
  start_process coredns "$BIN/coredns" -conf "$W/Corefile"
  kubectl apply -f "$here/nad-crd.yaml" >/dev/null
  wait_for "the NetworkAttachmentDefinition CRD" 30 kubectl get network-attachment-definitions -A
  wait_for "the default service account" 30 kubectl -n default get serviceaccount default
  step "cluster up in $((SECONDS - t0)) s: export KUBECONFIG=$KUBECONFIG"
}

down() {
  local t0=$SECONDS
  export PATH=$BIN:$PATH
  if [ -f "$RUN/kube-apiserver.pid" ] && [ -f "$RUN/kubelet.pid" ]; then
    # Pods first, while the kubelet can still run CNI DEL for them.
    KUBECONFIG=$W/pki/admin.kubeconfig timeout 60 kubectl delete pods --all -A --grace-period 1 \
      --wait=true >/dev/null 2>&1 || true
  fi
  for p in kubelet kube-proxy coredns kube-scheduler kube-controller-manager; do stop_process "$p"; done
  # Sandboxes the kubelet left: their tasks killed and removed through containerd.
  if [ -S "$CONTAINERD_SOCK" ] && [ -x "${BIN:-}/ctr" ]; then
    local c
    for c in $("$BIN/ctr" --address "$CONTAINERD_SOCK" -n k8s.io containers ls -q 2>/dev/null); do
      "$BIN/ctr" --address "$CONTAINERD_SOCK" -n k8s.io tasks kill -s KILL "$c" >/dev/null 2>&1 || true
      "$BIN/ctr" --address "$CONTAINERD_SOCK" -n k8s.io tasks rm -f "$c" >/dev/null 2>&1 || true
    done
  fi
  stop_process containerd
  # A shim whose task was still starting outlives containerd: its processes and it go too.
  kill_cgroup_processes
  [ -n "${BIN:-}" ] && pkill -KILL -f "^$BIN/containerd-shim-runc-v2 " 2>/dev/null || true
  stop_process kube-apiserver
  stop_process etcd
  [ -x "${BIN:-}/kube-proxy" ] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
  remove_kube_chains
  # Mounts: the pods' network namespaces, containerd's rootfs and shm, the kubelet's volumes and
  # the bind mount it puts on its own root.
  local m
  for m in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^($W|$RUN|/var/lib/kubelet|/run/netns/cni-)" | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
  rm -f /run/netns/cni-* 2>/dev/null || true
  remove_cgroups
  "$here/fabric.sh" down
  ip link del "$POD_BRIDGE" 2>/dev/null || true
  rm -rf /var/lib/kubelet "$RUN" "$W/containerd" "$W/etcd" "$W/ipam" "$W/multus" "$W/kubelet" \
    "$W/pki" "$W/cni" "$W/cdi" "$W/dra" "$W/Corefile"
  step "cluster down in $((SECONDS - t0)) s (logs kept in $W/log)"
}

remove_kube_chains() {
  local table chain
  for table in filter nat mangle; do
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-)/ {print $2}'); do
      # Jumps into the chain first, from any chain, then the chain itself.
      local jumps
      jumps=$(iptables -t "$table" -S 2>/dev/null | grep -- "-j $chain\$\|-j $chain " | sed 's/^-A/-D/' || true)
      while read -r rule; do
        [ -n "$rule" ] && eval "iptables -t $table $rule" 2>/dev/null || true
      done <<<"$jumps"
      iptables -t "$table" -F "$chain" 2>/dev/null || true
    done
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-)/ {print $2}'); do
      iptables -t "$table" -X "$chain" 2>/dev/null || true
    done
  done
}

kill_cgroup_processes() {
  local procs
  for procs in $(find /sys/fs/cgroup/*/kubepods* /sys/fs/cgroup/kubepods* -name cgroup.procs 2>/dev/null); do
    xargs -r kill -KILL <"$procs" 2>/dev/null || true
  done
}

remove_cgroups() {
  local d
  for d in /sys/fs/cgroup/*/kubepods* /sys/fs/cgroup/kubepods*; do
    [ -d "$d" ] || continue
    find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
}

case "${1:-}" in
  up) up ;;
  down) BIN=$(cached_bin) down ;;
  restart-kubelet)
    BIN=$(cached_bin)
    stop_process kubelet
    start_kubelet
    ;;
  env) echo "export KUBECONFIG=$W/pki/admin.kubeconfig PATH=$(cached_bin):\$PATH" ;;
  *)
    echo "usage: $0 up|down|restart-kubelet|env" >&2
    exit 2
    ;;
esac
