#!/bin/sh
# CollNet (SHARP in-network reduction) end to end: NCCL_COLLNET_ENABLE=1
# chooses CollNet all-reduce on InfiniBand and says what it assumes; on
# RoCE it stays off with the reason; NCCL_ALGO forces CollNetChain (the
# COLLNETCHAIN spelling of the coreweave runs); the analytic and flow
# engines price it within a few percent of each other; simgrid refuses it
# with one line; the packet engine reduces in the switches (SHARP) and
# agrees with the flow engine where nothing congests, every tree link
# carrying the slice once each way; topo graph prints NCCL's CollNet lines.
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
for m in simgrid; do
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

# packet engine: SHARP aggregation in the switches (docs/model-packet.md,
# "SHARP"). Bandwidth-bound sizes within 5% of the flow engine (the same
# trees; the flow engine charges eff.net 0.97, IB framing and ACKs cost
# about 1.2%); at small sizes the packets' streaming aggregation sends the
# result down while the slice still goes up, which the flow engine's
# UP -> ROOT -> DOWN steps do not, so packets may be faster there
# (CollNetDirect, measured: 10% at 1 MiB, 5.5% at 16 MiB), never slower by
# more than 5%.
for a in CollNetChain CollNetDirect; do
    for m in flow packet; do
        # shellcheck disable=SC2086
        "$COLLSIM" run --topo dgx-a100 --nodes 16 --nic ib-hdr --nics-per-node 4 --fabric fat-tree \
            --env NCCL_COLLNET_ENABLE=1 --env NCCL_ALGO=$a -b 1M -e 256M -f 16 --model $m >pk-$a-$m.txt 2>&1 \
            && ok "pk-$a-$m-exit" || bad "pk-$a-$m-exit: $(tail -1 pk-$a-$m.txt)"
    done
    [ "$(grep -v '^#' pk-$a-packet.txt | grep -c " $a ")" -eq 3 ] && ok "pk-$a-algo" || bad "pk-$a-algo"
    for sz in 1048576 16777216 268435456; do
        f=$(grep -v '^#' pk-$a-flow.txt | awk -v s=$sz '$1 == s { print $6 }')
        p=$(grep -v '^#' pk-$a-packet.txt | awk -v s=$sz '$1 == s { print $6 }')
        lo=0.85; [ $sz -eq 268435456 ] && lo=0.95
        awk -v p="$p" -v f="$f" -v lo=$lo 'BEGIN { r = p / f; exit !(r > lo && r < 1.05) }' \
            && ok "pk-$a-$sz ($p / $f us)" || bad "pk-$a-$sz ($p / $f us)"
    done
done
grep -q '^# packet engine: CollNet on SHARP' pk-CollNetChain-packet.txt && ok pk-note || bad pk-note
# link statistics (--json, every port): the slice of 64 MiB over 4 rails
# is 16 MiB, 4096 packets of 4096 B; every link of a tree carries them
# once each way (data one way, its ACKs the other: 8192 packets), a link
# that m rails' trees share m times, each NIC's link exactly once; and the
# switches' counters (-v) reduce them
"$COLLSIM" run --topo dgx-a100 --nodes 16 --nic ib-hdr --nics-per-node 4 --fabric fat-tree \
    --env NCCL_COLLNET_ENABLE=1 --env NCCL_ALGO=CollNetChain -b 64M -e 64M --model packet -v --json pk.json \
    >pk-v.txt 2>&1 && ok pk-json-exit || bad "pk-json-exit: $(tail -1 pk-v.txt)"
tr '{' '\n' <pk.json | sed -n 's/.*"link": "\([^"]*\)", "prio": [0-9]*, "tx_pkts": \([0-9]*\).*/\1 \2/p' >ports.txt
awk '$4 > 0 { n++; m = $4 / 8192; k = int(m + 0.5); if (k < 1 || m - k > 0.001 * k || k - m > 0.001 * k) bad++;
              if (($1 ~ /nic/ || $3 ~ /nic/) && k != 1) bad++ }
     END { exit !(n >= 128 && bad == 0) }' ports.txt && ok "pk-tree-links ($(awk '$4 > 0' ports.txt | wc -l) ports)" \
    || bad "pk-tree-links: $(awk '$4 > 0' ports.txt | head -5)"
grep -q 'SHARP aggregation: 12 trees over [0-9]* switches, packets reduced [1-9]' pk-v.txt && ok pk-counters \
    || bad "pk-counters: $(grep -o 'SHARP aggregation[^;]*' pk-v.txt)"
