#!/usr/bin/env bash
# Builds manifests/Dockerfile offline, tags it railyard:dev, and checks the result from inside:
# every binary's --help, `railyard topo` on a fixture, railyard-cni VERSION, the device plugin's
# --dry-run, the DRA driver's slices, and that ldd finds every library. Prints the image size.
# Exit 0 only when all of that worked.
#
# No registry and no Docker engine are needed: the base images are made from Debian's packages
# (mmdebstrap) and imported under the names the Dockerfile uses; buildah builds with chroot
# isolation into its own storage under build-image/ (nothing is left in the host's
# /var/lib/containers). Usage: scripts/image.sh [--clean] [--binaries DIR] [--archive FILE]
#   --clean: remove the images and buildah's storage afterwards (CI); without it railyard:dev
#   stays in build-image/storage (push it with `buildah --root build-image/storage ... push`).
#   --binaries DIR: ship the binaries in DIR (a Release build the tests just ran on, as CI does:
#   build-release/bin) instead of compiling them again inside (the Dockerfile's `tested` target).
#   --archive FILE: also save it, once checked, as a docker-archive tagged railyard:0.1.0 (the
#   manifests' tag), which `ctr images import` takes: the cluster tests run it (test/cluster/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

clean=0
archive=
binaries=
while [ $# -gt 0 ]; do
  case $1 in
    --clean) clean=1 ;;
    --archive) archive=$(realpath -m "$2"); shift ;;
    --binaries) binaries=$(realpath -m "$2"); shift ;;
    *) echo "usage: $0 [--clean] [--binaries DIR] [--archive FILE]" >&2; exit 2 ;;
  esac
  shift
done
work=$PWD/build-image
store=(--root "$work/storage" --runroot "$work/run" --storage-driver vfs)
bah() { buildah "${store[@]}" "$@"; }
mkdir -p "$work"
fixture=$(mktemp -d)
context=$(mktemp -d)
ctr=""
cleanup() {
  [ -n "$ctr" ] && bah rm "$ctr" >/dev/null 2>&1 || true
  rm -rf "$fixture" "$context"
  if [ "$clean" = 1 ]; then
    # vfs layers are plain directories; buildah's own removal knows their mounts.
    bah rmi --all --force >/dev/null 2>&1 || true
    rm -rf "$work/storage" "$work/run"
  fi
}
trap cleanup EXIT
step() { printf '== image: %s\n' "$*"; }

# Base images: a minimal bookworm from Debian's packages, under both names the Dockerfile uses.
if ! bah inspect --type image debian:bookworm >/dev/null 2>&1; then
  step "base image (mmdebstrap --variant=minbase bookworm)"
  mmdebstrap --quiet --variant=minbase bookworm "$work/base.tar"
  base=$(bah from scratch)
  bah add "$base" "$work/base.tar" / >/dev/null
  bah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$base"
  bah commit --quiet "$base" debian:bookworm >/dev/null
  bah rm "$base" >/dev/null
  bah tag debian:bookworm debian:bookworm-slim
  rm -f "$work/base.tar"
fi

# buildah may not raise limits above what its build process has (no CAP_SYS_RESOURCE here):
# the machine's hard limits, and for processes at most 32768, what chroot isolation starts with.
nofile=$(ulimit -Hn)
nproc_limit=$(ulimit -Hu)
[ "$nofile" = unlimited ] && nofile=1048576
[ "$nproc_limit" = unlimited ] || [ "$nproc_limit" -gt 32768 ] && nproc_limit=32768
bins=(railyard railyard-cni railyard-sbr railyard-device-plugin railyard-bench railyard-validate
  railyard-dra-driver)
if [ -n "$binaries" ]; then
  # The context is only bin/: nothing else of the tree is copied, and the build stage is skipped.
  mkdir -p "$context/bin"
  for b in "${bins[@]}"; do
    [ -x "$binaries/$b" ] || { echo "image: $binaries/$b is missing (build it first)" >&2; exit 1; }
    cp "$binaries/$b" "$context/bin/"
  done
  how=(--target tested "$context")
  step "buildah bud -f manifests/Dockerfile --target tested -t railyard:dev (binaries from $binaries)"
