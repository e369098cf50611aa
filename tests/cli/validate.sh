#!/bin/sh
# collsim validate end to end: a hand-made log's numbers come back as
# printed, each error equals (predicted - measured) / measured of its own
# row, collsim's own prediction read back as a log gives zero error, JSON and
# CSV, determinism, and bad input (one line, exit 2, nothing written). When
# the shared data set sits beside the repository, validate runs on some of
# its files and prints a summary (accuracy is not asserted here: that is
# docs/validation.md's job).
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"

logs="$top_srcdir/tests/data/logs"
cd "$tmp" || exit 1
rows() { grep -c '^  *[0-9]' "$1"; }

"$COLLSIM" validate --help > help.txt && grep -q -- '--table' help.txt && grep -q -- '--op' help.txt &&
    grep -q -- '--nodes' help.txt && ok help || bad help

# ---- a hand-made log: 2 hosts x 2 GPUs, two tables ---------------------------
if "$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 > a.txt 2> a.err; then
    ok exit-0
else
    bad "exit-0 ($(cat a.err))"
fi
[ "$(grep -c '^# collsim validate: ' a.txt)" -eq 2 ] && ok two-tables || bad two-tables
# --fail-on-miss: the same report, then exit 1 and one line where a table
# misses (table 1 does: a hand-made log), exit 0 where none does (table 2)
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --fail-on-miss > fm.txt 2> fm.err
rc=$?
[ $rc -eq 1 ] && cmp -s a.txt fm.txt && [ "$(wc -l < fm.err)" -eq 1 ] &&
    grep -q '^collsim: validate: 1 of 2 compared tables of .*two-tables.txt misses a target' fm.err &&
    ok fail-on-miss || bad "fail-on-miss (rc=$rc: $(cat fm.err))"
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --table 1 > t1.txt 2>&1
grep -q '^# summary busbw >=1MiB: .*result=miss' t1.txt || grep -q '^# summary time <=64KiB: .*result=miss' t1.txt &&
    ok fail-on-miss-table-1-misses || bad fail-on-miss-table-1-misses
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --table 2 --fail-on-miss > fm2.txt 2> fm2.err
rc=$?
if grep -q 'result=miss' fm2.txt; then
    [ $rc -eq 1 ] && ok fail-on-miss-table-2 || bad "fail-on-miss-table-2 (rc=$rc)"
else
    [ $rc -eq 0 ] && [ ! -s fm2.err ] && ok fail-on-miss-pass || bad "fail-on-miss-pass (rc=$rc: $(cat fm2.err))"
fi

# ---- a variable NCCL removed is judged by the log's NCCL version ------------
# (issue #9): NCCL 2.4.7 read NCCL_TREE_THRESHOLD, so an old log gets a note
# that the model ignores it; a 2.28.9 log (nccl-library=22809) a warning
sed '4s/.*/NCCL version 2.4.7+cuda10.1/' "$logs/two-tables.txt" > old247.txt
"$COLLSIM" validate old247.txt --topo dgx-h100 --nodes 2 --gpus 2 --table 1 --env NCCL_TREE_THRESHOLD=0 > tt-old.txt 2>&1
grep -q '^# modelled: note: NCCL_TREE_THRESHOLD (--env): NCCL 2.4.7+cuda10.1 read it' tt-old.txt &&
    ! grep -q 'warning: NCCL_TREE_THRESHOLD' tt-old.txt && ok tree-threshold-old-log || bad tree-threshold-old-log
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --table 1 --env NCCL_TREE_THRESHOLD=0 > tt-new.txt 2>&1
grep -q '^# modelled: warning: NCCL_TREE_THRESHOLD (--env): NCCL does not read this variable' tt-new.txt &&
    ! grep -q 'note: NCCL_TREE_THRESHOLD' tt-new.txt && ok tree-threshold-new-log || bad tree-threshold-new-log
[ "$(rows a.txt)" -eq 5 ] && ok row-count || bad row-count
grep -q '^# measured: nccl-tests: allreduce, float sum, 4 ranks on 2 nodes, 3 sizes$' a.txt &&
    ok measured-line || bad measured-line
grep -q '^# modelled: model:analytic' a.txt && ok modelled-line || bad modelled-line
grep -q '^# compared: out-of-place columns' a.txt && ok placement-said || bad placement-said
# the measured columns are the log's, row by row
awk '/^  *[0-9]/ { printf "%s %s %s\n", $1, $2, $5 }' a.txt > meas.txt
printf '1024 20.00 0.08\n2048 20.48 0.15\n4096 40.96 0.15\n1024 30.00 0.05\n2048 30.72 0.10\n' > want.txt
cmp -s meas.txt want.txt && ok measured-columns || bad measured-columns
# each time error is (predicted - measured) / measured of its row, and the
# busbw error measured time / predicted time - 1
awk '/^  *[0-9]/ {
        m = $2; p = $3; te = $4; be = $7
        sub(/%/, "", te); sub(/%/, "", be)
        dt = 100 * (p - m) / m - te; db = 100 * (m / p - 1) - be
        if (dt < -0.06 || dt > 0.06 || db < -0.06 || db > 0.06) { print "row: " $0; bad = 1 }
     }
     END { exit bad }' a.txt && ok error-arithmetic || bad error-arithmetic
# the summary: median of |time errors| over sizes <= 64 KiB, recomputed
awk '/^# collsim validate/ { t++ } t == 1 && /^  *[0-9]/ { e = $4; sub(/%/, "", e); e += 0; if (e < 0) e = -e; v[++n] = e }
     t == 1 && /^# summary time/ { line = $0 }
     END { # 3 values: the median is the middle one
           for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
           want = sprintf("median=%.1f%%", v[2])
           exit !(n == 3 && index(line, "n=3 " want) > 0) }' a.txt && ok summary-median || bad summary-median
grep -q '^# summary busbw >=1MiB: n=0 result=none' a.txt && ok summary-none || bad summary-none

# --table and --env
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --table 2 --env NCCL_ALGO=Ring > b.txt 2>&1 &&
    [ "$(grep -c '^# collsim validate: ' b.txt)" -eq 1 ] && grep -q 'table 2 (first row at line 27)' b.txt &&
    grep -q '^# modelled: NCCL environment: NCCL_ALGO=Ring (--env)$' b.txt && ok table-env || bad table-env

# the calling shell's NCCL variables are not the measured run's
NCCL_ALGO=Tree "$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 > c.txt 2>&1 &&
    cmp -s a.txt c.txt && ok environment-ignored || bad environment-ignored

# determinism, JSON and CSV
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --json v.json --csv v.csv > d.txt 2>&1 &&
    cmp -s a.txt d.txt && ok deterministic || bad deterministic
[ "$(wc -l < v.csv)" -eq 6 ] && head -1 v.csv | grep -q '^table,size,measured_us,predicted_us,time_error,' &&
    grep -q '^2,2048,30.72,' v.csv && ok csv || bad csv
