#!/bin/sh
# collsim validate --svg: a well-formed SVG with, per compared table, one
# measured and one predicted series in each panel (bus bandwidth, time),
# log axes and their titles, the targets' band where validate judges them
# (busbw +/-10% at >= 1 MiB, time +/-25% at <= 64 KiB, so of constant
# height on a log axis), a title naming the file, tables and topology, and a
# caption saying what is measured and what is model:analytic; the same
# bytes whatever the log's path; written with the other files, all or none;
# a bad or unwritable path is one line and a non-zero exit. Then several
# scenarios on one plot: collsim compare A.ini B.ini --svg.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"

command -v xmllint >/dev/null 2>&1 || { echo "xmllint not installed"; exit 77; }
logs="$top_srcdir/tests/data/logs"
cd "$tmp" || exit 1
# count(XPATH) over FILE, SVG elements by local name
xcount() { xmllint --xpath "count($2)" "$1" 2>/dev/null; }
xstr() { xmllint --xpath "string($2)" "$1" 2>/dev/null; }
el() { printf "*[local-name()='%s']" "$1"; }
P=$(el path); G=$(el g); T=$(el text)

# ---- two tables of a hand-made log ---------------------------------------------
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --svg two.svg >two.txt 2>two.err &&
    ok exit-0 || bad "exit-0 ($(cat two.err))"
