#!/bin/sh
# collsim run end to end: the table's frame and arithmetic, flags over a
# scenario, the NCCL variable order, JSON/CSV, determinism, and every
# example scenario. Values are checked against nccl-tests's formulas
# (algbw = size/time, busbw = algbw * 2(n-1)/n for all-reduce), not against
# collsim's own output.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"

cd "$tmp" || exit 1
# data rows: lines that do not start with '#'
rows() { grep -v '^#' "$1" | grep -c .; }

# ---- the command ------------------------------------------------------------
[ "$("$COLLSIM" --version)" = "collsim 0.1.0" ] && ok version || bad version
"$COLLSIM" --help >help.txt && grep -q '^  run ' help.txt && grep -q '^  topo ' help.txt &&
    grep -q '^  validate ' help.txt && ok help || bad help
"$COLLSIM" run --help >rhelp.txt && grep -q -- '--minbytes' rhelp.txt && grep -q -- '--topo' rhelp.txt \
    && ok run-help || bad run-help

# ---- one DGX H100 sweep -----------------------------------------------------
if "$COLLSIM" run --topo dgx-h100 -b 8 -e 128M -f 2 >a.txt 2>a.err; then ok run-exit; else bad run-exit; fi
[ -s a.err ] && bad "run-stderr ($(cat a.err))" || ok run-stderr
head -1 a.txt | grep -q '^# collsim 0.1.0 prediction (model: analytic) — not a measurement$' && ok first-line || bad first-line
sed -n 2p a.txt | grep -q '^# Collective test starting: all_reduce_perf$' && ok test-name || bad test-name
grep -q '^# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 0 graph: 0 unalign: 0$' a.txt \
    && ok nthread-line || bad nthread-line
[ "$(grep -c '^#  Rank ' a.txt)" -eq 8 ] && ok ranks || bad ranks
# one process per GPU unless the scenario says otherwise (issue 12 item 2)
grep -q '^# nccl-tests command: mpirun -np 8 -N 8 all_reduce_perf -b 8 -e 128M -f 2 -g 1$' a.txt && ok nccl-tests-command || bad nccl-tests-command
"$COLLSIM" run --topo dgx-h100 -b 8 -e 8 --procs-per-node 1 >a1.txt &&
    grep -q '^# nccl-tests command: all_reduce_perf -b 8 -e 8 -i 1M -g 8$' a1.txt && ok nccl-tests-command-g8 || bad nccl-tests-command-g8
# -t is threads per process, flag and key alike: the node's GPUs stay 8 (issue 12)
"$COLLSIM" run --topo dgx-h100 -b 8 -e 8 -t 2 >a2.txt && [ "$(grep -c '^#  Rank ' a2.txt)" -eq 8 ] &&
    grep -q '^# nccl-tests command: all_reduce_perf -b 8 -e 8 -i 1M -g 4 -t 2$' a2.txt && ok nccl-tests-command-t2 || bad nccl-tests-command-t2
printf '[topology]\npreset = dgx-h100\n[collective]\nnthreads = 2\nminbytes = 8\nmaxbytes = 8\n' >t2.ini
"$COLLSIM" run t2.ini >a3.txt && grep -q '^# nccl-tests command: all_reduce_perf -b 8 -e 8 -i 1M -g 4 -t 2$' a3.txt &&
    grep -v '^# scenario' a2.txt >a2.body && grep -v '^# scenario' a3.txt >a3.body && cmp -s a2.body a3.body &&
    ok threads-flag-is-key || bad threads-flag-is-key
"$COLLSIM" run --topo dgx-h100 -b 8 -e 8 -t 3 >a4.txt 2>a4.err; [ $? -eq 2 ] && grep -q 'nthreads\|-t' a4.err && ok threads-not-dividing || bad "threads-not-dividing ($(cat a4.err))"
"$COLLSIM" run --topo dgx-h100 -b 8 -e 8 --procs-per-node 2 -t 2 >a5.txt &&
    grep -q 'mpirun -np 2 -N 2 all_reduce_perf -b 8 -e 8 -i 1M -g 2 -t 2$' a5.txt && ok procs-and-threads || bad procs-and-threads
grep -q '^# transports: P2P/NVL' a.txt && ok transports || bad transports
[ "$(rows a.txt)" -eq 25 ] && ok row-count || bad row-count
grep -q '^# Out of bounds values : N/A$' a.txt && ok oob || bad oob
grep -q '^# Avg bus bandwidth    : [0-9.e+]* $' a.txt && ok avg || bad avg
[ "$(tail -1 a.txt)" = "#" ] && ok last-line || bad last-line
# every row: sizes 8..128M doubling, count = size/4, float sum -1, N/A, and
# nccl-tests's bandwidth arithmetic within the printed precision
grep -v '^#' a.txt | awk -v want=8 '
    { if ($1 != want || $2 != $1 / 4 || $3 != "float" || $4 != "sum" || $5 != -1) { print "row: " $0; bad = 1 }
      for (p = 0; p < 2; p++) {
          t = $(6 + 4 * p); a = $(7 + 4 * p); b = $(8 + 4 * p); w = $(9 + 4 * p)
          if (w != "N/A" || t <= 0) { print "placement: " $0; bad = 1 }
          alg = $1 / t / 1e3
          if (alg - a > 0.006 + alg * 1e-3 || a - alg > 0.006 + alg * 1e-3) { print "algbw: " $0; bad = 1 }
          if (b - a * 1.75 > 0.02 + b * 1e-3 || a * 1.75 - b > 0.02 + b * 1e-3) { print "busbw: " $0; bad = 1 }
      }
      if (NF < 17) { print "extra columns: " $0; bad = 1 }
      want *= 2 }
    END { exit bad }' && ok row-arithmetic || bad row-arithmetic
