#!/bin/sh
# collsim run --model packet (docs/model-packet.md): where nothing congests
# (a non-blocking fat-tree) its times agree with the flow engine within 2%
# for rings (3% for NCCL's default choice); the same inputs and seed give the
# same bytes; a 2:1 spine is no faster than the flow engine's fair shares;
# the fabric it assumed is stated in the header; NCCL_IB_QPS_PER_CONNECTION
# reaches it; --link-stats,
# --json and -v report the network's counters, --trace its gauges.
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1

T="--topo dgx-h100 --nic roce-400g --fabric fat-tree"
. "$top_srcdir/tests/cli/packet-lib.sh"
# rings within 2% (the issue's target); NCCL's default (NVLSTree here)
# within 3%: its tree's pipeline fill differs between fluid shares and
# packets at 16-64 MiB (docs/model-packet.md)
agree_with_flow 2 3
head -1 packet-Ring.txt | grep -q '(model: packet)' && ok producer || bad producer
grep -q '^# packet engine: RoCEv2, MTU 4096, data on priority 3' packet-Ring.txt && ok fabric-note || bad fabric-note

# same inputs, same bytes
# shellcheck disable=SC2086
"$COLLSIM" run $T --nodes 4 --env NCCL_ALGO=Ring --model packet -b 1M -e 256M -f 4 >again.txt 2>&1
cmp -s again.txt packet-Ring.txt && ok repeat || bad repeat

# 2:1 spine, 8 nodes: packets (ECMP collisions, queues) are not faster
# than the flow engine's fair shares of the same links
for m in flow packet; do
    # shellcheck disable=SC2086
    "$COLLSIM" run $T --nodes 8 --oversubscription 2 --env NCCL_ALGO=Ring --model "$m" -b 256M -e 256M \
        >"$m-2to1.txt" 2>&1 || bad "run-2to1-$m"
done
tf=$(col_times flow-2to1.txt) tp=$(col_times packet-2to1.txt)
awk -v f="$tf" -v p="$tp" 'BEGIN { exit !(p >= f * 0.995 && p < f * 1.5) }' && ok 2to1-not-faster \
    || bad "2to1-not-faster (flow $tf us, packet $tp us)"

# NCCL_IB_QPS_PER_CONNECTION reaches the engine, and changes the run
# shellcheck disable=SC2086
"$COLLSIM" run $T --nodes 8 --oversubscription 2 --env NCCL_ALGO=Ring --env NCCL_IB_QPS_PER_CONNECTION=4 \
    --model packet -b 256M -e 256M >qps4.txt 2>&1 || bad run-qps4
grep -q '4 QPs per connection, messages in turn' qps4.txt && ok qps-note || bad qps-note
cmp -s qps4.txt packet-2to1.txt && bad qps-changes-run || ok qps-changes-run

# counters and link statistics
# shellcheck disable=SC2086
"$COLLSIM" run $T --nodes 8 --model packet -b 16M -e 16M -v --link-stats >ls.txt 2>&1 || bad run-link-stats
grep -q 'packet events [1-9]' ls.txt && ok counters || bad counters
grep -q 'leaf[0-9]* -> n[0-9]*\.nic[0-9]* (net)' ls.txt && ok link-stats-net || bad link-stats-net

# the network's counters: --link-stats prints them per link and
# priority, --json has them per row; with DCQCN on a 2:1 spine the leaves'
# downlinks queue, mark and the receivers send CNPs
# shellcheck disable=SC2086
"$COLLSIM" run $T --nodes 8 --oversubscription 2 --model packet --dcqcn connectx -b 256M -e 256M --link-stats \
    --json net.json >net.txt 2>&1 || bad run-net-counters
grep -q '^# Network counters (model:packet), allreduce 256 MiB, the largest size: [0-9]* pause frames' net.txt &&
    grep -q '^#  prio     packets  pauses' net.txt && grep -q '^#  buffer of leaf0: high-water [0-9.]* [KMG]*i*B, time-average' net.txt &&
    ok net-counters-text || bad net-counters-text