grep -q '"busbw_at_least_1MiB": {"n": 0' v.json && grep -q '"size": 4096, "measured_us": 40.96' v.json && ok json || bad json

# --skip-unsupported: the same output where the engine prices every size;
# where it refuses an algorithm, the refused sizes are left out with a note
# naming it, and a table with no size priced is one error line naming it.
v2="validate $logs/two-tables.txt --topo dgx-h100 --nodes 2 --gpus 2 --table 2 --model flow"
"$COLLSIM" $v2 --env NCCL_ALGO=Ring > s1.txt 2>&1 && "$COLLSIM" $v2 --env NCCL_ALGO=Ring --skip-unsupported > s2.txt 2>&1 &&
    cmp -s s1.txt s2.txt && ! grep -q 'skipped size' s2.txt && ok skip-unchanged || bad skip-unchanged
if "$COLLSIM" $v2 --env NCCL_ALGO=Tree > s3.txt 2> s3.err; then
    # the flow engine models Tree here: the flag changes nothing
    "$COLLSIM" $v2 --env NCCL_ALGO=Tree --skip-unsupported > s4.txt 2>&1 && cmp -s s3.txt s4.txt &&
        ok skip-refused || bad skip-refused
else
    "$COLLSIM" $v2 --env NCCL_ALGO=Tree --skip-unsupported > s4.txt 2> s4.err
    rc=$?
    [ $rc -eq 2 ] && [ ! -s s4.txt ] && [ "$(wc -l < s4.err)" -eq 1 ] &&
        grep -q 'table 2: the flow engine priced none of the 2 sizes: it does not model Tree (what NCCL picks here)' s4.err &&
        ok skip-refused || bad "skip-refused (rc=$rc: $(cat s4.err))"
fi

# ---- JSON input (-J) ------------------------------------------------------------
"$COLLSIM" validate "$logs/run.json" --topo dgx-a100 --nodes 2 --gpus 2 > j.txt 2> j.err &&
    grep -q 'reducescatter, float sum, 4 ranks on 2 nodes, 2 sizes' j.txt && [ "$(rows j.txt)" -eq 2 ] &&
    ok json-log || bad "json-log ($(cat j.err))"
# a JSON row's nwrong is said, as a text row's #wrong
sed '0,/"nwrong":0.000000/s//"nwrong":12.000000/' "$logs/run.json" > jw.json
"$COLLSIM" validate jw.json --topo dgx-a100 --nodes 2 --gpus 2 > jw.txt 2>&1 &&
    grep -q '^# measured: line [0-9]*: nccl-tests reports wrong results (12 out-of-place, 0 in-place)' jw.txt &&
    ! grep -q 'wrong results' j.txt && ok json-nwrong-said || bad "json-nwrong-said ($(grep -c wrong jw.txt))"
# what the JSON records of its run is used: its NCCL_* "env" (a flag wins),
# its layout ("config": nthreads x ngpus a process) and its GPUs' name
grep -q '^# modelled: NCCL environment: NCCL_ALGO=Ring (.*run.json:2: "env")' j.txt &&
    grep -q '^# modelled: process layout: 1 process per node, 1 thread x 2 GPUs each' j.txt &&
    "$COLLSIM" validate "$logs/run.json" --topo dgx-a100 --nodes 2 --gpus 2 --env NCCL_ALGO=Ring,PAT > j2.txt 2>&1 &&
    grep -q '^# modelled: NCCL environment: NCCL_ALGO=Ring,PAT (--env)' j2.txt &&
    { "$COLLSIM" validate "$logs/run.json" --topo dgx-h100 --nodes 2 --gpus 2 > j3.txt 2>&1
      grep -q "^# finding: .*run.json:[0-9]*: the run's GPUs are NVIDIA A100-SXM4-80GB" j3.txt &&
      ! grep -q 'the run is 2 processes' j3.txt; } &&
    ok json-log-settings || bad "json-log-settings ($(grep -E 'environment|layout|GPUs are' j.txt j2.txt j3.txt | cut -c1-120))"
# the env's variables naming the run's own devices, and those NCCL does not
# read, are not applied (a note names them); the others carry their line
sed 's/"NCCL_ALGO=Ring"/"NCCL_ALGO=Ring","NCCL_IB_HCA=ibp","NCCL_SOCKET_IFNAME=bond0","NCCL_VERSION=2.28.9"/' \
    "$logs/run.json" > jh.json
"$COLLSIM" validate jh.json --topo dgx-a100 --nodes 2 --gpus 2 > jh.txt 2> jh.err &&
    grep -q '^# modelled: NCCL environment: NCCL_ALGO=Ring (jh.json:2: "env")$' jh.txt &&
    grep -q '^# modelled: the log.s "env" NCCL_IB_HCA=ibp, NCCL_SOCKET_IFNAME=bond0 not applied: they name this host.s own devices' jh.txt &&
    grep -q '^# modelled: the log.s "env" NCCL_VERSION not applied: NCCL v2.28.9 reads no such variable' jh.txt &&
    grep -q '^# modelled: transports: .*NET/IB' jh.txt \
    && ok json-env-own-names-kept-out || bad "json-env-own-names-kept-out ($(grep -E 'environment|applied|transports' jh.txt) $(cat jh.err))"
# values beyond any run, and no time for data, are bad input at their line,
# in the text log and in the JSON alike
"$COLLSIM" run --topo dgx-h100 -b 1M -e 4M -f 4 > vb.log 2>&1 || bad vb-run
awk '$1 == "1048576" && !d { $6 = "1e300"; d = 1 } { print }' vb.log > big.log
awk '$1 == "1048576" && !d { $6 = "0.00"; d = 1 } { print }' vb.log > zero.log
sed 's/"time":50.000000/"time":1e300/' "$logs/run.json" > big.json
for f in big.log zero.log; do
    "$COLLSIM" validate "$f" --topo dgx-h100 > /dev/null 2> "$f.err"; echo $? > "$f.rc"
done
"$COLLSIM" validate big.json --topo dgx-a100 --nodes 2 --gpus 2 > /dev/null 2> big.json.err; echo $? > big.json.rc
[ "$(cat big.log.rc)" = 2 ] && grep -q "^big.log:[0-9]*: out-of-place time '1e300' is beyond any run; expected at most" big.log.err &&
    [ "$(cat zero.log.rc)" = 2 ] && grep -q "^zero.log:[0-9]*: out-of-place time 0 us for 1048576 bytes; expected a time above 0" zero.log.err &&
    [ "$(cat big.json.rc)" = 2 ] && grep -q "^big.json:[0-9]*: result 1: out_of_place 'time' .* is beyond any run" big.json.err \
    && ok values-beyond-any-run || bad "values-beyond-any-run ($(cat big.log.err zero.log.err big.json.err))"

