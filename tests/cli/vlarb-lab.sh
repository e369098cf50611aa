#!/bin/sh
# Lab 14 (docs/labs/lab14-ib-hol-blocking.md): jobs on their own VLs and
# InfiniBand VL arbitration in the packet engine (issue #14 items 2, 6, 7).
# The page's commands are run as written (so page and test cannot drift),
# then its claims are checked as directions and bounds, each derived below
# from the machine's rates and buffers, never as the numbers printed; the
# header lines; the per-VL counters and trace gauges; the [fabric] vlarb
# keys' bad values (one line, exit 2), their refusal on RoCE, and a job
# whose VL no table serves.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}"
S="$top_srcdir/scenarios"

mkdir "$tmp/bin" "$tmp/work" || exit 1
printf '#!/bin/sh\nexec "%s" "$@"\n' "$COLLSIM" >"$tmp/bin/collsim" && chmod +x "$tmp/bin/collsim" || exit 1
for d in scenarios docs; do ln -s "$top_srcdir/$d" "$tmp/work/$d" || exit 1; done
PATH="$tmp/bin:$PATH"
export PATH
awk '/^```sh lab-run[ \t]*$/ { on = 1; next } on && /^```/ { on = 0; next }
     on { if (sub(/\\$/, "")) { line = line $0; next } print line $0; line = "" }' \
    "$top_srcdir/docs/labs/lab14-ib-hol-blocking.md" >"$tmp/lab.sh"
[ "$(grep -c . "$tmp/lab.sh")" -eq 6 ] && ok lab-commands || bad "lab-commands: $(cat "$tmp/lab.sh")"
(cd "$tmp/work" && sh "$tmp/lab.sh") >"$tmp/lab.log" 2>&1
cd "$tmp/work" || exit 1
for f in same-vl own-vl own-vl-strict shared-vl shared-vl-1x3 shared-vl-strict; do
    grep -q '^  victim ' $f.txt || bad "run-$f: $(tail -2 $f.txt)"
done

python3 - <<'PY' && ok lab-claims || bad lab-claims
import re, sys
def load(name):
    jobs, vl = {}, {}
    for line in open(name + ".txt"):
        m = re.match(r"^  (\S+) +\d+ +\d+ +\S+ +\d+ +\S+ +\d+ +\S+ +\S+ +\d+ +([\d.]+) +([\d.]+) +([\d.]+)", line)
        if m:
            jobs[m.group(1)] = {"time": float(m.group(2)), "slowdown": float(m.group(4))}
        m = re.match(r"^# +(\d) +\d+ +\d+ +([\d.]+) +[\d.]+ \S+ +[\d.]+ \S+ +(\S+ -> \S+)$", line)
        if m:
            vl[(m.group(3), int(m.group(1)))] = float(m.group(2))   # credit-starved us
    return jobs, vl
R = {n: load(n) for n in ("same-vl", "own-vl", "own-vl-strict", "shared-vl", "shared-vl-1x3", "shared-vl-strict")}
errs = []
def check(cond, what):
    if not cond:
        errs.append(what)
J = lambda n, j: R[n][0][j]
starved = lambda n, link, v: R[n][1].get((link, v))
incast = ["incast-%d" % i for i in range(1, 5)]
# On the incast's VL the victim queues at leaf0 behind packets that wait
# for leaf1's credits (labs 11, 13): slowed like the incast, far from 1x.
check(J("same-vl", "victim")["slowdown"] > 2.5, "victim on VL 0 waits behind the tree")
# On a VL of its own it has its own queue and credits, and leaf0 -> leaf1
# (800 Gb/s) has room for all five 100 Gb/s senders: as if alone.
check(J("own-vl", "victim")["slowdown"] < 1.05, "victim on VL 1 runs as alone")
# The incast jobs are bound by the hot port either way: the same times.
for k in incast:
    check(abs(J("own-vl", k)["time"] / J("same-vl", k)["time"] - 1) < 0.01, k + " unchanged by the victim's VL")
