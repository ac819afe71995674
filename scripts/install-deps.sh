#!/usr/bin/env bash
# The one place that installs packages. Idempotent: installs only what is missing, so every
# other script (test.sh, demo.sh, bench/*) can call it first at almost no cost.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
  # libraries (static archives included where the CNI binaries need them)
  libnl-3-dev libnl-route-3-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  catch2 libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc libboost-dev
  libibverbs-dev librdmacm-dev rdma-core
  # test and bench peers, kernel tools
  iproute2 procps containernetworking-plugins iperf3 openmpi-bin libopenmpi-dev libgloo-dev
  python3
  # a real runtime for the CNI tests: libcni (Go, built offline with GO111MODULE=off)
  golang-go golang-github-appc-cni-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]} (run as root, or install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}" >&2
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