# the average is over both placements of every row (nccl-tests)
avg=$(awk '/^# Avg bus bandwidth/ { print $6 }' a.txt)
grep -v '^#' a.txt | awk -v avg="$avg" '{ s += $8 + $12; n += 2 }
    END { m = s / n; d = m - avg; if (d < 0) d = -d; exit !(d <= 0.01 + 1e-3 * avg) }' \
    && ok avg-value || bad "avg-value ($avg)"

# ---- determinism -------------------------------------------------------------
"$COLLSIM" run --topo dgx-h100 -b 8 -e 128M -f 2 >b.txt 2>/dev/null
cmp -s a.txt b.txt && ok deterministic || bad deterministic

# ---- columns, collectives, shapes ----------------------------------------------
"$COLLSIM" run --topo dgx-h100 -b 1M -e 1M --no-extra-columns >c.txt &&
    grep -q '^#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong $' c.txt &&
    [ "$(grep -v '^#' c.txt | awk '{ print NF }')" -eq 13 ] && ok no-extra-columns || bad no-extra-columns
# switches take an optional truth value (--exact=false); a negative switch none
"$COLLSIM" run --topo dgx-h100 --exact=false --dump 2>/dev/null | grep -qx 'exact=false' &&
    "$COLLSIM" run --topo dgx-h100 --exact --dump 2>/dev/null | grep -qx 'exact=true' && ok switch-value || bad switch-value
"$COLLSIM" run --topo dgx-h100 --exact=maybe >sv.out 2>sv.err
[ $? -eq 2 ] && [ ! -s sv.out ] && [ "$(cat sv.err)" = "collsim: --exact: 'maybe' is not a truth value; expected true or false" ] \
    && ok switch-bad-value || bad "switch-bad-value ($(cat sv.err))"
"$COLLSIM" run --topo dgx-h100 --no-extra-columns=true >sv.out 2>sv.err
[ $? -eq 2 ] && [ "$(cat sv.err)" = "collsim: --no-extra-columns: takes no value; expected --no-extra-columns alone" ] \
    && ok negative-switch-value || bad "negative-switch-value ($(cat sv.err))"
"$COLLSIM" run --topo dgx-h100 -b 1M -e 1M >c2.txt &&
    grep -q '#wrong           algo   proto   nch  transport$' c2.txt && ok extra-header || bad extra-header

"$COLLSIM" run --topo dgx-h100 --op allgather -b 1M -e 1M >g.txt &&
    grep -v '^#' g.txt | awk '{ exit !($1 == 1048576 && $2 == 32768 && $4 == "none" && $5 == -1) }' &&
    grep -q 'starting: all_gather_perf$' g.txt && ok allgather-row || bad allgather-row
"$COLLSIM" run --topo dgx-h100 --op broadcast -r 3 -d half -b 64K -e 64K >r.txt &&
    grep -v '^#' r.txt | awk '{ exit !($2 == 32768 && $3 == "half" && $4 == "none" && $5 == 3) }' &&
    grep -q 'broadcast_perf -b 64K -e 64K -i 1M -g 1 -d half -r 3$' r.txt && ok broadcast-row || bad broadcast-row

"$COLLSIM" run --topo dgx-h100 -g 4 -b 1M -e 1M >g4.txt && [ "$(grep -c '^#  Rank ' g4.txt)" -eq 4 ] &&
    grep -q 'nGpus 1 ' g4.txt && grep -q 'mpirun -np 4 -N 4 all_reduce_perf .*-g 1' g4.txt && ok gpus-4 || bad gpus-4
"$COLLSIM" run --topo dgx-h100 -t 2 -g 2 -b 1M -e 1M >t.txt && [ "$(grep -c '^#  Rank ' t.txt)" -eq 2 ] \
    && ok threads-keep-gpus || bad threads-keep-gpus
"$COLLSIM" run --topo dgx-h100 --nodes 2 -b 1M -e 1M >n2.txt && [ "$(grep -c '^#  Rank ' n2.txt)" -eq 16 ] &&
    grep -q '^# nThread 1 nGpus 1 ' n2.txt &&
    grep -q '^#  Rank 15 Group  0 Pid      - on      node1 device  7 \[----:--:--\] ' n2.txt &&
    grep -q '^# nccl-tests command: mpirun -np 16 -N 8 all_reduce_perf -b 1M -e 1M -i 1M -g 1$' n2.txt \
    && ok two-nodes || bad two-nodes
"$COLLSIM" run --topo dgx-h100 --nodes 16 -b 1M -e 1M >n16.txt && [ "$(grep -c '^#  Rank ' n16.txt)" -eq 8 ] &&
    grep -q '^# \.\.\. 120 more ranks$' n16.txt && ok many-ranks || bad many-ranks

