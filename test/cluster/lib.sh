# What the cluster tests share: kubectl on the test cluster, polling, a pod's network namespace,
# and a failure that says what was expected and shows what was there.
# shellcheck shell=bash
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export KUBECONFIG=$W/pki/admin.kubeconfig
export PATH=$(cached_bin):$PATH
NS=railyard-system
k() { kubectl -n "$NS" "$@"; }

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# until_ok <seconds> <what> <command line>: evaluates the line (quote it: what it reads is read
# again each time) every 0.5 s until it succeeds; on timeout fails naming <what>.
until_ok() {
  local limit=$1 what=$2 start=$SECONDS
  shift 2
  until eval "$*" >/dev/null 2>&1; do
    [ $((SECONDS - start)) -lt "$limit" ] || fail "$what: not within $limit s"
    sleep 0.5
  done
}

# The host PID of a pod's first container: its network namespace is the pod's.
pod_pid() {
  local id
  id=$(k get pod "$1" -o jsonpath='{.status.containerStatuses[0].containerID}')
  id=${id#containerd://}
  "$(cached_bin)/ctr" --address "$CONTAINERD_SOCK" -n k8s.io tasks ls 2>/dev/null | awk -v id="$id" '$1 == id {print $2}'
}
in_pod() { # <pod> <command...>: in the pod's network namespace, with the host's tools
  local pid
  pid=$(pod_pid "$1")
  [ -n "$pid" ] || fail "no running container for pod $1"
  shift
  nsenter -t "$pid" -n "$@"
}

# pod_yaml <pods/ file> key=value...: the pod spec with its @key@ fields filled in (namespace:
# the tests' own, unless given; a field not given is left empty), its comments left out.
pod_yaml() {
  python3 - "$(dirname "${BASH_SOURCE[0]}")/pods/$1" "namespace=$NS" "${@:2}" <<'PY'
import re, sys
text = "".join(l for l in open(sys.argv[1]) if not l.startswith("#"))
fields = dict(a.split("=", 1) for a in sys.argv[2:])
out = re.sub(r"@([a-z]+)@", lambda m: fields.get(m.group(1), ""), text)
print(out, end="")
PY
}

# A pod on the node asking for one bundle and one VF per rail, attached as net1..net8.
rail_pod() { # <name> [image]
  local res=', railyard.io/bundle: "1"' nets="" r
  for ((r = 0; r < RAILS; r++)); do
    res+=", railyard.io/rail$r: \"1\""
    nets+="${nets:+, }railyard-rail$r@net$((r + 1))"
  done
  pod_yaml sleeper.yaml "name=$1" "image=${2:-railyard:0.1.0}" 'command=["sleep", "infinity"]' \
    "resources=$res" "annotations=k8s.v1.cni.cncf.io/networks: \"$nets\""
}

# Rail r's address in a pod (net<r+1>), without the prefix length.
rail_addr() { in_pod "$1" ip -4 -o addr show dev "net$(($2 + 1))" | awk '{print $4}' | cut -d/ -f1; }

# VFs on the host: the ryr<rail>v<vf> netdevs not in a pod.
host_vfs() { ip -o link show | grep -c ': ryr[0-9]*v[0-9]*@' || true; }
# PFs on the host: the rypf<rail> netdevs not in a (bundle) pod.
host_pfs() { ip -o link show | grep -c ': rypf[0-9]*@' || true; }

# check_rails <pod a> <pod b>: each pod's net<K+1> has an address of rail K (10.(100+K).0.0/16),
# its SBR rule and table, and a pings b on every rail over that rail's leaf bridge and no other.
leaf_rx() { # packets rail $1's leaf took in from its VFs' peers
  local j n=0
  for ((j = 0; j < VFS_PER_RAIL; j++)); do n=$((n + $(cat "/sys/class/net/ryr${1}v${j}p/statistics/rx_packets"))); done
  echo "$n"
}
check_rails() {
  local a=$1 b=$2 r p n table addr rules routes before after
  for ((r = 0; r < RAILS; r++)); do
    n=net$((r + 1)) table=$((100 + r))
    for p in "$a" "$b"; do
      addr=$(rail_addr "$p" "$r")
      case $addr in 10.$((100 + r)).*) ;; *) fail "$p $n has '$addr', not an address of rail $r (10.$((100 + r)).0.0/16)" ;; esac
      rules=$(in_pod "$p" ip rule show)
      grep -q "from $addr lookup $table" <<<"$rules" || fail "$p: no SBR rule 'from $addr lookup $table': $rules"
      routes=$(in_pod "$p" ip route show table "$table")
      grep -q "dev $n" <<<"$routes" || fail "$p: table $table has no route via $n: $routes"
    done
    # The VFs in the pods are rail r's: what they send enters rail r's leaf by their peers.
    before=$(leaf_rx "$r")
    in_pod "$a" ping -c 3 -i 0.2 -W 2 -I "$(rail_addr "$a" "$r")" "$(rail_addr "$b" "$r")" >/dev/null ||
      fail "no traffic on rail $r: $a $n -> $b $(rail_addr "$b" "$r")"
    after=$(leaf_rx "$r")
    [ "$after" -ge $((before + 6)) ] || fail "rail $r's pings did not cross ryleaf$r ($before -> $after packets)"
  done
}

