#!/bin/sh
# Runs on each lab node (test/lab/validate_test.sh): node 0 runs railyard-validate over verbs with
# rail 1 degraded (tc), node 1 answers each benchmark run as rank 1, in the order validate runs
# them: rail 0, rail 1, then both. Usage: validate_node.sh BIN_DIR WORK_DIR
set -eu
bin=$1 work=$2
# The rendezvous port of a run: one per rail list, so that consecutive runs never meet the wrong one.
port_of() { case $1 in rxe0) echo 29600 ;; rxe1) echo 29601 ;; *) echo 29602 ;; esac; }
args="-b 256K -e 1M -f 4 -n 3 -w 1 -c 1"
if [ "$LAB_NODE" = 1 ]; then
  for rails in rxe0 rxe1 rxe0,rxe1; do
    "$bin/railyard-bench" allreduce --transport verbs --rank 1 --world-size 2 --timeout 120 \
      --rendezvous "10.100.0.1:$(port_of $rails)" --rails "$rails" $args >/dev/null
  done
  exit 0
fi
mkdir -p "$work"
# What validate runs for each rail: NCCL_IB_HCA ("=rxe1:1" or "=rxe0:1,rxe1:1") -> the rails.
cat >"$work/bench.sh" <<SH
#!/bin/sh
rails=\$(echo "\${NCCL_IB_HCA#=}" | sed 's/:1//g')
exec "$bin/railyard-bench" allreduce --transport verbs --rank 0 --world-size 2 --timeout 120 \
  --rendezvous "10.100.0.1:\$(case \$rails in rxe0) echo 29600 ;; rxe1) echo 29601 ;; *) echo 29602 ;; esac)" \
  --rails "\$rails" "\$@"
SH
chmod +x "$work/bench.sh"
cat >"$work/validate.json" <<JSON
{"checks": {"gpuDirect": "off", "roceGid": true, "fabricMtu": 1024, "ncclPath": false},
 "benchmark": {"command": "$work/bench.sh", "args": ["-b", "256K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1", "-c", "1"],
               "largeMessageBytes": 1048576, "minFractionOfMedianRail": 0.6, "repeats": 1,
               "timeoutSeconds": 200}}
JSON
# Rail 1 degraded: its NIC limited to 4 Mbit/s, a fraction of what a soft-RoCE rail moves here.
tc qdisc add dev eth1 root tbf rate 4mbit burst 32kb latency 400ms
status=0
"$bin/railyard-validate" run --config "$work/validate.json" --report "$work/report.json" \
  --timeline "$work/timeline.svg" || status=$?
echo "validate exit status $status"
python3 - "$work/report.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
runs = {r["name"]: r for r in rep["runs"]}
assert rep["verdict"] == "fail", rep["verdict"]
assert runs["rail 0 (rxe0)"]["ok"], runs["rail 0 (rxe0)"]
assert not runs["rail 1 (rxe1)"]["ok"], runs["rail 1 (rxe1)"]
print("ok validate over verbs: rail 1 (rxe1) named:", runs["rail 1 (rxe1)"]["problems"])
# The bring-up checks on a real RDMA stack: rxe's hw_counters moved with the benchmark's packets,
# the port's active MTU came from the verbs device, and e1000e has no DCB operations.
checks = {(c["subject"], c["check"]): c for c in rep["checks"]}
qos = checks[("rail 0 (rxe0)", "roce-qos")]
assert qos["status"] == "unknown" and "e1000e" in qos["detail"] and "EOPNOTSUPP" in qos["detail"], qos
mtu = checks[("rail 0 (rxe0)", "mtu")]
assert mtu["status"] == "ok" and "port MTU 1024 (active)" in mtu["detail"], mtu
for rail in ("rail 0 (rxe0)", "rail 1 (rxe1)"):
    assert checks[(rail, "port-errors")]["status"] == "ok", checks[(rail, "port-errors")]
    assert checks[(rail, "link-flaps")]["status"] == "ok", checks[(rail, "link-flaps")]
delta = {c["rail"]: c["delta"] for c in rep["counters"]}
assert delta["rail 0 (rxe0)"]["hw_counters/sent_pkts"] > 0, delta
assert "hw_counters/link_downed" in delta["rail 0 (rxe0)"], delta
timeline = {r["name"]: r for r in rep["timeline"]["rails"]}
assert timeline["rail 0 (rxe0)"]["source"] == "tx_bytes", timeline
assert max(timeline["rail 0 (rxe0)"]["gbps"]) > 0, timeline
print("ok bring-up checks on rxe:", qos["detail"], "|", mtu["detail"], "|",
      checks[("rail 0 (rxe0)", "port-errors")]["detail"])
print("   rxe0 hw_counters over the run:", {k: v for k, v in delta["rail 0 (rxe0)"].items() if v})
print("   rail 0", runs["rail 0 (rxe0)"]["busbw"], "GB/s; rail 1", runs["rail 1 (rxe1)"]["busbw"],
      "GB/s; all rails", runs["all rails"]["busbw"], "GB/s", runs["all rails"]["problems"])
PY
[ "$status" = 1 ]
