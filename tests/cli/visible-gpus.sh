#!/bin/sh
# --visible-gpus / [topology] visible-gpus: the GPUs a process sees with
# CUDA_VISIBLE_DEVICES, as the DGX-1 pair runs in shared/data/real pick
# them: the kept GPUs reach each other over the machine's own paths
# (GPUs 0 and 3 of a DGX-1 share two NVLinks, 0 and 2 one), --gpus counts
# among them, a scenario gives the same as the flag, and a bad list is
# one line with exit 2.
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1

row() { awk '!/^#/ && $1 == 33554432 {print $8, $(NF-1), $NF}' "$1"; }
run() { "$COLLSIM" run --topo dgx1-v100 --procs-per-node 1 -b 32M -e 32M "$@"; }

run --visible-gpus 0,3 >nv2.txt 2>nv2.err || bad "0,3 ($(cat nv2.err))"
run --visible-gpus 0,2 >nv1.txt 2>nv1.err || bad "0,2 ($(cat nv1.err))"
run --gpus 2 >first.txt 2>first.err || bad "gpus 2 ($(cat first.err))"
set -- $(row nv2.txt); b2=$1; ch2=$2; x2=$3
set -- $(row nv1.txt); b1=$1; ch1=$2; x1=$3
# two NVLinks carry twice one NVLink's channels and bandwidth
[ "$x2" = P2P/NVL ] && [ "$x1" = P2P/NVL ] && ok "nvlink ($x1, $x2)" || bad "nvlink ($x1, $x2)"
[ "$ch2" -eq $((2 * ch1)) ] && ok "channels ($ch1 -> $ch2)" || bad "channels ($ch1 -> $ch2)"
awk -v a="$b1" -v b="$b2" 'BEGIN { exit !(a > 0 && b > 1.8 * a) }' && ok "busbw ($b1 -> $b2)" || bad "busbw ($b1 -> $b2)"
grep -q '^# Topology: .*GPUs 0,3 of each node (visible-gpus)' nv2.txt && ok described || bad described
# with P2P off the same pair goes through host memory
run --visible-gpus 0,2 --env NCCL_P2P_DISABLE=1 >shm.txt 2>/dev/null
set -- $(row shm.txt)
[ "${3:-}" = SHM ] && ok "shm ($1 GB/s)" || bad "shm (${3:-none})"
# --gpus N takes the first N GPUs in the list's order (CUDA_VISIBLE_DEVICES
# with nccl-tests -g N): 6,0,1 with --gpus 2 is GPUs 0 and 6 (across the
# sockets), not 0 and 1 (one NVLink)
run --visible-gpus 6,0,1 --gpus 2 >ord.txt 2>ord.err || bad "6,0,1 --gpus 2 ($(cat ord.err))"
run --visible-gpus 0,6 >s06.txt 2>/dev/null
[ -n "$(row ord.txt)" ] && [ "$(row ord.txt)" = "$(row s06.txt)" ] && ok "list order: $(row ord.txt)" \
    || bad "list order: '$(row ord.txt)' vs 0,6 '$(row s06.txt)'"
# 0-1 is --gpus 2; --gpus 2 of 0-3 is the same again
run --visible-gpus 0-1 >r01.txt 2>/dev/null
run --visible-gpus 0-3 --gpus 2 >r03.txt 2>/dev/null
[ "$(row r01.txt)" = "$(row first.txt)" ] && [ "$(row r03.txt)" = "$(row first.txt)" ] \
    && ok "ranges and gpus ($(row first.txt))" || bad "ranges and gpus ($(row r01.txt) / $(row r03.txt) / $(row first.txt))"
