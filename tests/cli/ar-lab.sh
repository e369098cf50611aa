#!/bin/sh
# Lab 15 (docs/labs/lab15-adaptive-routing.md) and adaptive routing in the
# packet engine (issue #14 items 4 and 7): the page's commands run as
# written; the lab's claims as directions and bounds derived from the
# machine (four 400 Gb/s spine cables per leaf) and the runs' own link
# statistics, never as the numbers printed; NCCL_IB_AR_THRESHOLD's
# per-message choice (above every message: the run without AR).
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1
S="$top_srcdir/scenarios"

# the page runs as written (from a directory that sees scenarios/ and docs/)
mkdir bin work || exit 1
printf '#!/bin/sh\nexec "%s" "$@"\n' "$COLLSIM" >bin/collsim && chmod +x bin/collsim || exit 1
for d in scenarios docs; do ln -s "$top_srcdir/$d" "work/$d" || exit 1; done
awk '/^```sh lab-run[ \t]*$/ { on = 1; next } on && /^```/ { on = 0; next } on { print }' \
    "$top_srcdir/docs/labs/lab15-adaptive-routing.md" >page.sh
n=$(grep -c . page.sh)
(cd work && PATH="$tmp/bin:$PATH" sh -e ../page.sh) >page.log 2>&1 && [ "$n" -ge 3 ] \
    && grep -q '^ *16777216 ' work/ar-on.txt && ok "page: $n commands" || bad "page ($(tail -1 page.log))"

run() {   # NAME SCENARIO ARGS...: --json NAME.json, text NAME.txt
    name=$1 sc=$2
    shift 2
    "$COLLSIM" run "$S/$sc.ini" --link-stats --json "$name.json" "$@" >"$name.txt" 2>&1 \
        || bad "run-$name ($(tail -1 "$name.txt"))"
}
run off lab15-ib-adaptive-routing-off
run on lab15-ib-adaptive-routing
run thr lab15-ib-adaptive-routing --env NCCL_IB_AR_THRESHOLD=16777216
run off3 lab15-ib-adaptive-routing-off --seed 3
run on3 lab15-ib-adaptive-routing --seed 3

python3 - off on thr off3 on3 <<'PY' && ok lab-claims || bad lab-claims
import json, re, sys
names = sys.argv[1:6]
J = {n: json.load(open(n + ".json")) for n in names}
errs = []
def check(cond, what):
    if not cond:
        errs.append(what)
def row(n):
    return J[n]["rows"][-1]
def busbw(n):
    return row(n)["out_of_place"]["busbw"]
def net(n):
    return row(n)["network"]
UNIT = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
LINKS = ["leaf%d -> spine%d" % (l, s) for l in range(2) for s in range(4)] + \
        ["spine%d -> leaf%d" % (s, l) for l in range(2) for s in range(4)]
def carried(n):
    """The bytes --link-stats says each leaf-spine link carried (both ways,
    2 leaves x 4 spines), as (low, high): the table lists the busiest links
    only; a link it leaves out carried nothing if the table is whole, else
    at most the least busy listed link's utilization at the same capacity."""
    util, got = [], {}
    whole = True
    for line in open(n + ".txt"):
        m = re.match(r"^#\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+([\d.]+) (B|KiB|MiB|GiB)\s+(.*?) \((\w+)\)$", line)
        if m:
            util.append(float(m.group(1)))
            if m.group(4) in LINKS:
                got[m.group(4)] = (float(m.group(2)) * UNIT[m.group(3)], float(m.group(1)))
        elif re.match(r"^# \.\.\. \d+ more links carried traffic", line):
            whole = False
        elif line.startswith("# bottleneck:") and util:
            break
    per_util = [b / u for b, u in got.values() if u > 0]
    cap = 0 if whole or not per_util else min(util) * per_util[0]
    return [(got[k][0], got[k][0]) if k in got else (0, cap) for k in LINKS], len(got)
def imbalance(n):
    """max / mean of the links' bytes, at its lowest over what the table
    leaves open"""
    v, _ = carried(n)
    return max(h for h, _ in v) / (sum(h for _, h in v) / len(v))
# The bound of answer 2: the 16 channels' crossings in one direction carry
# busbw's worth of bytes per second over four 400 Gb/s (50 GB/s) cables.
bound = 4 * 50.0
for n in names:
    check(0 < busbw(n) <= bound, n + ": busbw within the spine cables' bound")
    # the busiest cable carries max/mean x the fair share; every channel
    # must finish, so busbw <= bound x mean / max
    check(busbw(n) <= bound / imbalance(n) * 1.01, n + ": busbw within the busiest cable's bound")
# static hashing loads the spine links unevenly, AR evenly (within 5%)
for n in ("off", "off3"):
    check(imbalance(n) > 1.25, n + ": static routing loads the spines unevenly")
    check(net(n)["ar_moves"] == 0, n + ": nothing moved without AR")
for n in ("on", "on3"):
    v, listed = carried(n)
    check(listed == 16 and imbalance(n) < 1.05, n + ": AR loads every spine link evenly")
    check(net(n)["ar_moves"] > 0, n + ": AR moved packets")
    # reordering, not loss: the receiver waits, nothing is NAKed or resent
    check(net(n)["naks"] == 0 and net(n)["retransmitted"] == 0 and net(n)["drops"] == 0, n + ": no NAK/resend")
