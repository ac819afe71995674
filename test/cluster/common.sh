# What the cluster scripts share: where things live, the addresses, one way to print a step.
# shellcheck shell=bash
# shellcheck source=versions.sh
source "$(dirname "${BASH_SOURCE[0]}")/versions.sh"
W=${RAILYARD_CLUSTER_DIR:-/var/lib/railyard-cluster}
RUN=/run/railyard-cluster
CACHE=${RAILYARD_CLUSTER_CACHE:-/var/cache/railyard-cluster}/$CLUSTER_KEY
CONTAINERD_SOCK=$RUN/containerd/containerd.sock
CNI_BIN=$W/cni/bin
CNI_CONF=$W/cni/net.d
SYSFS_ROOT=$W/node/root
RAILS_FILE=$W/node/rails.json
# The CNI node policy the DaemonSet installs (overlays map its /etc/railyard here).
CNI_POLICY=$W/etc-railyard/cni-policy.json
NODE_NAME=railyard-node
POD_BRIDGE=rycni0
POD_CIDR=10.244.0.0/24
NODE_IP=10.244.0.1
SERVICE_CIDR=10.96.0.0/24
API_SERVICE_IP=10.96.0.1
API_PORT=6443
ETCD_PORT=23790
CM_PORT=10357
SCHED_PORT=10359
PROXY_METRICS_PORT=10349
PROXY_HEALTH_PORT=10356
PAUSE_IMAGE=localhost/railyard-pause:1
RAILYARD_IMAGE=docker.io/library/railyard:0.1.0
RAILS=8
VFS_PER_RAIL=4
# What a rail's findings need from 1.36 (test/cluster/README.md lists them for users): device taints
# in ResourceSlices (beta, on by default), DeviceTaintRules (beta, off by default, served in
# resource.k8s.io/v1beta2), resource health in pod status (beta, on by default). Named here so a
# cluster that turned one off by default later still runs the tests.
FEATURE_GATES=DRADeviceTaints=true,DRADeviceTaintRules=true,ResourceHealthStatus=true
RUNTIME_CONFIG=resource.k8s.io/v1beta2=true
LEAF_MTU=9000 # the leaf bridges and their ports: jumbo, as a RoCE fabric is

step() { printf '== cluster: %s\n' "$*"; }
cached_bin() { echo "$CACHE/bin"; }
