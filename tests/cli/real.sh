#!/bin/sh
# collsim real without a GPU: the shared command line (same flags, same
# messages, same --dump as collsim run), the clear refusal when no GPU or
# no NCCL is there, rank variables and their errors, and the launcher and
# id exchange through the test hook --_test-bootstrap (a fake 128-byte id,
# no CUDA): a failing rank must stop all the others, quickly.
. "${top_srcdir:?}/tests/cli/lib.sh"

cd "$tmp" || exit 1
# rank variables of the caller must not leak into the tests
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK COLLSIM_REAL_WORKER

"$COLLSIM" --help | grep -q '^  real ' && ok listed || bad listed
"$COLLSIM" real --help-all >h.txt && grep -q -- '--timeout' h.txt && grep -q -- '--bootstrap' h.txt &&
    grep -q -- '--minbytes' h.txt && grep -q -- '--topo' h.txt && ! grep -q -- '_test' h.txt \
    && ok help || bad help
# a prediction's flags, which real refuses, are not offered (still refused)
! grep -qE -- '--(model|exact|calibration|procs-per-node|nthreads|svg|trace|link-stats|alternatives|max-memory)[ =]' h.txt &&
    ! grep -q -- '--help-fabric' h.txt &&
    { "$COLLSIM" real --alternatives > /dev/null 2> halt.err; [ $? -eq 2 ]; } && grep -q -- '--alternatives' halt.err &&
    { "$COLLSIM" real --pfc none > /dev/null 2> hpfc.err; [ $? -eq 2 ]; } &&
    grep -q -- "^collsim: --pfc: collsim real measures the machine's own network" hpfc.err &&
    ok help-no-prediction-flags || bad "help-no-prediction-flags ($(grep -E -- '--(model|svg|trace)' h.txt | head -2))"

# ---- the command line is collsim run's ---------------------------------------
for args in "-b x" "-e 1Q" "--op bcast" "-n 0" "--env FOO=1" "a.ini b.ini" "--bogus"; do
    # shellcheck disable=SC2086
    "$COLLSIM" run $args >/dev/null 2>run.err; r1=$?
    # shellcheck disable=SC2086
    "$COLLSIM" real $args >/dev/null 2>real.err; r2=$?
    sed 's/collsim: run:/collsim: X:/; s/collsim run/collsim X/' run.err >a
    sed 's/collsim: real:/collsim: X:/; s/collsim real/collsim X/' real.err >b
    if [ $r1 = 2 ] && [ $r2 = 2 ] && cmp -s a b && [ "$(wc -l <b)" -eq 1 ]; then ok "same-error $args"
    else bad "same-error $args ($r1/$r2: $(cat run.err) | $(cat real.err))"; fi
done
"$COLLSIM" run --dump -b 1K -e 1M -f 4 --op allgather --env NCCL_ALGO=Ring >run.ini
"$COLLSIM" real --dump -b 1K -e 1M -f 4 --op allgather --env NCCL_ALGO=Ring >real.ini
cmp -s run.ini real.ini && grep -q 'NCCL_ALGO=Ring' real.ini && ok same-dump || bad same-dump
"$COLLSIM" real --timeout 0 2>e; [ $? = 2 ] && grep -q '^collsim: --timeout: .0. is not a timeout; expected' e \
    && ok bad-timeout || bad bad-timeout
"$COLLSIM" real --check-elements -3 2>e; [ $? = 2 ] && grep -q '^collsim: --check-elements: ' e \
    && ok bad-check-elements || bad bad-check-elements

# ---- no GPU (or no NCCL): one clear line --------------------------------------
"$COLLSIM" real -b 8 -e 8 >o 2>e; r=$?
if grep -q 'built without CUDA and NCCL' e; then
    [ $r = 2 ] && [ "$(wc -l <e)" -eq 1 ] && [ ! -s o ] && ok no-nccl || bad "no-nccl ($r)"
elif grep -q 'no CUDA GPU is usable here' e; then
    [ $r = 1 ] && [ "$(wc -l <e)" -eq 1 ] && [ ! -s o ] && ok no-gpu || bad "no-gpu ($r: $(cat e))"
else
    echo "ok no-gpu # SKIP a GPU is present ($r)"
fi

# ---- rank variables -------------------------------------------------------------
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_LOCAL_RANK=1 \
    "$COLLSIM" real --_test-bootstrap=-1 2>e; r=$?
