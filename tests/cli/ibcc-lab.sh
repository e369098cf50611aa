#!/bin/sh
# Lab 13 (docs/labs/lab13-ib-congestion-tree.md) and InfiniBand congestion
# control in the packet engine (issue #14 items 3, 6, 7): the lab's claims
# as directions and rough sizes, each derived below, never as the numbers
# printed; the counters in --link-stats, --json, -v and --trace; the
# [fabric] ibcc keys refused on RoCE and without ibcc = on.
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1
S="$top_srcdir/scenarios"

for s in lab13-ib-congestion-tree lab13-ib-congestion-tree-cc; do
    "$COLLSIM" run "$S/$s.ini" -v --link-stats --json "$s.json" --trace "$s.trace.json" >"$s.txt" 2>&1 \
        || bad "run-$s ($(tail -1 "$s.txt"))"
done

python3 - lab13-ib-congestion-tree.json lab13-ib-congestion-tree-cc.json <<'PY' && ok lab-claims || bad lab-claims
import json, sys
off, on = (json.load(open(f)) for f in sys.argv[1:3])
def jobs(d):
    return {j["name"]: j for j in d["jobs"]}
def net(d):
    return d["all_jobs"]["network"]
def port(d, link):
    return next(p for p in net(d)["ports"] if p["link"] == link)
jo, jn = jobs(off), jobs(on)
errs = []
def check(cond, what):
    if not cond:
        errs.append(what)
# Without CC the victim shares leaf0's queue for leaf0 -> leaf1 with the
# incast, whose packets wait for leaf1's credits: it is slowed about as much
# as the incast (lab 11: 3.5x against 3.8x), far from its 1.0x alone.
check(jo["victim"]["slowdown"] > 2.5, "victim without CC is slowed by the tree")
# With CC the four incast senders are held below their share before their
# backlog fills leaf0's buffers, so the victim's packets no longer wait
# behind theirs: at least 1.3x faster (its floor is 1.0x alone).
check(jn["victim"]["time_us"] * 1.3 < jo["victim"]["time_us"], "victim recovers with CC")
# CC takes throughput from the hot port: the senders' indices overshoot,
# so each incast job is slower than without CC, but not by 2x.
for k in ("incast-1", "incast-2", "incast-3", "incast-4"):
    check(jo[k]["time_us"] < jn[k]["time_us"] < 2 * jo[k]["time_us"], k + " pays for it, within 2x")
# The counters that explain it. Without CC: no mark, no BECN.
check(net(off)["ecn_marks"] == 0 and "becns" not in net(off), "no CC counters without CC")
# The root (leaf1 -> n0.nic0, the hot receiver's port) marks FECN;
# leaf0 -> leaf1 is a victim port (it waits for credits), which marks
# nothing without a victim mask, but for a packet it sends without having
# waited since the one before (after the one-packet WRITEs with immediate
# of NCCL's adaptive-routing sends): under 1% of the marks.
root = port(on, "leaf1 -> n0.nic0")["fecn_marks"]
vict = port(on, "leaf0 -> leaf1")["fecn_marks"]
check(root > 0, "the root marks")
check(vict * 100 < net(on)["fecn_marks"], "the victim port almost never")
# every marked packet comes back as one BECN (ACK or CNP; nothing is lost
# on IB); a packet marked at leaf0 -> leaf1 may be marked again past leaf1
check(0 < net(on)["fecn_marks"] - vict <= net(on)["becns"] <= net(on)["fecn_marks"], "one BECN per marked packet")
# the senders' indices pass 17, the published table's first non-zero
# delay: the injection delay binds
for n in range(1, 5):
    check(port(on, "n%d.nic0 -> leaf0" % n)["ccti_max"] > 17, "n%d's CCTI reaches the table's delays" % n)
# the tree shrinks: leaf0 -> leaf1 waits for credits less than half as long
check(port(on, "leaf0 -> leaf1")["credit_starved_us"] * 2 < port(off, "leaf0 -> leaf1")["credit_starved_us"],
      "leaf0 -> leaf1 starves less")
for e in errs:
    print("lab13:", e)
sys.exit(1 if errs else 0)
PY

