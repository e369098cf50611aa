#!/bin/sh
# Inputs collsim cannot be made to choke on (issue #13): a device, a FIFO or
# a directory given as an input file is refused at once; a file over the
# documented limit is refused naming the limit, without being read; a
# topology written by `topo xml` reads back as the same topology; rows of an
# nccl-tests log that validate cannot read are reported and fail it; a bad
# topology value in a scenario names FILE:LINE, the same value as a flag
# names the flag.
# Environment (from `make check`): COLLSIM, top_srcdir.
set -u
: "${COLLSIM:?}" "${top_srcdir:?}"
[ -x "$COLLSIM" ] || { echo "no $COLLSIM"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/collsim-inputs.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }

# refused NAME STATUS LINE -- ARGS...: collsim ARGS exits STATUS within 5 s,
# prints nothing on stdout and exactly LINE on stderr.
refused() {
    name=$1 want=$2 line=$3; shift 4
    timeout 5 "$COLLSIM" "$@" > out.txt 2> err.txt
    got=$?
    if [ "$got" != "$want" ]; then
        bad "$name: exit $got, expected $want: $(head -c 300 err.txt)"
    elif [ -s out.txt ]; then
        bad "$name: output on stdout"
    elif [ "$(cat err.txt)" != "$line" ]; then
        bad "$name: got '$(head -c 300 err.txt)', expected '$line'"
    else
        ok "$name"
    fi
}

# ---- not a regular file ---------------------------------------------------
refused dev-zero 2 "/dev/zero: not a regular file; expected a topology file" -- topo check /dev/zero
refused dev-null 2 "/dev/null: not a regular file; expected a topology file" -- topo check /dev/null
refused directory 2 "$tmp: not a regular file; expected a topology file" -- topo check "$tmp"
# (names with a '.': the message starts with the file, as any other file's)
mkfifo in.fifo || exit 1
refused fifo-topo-check 2 "in.fifo: not a regular file; expected a topology file" -- topo check in.fifo
refused fifo-topo-flag 2 "in.fifo: not a regular file; expected a topology file" -- run --topo in.fifo
refused fifo-scenario 2 "in.fifo: not a regular file; expected an INI file" -- run in.fifo
refused fifo-validate-log 2 "in.fifo: not a regular file; expected a nccl-tests log" -- \
    validate in.fifo --topo dgx-h100
refused fifo-calibration 2 "in.fifo: not a regular file; expected an INI file" -- \
    run --topo dgx-h100 --calibration in.fifo

# ---- over the limit: sparse files, refused by their size --------------------
truncate -s 65M big.xml && truncate -s 257M big.log && truncate -s 2M big.ini || exit 1
refused big-topology 2 "big.xml: larger than 64 MiB; expected a topology file of at most 64 MiB" -- \
    topo check big.xml
refused big-log 2 "big.log: larger than 256 MiB; expected a nccl-tests log of at most 256 MiB" -- \
    validate big.log --topo dgx-h100
refused big-scenario 2 "big.ini: larger than 1 MiB; expected an INI file of at most 1 MiB" -- run big.ini
# at the limit is not over it: read, then refused as what it is (zeros)
truncate -s 1M limit.ini || exit 1
timeout 5 "$COLLSIM" run limit.ini > /dev/null 2> err.txt
[ $? = 2 ] && ! grep -q "larger than" err.txt && ok at-limit || bad "at-limit: $(cat err.txt)"

# ---- topo xml round trip ----------------------------------------------------
# One node whose ids differ only by a node prefix (the fuzzer's find): the
# written file must load, and write back the same.
cat > prefixed.xml <<'XML'
<collsim-topology version="1">
  <node>
    <cpu id="cpu0" vendor="intel"/>
    <gpu id="gpu0" model="h100-sxm"/>
    <gpu id="n0.gpu0" model="h100-sxm"/>
    <link a="cpu0" b="gpu0" type="pcie" gen="5" width="16"/>
    <link a="cpu0" b="n0.gpu0" type="pcie" gen="5" width="16"/>
  </node>
</collsim-topology>
XML
# Several nodes with the same ids inside each node
cat > prefixed2.xml <<'XML'
<collsim-topology version="1">
  <node count="2">
    <cpu id="cpu0" vendor="intel"/>
    <gpu id="gpu0" model="h100-sxm"/>
    <gpu id="n0.gpu0" model="h100-sxm"/>
    <nic id="nic0" type="ib-ndr"/>
    <link a="cpu0" b="gpu0" type="pcie" gen="5" width="16"/>
    <link a="cpu0" b="n0.gpu0" type="pcie" gen="5" width="16"/>
    <link a="cpu0" b="nic0" type="pcie" gen="5" width="16"/>
  </node>
  <fabric kind="rail"/>
