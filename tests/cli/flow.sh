#!/bin/sh
# collsim run --model flow: the same table as the analytic engine (every
# column but the times and bandwidths), times that agree with it at 1 GiB
# where nothing contends, NCCL's NVLS/Tree/NVLSTree picks at every size,
# --exact and the note of an approximate fold, and one clear error for shapes the flow engine does not model. Skips (77) when the flow engine is not built in.
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1

"$COLLSIM" run --topo dgx-h100 --model flow -b 8 -e 8 >probe.txt 2>probe.err || {
    grep -q "unknown model 'flow'" probe.err && { echo "skip: flow engine not registered"; exit 77; }
}

for m in analytic flow; do
    "$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring --model "$m" -b 1M -e 1G -f 4 >"$m.txt" 2>"$m.err" \
        && ok "run-$m" || bad "run-$m ($(cat "$m.err"))"
done
head -1 flow.txt | grep -q '(model: flow)' && ok producer || bad producer
# every column but time/algbw/busbw (6-8, 10-12) is the same
cut_cols() { grep -v '^#' "$1" | awk '{print $1,$2,$3,$4,$5,$9,$13,$14,$15,$16,$17}'; }
cut_cols analytic.txt >a.cols
cut_cols flow.txt >f.cols
[ -s a.cols ] && cmp -s a.cols f.cols && ok same-columns || bad same-columns
# 1 GiB: times within 5% (docs/model-flow.md)
ta=$(awk '$1 == 1073741824 {print $6}' analytic.txt)
tf=$(awk '$1 == 1073741824 {print $6}' flow.txt)
awk -v a="$ta" -v f="$tf" 'BEGIN { r = f / a; exit !(a > 0 && r > 0.95 && r < 1.05) }' \
    && ok "agree-1GiB ($tf vs $ta us)" || bad "agree-1GiB ($tf vs $ta us)"
# deterministic
"$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring --model flow -b 1M -e 1G -f 4 >flow2.txt 2>/dev/null
[ -s flow.txt ] && cmp -s flow.txt flow2.txt && ok deterministic || bad deterministic
# NCCL's own picks on NVSwitch machines (NVLS on one node, Tree and
# NVLSTree on two) run at every size of a sweep
for n in 1 2; do
    "$COLLSIM" run --topo dgx-h100 --nodes $n -b 8 -e 1G -f 4 --model flow >sweep$n.txt 2>sweep$n.err
    rc=$?
    rows=$(grep -vc '^#' sweep$n.txt)
    [ "$rc" -eq 0 ] && [ "$rows" -eq 14 ] && ok "sweep-$n-nodes" || bad "sweep-$n-nodes (rc $rc, $rows rows: $(cat sweep$n.err))"
done
grep -q ' NVLS ' sweep1.txt && grep -q ' NVLSTree ' sweep2.txt && grep -q ' Tree ' sweep2.txt \
    && ok sweep-algos || bad sweep-algos
# NVLS at 1 GiB within 5% of the analytic engine (docs/model-flow.md)
for m in analytic flow; do
    "$COLLSIM" run --topo dgx-h100 --model "$m" -b 1G -e 1G >nvls-$m.txt 2>/dev/null
done
ta=$(awk '$1 == 1073741824 && $14 == "NVLS" {print $6}' nvls-analytic.txt)
tf=$(awk '$1 == 1073741824 && $14 == "NVLS" {print $6}' nvls-flow.txt)
awk -v a="$ta" -v f="$tf" 'BEGIN { r = f / a; exit !(a > 0 && r > 0.95 && r < 1.05) }' \
    && ok "nvls-agree-1GiB ($tf vs $ta us)" || bad "nvls-agree-1GiB ($tf vs $ta us)"
# --exact changes nothing where nothing is approximated, and the output
# says nothing about approximations there
"$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring --model flow -b 1M -e 1G -f 4 --exact >exact.txt 2>/dev/null
[ -s exact.txt ] && cmp -s flow.txt exact.txt && ! grep -q approximate flow.txt && ok exact-same || bad exact-same
"$COLLSIM" run --topo dgx-h100 --exact --dump 2>/dev/null | grep -qx 'exact=true' && ok exact-dump || bad exact-dump
# 2048 nodes: the ring leaves its pod through a core switch, so it repeats
# exactly only per 1024 nodes; the engine folds it to 2 nodes with averaged
# latencies, and the header says so with the sizes it applies to
"$COLLSIM" run --topo dgx-h100 --nodes 2048 --env NCCL_ALGO=Ring --model flow -b 1G -e 1G >big.txt 2>big.err
rc=$?
grep -q '^# approximate for 1 GiB: every ring simulated over 16 of its 16384 positions (2 of 2048 nodes)' big.txt \
    && [ "$rc" -eq 0 ] && [ "$(grep -vc '^#' big.txt)" -eq 1 ] && ok approx-noted || bad "approx-noted (rc $rc: $(cat big.err))"
