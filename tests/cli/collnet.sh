#!/bin/sh
# CollNet (SHARP in-network reduction) end to end: NCCL_COLLNET_ENABLE=1
# chooses CollNet all-reduce on InfiniBand and says what it assumes; on
# RoCE it stays off with the reason; NCCL_ALGO forces CollNetChain (the
# COLLNETCHAIN spelling of the coreweave runs); the analytic and flow
# engines price it within a few percent of each other; simgrid and packet
# refuse it with one line; topo graph prints NCCL's CollNet lines.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"
cd "$tmp" || exit 1

ib="--topo dgx-a100 --nodes 8 --nic ib-hdr --nics-per-node 4"
# shellcheck disable=SC2086
"$COLLSIM" run $ib --env NCCL_COLLNET_ENABLE=1 -b 1G -e 1G >ib.txt 2>ib.err && ok ib-exit || bad ib-exit
grep -q '^# collnet: NCCL_COLLNET_ENABLE=1 on InfiniBand: CollNet (SHARP in-network reduction) on, assuming Quantum switches with SHARP and the SHARP plugin' ib.txt \
    && ok ib-note || bad ib-note
grep -v '^#' ib.txt | grep -q ' CollNetChain  *Simple  *12 ' && ok ib-collnet || bad ib-collnet
# without the variable: no CollNet, no note
# shellcheck disable=SC2086
"$COLLSIM" run $ib -b 1G -e 1G >plain.txt && ! grep -q CollNet plain.txt && ! grep -q '^# collnet:' plain.txt \
    && ok off-by-default || bad off-by-default

"$COLLSIM" run --topo dgx-a100 --nodes 8 --nic roce-100g --nics-per-node 4 --env NCCL_COLLNET_ENABLE=1 \
    -b 1G -e 1G >roce.txt 2>roce.err && ok roce-exit || bad roce-exit
grep -q '^# collnet: NCCL_COLLNET_ENABLE=1: CollNet (SHARP) stays off: .*RoCE' roce.txt && ok roce-note || bad roce-note
! grep -v '^#' roce.txt | grep -q CollNet && ok roce-no-collnet || bad roce-no-collnet

# forced, NCCL's upper-case spelling; every size CollNetChain, both engines
for m in analytic flow; do
    # shellcheck disable=SC2086
    "$COLLSIM" run $ib --env NCCL_COLLNET_ENABLE=1 --env NCCL_ALGO=COLLNETCHAIN -b 64K -e 64M -f 8 \
        --model $m >forced-$m.txt 2>&1 && ok "forced-$m-exit" || bad "forced-$m-exit"
    [ "$(grep -v '^#' forced-$m.txt | grep -c ' CollNetChain ')" -eq 4 ] && ok "forced-$m" || bad "forced-$m"
done
# analytic and flow within 10% at 32 MiB (the same mechanism, closed form
# against simulation)
a=$(grep -v '^#' forced-analytic.txt | awk '$1 == 33554432 { print $6 }')
f=$(grep -v '^#' forced-flow.txt | awk '$1 == 33554432 { print $6 }')
awk -v a="$a" -v f="$f" 'BEGIN { r = a / f; exit !(r > 0.9 && r < 1.1) }' && ok "analytic-flow ($a / $f us)" \
    || bad "analytic-flow ($a / $f us)"

# refusals: one line on stderr, exit 2
for m in simgrid packet; do
    # shellcheck disable=SC2086
    "$COLLSIM" run $ib --env NCCL_COLLNET_ENABLE=1 --env NCCL_ALGO=CollNetChain -b 1M -e 1M --model $m \
        >ref-$m.txt 2>ref-$m.err
    rc=$?
    if [ "$m" = simgrid ] && grep -q "not built\|unknown model\|not available" ref-$m.err; then
        ok "refuse-$m (skipped: engine not built)"
        continue
    fi
    [ $rc -eq 2 ] && [ "$(wc -l <ref-$m.err)" -eq 1 ] &&
        grep -q "^collsim: $m engine: CollNetChain (SHARP in-network reduction) is not modelled by the $m engine" ref-$m.err \
        && ok "refuse-$m" || bad "refuse-$m ($rc: $(cat ref-$m.err))"
done

# NCCL_COLLNET_NODE_THRESHOLD above the node count: off, said
# shellcheck disable=SC2086
"$COLLSIM" run $ib --env NCCL_COLLNET_ENABLE=1 --env NCCL_COLLNET_NODE_THRESHOLD=9 -b 1G -e 1G >thr.txt &&
    grep -q '^# collnet: .*8 nodes, fewer than NCCL_COLLNET_NODE_THRESHOLD (9)' thr.txt && ok threshold || bad threshold

# topo graph: the CollNet graphs (chain pattern 3, direct pattern 6) and
# connect.cc's lines
"$COLLSIM" topo graph dgx-a100 --nodes 8 --nic ib-hdr --nics-per-node 4 --env NCCL_COLLNET_ENABLE=1 -r 0 >g.txt &&
    [ "$(grep -c 'NCCL INFO Pattern' g.txt)" -eq 4 ] && grep -q 'NCCL INFO Pattern 6, crossNic 0, nChannels 4' g.txt &&
    grep -q 'NCCL INFO CollNetDirect channel 11 rank 0 down  1  2  3  4  5  6  7 nDown 7 up  1  2  3 heads  0  1  2  3 nUp 3 nHeads 4 headRank 0 out 64 shift 0$' g.txt &&
    grep -q 'NCCL INFO Connected Collnet Chains  \[0\] 1->0->64 ' g.txt && ok graph-lines || bad graph-lines
"$COLLSIM" topo graph dgx-a100 --nodes 8 --nic ib-hdr --nics-per-node 4 -r 0 >g0.txt &&
    [ "$(grep -c 'NCCL INFO Pattern' g0.txt)" -eq 2 ] && ! grep -q CollNet g0.txt && ok graph-off || bad graph-off
# a bad NCCL_COLLNET_NODE_THRESHOLD is one line even with CollNet off
"$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_COLLNET_NODE_THRESHOLD=x -b 1M -e 1M >thr.txt 2>thr.err
[ $? -eq 2 ] && [ "$(wc -l <thr.err)" -eq 1 ] && grep -q 'NCCL_COLLNET_NODE_THRESHOLD=x' thr.err && ok bad-threshold \
    || bad "bad-threshold: $(cat thr.err)"

# one node: the line says CollNet stays off and why
"$COLLSIM" run --topo dgx-h100 -b 64M -e 64M --env NCCL_COLLNET_ENABLE=1 >one.txt 2>&1 &&
    grep -q '^# collnet: NCCL_COLLNET_ENABLE=1: CollNet (SHARP) stays off: one node' one.txt && ok one-node-note \
    || bad "one-node-note: $(grep collnet one.txt)"
# a job's own NCCL_COLLNET_ENABLE: the jobs header says what that job assumed
printf '[scenario]\nmodel = flow\n[topology]\npreset = dgx-h100\nnodes = 2\n[job a]\ngpus = 0-3\nsize = 64M\nNCCL_COLLNET_ENABLE = 1\n[job b]\ngpus = 4-7\nsize = 64M\n' >cj.ini
"$COLLSIM" run cj.ini >cj.txt 2>cj.err && grep -q '^# job a: collnet: NCCL_COLLNET_ENABLE=1 on InfiniBand' cj.txt &&
    ! grep -q '^# job b: collnet' cj.txt && ok job-note || bad "job-note: $(cat cj.err; grep '^#' cj.txt)"

exit $fail