</collsim-topology>
XML
# The same devices, links and names: `topo show` of both (less its first
# line, the file's name) is the same, and writing again changes nothing.
for f in prefixed prefixed2; do
    if "$COLLSIM" topo xml "$f.xml" > "$f.a.xml" 2> err.txt &&
        "$COLLSIM" topo xml "$f.a.xml" > "$f.b.xml" 2>> err.txt &&
        "$COLLSIM" topo show "$f.xml" | sed 1d > "$f.show" 2>> err.txt &&
        "$COLLSIM" topo show "$f.a.xml" | sed 1d > "$f.a.show" 2>> err.txt &&
        cmp -s "$f.show" "$f.a.show" && cmp -s "$f.a.xml" "$f.b.xml" && [ ! -s err.txt ]; then
        ok "round-trip-$f"
    else
        bad "round-trip-$f: $(cat err.txt)"
    fi
done
grep -c 'id="n0.gpu0"' prefixed.a.xml | grep -qx 1 && ok round-trip-keeps-id || bad round-trip-keeps-id

# ---- validate: rows it cannot read are named and fail it --------------------
logs="$top_srcdir/tests/data/logs"
# row_case NAME ROW WHY: ROW inserted as line 19 (inside table 1)
row_case() {
    sed "18a\\$2" "$logs/two-tables.txt" > rows.log
    "$COLLSIM" validate rows.log --topo dgx-h100 --nodes 2 --gpus 2 > out.txt 2> err.txt
    rc=$?
    if [ $rc = 1 ] && [ "$(head -1 err.txt)" = "rows.log:19: row not read: $3" ] &&
        grep -q '^collsim: validate: 1 row of rows.log not read' err.txt && [ "$(wc -l < err.txt)" = 2 ] &&
        grep -q '^# collsim validate' out.txt; then
        ok "unread-$1"
    else
        bad "unread-$1: exit $rc: $(cat err.txt)"
    fi
}
row_case negative '        -8     -2  float  sum  -1  20.00  0.05  0.08  0  19.50  0.05  0.08  0' \
    "size '-8' is negative; expected a whole number of at least 0"
row_case overflow '  99999999999999999999999  2  float  sum  -1  20.00  0.05  0.08  0  19.5  0.05  0.08  0' \
    "size '99999999999999999999999' is too large; expected at most 18446744073709551615"
row_case count '  8192  -2048  float  sum  -1  20.00  0.05  0.08  0  19.5  0.05  0.08  0' \
    "count '-2048' is negative; expected a whole number of at least 0"
row_case cut-off '        8192          20' \
    "cut off after 2 columns; expected size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]"
# cut off later, in its type, redop, root or times: the same kind of line
row_case cut-off-redop '        8192          2048     float     sum' \
    "cut off after 4 columns; expected size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]"
row_case cut-off-times '        8192          2048     float     sum    -1   20.00   0.05' \
    "cut off after 7 columns; expected size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]"
# cut off inside a column (a truncation at a byte): the same
row_case cut-off-in-redop '        8192          2048     float     su' \
    "cut off in column 4 ('su'); expected size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]"
row_case cut-off-in-wrong '        8192          2048     float     sum    -1   20.00   0.05   0.08   N' \
    "cut off in column 9 ('N'); expected size count type redop root time algbw busbw #wrong [time algbw busbw #wrong]"
# the other table is whole: validating it alone passes
"$COLLSIM" validate rows.log --topo dgx-h100 --nodes 2 --gpus 2 --table 2 > out.txt 2> err.txt &&
    [ ! -s err.txt ] && ok unread-other-table || bad "unread-other-table: $(cat err.txt)"
# a line of prose inside a table stays prose
sed '18a\8 GPUs found' "$logs/two-tables.txt" > prose.log
"$COLLSIM" validate prose.log --topo dgx-h100 --nodes 2 --gpus 2 > out.txt 2> err.txt &&
    [ ! -s err.txt ] && ok prose-in-table || bad "prose-in-table: $(cat err.txt)"