# This node's railyard.io slices as the DRA driver makes them (its `slices` command), created in
# the API server and kept in FILE: what `railyard-validate --apply` names a rail's devices from.
publish_node_slices() { # <file>
  "$RAILYARD_BIN/railyard-dra-driver" slices --node "$NODE_NAME" --sysfs-root "$SYSFS_ROOT" \
    --rails "$RAILS_FILE" >"$1"
  kubectl apply -f "$1" >/dev/null
}

# The port state file of rail <rail>'s PF in the node's sysfs fixture, found from <slices file>.
rail_port_state() { # <rail> <slices file>
  python3 - "$1" "$2" "$SYSFS_ROOT" <<'PY'
import json, sys
rail, slices, root = int(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3]
a = lambda d, n: next(iter(d["attributes"].get(n, {}).values()), None)
pf = next(d for s in slices["items"] for d in s["spec"]["devices"]
          if a(d, "railyard.io/type") == "nic" and a(d, "railyard.io/rail") == rail)
print("%s/sys/bus/pci/devices/%s/infiniband/%s/ports/1/state" % (
    root, a(pf, "resource.kubernetes.io/pciBusID"), a(pf, "railyard.io/rdmaDevice")))
PY
}

# railyard-validate run --apply on the host as ServiceAccount <sa> (a short-lived token made for
# it), node checks only, on the node's fixture: what a Job does, without one. The port check,
# and with <expected Gb/s> the rate check too.
host_validate_apply() { # <sa> [expected Gb/s]
  local token=$W/$1.token config=$W/checks-only.json
  k create token "$1" --duration 10m >"$token"
  cat >"$config" <<JSON
{"checks": {"portActive": true, ${2:+\"expectedRateGbps\": $2,} "pcieNotDegraded": false,
            "roceGid": false, "maxPathClass": "SYS", "gpuDirect": "off", "fabricMtu": 0,
            "roceQos": false, "pcieAcs": false, "portErrors": false, "linkFlaps": false,
            "ncclPath": false}}
JSON
  local rc=0
  "$RAILYARD_BIN/railyard-validate" run --config "$config" --sysfs-root "$SYSFS_ROOT" \
    --rails "$RAILS_FILE" --node-name "$NODE_NAME" --apply \
    --api-server "$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')" \
    --api-token-file "$token" --api-ca-file "$W/pki/ca.crt" || rc=$?
  rm -f "$token" "$config"
  return "$rc"
}

# For the benches and the demo: brings the cluster up unless it is up already. CLUSTER_STARTED
# says whether it did, so that their cleanup takes down only a cluster they brought up.
CLUSTER_STARTED=0
cluster_up_unless_up() {
  kubectl get node "$NODE_NAME" >/dev/null 2>&1 && return 0
  echo "== bringing the cluster up (test/cluster/cluster.sh up)"
  CLUSTER_STARTED=1
  "$(dirname "${BASH_SOURCE[0]}")/cluster.sh" up >/tmp/railyard-cluster-up.log 2>&1 ||
    { tail -20 /tmp/railyard-cluster-up.log; fail "the cluster did not come up"; }
}
cluster_down_if_started() {
  [ "$CLUSTER_STARTED" = 1 ] || return 0
  "$(dirname "${BASH_SOURCE[0]}")/cluster.sh" down >/dev/null 2>&1 || true
}

# The median of the numbers given.
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

# A two-measure bench's rounds and medians as JSON:
# bench_json <file> <name a> <name b> <target ms> "<rounds a>" "<rounds b>"
bench_json() {
  python3 - "$@" <<'PY'
import json, statistics, sys
f, a, b, target, ra, rb = sys.argv[1:]
ra, rb = [int(x) for x in ra.split()], [int(x) for x in rb.split()]
json.dump({a: {"median": statistics.median(ra), "rounds": ra},
           b: {"median": statistics.median(rb), "rounds": rb}, "target_ms": int(target)},
          open(f, "w"), indent=2)
PY
}