# Only VL 0 of leaf0 -> leaf1 waits for credits; the victim's sender never.
check(starved("own-vl", "leaf0 -> leaf1", 0) > 0 and starved("own-vl", "leaf0 -> leaf1", 1) == 0,
      "leaf0 -> leaf1 starves on VL 0 only")
check(starved("own-vl", "n5.nic0 -> leaf0", 1) == 0 and starved("same-vl", "n5.nic0 -> leaf0", 0) > 0,
      "the victim's sender starves on VL 0, not on VL 1")
# Strict priority for VL 0 changes nothing for VL 1: 5 x 100 < 800 Gb/s,
# so the two VLs never need the link at once for long.
check(J("own-vl-strict", "victim")["slowdown"] < 1.05, "VL 0 strict leaves the victim alone")
# incast-4 on VL 1: at the hot port the default tables alternate VL 0 and
# VL 1 packet by packet (limit 0), so it gets half the port against a
# sixth for each VL 0 job: well under their time.
check(J("shared-vl", "incast-4")["time"] < 0.6 * J("shared-vl", "incast-1")["time"], "incast-4 gets half the port")
# ... but it arrives at 100 Gb/s, so VL 1 grows a branch of the tree: its
# excess, 2 MiB, is more than VL 1's 1.22 MiB at leaf1, and the victim
# behind it waits, less than on VL 0 (the branch drains at 50 Gb/s).
check(starved("shared-vl", "leaf0 -> leaf1", 1) > 0, "VL 1 starves when shared")
check(J("own-vl", "victim")["time"] < J("shared-vl", "victim")["time"] < J("same-vl", "victim")["time"],
      "the victim between own and same VL")
# VL 1 weighted 3:1: incast-4 gets 3/4 of the port, its excess 1 MiB fits
# VL 1's buffer at leaf1: VL 1 never starves upstream, the victim is alone.
check(J("shared-vl-1x3", "incast-4")["time"] < J("shared-vl", "incast-4")["time"], "incast-4 faster at 3:1")
check(starved("shared-vl-1x3", "leaf0 -> leaf1", 1) == 0, "VL 1 never starves at 3:1")
check(J("shared-vl-1x3", "victim")["slowdown"] < 1.05, "the victim alone again at 3:1")
# VL 0 strict: VL 1 gets the hot port only when VL 0 has nothing, so
# incast-4 ends last, the VL 0 jobs gain, and the victim is stuck behind
# incast-4 as it was behind everyone on VL 0.
for k in incast[:3]:
    check(J("shared-vl-strict", "incast-4")["time"] >= J("shared-vl-strict", k)["time"], "incast-4 last when VL 0 strict")
    check(J("shared-vl-strict", k)["time"] < J("shared-vl", k)["time"], k + " gains when VL 0 strict")
check(J("shared-vl-strict", "victim")["slowdown"] > 2.5, "the victim slowed again when VL 0 strict")
for e in errs:
    print("lab14:", e)
sys.exit(1 if errs else 0)
PY

# the header: a line per job with its VL (lab 14's promise), also when
# every job is on VL 0, and the run-wide VL says it is the first job's
grep -q '^# packet engine: \[job victim\]: data on VL 1 (NCCL_IB_SL 1: VL 1 by the default SL-to-VL map), the VL.s credits at every input port its own' own-vl.txt \
    && grep -q '^# packet engine: \[job incast-1\]: data on VL 0 (NCCL_IB_SL unset: SL 0: VL 0 by the default SL-to-VL map), sharing the VL.s credits' own-vl.txt \
    && grep -q '^# packet engine: InfiniBand, MTU [0-9]*, data on VL 0 (NCCL_IB_SL unset: SL 0: VL 0 by the default SL-to-VL map, \[job incast-1\].s; each job.s VL below)' own-vl.txt \
    && ok header-job-vls || bad header-job-vls