# ---- a scenario's topology values: errors name FILE:LINE --------------------
# at_line NAME LINE WHY -- KEY=VALUE...: a scenario of these [topology] lines
# (line 2 on) fails with "s.ini:LINE: WHY..." (a prefix of the message)
at_line() {
    name=$1 line=$2 why=$3; shift 4
    printf '[topology]\n' > s.ini
    for kv in "$@"; do printf '%s\n' "$kv" >> s.ini; done
    "$COLLSIM" run s.ini > out.txt 2> err.txt
    rc=$?
    case "$(cat err.txt)" in
    "s.ini:$line: $why"*) [ $rc = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && ok "scenario-$name" ||
        bad "scenario-$name: exit $rc, $(cat err.txt)" ;;
    *) bad "scenario-$name: exit $rc, '$(cat err.txt)', expected 's.ini:$line: $why...'" ;;
    esac
}
topos="$top_srcdir/topologies"
at_line gpus-preset 3 "gpus: 9 GPUs per node, but dgx-h100 has 8" -- "preset = dgx-h100" "gpus = 9"
at_line gpus-file 3 "gpus: 9 GPUs per node requested; expected at most 8" -- "file = $topos/dgx-h100.xml" "gpus = 9"
at_line gpus-pcie 4 "gpus: 65 GPUs in one PCIe server" -- "preset = pcie" "gpu = h100-pcie" "gpus = 65"
at_line gpu-sxm 3 "gpu: h100-sxm is an SXM/superchip module" -- "preset = pcie" "gpu = h100-sxm"
at_line gpu-missing 2 "preset: the pcie preset needs a GPU model" -- "preset = pcie" "nodes = 4"
at_line nodes-file 3 "nodes: 4, but $topos/cluster-2node-rail.xml describes 2 nodes; expected nodes unset or 2" -- \
    "file = $topos/cluster-2node-rail.xml" "nodes = 4"
# a file of several nodes: 1 is refused too (it would not shrink the
# cluster), its own count is accepted
at_line nodes-file-one 3 "nodes: 1, but $topos/cluster-2node-rail.xml describes 2 nodes; expected nodes unset or 2" -- \
    "file = $topos/cluster-2node-rail.xml" "nodes = 1"
printf '[topology]\nfile = %s\nnodes = 2\n' "$topos/cluster-2node-rail.xml" > same.ini
"$COLLSIM" run same.ini -b 1M -e 1M > same.txt 2>&1 && grep -q '^ *1048576 ' same.txt && ok nodes-file-same ||
    bad "nodes-file-same ($(tail -1 same.txt))"
at_line oversub-rail 4 "oversubscription: 2 does not apply: the rail fabric of 2 nodes" -- \
    "preset = dgx-h100" "nodes = 2" "oversubscription = 2"
at_line oversub-one-node 3 "oversubscription: 2 does not apply: 1 node(s) without a network fabric" -- \
    "preset = dgx-h100" "oversubscription = 2"
at_line nodes-range 3 "nodes: 70000 is out of range; expected a number of nodes from 1 to 65536" -- \
    "preset = dgx-h100" "nodes = 70000"
# the same values as flags name the flags, as before
printf '[topology]\npreset = dgx-h100\ngpus = 4\n' > s.ini
refused flag-gpus 2 "collsim: --gpus: 9 GPUs per node, but dgx-h100 has 8; expected 1..8" -- run s.ini --gpus 9
refused flag-gpus-only 2 "collsim: --gpus: 9 GPUs per node, but dgx-h100 has 8; expected 1..8" -- \
    run --topo dgx-h100 --gpus 9
refused flag-gpu 2 "collsim: --gpu: h100-sxm is an SXM/superchip module, not a PCIe card; expected a PCIe card, or a dgx-* or hgx-* preset for it" -- \
    run --topo pcie --gpu h100-sxm
refused flag-nodes 2 "collsim: --nodes: 70000 is out of range; expected a number of nodes from 1 to 65536" -- \
    run --topo dgx-h100 --nodes 70000
"$COLLSIM" run --topo dgx-h100 --nodes 2 --oversubscription 2 > out.txt 2> err.txt
grep -q '^collsim: --oversubscription: 2 does not apply: ' err.txt && ok flag-oversubscription ||
    bad "flag-oversubscription: $(cat err.txt)"

# ---- what topo xml writes loads again -------------------------------------
# 12000 DGX H100 nodes are 66 MiB of XML, past the 64 MiB a topology file may
# have: topo xml refuses instead of writing a file nothing can read, having
# counted the text without keeping it (building the 96000-GPU topology is
# most of its time and its 150 MiB; longer under the sanitizers, hence no
# 5 s limit here)
"$COLLSIM" topo xml dgx-h100 --nodes 12000 -o cluster.xml > out.txt 2> err.txt
got=$?
want="collsim: topo xml: this topology is 66 MiB of XML, larger than the 64 MiB a topology file may have; expected fewer nodes (describe one node in a file and give --nodes to run)"
if [ "$got" != 2 ] || [ -s out.txt ] || [ "$(cat err.txt)" != "$want" ]; then
    bad "topo-xml-past-limit: exit $got: $(head -c 300 err.txt)"
elif [ -e cluster.xml ]; then
    bad "topo-xml-past-limit: cluster.xml written"
else
    ok topo-xml-past-limit
fi

exit $fail
