#!/bin/sh
# collsim run --model simgrid. Where configure found SimGrid: the same
# table as the flow engine, times within 1% of it (same rank programs and
# parameters, SimGrid's own sharing; docs/model-simgrid.md), deterministic.
# Where it did not: the engine is not registered, and --model simgrid gets
# the standard one-line unknown-model error (exit 2) listing the engines
# that are built in.
set -u
: "${COLLSIM:?}" "${top_builddir:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }

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
args="--topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring -b 64K -e 256M -f 8"
for m in flow simgrid; do
    # shellcheck disable=SC2086
    "$COLLSIM" run $args --model "$m" >"$m.txt" 2>"$m.err" && ok "run-$m" || bad "run-$m ($(cat "$m.err"))"
done
head -1 simgrid.txt | grep -q '(model: simgrid)' && ok producer || bad producer
cut_cols() { grep -v '^#' "$1" | awk '{print $1,$2,$3,$4,$5,$9,$13,$14,$15,$16,$17}'; }
cut_cols flow.txt >f.cols
cut_cols simgrid.txt >s.cols
[ -s f.cols ] && cmp -s f.cols s.cols && ok same-columns || bad same-columns
grep -v '^#' flow.txt | awk '{print $1, $6}' >f.t
grep -v '^#' simgrid.txt | awk '{print $6}' >s.t
paste f.t s.t | awk '{ r = $3 / $2; if (!($2 > 0 && r > 0.99 && r < 1.01)) { print "size " $1 ": " $3 " vs " $2; bad = 1 } }
    END { exit bad }' && ok "agree-1%" || bad "agree-1%"
# shellcheck disable=SC2086
"$COLLSIM" run $args --model simgrid >simgrid2.txt 2>/dev/null
cmp -s simgrid.txt simgrid2.txt && ok deterministic || bad deterministic
# What the programs cannot express fails the same clean way as in the
# flow engine: exit 2, one line.
"$COLLSIM" run --topo dgx-h100 --model simgrid --env NCCL_ALGO=NVLS -b 1G -e 1G >nvls.txt 2>nvls.err
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <nvls.err)" -eq 1 ] && [ ! -s nvls.txt ] \
    && grep -q 'not modelled by the simgrid engine' nvls.err && ok "nvls-refused: $(cat nvls.err)" \
    || bad "nvls-refused (exit $rc: $(cat nvls.err))"
exit $fail