# NVLS all-gather has no rank program: exit 2, one line naming the way out
# Each channel crosses the network through the NIC NCCL's search gave it
# (cs_comm_chan_nic), not the node's k-th NIC: lab 1's servers with the
# 1 GbE management port listed first still run over the two RoCE NICs
# (15.26 GB/s, as with the RDMA NICs first; 0.24 GB/s through eno1 before).
sed -e '/<nic id="mgmt"/d' -e 's|^\( *\)<nic id="rdma0"|\1<nic id="mgmt" type="eth-1g" ifname="eno1"/> <link a="cpu0" b="mgmt" type="pcie"/>\n&|' \
    "$top_srcdir/docs/labs/data/two-l40s-boxes.xml" >mgmt-first.xml
grep -n '<nic' mgmt-first.xml | head -1 | grep -q mgmt || bad "mgmt-first.xml: the edit did not put eno1 first"
for m in analytic flow; do
    for x in "$top_srcdir/docs/labs/data/two-l40s-boxes.xml" mgmt-first.xml; do
        "$COLLSIM" run --topo "$x" --env NCCL_IB_HCA=mlx5 --model "$m" -b 1G -e 1G 2>nic.err \
            | awk '$1 == 1073741824 {print $8}'
    done >nic-$m.txt
    set -- $(cat nic-$m.txt)
    [ $# -eq 2 ] && [ "$1" = "$2" ] && awk -v b="$1" 'BEGIN { exit !(b > 10) }' \
        && ok "nic-per-channel $m ($1, $2 GB/s)" || bad "nic-per-channel $m ($*; $(cat nic.err))"
done
# DGX A100: two NICs and two GPUs per PCIe switch; NCCL's rings pair
# each NIC with its own GPU for receiving and the other for sending, so
# no GPU's PCIe link carries two channels one way: the flow engine agrees
# with the analytic model at 1 GiB (114.6 vs 193.9 GB/s when both NICs'
# channels left through one GPU).
for m in analytic flow; do
    "$COLLSIM" run --topo dgx-a100 --nodes 2 --env NCCL_ALGO=Ring --model "$m" -b 1G -e 1G 2>a100.err \
        | awk '$1 == 1073741824 {print $8}'
done >a100.txt
set -- $(cat a100.txt)
[ $# -eq 2 ] && awk -v a="$1" -v f="$2" 'BEGIN { r = f / a; exit !(r > 0.95 && r < 1.05) }' \
    && ok "dgx-a100 ring (analytic $1, flow $2 GB/s)" || bad "dgx-a100 ring ($*; $(cat a100.err))"

# SendRecv and AlltoAll run as NCCL's p2p flows: the analytic engine's
# table but for times, which agree within 2% at 256 MiB where nothing but
# the pattern contends (one and two DGX H100, PXN on the rail fabric);
# the same output twice
for op in alltoall sendrecv; do
    for m in analytic flow; do
        "$COLLSIM" run --topo dgx-h100 --nodes 2 --op $op --model "$m" -b 1M -e 256M -f 16 >p2p-$op-$m.txt 2>p2p.err \
            || bad "p2p-$op-$m ($(cat p2p.err))"
    done
    cut_cols p2p-$op-analytic.txt >a.cols
    cut_cols p2p-$op-flow.txt >f.cols
    [ -s a.cols ] && cmp -s a.cols f.cols && grep -q ' P2P ' f.cols && ok "p2p-$op-columns" || bad "p2p-$op-columns"
    ta=$(awk '$1 == 268435456 {print $6}' p2p-$op-analytic.txt)
    tf=$(awk '$1 == 268435456 {print $6}' p2p-$op-flow.txt)
    awk -v a="$ta" -v f="$tf" 'BEGIN { r = f / a; exit !(a > 0 && r > 0.98 && r < 1.02) }' \
        && ok "p2p-$op-agree ($tf vs $ta us)" || bad "p2p-$op-agree ($tf vs $ta us)"
    "$COLLSIM" run --topo dgx-h100 --nodes 2 --op $op --model flow -b 1M -e 256M -f 16 >p2p-again.txt 2>/dev/null
    cmp -s p2p-$op-flow.txt p2p-again.txt && ok "p2p-$op-deterministic" || bad "p2p-$op-deterministic"
done
# ... and the packet engine carries their network part (lab 1's RoCE
# servers) where it is built in
if "$COLLSIM" run --topo dgx-h100 --model packet -b 8 -e 8 >/dev/null 2>&1; then
    for op in alltoall sendrecv; do
        "$COLLSIM" run "$top_srcdir/scenarios/lab-roce-fixed.ini" --op $op --model packet -b 4M -e 4M \
            >pk-$op.txt 2>pk.err
        rc=$?
        [ "$rc" -eq 0 ] && head -1 pk-$op.txt | grep -q '(model: packet)' \
            && awk '$1 == 4194304 && $14 == "P2P" && $8 > 0 { n++ } END { exit n != 1 }' pk-$op.txt \
            && ok "p2p-$op-packet" || bad "p2p-$op-packet (rc $rc: $(cat pk.err))"
    done
fi

"$COLLSIM" run --topo dgx-h100 --model flow --op allgather --env NCCL_ALGO=NVLS -b 1G -e 1G >ag.txt 2>ag.err
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <ag.err)" -eq 1 ] && grep -q 'flow engine: NVLS allgather has no rank program' ag.err \
    && ok refuse-nvls-allgather || bad "refuse-nvls-allgather (rc $rc: $(cat ag.err))"
exit $fail
