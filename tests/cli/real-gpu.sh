#!/bin/sh
# collsim real on a GPU: a short sweep of every collective must print the
# measurement header, rows with times > 0 and #wrong 0, and algbw = size/time.
# Skips (77) without CUDA+NCCL or without a GPU.
set -u
: "${COLLSIM:?}"
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK COLLSIM_REAL_WORKER
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
"$COLLSIM" real -b 8 -e 8 -n 1 -w 0 >probe 2>probe.err
if grep -q 'built without CUDA and NCCL\|no CUDA GPU is usable' probe.err; then
    echo "skip: needs a CUDA GPU (and collsim built with CUDA and NCCL)"
    exit 77
fi
fail=0
for op in allreduce allgather reducescatter broadcast reduce; do
    if ! "$COLLSIM" real --op "$op" -b 1K -e 4M -f 4 -n 5 --json "$op.json" >"$op.txt" 2>"$op.err"; then
        echo "FAIL $op: $(cat "$op.err")"; fail=1; continue
    fi
    head -1 "$op.txt" | grep -q '^# collsim .* measurement (collsim-real)$' || { echo "FAIL $op header"; fail=1; }
    # columns: size count type redop root time algbw busbw #wrong time algbw busbw #wrong
    awk '!/^#/ && NF >= 13 { if ($6 <= 0 || $10 <= 0 || $9 != 0 || $13 != 0) bad = 1;
         a = $1 / 1e3 / $6; if (a - $7 > 0.02 + a * 0.01 || $7 - a > 0.02 + a * 0.01) bad = 1; n++ }
         END { exit (bad || n != 4) }' "$op.txt" || { echo "FAIL $op rows"; cat "$op.txt"; fail=1; }
    grep -q '"producer": *"measured:collsim-real"' "$op.json" || { echo "FAIL $op json"; fail=1; }
    [ $fail = 0 ] && echo "ok $op"
done
# a data type and op that need exact small floats
"$COLLSIM" real --op allreduce -d bfloat16 -o max -b 1K -e 64K -f 4 -n 2 >bf.txt 2>bf.err &&
    awk '!/^#/ && NF >= 13 { if ($9 != 0 || $13 != 0) bad = 1 } END { exit bad }' bf.txt \
    && echo "ok bf16-max" || { echo "FAIL bf16-max $(cat bf.err)"; fail=1; }
exit $fail
