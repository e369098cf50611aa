#!/bin/sh
# collsim compare: designs side by side. The ratio column and the verdict
# are checked against the table's own times and bandwidths (recomputed
# here), the files against the table, and bad input gives one line, exit 2
# and no file.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"

cd "$tmp" || exit 1
rows() { grep -v '^#' "$1" | grep -c .; }
S=$top_srcdir/scenarios

# ---- one scenario, two variants: ring against tree -------------------------------
RT="$S/default.ini -b 8 -e 512M -f 4 --design ring:NCCL_ALGO=Ring --design tree:NCCL_ALGO=Tree"
if "$COLLSIM" compare $RT >rt.txt 2>rt.err; then ok rt-exit; else bad "rt-exit ($(cat rt.err))"; fi
[ -s rt.err ] && bad "rt-stderr ($(cat rt.err))" || ok rt-stderr
head -1 rt.txt | grep -q '^# collsim [0-9.]* comparison (model: analytic) — every number is a model prediction, not a measurement$' \
    && ok header || bad header
[ "$(grep -c '^# design ' rt.txt)" -eq 2 ] && grep -q '^# design ring: .*default.ini + NCCL_ALGO=Ring (model: analytic): 8 ranks on 1 node' rt.txt \
    && grep -q '^# design tree: .*default.ini + NCCL_ALGO=Tree (model: analytic)' rt.txt && ok design-lines || bad design-lines
[ "$(rows rt.txt)" -eq 14 ] && ok row-count || bad "row-count ($(rows rt.txt))"
# columns: size | busbw time choice (ring) | busbw time choice ratio (tree)
grep -v '^#' rt.txt | awk '
    { if ($4 !~ /^Ring\// || $7 !~ /^Tree\//) { print "algo: " $0; bad = 1 }
      if ($2 >= 10) { r = $5 / $2; d = r - $8; if (d < 0) d = -d; if (d > 0.01 + r * 0.01) { print "ratio: " $0; bad = 1 } } }
    END { exit bad }' && ok ratio-column || bad ratio-column
# the verdict names the faster design at the smallest and the largest size
first=$(grep -v '^#' rt.txt | head -1 | awk '{ print ($6 < $3 * 0.99) ? "tree" : ($3 < $6 * 0.99) ? "ring" : "tie" }')
last=$(grep -v '^#' rt.txt | tail -1 | awk '{ print ($6 < $3 * 0.99) ? "tree" : ($3 < $6 * 0.99) ? "ring" : "tie" }')
sed -n '/^# verdict/,$p' rt.txt | grep '^#   ' >v.txt
[ "$last" != tie ] && tail -1 v.txt | grep -q "to 512 MiB: $last wins, " && ok verdict-last || bad "verdict-last ($last)"
case $first in
    tie) head -1 v.txt | grep -q '^#   8 B.*: .* tie (within 1%)$' ;;
    *) head -1 v.txt | grep -q "^#   8 B.*: $first wins" ;;
esac && ok verdict-first || bad "verdict-first ($first)"
grep -q '^#   .* wins, [0-9.]*x.* faster than .* (Ring/Simple against Tree/Simple)$' rt.txt && ok verdict-why || bad verdict-why
"$COLLSIM" compare $RT >rt2.txt 2>/dev/null && cmp -s rt.txt rt2.txt && ok deterministic || bad deterministic

# three designs that price alike: all three tie, none is "1.00x slower"
"$COLLSIM" compare --topo dgx-h100 --nodes 2 -b 1G -e 1G --design a:seed=1 --design b:seed=2 --design c:seed=3 \
    >t3.txt 2>t3.err && grep -q '^#   1 GiB: a, b and c tie (within 1%)$' t3.txt && ! grep -q 'slower' t3.txt &&
    ok tie-three || bad "tie-three ($(grep '^#   ' t3.txt) $(cat t3.err))"

