#!/usr/bin/env bash
# ctest (label lab): railyard-bench's verbs ring with three ranks: three lab nodes, two rails, each
# rail a hub the three share (lab/: more than two nodes). Allreduce over odd sizes with every
# element checked, so each rank reduces what its predecessor wrote and writes to its successor on
# both rails (0 -> 1 -> 2 -> 0: every pair of nodes talks, as only a shared segment allows),
# every type. (Rank 2 killed mid-run is named by both neighbours in 7-8 s, but not always: in
# 10 runs in a row on 2026-12-04, with the victim killed only once its queue pairs were in RTS,
# rank 1 named it in 7 s while rank 0 took 65 s, past its 60 s timeout, once. The cause is not
# the set-up race that killed_mid_run now avoids, and is not understood: out of ctest until it is.)
# (railyard-validate fleet over verbs among the three with a NIC slowed by tc named it in 4 runs
# by hand, but tbf's drops can oops rxe in the 6.1 guest kernel and hang that node: not in ctest.)
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
true
"