# the pcie presets: --gpus builds the server, --visible-gpus picks from it
"$COLLSIM" run --topo pcie --gpu a40 --gpus 8 --visible-gpus 0,1,6,7 --nvlink-bridge pairs -b 1M -e 1M >pcie.txt 2>/dev/null
[ "$(grep -c '^#  Rank' pcie.txt)" -eq 4 ] && ok pcie-ranks || bad "pcie-ranks ($(grep -c '^#  Rank' pcie.txt))"
# a scenario key gives the flag's result and survives --dump
printf '[topology]\npreset = dgx1-v100\nvisible-gpus = 0,3\n' >s.ini
"$COLLSIM" run -s s.ini --procs-per-node 1 -b 32M -e 32M >s.txt 2>/dev/null
[ "$(row s.txt)" = "$(row nv2.txt)" ] && ok scenario || bad "scenario ($(row s.txt))"
"$COLLSIM" run -s s.ini --dump | grep -qx 'visible-gpus=0,3' && ok dump || bad dump
# nodes of different sizes (a file of two <node>s, 2 and 8 GPUs): 0,1
# keeps GPUs 0 and 1 of each, 4 ranks; the larger node's GPUs beyond the
# smaller's are not named (select_visible read past its list for them)
node() {
    printf '  <node id="%s">\n    <cpu id="cpu0" vendor="amd"/>\n    <pcisw id="sw0"/>\n' "$1"
    printf '    <link a="cpu0" b="sw0" type="pcie" gen="4" width="16"/>\n'
    i=0
    while [ $i -lt "$2" ]; do
        printf '    <gpu id="gpu%d" model="a100-sxm"/>\n    <link a="sw0" b="gpu%d" type="pcie"/>\n' $i $i
        i=$((i + 1))
    done
    printf '    <nic id="nic0" type="roce-200g"/>\n    <link a="sw0" b="nic0" type="pcie"/>\n  </node>\n'
}
{
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<collsim-topology version="1" description="2 and 8 GPUs">\n'
    node a 2
    node b 8
    printf '  <fabric kind="rail">\n    <switch id="rail0" tier="0"/>\n'
    printf '    <link a="n0.nic0" b="rail0"/>\n    <link a="n1.nic0" b="rail0"/>\n  </fabric>\n</collsim-topology>\n'
} >het.xml
"$COLLSIM" run --topo het.xml --visible-gpus 0,1 -b 1M -e 1M >het.txt 2>het.err || bad "uneven nodes ($(cat het.err))"
[ "$(grep -c '^#  Rank' het.txt)" -eq 4 ] && [ "$(grep -c '^#  Rank.* node1 device  [01] ' het.txt)" -eq 2 ] \
    && ok uneven-nodes || bad "uneven-nodes ($(grep -c '^#  Rank' het.txt) ranks)"
# bad input: one line, exit 2
"$COLLSIM" run --topo dgx1-v100 --visible-gpus 0,9 >o.txt 2>e.txt; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <e.txt)" -eq 1 ] && [ ! -s o.txt ] && \
    grep -qx 'collsim: --visible-gpus: GPU 9 does not exist; expected 0 to 7 (the GPUs of each node of dgx1-v100)' e.txt \
    && ok bad-index || bad "bad-index (rc $rc: $(cat e.txt))"
# --gpus beyond the GPUs the list keeps: the bound is the list's, said so
"$COLLSIM" run --topo dgx1-v100 --visible-gpus 0,1 --gpus 4 >o.txt 2>e.txt; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <e.txt)" -eq 1 ] && [ ! -s o.txt ] && \
    grep -qx 'collsim: --gpus: 4 GPUs per node requested; expected at most 2, the GPUs of each node of dgx1-v100 that visible-gpus keeps' e.txt \
    && ok gpus-beyond-list || bad "gpus-beyond-list (rc $rc: $(cat e.txt))"
printf '[topology]\npreset = dgx1-v100\nvisible-gpus = 0,x\n' >b.ini
"$COLLSIM" run -s b.ini >o.txt 2>e.txt; rc=$?
[ "$rc" -eq 2 ] && grep -qx "b.ini:3: visible-gpus: '0,x' is not an index list; expected GPU indices such as 0-3,8" e.txt \
    && ok bad-list || bad "bad-list (rc $rc: $(cat e.txt))"
exit $fail
