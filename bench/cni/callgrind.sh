#!/usr/bin/env bash
# Instructions per call, counted by callgrind (repeatable on these machines, where wall time is
# not): railyard-cni ADD, CHECK and DEL of one VF on the 512-VF fixture node (scale-8x8x64), and
# railyard-sbr ADD, CHECK and DEL chained on that interface (deviceID given, so the rail comes
# from topology/). Only the plugin's own process is counted: host-local, exec'd by it, is not.
# Usage: bench/cni/callgrind.sh [BIN_DIR]   (default build/bin, built first)
# CALLGRIND_KEEP=DIR keeps each call's profile there, for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh >/dev/null
bin=${1:-}
if [ -z "$bin" ]; then
  scripts/build.sh railyard railyard-cni railyard-sbr railyard-fixture
  bin=$PWD/build/bin
fi
fixture_bin=${RAILYARD_FIXTURE_BIN:-$PWD/build/bin}
[ -x "$fixture_bin/railyard-fixture" ] || scripts/build.sh railyard railyard-fixture >/dev/null

work=$(mktemp -d)
node="rycg-node-$$" pod="rycg-pod-$$"
cleanup() {
  ip netns del "$pod" 2>/dev/null || true
  ip netns del "$node" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
"$fixture_bin/railyard-fixture" test/fixtures/scale-8x8x64.json "$work/root"
echo '{}' >"$work/rails.json"
ip netns add "$node"
ip netns add "$pod"
# VF 5 of the PF on rail 2: its netdev stands in as a veth in the node namespace.
pci=$("$fixture_bin/railyard" topo --json --sysfs-root "$work/root" --rails "$work/rails.json" |
  python3 -c "import json,sys; n=[n for n in json.load(sys.stdin)['nics'] if n['rail']==2][0]; v=n['vfs'][5]; print(v['pci'], v['netdev'])")
vf_netdev=${pci#* } pci=${pci%% *}
ip -n "$node" link add "$vf_netdev" type veth peer name "${vf_netdev}x"
ip -n "$node" link set "${vf_netdev}x" up
echo '{"stateDir": "'"$work"'/state"}' >"$work/cni-policy.json"
export RAILYARD_SYSFS_ROOT="$work/root" RAILYARD_RAILS_FILE="$work/rails.json"
export RAILYARD_CNI_POLICY="$work/cni-policy.json"

count() {  # PLUGIN COMMAND CONF -> instructions; the plugin's stdout in $work/out
  local plugin=$1 command=$2 conf=$3
  CNI_COMMAND=$command CNI_CONTAINERID=cg CNI_NETNS=/var/run/netns/$pod CNI_IFNAME=net3 \
    CNI_PATH=/usr/lib/cni ip netns exec "$node" valgrind --tool=callgrind \
    --callgrind-out-file="$work/cg.out" "$bin/$plugin" <<<"$conf" >"$work/out" 2>"$work/err" || {
    cat "$work/out" "$work/err" >&2
    return 1
  }
  [ -n "${CALLGRIND_KEEP:-}" ] && cp "$work/cg.out" "$CALLGRIND_KEEP/$plugin.$command.out"
  sed -n 's/^summary: //p' "$work/cg.out"
}
ipam='{"type":"host-local","dataDir":"'$work'/ipam","ranges":[[{"subnet":"10.10.2.0/24"}]]}'
cni_conf='{"cniVersion":"1.0.0","name":"rail2","type":"railyard-cni","deviceID":"'$pci'","sbr":false,"ipam":'$ipam'}'
printf '%-34s %14s\n' "call (512-VF node)" "instructions"
add=$(count railyard-cni ADD "$cni_conf")
result=$(cat "$work/out")
printf '%-34s %14s\n' "railyard-cni ADD" "$add"
with_prev=$(python3 -c "import json,sys; c=json.loads(sys.argv[1]); c['prevResult']=json.loads(sys.argv[2]); print(json.dumps(c))" "$cni_conf" "$result")
printf '%-34s %14s\n' "railyard-cni CHECK" "$(count railyard-cni CHECK "$with_prev")"
sbr_conf=$(python3 -c "import json,sys; print(json.dumps({'cniVersion':'1.0.0','name':'rail2','type':'railyard-sbr','deviceID':sys.argv[1],'prevResult':json.loads(sys.argv[2])}))" "$pci" "$result")
printf '%-34s %14s\n' "railyard-sbr ADD (deviceID)" "$(count railyard-sbr ADD "$sbr_conf")"
printf '%-34s %14s\n' "railyard-sbr CHECK (deviceID)" "$(count railyard-sbr CHECK "$sbr_conf")"
printf '%-34s %14s\n' "railyard-sbr DEL (deviceID)" "$(count railyard-sbr DEL "$sbr_conf")"
printf '%-34s %14s\n' "railyard-cni DEL" "$(count railyard-cni DEL "$with_prev")"
