#!/usr/bin/env bash
# ctest (label lab): `railyard topo` on a live lab node: two e1000e NICs, each behind its own PCIe
# switch and root port, with soft-RoCE devices (no PCI parent of their own) on their netdevs.
# The rails, their RDMA devices, netdevs, rate and the PHB path between them must be what the
# live sysfs tree says. Usage: REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
cd "$repo"
exec python3 lab/lab.py run --nodes 1 --rails 2 --timeout 300 -- "
$bin/railyard topo --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
nics = sorted(j[\"nics\"], key=lambda n: n[\"rail\"])
got = [(n[\"rail\"], n[\"rdma_device\"], n[\"netdev\"], n[\"link_layer\"], n[\"rate_gbps\"], n[\"state\"]) for n in nics]
want = [(0, \"rxe0\", \"eth0\", \"Ethernet\", 2.5, \"ACTIVE\"), (1, \"rxe1\", \"eth1\", \"Ethernet\", 2.5, \"ACTIVE\")]
assert got == want, got
a, b = nics[0][\"pci\"], nics[1][\"pci\"]
assert a != b and j[\"matrix\"][a][b] == \"PHB\" and j[\"matrix\"][b][a] == \"PHB\", j[\"matrix\"]
print(\"ok topo: rails\", got, \"path\", j[\"matrix\"][a][b])
'
"
