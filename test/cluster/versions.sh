# The cluster's pinned versions; CLUSTER_KEY names the cache folder, so a change here builds anew.
# shellcheck shell=bash
K8S_VERSION=1.36.3
K8S_STAGING=0.36.3
K8S_PROGRAMS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
ETCD_VERSION=3.6.8 # what k8s.io/kubernetes v1.36.3 names in build/dependencies.yaml
CONTAINERD_VERSION=2.2.9
MULTUS_MODULE=gopkg.in/k8snetworkplumbingwg/multus-cni.v4
MULTUS_VERSION=4.2.3
COREDNS_VERSION=1.14.7
CLUSTER_KEY=k8s-$K8S_VERSION-etcd-$ETCD_VERSION-containerd-$CONTAINERD_VERSION-multus-$MULTUS_VERSION-coredns-$COREDNS_VERSION-1
