#!/bin/sh
# collsim sweep under mpirun -np 2: the points are spread over the two
# ranks, rank 0 writes, and the file is byte for byte the one local
# processes write. Skipped (77) only where configure found no MPI.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}" "${top_builddir:?}"

grep -q '^#define HAVE_MPI 1' "$top_builddir/config.h" || { echo "skip: configure found no MPI"; exit 77; }
MPIRUN=$(sed -n 's/^MPIRUN = //p' "$top_builddir/Makefile")
[ -n "$MPIRUN" ] || MPIRUN=mpirun

cd "$tmp" || exit 1

# as root, Open MPI wants to be told; Open MPI leaks by design: no leak check
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1"
G="$top_srcdir/scenarios/default.ini -b 1M -e 64M -f 8 --nic ib-ndr --grid nccl.NCCL_ALGO=Ring,Tree --grid nodes=1,2,4 --grid scenario.model=analytic,flow"

"$COLLSIM" sweep $G -j 2 --output local.csv --svg local.svg >local.txt 2>local.err || bad "local ($(cat local.err))"
"$MPIRUN" -np 2 --oversubscribe "$COLLSIM" sweep $G --output mpi.csv --svg mpi.svg >mpi.txt 2>mpi.err
rc=$?
[ $rc -eq 0 ] && ok mpi-exit || bad "mpi-exit ($rc: $(head -3 mpi.err))"
[ -s local.csv ] && cmp -s local.csv mpi.csv && ok identical-csv || bad identical-csv
cmp -s local.svg mpi.svg && ok identical-svg || bad identical-svg
# one summary (rank 0 only), the same as the local one
sed 's/mpi\./local./' mpi.txt | cmp -s - local.txt && ok one-summary || bad one-summary
# an error is said once, by rank 0
"$MPIRUN" -np 2 --oversubscribe "$COLLSIM" sweep $G --grid nodez=1 >e.out 2>e.err
[ $? -ne 0 ] && [ "$(grep -c "unknown scenario key 'nodez'" e.err)" -eq 1 ] && [ ! -s e.out ] && ok error-once \
    || bad "error-once ($(cat e.err))"

exit $fail