# ---- scenario, flags and the NCCL variable order ---------------------------------
cat >s.ini <<EOF
[scenario]
name = order test
[topology]
preset = dgx-h100
[collective]
minbytes = 1K
maxbytes = 1M
stepfactor = 4
[nccl]
NCCL_ALGO = Tree
NCCL_PROTO = LL
NCCL_MAX_NCHANNELS = 4
EOF
NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=8 "$COLLSIM" run s.ini -e 4K --env NCCL_MAX_NCHANNELS=2 --dump >d.ini
grep -q '^maxbytes=4K$' d.ini && grep -q '^minbytes=1K$' d.ini && ok flag-over-file || bad flag-over-file
grep -q '^NCCL_ALGO=Tree$' d.ini && ok file-env || bad file-env
grep -q '^NCCL_PROTO=Simple$' d.ini && ok environment-over-file || bad environment-over-file
grep -q '^NCCL_MAX_NCHANNELS=2$' d.ini && ok env-flag-wins || bad env-flag-wins
# the dump is itself a scenario giving the same run
"$COLLSIM" run d.ini >d1.txt && NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=8 "$COLLSIM" run s.ini -e 4K \
    --env NCCL_MAX_NCHANNELS=2 >d2.txt && cmp -s d1.txt d2.txt && ok dump-round-trip || bad dump-round-trip
grep -q '^# Source: order test$' d1.txt && ok source-name || bad source-name

# ---- warnings ---------------------------------------------------------------------
"$COLLSIM" run --topo dgx-h100 -b 1M -e 1M --env NCCL_TIMEOUT=100 >w.txt 2>w.err &&
    grep -q '^collsim: warning: NCCL_TIMEOUT (--env): ' w.err && grep -q '^# warning: NCCL_TIMEOUT (--env): ' w.txt \
    && ok warning || bad warning

# ---- JSON and CSV -------------------------------------------------------------------
"$COLLSIM" run --topo dgx-h100 -b 8 -e 128M -f 2 --json out.json --csv out.csv >j.txt 2>/dev/null
cmp -s a.txt j.txt && ok files-same-table || bad files-same-table
[ "$(wc -l <out.csv)" -eq 26 ] && head -1 out.csv | grep -q '^producer,collective,nranks,' && ok csv || bad csv
if command -v python3 >/dev/null 2>&1; then
    python3 - out.json a.txt <<'EOF' && ok json || bad json
import json, sys
j = json.load(open(sys.argv[1]))
rows = [l.split() for l in open(sys.argv[2]) if not l.startswith('#')]
assert j["producer"] == "model:analytic" and j["collective"] == "allreduce" and j["nranks"] == 8
assert len(j["rows"]) == len(rows) == 25
for r, t in zip(j["rows"], rows):
    assert r["size"] == int(t[0]) and r["count"] == int(t[1])
    assert abs(r["out_of_place"]["busbw"] - float(t[7])) <= 0.006 + 1e-3 * float(t[7])
    assert r["out_of_place"]["wrong"] is None and r["algo"] == t[13]
EOF
else
    grep -q '"producer": "model:analytic"' out.json && ok json-grep || bad json-grep
fi

# ---- --svg: the sweep plotted, with the other files, all or none ------------------
"$COLLSIM" run --topo dgx-h100 -b 8 -e 128M -f 2 --json p.json --svg p.svg >p.txt 2>p.err && ok svg-exit \
    || bad "svg-exit ($(cat p.err))"
cmp -s a.txt p.txt && ok svg-same-table || bad svg-same-table
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout p.svg 2>/dev/null && ok svg-well-formed || bad svg-well-formed
    # the bandwidth and time curves: one path each, and the title names the collective
    [ "$(xmllint --xpath 'count(//*[local-name()="path"])' p.svg 2>/dev/null)" -ge 2 ] &&
        xmllint --xpath 'string(//*[local-name()="title"])' p.svg | grep -q '^allreduce: DGX H100' \
        && ok svg-curve || bad "svg-curve ($(grep -c '<path' p.svg) paths)"
else
    grep -q '<path' p.svg && ok svg-path || bad svg-path
fi
grep -q 'model: analytic prediction, not a measurement (collsim 0.1.0 run)' p.svg && ok svg-caption || bad svg-caption
printf '[topology]\npreset = dgx-h100\n[collective]\nminbytes = 1M\nmaxbytes = 1M\n[output]\nsvg = key.svg\n' >svgkey.ini
"$COLLSIM" run svgkey.ini >/dev/null 2>&1 && [ -s key.svg ] && ok svg-key || bad svg-key
"$COLLSIM" run svgkey.ini --dump | grep -qx 'svg=key.svg' && ok svg-dump || bad svg-dump
# a run that fails writes none of its files
rm -f p.svg
"$COLLSIM" run --topo dgx-h100 --svg p.svg --json /nonexistent/x.json >/dev/null 2>f.err
[ $? -eq 2 ] && [ ! -e p.svg ] && [ "$(wc -l <f.err)" -eq 1 ] && ok svg-not-on-failure || bad "svg-not-on-failure ($(cat f.err))"
"$COLLSIM" run --topo dgx-h100 --svg p.svg --model bogus >/dev/null 2>&1
[ $? -eq 2 ] && [ ! -e p.svg ] && ok svg-not-on-bad-input || bad svg-not-on-bad-input
# several jobs: no sweep to plot, refused in one line
"$COLLSIM" run "$top_srcdir/scenarios/two-jobs-spine.ini" --svg jobs.svg >jobs.txt 2>jobs.err
[ $? -eq 2 ] && [ ! -e jobs.svg ] && [ ! -s jobs.txt ] && [ "$(wc -l <jobs.err)" -eq 1 ] &&
    grep -q '^collsim: --svg: \[job [a-z0-9]*\] (.*two-jobs-spine.ini:[0-9]*) makes this a run of several jobs' jobs.err \
    && ok svg-jobs-refused || bad "svg-jobs-refused ($(cat jobs.err))"
