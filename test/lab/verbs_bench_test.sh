#!/usr/bin/env bash
# ctest (label lab): railyard-bench's verbs transport on a real RDMA stack: two lab nodes (qemu,
# soft-RoCE), two rails, rank per node. Allreduce for every type over odd sizes with every element
# checked (rails named as RDMA devices, then as netdevs); p2p per rail; railyard-validate fleet
# over verbs (its pair tests and its bisection ring); a rank killed mid-run named by the other.
# Usage: REPO BIN_DIR
set -euo pipefail
repo=$1 bin=$2
cd "$repo"
exec python3 lab/lab.py run --nodes 2 --rails 2 --timeout 600 -- "
set -e
BIN=$bin WORLD=2
. $repo/test/lab/verbs_node.sh
p=29500
for t in float half bfloat16 int32; do
  p=\$((p + 1))
  bench \$p allreduce --rails rxe0,rxe1 -d \$t -b 1000 -e 300000 -f 17 -c 1 >/tmp/out
  expect '# Out of bounds values : 0 OK'
  echo \"ok allreduce verbs \$t\"
done
# The same rails named by their netdevs.
bench 29510 allreduce --rails eth0,eth1 -b 4096 -e 65536 -f 16 -c 1 >/tmp/out
expect '# Out of bounds values : 0 OK'
expect 'rail 1: verbs rxe1:1 gid 1 (RoCE v2'
expect 'IPv4-mapped address), mtu 1024, host memory'
echo 'ok allreduce verbs, rails named eth0,eth1'
bench 29511 p2p --rails rxe0,rxe1 -b 65536 -e 1048576 -f 16 -c 1 >/tmp/out
expect 'rail 1'
echo 'ok p2p verbs per rail'
# railyard-validate fleet over verbs: the pair test and the bisection's ring move bytes on every
# rail (the verdict of a 2-node fleet on one vCPU per node compares its two rails only: not
# asserted here, the simulated fleet tests it).
fleet() { port=\$1; shift; timeout 200 $bin/railyard-validate fleet --transport verbs \
  --rank \$LAB_NODE --world-size 2 --rendezvous 10.100.0.1:\$port --rails rxe0,rxe1 \
  --node-name lab\$LAB_NODE -s 256K -n 3 -w 1 --timeout 60 \"\$@\"; }
fleet 29520 --report /tmp/fleet.json >/tmp/out
[ \$LAB_NODE = 1 ] || python3 -c \"
import json; r = json.load(open('/tmp/fleet.json'))
assert sorted(p['rail'] for p in r['pairs']) == [0, 1] and all(p['busbw'] > 0 for p in r['pairs']), r['pairs']
print('ok fleet pairwise over verbs:', ', '.join('rail %d %.4f GB/s' % (p['rail'], p['busbw']) for p in r['pairs']))\"
fleet 29521 --mode bisect --report /tmp/bisect.json >/tmp/out
[ \$LAB_NODE = 1 ] || python3 -c \"
import json; r = json.load(open('/tmp/bisect.json'))
ring = r['rings'][0]
assert ring['members'] == ['lab0', 'lab1'] and all(b > 0 for b in ring['busbw']), ring
print('ok fleet bisection ring over verbs:', ring['busbw'])\"
# Rank 1 killed in the middle of a run: rank 0 names it and fails, well within its timeout.
killed_mid_run 1 29512
"
