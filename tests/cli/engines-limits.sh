#!/bin/sh
# Engines refuse before they run out of memory (issue 13, item 3): each
# engine estimates a call's memory from the program's size before it runs
# (docs/model-flow.md and docs/model-simgrid.md, "Memory"); past
# --max-memory (or the memory available) it refuses with one line naming
# the estimate, the limit and what to try instead, exit status 3, nothing
# on standard output. A run within the limit is unaffected.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_builddir:?}"
cd "$tmp" || exit 1

# refused NAME MODEL ARGS...: exit 3, one line in the expected form, no output
refused() {
    name=$1 model=$2
    shift 2
    "$COLLSIM" run --topo dgx-h100 --model "$model" -b 64M -e 64M --max-memory 1M "$@" >"$name.out" 2>"$name.err"
    rc=$?
    [ "$rc" -eq 3 ] && [ ! -s "$name.out" ] && [ "$(wc -l <"$name.err")" -eq 1 ] &&
        grep -Eq "^collsim: --model $model on [0-9]+ nodes needs about [0-9.]+ [KMGT]iB.* \(limit 1\.0 MiB, --max-memory\); expected a larger limit, or .*(fewer nodes|NCCL_ALGO=Ring)$" "$name.err" \
        && ok "$name: $(cat "$name.err")" || bad "$name (exit $rc: $(cat "$name.err"))"
}

# The flow engine: NVLSTree at 16 nodes keeps about 8000 flows (5 MiB).
refused flow-16 flow --nodes 16
# The packet engine: the flow engine's part, its ports and QPs (16 nodes
# of 8 x 400G RoCE: 256 ports, 1024 QPs, about 6 MiB).
refused packet-16 packet --nodes 16 --nic roce-400g
# The analytic engine's state is small: 1 MiB is enough on 2 nodes.
"$COLLSIM" run --topo dgx-h100 --model analytic --nodes 2 -b 64M -e 64M --max-memory 1M >an.out 2>an.err \
    && [ ! -s an.err ] && ok analytic-fits || bad "analytic-fits ($(cat an.err))"
# Several jobs at once (flow): the estimate covers them all.
cat >jobs.ini <<'INI'
[topology]
preset = dgx-h100
nodes = 16
[job a]
nodes = 0,1,2,3,4,5,6,7
op = allreduce
size = 64M
[job b]
nodes = 8,9,10,11,12,13,14,15
op = allreduce
size = 64M
INI
"$COLLSIM" run --model flow --max-memory 1M jobs.ini >jobs.out 2>jobs.err
rc=$?
[ "$rc" -eq 3 ] && [ "$(wc -l <jobs.err)" -eq 1 ] && grep -q "^collsim: --model flow on 16 nodes needs about.*; expected a larger limit, or NCCL_ALGO=Ring, fewer nodes, or --model analytic (each job or call priced alone)$" jobs.err \
    && ok "jobs: $(cat jobs.err)" || bad "jobs (exit $rc: $(cat jobs.err))"

# The same jobs on one packet network: the network and both jobs' QPs.
"$COLLSIM" run --model packet --nic roce-400g --max-memory 1M jobs.ini >pjobs.out 2>pjobs.err
rc=$?
[ "$rc" -eq 3 ] && [ "$(wc -l <pjobs.err)" -eq 1 ] && grep -q "^collsim: --model packet on 16 nodes needs about" pjobs.err \
    && ok "packet jobs: $(cat pjobs.err)" || bad "packet jobs (exit $rc: $(cat pjobs.err))"

# A sweep whose point is refused for memory: exit 3 (a resource failure,
# not bad input), one line naming the point, nothing written.
"$COLLSIM" sweep --topo dgx-h100 --model flow --grid topology.nodes=2,4 -b 1M -e 1M --max-memory 1K \
    --output sw.csv >sw.out 2>sw.err
rc=$?
[ "$rc" -eq 3 ] && [ "$(wc -l <sw.err)" -eq 1 ] && grep -q "^collsim: --model flow on 2 nodes needs about .*(point 0: topology.nodes=2)$" sw.err \
    && [ ! -e sw.csv ] && ok "sweep: $(cat sw.err)" || bad "sweep (exit $rc: $(cat sw.err))"

# A run within the limit: the same table as without the flag.
"$COLLSIM" run --topo dgx-h100 --model flow --nodes 16 -b 1M -e 64M -f 8 >plain.txt 2>plain.err || bad "plain ($(cat plain.err))"
"$COLLSIM" run --topo dgx-h100 --model flow --nodes 16 -b 1M -e 64M -f 8 --max-memory 64G >limited.txt 2>limited.err \
    && cmp -s plain.txt limited.txt && [ ! -s limited.err ] && ok within-limit-unchanged || bad within-limit-unchanged

# A bad size is bad input (exit 2), one line.
for v in 0 1x -5 ""; do
    "$COLLSIM" run --topo dgx-h100 --max-memory "$v" >bad.out 2>bad.err
    rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l <bad.err)" -eq 1 ] && grep -q "^collsim: --max-memory: " bad.err \
        && ok "bad-size '$v'" || bad "bad-size '$v' (exit $rc: $(cat bad.err))"
done

# The SimGrid engine, where built: 1536 actors on 2 nodes, about 210 MiB.
if grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h"; then
    refused simgrid-2 simgrid --nodes 2
    # the limit holds for compare too (the same parser)
    "$COLLSIM" compare --topo dgx-h100 --model simgrid --nodes 2 -b 64M -e 64M --max-memory 1M \
        --design a:nodes=2 --design b:nodes=4 >cmp.out 2>cmp.err
    rc=$?
    [ "$rc" -eq 3 ] && [ "$(wc -l <cmp.err)" -eq 1 ] && grep -q "^collsim: --model simgrid on" cmp.err \
        && ok "compare: $(cat cmp.err)" || bad "compare (exit $rc: $(cat cmp.err))"
else
    echo "skip: simgrid not built (its refusal untested here)"
fi
exit $fail
