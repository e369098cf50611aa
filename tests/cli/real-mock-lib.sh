# Shared by the tests of collsim real on the host mock of CUDA and NCCL
# (real-mock.sh, real-p2p.sh): skips without the mock, clears the launch
# environment, works in a scratch directory that also holds collsim's
# temporary files (so that none may be left), and defines ok/bad.
: "${COLLSIM:?}" "${top_builddir:?}"
mock="$top_builddir/tests/unit/libcs-mock-cuda.so"
if [ ! -f "$mock" ]; then
    echo "skip: needs collsim built with CUDA and NCCL (the mock stands in for them)"
    exit 77
fi
unset RANK WORLD_SIZE LOCAL_RANK MASTER_ADDR MASTER_PORT OMPI_COMM_WORLD_RANK PMI_RANK COLLSIM_REAL_WORKER NCCL_DEBUG \
    MOCK_CORRUPT MOCK_HANG MOCK_INIT_HANG MOCK_P2P_DIR
# (a sanitized collsim: its runtime need not come first)
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
mkdir t && TMPDIR=$tmp/t && export TMPDIR
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }
