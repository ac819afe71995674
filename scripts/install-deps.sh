#!/usr/bin/env bash
# The one place that installs packages. Idempotent: installs only what is missing, so every
# other script (test.sh, demo.sh, bench/*) can call it first at almost no cost.
# Debian's packages by apt; the CUDA and NCCL compile pieces from PyPI's wheels (versions in
# scripts/cuda-wheels.txt) into a venv under /opt/railyard/cuda (RAILYARD_CUDA_PREFIX), where
# CMake looks for them. Without PyPI the wheels are skipped with a warning: the build then has no
# GPU paths, and says so at configure time.
# RAILYARD_BUILD_ONLY=1 (the image build, manifests/Dockerfile): what the binaries need to build,
# without the test peers and the manifest test's npm packages.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config
  # libraries (static archives included where the CNI binaries need them)
  libnl-3-dev libnl-route-3-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libboost-dev
  libibverbs-dev librdmacm-dev rdma-core
  # railyard-dra-driver's API server client (HTTPS with the service account's token)
  libcurl4-openssl-dev
  # HMAC-SHA256 for the ranks' control channels (rdma/transport/channel_auth.h)
  libssl-dev
  # the venv the CUDA wheels go into
  python3-venv
)
test_packages=(
  # tests, the fuzzer (clang's libFuzzer) and the format check
  catch2 clang clang-format libclang-rt-14-dev
  # test and bench peers, kernel tools
  iproute2 iptables procps containernetworking-plugins iperf3 openmpi-bin libopenmpi-dev libgloo-dev
  python3 nodejs
  # a real runtime for the CNI tests: libcni (Go, built offline with GO111MODULE=off)
  golang-go golang-github-appc-cni-dev
  # the manifest test renders every kustomization
  kubernetes-client
  # scripts/image.sh: the image built offline (base from Debian's packages, buildah, chroot)
  mmdebstrap buildah uidmap
  # the rails lab (lab/): Debian's kernel with soft-RoCE under qemu, perftest as the peer
  qemu-system-x86 busybox-static cpio kmod ibverbs-utils ibverbs-providers perftest
  # the one-node cluster (test/cluster/): runc under containerd, its certificates, ping per rail
  runc openssl iputils-ping
  # bench/cni/callgrind.sh: instructions per call, repeatable where wall time is not
  valgrind
)
build_only=${RAILYARD_BUILD_ONLY:-0}
[ "$build_only" = 1 ] || packages+=("${test_packages[@]}")

# npm packages for the manifest test (test/manifests/package-lock.json), once per lock file.
npm_deps() {
  [ "$build_only" = 1 ] && return 0
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/test/manifests"
  if [ ! -f "$dir/node_modules/.installed" ] || ! cmp -s "$dir/package-lock.json" "$dir/node_modules/.installed"; then
    echo "install-deps: npm ci in test/manifests" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$dir/package-lock.json" "$dir/node_modules/.installed"
  fi
}

# CUDA (nvcc, runtime, CCCL headers) and NCCL from PyPI, once per pin list. The wheels lay out a
# toolkit of their own (nvidia/cu13: bin, include, lib, nvvm) but ship only versioned shared
# libraries and name their folder lib where nvcc.profile looks in lib64: the unversioned names
# and lib64 are added, and two stable links (toolkit, nccl) hide the venv's python version.
cuda_wheels() {
  local top pins prefix venv site
  # The image's build stage (RAILYARD_BUILD_ONLY) builds without GPU paths, as before.
  [ "$build_only" = 1 ] && return 0
  top="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  pins="$top/scripts/cuda-wheels.txt"
  prefix=${RAILYARD_CUDA_PREFIX:-/opt/railyard/cuda}
  venv="$prefix/venv"
  cmp -s "$pins" "$prefix/.installed" && return 0
  echo "install-deps: CUDA and NCCL wheels from PyPI into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  /usr/bin/python3 -m venv "$venv"
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir -r "$pins" >&2; then
    echo "install-deps: WARNING: the CUDA/NCCL wheels could not be installed (no PyPI?);" \
         "railyard builds without its GPU paths" >&2
    rm -rf "$prefix"
    return 0
  fi
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  ln -sfn "$site/nvidia/cu13" "$prefix/toolkit"
  ln -sfn "$site/nvidia/nccl" "$prefix/nccl"
  ln -sfn libcudart.so.13 "$prefix/toolkit/lib/libcudart.so"
  ln -sfn lib "$prefix/toolkit/lib64"
  ln -sfn libnccl.so.2 "$prefix/nccl/lib/libnccl.so"
  cp "$pins" "$prefix/.installed"
}

# The lab's kernel and initramfs, once (lab/lab.py setup is a no-op when they are there).
lab_setup() {
  [ "$build_only" = 1 ] && return 0
  python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/lab/lab.py" setup
}

missing=()
for p in "${packages[@]}"; do
  # The manifest test wants `kubectl kustomize`, from any package: where another one (Google's
  # `kubectl`) owns /usr/bin/kubectl, Debian's kubernetes-client cannot unpack over it.
  [ "$p" = kubernetes-client ] && command -v kubectl >/dev/null && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  cuda_wheels
  npm_deps
  lab_setup
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}" >&2
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
cuda_wheels
npm_deps
lab_setup
