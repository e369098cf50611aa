#!/bin/sh
# What `collsim run` shows while it prices: a progress line on stderr,
# redrawn in place (\r) and cleared at the end, when stderr is a terminal
# (run under script(1)) and the run takes over a second; nothing at all on
# stderr when it is a pipe or a file, nor for a short run on a terminal;
# the same table on stdout either way. -v adds one '#' line under each row
# and changes nothing else.
. "${top_srcdir:?}/tests/cli/lib.sh"
command -v script >/dev/null 2>&1 || { echo "SKIP: no script(1)"; exit 77; }
cd "$tmp" || exit 1
now_ms() { echo $(($(date +%s%N) / 1000000)); }
cr=$(printf '\r')

# runs "$@" with stdout in tty.out and stderr on a terminal, recorded in ts.txt
on_tty() {
    cmd=""
    for a in "$@"; do cmd="$cmd '$a'"; done
    script -qec "$cmd >tty.out" ts.txt </dev/null >/dev/null 2>&1
}

# ---- a short run on a terminal shows nothing --------------------------------
on_tty "$COLLSIM" run --topo dgx-h100 -b 8 -e 1M -f 2
rc=$?
[ "$rc" -eq 0 ] && ! grep -q 'collsim: pricing' ts.txt && ! grep -q "$cr[^$]" ts.txt \
    && ok short-run-silent || bad "short-run-silent (rc $rc): $(cat ts.txt)"

# ---- a long run: the first of these flow sweeps that takes 2 s here ----------
long=""
for n in 16 64 256 1024; do
    set -- --topo dgx-h100 --nodes "$n" --model flow --env NCCL_ALGO=Ring -b 1M -e 1G -f 2
    t0=$(now_ms)
    "$COLLSIM" run "$@" >pipe.out 2>pipe.err || { bad "pipe run ($n nodes): $(cat pipe.err)"; exit 1; }
    t1=$(now_ms)
    if [ $((t1 - t0)) -ge 2000 ]; then
        long=$n
        break
    fi
done
[ -n "$long" ] || { echo "SKIP: no flow sweep here takes 2 s"; exit 77; }
echo "# long run: $long nodes, $((t1 - t0)) ms"

# on a pipe (stderr a file): nothing
[ ! -s pipe.err ] && ok pipe-silent || bad "pipe-silent: $(head -c 300 pipe.err)"

on_tty "$COLLSIM" run "$@"
rc=$?
[ "$rc" -eq 0 ] && ok tty-exit || bad "tty-exit ($rc)"
cmp -s pipe.out tty.out && ok same-table || bad same-table
# the line: size, percent by bytes, elapsed, time left; redrawn with \r
grep -aq 'collsim: pricing [0-9]* [KMG]iB ([0-9]*/11), [0-9]*% by bytes, [0-9]*:[0-9][0-9] elapsed, ~[0-9]*:[0-9][0-9] left' ts.txt \
    && ok progress-line || bad "progress-line: $(head -c 400 ts.txt)"
[ "$(tr -cd '\r' <ts.txt | wc -c)" -ge 3 ] && ok redrawn || bad redrawn
# cleared at the end: after the last line drawn, one of blanks over it
sed '1d;/^Script done/d' ts.txt | tr -d '\n' \
    | awk -v RS='\r' '{ if ($0 ~ /[^ ]/) { drawn = 1; blank = 0 } else if ($0 ~ /^ +$/) blank = 1 }
                      END { exit !(drawn && blank) }' \
    && ok cleared || bad "cleared: $(tail -c 200 ts.txt | od -c | tail -5)"

# ---- calibrate: a fit of the flow engine prices every size many times -------
# its steps on the line (a terminal), and nothing written before it ends
"$COLLSIM" run --topo dgx-h100 --nodes 2 -b 1M -e 1G -f 4 --json cal.json >/dev/null 2>&1
on_tty timeout 6 "$COLLSIM" calibrate cal.json --topo dgx-h100 --nodes 2 --model flow -o fit.ini
tr "$cr" '\n' <ts.txt | grep -q '^collsim: calibrate: \(how [a-z0-9.]* moves the predictions\|fitting, sweep [0-9]* (at most 40)\), [0-9:]* elapsed' \
    && [ ! -e fit.ini ] && ok calibrate-progress || bad "calibrate-progress: $(tr "$cr" '\n' <ts.txt | tail -3)"

# ---- -v: one line per row, nothing else changes -----------------------------
"$COLLSIM" run --topo dgx-h100 -b 1M -e 64M -f 4 >plain.txt 2>/dev/null
"$COLLSIM" run --topo dgx-h100 -b 1M -e 64M -f 4 -v >v.txt 2>/dev/null
rows=$(grep -vc '^#' plain.txt)
[ "$(grep -c '^#   -v: priced in [0-9.e+-]* s CPU, [0-9.e+-]* s wall; ' v.txt)" -eq "$rows" ] \
    && grep -v '^#   -v: ' v.txt | cmp -s - plain.txt && ok verbose || bad "verbose: $(head -c 300 v.txt)"
# each -v line follows its row
awk '/^#   -v:/ { if (prev ~ /^#/) bad = 1 } { prev = $0 } END { exit bad }' v.txt && ok verbose-under-rows \
    || bad verbose-under-rows
"$COLLSIM" run --topo dgx-h100 -b 1M -e 4M --verbose >vv.txt 2>/dev/null && grep -q '^#   -v:' vv.txt \
    && ok verbose-long || bad verbose-long

exit $fail