xmllint --noout two.svg && ok well-formed || bad well-formed
for panel in busbw time; do
    [ "$(xcount two.svg "//$G[@id='$panel']//$P[@class='curve']")" = 4 ] &&
        [ "$(xcount two.svg "//$G[@id='$panel']//$P[@class='curve'][@stroke-dasharray]")" = 2 ] &&
        ok "two-tables-$panel-series" || bad "two-tables-$panel-series"
done
[ "$(xcount two.svg "//$G[@class='legend']/$T[starts-with(., 'measured: table ')]")" = 2 ] &&
    [ "$(xcount two.svg "//$G[@class='legend']/$T[starts-with(., 'model:analytic: table ')]")" = 2 ] &&
    xstr two.svg "//$G[@class='legend']/$T[1]" | grep -qx 'measured: table 1 (allreduce, float sum, 4 ranks on 2 nodes)' &&
    xstr two.svg "//$G[@class='legend']/$T[4]" | grep -q '^model:analytic: table 2; busbw >=1MiB: no sizes, time <=64KiB median [0-9.]*% (\(pass\|miss\))$' &&
    ok legend || bad "legend ($(xstr two.svg "//$G[@class='legend']"))"
# the table's own numbers: the legend's median is the report's
med=$(sed -n 's/^# summary time <=64KiB: n=[0-9]* median=\([0-9.]*%\).*/\1/p' two.txt | head -n 1)
xstr two.svg "//$G[@class='legend']/$T[2]" | grep -qF "time <=64KiB median $med" && ok legend-median ||
    bad "legend-median ($med)"
# log axes: powers of two along x, 1-2-5 per decade along y, and their titles
[ "$(xcount two.svg "//$G[@id='busbw']/$T[.='1K' or .='2K' or .='4K']")" = 3 ] && [ "$(xcount two.svg "//$G[@id='busbw']/$T[.='0.01' or .='0.02' or .='0.05' or .='0.1']")" = 4 ] &&
    [ "$(xcount two.svg "//$T[@class='axis'][starts-with(., 'message size (bytes')]")" = 2 ] &&
    [ "$(xcount two.svg "//$T[@class='axis'][.='bus bandwidth (GB/s)']")" = 1 ] &&
    [ "$(xcount two.svg "//$T[@class='axis'][.='time per call']")" = 1 ] && ok log-axes || bad log-axes
xstr two.svg "//$T[@class='title']" | grep -qx '2 tables: measured vs model:analytic' &&
    [ "$(xstr two.svg "//$T[@class='subtitle'][1]")" = "two-tables.txt, table 1 and table 2" ] &&
    xstr two.svg "//$T[@class='subtitle'][2]" | grep -q '^modelled topology: 2 x DGX H100' && ok title || bad title
cap=$(xstr two.svg "//$(el desc)")
echo "$cap" | grep -q '^measured (solid): the nccl-tests log two-tables.txt, out-of-place columns' &&
    echo "$cap" | grep -q 'predicted (dashed): model:analytic with built-in parameters, a model, not a measurement' &&
    echo "$cap" | grep -q 'busbw within ±10% at sizes >= 1 MiB and time within ±25% at sizes <= 64 KiB' &&
    [ "$(xcount two.svg "//$T[@class='caption']")" -ge 2 ] && ok caption || bad "caption ($cap)"

# ---- one table: its sizes on both sides of the targets' ranges -------------------
# collsim's own prediction read back as the log: 1K to 4M by 4
"$COLLSIM" run --topo dgx-h100 --nodes 2 --gpus 2 -b 1K -e 4M -f 4 >own.log 2>/dev/null
"$COLLSIM" validate own.log --topo dgx-h100 --nodes 2 --gpus 2 --svg one.svg >one.txt 2>one.err &&
    xmllint --noout one.svg && ok one-table || bad "one-table ($(cat one.err))"
for panel in busbw time; do
    [ "$(xcount one.svg "//$G[@id='$panel']//$P[@class='curve']")" = 2 ] && ok "one-table-$panel-series" ||
        bad "one-table-$panel-series"
done
# the band: one area per panel, over the sizes judged there (1M, 4M; 1K to
# 64K), each point's height the same (a ratio on a log axis)
band() { xstr one.svg "//$G[@id='$1']/$P[@class='band']/@d"; }
heights() {
    # "M x y L x y ... Z": the upper edge left to right, the lower back
    echo "$1" | tr -d 'MLZ' | awk '{ n = NF / 2; for (i = 1; i <= n / 2; i++) printf "%.2f %.2f\n", $(2 * i - 1), $(2 * (n - i + 1)) - $(2 * i) }'
}
[ "$(xcount one.svg "//$G[@id='busbw']/$P[@class='band']")" = 1 ] &&
    [ "$(heights "$(band busbw)" | wc -l)" -eq 2 ] && [ "$(heights "$(band busbw)" | awk '{ print $2 }' | sort -u | wc -l)" -eq 1 ] &&
    ok band-busbw || bad "band-busbw ($(band busbw))"
[ "$(xcount one.svg "//$G[@id='time']/$P[@class='band']")" = 1 ] &&
    [ "$(heights "$(band time)" | wc -l)" -eq 4 ] && [ "$(heights "$(band time)" | awk '{ print $2 }' | sort -u | wc -l)" -eq 1 ] &&
    ok band-time || bad "band-time ($(band time))"
# +/-10% against +/-25%: log(1.1/0.9) / log(1.25/0.75) of a decade, scaled
# by each panel's decades (from its 1x ticks)
# (a power of ten: 0.01, 1, 100, "10 us", "1 ms": its number without 0s and '.' is 1)
decades() { xcount one.svg "//$G[@id='$1']/$T[@class='tl'][@text-anchor='end'][translate(substring-before(concat(., ' '), ' '), '0.', '')='1']"; }
hb=$(heights "$(band busbw)" | awk 'NR == 1 { print $2 }')
ht=$(heights "$(band time)" | awk 'NR == 1 { print $2 }')
awk -v hb="$hb" -v ht="$ht" -v db="$(($(decades busbw) - 1))" -v dt="$(($(decades time) - 1))" 'BEGIN {
    want = log(1.1 / 0.9) / log(1.25 / 0.75) * dt / db
    exit !(hb / ht > want * 0.99 && hb / ht < want * 1.01) }' && ok band-ratio || bad "band-ratio ($hb $ht)"

# ---- the same bytes, wherever the log is -------------------------------------------
mkdir elsewhere && cp "$logs/two-tables.txt" elsewhere/
(cd elsewhere && "$COLLSIM" validate two-tables.txt --topo dgx-h100 --nodes 2 --gpus 2 --svg ../again.svg >/dev/null 2>&1)
cmp -s two.svg again.svg && ok deterministic || bad deterministic

# ---- with --json and --csv, all or none ---------------------------------------------
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --json v.json --csv v.csv \
    --svg v.svg >/dev/null 2>&1 && [ -s v.json ] && [ -s v.csv ] && cmp -s v.svg two.svg && ok with-files || bad with-files

# ---- bad paths: one line, non-zero, nothing written ------------------------------------
fails() {
    # $1 = name, $2 = exit status wanted, $3 = what stderr's line starts with; the rest: arguments
    name=$1 want=$2 pat=$3
    shift 3
    rm -f x.json
    "$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --json x.json "$@" >x.out 2>x.err
    rc=$?
    [ "$rc" -eq "$want" ] && [ "$(wc -l <x.err)" -eq 1 ] && grep -q "$pat" x.err && [ ! -e x.json ] && [ ! -s x.out ] &&
        ok "$name" || bad "$name (exit $rc: $(cat x.err))"
}
fails no-dir 2 '^/nonexistent/p.svg: cannot write the file' --svg /nonexistent/p.svg
fails directory 2 'cannot write the file' --svg .
fails same-path 2 '^collsim: --svg: .*same file as --json' --svg x.json
ln -s x.json link.svg
fails same-path-via-link 2 'same file as --json' --svg link.svg
if [ -w /dev/full ]; then
    fails disk-full 3 '^/dev/full: cannot write the file' --svg /dev/full
fi
fails bad-input-first 2 '^collsim: --nodes' --svg p.svg --nodes 0
[ ! -e p.svg ] && ok nothing-left || bad nothing-left
[ -z "$(ls -A | grep '\.svg\.')" ] && ok no-temporary || bad "no-temporary ($(ls -A))"

# ---- make validation (validation/run.sh): a plot per configuration, linked -----------
mkdir -p rep/report && echo stale >rep/report/old.svg
printf '[two tables: 1]\nfile = two-tables.txt\ntable = 1\nconfig = c\ntopo = dgx-h100\nnodes = 2\ngpus = 2\n
[two tables/ 1]\nfile = two-tables.txt\ntable = 2\nconfig = c\ntopo = dgx-h100\nnodes = 2\ngpus = 2\n' >m.ini
if sh "$top_srcdir/validation/run.sh" "$COLLSIM" m.ini "$logs" rep/report.md >rep.out 2>rep.err; then
    grep -qF '| [two tables: 1](report/two-tables-1.svg) | 1 |' rep/report.md &&
        grep -qF '| [two tables/ 1](report/two-tables-1-2.svg) | 2 |' rep/report.md &&
        [ "$(ls rep/report)" = "$(printf 'two-tables-1-2.svg\ntwo-tables-1.svg')" ] &&
        xmllint --noout rep/report/two-tables-1.svg rep/report/two-tables-1-2.svg &&
        [ "$(xcount rep/report/two-tables-1-2.svg "//$G[@id='busbw']//$P[@class='curve']")" = 2 ] &&
        ok validation-plots || bad "validation-plots ($(ls rep/report); $(grep '^| \[' rep/report.md))"
else
    bad "validation-plots ($(cat rep.err))"
fi

# a labelled configuration with its cause modelled beside the plain prediction;
# a cause collsim refuses is reported as such; a cause on a counted one is refused
printf '[lab 1]\nfile = two-tables.txt\ntable = 1\nconfig = c\ntopo = dgx-h100\nnodes = 2\ngpus = 2\nexclude = labelled SLOW\ncause = rings only\ncause-flags = --env NCCL_ALGO=Ring\n
[lab 2]\nfile = two-tables.txt\ntable = 2\nconfig = c\ntopo = dgx-h100\nnodes = 2\ngpus = 2\nexclude = labelled SLOW\ncause = a typo\ncause-flags = --env NCCL_ALGO=Rnig\n' >c.ini
if sh "$top_srcdir/validation/run.sh" "$COLLSIM" c.ini "$logs" crep/report.md >crep.out 2>crep.err; then
    grep -q '^| lab 1 | rings only | `--env NCCL_ALGO=Ring` | no sizes | [0-9.]*% (miss) / [0-9.]*% (miss) | not |$' crep/report.md &&
        grep -q '^| lab 2 | a typo | `--env NCCL_ALGO=Rnig` | collsim failed: `.*NCCL_ALGO.*` | | not |$' crep/report.md &&
        grep -q '^Labelled configurations with a cause modelled: 2; explained by it: 0; partly: 0\.$' crep/report.md &&
        ok validation-cause || bad "validation-cause ($(grep -A8 '^## Labelled runs' crep/report.md))"
else
    bad "validation-cause ($(cat crep.err))"
fi
printf '[counted]\nfile = two-tables.txt\ntable = 1\nconfig = c\ntopo = dgx-h100\nnodes = 2\ngpus = 2\ncause-flags = --env NCCL_ALGO=Ring\n' >cc.ini
sh "$top_srcdir/validation/run.sh" "$COLLSIM" cc.ini "$logs" ccrep/report.md >ccrep.out 2>ccrep.err
[ $? -eq 2 ] && [ "$(wc -l <ccrep.err)" -eq 1 ] && grep -q '^validation: cc.ini:8: \[counted\] has cause-flags but no exclude' ccrep.err && [ ! -e ccrep/report.md ] \
    && ok validation-cause-counted || bad "validation-cause-counted ($(cat ccrep.err))"

printf '[half]\nfile = two-tables.txt\ntopo = dgx-h100\nexclude = labelled SLOW\ncause = rings only\n' >ch.ini
sh "$top_srcdir/validation/run.sh" "$COLLSIM" ch.ini "$logs" chrep/report.md >chrep.out 2>chrep.err
[ $? -eq 2 ] && grep -q '^validation: ch.ini:5: \[half\] has one of cause and cause-flags; expected both' chrep.err \
    && [ ! -e chrep/report.md ] && ok validation-cause-half || bad "validation-cause-half ($(cat chrep.err))"

# ---- several scenarios on one plot: compare ---------------------------------------
printf '[topology]\npreset = dgx-h100\n[collective]\nminbytes = 1M\nmaxbytes = 64M\nstepfactor = 4\n' >h100.ini
printf '[topology]\npreset = dgx-a100\n[collective]\nminbytes = 1M\nmaxbytes = 64M\nstepfactor = 4\n' >a100.ini
"$COLLSIM" compare h100.ini a100.ini --svg ab.svg >ab.txt 2>ab.err && xmllint --noout ab.svg &&
    [ "$(xcount ab.svg "//$G[@id='busbw']//$P[@class='curve']")" = 2 ] &&
    [ "$(xstr ab.svg "//$T[@class='title']")" = "allreduce: h100 vs a100" ] &&
    xstr ab.svg "//$(el desc)" | grep -q '^model: analytic prediction, not a measurement' &&
    ok compare-two-scenarios || bad "compare-two-scenarios ($(cat ab.err))"
# collsim run --svg: one scenario, one curve per panel, the topology under its name
"$COLLSIM" run h100.ini --name "my cluster" --svg r.svg >r.txt 2>r.err && xmllint --noout r.svg &&
    [ "$(xcount r.svg "//$G[@id='busbw']//$P[@class='curve']")" = 1 ] &&
    [ "$(xcount r.svg "//$G[@id='time']//$P[@class='curve']")" = 1 ] &&
    [ "$(xstr r.svg "//$T[@class='title']")" = "allreduce: my cluster" ] &&
    xstr r.svg "//$T[@class='subtitle']" | grep -q '^modelled topology: DGX H100' &&
    ok run-one-scenario || bad "run-one-scenario ($(cat r.err))"
# an empty file name is one line naming the flag
"$COLLSIM" validate "$logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 --svg "" >/dev/null 2>empty.err
[ $? -eq 2 ] && [ "$(cat empty.err)" = "collsim: --svg: an empty file name; expected a path to write" ] && ok empty-name \
    || bad "empty-name: $(cat empty.err)"

# a log whose name is not UTF-8 (and holds a control character): the plot
# is still well-formed XML
odd=$(printf 'n\377\001u.txt')
cp "$logs/two-tables.txt" "$odd"
"$COLLSIM" validate "$odd" --topo dgx-h100 --nodes 2 --gpus 2 --svg odd.svg >/dev/null 2>odd.err &&
    xmllint --noout odd.svg && ok odd-name-well-formed || bad "odd-name-well-formed ($(cat odd.err))"

exit $fail
