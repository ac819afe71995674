#!/usr/bin/env bash
# Images without a registry: the pause image (built here from pause.c, cached beside the
# cluster's programs) and the railyard image that scripts/image.sh built and saved with
# --archive, imported into the cluster's containerd under the names the pods use.
# Usage: images.sh import
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
source "$here/common.sh"
bin=$(cached_bin)
archive=${RAILYARD_IMAGE_ARCHIVE:-$here/../../build-image/railyard.tar}

pause_archive() {
  local out=$CACHE/pause.tar
  [ -f "$out" ] && { echo "$out"; return; }
  local store=$W/buildah c
  local bah=(buildah --root "$store/storage" --runroot "$store/run" --storage-driver vfs)
  c=$("${bah[@]}" from scratch)
  "${bah[@]}" copy "$c" "$bin/pause" /pause >/dev/null
  "${bah[@]}" config --entrypoint '["/pause"]' --user 65535:65535 "$c"
  "${bah[@]}" commit --quiet "$c" "$PAUSE_IMAGE" >/dev/null
  "${bah[@]}" push --quiet "$PAUSE_IMAGE" "docker-archive:$out.tmp:$PAUSE_IMAGE" >/dev/null
  "${bah[@]}" rmi --all --force >/dev/null 2>&1 || true
  rm -rf "$store"
  mv "$out.tmp" "$out"
  echo "$out"
}

import() {
  [ -f "$archive" ] || {
    echo "images: no railyard image at $archive: run scripts/image.sh --archive $archive" >&2
    exit 1
  }
  local ctr=("$bin/ctr" --address "$CONTAINERD_SOCK" -n k8s.io)
  "${ctr[@]}" images import "$(pause_archive)" >/dev/null
  "${ctr[@]}" images import "$archive" >/dev/null
  # Listed first, then searched: `ctr ... | grep -q` under pipefail failed whenever grep's early
  # exit cut ctr off mid-write (SIGPIPE), and a good import was reported as missing.
  local names
  names=$("${ctr[@]}" images ls -q)
  grep -qx "$RAILYARD_IMAGE" <<<"$names" || {
    echo "images: $archive did not hold $RAILYARD_IMAGE" >&2
    exit 1
  }
}

case "${1:-}" in
  import) import ;;
  *) echo "usage: $0 import" >&2; exit 2 ;;
esac