# ---- two files: labels from the names of the files --------------------------------
"$COLLSIM" compare "$S/dgx-h100.ini" "$S/dgx-a100.ini" -b 1M -e 64M -f 8 >f.txt 2>f.err && ok files-exit || bad "files-exit ($(cat f.err))"
grep -q '^# design dgx-h100: .*dgx-h100.ini ("' f.txt && grep -q '^# design dgx-a100: ' f.txt && ok file-labels || bad file-labels
[ "$(rows f.txt)" -eq 3 ] && ok files-rows || bad files-rows

# ---- the union of sizes: '-' where a design does not sweep a size ------------------
"$COLLSIM" compare --topo dgx-h100 -b 1K -e 4M -f 4 --design a:minbytes=1M --design b:maxbytes=64K >u.txt 2>u.err \
    && ok union-exit || bad "union-exit ($(cat u.err))"
[ "$(rows u.txt)" -eq 6 ] && grep -v '^#' u.txt | head -1 | grep -q '^ *1024 *- *- *- ' &&
    grep -v '^#' u.txt | tail -1 | grep -q '^ *4194304 .* - *- *- *-$' && ok union || bad union

# ---- files: all three, atomic, agreeing with the table -----------------------------
"$COLLSIM" compare $RT --json c.json --csv c.csv --svg c.svg >t.txt 2>t.err && ok files-written || bad "files-written ($(cat t.err))"
cmp -s rt.txt t.txt && ok table-same-with-files || bad table-same-with-files
[ "$(grep -c . c.csv)" -eq 29 ] && head -1 c.csv | grep -q '^size,design,producer,collective,nranks,nnodes,printed_size,time_us,algbw,busbw,algo,proto,nchannels,ratio$' \
    && ok csv || bad csv
# the table's bus bandwidth of tree at 512 MiB, from the CSV
want=$(grep -v '^#' rt.txt | tail -1 | awk '{ print $5 }')
got=$(awk -F, '$1 == 536870912 && $2 == "tree" { printf "%.2f", $10 }' c.csv)
[ "$want" = "$got" ] && ok csv-matches || bad "csv-matches ($want vs $got)"
grep -q '"producer": "collsim compare"' c.json && grep -q '"prediction": true' c.json &&
    [ "$(grep -c '"label": ' c.json)" -eq 2 ] && ok json || bad json
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; d=json.load(open("c.json")); sys.exit(len(d["rows"]) != 14 or len(d["verdict"]) < 1)' \
        && ok json-parses || bad json-parses
fi
head -1 c.svg | grep -q '^<?xml' && grep -q '<svg xmlns="http://www.w3.org/2000/svg"' c.svg &&
    [ "$(grep -c 'class="curve"' c.svg)" -eq 4 ] && grep -q 'model: analytic prediction' c.svg && ok svg || bad svg
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout c.svg && ok svg-well-formed || bad svg-well-formed
fi

# ---- the flow model names the busiest link -----------------------------------------
"$COLLSIM" compare --topo dgx-h100 --nodes 16 --nic ib-ndr --fabric fat-tree --model flow -b 64M -e 64M \
    --design full:oversubscription=1 --design 4to1:oversubscription=4 --link-stats >o.txt 2>o.err && ok flow-exit \
    || bad "flow-exit ($(cat o.err))"
grep -q '^#   64 MiB: full wins, .*; busiest link at 64 MiB: full .* at [0-9]*% of .*, 4to1 .*spine.* at [0-9]*% of ' o.txt \
    && ok busiest-link || bad busiest-link
grep -q '^# 4to1     64 MiB: bottleneck: ' o.txt && ok link-stats-lines || bad link-stats-lines

