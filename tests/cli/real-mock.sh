#!/bin/sh
# collsim real end to end without a GPU: the CUDA and NCCL calls are those of
# a host mock (tests/unit/mock-cuda-nccl.c, preloaded), so this checks what
# collsim does around them: launcher, id exchange, gathering, the mean over
# ranks, #wrong summed and the exit status, [nccl]/--env reaching the ranks,
# NCCL's TUNING lines read back, and a hang stopping every rank. The mock's
# "collectives" copy each rank's input, so with several ranks the data check
# must find exactly the elements other ranks should have contributed.
set -u
. "${top_srcdir:?}/tests/cli/real-mock-lib.sh"
real() { LD_PRELOAD="$mock" "$COLLSIM" real "$@"; }
rows() { grep -v '^#' "$1"; }

# one rank: exact data, 0.5 ms per call (3 x 2 calls between the events)
real -g 1 -b 64 -e 1K -f 4 -n 3 -m 2 --env NCCL_ALGO=Tree --json a.json >a.txt 2>a.err; r=$?
[ $r = 0 ] && [ ! -s a.err ] && ok one-rank-exit || bad "one-rank-exit ($r: $(cat a.err))"
head -1 a.txt | grep -q '^# collsim .* measurement (collsim-real)$' && ok header || bad header
grep -q '^# nccl-tests command: NCCL_ALGO=Tree all_reduce_perf -b 64 -e 1K -f 4 -g 1 -n 3 -m 2$' a.txt \
    && ok command || bad command
# size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong | algo proto nch transport
rows a.txt | awk 'BEGIN { want = "64 256 1024" } { n++; s = s (n > 1 ? " " : "") $1
    if ($6 != "500.00" || $10 != "500.00" || $9 != 0 || $13 != 0 || $14 != "Tree" || $15 != "LL" || $16 != 2) bad = 1 }
    END { exit (bad || s != want) }' && ok one-rank-rows || { bad one-rank-rows; cat a.txt; }
grep -q '"producer": *"measured:collsim-real"' a.json && ok json || bad json
[ -z "$(ls t)" ] && ok logs-removed || bad "logs-left ($(ls t))"

# a damaged element: counted, and the exit status says so (as nccl-tests)
MOCK_CORRUPT=3 real -g 1 -b 64 -e 64 -n 1 >c.txt 2>c.err; r=$?
[ $r = 1 ] && rows c.txt | awk '{ exit !($9 == 1 && $13 == 1) }' &&
    grep -q '^collsim: real: the data check failed: 2 wrong element(s)' c.err && ok corrupt || bad "corrupt ($r: $(cat c.err))"

# three ranks from the launcher: broadcast from rank 2 of 16 floats; the mock
# leaves ranks 0 and 1 with their own data: 2 x 16 wrong per placement
real -g 3 --op broadcast -r 2 -b 64 -e 64 -n 2 >b.txt 2>b.err; r=$?
[ $r = 1 ] && [ "$(grep -c '^#  Rank  [0-2] Group' b.txt)" = 3 ] &&
    rows b.txt | awk '{ exit !($5 == 2 && $9 == 32 && $13 == 32 && $6 == "500.00") }' \
    && ok three-ranks || { bad "three-ranks ($r)"; cat b.txt b.err; }
grep -q '^# Topology: measured on 3 GPU(s), 1 node(s): Mock GPU$' b.txt && ok three-ranks-topology || bad three-ranks-topology

# a hang: every rank stops, the message names rank, collective, size
start=$(date +%s)
MOCK_HANG=1 real -g 3 -b 64 -e 64 --timeout 1 >h.txt 2>h.err; r=$?
took=$(( $(date +%s) - start ))
[ $r = 1 ] && [ "$took" -lt 20 ] && grep -q 'allreduce of 64 bytes (out-of-place) did not finish in 1 s; aborting NCCL' h.err \
    && ! rows h.txt | grep -q . && ok hang || { bad "hang ($r, ${took}s)"; cat h.err; }

# a blocking call that never returns (here ncclCommInitRank): the watchdog
start=$(date +%s)
MOCK_INIT_HANG=1 real -g 2 -b 64 -e 64 --timeout 1 >i.txt 2>i.err; r=$?
took=$(( $(date +%s) - start ))
[ $r = 1 ] && [ "$took" -lt 20 ] && grep -q 'rank [01]: ncclCommInitRank (2 ranks) did not return in 1 s; exiting' i.err \
    && ok init-hang || { bad "init-hang ($r, ${took}s)"; cat i.err; }

# the user's NCCL_DEBUG: NCCL's log is theirs, the columns unknown
NCCL_DEBUG=WARN real -g 1 -b 64 -e 64 -n 1 >d.txt 2>d.err; r=$?
[ $r = 0 ] && grep -q "^# algo, proto, nch: not known (NCCL_DEBUG is the user's" d.txt &&
    rows d.txt | awk '{ exit !($14 == "-") }' && ok user-debug || bad "user-debug ($r)"
# none left by any run above, the killed and the hung included
[ -z "$(ls t)" ] && ok no-logs-left || bad "no-logs-left ($(ls -R t))"
exit $fail