# the text outputs: -v's counters, --link-stats' columns, the header
# -v prints a single call's counters (a run of [job]s prints the table only)
"$COLLSIM" run --topo dgx-h100 --nic ib-ndr --fabric fat-tree --nodes 2 --model packet --ibcc on -b 4M -e 4M -v \
    >v.txt 2>&1 || bad "run-v ($(tail -1 v.txt))"
grep -Eq 'flow-control packets [1-9][0-9]* .*, FECN marks [0-9]+, BECNs [0-9]+, highest CCTI [0-9]+' v.txt \
    && ok counters-v || bad counters-v
grep -Eq '^#    VL +packets +FCs starved\(us\) +queue max +queue avg +FECN +BECNs CCTI avg +max +link' \
    lab13-ib-congestion-tree-cc.txt && grep -q 'IB congestion control: [1-9][0-9]* FECN marks' \
    lab13-ib-congestion-tree-cc.txt && ok counters-link-stats || bad counters-link-stats
grep -q '^# packet engine: InfiniBand congestion control (IBA annex A10' lab13-ib-congestion-tree-cc.txt \
    && grep -q '^# packet engine: no congestion control (InfiniBand CC off' lab13-ib-congestion-tree.txt \
    && ok cc-notes || bad cc-notes

# --trace: credit-starved gauges (not PFC's paused) and each QP's CCTI
python3 - lab13-ib-congestion-tree-cc.trace.json <<'PY' && ok trace-gauges || bad trace-gauges
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = {e.get("name", "") for e in ev if e.get("ph") == "C"}
ok = any(n.startswith("credit-starved leaf0 -> leaf1 VL 0") for n in names) \
    and any(n.startswith("CCTI n1.nic0 -> n0.nic0") for n in names) \
    and not any(n.startswith("paused ") for n in names)
sys.exit(0 if ok else 1)
PY

# the keys: refused on RoCE, and without ibcc = on; one line, exit 2
"$COLLSIM" run "$S/lab-roce-incast.ini" --ibcc on >k.out 2>k.err
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <k.err)" = 1 ] && [ ! -s k.out ] \
    && grep -q '^collsim: --ibcc: the fabric is RoCE: InfiniBand congestion control' k.err \
    && ok refuses-on-roce || bad "refuses-on-roce (rc $rc: $(cat k.err))"
"$COLLSIM" run "$S/lab13-ib-congestion-tree.ini" --ibcc-threshold 9 >k.out 2>k.err
rc=$?
[ "$rc" = 2 ] && grep -q 'InfiniBand congestion control is off; expected ibcc = on' k.err \
    && ok refuses-cc-off || bad "refuses-cc-off (rc $rc: $(cat k.err))"
"$COLLSIM" run "$S/lab13-ib-congestion-tree-cc.ini" --ibcc-cct 0:0,0:1 --ibcc-ccti-limit 2 >k.out 2>k.err
rc=$?
[ "$rc" = 2 ] && grep -q 'past the table' k.err && ok refuses-limit || bad "refuses-limit (rc $rc: $(cat k.err))"
# a threshold of 0 marks nothing: the same times as without CC
# (every job's row, and the run must have produced them)
"$COLLSIM" run "$S/lab13-ib-congestion-tree-cc.ini" --ibcc-threshold 0 >t0.txt 2>&1
rc=$?
grep '^  [a-z]' t0.txt >a.txt
grep '^  [a-z]' lab13-ib-congestion-tree.txt >b.txt
[ "$rc" = 0 ] && grep -q '^  victim ' a.txt && [ "$(wc -l <a.txt)" -eq "$(wc -l <b.txt)" ] && cmp -s a.txt b.txt \
    && ok threshold-0-marks-nothing || bad "threshold-0-marks-nothing (rc $rc)"
# the empty table is refused, not read as ofa
"$COLLSIM" run "$S/lab13-ib-congestion-tree-cc.ini" --ibcc-cct '' >k.out 2>k.err
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <k.err)" = 1 ] && grep -q 'an empty table' k.err && ok refuses-empty-cct \
    || bad "refuses-empty-cct (rc $rc: $(cat k.err))"
exit $fail
