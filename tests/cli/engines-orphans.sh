#!/bin/sh
# No orphans (issue 13, item 5): the SimGrid engine's child process dies
# with its parent. A SIGTERM to the parent alone (default action: it dies)
# leaves no child behind within 2 s (PR_SET_PDEATHSIG); a SIGINT (collsim's
# handler) kills the child, reaps it and exits 130 "interrupted".
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_builddir:?}"
grep -q '^#define HAVE_SIMGRID 1' "$top_builddir/config.h" || { echo "skip: simgrid not built"; exit 77; }
[ -r /proc/self/stat ] || { echo "skip: no /proc"; exit 77; }
cd "$tmp" || exit 1

# children PID: its child processes
children() { cat "/proc/$1/task/$1/children" 2>/dev/null; }
# alive PID: running (a zombie counts as gone: it holds no memory)
alive() { [ -r "/proc/$1/stat" ] && ! awk '{ exit $3 != "Z" }' "/proc/$1/stat"; }

# Ring on 16 nodes: about 6 s and 700 MB in the child on a 2-core machine.
set -m   # job control: the background run gets SIGINT, not ignored
for sig in TERM INT; do
    "$COLLSIM" run --topo dgx-h100 --nodes 16 --model simgrid --env NCCL_ALGO=Ring -b 64M -e 64M \
        >"$sig.out" 2>"$sig.err" &
    parent=$!
    kid=
    for _ in $(seq 100); do
        kid=$(children "$parent")
        [ -n "$kid" ] && break
        sleep 0.05
    done
    if [ -z "$kid" ]; then
        bad "$sig: no SimGrid child seen"
        wait "$parent"
        continue
    fi
    kill -"$sig" "$parent"
    gone=
    for _ in $(seq 20); do
        alive "$kid" || { gone=1; break; }
        sleep 0.1
    done
    wait "$parent"
    rc=$?
    [ -n "$gone" ] && ok "$sig: child $kid gone" || { bad "$sig: child $kid still running 2 s later"; kill -KILL "$kid"; }
    if [ "$sig" = INT ]; then
        [ "$rc" -eq 130 ] && grep -q "interrupted" INT.err && [ "$(wc -l <INT.err)" -eq 1 ] \
            && ok "INT: exit 130, $(cat INT.err)" || bad "INT: exit $rc ($(cat INT.err))"
    fi
done
ls /tmp/collsim-simgrid-*.log 2>/dev/null && bad "left a log" || ok no-log-left
exit $fail
