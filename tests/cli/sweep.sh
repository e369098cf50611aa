#!/bin/sh
# collsim sweep on local processes: the grid's order and columns, every
# point equal to collsim run of the same design, byte-identical files for 1
# and 3 workers, the output formats, and bad input (one line, exit 2,
# nothing written). tests/cli/sweep-mpi.sh runs it under mpirun.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"

cd "$tmp" || exit 1
S=$top_srcdir/scenarios

G="$S/default.ini -b 1M -e 64M -f 8 --nic ib-ndr --grid nccl.NCCL_ALGO=Ring,Tree --grid nodes=1,2 --grid scenario.model=analytic,flow"
if "$COLLSIM" sweep $G -j 1 --output one.csv >one.txt 2>one.err; then ok exit; else bad "exit ($(cat one.err))"; fi
[ -s one.err ] && bad "stderr ($(cat one.err))" || ok stderr
head -1 one.csv | grep -qx 'point,nccl.NCCL_ALGO,topology.nodes,scenario.model,model,collective,nranks,nnodes,size,printed_size,count,time_us,algbw,busbw,algo,proto,nchannels,transport' \
    && ok header || bad header
# 8 points x 3 sizes, the last --grid fastest
[ "$(grep -c . one.csv)" -eq 25 ] && ok row-count || bad row-count
awk -F, 'NR > 1 { print $1 "," $2 "," $3 "," $4 }' one.csv | uniq >order.txt
printf '%s\n' 0,Ring,1,analytic 1,Ring,1,flow 2,Ring,2,analytic 3,Ring,2,flow \
    4,Tree,1,analytic 5,Tree,1,flow 6,Tree,2,analytic 7,Tree,2,flow | cmp -s - order.txt && ok order || bad order
awk -F, 'NR > 1 && ($5 != $4 || $7 != 8 * $3 || $15 != $2) { bad = 1; print } END { exit bad }' one.csv \
    && ok columns-agree || bad columns-agree
grep -q '^# collsim [0-9.]* sweep (models: analytic, flow) — every number is a model prediction, not a measurement$' one.txt &&
    grep -q '^# 8 points of allreduce over nccl.NCCL_ALGO (2) x topology.nodes (2) x scenario.model (2)$' one.txt &&
    grep -q '^# wrote one.csv$' one.txt && [ "$(grep -c '^ *[0-9]' one.txt)" -eq 8 ] && ok summary || bad summary

# a point is what collsim run predicts for the same design (time, busbw)
"$COLLSIM" run "$S/default.ini" -b 1M -e 64M -f 8 --nic ib-ndr --nodes 2 --env NCCL_ALGO=Tree --model flow --csv run.csv >/dev/null 2>&1
want=$(awk -F, 'NR > 1 { print $5 "," $10 "," $12 }' run.csv)
got=$(awk -F, '$1 == 7 { print $9 "," $12 "," $14 }' one.csv)
[ -n "$want" ] && [ "$want" = "$got" ] && ok same-as-run || bad "same-as-run ($want / $got)"

# processes change nothing
"$COLLSIM" sweep $G -j 3 --output three.csv >three.txt 2>&1 && cmp -s one.csv three.csv && ok workers-identical || bad workers-identical
sed 's/three.csv/one.csv/' three.txt | cmp -s - one.txt && ok summary-identical || bad summary-identical

# formats: stdout (csv, --format json), --output by extension, --csv/--json/--svg together
"$COLLSIM" sweep $G >out.csv 2>/dev/null && cmp -s out.csv one.csv && ok stdout-csv || bad stdout-csv
"$COLLSIM" sweep $G --format json >out.json 2>/dev/null && "$COLLSIM" sweep $G --output o.json >/dev/null 2>&1 &&
    cmp -s out.json o.json && grep -q '"producer": "collsim sweep"' o.json && [ "$(grep -c '"point": ' o.json)" -eq 8 ] \
    && ok json || bad json
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open("o.json")); sys.exit(d["keys"] != ["nccl.NCCL_ALGO","topology.nodes","scenario.model"] or d["points"][5]["settings"]["topology.nodes"] != "1" or len(d["points"][5]["rows"]) != 3)' \
        && ok json-parses || bad json-parses
fi
"$COLLSIM" sweep $G --csv c.csv --json c.json --svg c.svg >/dev/null 2>&1 && cmp -s c.csv one.csv && cmp -s c.json o.json &&
    [ "$(grep -c 'class="curve"' c.svg)" -eq 16 ] && ok all-files || bad all-files
# no grid: the base scenario, one point
"$COLLSIM" sweep --topo dgx-h100 -b 1M -e 1M >b.csv 2>/dev/null && [ "$(grep -c . b.csv)" -eq 2 ] &&
    head -1 b.csv | grep -q '^point,model,' && ok no-grid || bad no-grid