# the busbw difference follows the loads: AR's even spread beats every draw
check(busbw("on") > 1.2 * busbw("off") and busbw("on3") > 1.2 * busbw("off3"), "AR is faster than static routing")
# AR's result does not depend on the hashes (seed), static routing's does
check(abs(busbw("on") - busbw("on3")) < 0.02 * busbw("on"), "AR's busbw independent of the seed")
check(abs(busbw("off") - busbw("off3")) > 0.05 * busbw("off"), "static routing's busbw depends on the seed")
# NCCL_IB_AR_THRESHOLD above every message: each message is one WRITE with
# immediate on its QP's route, as without AR: the same time and loads
check(net("thr")["ar_moves"] == 0, "threshold: nothing moved")
check(busbw("thr") == busbw("off") and net("thr")["ports"] == net("off")["ports"], "threshold: the run without AR")
# with the default threshold each message above it sends one packet more
# (the WRITE with immediate apart from the data) on the NICs' links
def nic_pkts(n):
    return sum(p["tx_pkts"] for p in net(n)["ports"] if re.match(r"^n\d+\.nic\d+ -> leaf\d+$", p["link"]))
check(nic_pkts("on") > nic_pkts("off"), "AR: the immediate apart adds packets")
for e in errs:
    print("lab15:", e)
sys.exit(1 if errs else 0)
PY

# the header says what each run did with the messages
grep -q '^# packet engine: adaptive routing (NCCL_IB_ADAPTIVE_ROUTING, on by default on InfiniBand): a message above NCCL_IB_AR_THRESHOLD (8192 B) goes as an RDMA WRITE' on.txt \
    && grep -q 'above NCCL_IB_AR_THRESHOLD (16777216 B)' thr.txt \
    && grep -q '^# packet engine: adaptive routing off (NCCL_IB_ADAPTIVE_ROUTING=0)' off.txt \
    && ! grep -q "per-message choice is not modelled" on.txt && ok ar-notes || bad ar-notes
grep -q 'packets sent another way by adaptive routing, ' on.txt && ok link-stats-counter || bad link-stats-counter

# NCCL_IB_AR_THRESHOLD is each sender's: jobs with different ones run, job
# a (VL 1) above every message, job b (VL 0) at 0. Job a's packets keep
# their QPs' routes: its VL's packets per spine link are those of the run
# where both jobs are above every message (static routes do not depend on
# timing), and differ from a run where job a moves them too.
jobs() {   # NAME THRESHOLD-A THRESHOLD-B [LINE FOR JOB B]
    cat >"$1.ini" <<EOF
[scenario]
model = packet
[topology]
file = $top_srcdir/docs/labs/data/fat-tree-2to1-ib.xml
[collective]
op = all_reduce
[job a]
nodes = 0,1
gpus = 0
size = 4M
NCCL_IB_SL = 1
NCCL_IB_AR_THRESHOLD = $2
[job b]
nodes = 0,1
gpus = 1
size = 4M
NCCL_IB_AR_THRESHOLD = $3
${4:-}
EOF
    "$COLLSIM" run "$1.ini" --json "$1.json" >"$1.txt" 2>"$1.err"
}
jobs jhh 1073741824 1073741824 && jobs jh0 1073741824 0 && jobs j00 0 0 \
    && python3 - <<'PY' && ok jobs-threshold || bad "jobs-threshold ($(cat jhh.err jh0.err j00.err))"
import json, sys
N = {n: json.load(open(n + ".json"))["all_jobs"]["network"] for n in ("jhh", "jh0", "j00")}
def vl1(n):
    return {p["link"]: p["tx_pkts"] for p in N[n]["ports"] if p["prio"] == 1 and "spine" in p["link"]}
errs = []
if N["jhh"]["ar_moves"] != 0: errs.append("both above every message: nothing moved")
if not N["jh0"]["ar_moves"] > 0: errs.append("job b at 0: its packets moved")
if not vl1("jh0") or vl1("jh0") != vl1("jhh"): errs.append("job a keeps its routes: %s vs %s" % (vl1("jh0"), vl1("jhh")))
if vl1("j00") == vl1("jhh"): errs.append("job a at 0 moves its packets")
if errs: print("\n".join(errs))
sys.exit(1 if errs else 0)
PY
grep -q '^# packet engine: \[job a\]: data on VL 1 (NCCL_IB_SL 1: VL 1 by the default SL-to-VL map), .*; NCCL_IB_AR_THRESHOLD 1073741824 B$' jh0.txt \
    && grep -q '^# packet engine: \[job b\]: data on VL 0 (.*; NCCL_IB_AR_THRESHOLD 0 B$' jh0.txt \
    && grep -q 'a message above its job.s NCCL_IB_AR_THRESHOLD (each job.s below)' jh0.txt \
    && ok jobs-threshold-notes || bad "jobs-threshold-notes ($(grep 'packet engine' jh0.txt))"

# adaptive routing is the switches' setting: jobs that differ in it are
# refused, naming the [job] section's line
jobs jar 0 0 'NCCL_IB_ADAPTIVE_ROUTING = 0'
rc=$?
line=$(grep -n '^\[job b\]' jar.ini | cut -d: -f1)
[ "$rc" = 2 ] && grep -q "^jar.ini:$line: \[job b\]: packet engine: adaptive routing off (NCCL_IB_ADAPTIVE_ROUTING) where \[job a\] has it on" jar.err \
    && ! grep -q 'every job runs on' jar.err && [ "$(wc -l <jar.err)" = 1 ] && ok refuses-jobs-ar \
    || bad "refuses-jobs-ar (rc $rc: $(cat jar.err))"
exit $fail
