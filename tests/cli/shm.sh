#!/bin/sh
# The SHM transport (cs_shm.h, docs/model-analytic.md "SHM"): the
# host-memory limit of 4 DGX H100 GPUs with P2P off, the proxy's copy with
# NCCL_SHM_USE_CUDA_MEMCPY, the run note (socket crossing, NCCL's AMD
# P2P rule, one process's buffer placement), a refused NCCL_SHM_LOCALITY,
# the flow engine agreeing with the analytic one on an SHM ring, and the
# channel ceiling only on GPUs that copy both ways over SHM.
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1

busbw() { awk '!/^#/ && $1 == 1073741824 {print $8}' "$1"; }
near() { awk -v x="$1" -v want="$2" -v tol="$3" 'BEGIN { exit !(x > 0 && x >= want - tol && x <= want + tol) }'; }

# DGX H100, GPUs 0-3 (socket 0) with P2P off: each GPU sends and receives
# over SHM, so each of its 4 channels receives at most chan.shm.sm90 =
# 6 GB/s (its loads wait behind its own posted writes): 24 GB/s busbw, the
# measured 24.0 of a100-h100-dgx-4gpu-* table 4.
"$COLLSIM" run --topo dgx-h100 --gpus 4 --procs-per-node 1 --env NCCL_P2P_DISABLE=1 --env NCCL_NVLS_ENABLE=0 \
    -b 1G -e 1G >h100.txt 2>h100.err || bad "h100 ($(cat h100.err))"
b=$(busbw h100.txt)
near "$b" 24.0 0.05 && ok "channel-ceiling ($b GB/s)" || bad "channel-ceiling ($b GB/s, expected 24.0)"
grep -q ' SHM$' h100.txt && ok shm-transport || bad shm-transport
# DGX A100 (Rome), 4 GPUs: 2 channels x chan.shm.sm80 2.6 = 5.2 GB/s (the
# measured 5.20), in both engines; the links alone would give 7.6
for m in analytic flow; do
    "$COLLSIM" run --topo dgx-a100 --gpus 4 --procs-per-node 1 --env NCCL_P2P_DISABLE=1 --model $m \
        -b 1G -e 1G >a100$m.txt 2>/dev/null
    near "$(busbw a100$m.txt)" 5.2 0.05 && ok "a100-$m ($(busbw a100$m.txt))" || bad "a100-$m ($(busbw a100$m.txt), expected 5.2)"
done
# Point-to-point over SHM takes the same ceiling per channel: each channel's
# CTA loads the parts it receives from the host buffer behind its GPU's
# own writes (t_p2p; flow and simgrid: cs_flow_shm_cap, the batch's
# receiving works share it): SendRecv and AlltoAll 5.2 as the ring, where
# the links alone give 7.6 (the RTX PRO 6000 4-GPU SHM run measures
# sendrecv and alltoall at the ring's 13.1 GB/s)
for op in sendrecv alltoall; do
    for m in analytic flow; do
        "$COLLSIM" run --topo dgx-a100 --gpus 4 --procs-per-node 1 --env NCCL_P2P_DISABLE=1 --model $m --op $op \
            -b 1G -e 1G >p2p-$op-$m.txt 2>/dev/null
        b=$(busbw p2p-$op-$m.txt)
        near "$b" 5.2 0.05 && ok "p2p-ceiling-$op-$m ($b)" || bad "p2p-ceiling-$op-$m ($b, expected 5.2)"
    done
done
# Without the ceiling the host memory decides: 8 x DDR5-4800 x 8 B =
# 307.2 GB/s x eff.host.mem 0.75 / (4 edges x 2) = 28.8 GB/s busbw
printf '[params]\nchan.shm.sm90 = 1000\n' >nocap.ini
"$COLLSIM" run --topo dgx-h100 --gpus 4 --procs-per-node 1 --env NCCL_P2P_DISABLE=1 --env NCCL_NVLS_ENABLE=0 \
    --calibration nocap.ini -b 1G -e 1G >h100m.txt 2>h100m.err || bad "no ceiling ($(cat h100m.err))"
b=$(busbw h100m.txt)
near "$b" 28.8 0.05 && ok "host-memory-limit ($b GB/s)" || bad "host-memory-limit ($b GB/s, expected 28.8)"
# ... and a calibration with eff.host.mem 1.0 lifts it to the links' limit
# (63 GB/s x eff.pcie x eff.shm = 30.5)
printf '[params]\nchan.shm.sm90 = 1000\neff.host.mem = 1.0\n' >cal.ini
"$COLLSIM" run --topo dgx-h100 --gpus 4 --procs-per-node 1 --env NCCL_P2P_DISABLE=1 --env NCCL_NVLS_ENABLE=0 \
    --calibration cal.ini -b 1G -e 1G >h100c.txt 2>h100c.err || bad "calibrated ($(cat h100c.err))"