# interrupted: the rows so far stay, no file is written
if env --default-signal=INT true 2>/dev/null; then
    : >i.txt
    env --default-signal=INT "$COLLSIM" run --topo dgx-h100 --nodes 256 --model flow --env NCCL_ALGO=Ring \
        -b 1M -e 16G -f 2 --svg i.svg --csv i.csv >i.txt 2>i.err &
    pid=$!
    n=0
    while [ "$(grep -vc '^#' i.txt)" -lt 2 ] && kill -0 "$pid" 2>/dev/null && [ $n -lt 600 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill -INT "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    [ "$rc" -eq 130 ] && [ ! -e i.svg ] && [ ! -e i.csv ] && [ -z "$(ls -A | grep '^i\.\(svg\|csv\)')" ] \
        && ok svg-not-on-interrupt || bad "svg-not-on-interrupt (exit $rc: $(tail -1 i.err); $(ls -A | grep '^i\.'))"
fi

# ---- the NICs a node has and those NCCL uses say one thing -----------------
# (issue #9: 16 NICs in the header, "8 NICs" in the transports)
"$COLLSIM" run --topo dgx-h100 --nodes 2 --nics-per-node 16 -b 1G -e 1G >n16.txt 2>&1
grep -q '^# Topology: .*16x ib-ndr per node' n16.txt && grep -q '^# transports: .*NET/IB GDR inter ([0-9]* of 16 NICs: ' n16.txt \
    && ok nics-of-node || bad "nics-of-node: $(grep -E 'Topology|transports' n16.txt)"
"$COLLSIM" run --topo dgx-h100 --nodes 2 -b 1G -e 1G >n8.txt 2>&1
grep -q '^# transports: .*NET/IB GDR inter (8 NICs: ' n8.txt && ok nics-all-used || bad "nics-all-used: $(grep transports n8.txt)"

# ---- NCCL's fallbacks are in the header, as NCCL logs them -----------------
"$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_IB_HCA=mlx5_9 -b 1G -e 1G >hca.txt 2>hca.err
grep -q '^# warning: NCCL_IB_HCA=mlx5_9 (--env) matches none of node 0.s RDMA devices (mlx5_0, .*NCCL logs "NET/IB : No device found." (net_ib.cc) and falls back to TCP sockets' hca.txt &&
    grep -q '^# transports: .*NET/Socket' hca.txt && grep -q '^collsim: warning: NCCL_IB_HCA=mlx5_9' hca.err \
    && ok hca-fallback-warns || bad "hca-fallback-warns: $(grep warning hca.txt)"
# a list that keeps some of the node's NICs but names others it lacks (written
# for another host): said, with what is kept; a list that matches all is not
"$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_IB_HCA=mlx5_4,mlx5_7,mlx5_13 -b 1G -e 1G >hcap.txt 2>hcap.err
grep -q '^# warning: NCCL_IB_HCA=mlx5_4,mlx5_7,mlx5_13 (--env): mlx5_13 matches none of node 0.s RDMA devices (mlx5_0, .*NCCL keeps the 2 that the list matches (mlx5_4, mlx5_7)' hcap.txt &&
    grep -q '^# transports: .*NET/IB GDR inter (2 of 8 NICs' hcap.txt && grep -q '^collsim: warning: NCCL_IB_HCA=' hcap.err &&
    "$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_IB_HCA=mlx5_0,mlx5_7 -b 1G -e 1G >hcaq.txt 2>&1 &&
    ! grep -q 'match none' hcaq.txt &&
    "$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_12:1 \
        -b 1G -e 1G >hcas.txt 2>&1 && ! grep -q 'match' hcas.txt &&
    ok hca-partial-warns || bad "hca-partial-warns: $(grep warning hcap.txt hcaq.txt hcas.txt)"
"$COLLSIM" run --topo dgx-h100 --nodes 2 --nic roce-400g --env NCCL_IB_GID_INDEX=99 -b 1G -e 1G >gid.txt 2>/dev/null
grep -q '^# warning: NCCL_IB_GID_INDEX=99 (--env) is beyond the GIDs of a RoCE port' gid.txt \
    && ok gid-index-warns || bad "gid-index-warns: $(grep warning gid.txt)"

# ---- --link-stats with the analytic model: the loads it priced ------------------
# 8 nodes on two leaves at 8:1, Ring, 1 GiB: every channel's ring leaves each
# leaf once, so the single spine's links carry 2(n-1)/n S each and bind (a
# NIC port carries an eighth of a node's share on a quarter of the uplink's
# capacity, at 8:1 half of the uplink's time).
LS="--topo dgx-h100 --nodes 8 --nic ib-ndr --fabric fat-tree --oversubscription 8 -b 1G -e 1G --env NCCL_ALGO=Ring --link-stats"
"$COLLSIM" run $LS >ls-a.txt 2>ls-a.err && [ ! -s ls-a.err ] && ok analytic-link-stats-exit \
    || bad "analytic-link-stats-exit ($(cat ls-a.err))"
grep -q '^# Link statistics (model:analytic, the network links.* loads in closed form, not a simulation, allreduce 1 GiB, the largest size, [0-9.]* us):$' ls-a.txt \
    && ok analytic-link-stats-title || bad analytic-link-stats-title
grep -q '^# bottleneck for 1 GiB: leaf[01] -> spine0 (net), loaded 2.00x the busiest NIC port, fabric 8:1 oversubscribed$' ls-a.txt \
    && ok analytic-bottleneck-note || bad "analytic-bottleneck-note ($(grep '^# bottleneck' ls-a.txt))"
# util% = carried / (cap x the predicted time): the table's time, recomputed here
t_us=$(grep -v '^#' ls-a.txt | awk '{ print $6 }')
grep '^# *[0-9.]* *[0-9.]* *[0-9.]* *[0-9.]* [KMG]iB  ' ls-a.txt | head -1 | awk -v t="$t_us" '
    { u = $2; cap = $4; v = $5; unit = $6
      b = v * (unit == "GiB" ? 2^30 : unit == "MiB" ? 2^20 : 2^10)
      want = 100 * b / (cap * 1e9 * t * 1e-6); d = u - want; if (d < 0) d = -d; exit d > 0.2 }' \
    && ok analytic-link-stats-util || bad analytic-link-stats-util
# the busiest links are the same links as the flow model's, carrying the same bytes
"$COLLSIM" run $LS --model flow >ls-f.txt 2>/dev/null
busiest() { sed -n '/^# Link statistics/,$p' "$1" | grep '^# *[0-9.]* .* (net)$' | head -4 | awk '{ $1 = $2 = $3 = ""; print }'; }
[ -n "$(busiest ls-a.txt)" ] && [ "$(busiest ls-a.txt)" = "$(busiest ls-f.txt)" ] && busiest ls-a.txt | grep -q 'spine0' \
    && ok analytic-flow-same-busiest || bad "analytic-flow-same-busiest ($(busiest ls-a.txt) / $(busiest ls-f.txt))"
sed -n '/^# Link statistics/,$p' ls-a.txt | grep -q '^# bottleneck: leaf0 -> spine0 (net) (' &&
    sed -n '/^# Link statistics/,$p' ls-f.txt | grep -q '^# bottleneck: leaf0 -> spine0 (net) (' \
    && ok analytic-flow-same-bottleneck || bad analytic-flow-same-bottleneck
# at 1:1 the NIC ports bind: no note (a port at its line rate is expected)
"$COLLSIM" run --topo dgx-h100 --nodes 8 --nic ib-ndr --fabric fat-tree -b 1G -e 1G --env NCCL_ALGO=Ring >ls-1.txt 2>&1
grep -q '^# bottleneck for' ls-1.txt && bad "analytic-no-note-at-1:1 ($(grep '^# bottleneck' ls-1.txt))" || ok analytic-no-note-at-1:1
# on one node no network link is loaded: the bound term inside the node is
# named (the NVLS copy rounds at 1 GiB on 8 B200, the model's own words),
# and a latency-bound size says so instead of naming a term it barely uses
"$COLLSIM" run --topo dgx-b200 -b 8 -e 1G -f 8 --link-stats >ls-n.txt 2>/dev/null
grep -q '^#        8 B bottleneck: latency (the largest rate term, channel throughput (1 channel, chan.ll.sm100), takes [0-9.]*% of the call); no network link carried data$' ls-n.txt \
    && grep -q '^#      1 GiB bottleneck: NVLS copy warps: .*(lat.nvls.round.sm100) ([5-9][0-9]\.[0-9]% busy); no network link carried data$' ls-n.txt \
    && ! grep -q 'bottleneck: none' ls-n.txt \
    && ok analytic-one-node-bound || bad "analytic-one-node-bound ($(grep bottleneck ls-n.txt))"
# across nodes, a bound inside the node comes first, then the busiest network link
"$COLLSIM" run --topo dgx-h100 --nodes 2 -b 128M -e 128M --link-stats >ls-2.txt 2>/dev/null
grep -q '^#    128 MiB bottleneck: NVLink ports at the NVLS rate (eff.nvls.sm90) ([0-9.]*% busy); the busiest network link: n[01]\.nic[0-7] -> rail[0-7]\.leaf0 (net) ([0-9.]*% busy)$' ls-2.txt \
    && ok analytic-intra-bound-then-link || bad "analytic-intra-bound-then-link ($(grep bottleneck ls-2.txt))"
# --alternatives: what NCCL's tuner passed over, priced by the same model.
# 4 x DGX A100 on 25 GbE: NCCL's tuner takes Tree at 8 MiB, which the
# model prices at 3.3x Ring; the note says so, the row keeps NCCL's pick,
# and its share is the one NCCL_ALGO=Ring's own row gives
ALT="--topo dgx-a100 --nodes 4 --nic eth-25g -b 8M -e 8M"
"$COLLSIM" run $ALT --alternatives >alt.txt 2>alt.err
"$COLLSIM" run $ALT --env NCCL_ALGO=Ring >alt-ring.txt 2>/dev/null
t_pick=$(grep '^ *8388608 ' alt.txt | awk '$14 == "Tree" { print $6 }')
t_ring=$(grep '^ *8388608 ' alt-ring.txt | awk '$14 == "Ring" { print $6 }')
less=$(sed -n 's/^# algorithm for 8 MiB: NCCL.s tuner picks Tree Simple by its own cost model, and Ring Simple, priced by this model, takes \([0-9]*\)% less time (NCCL_ALGO=Ring runs it); the rows price NCCL.s pick$/\1/p' alt.txt)
[ -n "$t_pick" ] && [ -n "$t_ring" ] && [ -n "$less" ] && [ ! -s alt.err ] &&
    awk -v p="$t_pick" -v r="$t_ring" -v l="$less" 'BEGIN { d = 100 * (1 - r / p) - l; exit !(d > -0.6 && d < 0.6) }' \
    && ok alternatives-note || bad "alternatives-note (pick $t_pick, Ring $t_ring, note $less%: $(grep 'algorithm for' alt.txt) $(cat alt.err))"
# every note's variables run the pair it names, at the first size of its range
"$COLLSIM" run --topo dgx-a100 --nodes 4 --nic eth-25g -b 8 -e 8G -f 2 --alternatives >alt-all.txt 2>/dev/null
good=0 notes=0
while read -r size unit algo proto vars; do
    notes=$((notes + 1))
    envs=""; for v in $vars; do envs="$envs --env $v"; done
    got=$("$COLLSIM" run --topo dgx-a100 --nodes 4 --nic eth-25g -b "$size$unit" -e "$size$unit" $envs 2>/dev/null | grep -v '^#' | awk '{ print $14, $15 }')
    [ "$got" = "$algo $proto" ] && good=$((good + 1)) || echo "note at $size $unit: $vars runs $got, not $algo $proto"
done <<EOF2
$(sed -n 's/^# algorithm for \([0-9]*\) \([KMG]\)iB.*, and \([A-Za-z]*\) \([A-Za-z0-9]*\), priced by this model, takes .* less time (\(.*\) runs it); the rows price NCCL.s pick$/\1 \2 \3 \4 \5/p' alt-all.txt)
EOF2
[ "$notes" -ge 3 ] && [ "$good" -eq "$notes" ] && ok alternatives-variables-run-it || bad "alternatives-variables-run-it ($good of $notes)"
"$COLLSIM" run $ALT >alt-off.txt 2>/dev/null && ! grep -q '^# algorithm for' alt-off.txt \
    && ok alternatives-off-by-default || bad alternatives-off-by-default
"$COLLSIM" run $ALT --alternatives --model flow >alt-f.txt 2>alt-f.err
[ $? -eq 2 ] && [ ! -s alt-f.txt ] && [ "$(cat alt-f.err)" = "collsim: --alternatives: only a closed-form engine prices what NCCL passed over at each size; expected --model analytic" ] \
    && ok alternatives-flow-refused || bad "alternatives-flow-refused ($(cat alt-f.err))"
# NCCL's rings between rails of a rail fabric without a spine (P2P off
# splits each DGX into two graph nodes, whose NICs sit on other rails than
# the next node's): no route, said as such, not "no link carried data";
# the flow engine refuses the run with the same words
"$COLLSIM" run --topo dgx-h100 --nodes 2 -b 1G -e 1G --env NCCL_P2P_DISABLE=1 --link-stats >ls-u.txt 2>/dev/null
grep -q '^# bottleneck: NIC rate .*; no network link is listed: the network edges of this call were not routed: n0.gpu4 -> n1.gpu0: channel 0 leaves n0.nic4 and enters n1.nic0, and the fabric has no route between them (a rail fabric' ls-u.txt \
    && ! grep -q 'no link carried data' ls-u.txt && ! grep '^# bottleneck:' ls-u.txt | grep -q 'expected' \
    && ok analytic-unrouted-said || bad "analytic-unrouted-said ($(grep bottleneck ls-u.txt))"
"$COLLSIM" run --topo dgx-h100 --nodes 2 -b 64M -e 64M --env NCCL_P2P_DISABLE=1 --model flow >ls-uf.txt 2>ls-uf.err
[ $? -eq 2 ] && [ ! -s ls-uf.txt ] && grep -q 'expected a fabric that joins them (--fabric fat-tree)' ls-uf.err \
    && ok flow-unrouted-refused || bad "flow-unrouted-refused ($(cat ls-uf.err))"
# point-to-point across nodes: the model lists no link loads for them, and
# says so rather than "no link carried data"
"$COLLSIM" run --topo dgx-h100 --nodes 2 --op alltoall -b 1G -e 1G --link-stats >ls-p.txt 2>/dev/null
grep -q '^#      1 GiB bottleneck: NIC rate (each GPU.s sends to other nodes through its own NICs, [0-9.]* GB/s) ([0-9.]*% busy); the model lists no link loads of point-to-point calls$' ls-p.txt \
    && ! grep -q 'no link carried data' ls-p.txt \
    && ok analytic-p2p-bound-unlisted || bad "analytic-p2p-bound-unlisted ($(grep bottleneck ls-p.txt))"
# still refused where the model has no timeline: --trace
"$COLLSIM" run --topo dgx-h100 --trace t.json >tr.out 2>tr.err
[ $? -eq 2 ] && [ "$(cat tr.err)" = "collsim: --trace: the analytic model has no timeline for a trace; expected --model flow or packet" ] \
    && ok analytic-trace-refused || bad "analytic-trace-refused ($(cat tr.err))"

# ---- the pcie preset's CPU (--cpu) ---------------------------------------------------
# On an AMD host NCCL's search refuses SYS paths inside a node (search.cc)
# and falls back to the simple order at bw 0.1, as the RTX PRO Turin logs
# print it; its tuner then picks by latency, so 8 GPUs on two sockets run
# Simple from a few KiB where the Intel part keeps LL (the 8 x RTX 5090
# Turin server of the validation set steps at 4 KiB).
P5090="--topo pcie --gpu rtx5090 --gpus 8 --sockets 2 --p2p on --env NCCL_P2P_LEVEL=SYS"
"$COLLSIM" run $P5090 -b 64K -e 64K >cpu-intel.txt 2>&1
"$COLLSIM" run $P5090 --cpu turin -b 64K -e 64K >cpu-amd.txt 2>&1
grep -q '^# Topology: .*2 x AMD EPYC 9005 (Turin)' cpu-amd.txt &&
    [ "$(awk '/^ +65536 /{print $(NF-2)}' cpu-intel.txt)" = "LL" ] &&
    [ "$(awk '/^ +65536 /{print $(NF-2)}' cpu-amd.txt)" = "Simple" ] &&
    ok cpu-amd-search-fallback || bad "cpu-amd-search-fallback ($(grep '^ *65536' cpu-intel.txt cpu-amd.txt))"
# two GPUs across the sockets (README's example): NCCL's AMD rule allows
# P2P through the CPUs with at most two GPUs (paths.cc); Intel: SHM
"$COLLSIM" sweep --topo pcie --gpu l40s --gpus 2 --sockets 2 -b 1G -e 1G --grid topology.cpu=spr,turin >cpu-2gpu.csv 2>&1
[ "$(awk -F, 'NR > 1 {printf "%s:%s ", $2, $16}' cpu-2gpu.csv)" = "spr:SHM turin:P2P/PCI " ] &&
    ok cpu-amd-two-gpu-p2p || bad "cpu-amd-two-gpu-p2p ($(cat cpu-2gpu.csv))"
"$COLLSIM" topo graph $P5090 --cpu turin >cpu-graph.txt 2>&1
grep -q 'Pattern 4, .*bw 0.100000/0.100000, type SYS/SYS' cpu-graph.txt && ok cpu-amd-graph ||
    bad "cpu-amd-graph ($(grep -m1 Pattern cpu-graph.txt))"

# ---- every example scenario --------------------------------------------------------
for s in "$top_srcdir"/scenarios/*.ini; do
    n=$(basename "$s" .ini)
    if grep -q '^\[workload\]' "$s"; then
        # a step of a parallel job: collsim step prints its step time
        if "$COLLSIM" step "$s" >"ex-$n.txt" 2>"ex-$n.err" &&
            grep -q '^# \(step time\|token latency\) ' "ex-$n.txt"; then
            ok "example $n"; else bad "example $n: $(head -1 "ex-$n.err")"; fi
        continue
    fi
    if grep -q '^\[job ' "$s"; then
        # several jobs: one row per job with its slowdown
        if "$COLLSIM" run "$s" >"ex-$n.txt" 2>"ex-$n.err" && grep -q 'slowdown' "ex-$n.txt" &&
            [ "$(grep -c '^  [A-Za-z0-9._-]' "ex-$n.txt")" -eq "$(grep -c '^\[job ' "$s")" ]; then
            ok "example $n"; else bad "example $n: $(head -1 "ex-$n.err")"; fi
        continue
    fi
    if "$COLLSIM" run "$s" >"ex-$n.txt" 2>"ex-$n.err" && [ "$(rows "ex-$n.txt")" -ge 1 ] &&
        grep -q '^# Avg bus bandwidth' "ex-$n.txt"; then ok "example $n"; else bad "example $n: $(head -1 "ex-$n.err")"; fi
done
grep -q '^# warning: ' ex-lab-socket-fallback.txt && bad "lab example warns" || ok "lab example has no warning"

# a dump saved elsewhere reads the same topology file: input paths absolute
(cd "$top_srcdir" && "$COLLSIM" run scenarios/lab15-ib-adaptive-routing.ini --dump) >far.ini 2>far.err &&
    grep -q '^file=/' far.ini && mkdir -p far && mv far.ini far/ &&
    "$COLLSIM" run far/far.ini -b 1M -e 1M >far.txt 2>far.err && grep -q '^ *1048576 ' far.txt && ok dump-paths-absolute ||
    bad "dump-paths-absolute ($(cat far.err))"
# -m N: nccl-tests groups N calls, the engines price one: said, not hidden
"$COLLSIM" run --topo dgx-h100 -b 8 -e 8 -m 4 >m4.txt 2>m4.err && grep -q 'agg iters: 4' m4.txt &&
    grep -q '^# warning: agg-iters 4 (-m): .*price one call at a time' m4.txt && ok agg-iters-said || bad "agg-iters-said ($(cat m4.err))"
# a variable NCCL reads that collsim does not model says so; one without
# effect on a collective's time, or a value the model is, does not
"$COLLSIM" run --topo dgx-h100 -b 1M -e 1M --env NCCL_TOPO_FILE=t.xml --env NCCL_DEBUG=INFO >um.txt 2>um.err &&
    grep -q '^# warning: NCCL_TOPO_FILE=t.xml (--env): NCCL reads it .*collsim does not model it: priced as if it were unset' um.txt &&
    ! grep -q 'NCCL_DEBUG' um.err && ok unmodelled-variable-said || bad "unmodelled-variable-said ($(cat um.err))"
"$COLLSIM" run --topo gb200-nvl72 -b 1M -e 1M --env NCCL_MNNVL_ENABLE=1 >um1.txt 2>&1 && ! grep -q 'MNNVL_ENABLE=1 .*not model' um1.txt &&
    "$COLLSIM" run --topo gb200-nvl72 -b 1M -e 1M --env NCCL_MNNVL_ENABLE=0 >um0.txt 2>&1 &&
    grep -q '^# warning: NCCL_MNNVL_ENABLE=0 (--env): .*does not model it' um0.txt && ok mnnvl-off-said || bad mnnvl-off-said
# the socket transport's threads and sockets, a sender's GDR read off, cuMem
# off: said; the values the model is (GDR read on, cuMem on) are not
"$COLLSIM" run --topo dgx-a100 --nodes 2 --nic eth-100g --nics-per-node 1 -b 1G -e 1G --env NCCL_NSOCKS_PERTHREAD=8 \
    --env NCCL_SOCKET_NTHREADS=4 --env NCCL_NET_GDR_READ=0 --env NCCL_CUMEM_ENABLE=0 >us.txt 2>&1 &&
    [ "$(grep -c '^# warning: NCCL_\(NSOCKS_PERTHREAD\|SOCKET_NTHREADS\|NET_GDR_READ\|CUMEM_ENABLE\)=[0-9]* (--env): .*does not model it' us.txt)" = 4 ] &&
    "$COLLSIM" run --topo dgx-h100 --nodes 2 -b 1G -e 1G --env NCCL_NET_GDR_READ=1 --env NCCL_CUMEM_ENABLE=1 >us1.txt 2>&1 &&
    ! grep -q 'warning: NCCL_\(NET_GDR_READ\|CUMEM_ENABLE\)' us1.txt && ok unmodelled-socket-gdr-cumem || bad "unmodelled-socket-gdr-cumem ($(grep warning us.txt us1.txt))"
# buffers nccl-tests could not allocate: send, receive and (-c 1, its
# default) expected, 3 x 32 GiB on an 80 GB H100 warns, 2 x 32 GiB with
# -c 0 and 3 x 16 GiB do not
"$COLLSIM" run --topo dgx-h100 -b 32G -e 32G >big.txt 2>big.err &&
    grep -q '^collsim: warning: nccl-tests allocates a send and a receive buffer .*, and with -c 1 one for the expected result .*up to 3 x 32 GiB do not fit the 80 GiB of an NVIDIA H100' big.err &&
    grep -q '^# warning: nccl-tests allocates' big.txt && ok buffers-too-large ||
    bad "buffers-too-large ($(cat big.err))"
"$COLLSIM" run --topo dgx-h100 -b 32G -e 32G -c 0 >big2.txt 2>&1 && ! grep -q 'do not fit' big2.txt &&
    "$COLLSIM" run --topo dgx-h100 -b 16G -e 16G >big3.txt 2>&1 && ! grep -q 'do not fit' big3.txt && ok buffers-fit ||
    bad buffers-fit
# LL128 forced where NCCL's default leaves it off (PCIe L40S servers):
# warned, priced as forced; on NVLink machines (LL128 on by default) not
"$COLLSIM" run "$top_srcdir/scenarios/lab-roce-fixed.ini" --env NCCL_PROTO=LL128 -b 1M -e 1M >ll.txt 2>ll.err &&
    grep -q "^# warning: NCCL_PROTO=LL128 (--env) turns LL128 on where NCCL's default leaves it off" ll.txt &&
    grep -q 'LL128' ll.txt && ok ll128-forced-warns || bad "ll128-forced-warns ($(cat ll.err))"
"$COLLSIM" run --topo dgx-h100 --nodes 2 --env NCCL_PROTO=LL128 -b 1M -e 1M >ll2.txt 2>&1 &&
    ! grep -q 'turns LL128 on' ll2.txt && ok ll128-nvlink-quiet || bad ll128-nvlink-quiet

# a file the scenario's [output] names is said on stderr (a flag's is not)
printf '[topology]\npreset = dgx-h100\n[collective]\nminbytes = 1M\nmaxbytes = 1M\n[output]\ncsv = so.csv\n' > so.ini
"$COLLSIM" run so.ini >so.txt 2>so.err && [ -s so.csv ] &&
    grep -qx 'collsim: wrote so.csv (so.ini:7: csv)' so.err && ok output-file-said || bad "output-file-said ($(cat so.err))"
"$COLLSIM" run --topo dgx-h100 -b 1M -e 1M --csv fo.csv >fo.txt 2>fo.err && [ -s fo.csv ] && ! grep -q wrote fo.err &&
    ok output-flag-quiet || bad "output-flag-quiet ($(cat fo.err))"

# --exact to an engine with no approximation to turn off: said, not silent
"$COLLSIM" run --topo dgx-h100 --nodes 2 --exact -b 1M -e 1M >ex.txt 2>ex.err &&
    grep -q '^# warning: --exact (exact = true) changes nothing for the analytic model' ex.txt &&
    grep -q '^collsim: warning: --exact' ex.err &&
    "$COLLSIM" run --topo dgx-h100 --nodes 2 --exact --model flow -b 1M -e 1M >exf.txt 2>&1 && ! grep -q 'changes nothing' exf.txt &&
    ok exact-said || bad "exact-said ($(cat ex.err))"

# the sweep's flags over a run of several jobs: said, not silent
"$COLLSIM" run "$top_srcdir/scenarios/two-jobs-spine.ini" -b 1M -n 5 >jb.txt 2>jb.err &&
    grep -qx 'collsim: warning: -b is not used by a run of several jobs: each \[job NAME\] gives its own size and iters' jb.err &&
    grep -q '^collsim: warning: -n is not used' jb.err && ok jobs-sweep-flags-said || bad "jobs-sweep-flags-said ($(cat jb.err))"

exit $fail
