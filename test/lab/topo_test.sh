#!/usr/bin/env bash
# ctest (label lab): `railyard topo` on a live lab node with two NUMA nodes: two e1000e NICs, each
# behind its own PCIe switch, root port and host bridge (one per NUMA node), with soft-RoCE
# devices (no PCI parent of their own) on their netdevs. The rails, their RDMA devices, rate,
# state, NUMA nodes and the SYS path between them must be what the live sysfs tree says.
# Usage: REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
cd "$repo"
exec python3 lab/lab.py run --numa --nodes 1 --rails 2 --timeout 300 -- "
$bin/railyard topo --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
nics = sorted(j[\"nics\"], key=lambda n: n[\"rail\"])
got = [(n[\"rail\"], n[\"rdma_device\"], n[\"link_layer\"], n[\"rate_gbps\"], n[\"state\"], n[\"numa\"]) for n in nics]
want = [(0, \"rxe0\", \"Ethernet\", 2.5, \"ACTIVE\", 0), (1, \"rxe1\", \"Ethernet\", 2.5, \"ACTIVE\", 1)]
assert got == want, got
assert all(n[\"netdev\"] for n in nics), nics
a, b = nics[0][\"pci\"], nics[1][\"pci\"]
assert a < b and j[\"matrix\"][a][b] == \"SYS\" and j[\"matrix\"][b][a] == \"SYS\", j[\"matrix\"]
print(\"ok topo: rails\", got, \"path\", j[\"matrix\"][a][b])
'
"