# a value with a comma: \,
"$COLLSIM" sweep --topo dgx-h100 -b 1M -e 1M --grid 'NCCL_IB_HCA=mlx5_0\,mlx5_1,mlx5_2' >h.csv 2>h.err &&
    grep -q '^0,"mlx5_0,mlx5_1",' h.csv && grep -q '^1,mlx5_2,' h.csv && ok escaped-comma \
    || bad "escaped-comma ($(cat h.err))"

# ---- bad input -------------------------------------------------------------------
check() {  # name, expected stderr (exact), args...
    name=$1 want=$2
    shift 2
    rm -f x.csv
    "$COLLSIM" sweep "$@" --output x.csv >x.out 2>x.err
    rc=$?
    if [ $rc -eq 2 ] && [ "$(cat x.err)" = "$want" ] && [ ! -s x.out ] && [ ! -e x.csv ]; then ok "$name"
    else bad "$name (exit $rc: $(cat x.err))"; fi
}
check bad-key "collsim: --grid topology.nodez: unknown key 'nodez' in [topology]; expected one of topology.file, topology.preset, topology.gpu, topology.gpus, topology.sockets, topology.cpu, topology.p2p, topology.nodes, topology.nic, topology.nics-per-node, topology.fabric, topology.oversubscription, topology.nvlink-bridge, topology.visible-gpus" \
    --topo dgx-h100 --grid topology.nodez=1,2
check bad-group "collsim: --grid network.nodes: unknown group 'network' in 'network.nodes'; expected scenario, topology, collective, fabric or nccl" \
    --topo dgx-h100 --grid network.nodes=1
check bad-value "collsim: --grid topology.fabric: unknown fabric 'torus'; expected rail or fat-tree" \
    --topo dgx-h100 --grid topology.fabric=rail,torus
check no-values "collsim: --grid: 'nodes' is not a grid axis; expected KEY=VALUE[,VALUE...] (e.g. topology.nodes=1,2,4)" \
    --topo dgx-h100 --grid nodes
check twice "collsim: --grid topology.nodes: the key is given twice; expected each key once" \
    --topo dgx-h100 --grid nodes=1 --grid topology.nodes=2
# what run would warn of is warned once (stderr), the file still written
"$COLLSIM" sweep --topo dgx-h100 --env NCCL_FOO=1 --link-stats --grid nodes=1,2 -b 1M -e 1M --output wn.csv \
    >wn.out 2>wn.err && [ -s wn.csv ] &&
    [ "$(grep -c '^collsim: warning: NCCL_FOO (--env): NCCL v2.28.9 does not read this variable' wn.err)" -eq 1 ] &&
    grep -q '^collsim: warning: link-stats: sweep writes one row per point and size' wn.err &&
    ok sweep-warns-once || bad "sweep-warns-once ($(cat wn.err))"
# a grid over a variable NCCL does not read (a typo): said on stderr, once
"$COLLSIM" sweep --topo dgx-h100 --grid NCCL_FOO=1,2 -b 1M -e 1M --output wt.csv >wt.out 2>wt.err && [ -s wt.csv ] &&
    [ "$(grep -c '^collsim: warning: --grid nccl.NCCL_FOO: NCCL does not read NCCL_FOO, so every point prices the same$' wt.err)" -eq 1 ] &&
    "$COLLSIM" sweep --topo dgx-h100 --grid NCCL_ALGO=Ring,Tree -b 1M -e 1M --output wa.csv >wa.out 2>wa.err && ! grep -q 'does not read' wa.err \
    && ok sweep-unknown-nccl-axis || bad "sweep-unknown-nccl-axis ($(cat wt.err wa.err))"
# a scenario's own [output] files are not sweep's: said at their line
printf '[topology]\npreset = dgx-h100\n[output]\ncsv = own.csv\n' >own.ini
"$COLLSIM" sweep own.ini --grid nodes=1,2 -b 1M -e 1M --output wo.csv >wo.out 2>wo.err && [ -s wo.csv ] && [ ! -e own.csv ] &&
    grep -q '^collsim: warning: own.ini:4: csv: not written: sweep writes only its own files' wo.err \
    && ok sweep-says-scenario-outputs || bad "sweep-says-scenario-outputs ($(cat wo.err))"
# an engine axis: each engine the points run says what it leaves out
"$COLLSIM" sweep --topo dgx-h100 --nodes 2 --nic roce-400g --mtu 1024 --grid scenario.model=analytic,flow \
    -b 1M -e 1M --output wm.csv >wm.out 2>wm.err &&
    grep -q -- '--model analytic does not simulate them' wm.err && grep -q -- '--model flow does not simulate them' wm.err &&
    "$COLLSIM" sweep --topo dgx-h100 --nodes 2 --nic roce-400g --mtu 1024 --grid scenario.model=packet \
        -b 64K -e 64K --output wp.csv >wp.out 2>wp.err && ! grep -q 'does not simulate' wp.err &&
    ok sweep-warns-per-engine || bad "sweep-warns-per-engine ($(cat wm.err wp.err))"