# ---- collsim's own prediction read back: zero error -------------------------
for args in "--topo dgx-h100 -b 1K -e 64M -f 2" "--topo dgx-h100 --nodes 2 --op allgather -b 64K -e 256M -f 4"; do
    # shellcheck disable=SC2086
    "$COLLSIM" run $args > pred.txt 2>/dev/null
    topo=$(echo "$args" | sed 's/ -b .*//; s/--op [a-z]*//')
    # shellcheck disable=SC2086
    if "$COLLSIM" validate pred.txt $topo > rt.txt 2> rt.err; then
        grep -q '^# measured: model:analytic: ' rt.txt &&
        awk '/^  *[0-9]/ { for (i = 4; i <= 7; i += 3) { e = $i; sub(/%/, "", e); if (e > 0.5 || e < -0.5) bad = 1 } n++ }
             END { exit bad || n < 5 }' rt.txt && ok "round-trip ($args)" || bad "round-trip ($args)"
    else
        bad "round-trip ($args): $(cat rt.err)"
    fi
done

# ---- bad input: one line, exit 2, nothing written ------------------------------
expect_fail() {
    name=$1; pattern=$2; shift 2
    rm -f out.json
    "$COLLSIM" validate "$@" --json out.json > out.txt 2> err.txt
    rc=$?
    if [ $rc -eq 2 ] && [ "$(wc -l < err.txt)" -eq 1 ] && grep -q -- "$pattern" err.txt && [ ! -e out.json ] &&
       [ ! -s out.txt ]; then
        ok "$name"
    else
        bad "$name (rc=$rc: $(cat err.txt))"
    fi
}
expect_fail no-table "no-table.txt: no nccl-tests table found; expected lines like" "$logs/no-table.txt" --topo dgx-h100
expect_fail bad-row "bad-number.txt:2: bad out-of-place time '12x.5'" "$logs/bad-number.txt" --topo dgx-h100
expect_fail bad-json "bad.json:2: JSON syntax error" "$logs/bad.json" --topo dgx-h100
expect_fail missing "nope.txt: cannot read" nope.txt --topo dgx-h100
expect_fail ranks "two-tables.txt:17: table 1 was measured over 4 ranks on 2 nodes but the topology has 8 GPUs on 1 node;" \
    "$logs/two-tables.txt" --topo dgx-h100
expect_fail no-such-table "two-tables.txt: no table 3; expected 1 to 2" "$logs/two-tables.txt" --topo dgx-h100 --table 3
expect_fail alltoall-ranks "srun-headerless.txt:10: table 3 was measured over 16 ranks" "$logs/srun-headerless.txt" --topo dgx-h100 --table 3
expect_fail op-mismatch "srun-headerless.txt:7: table 2 does not look like allreduce" "$logs/srun-headerless.txt" \
    --topo dgx-h100 --op allreduce
expect_fail bad-op "collsim: --op: unknown collective 'alltoallv'" "$logs/two-tables.txt" --topo dgx-h100 --op alltoallv
expect_fail no-topology "no topology given" "$logs/two-tables.txt"
expect_fail bad-env "collsim: --env: 'ALGO=Ring' is not an NCCL variable setting" "$logs/two-tables.txt" --topo dgx-h100 --env ALGO=Ring
expect_fail no-log "no log given" --topo dgx-h100
expect_fail bad-table "collsim: --table: '0' is not a table number" "$logs/two-tables.txt" --topo dgx-h100 --table 0

# ---- the published runs, when they are beside the repository -----------------
data="$top_srcdir/../shared/data/real"
if [ -d "$data" ]; then
    f="$data/a100x8-nvswitch-allreduce-1node-upto128M-nccl2.19.3.txt"
    [ -f "$f" ] && "$COLLSIM" validate "$f" --topo dgx-a100 > s1.txt 2>&1 && [ "$(rows s1.txt)" -eq 25 ] &&
        grep -q '^# summary busbw >=1MiB: n=8 median=' s1.txt && grep -q '^# summary time <=64KiB: n=14 median=' s1.txt &&
        ok shared-a100 || bad shared-a100
    f="$data/h100x8-8nodes-ib-ndr400-allreduce-default-vs-tuned-ncclUNSTATED.txt"
    [ -f "$f" ] && "$COLLSIM" validate "$f" --topo dgx-h100 --nodes 8 --table 2 --env NCCL_MIN_CTAS=24 > s2.txt 2>&1 &&
        [ "$(rows s2.txt)" -eq 14 ] && grep -q '^# summary busbw >=1MiB: n=14 median=' s2.txt &&
        ok shared-h100-8nodes || bad shared-h100-8nodes
    # the notes of the tables skipped (gather, scatter) with all, not with --table
    f3="$data/b200x8-2nodes16gpu-ib-8xndr400-sendrecv-ar-ag-rs-reduce-bcast-alltoall-gather-scatter-mpirun-n2-g8-1M-16G-nccl2.29.2.txt"
    [ -f "$f3" ] && "$COLLSIM" validate "$f3" --topo dgx-b200 --nodes 2 > s3.txt 2>&1 &&
        [ "$(grep -c '^# log: .*: table [89] skipped: ' s3.txt)" = 2 ] &&
        "$COLLSIM" validate "$f3" --topo dgx-b200 --nodes 2 --table 3 > s4.txt 2>&1 && ! grep -q '^# log:' s4.txt &&
        ok shared-notes-of-the-table || bad shared-notes-of-the-table
    # the flow engine with the sizes it refuses left out: every measured
    # size is either compared or named as skipped
    [ -f "$f" ] && "$COLLSIM" validate "$f" --topo dgx-h100 --nodes 8 --table 2 --env NCCL_MIN_CTAS=24 --model flow \
        --skip-unsupported > s5.txt 2>&1 && nskip=$(grep -c '^# modelled: skipped size [0-9]* ([A-Za-z]*): not priced: ' s5.txt || true) &&
        [ $(( $(rows s5.txt) + nskip )) -eq 14 ] && { [ "$nskip" -eq 0 ] || grep -q "^# compared: $nskip measured sizes have no prediction" s5.txt; } &&
        ok shared-flow-skip || bad shared-flow-skip
else
    echo "ok shared # SKIP no shared data set beside the repository"
fi

# What NCCL's INFO lines say it did, against the model's decisions, pair by
# pair: sockets between the hosts where the model has RDMA (table 1, whose
# rings agree with collsim's); SHM where it has P2P, RDMA without GPUDirect,
# 3 channels, a ring that is not collsim's (table 2). A transport finding
# names its flag, and with those flags it is gone (the rings and channels
# collsim's search then finds are its own business); a log without
# INFO lines has neither the summary nor findings; JSON carries both.
info="$logs/info-transports.txt"
"$COLLSIM" validate "$info" --topo dgx-h100 --nodes 2 --gpus 2 --json fi.json > fi.txt 2> fi.err || bad "info-exit ($(cat fi.err))"
grep -q "^# measured: NCCL's INFO lines: connections via P2P/CUMEM (2 lines, the first at line 18), via NET/Socket/0 (3 lines, the first at line 19); network Socket (line 17); the rings of 2 channels (from line 23)$" fi.txt &&
    ok info-summary || bad info-summary