else
  how=(.)
  step "buildah bud -f manifests/Dockerfile -t railyard:dev (Release build inside)"
fi
start=$SECONDS
bah bud --quiet --isolation chroot --network host --layers=false \
  --ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc_limit:$nproc_limit" \
  -f manifests/Dockerfile -t railyard:dev "${how[@]}" >"$work/bud.log" 2>&1 ||
  { tail -60 "$work/bud.log"; echo "image: build failed (log: $work/bud.log)" >&2; exit 1; }
step "built in $((SECONDS - start)) s"

# The checks run in a working container of the image, with a generated sysfs tree copied in.
fixture_tool=$binaries/railyard-fixture
if [ -z "$binaries" ] || [ ! -x "$fixture_tool" ]; then
  scripts/build.sh railyard-fixture
  fixture_tool=build/bin/railyard-fixture
fi
"$fixture_tool" test/fixtures/dgx-h100.json "$fixture/root" >/dev/null
ctr=$(bah from --quiet railyard:dev)
bah copy "$ctr" "$fixture/root" /tmp/fixture >/dev/null
in_image() { bah run --isolation chroot "$ctr" -- "$@"; }
failed=0
check() {
  local what=$1
  shift
  local out
  if out=$("$@" 2>&1); then
    printf '  ok    %s\n' "$what"
  else
    printf '  FAIL  %s\n%s\n' "$what" "$(printf '%s\n' "$out" | tail -20 | sed 's/^/        /')"
    failed=1
  fi
}
step "checks inside railyard:dev"
for b in "${bins[@]}"; do
  case $b in
    railyard-cni | railyard-sbr)
      # CNI plugins take no flags; VERSION is their --help.
      check "$b VERSION" in_image sh -c "CNI_COMMAND=VERSION /usr/local/bin/$b </dev/null | grep -q supportedVersions"
      ;;
    *) check "$b --help" in_image "/usr/local/bin/$b" --help ;;
  esac
done
check "railyard topo on the DGX H100 fixture" in_image sh -c \
  '/usr/local/bin/railyard topo --sysfs-root /tmp/fixture --json | grep -q "\"bundles\""'
check "railyard-device-plugin --dry-run on the fixture" in_image sh -c \
  '/usr/local/bin/railyard-device-plugin --dry-run --sysfs-root /tmp/fixture | grep -q "railyard.io/"'
check "railyard-dra-driver slices on the fixture" in_image sh -c \
  '/usr/local/bin/railyard-dra-driver slices --node n1 --sysfs-root /tmp/fixture | grep -q "\"railyard.io/pcieSwitch\""'
for b in "${bins[@]}"; do
  check "ldd $b finds every library" in_image sh -c \
    "out=\$(ldd /usr/local/bin/$b 2>&1); ! printf '%s\n' \"\$out\" | grep -q 'not found' || { printf '%s\n' \"\$out\"; exit 1; }"
done
for b in railyard-cni railyard-sbr; do
  check "$b is static" in_image sh -c "ldd /usr/local/bin/$b 2>&1 | grep -q 'not a dynamic executable'"
done

step "$(in_image /usr/local/bin/railyard-bench --version 2>&1 | head -1)"
size=$(bah inspect --type image --format '{{.Size}}' railyard:dev 2>/dev/null || echo "")
if [ -z "$size" ] || [ "$size" = "<no value>" ]; then
  size=$(bah images --format '{{.Size}}' railyard:dev)
  step "image size: $size"
else
  step "image size: $((size / 1024 / 1024)) MiB"
fi
bah images --format '{{.Name}}:{{.Tag}} {{.Size}}' railyard:dev | sed 's/^/  /'
[ "$failed" = 0 ] || { echo "image: checks failed" >&2; exit 1; }
step "railyard:dev passed"
if [ -n "$archive" ]; then
  mkdir -p "$(dirname "$archive")"
  rm -f "$archive.tmp"
  bah push --quiet railyard:dev "docker-archive:$archive.tmp:railyard:0.1.0" >/dev/null
  mv "$archive.tmp" "$archive"
  step "saved as $archive ($(du -h "$archive" | cut -f1), railyard:0.1.0)"
fi