# ---- the analytic model names the busiest link too -------------------------------
# 8 nodes on two leaves, Ring at 1 GiB: at 1:1 a NIC port is the busiest, at
# 8:1 the leaf -> spine links bind (each leaf's ring crossings share one
# uplink of 200 GB/s), and the design's header carries the bottleneck note.
"$COLLSIM" compare --topo dgx-h100 --nodes 8 --nic ib-ndr --fabric fat-tree --env NCCL_ALGO=Ring -b 1G -e 1G \
    --design full:oversubscription=1 --design 8to1:oversubscription=8 >a.txt 2>a.err && [ ! -s a.err ] && ok analytic-exit \
    || bad "analytic-exit ($(cat a.err))"
grep -q '^#   1 GiB: full wins, [0-9.]*x faster than 8to1 (both Ring/Simple); busiest link at 1 GiB: full \(n[0-9]*.nic[0-9]* -> leaf[01]\|leaf[01] -> n[0-9]*.nic[0-9]*\) (net) at [0-9]*% of 50.0 GB/s, 8to1 leaf0 -> spine0 (net) at 100% of 200.0 GB/s$' a.txt \
    && ok analytic-busiest-link || bad "analytic-busiest-link ($(grep '^#   1 GiB' a.txt))"
grep -q '^#   8to1: bottleneck for 1 GiB: leaf[01] -> spine0 (net), .*fabric 8:1 oversubscribed$' a.txt && ! grep -q '^#   full: bottleneck' a.txt \
    && ok analytic-note-in-header || bad analytic-note-in-header
grep -q 'busiest links: named for' a.txt && bad analytic-no-missing-stats-line || ok analytic-no-missing-stats-line

# ---- three designs: the verdict names every one ---------------------------------------
# the third is neither winner nor runner-up at any size, and its time over
# the winner's (recomputed here from the table) is in each verdict line
"$COLLSIM" compare --topo dgx-h100 --nodes 16 --nic roce-400g --fabric fat-tree -b 1G -e 1G \
    --design a:oversubscription=1 --design b:oversubscription=2 --design c:oversubscription=4 >three.txt 2>/dev/null
want=$(grep -v '^#' three.txt | awk '{ printf "%.2f", $10 / $3 }')
grep -q "^#   1 GiB: a wins, [0-9.]*x faster than b (both [A-Za-z]*/Simple); c ${want}x slower; busiest link" three.txt \
    && ok verdict-third-design || bad "verdict-third-design ($want: $(grep '^#   1 GiB' three.txt))"

# ---- bad input: one line, exit 2, nothing written ----------------------------------
check() {  # name, expected stderr (exact), args...
    name=$1 want=$2
    shift 2
    rm -f x.json
    "$COLLSIM" compare "$@" --json x.json >x.out 2>x.err
    rc=$?
    if [ $rc -eq 2 ] && [ "$(cat x.err)" = "$want" ] && [ ! -s x.out ] && [ ! -e x.json ]; then ok "$name"
    else bad "$name (exit $rc: $(cat x.err))"; fi
}
check one-design "collsim: compare: 1 design given; expected two or more (scenario files, or --design LABEL:KEY=VALUE variants of one scenario)" \
    "$S/default.ini"
check no-label "collsim: --design: 'x' is not a design; expected LABEL:KEY=VALUE[,KEY=VALUE...] (e.g. ring:NCCL_ALGO=Ring)" \
    --topo dgx-h100 --design x --design y:NCCL_ALGO=Ring
check bad-key "collsim: --design x: topology.nodez: unknown key 'nodez' in [topology]; expected one of topology.file, topology.preset, topology.gpu, topology.gpus, topology.sockets, topology.cpu, topology.p2p, topology.nodes, topology.nic, topology.nics-per-node, topology.fabric, topology.oversubscription, topology.nvlink-bridge, topology.visible-gpus" \
    --topo dgx-h100 --design x:topology.nodez=2 --design y:NCCL_ALGO=Ring
check bad-value "collsim: --design x: nodes: 'abc' is not a whole number; expected a number of nodes from 1 to 65536" \
    --topo dgx-h100 --design x:nodes=abc --design y:NCCL_ALGO=Ring
