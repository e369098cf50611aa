#!/bin/sh
# Golden outputs: the full `collsim run` output of a few small scenarios,
# compared byte for byte with tests/expected/NAME.txt. They pin the layout
# and the model together, so a deliberate model change updates them:
#
#   COLLSIM_REGENERATE=1 make check TESTS=tests/cli/golden.sh
#
# rewrites tests/expected/*.txt in the source tree (review the diff before
# committing it).
set -u
: "${COLLSIM:?}" "${top_srcdir:?}"

expected="$top_srcdir/tests/expected"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# golden NAME ARGS...: runs in a scratch directory, scenarios from the tree
golden() {
    name=$1
    shift
    (cd "$tmp" && "$COLLSIM" run "$@") >"$tmp/$name.txt" 2>"$tmp/$name.err"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL $name: exit $rc: $(head -1 "$tmp/$name.err")"
        fail=1
        return
    fi
    if [ "${COLLSIM_REGENERATE:-0}" = 1 ]; then
        cp "$tmp/$name.txt" "$expected/$name.txt" && echo "regenerated $name"
        return
    fi
    if cmp -s "$expected/$name.txt" "$tmp/$name.txt"; then
        echo "ok $name"
    else
        echo "FAIL $name: output differs from tests/expected/$name.txt:"
        diff -u "$expected/$name.txt" "$tmp/$name.txt" | head -40
        fail=1
    fi
}

S="$top_srcdir/scenarios"
golden dgx-h100-allreduce --topo dgx-h100 -b 8 -e 64M -f 8
golden pcie-rtx4090 "$S/pcie-rtx4090.ini" -e 1M -f 16
golden dgx-a100-2nodes-allgather --topo dgx-a100 --nodes 2 --op allgather -b 1M -e 256M -f 16
golden lab-socket-fallback "$S/lab-socket-fallback.ini" -b 1K -e 64M -f 64 --no-extra-columns
golden two-jobs-spine "$S/two-jobs-spine.ini" --link-stats

exit $fail