python3 - net.json <<'PY' && ok net-counters-json || bad net-counters-json
import json, sys
d = json.load(open(sys.argv[1]))
n = d["rows"][0]["network"]
ports = n["ports"]
assert n["ecn_marks"] > 0 and n["cnps"] > 0, "no marks or CNPs"
assert n["ecn_marks"] == sum(p["ecn_marks"] for p in ports), "marks do not add up"
assert all(p["prio"] in (3, 6) and p["tx_pkts"] > 0 for p in ports), "a port without packets or off 3/6"
assert any(p["queue_max_bytes"] > 65536 and p["link"].startswith("leaf") for p in ports), "no leaf queue"
# time-averages over the collective: a busy downlink's average is well above a byte
assert max(p["queue_avg_bytes"] for p in ports) > 1000, "averages too small"
assert all(p["queue_avg_bytes"] <= p["queue_max_bytes"] for p in ports), "average above maximum"
PY

# --trace: the flow engine's tracks and the fabric's gauges (queues, pause
# states, DCQCN rates) in one Perfetto file that names the packet engine
# shellcheck disable=SC2086
"$COLLSIM" run $T --nodes 8 --oversubscription 2 --model packet --dcqcn connectx -b 16M -e 16M --trace t.json \
    >tr.out 2>tr.err || bad "run-trace ($(cat tr.err))"