grep -q "^# finding: .*info-transports.txt:19: NCCL connected rank 1 to rank 2 via NET/Socket/0 (and 2 more such lines), where the model has NET/IB with GPUDirect RDMA: .*--env NCCL_IB_DISABLE=1$" fi.txt &&
    ok info-socket-finding || bad info-socket-finding
grep -q "^# finding: .*info-transports.txt:39: NCCL connected rank 0 to rank 1 via SHM/direct/direct, where the model has P2P: .*--env NCCL_P2P_DISABLE=1 (with NCCL_NET_DISABLE_INTRA=1 where the model then sends GPU pairs through a NIC)$" fi.txt &&
    grep -q "^# finding: .*info-transports.txt:40: NCCL connected rank 1 to rank 2 via NET/IB/0 (and 1 more such line), where the model has NET/IB with GPUDirect RDMA: .*--env NCCL_NET_GDR_LEVEL=LOC prices every network transfer through host memory (NCCL's reason, line 48: GPU Direct RDMA Disabled for GPU 1 / HCA 0 (distance 8 > 5))$" fi.txt &&
    grep -q "^# finding: .*info-transports.txt:43: NCCL ran 3 coll channels, collsim's reproduction of its search gives [0-9]*:" fi.txt &&
    grep -q "^# finding: .*info-transports.txt:45: NCCL's ring on channel 1 runs 0 1 2 3, collsim's 0 3 2 1 (1 of the 3 channels the log lists differs):" fi.txt &&
    [ "$(grep -c '^# finding: ' fi.txt)" -eq 5 ] && ok info-findings || bad "info-findings ($(grep -c '^# finding: ' fi.txt))"
grep -q '"findings": \["[^"]*info-transports.txt:19: NCCL connected rank 1 to rank 2 via NET/Socket/0' fi.json &&
    grep -q '"nccl_info": "connections via SHM/direct/direct' fi.json && ok info-json || bad info-json
"$COLLSIM" validate "$info" --topo dgx-h100 --nodes 2 --gpus 2 --table 1 --env NCCL_IB_DISABLE=1 > fi1.txt 2>&1 &&
    grep -q '^# measured: NCCL.s INFO lines: ' fi1.txt && ! grep -q '^# finding: .*NCCL connected' fi1.txt &&
    ok info-socket-flag || bad info-socket-flag
"$COLLSIM" validate "$info" --topo dgx-h100 --nodes 2 --gpus 2 --table 2 --env NCCL_P2P_DISABLE=1 \
    --env NCCL_NET_GDR_LEVEL=LOC > fi2.txt 2>&1 && ! grep -q '^# finding: .*NCCL connected' fi2.txt &&
    grep -q '^# finding: .* coll channels' fi2.txt && ok info-flags || bad info-flags
! grep -q "^# finding: \|INFO lines" a.txt && grep -q '"nccl_info": null, "findings": \[\]' v.json &&
    ok info-none || bad info-none

# A [receive] line is the receiver's own setup: GPU 3 sends without
# GPUDirect RDMA (its NIC is across the CPUs), GPU 0 receives with it; both
# agree with the model. The same log with ranks placed round-robin across
# the hosts is not judged pair by pair (one finding says why). A run cut off
# mid-table keeps its own lines: the next run's sockets go to table 2.
# NCCL's IB transport opened one HCA where the model's rings use eight:
# said with the flag that predicts the run as it ran, which then agrees
"$COLLSIM" validate "$logs/info-one-hca.txt" --topo dgx-h100 --nodes 2 > f1.txt 2>&1
grep -q "^# finding: .*info-one-hca.txt:22: NCCL's IB transport opened 1 RDMA device (mlx5_0), where the model's rings use 8 NICs a node: .*--env NCCL_IB_HCA==mlx5_0 (the leading '=' matches the names exactly, not as prefixes) predicts the run as it ran" f1.txt &&
    "$COLLSIM" validate "$logs/info-one-hca.txt" --topo dgx-h100 --nodes 2 --env NCCL_IB_HCA==mlx5_0 > f2.txt 2>&1 &&
    ! grep -q '^# finding' f2.txt && ok info-one-hca || bad "info-one-hca ($(grep '^# finding' f1.txt f2.txt | cut -c1-200))"
rcv="$logs/info-receive.txt"
"$COLLSIM" validate "$rcv" --topo pcie --gpu l40s --gpus 4 --sockets 2 --nodes 2 --nic ib-ndr --nics-per-node 1 \
    > fr.txt 2>&1 && grep -q 'via NET/IB/0/GDRDMA (4 lines' fr.txt && ! grep -q '^# finding: ' fr.txt &&
    ok info-receive || bad "info-receive ($(grep '^# finding' fr.txt | cut -c1-200))"
awk '/Rank  1 Group/ { sub(/host0/, "host1") } /Rank  4 Group/ { sub(/host1/, "host0") } { print }' "$rcv" > rr.txt
"$COLLSIM" validate rr.txt --topo pcie --gpu l40s --gpus 4 --sockets 2 --nodes 2 --nic ib-ndr --nics-per-node 1 \
    > frr.txt 2>&1 && [ "$(grep -c '^# finding: ' frr.txt)" -eq 1 ] &&
    grep -q "^# finding: rr.txt: the log's '# Rank' lines place the ranks on the hosts otherwise than the model, .*(rank 1 is not on the host of rank 0)" frr.txt &&
    ok info-placement || bad "info-placement ($(grep '^# finding' frr.txt | cut -c1-200))"
awk '/^# Avg bus bandwidth/ && !cut { cut = 1; next } /^# Collective test concluded/ && cut == 1 { cut = 2; next }
     /^Second run/ { print "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809" } { print }' "$info" > cut.txt
"$COLLSIM" validate cut.txt --topo dgx-h100 --nodes 2 --gpus 2 > fc.txt 2>&1 &&
    awk '/^# collsim validate/ { t++ } /^# finding: .*NET\/Socket/ { s = t } /^# finding: .*SHM/ { h = t } END { exit !(s == 1 && h == 2) }' fc.txt &&
    ok info-run-cut || bad "info-run-cut ($(grep -c '^# finding' fc.txt))"
# A run that prints several tables (nccl-tests -d all, -o all: one
# communicator) gives every one of them its INFO lines, not its first alone;
# the next run's lines are its own.
awk 'NR >= 26 && NR <= 33 { blk = blk $0 "\n" } { print } NR == 33 { printf "%s", blk }' "$info" > dall.txt
"$COLLSIM" validate dall.txt --topo dgx-h100 --nodes 2 --gpus 2 > fd.txt 2>&1 &&
    awk '/^# collsim validate/ { t++ } /^# finding: .*NET\/Socket/ { s[t]++ } /^# finding: .*SHM/ { h[t]++ }
         END { exit !(s[1] == 1 && s[2] == 1 && !h[1] && !h[2] && h[3] == 1 && !s[3] && t == 3) }' fd.txt &&
    ok info-run-tables || bad "info-run-tables ($(grep -c '^# finding' fd.txt))"