check output-key "collsim: --design x: output.json: 'output.json' cannot be varied; expected a key of [scenario], [topology], [collective], [fabric] or [nccl]" \
    --topo dgx-h100 --design x:output.json=a --design y:NCCL_ALGO=Ring
check two-collectives "collsim: compare: design x runs allgather and design y allreduce; expected one collective for all (--op sets it for every design)" \
    --topo dgx-h100 --design x:op=allgather --design y:NCCL_ALGO=Ring
check key-twice "collsim: --design x: topology.nodes is set twice; expected each key once in a design" \
    --topo dgx-h100 --design x:nodes=2,nodes=3 --design y:NCCL_ALGO=Ring
check same-label "collsim: --design x: the label is used twice; expected one label per design" \
    --topo dgx-h100 --design x:NCCL_ALGO=Tree --design x:NCCL_ALGO=Ring
check files-and-designs "collsim: --design: variants apply to one base scenario; expected one scenario file with --design, or several files without" \
    "$S/default.ini" "$S/dgx-h100.ini" --design x:NCCL_ALGO=Tree
check trace "collsim: --trace: compare runs several designs; expected collsim run --trace for one" \
    --topo dgx-h100 --model flow --trace t.json --design x:NCCL_ALGO=Tree --design y:NCCL_ALGO=Ring
# a value with commas stays one setting
"$COLLSIM" compare --topo dgx-h100 --dump --design 'h:NCCL_IB_HCA=mlx5_0,mlx5_1,NCCL_ALGO=Ring' --design r:NCCL_ALGO=Ring \
    >d.txt 2>d.err && grep -qx 'NCCL_IB_HCA=mlx5_0,mlx5_1' d.txt && ok comma-value || bad "comma-value ($(cat d.err))"

# -t applies to every design alike (building a design leaves the flags as parsed)
"$COLLSIM" compare --topo dgx-h100 -g 2 -t 2 -b 1M -e 1M --design a:NCCL_ALGO=Ring --design b:NCCL_ALGO=Ring \
    --design c:NCCL_ALGO=Ring >t2.txt 2>t2.err
[ "$(grep -c '^# design [abc]: .*: 2 ranks on 1 node' t2.txt)" -eq 3 ] && ok threads-every-design \
    || bad "threads-every-design ($(grep '^# design' t2.txt; cat t2.err))"


# what nccl-tests would do that a prediction does not see is said per
# design, as run says it: buffers that do not fit the GPU, calls grouped by -m
"$COLLSIM" compare --topo dgx-h100 -b 32G -e 32G -m 2 --design a:NCCL_ALGO=Ring --design b:NCCL_ALGO=Tree \
    >wm.txt 2>wm.err
[ "$(grep -c '^#   [ab]: warning: nccl-tests allocates .*up to 3 x 32 GiB do not fit the 80 GiB' wm.txt)" -eq 2 ] &&
    [ "$(grep -c '^#   [ab]: warning: agg-iters 2 (-m)' wm.txt)" -eq 2 ] && ok sweep-warnings-every-design \
    || bad "sweep-warnings-every-design ($(grep '^#' wm.txt; cat wm.err))"
"$COLLSIM" compare --topo dgx-h100 -b 16G -e 16G --design a:NCCL_ALGO=Ring --design b:NCCL_ALGO=Tree >wf.txt 2>&1 &&
    ! grep -q 'do not fit\|agg-iters' wf.txt && ok sweep-warnings-only-when-due || bad sweep-warnings-only-when-due

# a design the model refuses is named, as sweep names its point
check design-named "collsim: --oversubscription: 2 does not apply: the rail fabric of 16 nodes is one leaf per rail, with no spine (traffic between rails stays inside the nodes); expected it from 33 nodes up, or --fabric fat-tree, or none (design b)" \
    --topo dgx-h100 --oversubscription 2 --design a:nodes=64 --design b:nodes=16

exit $fail