check machine-twice "collsim: --grid topology.preset: topology.topo chooses the machine too; expected one of topo, preset and file on the grid" \
    --grid topo=dgx-h100,dgx-b200 --grid topology.preset=dgx-a100,dgx1-v100
check value-twice "collsim: --grid topology.nodes: '2' is listed twice; expected each value once" \
    --topo dgx-h100 --grid nodes=2,2
check format-vs-name "collsim: --format: json into 'x.csv', a .csv name; expected --format csv, or a name ending in .json" \
    --topo dgx-h100 --format json
check bad-format "collsim: --format: 'xml' is not a format; expected csv or json" \
    --topo dgx-h100 --format xml
# a point the engine refuses: named by its number and settings, nothing written
check bad-point "collsim: --oversubscription: 4 does not apply: the fat-tree of 4 nodes is one leaf switch, with no uplinks; expected it from 5 nodes up, or none (point 1: topology.nodes=4)" \
    --topo dgx-h100 --nic ib-ndr --fabric fat-tree --oversubscription 4 --grid nodes=8,4
"$COLLSIM" sweep --topo dgx-h100 --output x.txt >x.out 2>x.err
[ $? -eq 2 ] && [ "$(cat x.err)" = "collsim: --output: cannot tell the format of 'x.txt'; expected a .csv or .json name, or --format" ] \
    && [ ! -e x.txt ] && ok unknown-extension || bad "unknown-extension ($(cat x.err))"

# -t applies to every point alike: 2 ranks a node (one process, 2 threads), on 1, 2 and 4 nodes
"$COLLSIM" sweep --topo dgx-h100 -g 2 -t 2 -b 1M -e 1M --grid nodes=1,2,4 -j 1 --output t2.csv >/dev/null 2>t2.err
[ "$(awk -F, 'NR > 1 { printf "%s:%s ", $2, $5 }' t2.csv 2>/dev/null)" = "1:2 2:4 4:8 " ] && ok threads-every-point \
    || bad "threads-every-point ($(cat t2.err t2.csv))"


# -m said once on stderr for the sweep; a point whose buffers do not fit
# its GPU says so in its JSON notes (the H100's 80 GB: 3 x 32 GiB), the
# one that fits (8 GiB) does not
"$COLLSIM" sweep --topo dgx-h100 -b 8G -e 8G -f 4 -m 2 --grid maxbytes=8G,32G -j 1 --format json >wj.json 2>wj.err
# (the points in order, one "point": N object each: point 1's notes hold
# the warning, point 0's do not)
p0=$(tr -d '\n' < wj.json | sed -n 's/.*{"point": 0, \(.*\){"point": 1, .*/\1/p')
p1=$(tr -d '\n' < wj.json | sed -n 's/.*{"point": 1, \(.*\)/\1/p')
[ "$(grep -c '^collsim: warning: agg-iters 2 (-m)' wj.err)" -eq 1 ] && [ -n "$p0" ] && [ -n "$p1" ] &&
    ! printf '%s' "$p0" | grep -q 'do not fit' && printf '%s' "$p1" | grep -q 'up to 3 x 32 GiB do not fit' &&
    ok sweep-warnings-per-point || bad "sweep-warnings-per-point ($(cat wj.err; head -c 600 wj.json))"

# a --grid over [fabric] keys with an engine that does not simulate them:
# said once per axis and engine (its rows are the same at every value)
"$COLLSIM" sweep --topo dgx-h100 --nodes 2 --nic roce-400g -b 1M -e 1M --grid fabric.dcqcn=off,connectx -j 1 \
    --output fg.csv >/dev/null 2>fg.err
[ "$(grep -c '^collsim: warning: --grid fabric.dcqcn: .*--model analytic does not simulate them' fg.err)" -eq 1 ] &&
    ok fabric-axis-said || bad "fabric-axis-said ($(cat fg.err))"

# a calibration's parameters are said once on stderr (CSV rows have no notes)
printf '[params]\nlat.launch = 7\n' > cal.ini
"$COLLSIM" sweep --topo dgx-h100 -b 1M -e 1M --calibration cal.ini --grid nccl.NCCL_ALGO=Ring,Tree -j 1 --output cal.csv \
    >/dev/null 2>cal.err
[ "$(grep -c "^collsim: warning: --calibration: every point is priced with cal.ini's parameters, which CSV rows do not record" cal.err)" -eq 1 ] &&
    ok calibration-said || bad "calibration-said ($(cat cal.err))"

exit $fail
