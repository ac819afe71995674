#!/usr/bin/env bash
# The cluster node's GPU hardware, as far as this machine can have it: a sysfs tree generated
# from node.json (8 GPU+NIC pairs, 4 VFs per NIC), each NIC's PF netdev (rypf<rail>) and each VF's
# (ryr<rail>v<vf>) a veth end in the host's namespace whose other end is cabled to its rail's leaf
# bridge (ryleaf<rail>), so two pods' functions on one rail reach each other and no other rail (a
# bundle pod takes the PFs, as on a real node); and the uverbs and rdma_cm device nodes
# the device plugin hands out, made with the fixture's numbers (nothing can open them: there is
# no RDMA driver here). Usage: fabric.sh up|down
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
source "$here/common.sh"
bin=${RAILYARD_BIN:-$here/../../build-release/bin}
made=$W/node/made-dev-nodes # what up created under /dev, one path a line, for down

up() {
  mkdir -p "$W/node"
  rm -rf "$SYSFS_ROOT"
  "$bin/railyard-fixture" "$here/node.json" "$SYSFS_ROOT" >/dev/null
  echo '{"selectors": {"linkTypes": ["infiniband"]}}' >"$RAILS_FILE"
  local k j
  # A fabric's leaf ports take jumbo frames, as a real one is set up for RoCE: at 1500 they
  # forwarded the rails' (MTU 4092) GSO bursts but dropped every lone segment over 1500 bytes,
  # and a TCP stream's tail hung until its user timeout.
  for ((k = 0; k < RAILS; k++)); do
    ip link add "ryleaf$k" mtu "$LEAF_MTU" type bridge
    ip link set "ryleaf$k" up
    ip link add "rypf$k" mtu "$LEAF_MTU" type veth peer name "rypf${k}p" mtu "$LEAF_MTU"
    ip link set "rypf${k}p" master "ryleaf$k" up
    for ((j = 0; j < VFS_PER_RAIL; j++)); do
      ip link add "ryr${k}v$j" mtu "$LEAF_MTU" type veth peer name "ryr${k}v${j}p" mtu "$LEAF_MTU"
      ip link set "ryr${k}v${j}p" master "ryleaf$k" up
    done
  done
  : >"$made"
  if [ ! -d /dev/infiniband ]; then
    mkdir /dev/infiniband
    echo /dev/infiniband >>"$made"
  fi
  local d n
  for d in "$SYSFS_ROOT"/sys/class/infiniband_verbs/uverbs* "$SYSFS_ROOT/sys/class/misc/rdma_cm"; do
    n=/dev/infiniband/$(basename "$d")
    IFS=: read -r major minor <"$d/dev"
    [ -e "$n" ] && continue
    mknod -m 666 "$n" c "$major" "$minor"
    echo "$n" >>"$made"
  done
}

down() {
  local k j
  for ((k = 0; k < RAILS; k++)); do
    for ((j = 0; j < VFS_PER_RAIL; j++)); do ip link del "ryr${k}v$j" 2>/dev/null || true; done
    ip link del "rypf$k" 2>/dev/null || true
    ip link del "ryleaf$k" 2>/dev/null || true
  done
  if [ -f "$made" ]; then
    tac "$made" | while read -r n; do rm -f "$n" 2>/dev/null || rmdir "$n" 2>/dev/null || true; done
  fi
  rm -rf "$W/node"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