python3 - t.json <<'PY' && ok trace-gauges || bad trace-gauges
import json, sys
d = json.load(open(sys.argv[1]))
assert d["otherData"]["producer"] == "collsim model:packet"
ev = d["traceEvents"]
fab = [e for e in ev if e.get("cat") == "fabric"]
names = {e["name"].split(" ")[0] for e in fab}
assert {"queue", "DCQCN"} <= names, names
assert any(e["name"].startswith("queue leaf") and e["args"]["bytes"] > 0 for e in fab)
assert any(e.get("cat") == "transfer" for e in ev)
procs = {e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
assert "fabric" in procs, procs
PY
# shellcheck disable=SC2086
"$COLLSIM" run $T --nodes 8 --oversubscription 2 --model packet --dcqcn connectx -b 16M -e 16M --trace t2.json \
    >/dev/null 2>&1 && cmp -s t.json t2.json && ok trace-repeat || bad trace-repeat
# several jobs on one packet network: both cross a 4:1 spine; each job's
# time shared is no less than the flow engine's fair shares give it
cat >jobs.ini <<'INI'
[topology]
preset = dgx-h100
nodes = 8
nic = roce-400g
fabric = fat-tree
oversubscription = 4
[job a]
nodes = 0,4
size = 256M
[job b]
nodes = 1,5
size = 256M
INI
for m in flow packet; do
    "$COLLSIM" run jobs.ini --model $m --link-stats >jobs-$m.txt 2>&1 || bad "jobs-$m ($(tail -1 jobs-$m.txt))"
done
grep -q 'All numbers: model:packet' jobs-packet.txt && ok jobs-packet-runs || bad jobs-packet-runs
# the fabric's notes in the jobs' header, the network's counters of the
# run after the link statistics, and in --json
grep -q '^# packet engine: RoCEv2, MTU 4096' jobs-packet.txt && ok jobs-notes || bad jobs-notes
grep -q '^# Network counters (model:packet), all jobs together: [0-9]* pause frames' jobs-packet.txt \
    && ok jobs-counters || bad jobs-counters
"$COLLSIM" run jobs.ini --model packet --json jobs.json >/dev/null 2>&1 || bad jobs-json-run
grep -q '"all_jobs": {"source": "model", "network": {"fabric": "roce", "packet_events": [1-9]' jobs.json \
    && grep -q '"notes": \["packet engine: RoCEv2' jobs.json && ok jobs-json-network || bad jobs-json-network
# link statistics over the whole run (the last job's end): no link above 100%
awk '/^# Link statistics/ { on = 1; next } on && /^# +[0-9.]+ / { if ($2 > 100.5) hot = 1; n++ }
     END { exit !(n > 0 && !hot) }' jobs-packet.txt && ok jobs-link-stats || bad jobs-link-stats
# the "time(us)" column of a job's row, found by the header
tcol() { awk '/^# job / { for (i = 2; i <= NF; i++) if ($i == "time(us)") c = i - 1 } c && $1 == j { print $c; exit }' j="$2" "$1"; }
for j in a b; do
    awk -v f="$(tcol jobs-flow.txt $j)" -v p="$(tcol jobs-packet.txt $j)" 'BEGIN { exit !(f > 0 && p >= 0.99 * f) }' \
        && ok "jobs: $j not faster than fair shares" || bad "jobs: $j ($(tcol jobs-flow.txt $j) vs $(tcol jobs-packet.txt $j))"
done
# The host's floor of the process layout (one process driving 8 GPUs
# issues 8 kernels per call): a small call takes what the flow engine says,
# above the one-process-per-GPU time (the packet engine dropped the floor)
for m in flow packet; do
    "$COLLSIM" run $T --nodes 2 --procs-per-node 1 --model $m -b 8 -e 8 >layout-$m.txt 2>&1 || bad "layout-$m"
done
"$COLLSIM" run $T --nodes 2 --model packet -b 8 -e 8 >layout-default.txt 2>&1 || bad layout-default
lt() { awk '!/^#/ && $1 == 8 { print $6 }' "$1"; }
[ -n "$(lt layout-packet.txt)" ] && [ "$(lt layout-packet.txt)" = "$(lt layout-flow.txt)" ] \
    && awk -v a="$(lt layout-packet.txt)" -v b="$(lt layout-default.txt)" 'BEGIN { exit !(a > b) }' \
    && ok "layout-host-floor ($(lt layout-default.txt) -> $(lt layout-packet.txt) us)" \
    || bad "layout-host-floor (packet $(lt layout-packet.txt), flow $(lt layout-flow.txt), default $(lt layout-default.txt))"
# A slow receive path backs up into the NIC's buffer (issue #11 item 1):
# lab 9's 4:1 incast with every NIC on PCIe Gen3 x8 (63 Gb/s into the
# host, under the 100G link). The senders are not paced by the receiver's
# share of its PCIe (its receive path is the packet engine's): they send
# at their own rate, the NIC's buffer fills and pauses the switch port in
# front of it, whose queue grows.
sed 's/gen="5" width="16"/gen="3" width="8"/g' "$top_srcdir/docs/labs/data/incast-7x4gpu.xml" >slow-nic.xml
sed -e 's|^file = .*|file = slow-nic.xml|' -e '/^switch = /d' "$top_srcdir/scenarios/lab-roce-incast.ini" >slow-nic.ini
"$COLLSIM" run slow-nic.ini --link-stats >slow-nic.txt 2>&1 || bad "run-slow-nic ($(tail -1 slow-nic.txt))"
awk '/^#  prio  *packets/ { h = 1; next } h && / leaf1 -> n0\.nic0$/ { exit !($3 > 0 && $4 > 0) }' slow-nic.txt \
    && ok slow-receiver-pauses-its-port || bad slow-receiver-pauses-its-port

# DCQCN with ECN thresholds above what PFC lets a queue hold: pauses, no
# mark, and the output says DCQCN did nothing; with ConnectX's thresholds
# for 400G lowered (marks come), it does not
dq="--topo dgx-h100 --nodes 8 --nic roce-400g --nics-per-node 8 --fabric fat-tree --oversubscription 2 -b 16M -e 16M --model packet --switch trident-2 --dcqcn connectx"
"$COLLSIM" run $dq --ecn-kmin 16M --ecn-kmax 32M >dq.txt 2>&1 &&
    grep -q '^# DCQCN did nothing at 1 of 1 sizes (16 MiB): PFC paused links ([0-9]* pause frames) and no packet was ECN-marked' dq.txt &&
    "$COLLSIM" run $dq --ecn-kmin 20K --ecn-kmax 60K >dq2.txt 2>&1 && ! grep -q 'DCQCN did nothing' dq2.txt &&
    ok dcqcn-idle-said || bad "dcqcn-idle-said ($(grep -c DCQCN dq.txt))"
exit $fail