# nccl-tests before 2.16.7 prints neither line: its '# nThread' line begins a run
awk '/^# nccl-tests version|^# Collective test starting/ { next }
     /^# Avg bus bandwidth/ && !cut { cut = 1; next } /^# Collective test concluded/ && cut == 1 { cut = 2; next }
     /^Second run/ { print "# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 1 iters: 20" } { print }' "$info" > cut-old.txt
"$COLLSIM" validate cut-old.txt --topo dgx-h100 --nodes 2 --gpus 2 > fo.txt 2>&1 &&
    awk '/^# collsim validate/ { t++ } /^# finding: .*NET\/Socket/ { s = t } /^# finding: .*SHM/ { h = t } END { exit !(s == 1 && h == 2) }' fo.txt &&
    ok info-run-cut-old || bad "info-run-cut-old ($(grep -c '^# finding' fo.txt))"
# An NVLink domain of several hosts (MNNVL): 8 GPUs on two GB200 trays are
# one node of two hosts, so the log's two hosts match it and its NVLink
# connections agree with the model; ranks alternating between the trays are
# one placement finding; all 8 on one tray is not this machine.
mn="$logs/info-mnnvl.txt"
"$COLLSIM" validate "$mn" --topo gb200-nvl72 --gpus 8 > fm.txt 2> fm.err &&
    grep -q 'via P2P/MNNVL (8 lines' fm.txt && ! grep -q '^# finding: ' fm.txt && ok info-mnnvl ||
    bad "info-mnnvl ($(head -c 300 fm.err; grep '^# finding' fm.txt | cut -c1-200))"
awk '/^#  Rank/ { h = ($3 % 2) ? "trayB" : "trayA"; sub(/tray[AB]/, h) } { print }' "$mn" > mnrr.txt
"$COLLSIM" validate mnrr.txt --topo gb200-nvl72 --gpus 8 > fmr.txt 2>&1 && [ "$(grep -c '^# finding: ' fmr.txt)" -eq 1 ] &&
    grep -q "^# finding: mnrr.txt: the log's '# Rank' lines place the ranks .*(rank 1 is not on the host of rank 0)" fmr.txt &&
    ok info-mnnvl-placement || bad "info-mnnvl-placement ($(grep '^# finding' fmr.txt | cut -c1-200))"
sed '/^#  Rank/ s/trayB/trayA/' "$mn" > mn1.txt
"$COLLSIM" validate mn1.txt --topo gb200-nvl72 --gpus 8 > fm1.txt 2> fm1.err; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l < fm1.err)" -eq 1 ] &&
    grep -q "^mn1.txt:32: table 1 was measured over 8 ranks on 1 host but the topology has 8 GPUs on 1 node (2 hosts); expected" fm1.err &&
    ok info-mnnvl-hosts || bad "info-mnnvl-hosts ($rc $(cat fm1.err))"

# NCCL_TESTS_SPLIT_MASK: ranks in groups, a communicator each: not judged as one
awk '/Rank  [4-7] Group  0/ { sub(/Group  0/, "Group  1") } { print }' "$rcv" > split.txt
"$COLLSIM" validate split.txt --topo pcie --gpu l40s --gpus 4 --sockets 2 --nodes 2 --nic ib-ndr --nics-per-node 1 \
    > fs.txt 2>&1 && [ "$(grep -c '^# finding: ' fs.txt)" -eq 1 ] &&
    grep -q "^# finding: split.txt: the '# Rank' lines put the ranks in 2 groups" fs.txt && ok info-split ||
    bad "info-split ($(grep '^# finding' fs.txt | cut -c1-160))"

# The measured run's NCCL version: up to 2.21 a -g 8 call's host side grows
# with its channels (lat.launch.cpu.chan), from 2.22 it does not; the note
# says which version and whence. collsim's own -g 8 table read back with
# --nccl-version 2.19.3 is slower at 256 KiB (LL on several channels).
"$COLLSIM" run --topo dgx-h100 --procs-per-node 1 -b 256K -e 256K > v.log 2>&1 || bad v-run
if "$COLLSIM" validate v.log --topo dgx-h100 --nccl-version 2.19.3 > v1.txt 2> v1.err &&
   "$COLLSIM" validate v.log --topo dgx-h100 --nccl-version 2.22.3 > v2.txt 2> v2.err; then
    grep -q '^# modelled: NCCL 2.19.3 (--nccl-version): .*per channel' v1.txt &&
        grep -q '^# modelled: NCCL 2.22.3 (--nccl-version): .*one work item' v2.txt &&
        awk '/^  *262144 / { t = $3 } END { exit !(t > 0) }' v1.txt &&
        [ "$(awk '/^  *262144 / { print $3 }' v1.txt)" != "$(awk '/^  *262144 / { print $3 }' v2.txt)" ] &&
        awk '/^  *262144 / { e = $4; sub(/%/, "", e); exit !(e + 0 == 0) }' v2.txt &&
        ok nccl-version || bad nccl-version
else
    bad "nccl-version ($(cat v1.err v2.err))"
fi
"$COLLSIM" validate v.log --topo dgx-h100 --nccl-version two > v3.txt 2> v3.err
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < v3.err)" -eq 1 ] && [ ! -s v3.txt ] &&
    grep -q "^collsim: --nccl-version: 'two' is not a version; expected MAJOR.MINOR" v3.err &&
    ok bad-nccl-version || bad "bad-nccl-version (rc=$rc: $(cat v3.err))"
# the env notes follow --nccl-version too: NCCL 2.4.7 read NCCL_TREE_THRESHOLD
"$COLLSIM" validate v.log --topo dgx-h100 --env NCCL_TREE_THRESHOLD=0 --nccl-version 2.4.7 > v5.txt 2> v5.err
grep -q '^# modelled: note: NCCL_TREE_THRESHOLD (--env): NCCL 2.4.7 read it' v5.txt &&
    ! grep -q 'NCCL_TREE_THRESHOLD (--env): NCCL does not read' v5.txt &&
    ok nccl-version-env-note || bad "nccl-version-env-note ($(grep TREE v5.txt v5.err))"
