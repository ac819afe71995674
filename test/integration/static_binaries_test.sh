#!/usr/bin/env bash
# The CNI plugins run on the host, exec'd by the runtime: they must be static executables.
set -euo pipefail
for b in "$@"; do
  out=$(ldd "$b" 2>&1 || true)
  case "$out" in
    *"not a dynamic executable"*) echo "static: $b" ;;
    *) echo "DYNAMIC: $b"; echo "$out"; exit 1 ;;
  esac
done