[ "$(grep -c '^# packet engine: \[job [a-z0-9-]*\]: data on VL 0 ' same-vl.txt)" = 5 ] && ok header-one-vl \
    || bad "header-one-vl: $(grep -c '^# packet engine: \[job' same-vl.txt) per-job lines with one VL"
grep -q '^# packet engine: VL arbitration at every port (IBA 7.6.9; docs/model-packet.md): high 0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0 (OpenSM.s default), low 0:0,1:4,' own-vl.txt \
    && grep -q 'VL arbitration at every port .*: high 0:0 (--vlarb-high), low 0:64,1:192 (--vlarb-low), Limit of High-Priority 0: one high packet, then a low one may go (OpenSM.s default)' shared-vl-1x3.txt \
    && grep -q 'Limit of High-Priority 255: no limit' shared-vl-strict.txt && ok header-vlarb || bad header-vlarb
# --trace: the victim's VL has gauges of its own; VL 0 of leaf0 -> leaf1
# starves, VL 1 never does (a gauge is written when it changes: none)
python3 - own-vl.trace.json <<'PY' && ok trace-vl-gauges || bad trace-vl-gauges
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = {e.get("name", "") for e in ev if e.get("ph") == "C"}
sys.exit(0 if {"queue leaf0 -> leaf1 VL 0", "queue leaf0 -> leaf1 VL 1", "credit-starved leaf0 -> leaf1 VL 0"} <= names
         and "credit-starved leaf0 -> leaf1 VL 1" not in names else 1)
PY

# bad values: one line naming the flag or file:line, what was expected, exit 2
refuse() {   # NAME PATTERN ARGS...
    name=$1 pat=$2
    shift 2
    "$COLLSIM" run "$@" >k.out 2>k.err
    rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <k.err)" = 1 ] && [ ! -s k.out ] && grep -q "$pat" k.err \
        && ok "$name" || bad "$name (rc $rc: $(cat k.err))"
}
L="$S/lab14-ib-hol-own-vl.ini"
refuse bad-vl "^collsim: --vlarb-low: '15:4' is not a VL:WEIGHT entry; expected a data VL 0 to 14" "$L" --vlarb-low 1:4,15:4
refuse bad-weight "'1:256' is not a VL:WEIGHT entry; expected a data VL 0 to 14 and a weight 0 to 255" "$L" --vlarb-low 1:256
refuse bad-entry "'1' is not a VL:WEIGHT entry" "$L" --vlarb-high 1
refuse empty-table "an empty table; expected entries VL:WEIGHT" "$L" --vlarb-high ''
refuse bad-limit "'256' is not a Limit of High-Priority; expected 0 to 255" "$L" --vlarb-high-limit 256
refuse long-table "more than 64 entries" "$L" --vlarb-low "$(i=0; s=1:1; while [ $i -lt 64 ]; do s="$s,1:1"; i=$((i + 1)); done; echo $s)"
# the victim's VL 1 with no weight: its packets would never leave
refuse unserved-vl "^collsim: --vlarb-low: VL 1 (NCCL_IB_SL 1: VL 1 by the default SL-to-VL map) has no entry of nonzero weight" \
    "$L" --vlarb-low 1:0,2:4
# on RoCE: refused, one line
refuse refuses-on-roce "^collsim: --vlarb-high-limit: the fabric is RoCE: VL arbitration is InfiniBand's" \
    "$S/lab-roce-incast.ini" --vlarb-high-limit 4
# in a file: file:line
sed 's/^model = packet$/model = packet\n[fabric]\nvlarb-high = 0:4,x/' "$L" >bad.ini
sed -i "s#^file = ../docs#file = $top_srcdir/docs#" bad.ini
line=$(grep -n '^vlarb-high' bad.ini | cut -d: -f1)
refuse file-line "^bad.ini:$line: .*'x' is not a VL:WEIGHT entry" bad.ini
exit $fail