b2=$(busbw h100c.txt)
awk -v a="$b" -v c="$b2" 'BEGIN { exit !(c > a * 1.01) }' && ok "eff.host.mem ($b2 GB/s)" || bad "eff.host.mem ($b2 vs $b)"

# Broadcast of 2 RTX 2080 Ti: one-way sides at eff.shm.oneway 0.99; with
# the proxy's copy on both sides (MEMCPY_MODE=3) at eff.shm.ce 1.0: the
# busbw rises by 1/0.99.
"$COLLSIM" run --topo pcie --gpu rtx2080ti --gpus 2 --sockets 1 --p2p off --op broadcast -b 1G -e 1G >sm.txt 2>/dev/null
"$COLLSIM" run --topo pcie --gpu rtx2080ti --gpus 2 --sockets 1 --p2p off --op broadcast -b 1G -e 1G \
    --env NCCL_SHM_USE_CUDA_MEMCPY=1 --env NCCL_SHM_MEMCPY_MODE=3 >ce.txt 2>/dev/null
awk -v s="$(busbw sm.txt)" -v c="$(busbw ce.txt)" 'BEGIN { r = c / s; exit !(s > 0 && r > 1.005 && r < 1.015) }' \
    && ok "cuda-memcpy ($(busbw sm.txt) -> $(busbw ce.txt))" || bad "cuda-memcpy ($(busbw sm.txt) -> $(busbw ce.txt))"
grep -q 'NCCL_SHM_USE_CUDA_MEMCPY=1: the proxy.s cudaMemcpy does both sides' ce.txt && ok ce-note || bad ce-note
# the mode alone changes nothing
"$COLLSIM" run --topo pcie --gpu rtx2080ti --gpus 2 --sockets 1 --p2p off --op broadcast -b 1G -e 1G \
    --env NCCL_SHM_MEMCPY_MODE=3 >mode.txt 2>/dev/null
[ "$(busbw mode.txt)" = "$(busbw sm.txt)" ] && ok mode-alone || bad "mode-alone ($(busbw mode.txt))"

# Notes: a pair across sockets, one process driving both GPUs
"$COLLSIM" run --topo pcie --gpu rtx4090 --gpus 2 --sockets 2 --p2p off --procs-per-node 1 -b 1M -e 1M >x.txt 2>/dev/null
grep -q '# SHM: 1 GPU pair of node 0 moves data through host memory' x.txt && grep -q '1 cross a socket link' x.txt \
    && grep -q 'one process drives several GPUs' x.txt && ok note-cross || bad note-cross
# one process per GPU: no placement caveat
"$COLLSIM" run --topo pcie --gpu rtx4090 --gpus 2 --sockets 2 --p2p off -b 1M -e 1M >y.txt 2>/dev/null
grep -q '# SHM:' y.txt && ! grep -q 'one process drives' y.txt && ok note-procs || bad note-procs
# AMD host, 8 GPUs: SYS pairs are SHM by NCCL's rule, and the note names the fix
"$COLLSIM" run --topo "$top_srcdir/topologies/pcie-2socket.xml" -b 1M -e 1M >amd.txt 2>/dev/null
grep -q 'NCCL_P2P_LEVEL=SYS lets them use P2P' amd.txt && ok note-amd || bad note-amd
"$COLLSIM" run --topo "$top_srcdir/topologies/pcie-2socket.xml" --env NCCL_P2P_LEVEL=SYS -b 1M -e 1M >amd2.txt 2>/dev/null
! grep -q 'NCCL_P2P_LEVEL=SYS lets' amd2.txt && ok note-amd-set || bad note-amd-set
# NVLink machine: no SHM note
"$COLLSIM" run --topo dgx-h100 -b 1M -e 1M >nv.txt 2>/dev/null
! grep -q '# SHM:' nv.txt && ok no-note || bad no-note

# NCCL_SHM_LOCALITY other than 1 or 2: one line, exit 2
"$COLLSIM" run --topo pcie --gpu rtx2080ti --gpus 2 --p2p off --env NCCL_SHM_LOCALITY=3 -b 1M -e 1M >bad.txt 2>bad.err
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <bad.err)" -eq 1 ] && grep -q 'NCCL_SHM_LOCALITY=3' bad.err && [ ! -s bad.txt ] \
    && ok bad-locality || bad "bad-locality (rc $rc: $(cat bad.err))"

# flow agrees with analytic on a 2-GPU SHM all-reduce at 1 GiB (within 5%)
if "$COLLSIM" run --topo pcie --gpu rtx2080ti --gpus 2 --sockets 1 --p2p off --model flow -b 1G -e 1G >f.txt 2>/dev/null; then
    "$COLLSIM" run --topo pcie --gpu rtx2080ti --gpus 2 --sockets 1 --p2p off -b 1G -e 1G >a.txt 2>/dev/null
    awk -v a="$(busbw a.txt)" -v f="$(busbw f.txt)" 'BEGIN { r = f / a; exit !(a > 0 && r > 0.95 && r < 1.05) }' \
        && ok "flow-agrees ($(busbw f.txt) vs $(busbw a.txt))" || bad "flow-agrees ($(busbw f.txt) vs $(busbw a.txt))"