[ $r = 2 ] && grep -q "started by Open MPI's mpirun with OMPI_COMM_WORLD_RANK set, but rank 0's address is unknown; expected --bootstrap HOST:PORT" e \
    && ok mpi-no-address || bad "mpi-no-address ($r: $(cat e))"
RANK=x WORLD_SIZE=2 LOCAL_RANK=0 "$COLLSIM" real --_test-bootstrap=-1 2>e; r=$?
[ $r = 2 ] && grep -q '^collsim: real: RANK=x: not a rank of the job; expected a whole number from 0 to 1$' e \
    && ok torchrun-bad-rank || bad "torchrun-bad-rank ($r: $(cat e))"
"$COLLSIM" real --bootstrap h:1 --_test-bootstrap=-1 -g 2 2>e; r=$?
[ $r = 2 ] && grep -q '^collsim: --bootstrap: given, but no rank variables are set' e \
    && ok bootstrap-alone || bad "bootstrap-alone ($r: $(cat e))"
"$COLLSIM" real --op broadcast -r 5 -g 2 --_test-bootstrap=-1 2>e; r=$?
[ $r = 2 ] && grep -q '^collsim: -r: root 5 is not a rank; expected 0 to 1$' e && ok root-range || bad "root-range ($r: $(cat e))"

# ---- the launcher and the id exchange (test hook, no GPU) -------------------------
"$COLLSIM" real -g 4 --_test-bootstrap=-1 >o 2>e; r=$?
[ $r = 0 ] && grep -q '^collsim real: test bootstrap: 4 rank(s) connected and got the same id$' o && [ ! -s e ] \
    && ok launch-4 || bad "launch-4 ($r: $(cat e))"
start=$(date +%s)
"$COLLSIM" real -g 4 --_test-bootstrap=2 --timeout 60 >o 2>e; r=$?
took=$(( $(date +%s) - start ))
[ $r = 1 ] && grep -q '^collsim: real: rank 2 exited with status 3; stopping the other 3 rank(s)$' e \
    && [ "$took" -lt 30 ] && ok launch-one-fails || bad "launch-one-fails ($r, ${took}s: $(cat e))"

# ranks started by hand (as mpirun or torchrun would): rank 1 fails after the
# exchange; rank 0 must see its connection close and tell rank 2
port=$(( 20000 + $$ % 20000 ))
for r in 0 1 2; do
    RANK=$r WORLD_SIZE=3 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$COLLSIM" real --_test-bootstrap=1 --timeout 60 >"o$r" 2>"e$r" &
    eval "pid$r=\$!"
done
# shellcheck disable=SC2154
wait "$pid0"; s0=$?; wait "$pid1"; s1=$?; wait "$pid2"; s2=$?
[ $s1 = 3 ] && [ $s0 = 1 ] && [ $s2 = 1 ] &&
    grep -q '^collsim: real: rank 0: stopping: rank 1 closed its control connection' e0 &&
    grep -q '^collsim: real: rank 2: stopping: rank 1 closed its control connection' e2 \
    && ok by-hand-propagation || bad "by-hand-propagation ($s0 $s1 $s2: $(cat e0 e2))"

# A build with the real backend on a machine without a usable GPU: one line
# for the machine, not one per rank, with -g N and with ranks by hand.
"$COLLSIM" real -b 1K -e 1K >/dev/null 2>ng.err
if grep -q 'no CUDA GPU is usable here' ng.err; then
    "$COLLSIM" real -g 3 -b 1K -e 1K >/dev/null 2>ng3.err; r3=$?
    port=$(( port + 1 ))
    for r in 0 1; do
        RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            "$COLLSIM" real -b 1K -e 1K >/dev/null 2>"ng-e$r" &
        eval "npid$r=\$!"
    done
    # shellcheck disable=SC2154
    wait "$npid0"; n0=$?; wait "$npid1"; n1=$?
    [ $r3 = 1 ] && [ "$(wc -l < ng3.err)" = 1 ] && grep -q '^collsim: real: no CUDA GPU is usable here' ng3.err &&
        [ $n0 = 1 ] && [ $n1 = 1 ] && [ ! -s ng-e1 ] &&
        grep -q "^collsim: real: .*, rank 0 and this node's other ranks: no CUDA GPU is usable here" ng-e0 \
        && ok no-gpu-one-line || bad "no-gpu-one-line ($r3 $n0 $n1: $(cat ng3.err ng-e0 ng-e1))"
fi

exit $fail
