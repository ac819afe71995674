#!/usr/bin/env bash
# Builds the one-node cluster's programs once and caches them under /var/cache, keyed by version:
# Kubernetes from k8s.io/kubernetes (its staging modules replaced to the same release), etcd,
# containerd 2.x with its runc shim, Multus (thin plugin), CoreDNS (a few plugins), a pause binary. runc and the reference
# CNI plugins come from Debian (scripts/install-deps.sh). Prints the cache folder's bin/ path.
# Usage: test/cluster/build.sh [--quiet]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
source "$here/common.sh"

cache=$CACHE
bin=$cache/bin
if [ -f "$cache/.built" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$bin"
log() { echo "cluster build: $*" >&2; }
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
started=$SECONDS

# Each program gets a module of its own, so that their dependency graphs never meet.
module() { # <dir> <module path>
  rm -rf "$1"
  mkdir -p "$1"
  (cd "$1" && go mod init "$2" >/dev/null 2>&1)
}

k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=v$K8S_VERSION -X $pkg.gitMajor=${K8S_VERSION%%.*}"
  minor=${K8S_VERSION#*.}
  k8s_ldflags+=" -X $pkg.gitMinor=${minor%%.*} -X $pkg.gitTreeState=clean"
done

log "Kubernetes v$K8S_VERSION (staging modules at v$K8S_STAGING)"
src=$cache/src/kubernetes
module "$src" railyard.io/cluster/kubernetes
(
  cd "$src"
  go mod edit -require="k8s.io/kubernetes@v$K8S_VERSION"
  # k8s.io/kubernetes names its staging modules v0.0.0 and replaces them by folders its module
  # zip does not carry; the published staging releases stand in for them.
  go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" >/dev/null
  modfile=$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v$K8S_VERSION.mod
  for m in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
    go mod edit -replace="$m=$m@v$K8S_STAGING"
  done
  printf 'package tools\n\nimport (\n' >tools.go
  for c in $K8S_PROGRAMS; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c" >>tools.go; done
  printf ')\n' >>tools.go
  sed -i '1s/^/\/\/go:build tools\n\n/' tools.go
  go mod tidy -e >/dev/null 2>&1 || true
  for c in $K8S_PROGRAMS; do
    log "  $c ($((SECONDS - started)) s)"
    go build -trimpath -ldflags "$k8s_ldflags" -o "$bin/$c" "k8s.io/kubernetes/cmd/$c"
  done
)

log "etcd v$ETCD_VERSION ($((SECONDS - started)) s)"
src=$cache/src/etcd
module "$src" railyard.io/cluster/etcd
(cd "$src" && go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >/dev/null 2>&1 &&
  go build -trimpath -ldflags "-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3)

log "containerd v$CONTAINERD_VERSION ($((SECONDS - started)) s)"
src=$cache/src/containerd
module "$src" railyard.io/cluster/containerd
(
  cd "$src"
  go get "github.com/containerd/containerd/v2@v$CONTAINERD_VERSION" >/dev/null 2>&1
  for c in containerd containerd-shim-runc-v2 ctr; do
    go build -trimpath -tags no_btrfs,no_devmapper,no_zfs -ldflags "-s -w \
      -X github.com/containerd/containerd/v2/version.Version=v$CONTAINERD_VERSION" \
      -o "$bin/$c" "github.com/containerd/containerd/v2/cmd/$c"
  done
)

log "Multus v$MULTUS_VERSION, thin plugin ($((SECONDS - started)) s)"
src=$cache/src/multus
module "$src" railyard.io/cluster/multus
(cd "$src" && go get "$MULTUS_MODULE@v$MULTUS_VERSION" >/dev/null 2>&1 &&
  go build -trimpath -ldflags "-s -w" -o "$bin/multus" "$MULTUS_MODULE/cmd/multus")

log "CoreDNS v$COREDNS_VERSION, the cluster's DNS: only the plugins it uses ($((SECONDS - started)) s)"
src=$cache/src/coredns
module "$src" railyard.io/cluster/coredns
cp "$here/coredns_main.go.txt" "$src/main.go"
(cd "$src" && go get "github.com/coredns/coredns@v$COREDNS_VERSION" >/dev/null 2>&1 &&
  go mod tidy >/dev/null 2>&1 && go build -trimpath -ldflags "-s -w" -o "$bin/coredns" .)

log "pause ($((SECONDS - started)) s)"
cc -static -O2 -o "$bin/pause" "$here/pause.c"

rm -rf "$cache/src"
touch "$cache/.built"
log "done in $((SECONDS - started)) s: $(du -sh "$bin" | cut -f1) in $bin"
echo "$bin"
