#!/bin/sh
# The presets of issue 12 item 5 from the command line: `collsim topo show`
# states the hardware facts (GPU count, NVLink per GPU, NICs), and
# `collsim run --topo PRESET` prints a table whose bus bandwidth stays under
# what the hardware can carry (bounds derived in each comment).
. "${top_srcdir:?}/tests/cli/lib.sh"

# show PRESET ARGS... -> $tmp/show
show() { "$COLLSIM" topo show --topo "$@" >"$tmp/show" 2>"$tmp/err" || { bad "topo show $*: $(cat "$tmp/err")"; return 1; }; }
# busbw of the last row of `collsim run` (out-of-place, column 8)
busbw() {
    "$COLLSIM" run --topo "$@" >"$tmp/run" 2>"$tmp/err" || { bad "run $*: $(cat "$tmp/err")"; echo 0; return; }
    awk '/^ +[0-9]/ { b = $8 } END { print b + 0 }' "$tmp/run"
}
# within NAME VALUE LOW HIGH
within() {
    if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v > lo && v <= hi) }'; then ok "$1 ($2)"
    else bad "$1: $2 not in ($3, $4]"; fi
}
has() { grep -q -- "$2" "$tmp/$1" && ok "$3" || bad "$3: no '$2' in $1"; }

# GB200 NVL72: one node of 72 GPUs, 18 NVLink5 links of 50 GB/s = 900 GB/s
# each way per GPU, 72 NICs of 400 Gb/s
if show gb200-nvl72; then
    has show "^1 node, 72 GPUs, 72 NICs" "gb200-nvl72 72 GPUs, 72 NICs, one node"
    has show "gpu71 .*nvs0 .*nvlink x18 *900.0 GB/s" "gb200-nvl72 NVLink5 900 GB/s per GPU"
    has show "nic0 .*ib 400 Gb/s" "gb200-nvl72 ConnectX-7 400G"
    has show "one NVLink domain" "gb200-nvl72 description"
fi
# all-reduce on 72 GPUs: NVLS moves each byte at least once through a GPU's
# NVLink port each way, so algbw <= 900 GB/s and busbw = 2(n-1)/n x algbw
# < 1800 GB/s; below 100 would mean the NVLink domain was not used
within "gb200-nvl72 all-reduce 4 GiB busbw" "$(busbw gb200-nvl72 -b 4G -e 4G)" 100 1800
# two racks over IB NDR with 64 GPUs each: still priced, and the table says
# the network is used
b=$(busbw gb200-nvl72 --nodes 2 --gpus 64 -b 1G -e 1G)
within "gb200-nvl72 2 racks all-reduce 1 GiB busbw" "$b" 10 1800
has run "NET/IB" "gb200-nvl72 2 racks cross the network"

if show gb300-nvl72; then
    has show "^1 node, 72 GPUs, 72 NICs" "gb300-nvl72 72 GPUs"
    has show "nic5 .*ib 800 Gb/s" "gb300-nvl72 ConnectX-8 800G"
fi
show gb300-nvl72 --gpus 8 && has show "^1 node, 8 GPUs, 8 NICs" "gb300-nvl72 --gpus 8 keeps 2 trays"

# DGX Spark: 1 GPU, 2 RDMA devices of 100 Gb/s; two boxes' all-gather
# busbw cannot pass the two devices' 2 x 12.5 GB/s
if show dgx-spark; then
    has show "^1 node, 1 GPUs, 2 NICs" "dgx-spark one GPU, two RDMA devices"
    has show "roce 100 Gb/s" "dgx-spark 100G each"
fi
within "dgx-spark 2 boxes all-gather busbw" "$(busbw dgx-spark --nodes 2 --op allgather -b 1G -e 1G --env NCCL_IB_MERGE_NICS=1)" 0 25

# two bridged RTX A6000: all-reduce of 2 ranks moves each byte once over the
# bridge, 56.25 GB/s per direction; without the bridge it uses PCIe
if show pcie-nvlink-pair; then
    has show "^1 node, 2 GPUs" "pcie-nvlink-pair 2 GPUs"
    has show "gpu0 .*gpu1 .*nvlink x4 *56.2 GB/s" "pcie-nvlink-pair bridge 4 x 14.06 GB/s"
fi
within "pcie-nvlink-pair all-reduce busbw" "$(busbw pcie-nvlink-pair -b 1G -e 1G)" 20 56.25
has run "P2P/NVL" "pcie-nvlink-pair uses the bridge"
busbw pcie-nvlink-pair --nvlink-bridge none -b 1G -e 1G >/dev/null
grep -q "P2P/NVL" "$tmp/run" && bad "pcie-nvlink-pair --nvlink-bridge none still uses NVLink" || ok "--nvlink-bridge none drops the bridge"

# pcie: no bridge unless asked, one NIC unless asked, both said in the header
show pcie --gpu a100-pcie --nic ib-ndr
has show "no NVLink bridge (--nvlink-bridge pairs adds them)" "pcie default: no bridge, said"
has show "1x ib-ndr NIC per node (the pcie default" "pcie default: one NIC, said"
has show "^1 node, 8 GPUs, 1 NICs" "pcie one NIC"
show pcie --gpu a100-pcie --nvlink-bridge pairs && has show "NVLink bridges on GPU pairs (12 links each)" "pcie --nvlink-bridge pairs"
printf '[topology]\npreset = pcie\ngpu = a40\ngpus = 2\nnvlink-bridge = pairs\n' >"$tmp/s.ini"
"$COLLSIM" run "$tmp/s.ini" -b 1M -e 1M >"$tmp/run" 2>"$tmp/err" && has run "NVLink bridges on GPU pairs" "[topology] nvlink-bridge key" || bad "scenario nvlink-bridge: $(cat "$tmp/err")"

# bad values: one line, exit 2
"$COLLSIM" topo show --topo pcie --gpu a40 --nvlink-bridge ring >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && [ "$(cat "$tmp/err")" = "collsim: --nvlink-bridge: unknown NVLink bridge layout 'ring'; expected none or pairs" ] \
    && ok "bad --nvlink-bridge" || bad "bad --nvlink-bridge: $(cat "$tmp/err")"
"$COLLSIM" topo show --topo dgx-spark --nvlink-bridge pairs >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "applies to the pcie preset only" "$tmp/err" \
    && ok "--nvlink-bridge with a fixed machine" || bad "--nvlink-bridge dgx-spark: $(cat "$tmp/err")"
printf '[topology]\npreset = pcie\ngpu = rtx4090\ngpus = 2\nnvlink-bridge = pairs\n' >"$tmp/s.ini"
"$COLLSIM" run "$tmp/s.ini" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "s.ini:5: nvlink-bridge: rtx4090 has no NVLink bridge connector" "$tmp/err" \
    && ok "scenario bridge error names its line" || bad "scenario bridge error: $(cat "$tmp/err")"
exit $fail
