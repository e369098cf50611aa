#!/bin/sh
# The [fabric] section and its flags (collsim-scenario(5), collsim run
# --help-fabric): bad values and keys that contradict each other get one
# line naming the key, exit 2; --dump writes the section back and reads it
# again; engines that do not read it say so; --model packet states and
# uses what it sets (priority from NCCL_IB_TC through the DSCP map, trust
# pcp, MTU, switch parts, recovery, receive paths) and checks the faults'
# keys against the topology.
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1

T="--topo dgx-h100 --nic roce-400g --fabric fat-tree --nodes 4"

# one line on stderr, exit 2, containing $2
refused() { # name expected-text command...
    name=$1 want=$2
    shift 2
    "$@" >out.txt 2>err.txt
    st=$?
    if [ "$st" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -qF -- "$want" err.txt && [ ! -s out.txt ]; then
        ok "$name"
    else
        bad "$name (exit $st)"; cat err.txt out.txt | head -5
    fi
}

scen() { # file lines...
    f=$1; shift
    { printf '[topology]\npreset = dgx-h100\nnic = roce-400g\nfabric = fat-tree\nnodes = 4\n[scenario]\nmodel = packet\n[fabric]\n'
      for l in "$@"; do printf '%s\n' "$l"; done; } >"$f"
}

# ---- bad values, from a file (FILE:LINE: key) and from flags -------------
scen mtu.ini 'mtu = 1500'
refused "file: bad mtu" "mtu.ini:9: mtu: '1500' is not an RDMA path MTU (RoCE or InfiniBand); expected 256, 512, 1024, 2048 or 4096" \
    "$COLLSIM" run mtu.ini
refused "flag: bad pfc" "collsim: --pfc: '9' is not a list of priorities" "$COLLSIM" run $T --model packet --pfc 9
refused "flag: bad dscp map" "is not a DSCP:PRIORITY entry" "$COLLSIM" run $T --model packet --dscp-map 64:3
refused "flag: pfc twice" "collsim: --pfc: '3,3' is not a list of priorities; expected distinct priorities" "$COLLSIM" run $T --model packet --pfc 3,3
refused "flag: dscp mapped twice" "collsim: --dscp-map: DSCP 26 is mapped twice; expected each DSCP once" "$COLLSIM" run $T --model packet --dscp-map 26:3,26:4
refused "flag: bad trust" "expected dscp or pcp" "$COLLSIM" run $T --model packet --trust vlan
refused "flag: bad dcqcn" "expected off, connectx or paper" "$COLLSIM" run $T --model packet --dcqcn fast
refused "flag: bad switch part" "unknown switch part 'spectrum-9'; expected one of" \
    "$COLLSIM" run $T --model packet --switch spectrum-9
refused "flag: ecn-pmax above 1" "expected a number above 0 and at most 1" \
    "$COLLSIM" run $T --model packet --ecn-pmax 1.5
scen key.ini 'buffer = 16M'
refused "file: unknown key" "key.ini:9" "$COLLSIM" run key.ini
grep -q "switch-buffer" err.txt && ok "unknown key lists the [fabric] keys" || bad "unknown key lists the [fabric] keys"

# ---- keys that contradict each other -------------------------------------
scen ai.ini 'dcqcn-ai = 10Mb/s'
refused "dcqcn parameter with dcqcn off" "ai.ini:9: dcqcn-ai: DCQCN is off; expected dcqcn = connectx or paper" \
    "$COLLSIM" run ai.ini
scen kmin.ini 'ecn-kmin = 100K'
refused "ecn-kmin without ecn-kmax" "kmin.ini:9: ecn-kmin: ecn-kmin and ecn-kmax go together" "$COLLSIM" run kmin.ini
scen kmax.ini 'ecn-kmin = 400K' 'ecn-kmax = 100K'
refused "ecn-kmax below ecn-kmin" "kmax.ini:10: ecn-kmax: ecn-kmax 100K is below ecn-kmin 400K" "$COLLSIM" run kmax.ini
scen stall.ini 'stall-at = 10us'
refused "stall-at without stall-nic" "stall.ini:9: stall-at: there is no stall-nic" "$COLLSIM" run stall.ini
# a time with no unit would be seconds (a stall at 20 s of a 500 us run):
# refused, 0 allowed
scen bare.ini 'stall-nic = n1.nic0' 'stall-at = 20' 'stall-for = 500us'
refused "file: a bare stall time" "bare.ini:10: stall-at: '20' is not a time; expected a time with its unit from 0 to 3600s, such as 20us" \
    "$COLLSIM" run bare.ini
refused "flag: a bare stall time" "collsim: --stall-for: '500' is not a time" \
    "$COLLSIM" run $T --model packet --stall-nic n1.nic0 --stall-at 0 --stall-for 500
# a stall of no length: refused at its line, not an abort in the engine
scen zero.ini 'stall-nic = n1.nic0' 'stall-at = 20us' 'stall-for = 0us'
refused "file: a stall of no length" "zero.ini:11: stall-for: '0us' stops the NIC for no time" "$COLLSIM" run zero.ini
refused "flag: a stall of no length" "collsim: --stall-for: '0' stops the NIC for no time" \
    "$COLLSIM" run $T --model packet --stall-nic n1.nic0 --stall-for 0
# NCCL over TCP sockets is not what the packet engine runs: refused
# (NCCL_IB_DISABLE's own warning comes first; the refusal is the last line)
"$COLLSIM" run $T --model packet --env NCCL_IB_DISABLE=1 -b 1M -e 1M >out.txt 2>err.txt; st=$?
[ "$st" -eq 2 ] && [ ! -s out.txt ] &&
    tail -1 err.txt | grep -q '^collsim: packet engine: NCCL runs NET/Socket (TCP) between the nodes here' \
    && ok "packet refuses sockets" || bad "packet refuses sockets (exit $st): $(cat err.txt)"
# one node: no fabric parameters to state
"$COLLSIM" run --topo dgx-h100 --model packet -b 1M -e 1M >one.txt 2>&1 &&
    grep -q '^# packet engine: no network link in this topology (one node): no packet runs' one.txt &&
    ! grep -q 'RoCEv2' one.txt && ok "packet on one node says no network" || bad "packet on one node: $(grep 'packet engine' one.txt)"
# an InfiniBand stall is stated, as a RoCE one is
"$COLLSIM" run --topo dgx-h100 --nic ib-ndr --fabric fat-tree --nodes 4 --model packet --stall-nic n0.nic0 \
    --stall-at 20us --stall-for 100us -b 1M -e 1M >ibst.txt 2>&1 &&
    grep -q '^# packet engine: n0.nic0 stops draining at 20 us for 100 us' ibst.txt && ok "IB stall stated" \
    || bad "IB stall stated: $(grep 'packet engine' ibst.txt | head -3)"
refused "CNPs and data on one priority" "CNPs and data would share priority 3" \
    "$COLLSIM" run $T --model packet --dscp-map 48:3 -b 1M -e 1M
# under trust pcp the way out is the data's service level, not a DSCP key
refused "CNPs and data on priority 6 under trust pcp" \
    "CNPs and data would share priority 6 (NCCL_IB_SL 6: VLAN priority 6 (trust pcp); ConnectX sends CNPs on VLAN priority 6 under trust pcp); expected the data on another priority" \
    "$COLLSIM" run $T --model packet --trust pcp --env NCCL_IB_SL=6 -b 1M -e 1M
refused "a switch buffer too small for its headroom" "collsim: --switch-buffer: switch leaf0: its buffer (0.0655 MB, switch-buffer) cannot hold" \
    "$COLLSIM" run $T --model packet --switch-buffer 64K -b 1M -e 1M
scen pcp.ini 'trust = pcp' 'cnp-dscp = 40'
refused "DSCP keys with trust pcp" "pcp.ini:10: cnp-dscp: switches trust the VLAN priority (trust = pcp), not the DSCP" \
    "$COLLSIM" run pcp.ini

# ---- written back by --dump and read again --------------------------------
scen dump.ini 'mtu = 2048' 'pfc = 3,4' 'dcqcn = paper' 'dcqcn-g = 0.00390625' 'switch = tomahawk-5' \
    'dscp-map = 26:4' 'pfc-headroom = 64K'
"$COLLSIM" run dump.ini --dump >d1.ini 2>err.txt && "$COLLSIM" run d1.ini --dump >d2.ini 2>>err.txt &&
    cmp -s d1.ini d2.ini && grep -q '^\[fabric\]' d1.ini && grep -q '^dcqcn-g=0.00390625' d1.ini &&
    grep -q '^switch=tomahawk-5' d1.ini && ok "--dump writes [fabric] and reads it back" ||
    { bad "--dump writes [fabric] and reads it back"; cat err.txt d1.ini | head -40; }

# the last dscp-map given is the map (over DSCP / 8), as --dump writes it
scen map.ini 'dscp-map = 26:5'
"$COLLSIM" run map.ini --dscp-map 48:2 --dump >m1.ini 2>err.txt && grep -q '^dscp-map=48:2$' m1.ini &&
    "$COLLSIM" run map.ini --dscp-map 48:2 -b 1M -e 1M >m1.txt 2>&1 && "$COLLSIM" run m1.ini -b 1M -e 1M >m2.txt 2>&1 &&
    grep -q 'DSCP 26, priority 3 by the DSCP map' m1.txt && cmp -s m1.txt m2.txt &&
    ok "the flag's dscp-map replaces the file's, and --dump keeps it" || bad "dscp-map flag over file"

# ---- settings of something that cannot act are refused -----------------------
"$COLLSIM" run $T --model packet -b 1M -e 1M --dcqcn connectx --ecn off >x.txt 2>x.err; rc=$?
[ $rc -eq 2 ] && grep -q "^collsim: --ecn: DCQCN (dcqcn = connectx) reacts to ECN marks, and ECN is off; expected ecn = on with it, or dcqcn = off" x.err &&
    ok "DCQCN without ECN refused" || bad "DCQCN without ECN ($rc: $(cat x.err))"
"$COLLSIM" run $T --model packet -b 1M -e 1M --pfc none --pfc-headroom 100K >x.txt 2>x.err; rc=$?
[ $rc -eq 2 ] && grep -q "^collsim: --pfc-headroom: PFC is on no priority (pfc = none); expected pfc = PRIORITIES with it" x.err &&
    ok "PFC settings without PFC refused" || bad "PFC settings without PFC ($rc: $(cat x.err))"

# ---- the NCCL variables only the packet engine reads: the others say so -------
"$COLLSIM" run --topo dgx-h100 --nodes 2 -b 1M -e 1M --env NCCL_IB_QPS_PER_CONNECTION=4 --env NCCL_IB_TIMEOUT=18 \
    >qp.txt 2>qp.err && grep -q '^# warning: NCCL_IB_QPS_PER_CONNECTION=4 and others shape queue pairs, .*only --model packet simulates; --model analytic prices the run as if they were unset' qp.txt &&
    ok "analytic says it leaves out the packet engine's NCCL variables" || bad "packet-only variables ($(cat qp.err))"

# ---- engines that do not read the section say so ---------------------------
for m in analytic flow; do
    "$COLLSIM" run $T --model $m -b 1M -e 1M --mtu 1024 >out.txt 2>err.txt
    grep -q "collsim: warning: the fabric settings (--mtu) describe the packets of --model packet; --model $m does not simulate them (it reads only the PFC classes" err.txt &&
        grep -q "^# warning: the fabric settings" out.txt && ok "--model $m says it ignores [fabric]" ||
        { bad "--model $m says it ignores [fabric]"; cat err.txt; }
done
"$COLLSIM" run $T --model packet -b 1M -e 1M >out.txt 2>err.txt
grep -q "does not simulate them" out.txt err.txt && bad "no warning without [fabric]" || ok "no warning without [fabric]"
# RoCE data on a priority without PFC (NCCL_IB_TC 0 -> DSCP 0 -> priority 0;
# the default PFC is on 3): the engines that price a lossless fabric say
# so in the header, and not for the default ToS (106 -> priority 3), nor
# on InfiniBand, nor with the packet engine (which models the drops)
for m in analytic flow; do
    "$COLLSIM" run $T --env NCCL_IB_TC=0 -b 1M -e 1M --model $m >lossy-$m.txt 2>&1
    grep -q "^# RoCE on a lossy priority (NCCL_IB_TC 0: DSCP 0, priority 0 by the DSCP map; PFC is not on it).*--model $m prices a lossless fabric" \
        lossy-$m.txt && ok "lossy-tc-note-$m" || bad "lossy-tc-note-$m: $(grep -i lossy lossy-$m.txt)"
done
"$COLLSIM" run $T --env NCCL_IB_TC=106 -b 1M -e 1M >lossless.txt 2>&1
"$COLLSIM" run --topo dgx-h100 --nic ib-ndr --nodes 4 --env NCCL_IB_TC=0 -b 1M -e 1M >ib.txt 2>&1
grep -qi "lossy priority" lossless.txt ib.txt && bad "lossy-tc-note where the data is lossless or on IB" \
    || ok "no lossy-tc-note for priority 3 or IB"

# ---- what --model packet makes of it ---------------------------------------
note() { grep '^# packet engine: RoCEv2' "$1"; }
"$COLLSIM" run $T --model packet -b 1M -e 1M >def.txt 2>&1
note def.txt | grep -q "data on priority 3 (NCCL_IB_TC unset: the NIC's ToS 106 (roce-tos), DSCP 26, priority 3 by the DSCP map, lossless)" &&
    ok "default: ToS 106 on lossless priority 3" || { bad "default: ToS 106 on lossless priority 3"; note def.txt; }
"$COLLSIM" run $T --model packet -b 1M -e 1M --env NCCL_IB_TC=0 >tc0.txt 2>&1
note tc0.txt | grep -q "data on priority 0 (NCCL_IB_TC 0: DSCP 0, priority 0 by the DSCP map, lossy" &&
    ok "NCCL_IB_TC=0 lands on lossy priority 0" || { bad "NCCL_IB_TC=0 lands on lossy priority 0"; note tc0.txt; }
"$COLLSIM" run $T --model packet -b 1M -e 1M --env NCCL_IB_TC=0 --pfc 0,3 >tc0pfc.txt 2>&1
note tc0pfc.txt | grep -q "priority 0 by the DSCP map, lossless" && ok "--pfc 0,3 makes it lossless" ||
    { bad "--pfc 0,3 makes it lossless"; note tc0pfc.txt; }
"$COLLSIM" run $T --model packet -b 1M -e 1M --env NCCL_IB_TC=136 --dscp-map 34:3 >map.txt 2>&1
note map.txt | grep -q "NCCL_IB_TC 136: DSCP 34, priority 3 by the DSCP map, lossless" &&
    ok "the DSCP map moves DSCP 34 to priority 3" || { bad "the DSCP map moves DSCP 34 to priority 3"; note map.txt; }
"$COLLSIM" run $T --model packet -b 1M -e 1M --trust pcp --env NCCL_IB_SL=3 >pcp.txt 2>&1
note pcp.txt | grep -q "VLAN-tagged, data on priority 3 (NCCL_IB_SL 3: VLAN priority 3 (trust pcp), lossless" &&
    ok "trust pcp: NCCL_IB_SL is the priority" || { bad "trust pcp: NCCL_IB_SL is the priority"; note pcp.txt; }
"$COLLSIM" run $T --model packet -b 1M -e 1M --switch spectrum-4 >sw.txt 2>&1
note sw.txt | grep -q "shared buffer 160 MB (NVIDIA Spectrum-4 (SN5600))" && ok "switch part sets the buffer" ||
    { bad "switch part sets the buffer"; note sw.txt; }
"$COLLSIM" run $T --model packet -b 1M -e 1M --dcqcn connectx --dcqcn-timer 55us >dc.txt 2>&1
note dc.txt | grep -q "DCQCN with ConnectX's values and the section's (.*timer 55 us" && ok "DCQCN on, a parameter set" ||
    { bad "DCQCN on, a parameter set"; note dc.txt; }

# the MTU reaches the packets: a network-bound ring at MTU 1024 pays 82 B
# of framing per 1 KiB instead of per 4 KiB, and the reverse direction,
# which carries the other rings' data, an 86-B ACK per packet: (1106 + 86) /
# 1024 against (4178 + 86) / 4096, 11.8% slower; data framing alone would
# be 5.9%
"$COLLSIM" run $T --model packet --env NCCL_ALGO=Ring -b 256M -e 256M >m4096.txt 2>&1
"$COLLSIM" run $T --model packet --env NCCL_ALGO=Ring -b 256M -e 256M --mtu 1024 >m1024.txt 2>&1
t4=$(grep -v '^#' m4096.txt | awk 'NF > 5 {print $6}')
t1=$(grep -v '^#' m1024.txt | awk 'NF > 5 {print $6}')
awk -v a="$t4" -v b="$t1" 'BEGIN { exit !(a > 0 && b / a > 1.09 && b / a < 1.13) }' &&
    ok "MTU 1024 is 9-13% slower than 4096 ($t1 us vs $t4 us)" || bad "MTU 1024 is 9-13% slower than 4096 ($t1 us vs $t4 us)"

# loss recovery: go-back-N by default, selective repeat on request
note def.txt | grep -q ", an ACK every 1 packet, go-back-N, retransmission timeout" && ok "go-back-N by default" ||
    { bad "go-back-N by default"; note def.txt; }
"$COLLSIM" run $T --model packet -b 1M -e 1M --recovery selective-repeat >sr.txt 2>&1
note sr.txt | grep -q ", selective repeat, retransmission timeout" && ok "--recovery selective-repeat" ||
    { bad "--recovery selective-repeat"; note sr.txt; }

# faults: a NIC that is not one, a receive buffer below its headroom
refused "stall-nic names a NIC" "collsim: --stall-nic: 'n9.nic0' is not a network NIC of the topology; expected a NIC such as n0.nic0" \
    "$COLLSIM" run $T --model packet -b 1M -e 1M --stall-nic n9.nic0
refused "nic-rx-buffer below headroom" "expected a larger nic-rx-buffer" \
    "$COLLSIM" run $T --model packet -b 1M -e 1M --nic-rx-rate auto --nic-rx-buffer 16K
# a slow receive path backs up into the NIC and pauses its switch port
"$COLLSIM" run $T --model packet -b 64M -e 64M -v >rx0.txt 2>&1
"$COLLSIM" run $T --model packet -b 64M -e 64M -v --nic-rx-rate 100Gb/s >rx100.txt 2>&1
t0=$(grep -v '^#' rx0.txt | awk 'NF > 5 {print $6}') t100=$(grep -v '^#' rx100.txt | awk 'NF > 5 {print $6}')
awk -v a="$t0" -v b="$t100" 'BEGIN { exit !(a > 0 && b > 2 * a) }' && grep -q 'PFC XOFFs [1-9]' rx100.txt &&
    ok "a 100G receive path behind 400G NICs: slower, pauses ($t0 -> $t100 us)" ||
    bad "a 100G receive path behind 400G NICs: slower, pauses ($t0 -> $t100 us)"

exit $fail