# No version line, but NCCL's "Launch mode" INFO line, which NCCL prints
# only up to 2.12 (enqueue.cc v2.12.12; gone in v2.13.4): the version is
# bounded below 2.22, so the host builds the work per channel, as with
# --nccl-version 2.19.3; the note says whence. Without the line, or with
# --nccl-version 2.22.3 over it, one work item (v.log read back exactly).
awk '{ print } /^#  *\(B\)/ { print "host:1:1 [0] NCCL INFO Launch mode Parallel" }' v.log > vlm.log
if "$COLLSIM" validate vlm.log --topo dgx-h100 > v6.txt 2> v6.err &&
   "$COLLSIM" validate vlm.log --topo dgx-h100 --nccl-version 2.22.3 > v7.txt 2> v7.err; then
    grep -q "^# modelled: NCCL <= 2.12 (the log's line 22: 'NCCL INFO Launch mode', .*per channel" v6.txt &&
        [ "$(awk '/^  *262144 / { print $3 }' v6.txt)" = "$(awk '/^  *262144 / { print $3 }' v1.txt)" ] &&
        ! grep -q 'NCCL <=' v7.txt &&
        awk '/^  *262144 / { e = $4; sub(/%/, "", e); exit !(e + 0 == 0) }' v7.txt &&
        ok nccl-version-launch-mode || bad "nccl-version-launch-mode ($(grep -h 'NCCL\|^  *262144' v6.txt v7.txt))"
else
    bad "nccl-version-launch-mode ($(cat v6.err v7.err))"
fi
# a version with more after it is refused too, not read as its first part
for v in 2.19.3junk 2.19.3.4 4294967298.19.3; do
    "$COLLSIM" validate v.log --topo dgx-h100 --nccl-version "$v" > v4.txt 2> v4.err
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l < v4.err)" -eq 1 ] && [ ! -s v4.txt ] &&
        grep -q "^collsim: --nccl-version: '$v' is not a version; expected MAJOR.MINOR" v4.err &&
        ok "bad-nccl-version-$v" || bad "bad-nccl-version-$v (rc=$rc: $(cat v4.err))"
done

# --nccl-version-max bounds an unknown version from above (a header that
# names the software that brought NCCL): up to 2.22 one process's GPUs
# write into each other's buffers (cs_comm_p2p_direct), so collsim's own
# -g 8 SendRecv of 64 MiB (priced as v2.28.9: two copies per part) is
# predicted faster under a 2.17.1 bound and read back exactly under a
# 2.23.4 one; the note names the flag. The log's own bound wins where it
# is tighter; a bad value is one line, exit 2.
"$COLLSIM" run --topo dgx-h100 --procs-per-node 1 --op sendrecv -b 64M -e 64M > vsr.log 2>&1 || bad vsr-run
if "$COLLSIM" validate vsr.log --topo dgx-h100 --nccl-version-max 2.17.1 > vm1.txt 2> vm1.err &&
   "$COLLSIM" validate vsr.log --topo dgx-h100 --nccl-version-max 2.23.4 > vm2.txt 2> vm2.err; then
    grep -q '^# modelled: NCCL <= 2.17.1 (--nccl-version-max): .*P2P/direct pointer, up to 2.22' vm1.txt &&
        awk '/^  *67108864 / { e = $4; sub(/%/, "", e); exit !(e + 0 < -20) }' vm1.txt &&
        grep -q '^# modelled: NCCL <= 2.23.4 (--nccl-version-max)' vm2.txt && ! grep -q 'direct pointer' vm2.txt &&
        awk '/^  *67108864 / { e = $4; sub(/%/, "", e); exit !(e + 0 == 0) }' vm2.txt &&
        ok nccl-version-max || bad "nccl-version-max ($(grep -h 'NCCL <=\|^  *67108864' vm1.txt vm2.txt))"
else
    bad "nccl-version-max ($(cat vm1.err vm2.err))"
fi
"$COLLSIM" validate vlm.log --topo dgx-h100 --nccl-version-max 2.17.1 > vm3.txt 2>&1 &&
    grep -q "^# modelled: NCCL <= 2.12 (the log's line 22: 'NCCL INFO Launch mode'" vm3.txt &&
    ok nccl-version-max-log-tighter || bad "nccl-version-max-log-tighter ($(grep 'NCCL <=' vm3.txt))"
"$COLLSIM" validate vsr.log --topo dgx-h100 --nccl-version-max two > vm4.txt 2> vm4.err
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l < vm4.err)" -eq 1 ] && [ ! -s vm4.txt ] &&
    grep -q "^collsim: --nccl-version-max: 'two' is not a version; expected MAJOR.MINOR" vm4.err &&
    ok bad-nccl-version-max || bad "bad-nccl-version-max (rc=$rc: $(cat vm4.err))"
# a bad flag is named before any file is read: over a log that is not
# there, or a topology that does not match the log, the flag's message
"$COLLSIM" validate no-such.log --topo dgx-h100 --nccl-version 2.x > vm5.txt 2> vm5.err
rc=$?
"$COLLSIM" validate vsr.log --topo dgx-h100 --nodes 2 --nccl-version-max 2.x > vm6.txt 2> vm6.err
rc6=$?
[ $rc -eq 2 ] && [ $rc6 -eq 2 ] && grep -q "^collsim: --nccl-version: '2.x' is not a version" vm5.err &&
    grep -q "^collsim: --nccl-version-max: '2.x' is not a version" vm6.err && ok version-flag-checked-first ||
    bad "version-flag-checked-first ($rc $rc6: $(cat vm5.err vm6.err))"

# a scenario's [collective] op is the run's --op: one that the log's rows
# contradict is refused as --op is
printf '[topology]\npreset = dgx-h100\n[collective]\nop = allgather\n' > vop.ini
"$COLLSIM" validate v.log -s vop.ini > vop.txt 2> vop.err; rc=$?
[ $rc -eq 2 ] && grep -q 'does not look like allgather' vop.err && ok scenario-op-is-op || bad "scenario-op-is-op ($rc: $(cat vop.err))"

# the version flags over a log that prints its version: said on stderr
{ echo "NCCL version 2.26.2+cuda12.8"; cat v.log; } > vv.log
"$COLLSIM" validate vv.log --topo dgx-h100 --nccl-version 2.20.3 > vv1.txt 2> vv1.err &&
    grep -q "^collsim: warning: --nccl-version 2.20.3 over the log's NCCL version 2.26.2+cuda12.8: the flag's is priced" vv1.err &&
    "$COLLSIM" validate vv.log --topo dgx-h100 --nccl-version-max 2.17.1 > vv2.txt 2> vv2.err &&
    grep -q "^collsim: warning: --nccl-version-max 2.17.1 is not used: the run's NCCL version is 2.26.2+cuda12.8 (the log's)" vv2.err &&
    ok version-flags-over-log || bad "version-flags-over-log ($(cat vv1.err vv2.err))"

# A run far below the prediction whose log says nothing of what NCCL did
# gets a finding naming the usual fallbacks; collsim's own table read back
# gets none, 3 times slower is not far enough for it, and a log whose INFO
# lines say what NCCL did (and agree with the model) gets none either.
"$COLLSIM" run --topo dgx-h100 -b 1M -e 16M -f 4 > fa.log 2>&1 || bad fa-run
for k in 10 3; do
    awk -v k=$k '$1 ~ /^[0-9]+$/ && NF >= 13 { $6 *= k; $7 /= k; $8 /= k; $10 *= k; $11 /= k; $12 /= k } { print }' \
        fa.log > "fa$k.log"
