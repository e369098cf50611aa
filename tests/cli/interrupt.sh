#!/bin/sh
# Ctrl-C during a long `collsim run` (SIGINT while a flow sweep prices its
# sizes, with --json and --csv asked for): the rows priced so far were
# already printed (rows stream), the run stops within 2 s, exits 130 with
# "collsim: interrupted" as stderr's last line, and leaves neither the
# files nor a temporary file beside them.
. "${top_srcdir:?}/tests/cli/lib.sh"
cd "$tmp" || exit 1
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# A background job of a script starts with SIGINT ignored, which collsim
# (as any Unix program) leaves so: give it SIGINT's default back.
env --default-signal=INT true 2>/dev/null || { echo "SKIP: env has no --default-signal"; exit 77; }

# A sweep of minutes: 256 nodes, 1 MiB to 16 GiB.
: >out.txt
env --default-signal=INT "$COLLSIM" run --topo dgx-h100 --nodes 256 --model flow --env NCCL_ALGO=Ring \
    -b 1M -e 16G -f 2 --json out.json --csv out.csv >out.txt 2>err.txt &
pid=$!
# wait for the 7th row (256 MiB): the header and rows are out, and a size
# that takes seconds is being priced (an engine that does not poll for
# Ctrl-C inside one is stopped by collsim's watchdog)
i=0
while [ "$(grep -vc '^#' out.txt)" -lt 7 ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 1200 ]; do
    sleep 0.1
    i=$((i + 1))
done
if ! kill -0 "$pid" 2>/dev/null; then
    wait "$pid"
    bad "ended before Ctrl-C (exit $?): $(tail -2 err.txt)"
    exit 1
fi
grep -q '^# Collective test starting: all_reduce_perf' out.txt && ok header-first || bad header-first
[ "$(grep -vc '^#' out.txt)" -ge 7 ] && ok rows-stream || bad rows-stream
sleep 0.2
t0=$(now_ms)
kill -INT "$pid"
wait "$pid"
rc=$?
t1=$(now_ms)
echo "# stopped in $((t1 - t0)) ms"
[ "$rc" -eq 130 ] && ok exit-130 || bad "exit-130 (got $rc)"
[ $((t1 - t0)) -le 2000 ] && ok prompt || bad "prompt ($((t1 - t0)) ms)"
[ "$(tail -1 err.txt)" = "collsim: interrupted" ] && ok message || bad "message: $(tail -2 err.txt)"
left=$(ls -A | grep '^out\.\(json\|csv\)' || true)
[ -z "$left" ] && ok no-files || bad "no-files: $left"
# no footer: the table says it did not conclude
! grep -q '^# Collective test concluded' out.txt && ok no-footer || bad no-footer

exit $fail
