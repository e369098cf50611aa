#!/bin/sh
# NVLSTree across NVLink domains (issue 12): only the NVLS heads meet the
# network (NCCL connect.cc connectNvls: each node's heads are the first GPUs
# of its NVLS graph's channels, at most 32, search.cc NCCL_MAX_NVLS_ARITY),
# so on GB200/GB300 NVL72 racks 32 of the 72 GPUs carry the node trees,
# each over its own NIC with 1/32 of the data (device/all_reduce.h
# NVLS_TREE: a loop is one chunk per head). The rank programs built a tree
# per local GPU, and the flow, packet and SimGrid engines failed with "no
# network route" on the GPUs without an NVLS NIC.
# - every engine runs 2 and 4 racks of gb200-nvl72 / gb300-nvl72 (SimGrid:
#   2 racks at 4 MiB; it takes 2 GiB of memory there), and 2 DGX H100 /
#   B200 nodes, NVLSTree as NCCL's tuner picks it;
# - with 25G NICs the network is the bottleneck: the busiest links are
#   the heads' NIC ports, each carrying S/32 (plus the link efficiency:
#   at most 10% more) at 1 GiB;
# - analytic and flow agree within 7%, the tolerance analytic-vs-flow.sh
#   gives NVLSTree on 2 nodes, where both run as many pipeline steps per
#   channel as DGX H100 at 1 GiB (64: 8 GiB here, 32 heads of 128 KiB
#   chunks on 32 channels; DGX B200 at 4 GiB). At smaller sizes the
#   analytic engine prices every stage of the NVLS pipeline at the steady
#   state's step time and the flow engine at its own, so it is slower
#   (docs/model-flow.md, "NVLSTree").
set -u
: "${COLLSIM:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }

"$COLLSIM" run --topo dgx-h100 --model flow -b 8 -e 8 >probe.txt 2>probe.err || {
    grep -q "unknown model 'flow'" probe.err && { echo "skip: flow engine not registered"; exit 77; }
}
simgrid=1
"$COLLSIM" run --topo dgx-h100 --model simgrid -b 8 -e 8 >probe.txt 2>probe.err || simgrid=0

# "busbw algo" of the row of size $1 (columns: out-of-place busbw, algo)
row() {   # size topo-args...
    sz=$1
    shift
    "$COLLSIM" run -b "$sz" -e "$sz" "$@" 2>err.txt | awk -v sz="$sz" '$1 == sz {print $8, $14}'
}

# runs label size args...: one row of NVLSTree
runs() {
    label=$1
    shift
    r=$(row "$@")
    set -- $r
    [ "${2:-}" = NVLSTree ] && ok "$label: $1 GB/s" || bad "$label: '$r' $(cat err.txt)"
}

for t in gb200-nvl72 gb300-nvl72; do
    for n in 2 4; do
        for m in analytic flow packet; do
            runs "$t $n racks $m 64 MiB" 67108864 --topo "$t" --nodes "$n" --model "$m"
        done
    done
done
if [ "$simgrid" -eq 1 ]; then
    runs "gb200-nvl72 2 racks simgrid 4 MiB" 4194304 --topo gb200-nvl72 --nodes 2 --model simgrid
else
    echo "ok simgrid: not built (skipped)"
fi
for t in dgx-h100 dgx-b200; do
    for m in analytic flow packet; do
        runs "$t 2 nodes $m 1 GiB" 1073741824 --topo "$t" --nodes 2 --model "$m"
    done
done
runs "gb200-nvl72 2 racks flow forced NVLSTree 1 MiB" 1048576 --topo gb200-nvl72 --nodes 2 --model flow \
    --env NCCL_ALGO=NVLSTree

# the heads' NIC ports: 25G NICs make them the busiest links
"$COLLSIM" run --topo gb200-nvl72 --nodes 2 --nic roce-25g --model flow -b 1G -e 1G --link-stats \
    --env NCCL_ALGO=NVLSTree >ls.txt 2>err.txt || bad "link-stats run: $(cat err.txt)"
awk '/^# +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ [KMG]iB / { print }' ls.txt >links.txt
lines=$(wc -l <links.txt)
[ "$lines" -eq 20 ] && ok "20 busiest links listed" || bad "$lines busiest links listed, expected 20"
# each: n<node>.nic<k> with k < 32 (a head's), 32 to 35.2 MiB (1 GiB / 32 heads)
awk '{ mib = $5; if ($6 == "GiB") mib *= 1024; if ($6 == "KiB") mib /= 1024
       split($7, a, "."); k = substr(a[2], 4) + 0
       if (a[2] !~ /^nic[0-9]+$/ || k >= 32 || mib < 32 || mib > 35.2) { print "bad: " $0; b = 1 } }
     END { exit b }' links.txt >check.txt && ok "busiest links: heads' NIC ports, S/32 each ($(head -1 links.txt))" \
    || bad "busiest links: $(cat check.txt)"

# compare label lo hi size args...: lo <= analytic / flow <= hi
compare() {
    label=$1 lo=$2 hi=$3 sz=$4
    shift 4
    a=$(row "$sz" --model analytic "$@")
    f=$(row "$sz" --model flow "$@")
    [ -n "$a" ] && [ -n "$f" ] || { bad "$label: no row ($(cat err.txt))"; return; }
    set -- $a $f
    [ "$2" = NVLSTree ] && [ "$4" = NVLSTree ] || { bad "$label: analytic runs $2, flow $4"; return; }
    awk -v a="$1" -v f="$3" -v lo="$lo" -v h="$hi" 'BEGIN { r = a / f; exit !(r >= lo && r <= h) }' \
        && ok "$label: analytic $1, flow $3 GB/s" || bad "$label: analytic $1, flow $3 GB/s, expected ratio in [$lo, $hi]"
}
compare "gb200-nvl72 2 racks 8 GiB" 0.93 1.07 8589934592 --topo gb200-nvl72 --nodes 2
compare "gb200-nvl72 4 racks 8 GiB" 0.93 1.07 8589934592 --topo gb200-nvl72 --nodes 4
compare "gb300-nvl72 2 racks 8 GiB" 0.93 1.07 8589934592 --topo gb300-nvl72 --nodes 2
compare "dgx-h100 2 nodes 1 GiB" 0.93 1.07 1073741824 --topo dgx-h100 --nodes 2
compare "dgx-b200 2 nodes 4 GiB" 0.93 1.07 4294967296 --topo dgx-b200 --nodes 2
exit $fail
