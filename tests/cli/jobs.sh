#!/bin/sh
# Several jobs on one machine ([job NAME] groups, --model flow), --trace
# and --link-stats: the jobs' table, JSON and CSV agree; a job that shares
# nothing is not slowed; jobs crossing an oversubscribed spine are; the
# trace is valid JSON with spans, calls and link counters; output and
# trace are identical on a second run; --dump writes the jobs back.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"
cd "$tmp" || exit 1

S="$top_srcdir/scenarios/two-jobs-spine.ini"
"$COLLSIM" run "$S" --json jobs.json --csv jobs.csv --trace trace.json --link-stats >out.txt 2>err.txt \
    && ok run || bad "run: $(cat err.txt)"
grep -q '^# collsim run: 3 jobs sharing one machine (model:flow)' out.txt && ok header || bad header
# slowdown column: each job above 1.2 (4:1 spine, three jobs where one fits)
awk '/^  [a-z]/ { n++; if ($13 > 1.2 && $13 < 3) k++ } END { exit !(n == 3 && k == 3) }' out.txt \
    && ok slowdowns || bad "slowdowns: $(grep '^  [a-z]' out.txt)"
grep -q '^# bottleneck: .*spine' out.txt && ok bottleneck-spine || bad "bottleneck: $(grep bottleneck out.txt)"
[ "$(grep -c '^flow\|^model:flow' jobs.csv)" -eq 3 ] && ok csv-rows || bad csv-rows
if command -v python3 >/dev/null 2>&1; then
    python3 - <<'PY' && ok json-and-trace || bad json-and-trace
import json
j = json.load(open("jobs.json"))
assert j["producer"] == "model:flow" and len(j["jobs"]) == 3
rows = [l.split() for l in open("out.txt") if l.startswith("  ") and l[2].isalpha()]
for r, t in zip(j["jobs"], rows):
    assert r["name"] == t[0] and abs(r["time_us"] - float(t[10])) < 0.006 and abs(r["slowdown"] - float(t[12])) < 0.0006
t = json.load(open("trace.json"))
ev = t["traceEvents"]
ph = {}
for e in ev:
    ph[e["ph"]] = ph.get(e["ph"], 0) + 1
assert ph.get("X", 0) > 1000 and ph.get("C", 0) > 100 and ph.get("M", 0) > 10, ph
names = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert any("job a" in n for n in names) and "links" in names, names
# calls: b runs 2 calls, c 4: 7 call spans on the calls tracks
calls = [e for e in ev if e["ph"] == "X" and e.get("cat") == "call"] or \
        [e for e in ev if e["ph"] == "X" and "#" in e["name"]]
assert len(calls) >= 7, len(calls)
PY
else
    grep -q '"traceEvents"' trace.json && ok trace-grep || bad trace-grep
fi
# deterministic, trace included
"$COLLSIM" run "$S" --json jobs2.json --trace trace2.json --link-stats >out2.txt 2>/dev/null
cmp -s out.txt out2.txt && cmp -s trace.json trace2.json && cmp -s jobs.json jobs2.json \
    && ok deterministic || bad deterministic
# --dump writes the jobs back; the dumped scenario gives the same table
"$COLLSIM" run "$S" --dump >dumped.ini 2>/dev/null
grep -q '^\[job c\]' dumped.ini && grep -q '^start=3000000ns' dumped.ini && ok dump || bad "dump: $(grep -A8 'job c' dumped.ini)"
"$COLLSIM" run dumped.ini >out3.txt 2>/dev/null
sed 1,3d out3.txt >a3; "$COLLSIM" run "$S" 2>/dev/null | sed 1,3d >a1
cmp -s a1 a3 && ok dump-round-trip || bad dump-round-trip

# two halves of one DGX H100 share nothing: slowdown 1
cat >halves.ini <<'INI'
[scenario]
model = flow
[topology]
preset = dgx-h100
[job left]
gpus = 0-3
size = 256M
[job right]
gpus = 4-7
size = 256M
INI
"$COLLSIM" run halves.ini >halves.txt 2>halves.err
awk '/^  (left|right) / { n++; if ($13 == 1.000 && $2 == 4) k++ } END { exit !(n == 2 && k == 2) }' halves.txt \
    && ok halves || bad "halves: $(cat halves.err) $(grep '^  ' halves.txt)"

# --trace and --link-stats on a sweep: a run per size, a bottleneck per size
"$COLLSIM" run --topo dgx-h100 --nodes 2 --model flow -b 1M -e 16M -f 4 --trace sweep.json --link-stats \
    >sweep.txt 2>sweep.err && ok sweep || bad "sweep: $(cat sweep.err)"
