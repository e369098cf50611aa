#!/bin/sh
# collsim real --op alltoall|sendrecv without a GPU: the host mock of CUDA and
# NCCL (tests/unit/mock-cuda-nccl.c, preloaded) really moves each ncclSend's
# data to its ncclRecv between the rank processes (files in MOCK_P2P_DIR),
# so #wrong 0 here says collsim posted the sends and receives nccl-tests's
# alltoall.cu and sendrecv.cu post (peers, offsets, counts) and that the check
# expects what they deliver. Also: sizes and counts as nccl-tests rounds
# them, busbw = algbw (n-1)/n for alltoall and algbw for sendrecv, in-place
# #wrong N/A (nccl-tests checks no in-place p2p result), a damaged element
# counted, every send received.
set -u
. "${top_srcdir:?}/tests/cli/real-mock-lib.sh"
# each run its own exchange directory, which must be empty afterwards
real() { d=$(mktemp -d "$tmp/x.XXXXXX") && MOCK_P2P_DIR=$d LD_PRELOAD="$mock" "$COLLSIM" real "$@"; }
drained() { [ -z "$(ls "$d")" ]; }
rows() { grep -v '^#' "$1"; }
# columns: size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong | algo proto nch transport

# alltoall, 4 ranks, 4 MiB: 262144 floats per peer; 0.5 ms per group in the
# mock: algbw 4194304 B / 500 us = 8.39 GB/s, busbw x 3/4 = 6.29
real -g 4 --op alltoall -b 4M -e 4M -n 2 -w 1 >a.txt 2>a.err; r=$?
[ $r = 0 ] && [ ! -s a.err ] && ok alltoall-exit || bad "alltoall-exit ($r: $(cat a.err))"
grep -q '^# nccl-tests command: mpirun -np 4 -N 4 alltoall_perf -b 4M -e 4M .*-g 1 -n 2' a.txt && ok alltoall-command || bad alltoall-command
rows a.txt | awk '{ n++; if ($1 != 4194304 || $2 != 262144 || $4 != "none" || $5 != -1 || $6 != "500.00" ||
        $7 != "8.39" || $8 != "6.29" || $9 != 0 || $10 != "500.00" || $11 != "8.39" || $12 != "6.29" ||
        $13 != "N/A" || $14 != "-") bad = 1 }
    END { exit (bad || n != 1) }' && ok alltoall-row || { bad alltoall-row; cat a.txt; }
drained && ok alltoall-every-send-received || bad "alltoall-sends-left ($(ls "$d" | head -3))"

# nccl-tests's count: (size / type / n) rounded down to 16 bytes' worth of
# elements per peer; 1000 B over 3 ranks: 83 -> 80 floats, size 3 x 80 x 4
real -g 3 --op alltoall -b 1000 -e 1000 -n 1 -w 0 >r.txt 2>r.err; r=$?
[ $r = 0 ] && rows r.txt | awk '{ exit !($1 == 960 && $2 == 80 && $9 == 0) }' && drained \
    && ok alltoall-rounding || { bad "alltoall-rounding ($r)"; cat r.txt r.err; }

# sendrecv, 4 ranks, 4 MiB to rank+1: busbw = algbw; -o is printed
real -g 4 --op sendrecv -o min -b 4M -e 4M -n 2 -w 1 >s.txt 2>s.err; r=$?
[ $r = 0 ] && [ ! -s s.err ] && ok sendrecv-exit || bad "sendrecv-exit ($r: $(cat s.err))"
grep -q '^# nccl-tests command: mpirun -np 4 -N 4 sendrecv_perf -b 4M -e 4M .*-g 1 -o min -n 2' s.txt \
    && ok sendrecv-command || { bad sendrecv-command; grep command s.txt; }
rows s.txt | awk '{ n++; if ($1 != 4194304 || $2 != 1048576 || $4 != "min" || $6 != "500.00" || $7 != "8.39" ||
        $8 != "8.39" || $9 != 0 || $12 != "8.39" || $13 != "N/A") bad = 1 }
    END { exit (bad || n != 1) }' && ok sendrecv-row || { bad sendrecv-row; cat s.txt; }
drained && ok sendrecv-every-send-received || bad sendrecv-sends-left

# several sizes, aggregated calls (-m 3: three groups inside one), 3 ranks
real -g 3 --op sendrecv -b 64 -e 64K -f 32 -n 2 -m 3 -d bfloat16 >m.txt 2>m.err; r=$?
[ $r = 0 ] && rows m.txt | awk '{ n++; s = s (n > 1 ? " " : "") $1; if ($9 != 0 || $3 != "bfloat16") bad = 1 }
    END { exit (bad || s != "64 2048 65536") }' && drained && ok sendrecv-sizes-aggregated \
    || { bad "sendrecv-sizes-aggregated ($r)"; cat m.txt m.err; }

# one rank: alltoall to itself (no exchange directory needed), busbw 0
LD_PRELOAD="$mock" "$COLLSIM" real -g 1 --op alltoall -b 1M -e 1M -n 1 >o.txt 2>o.err; r=$?
[ $r = 0 ] && rows o.txt | awk '{ exit !($7 == "2.10" && $8 == "0.00" && $9 == 0) }' \
    && ok alltoall-one-rank || { bad "alltoall-one-rank ($r)"; cat o.txt o.err; }

# a damaged received element on every rank (alltoall: element 200, in the
# block from rank 2): 3 wrong out-of-place, the
# in-place column N/A, exit 1 as nccl-tests
MOCK_CORRUPT=5 real -g 3 --op sendrecv -b 64 -e 64 -n 1 >c.txt 2>c.err; r=$?
[ $r = 1 ] && rows c.txt | awk '{ exit !($9 == 3 && $13 == "N/A") }' &&
    grep -q '^collsim: real: the data check failed: 3 wrong element(s)' c.err \
    && ok sendrecv-corrupt || { bad "sendrecv-corrupt ($r)"; cat c.txt c.err; }
MOCK_CORRUPT=200 real -g 3 --op alltoall -b 1K -e 1K -n 1 >c2.txt 2>c2.err; r=$?
[ $r = 1 ] && rows c2.txt | awk '{ exit !($2 == 84 && $9 == 3) }' \
    && ok alltoall-corrupt-third-block || { bad "alltoall-corrupt-third-block ($r)"; cat c2.txt c2.err; }
[ -z "$(ls t)" ] && ok no-logs-left || bad "no-logs-left ($(ls -R t))"
exit $fail
