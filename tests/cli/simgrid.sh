#!/bin/sh
# collsim run --model simgrid. Where configure found SimGrid: the same
# table as the flow engine, times within 1% of it (same rank programs and
# parameters, SimGrid's own sharing; docs/model-simgrid.md), deterministic,
# for rings and for the dataflow programs (Tree, NVLS, NVLSTree all-reduce).
# Where it did not: the engine is not registered, and --model simgrid gets
# the standard one-line unknown-model error (exit 2) listing the engines
# that are built in.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_builddir:?}"
cd "$tmp" || exit 1

if ! grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h"; then
    "$COLLSIM" run --topo dgx-h100 --model simgrid -b 1M -e 1M >out.txt 2>err.txt
    rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && [ ! -s out.txt ] \
        && grep -q "unknown model 'simgrid'; expected one of analytic" err.txt \
        && ok "not-built-in: $(cat err.txt)" || bad "not-built-in (exit $rc: $(cat err.txt))"
    exit $fail
fi

"$COLLSIM" run --topo dgx-h100 --model flow -b 8 -e 8 >probe.txt 2>probe.err || {
    grep -q "unknown model 'flow'" probe.err && { echo "skip: flow engine not registered"; exit 77; }
}
# The engine is a module collsim loads for --model simgrid alone
# (cs_engine_simgrid_load.c): collsim itself does not link SimGrid (its
# ns-3 and Boost cost every process ~90 ms to load), and a collsim with no
# module beside it nor installed says so in one line, exit 2
if command -v ldd >/dev/null 2>&1; then
    ldd "$COLLSIM" | grep -q 'libsimgrid' && bad "collsim links SimGrid: $(ldd "$COLLSIM" | grep simgrid)" \
        || ok "not-linked"
fi
[ -f "$top_builddir/collsim-simgrid.so" ] && ok module-built || bad "module-built: no $top_builddir/collsim-simgrid.so"
mkdir alone && cp "$COLLSIM" alone/collsim
alone/collsim run --topo dgx-h100 --model simgrid -b 1M -e 1M >alone.txt 2>alone.err
rc=$?
if [ $rc -eq 0 ]; then
    ok "module-missing: found installed (not beside the program)"
else
    [ $rc -eq 2 ] && [ "$(wc -l <alone.err)" -eq 1 ] && [ ! -s alone.txt ] \
        && grep -q "the SimGrid engine's module (collsim-simgrid.so) could not be loaded" alone.err \
        && ok "module-missing: $(cat alone.err)" || bad "module-missing (exit $rc: $(cat alone.err))"
fi
# The engine forks its SimGrid child without exec; a fork while the
# progress thread was still starting (a short run) left the child waiting
# on an allocator lock forever under ASan, 1 run in 4 (cs_progress.c):
# ten short runs, none may hang (each takes well under a second)
hung=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    timeout 120 "$COLLSIM" run --topo dgx-h100 --model simgrid -b 8 -e 8 >short.txt 2>short.err
    [ $? -eq 124 ] && hung=$((hung + 1))
done
[ $hung -eq 0 ] && ok "short-runs-no-hang" || bad "short-runs-no-hang: $hung of 10 hung"
args="--topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring -b 64K -e 256M -f 8"
for m in flow simgrid; do
    # shellcheck disable=SC2086
    "$COLLSIM" run $args --model "$m" >"$m.txt" 2>"$m.err" && ok "run-$m" || bad "run-$m ($(cat "$m.err"))"