# the same counters in --json's network object: the totals -v prints, and
# per switch (their reductions add up to the total)
vred=$(sed -n 's/.*SHARP aggregation: [0-9]* trees over \([0-9]*\) switches, packets reduced \([0-9]*\), copies sent down \([0-9]*\).*/\1 \2 \3/p' pk-v.txt | head -1)
jred=$(grep -o '"sharp_reduced": [0-9]*, "sharp_copies_down": [0-9]*' pk.json | head -1 | tr -dc '0-9 ' | awk '{ print $1, $2 }')
jsw=$(tr '{' '\n' <pk.json | sed -n 's/^"name": "[^"]*", "reduced": \([0-9]*\), "copies_down": [0-9]*, "held_max": [0-9]*}.*/\1/p' |
      awk '{ n++; s += $1 } END { print n + 0, s + 0 }')
[ -n "$vred" ] && [ "$(echo "$vred" | awk '{ print $2, $3 }')" = "$jred" ] &&
    [ "$jsw" = "$(echo "$vred" | awk '{ print $1, $2 }')" ] && ok "pk-json-sharp ($jred; $jsw)" \
    || bad "pk-json-sharp: -v '$vred', json '$jred', switches '$jsw'"
# RoCE: NCCL runs CollNet over InfiniBand SHARP only; forcing it is refused
"$COLLSIM" run --topo dgx-a100 --nodes 8 --nic roce-100g --nics-per-node 4 --env NCCL_COLLNET_ENABLE=1 \
    --env NCCL_ALGO=CollNetChain -b 1M -e 1M --model packet >pk-roce.txt 2>pk-roce.err
[ $? -eq 2 ] && [ "$(wc -l <pk-roce.err)" -eq 1 ] && grep -q 'NCCL_ALGO=CollNetChain: no algorithm allowed' pk-roce.err \
    && ok pk-roce-refused || bad "pk-roce-refused: $(cat pk-roce.err)"
# two [job]s with their own SHARP trees on one packet network: each within
# 5% of the flow engine's time, and the header says what SHARP assumes
for m in flow packet; do
    printf '[scenario]\nmodel = %s\n[topology]\npreset = dgx-h100\nnodes = 2\n[job a]\ngpus = 0-3\nsize = 64M\nNCCL_COLLNET_ENABLE = 1\n[job b]\ngpus = 4-7\nsize = 64M\nNCCL_COLLNET_ENABLE = 1\n' \
        "$m" >pj-$m.ini
    "$COLLSIM" run pj-$m.ini >pj-$m.txt 2>&1 || bad "pk-jobs-$m-exit: $(tail -1 pj-$m.txt)"
done
grep -q '^# packet engine: CollNet on SHARP' pj-packet.txt && ok pk-jobs-note || bad pk-jobs-note
for j in a b; do
    f=$(awk -v j=$j '$1 == j { print $12 }' pj-flow.txt)
    p=$(awk -v j=$j '$1 == j { print $12 }' pj-packet.txt)
    grep -q "^  $j .* CollNet" pj-packet.txt && awk -v p="$p" -v f="$f" 'BEGIN { r = p / f; exit !(r > 0.95 && r < 1.05) }' \
        && ok "pk-jobs-$j ($p / $f us)" || bad "pk-jobs-$j ($p / $f us)"
done

# job b on NCCL_IB_SL 2: its SHARP trees (rails 4-7) carry its data on
# VL 2, job a's (rails 0-3) on VL 0 (--link-stats' network counters)
sed 's/model = flow/model = packet/' pj-flow.ini >pv.ini && printf 'NCCL_IB_SL = 2\n' >>pv.ini
"$COLLSIM" run pv.ini --link-stats >pv.txt 2>&1 &&
    grep -q '^# packet engine: \[job b\]: data on VL 2' pv.txt &&
    grep -Eq '^# +2 +[0-9]+ .* rail[4-7]\.leaf0 -> ' pv.txt && grep -Eq '^# +0 +[0-9]+ .* rail[0-3]\.leaf0 -> ' pv.txt &&
    ! grep -Eq '^# +0 +[0-9]+ .* rail[4-7]\.leaf0 -> ' pv.txt && ! grep -Eq '^# +2 +[0-9]+ .* rail[0-3]\.leaf0 -> ' pv.txt \
    && grep -q '^#  SHARP aggregation: packets reduced [1-9][0-9]*, copies sent down [1-9]' pv.txt \
    && ok pk-jobs-vl || bad "pk-jobs-vl: $(grep -E '^# +[0-9] +[0-9]+ ' pv.txt | head -12)"

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
