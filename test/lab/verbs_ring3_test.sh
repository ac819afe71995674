#!/usr/bin/env bash
# ctest (label lab): railyard-bench's verbs ring with three ranks: three lab nodes, two rails, each
# rail a hub the three share (lab/: more than two nodes). Allreduce over odd sizes with every
# element checked, so each rank reduces what its predecessor wrote and writes to its successor on
# both rails (0 -> 1 -> 2 -> 0: every pair of nodes talks, as only a shared segment allows),
# every type; railyard-validate fleet over verbs naming a slowed NIC; then rank 2 killed
# mid-run, named by both of its neighbours (rank 1 writes to it, rank 0 waits for its writes)
# well within their timeout.
# Usage: REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
cd "$repo"
exec python3 lab/lab.py run --nodes 3 --rails 2 --timeout 800 -- "
set -e
BIN=$bin WORLD=3
. $repo/test/lab/verbs_node.sh
p=29600
for t in float half bfloat16 int32; do
  p=\$((p + 1))
  bench \$p allreduce --rails rxe0,rxe1 -d \$t -b 1000 -e 100000 -f 10 -c 1 >/tmp/out
  expect '# Out of bounds values : 0 OK'
  expect 'transport verbs, memory .*, 3 ranks, 2 rails'
  echo \"ok allreduce verbs, 3 ranks, \$t\"
done
# railyard-validate fleet over verbs among the three, node 2's rail-1 NIC slowed by tc: its pairs
# with both others are slow on rail 1, the third pair is not, so that NIC is named (ARP probe
# included: it hears both peers on the hub).
[ \$LAB_NODE != 2 ] || tc qdisc add dev eth1 root tbf rate 4mbit burst 32kb latency 400ms
st=0
timeout 400 $bin/railyard-validate fleet --transport verbs --rank \$LAB_NODE --world-size 3 \
  --rendezvous 10.100.0.1:29620 --rails rxe0,rxe1 --node-name lab\$LAB_NODE -s 256K -n 3 -w 1 \
  --timeout 60 --report /tmp/fleet.json >/tmp/out 2>&1 || st=\$?
[ \$LAB_NODE != 2 ] || tc qdisc del dev eth1 root
if [ \$LAB_NODE = 0 ]; then
  [ \$st = 1 ] || { cat /tmp/out; echo \"the fleet with a slow NIC exited \$st, not 1\" >&2; exit 1; }
  python3 -c \"
import json; r = json.load(open('/tmp/fleet.json'))
got = [(c['kind'], c['node'], c['rail']) for c in r['culprits']]
assert got == [('nic', 'lab2', 1)], r['culprits']
assert len(r['pairs']) == 3 * 2, r['pairs']
print('ok fleet over verbs among three nodes names lab2 rail 1:', r['culprits'][0]['evidence'])\"
else
  [ \$st = 0 ] || { cat /tmp/out; exit 1; }
fi
killed_mid_run 2 29610
"
