#!/bin/sh
# collsim run --model flow: the same table as the analytic engine (every
# column but the times and bandwidths), times that agree with it at 1 GiB
# where nothing contends, and one clear error for algorithms the flow
# engine does not model. Skips (77) when the flow engine is not built in.
set -u
: "${COLLSIM:?}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }

"$COLLSIM" run --topo dgx-h100 --model flow -b 8 -e 8 >probe.txt 2>probe.err || {
    grep -q "unknown model 'flow'" probe.err && { echo "skip: flow engine not registered"; exit 77; }
}

for m in analytic flow; do
    "$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring --model "$m" -b 1M -e 1G -f 4 >"$m.txt" 2>"$m.err" \
        && ok "run-$m" || bad "run-$m ($(cat "$m.err"))"
done
head -1 flow.txt | grep -q '(model: flow)' && ok producer || bad producer
# every column but time/algbw/busbw (6-8, 10-12) is the same
cut_cols() { grep -v '^#' "$1" | awk '{print $1,$2,$3,$4,$5,$9,$13,$14,$15,$16,$17}'; }
cut_cols analytic.txt >a.cols
cut_cols flow.txt >f.cols
[ -s a.cols ] && cmp -s a.cols f.cols && ok same-columns || bad same-columns
# 1 GiB: times within 5% (docs/model-flow.md)
ta=$(awk '$1 == 1073741824 {print $6}' analytic.txt)
tf=$(awk '$1 == 1073741824 {print $6}' flow.txt)
awk -v a="$ta" -v f="$tf" 'BEGIN { r = f / a; exit !(a > 0 && r > 0.95 && r < 1.05) }' \
    && ok "agree-1GiB ($tf vs $ta us)" || bad "agree-1GiB ($tf vs $ta us)"
# deterministic
"$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_ALGO=Ring --model flow -b 1M -e 1G -f 4 >flow2.txt 2>/dev/null
cmp -s flow.txt flow2.txt && ok deterministic || bad deterministic
# NVLS is not modelled: exit 2, one line naming the way out
"$COLLSIM" run --topo dgx-h100 --model flow --env NCCL_ALGO=NVLS -b 1G -e 1G >nvls.txt 2>nvls.err
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <nvls.err)" -eq 1 ] && grep -q 'flow engine: NVLS allreduce has no rank program' nvls.err \
    && ok refuse-nvls || bad "refuse-nvls (rc $rc: $(cat nvls.err))"
exit $fail