[ "$(grep -c '^# .* bottleneck: ' sweep.txt)" -eq 3 ] && ok sweep-bottlenecks || bad sweep-bottlenecks
grep -q '^# Link statistics (model:flow, allreduce 16 MiB' sweep.txt && ok sweep-link-table || bad sweep-link-table
# tracing changes no time: the table is the same with and without it
"$COLLSIM" run --topo dgx-h100 --nodes 2 --model flow -b 1M -e 16M -f 4 >plain.txt 2>/dev/null
grep -v '^#' sweep.txt >s1; grep -v '^#' plain.txt >s2
cmp -s s1 s2 && ok trace-same-times || bad trace-same-times

# a job's own NCCL variables: over the run's, for that job only
cat >own.ini <<'INI'
[scenario]
model = flow
[topology]
preset = dgx-h100
nodes = 2
[nccl]
NCCL_ALGO = Ring
[job a]
gpus = 0-3
size = 64M
[job b]
gpus = 4-7
size = 64M
NCCL_ALGO = Tree
NCCL_NOT_A_THING = 1
INI
"$COLLSIM" run own.ini >own.txt 2>own.err
awk '/^  a / { a = $8 } /^  b / { b = $8 } END { exit !(a == "Ring" && b == "Tree") }' own.txt \
    && ok job-own-nccl || bad "job-own-nccl: $(cat own.err) $(grep '^  ' own.txt)"
grep -q '^collsim: warning: \[job b\]: NCCL_NOT_A_THING (own.ini:15): ' own.err && ok job-own-warning \
    || bad "job-own-warning: $(cat own.err)"
"$COLLSIM" run own.ini --dump >own.dump && grep -qx 'NCCL_ALGO=Tree' own.dump && "$COLLSIM" run own.dump --dump >own.dump2 \
    && cmp -s own.dump own.dump2 && ok job-own-dump || bad job-own-dump
sed 's/NCCL_ALGO = Tree/NCCL_ALGO = Bogus/' own.ini >own-bad.ini
"$COLLSIM" run own-bad.ini >/dev/null 2>own-bad.err
[ $? -eq 2 ] && [ "$(wc -l <own-bad.err)" -eq 1 ] && grep -q '^own-bad.ini:14: NCCL_ALGO=Bogus: ' own-bad.err && ok job-own-bad-value \
    || bad "job-own-bad-value: $(cat own-bad.err)"
# the packet engine on InfiniBand runs each job on its own VL (its
# NCCL_IB_SL), and the header says which; on RoCE every job runs on the
# first job's priority, so another NCCL_IB_TC is refused, not ignored
sed 's/model = flow/model = packet/; s/NCCL_ALGO = Tree/NCCL_IB_SL = 1/; s/64M/1M/' own.ini >own-sl.ini
"$COLLSIM" run own-sl.ini >own-sl.txt 2>own-sl.err
[ $? -eq 0 ] && grep -q '^# packet engine: \[job b\]: data on VL 1 (NCCL_IB_SL 1: VL 1' own-sl.txt \
    && grep -q '^# packet engine: \[job a\]: data on VL 0 ' own-sl.txt \
    && ok job-own-sl-vl || bad "job-own-sl-vl: $(cat own-sl.err)"
sed 's/model = flow/model = packet/; s/NCCL_ALGO = Tree/NCCL_IB_TC = 160/; s/64M/1M/' own.ini >own-tc.ini
"$COLLSIM" run own-tc.ini --nic roce-400g >/dev/null 2>own-tc.err
[ $? -eq 2 ] && grep -q '^own-tc.ini:[0-9]*: \[job b\]: packet engine: priority 5 (NCCL_IB_TC 160: DSCP 40, priority 5' own-tc.err && ok job-own-tc-refused \
    || bad "job-own-tc-refused: $(cat own-tc.err)"
# the queue pairs' timeout (and retries, QPs) are the run's: a job's own
# NCCL_IB_TIMEOUT is refused, not ignored or taken for every job
sed 's/model = flow/model = packet/; s/NCCL_ALGO = Tree/NCCL_IB_TIMEOUT = 14/; s/64M/1M/' own.ini >own-to.ini
"$COLLSIM" run own-to.ini --nic roce-400g >/dev/null 2>own-to.err
[ $? -eq 2 ] && tail -n 1 own-to.err | \
    grep -q '^own-to.ini:[0-9]*: \[job b\]: packet engine: queue pairs with NCCL_IB_TIMEOUT 14, .* where \[job a\] has 20, ' own-to.err \
    && ok job-own-timeout-refused || bad "job-own-timeout-refused: $(cat own-to.err)"

# a job's size below one element (3 bytes of double) is refused at its line
printf '[scenario]\nmodel = flow\n[topology]\npreset = dgx-h100\nnodes = 2\n[job a]\nnodes = 0\ngpus = 0-1\nsize = 3\ndatatype = double\n' > tiny.ini
"$COLLSIM" run tiny.ini >tiny.txt 2>tiny.err
[ $? -eq 2 ] && [ ! -s tiny.txt ] &&
    [ "$(cat tiny.err)" = "tiny.ini:9: size: 3 bytes is less than one double element ([job a]); expected a larger size" ] &&
    ok job-size-below-element || bad "job-size-below-element: $(cat tiny.err)"

exit $fail
