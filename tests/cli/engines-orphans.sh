#!/bin/sh
# No orphans (issue 13, item 5): the SimGrid engine's child process dies
# with its parent. A SIGKILL to the parent alone leaves no child behind
# within 2 s (PR_SET_PDEATHSIG); a SIGINT or SIGTERM (collsim's handler:
# Ctrl-C, a batch scheduler's time limit) kills the child, reaps it, exits
# 128 + the signal with one line, and leaves no file in $TMPDIR.
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
mkdir tmpdir
for sig in KILL TERM INT; do
    rm -f tmpdir/*
    TMPDIR=$tmp/tmpdir "$COLLSIM" run --topo dgx-h100 --nodes 16 --model simgrid --env NCCL_ALGO=Ring -b 64M -e 64M \
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
    case $sig in
    INT) want=130 said="collsim: interrupted" ;;
    TERM) want=143 said="collsim: terminated (SIGTERM)" ;;
    *) continue ;;   # (the parent's own temporary file may stay: SIGKILL cannot be caught)
    esac
    [ "$rc" -eq "$want" ] && [ "$(cat "$sig.err")" = "$said" ] \
        && ok "$sig: exit $want, $said" || bad "$sig: exit $rc ($(cat "$sig.err"))"
    [ -z "$(ls -A tmpdir)" ] && ok "$sig: no file left" || bad "$sig: left $(ls -A tmpdir)"
done
exit $fail