done
head -1 simgrid.txt | grep -q '(model: simgrid)' && ok producer || bad producer
cut_cols() { grep -v '^#' "$1" | awk '{print $1,$2,$3,$4,$5,$9,$13,$14,$15,$16,$17}'; }
# agree NAME FLOW SIMGRID: same columns but the times; times within 1%.
agree() {
    cut_cols "$2" >"$1.f.cols"
    cut_cols "$3" >"$1.s.cols"
    [ -s "$1.f.cols" ] && cmp -s "$1.f.cols" "$1.s.cols" && ok "$1-same-columns" || bad "$1-same-columns"
    grep -v '^#' "$2" | awk '{print $1, $6}' >"$1.f.t"
    grep -v '^#' "$3" | awk '{print $6}' >"$1.s.t"
    paste "$1.f.t" "$1.s.t" | awk '{ r = $3 / $2; if (!($2 > 0 && r > 0.99 && r < 1.01)) { print "size " $1 ": " $3 " vs " $2; bad = 1 } }
        END { exit bad }' && ok "$1-agree-1%" || bad "$1-agree-1%"
}
agree ring flow.txt simgrid.txt
# shellcheck disable=SC2086
"$COLLSIM" run $args --model simgrid >simgrid2.txt 2>/dev/null
cmp -s simgrid.txt simgrid2.txt && ok deterministic || bad deterministic
# Dataflow programs: NCCL's own choices on one node (Ring, then NVLS from
# 4 MiB) and on two (Tree, then NVLSTree), and Tree forced on two nodes.
for case in "nvls:--topo dgx-h100" "nvlstree:--topo dgx-h100 --nodes 2" \
            "tree:--topo dgx-h100 --nodes 2 --env NCCL_ALGO=Tree"; do
    name=${case%%:*}
    for m in flow simgrid; do
        # shellcheck disable=SC2086
        "$COLLSIM" run ${case#*:} --model "$m" -b 64K -e 256M -f 16 >"$name-$m.txt" 2>"$name-$m.err" \
            || bad "run-$name-$m ($(cat "$name-$m.err"))"
    done
    agree "$name" "$name-flow.txt" "$name-simgrid.txt"
done
"$COLLSIM" run --topo dgx-h100 --nodes 2 --model simgrid -b 64K -e 256M -f 16 >nvlstree-simgrid2.txt 2>/dev/null
cmp -s nvlstree-simgrid.txt nvlstree-simgrid2.txt && ok dataflow-deterministic || bad dataflow-deterministic
grep -q ' NVLS ' nvls-simgrid.txt && grep -q ' NVLSTree ' nvlstree-simgrid.txt && grep -q ' Tree ' tree-simgrid.txt \
    && ok dataflow-algos || bad dataflow-algos
# SHM rings: each channel's receive is bound by chan.shm.<arch> (the
# edge's own ceiling, cs_shm_chan_bw) in SimGrid as in the flow engine:
# DGX A100 GPUs 0-3 with P2P off, 2 channels x 2.6 = 5.2 GB/s busbw (the
# links alone would give 7.6)
for m in flow simgrid; do
    "$COLLSIM" run --topo dgx-a100 --gpus 4 --procs-per-node 1 --env NCCL_P2P_DISABLE=1 --model "$m" \
        -b 16M -e 1G -f 8 >"shm-$m.txt" 2>"shm-$m.err" || bad "run-shm-$m ($(cat "shm-$m.err"))"
done
agree shm shm-flow.txt shm-simgrid.txt
awk '!/^#/ && $1 == 1073741824 { g = $8 > 5.15 && $8 < 5.25 } END { exit !g }' shm-simgrid.txt \
    && ok "shm-channel-ceiling" || bad "shm-channel-ceiling ($(awk '!/^#/ && $1 == 1073741824 {print $8}' shm-simgrid.txt))"
# What the programs cannot express fails the same clean way as in the
# flow engine: exit 2, one line.
"$COLLSIM" run --topo dgx-h100 --model simgrid --op allgather --env NCCL_ALGO=NVLS -b 1G -e 1G >ag.txt 2>ag.err
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <ag.err)" -eq 1 ] && [ ! -s ag.txt ] \
    && grep -q 'simgrid engine: NVLS allgather has no rank program' ag.err && ok "refuse-nvls-allgather: $(cat ag.err)" \
    || bad "refuse-nvls-allgather (exit $rc: $(cat ag.err))"
# The process layout's host floor (one process driving 8 GPUs issues 8
# kernels per call): the same small-call times as the flow engine, above
# the one-process-per-GPU times.
for m in flow simgrid; do
    "$COLLSIM" run --topo dgx-h100 --procs-per-node 1 --model $m -b 8 -e 1K -f 8 >layout-$m.txt 2>&1 || bad "layout-$m"
done
"$COLLSIM" run --topo dgx-h100 --model simgrid -b 8 -e 8 >layout-default.txt 2>&1 || bad layout-default
grep -v '^#' layout-flow.txt | awk '{print $6}' >layout-flow.t
grep -v '^#' layout-simgrid.txt | awk '{print $6}' >layout-simgrid.t
paste layout-flow.t layout-simgrid.t | awk '{ n++; if ($1 != $2) b = 1 } END { exit (n < 2 || b) }' \
    && awk -v a="$(grep -v '^#' layout-simgrid.txt | awk 'NR == 1 { print $6 }')" \
           -v b="$(grep -v '^#' layout-default.txt | awk 'NR == 1 { print $6 }')" 'BEGIN { exit !(a > b) }' \
    && ok layout-host-floor || bad layout-host-floor
exit $fail