fi
# Across nodes a node's ring enters at one GPU and leaves at another: on 2
# nodes x 2 DGX A100 GPUs with P2P off, GPU 0 sends over SHM and receives
# from the network, GPU 1 the reverse, so neither GPU's loads wait behind
# its own posted writes and the per-channel SHM ceiling does not apply:
# both engines give the network's rate (22.3), not 2 x 2.6 = 5.2
x="--topo dgx-a100 --gpus 2 --nodes 2 --env NCCL_P2P_DISABLE=1 --env NCCL_ALGO=Ring -b 1G -e 1G"
for m in analytic flow; do
    "$COLLSIM" run $x --model $m >oneway-$m.txt 2>/dev/null
    awk -v b="$(busbw oneway-$m.txt)" 'BEGIN { exit !(b > 20 && b < 25) }' && ok "one-way-shm-$m ($(busbw oneway-$m.txt))" \
        || bad "one-way-shm-$m ($(busbw oneway-$m.txt), expected 20-25: the SHM channel ceiling applied to one-way GPUs)"
done
# Tree over SHM: every GPU of a node's chain copies both ways, and each
# channel's CTA loads all its SHM bytes (S from each chain neighbour)
# behind its own posted writes, at most chan.shm.sm80 2.6 GB/s: 4 DGX A100
# GPUs, 2 channels, an inner GPU loads 2 S: busbw 1.5 x 2 x 2.6 / 2 = 3.9;
# 2 nodes x 2 GPUs, each GPU loads S: 7.8 (not the network's 33), both engines
for m in analytic flow; do
    "$COLLSIM" run --topo dgx-a100 --gpus 4 --env NCCL_P2P_DISABLE=1 --env NCCL_ALGO=Tree --model $m -b 1G -e 1G \
        >tree1-$m.txt 2>/dev/null
    "$COLLSIM" run $x --env NCCL_ALGO=Tree --model $m >tree2-$m.txt 2>/dev/null
    near "$(busbw tree1-$m.txt)" 3.9 0.1 && near "$(busbw tree2-$m.txt)" 7.8 0.1 \
        && ok "tree-shm-$m ($(busbw tree1-$m.txt) $(busbw tree2-$m.txt))" \
        || bad "tree-shm-$m ($(busbw tree1-$m.txt) $(busbw tree2-$m.txt), expected 3.9 and 7.8)"
done
# 8 DGX A100 GPUs with P2P off: NCCL crosses the sockets through a NIC
# loopback (nic0 out, nic4 in); one node has no switch for the flow engine
# to route it through: one line naming the pair and the way out, exit 2
"$COLLSIM" run --topo dgx-a100 --env NCCL_P2P_DISABLE=1 --model flow -b 1G -e 1G >loop.txt 2>loop.err
rc=$?
[ $rc -eq 2 ] && [ ! -s loop.txt ] && [ "$(wc -l <loop.err)" -eq 1 ] &&
    grep -q "NCCL loops this pair back through the network (nic[0-9] to nic[0-9]), and the topology has no switch" loop.err \
    && ok "nic-loopback-refused" || bad "nic-loopback-refused (exit $rc: $(cat loop.err))"
# the proxy's cudaMemcpy serves Simple only: an LL128 broadcast is priced the same with and
# without it (analytic and flow alike), a Simple one is not
x="--topo pcie --gpu rtx2080ti --gpus 2 --sockets 1 --p2p off --op broadcast -b 1G -e 1G --env NCCL_SHM_MEMCPY_MODE=3"
for m in analytic flow; do
    for pr in LL128 Simple; do
        for ce in 0 1; do
            "$COLLSIM" run $x --model $m --env NCCL_PROTO=$pr --env NCCL_SHM_USE_CUDA_MEMCPY=$ce >ce-$m-$pr-$ce.txt 2>/dev/null
        done
    done
    [ -n "$(busbw ce-$m-LL128-0.txt)" ] && [ "$(busbw ce-$m-LL128-0.txt)" = "$(busbw ce-$m-LL128-1.txt)" ] &&
        [ "$(busbw ce-$m-Simple-0.txt)" != "$(busbw ce-$m-Simple-1.txt)" ] && ok "copy-engine-simple-only-$m" \
        || bad "copy-engine-simple-only-$m ($(busbw ce-$m-LL128-0.txt) $(busbw ce-$m-LL128-1.txt) $(busbw ce-$m-Simple-0.txt) $(busbw ce-$m-Simple-1.txt))"
done
exit $fail
