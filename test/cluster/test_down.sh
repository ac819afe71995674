#!/usr/bin/env bash
# cluster.sh down, then a look for anything left behind: processes, links, mounts, iptables
# chains, cgroups, the kubelet's directory, network namespaces, device nodes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
"$here/cluster.sh" down
left=()
pgrep -f "$CACHE/bin/" >/dev/null && left+=("processes: $(pgrep -af "$CACHE/bin/" | cut -c1-80 | tr '\n' ';')")
links=$(ip -o link show | awk -F': ' '{print $2}' | grep -E '^(ryr[0-9]+v[0-9]+|rypf[0-9]+p?|ryleaf[0-9]+|rycni0)(@|$)' || true)
[ -z "$links" ] || left+=("links: $(echo "$links" | tr '\n' ' ')")
mounts=$(awk '{print $5}' /proc/self/mountinfo | grep -E "^($W|$RUN|/var/lib/kubelet|/run/netns/cni-)" || true)
[ -z "$mounts" ] || left+=("mounts: $(echo "$mounts" | tr '\n' ' ')")
chains=$(for t in filter nat mangle; do iptables -t "$t" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-)/ {print $2}'; done)
[ -z "$chains" ] || left+=("iptables chains: $(echo "$chains" | tr '\n' ' ')")
cgroups=$(ls -d /sys/fs/cgroup/*/kubepods* /sys/fs/cgroup/kubepods* 2>/dev/null || true)
[ -z "$cgroups" ] || left+=("cgroups: $(echo "$cgroups" | tr '\n' ' ')")
[ ! -e /var/lib/kubelet ] || left+=("/var/lib/kubelet")
[ ! -e "$RUN" ] || left+=("$RUN")
ls /run/netns/cni-* >/dev/null 2>&1 && left+=("netns: $(ls /run/netns/cni-* | tr '\n' ' ')")
[ ! -e "$W/node" ] || left+=("$W/node (the fixture, device nodes' list)")
if [ ${#left[@]} -gt 0 ]; then
  printf 'FAIL: left behind: %s\n' "${left[@]}" >&2
  exit 1
fi
echo "ok: nothing left behind"