done
"$COLLSIM" validate fa10.log --topo dgx-h100 > fa10.txt 2>&1
grep -q '^# finding: the measured bus bandwidth is 10x below the prediction .*NCCL_DEBUG=INFO' fa10.txt &&
    "$COLLSIM" validate fa.log --topo dgx-h100 > fa1.txt 2>&1 && ! grep -q '^# finding' fa1.txt &&
    { "$COLLSIM" validate fa3.log --topo dgx-h100 > fa3.txt 2>&1; ! grep -q '^# finding' fa3.txt; } &&
    { awk '{ print } /^#  *\(B\)/ && !d { print "host:1:1 [0] NCCL INFO Using network IB"; d = 1 }' fa10.log > fa10i.log
      "$COLLSIM" validate fa10i.log --topo dgx-h100 > fa10i.txt 2>&1
      grep -q "^# measured: NCCL's INFO lines: network IB" fa10i.txt && ! grep -q '^# finding' fa10i.txt; } &&
    ok far-below-finding || bad "far-below-finding ($(grep -h '^# finding' fa10.txt fa3.txt | cut -c1-120))"

# An all-gather whose chunks are 4 bytes past a 16-byte multiple (an
# nccl-tests before 2.13.4 did not trim them), half as fast as predicted:
# a finding naming NCCL's narrow copy; at the predicted speed, or aligned
# and half as fast, none.
"$COLLSIM" run --topo dgx-h100 --op allgather -b 1M -e 16M -f 4 > ag.log 2>&1 || bad ag-run
awk -v sz=32 -v k=2 '$1 ~ /^[0-9]+$/ && NF >= 13 { $1 += sz; $2 += sz / 32; $6 *= k; $7 /= k; $8 /= k; $10 *= k; $11 /= k; $12 /= k } { print }' \
    ag.log > agm.log
awk -v sz=32 -v k=1 '$1 ~ /^[0-9]+$/ && NF >= 13 { $1 += sz; $2 += sz / 32 } { print }' ag.log > agm1.log
awk -v k=2 '$1 ~ /^[0-9]+$/ && NF >= 13 { $6 *= k; $7 /= k; $8 /= k; $10 *= k; $11 /= k; $12 /= k } { print }' ag.log > ag2.log
"$COLLSIM" validate agm.log --topo dgx-h100 > agm.txt 2>&1
grep -q "^# finding: at 3 of the 3 sizes >= 1 MiB a rank's chunk is not a multiple of 16 bytes (1048608 B over 8 ranks: 131076 B a chunk, 6 of the ranks' chunks start off a 16-byte boundary).* the prediction is 2.0x" agm.txt &&
    "$COLLSIM" validate agm1.log --topo dgx-h100 > agm1.txt 2>&1 && ! grep -q '^# finding' agm1.txt &&
    "$COLLSIM" validate ag2.log --topo dgx-h100 > ag2.txt 2>&1 && ! grep -q '^# finding' ag2.txt &&
    ok misaligned-finding || bad "misaligned-finding ($(grep -h '^# finding' agm.txt agm1.txt ag2.txt | cut -c1-160))"

# tables over other ranks than the topology's: the refusal names --table
# and each table's ranks
{ "$COLLSIM" run --topo dgx-h100 --gpus 2 -b 1M -e 4M -f 4; "$COLLSIM" run --topo dgx-h100 --gpus 4 -b 1M -e 4M -f 4; } > tr.log 2>/dev/null
"$COLLSIM" validate tr.log --topo dgx-h100 > tr.txt 2> tr.err
[ $? -eq 2 ] && grep -q 'expected topology flags that match the run (--nodes, --gpus); or --table N for one of its tables (their ranks: table 1: 2, table 2: 4)$' tr.err &&
    { "$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 > tr2.txt 2> tr2.err; [ $? -eq 2 ]; } &&
    ! grep -q -- '--table N' tr2.err &&
    ok rank-mismatch-names-table || bad "rank-mismatch-names-table ($(cat tr.err tr2.err))"

# a log pasted without its '#' lines: the command line's -g gives the
# process layout (one process of 8 GPUs), as it gives the rank count
"$COLLSIM" run --topo dgx-h100 --procs-per-node 1 -b 1M -e 16M -f 4 --no-extra-columns 2>&1 | grep -v "^#" > nh0.log
{ echo "./build/all_reduce_perf -b 1M -e 16M -f 4 -g 8"; cat nh0.log; } > nh.log
"$COLLSIM" validate nh.log --topo dgx-h100 > nh.txt 2>&1 &&
    grep -q '^# modelled: process layout: 1 process per node, 1 thread x 8 GPUs each (from the log.s command line at line 1: -t 1 -g 8)' nh.txt &&
    ok layout-from-command || bad "layout-from-command ($(grep 'layout' nh.txt))"

# A run with CUDA graphs or aggregated calls: said, as not modelled
sed 's/graph: 0/graph: 2/; s/agg iters: 1/agg iters: 4/' ag.log > gr.log
"$COLLSIM" validate gr.log --topo dgx-h100 > gr.txt 2>&1 &&
    grep -q "^# measured: line [0-9]*: the run launched its calls as CUDA graphs (graph: 2, nccl-tests -G)" gr.txt &&
    grep -q "^# measured: line [0-9]*: the run grouped 4 calls an iteration (agg iters: 4, nccl-tests -m)" gr.txt &&
    "$COLLSIM" validate ag.log --topo dgx-h100 > gr0.txt 2>&1 && ! grep -q 'CUDA graphs\|grouped' gr0.txt &&
    ok graph-agg-said || bad "graph-agg-said ($(grep -c measured gr.txt))"

# Two processes of 8 GPUs over 2 nodes, half as fast as predicted: a hint
# at mpirun's default binding to one core; not at the predicted speed,
# and not where NCCL's INFO lines say on which CPUs the threads ran:
# there the finding reads the set (a core and its hyperthread for all 8
# GPUs; none inside one node, where no proxy carries NVLink's data), and
# a process free to use its GPU's CPUs gets none.
"$COLLSIM" run --topo dgx-h100 --nodes 2 --procs-per-node 1 -b 1M -e 16M -f 4 > cb.log 2>&1 || bad cb-run
awk '$1 ~ /^[0-9]+$/ && NF >= 13 { $6 *= 2; $7 /= 2; $8 /= 2; $10 *= 2; $11 /= 2; $12 /= 2 } { print }' cb.log > cb2.log
aff() {   # $1: the process's CPU set; the 8 GPUs' lines of host a (pid 5) and host b (pid 6)
    awk -v set="$1" '{ print } /^#  *\(B\)/ && !d { d = 1
        for (h = 0; h < 2; h++) for (g = 0; g < 8; g++)
            printf "%s:%d:%d [%d] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU %d is %s. (GPU affinity = 0-55,112-167 ; CPU affinity = %s).\n", h ? "b" : "a", 5 + h, 10 + g, g, g, g < 4 ? set : "empty, ignoring", set }'
}
"$COLLSIM" validate cb2.log --topo dgx-h100 --nodes 2 > cb2.txt 2>&1
grep -q '^# finding: the run is 2 processes of 8 GPUs each on 2 nodes (from the log.s "nThread 1 nGpus 8") and the prediction is 2.0x its measured bus bandwidth .*bind to core when there are at most 2 processes' cb2.txt &&
    "$COLLSIM" validate cb.log --topo dgx-h100 --nodes 2 > cb1.txt 2>&1 && ! grep -q '^# finding' cb1.txt &&
    aff 0,112 < cb2.log > cb2i.log && "$COLLSIM" validate cb2i.log --topo dgx-h100 --nodes 2 > cb2i.txt 2>&1 &&
    grep -q "^# measured: NCCL's INFO lines: 8 GPUs of a process on 2 CPUs (line [0-9]*: 0,112)" cb2i.txt &&
    grep -q '^# finding: cb2i.log:[0-9]*: a process of 8 GPUs may run only on 2 logical CPUs (CPU affinity = 0,112), and 4 of its GPUs have no near CPU in it .*NCCL_IGNORE_CPU_AFFINITY=1' cb2i.txt &&
    ! grep -q 'the run is 2 processes' cb2i.txt &&
    "$COLLSIM" run --topo dgx-h100 --procs-per-node 1 -b 1M -e 4M -f 4 2>&1 | aff 0,112 > cb1n.log &&
    "$COLLSIM" validate cb1n.log --topo dgx-h100 > cb1n.txt 2>&1 &&
    grep -q "^# measured: NCCL's INFO lines: 8 GPUs of a process on 2 CPUs" cb1n.txt && ! grep -q 'logical CPU' cb1n.txt &&
    aff 0-223 < cb2.log > cb2w.log && "$COLLSIM" validate cb2w.log --topo dgx-h100 --nodes 2 > cb2w.txt 2>&1 &&
    ! grep -q '^# finding' cb2w.txt &&
    { echo "mpirun -np 2 --bind-to none ./build/all_reduce_perf -b 1M -e 16M -f 4 -g 8"; cat cb2.log; } > cb2b.log &&
    "$COLLSIM" validate cb2b.log --topo dgx-h100 --nodes 2 > cb2b.txt 2>&1 && ! grep -q 'the run is 2 processes' cb2b.txt &&
    awk '{ print } /^#  *\(B\)/ && !d { d = 1; print "a:5:9 [0] NCCL INFO ncclTopoGetCpuAffinity: Affinity for GPU 0 is 0-55. (GPU affinity = 0-55)." }' \
        cb2.log > cb2g.log && "$COLLSIM" validate cb2g.log --topo dgx-h100 --nodes 2 > cb2g.txt 2>&1 &&
    ! grep -q 'the run is 2 processes' cb2g.txt && ! grep -q 'logical CPU' cb2g.txt &&
    ok cpu-binding-finding || bad "cpu-binding-finding ($(grep -h '^# finding' cb2.txt cb1.txt cb2i.txt cb2w.txt | cut -c1-160))"

