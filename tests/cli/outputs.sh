#!/bin/sh
# Output files never clobber what they should not, and every write is
# checked (issue 13, items 1 and 4): a symlink is followed, a file keeps its
# mode, /dev/null and a FIFO are written in place, one file named for two
# outputs is refused before anything runs, a signal during the write leaves
# no temporary file, and a full disk on stdout is exit 3 with one line.
. "${top_srcdir:?}/tests/cli/lib.sh"

cd "$tmp" || exit 1
# the files in the current directory but the ones named
others() { ls -A | grep -v -x -e err.txt -e out.txt "$@"; }

R="run --topo dgx-h100 -b 1M -e 1M"

# ---- a symlink is followed: the link stays, its target gets the data --------
mkdir d
echo old >d/target.json
ln -s d/target.json link.json
if "$COLLSIM" $R --json link.json >out.txt 2>err.txt && [ -L link.json ] &&
   [ "$(readlink link.json)" = d/target.json ] && grep -q '"producer": "model:analytic"' d/target.json; then
    ok symlink-followed
else
    bad "symlink-followed ($(ls -l link.json) $(cat err.txt))"
fi
# a dangling link: the file is created where it points
ln -s d/new.csv dangling.csv
"$COLLSIM" $R --csv dangling.csv >out.txt 2>err.txt && [ -L dangling.csv ] && [ -s d/new.csv ] &&
    ok dangling-symlink || bad dangling-symlink
[ -z "$(ls -A d | grep -v -x -e target.json -e new.csv)" ] && ok symlink-no-temp || bad "symlink-no-temp: $(ls -A d)"

# ---- an existing file keeps its mode; a new one gets 0666 less the umask ------
: >private.csv
chmod 600 private.csv
"$COLLSIM" $R --csv private.csv >out.txt 2>err.txt
[ "$(stat -c %a private.csv)" = 600 ] && [ -s private.csv ] && ok mode-kept || bad "mode-kept ($(stat -c %a private.csv))"
(umask 027 && "$COLLSIM" $R --json fresh.json >out.txt 2>err.txt)
[ "$(stat -c %a fresh.json)" = 640 ] && ok mode-new || bad "mode-new ($(stat -c %a fresh.json))"

# ---- a device stays a device (replacing /dev/null needs root to happen) -------
if [ "$(id -u)" = 0 ] && [ -c /dev/null ]; then
    "$COLLSIM" $R --csv /dev/null >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 0 ] && [ -c /dev/null ] && ok dev-null || bad "dev-null (exit $rc, $(ls -l /dev/null))"
    ls /dev/null.* >/dev/null 2>&1 && bad dev-null-temp || ok dev-null-temp
    if [ ! -c /dev/null ]; then
        rm -f /dev/null && mknod -m 666 /dev/null c 1 3   # repair what the bug broke
    fi
else
    echo "skip dev-null (not root)"
fi

# ---- a FIFO is written in place, not replaced --------------------------------
mkfifo pipe.json
cat pipe.json >from-pipe.json &
reader=$!
"$COLLSIM" $R --json pipe.json >out.txt 2>err.txt
rc=$?
# a FIFO replaced by a file would leave the reader waiting for ever
[ -p pipe.json ] || { kill $reader 2>/dev/null; : >pipe.json.replaced; }
wait $reader
[ $rc -eq 0 ] && [ -p pipe.json ] && grep -q '"producer": "model:analytic"' from-pipe.json &&
    ok fifo-in-place || bad "fifo-in-place (exit $rc, $(ls -l pipe.json) $(cat err.txt))"

# ---- one file for two outputs: refused before anything runs, nothing written --
mkdir same && cd same || exit 1
"$COLLSIM" $R --json x.out --csv ./x.out >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && [ ! -s out.txt ] && [ -z "$(others)" ] &&
    grep -q '^collsim: --csv: ./x.out is the same file as --json' err.txt &&
    ok same-path || bad "same-path (exit $rc: $(cat err.txt); files: $(others))"
# the same file through a symlink
echo keep >real.csv
ln -s real.csv alias.csv
"$COLLSIM" $R --csv real.csv --json alias.csv >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] && [ "$(cat real.csv)" = keep ] && [ ! -s out.txt ] && ok same-file-symlink ||
    bad "same-file-symlink (exit $rc: $(cat err.txt))"
cd .. || exit 1

# ---- stdout to a full disk: exit 3, one line ----------------------------------
if [ -w /dev/full ]; then
    for cmd in "topo show dgx-h100" "topo dot dgx-h100" "topo xml dgx-h100" "run --topo dgx-h100 --dump" \
               "$R" "--help"; do
        "$COLLSIM" $cmd >/dev/full 2>err.txt
        rc=$?
        [ $rc -eq 3 ] && [ "$(wc -l <err.txt)" -eq 1 ] &&
            [ "$(cat err.txt)" = "collsim: standard output: No space left on device" ] &&
            ok "full-stdout ($cmd)" || bad "full-stdout ($cmd): exit $rc, $(cat err.txt)"
    done
    # a file output on a full disk: exit 3 (a device is written in place)
    "$COLLSIM" $R --json /dev/full >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 3 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q '^/dev/full: cannot write the file (No space left on device)' err.txt &&
        ok full-file || bad "full-file: exit $rc, $(cat err.txt)"
    if [ ! -c /dev/full ] && [ "$(id -u)" = 0 ]; then
        rm -f /dev/full && mknod -m 666 /dev/full c 1 7   # repair what the bug broke
    fi
else
    echo "skip full-stdout (no /dev/full)"
fi

# ---- a signal while the files are written leaves no temporary file -----------
# A trace of ~40 MB takes tens of milliseconds to write: SIGTERM (and
# SIGHUP) the moment a temporary file appears beside it.
for sig in TERM HUP; do
    rm -rf sig && mkdir sig && cd sig || exit 1
    "$COLLSIM" run --topo dgx-h100 --nodes 8 --nic ib-ndr --model flow -b 64M -e 256M -f 2 \
        --trace t.json --json t2.json >/dev/null 2>err.txt &
    pid=$!
    seen=0 i=0
    while [ $i -lt 400000 ]; do
        set -- t.json.* t2.json.*
        if [ -e "$1" ] || [ -e "$2" ]; then
            seen=1
            break
        fi
        kill -0 $pid 2>/dev/null || break
        i=$((i + 1))
    done
    kill -$sig $pid 2>/dev/null
    wait $pid
    rc=$?
    left=$(ls -A | grep -v -x -e err.txt -e t.json -e t2.json)
    if [ $seen -eq 0 ]; then
        echo "note: signal-$sig: the write ended before a temporary file was seen (exit $rc)"
    fi
    [ -z "$left" ] && ok "signal-$sig-no-temp" || bad "signal-$sig-no-temp (exit $rc): $left"
    # all or none of the two files
    if [ -e t.json ] || [ -e t2.json ]; then
        [ -s t.json ] && [ -s t2.json ] && ok "signal-$sig-all-or-none" || bad "signal-$sig-all-or-none: $(ls -l)"
    else
        ok "signal-$sig-all-or-none"
    fi
    cd .. || exit 1
done

exit $fail