# The log's GPUs ('# Rank' lines) of another family than the topology's:
# a finding and one warning on stderr; the same family (A100 40 GB against
# the 80 GB preset) is none.
"$COLLSIM" run --topo dgx-a100 -b 1M -e 4M -f 4 > ga.log 2>&1 || bad ga-run
"$COLLSIM" validate ga.log --topo dgx-h100 > ga.txt 2> ga.err
grep -q "^# finding: ga.log:[0-9]*: the run's GPUs are NVIDIA A100-SXM4-80GB (the log's devices), the topology's NVIDIA H100 80GB HBM3 (h100-sxm): .*catalogue model a100-sxm)" ga.txt &&
    [ "$(grep -c "^collsim: warning: ga.log:.*the run's GPUs are" ga.err)" = 1 ] &&
    sed 's/NVIDIA A100-SXM4-80GB/A100-SXM4-40GB/' ga.log > ga40.log &&
    "$COLLSIM" validate ga40.log --topo dgx-a100 > ga40.txt 2>&1 && ! grep -q "GPUs are" ga40.txt \
    && ok gpu-mismatch-finding || bad "gpu-mismatch-finding ($(grep -h 'GPUs are' ga.txt ga40.txt | cut -c1-150))"

# The measured run's process layout from the log itself: collsim's own
# table of one process driving 8 GPUs says "nThread 1 nGpus 8", and
# validate prices it so (errors 0), saying where the layout came from;
# forced to one process per GPU it misses the small sizes.
"$COLLSIM" run --topo dgx-h100 --procs-per-node 1 -b 8 -e 64K -f 8 >g8.log 2>&1 || bad g8-run
grep -q '^# nThread 1 nGpus 8 ' g8.log && ok g8-header || bad g8-header
"$COLLSIM" validate g8.log --topo dgx-h100 >g8.txt 2>&1 || bad "g8-validate ($(tail -1 g8.txt))"
grep -q '^# modelled: process layout: 1 process per node, 1 thread x 8 GPUs each (from the log.s "nThread 1 nGpus 8")' g8.txt \
    && grep -q '^# summary time <=64KiB: n=[1-9][0-9]* median=0.0%' g8.txt && ok layout-from-log || bad layout-from-log
"$COLLSIM" validate g8.log --topo dgx-h100 --procs-per-node 8 >g1.txt 2>&1
grep -q '(as --procs-per-node / -t say)' g1.txt && ! grep -q '^# summary time <=64KiB: n=[1-9][0-9]* median=0.0%' g1.txt \
    && ok layout-flag-wins || bad layout-flag-wins
# the flag over the log's own layout is said on stderr; the same layout is not
"$COLLSIM" validate g8.log --topo dgx-h100 --procs-per-node 8 >/dev/null 2>g1.err
"$COLLSIM" validate g8.log --topo dgx-h100 --procs-per-node 1 >/dev/null 2>g1s.err
grep -q '^collsim: warning: --procs-per-node / -t (8 processes a node, 1 thread x 1 GPU) over the log.s layout (table 1: 1 thread x 8 GPUs a process): the flags. is priced' g1.err &&
    ! grep -q 'over the log' g1s.err &&
    "$COLLSIM" run --topo dgx-h100 -b 8 -e 64K -f 8 > p8.log 2>&1 && "$COLLSIM" validate p8.log --topo dgx-h100 -t 1 >/dev/null 2>p8.err &&
    ! grep -q 'over the log' p8.err && ok layout-flag-over-log || bad "layout-flag-over-log ($(cat g1.err g1s.err p8.err))"
exit $fail
