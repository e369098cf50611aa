#!/bin/sh
# collsim topo check|show|dot|xml: exit status 0 on good input and 2 on bad,
# one line on stderr for every error, nothing on stdout then; output that
# is deterministic and says what it shows.
# Environment (from `make check`): COLLSIM, top_srcdir.

: "${COLLSIM:?}" "${top_srcdir:?}"
[ -x "$COLLSIM" ] || { echo "no $COLLSIM"; exit 77; }

topos="$top_srcdir/topologies"
data="$top_srcdir/tests/data/xml"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collsim-topo.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# expect STATUS ARGS...: runs collsim topo ARGS, checks the exit status and,
# for status 2, that stderr is exactly one line and stdout is empty.
expect() {
    want=$1; shift
    "$COLLSIM" topo "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" != "$want" ]; then
        echo "FAIL: collsim topo $*: exit $got, expected $want"; cat "$tmp/err"; fail=1; return
    fi
    if [ "$want" = 2 ]; then
        n=$(wc -l <"$tmp/err")
        if [ "$n" != 1 ] || [ -s "$tmp/out" ]; then
            echo "FAIL: collsim topo $*: $n lines on stderr (expected 1), stdout $(wc -c <"$tmp/out") bytes"
            cat "$tmp/err"; fail=1
        fi
    elif [ -s "$tmp/err" ]; then
        echo "FAIL: collsim topo $*: unexpected stderr"; cat "$tmp/err"; fail=1
    fi
}

# expect_line STATUS LINE ARGS...: as expect, and stdout (status 0) or
# stderr (status 2) is exactly LINE.
expect_line() {
    want=$1; line=$2; shift 2
    expect "$want" "$@"
    if [ "$want" = 0 ]; then f="$tmp/out"; else f="$tmp/err"; fi
    if [ "$(cat "$f")" != "$line" ]; then
        echo "FAIL: collsim topo $*:"; echo "  got:      $(cat "$f")"; echo "  expected: $line"; fail=1
    fi
}

# -- check ---------------------------------------------------------------
expect_line 0 "$topos/dgx-h100.xml: ok: 1 node, 8 GPUs, 33 links" check "$topos/dgx-h100.xml"
expect_line 0 "$topos/cluster-2node-rail.xml: ok: 2 nodes, 8 GPUs, 34 links" check "$topos/cluster-2node-rail.xml"
expect_line 0 "$topos/pcie-2socket.xml: ok: 1 node, 8 GPUs, 15 links" check "$topos/pcie-2socket.xml"
expect 0 check "$topos/cluster-16node-fat-tree.xml"
# the machines the validation set needs a file for (validation/manifest.ini)
expect_line 0 "$topos/dgx2-v100.xml: ok: 1 node, 16 GPUs, 53 links" check "$topos/dgx2-v100.xml"
expect_line 0 "$topos/rtxpro6000-turin-nps4.xml: ok: 1 node, 8 GPUs, 47 links" check "$topos/rtxpro6000-turin-nps4.xml"
expect_line 0 "$data/nccl-dgx-h100.xml: ok: 1 node, 8 GPUs, 35 links" check "$data/nccl-dgx-h100.xml"
for f in "$data"/bad-*.xml; do
    expect 2 check "$f"
done
expect_line 2 "$data/bad-dup-id.xml:6: duplicate id 'gpu0' (first at line 4); expected ids unique within a <node>" \
    check "$data/bad-dup-id.xml"
expect_line 2 "$data/bad-nic-two-cables.xml:44: NIC 'n0.nic0' (line 34) has 1 port and this link gives it cable 2 (the first at line 43); expected one cable a port (ports=\"N\" on the <nic>, or another NIC named here)" \
    check "$data/bad-nic-two-cables.xml"
expect_line 2 "$data/bad-not-xml.xml:4: Opening and ending tag mismatch: gpu line 3 and node; expected well-formed XML" \
    check "$data/bad-not-xml.xml"
expect_line 2 "$tmp/none.xml: cannot read the file (No such file or directory); expected a readable topology file" \
    check "$tmp/none.xml"
expect 2 check
expect 2 check "$topos/dgx-h100.xml" extra
expect 2 check --bogus "$topos/dgx-h100.xml"
expect 2
expect 2 frobnicate
expect 0 --help

# -- show ----------------------------------------------------------------
expect 0 show "$topos/dgx-h100.xml"
cp "$tmp/out" "$tmp/show1"
grep -q '^gpu0 *X *NVL 450.0/370.8' "$tmp/show1" || { echo "FAIL: show: no NVL row for gpu0"; fail=1; }
grep -q '^gpu3 .*PIX 63.0/48.0' "$tmp/show1" || { echo "FAIL: show: gpu3 has no PIX NIC"; fail=1; }
expect 0 show "$topos/dgx-h100.xml"
cmp -s "$tmp/out" "$tmp/show1" || { echo "FAIL: show output differs between runs"; fail=1; }
# The file and the preset describe the same machine: same path matrices.
expect 0 show "$topos/rtxpro6000-turin-nps4.xml"
grep -q '^  gpu2 .*PCIe P2P yes, bus 0000:8c:00.0$' "$tmp/out" || { echo "FAIL: show: gpu2's bus id"; fail=1; }
expect 0 show dgx-h100
sed -n '/^GPU to GPU/,$p' "$tmp/out" >"$tmp/preset.paths"
sed -n '/^GPU to GPU/,$p' "$tmp/show1" >"$tmp/file.paths"
cmp -s "$tmp/preset.paths" "$tmp/file.paths" || { echo "FAIL: dgx-h100.xml and the preset differ"; diff "$tmp/preset.paths" "$tmp/file.paths"; fail=1; }
expect 0 show "$data/nccl-dgx-h100.xml"
grep -q '^gpu5 .*PIX' "$tmp/out" || { echo "FAIL: NCCL dump: gpu5 has no PIX NIC"; fail=1; }
expect 0 show dgx-h100 --nodes 2
grep -q 'GPU to GPU across nodes: NET' "$tmp/out" || { echo "FAIL: show --nodes 2: no NET line"; fail=1; }
grep -q '^fabric: rail' "$tmp/out" || { echo "FAIL: show --nodes 2: no fabric line"; fail=1; }
expect 0 show --all "$topos/cluster-2node-rail.xml"
grep -q 'rail0 *spine0 *net x2 *100.0 GB/s' "$tmp/out" || { echo "FAIL: show --all: no leaf-spine link"; fail=1; }
expect 0 show --topo "$topos/pcie-2socket.xml"
grep -q '^gpu0 .*PIX 31.5/24.0 *PHB' "$tmp/out" || { echo "FAIL: pcie-2socket: gpu0 paths"; fail=1; }
expect 2 show no-such-preset
expect 2 show dgx-h100 --nodes 0
expect 2 show "$data/bad-gpu-model.xml"
expect 2 show dgx-h100 dgx-a100
expect 2 show

# -- dot -----------------------------------------------------------------
expect 0 dot "$topos/cluster-2node-rail.xml"
grep -q '^graph "collsim" {' "$tmp/out" || { echo "FAIL: dot: no graph header"; fail=1; }
grep -q 'subgraph "cluster_node1"' "$tmp/out" || { echo "FAIL: dot: no cluster for node 1"; fail=1; }
grep -q '"n0.gpu0" -- "n0.gpu1" \[label="nvlink x4 100.0 GB/s"' "$tmp/out" || { echo "FAIL: dot: nvlink edge"; fail=1; }
expect 0 dot -o "$tmp/g.dot" dgx-h100
[ -s "$tmp/g.dot" ] && [ ! -s "$tmp/out" ] || { echo "FAIL: dot -o wrote nothing or wrote stdout"; fail=1; }
if command -v dot >/dev/null 2>&1; then
    dot -Tsvg "$tmp/g.dot" >/dev/null 2>&1 || { echo "FAIL: Graphviz rejects the dot output"; fail=1; }
fi
expect 2 dot -o "$tmp/no/such/dir/g.dot" dgx-h100
[ ! -e "$tmp/no/such/dir/g.dot" ] || fail=1
expect 2 dot "$data/bad-empty.xml" -o "$tmp/bad.dot"
[ ! -e "$tmp/bad.dot" ] || { echo "FAIL: dot wrote a file for bad input"; fail=1; }

# -- xml -----------------------------------------------------------------
# An NCCL dump and a built cluster, written as collsim XML, read back the
# same; writing is idempotent.
expect 0 xml "$data/nccl-dgx-h100.xml" -o "$tmp/dump.xml"
expect_line 0 "$tmp/dump.xml: ok: 1 node, 8 GPUs, 35 links" check "$tmp/dump.xml"
expect 0 xml "$tmp/dump.xml"
cmp -s "$tmp/out" "$tmp/dump.xml" || { echo "FAIL: xml of xml differs"; diff "$tmp/out" "$tmp/dump.xml" | head; fail=1; }
expect 0 xml dgx-h100 --nodes 3 --fabric fat-tree
cp "$tmp/out" "$tmp/three.xml"
expect_line 0 "$tmp/three.xml: ok: 3 nodes, 24 GPUs, $(grep -c '<link ' "$tmp/three.xml") links" check "$tmp/three.xml"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout --relaxng "$top_srcdir/topologies/collsim-topology.rng" "$tmp/three.xml" "$tmp/dump.xml" \
        "$topos"/*.xml 2>"$tmp/err" || { echo "FAIL: schema rejects"; cat "$tmp/err"; fail=1; }
fi
expect 2 xml "$data/bad-root.xml" -o "$tmp/bad-root.out"

# check takes a preset as show does; a file of a preset's name is ./NAME
expect_line 0 "preset:dgx-h100: ok: 1 node, 8 GPUs, 33 links" check dgx-h100
cp "$topos/dgx2-v100.xml" "$tmp/dgx-h100"
(cd "$tmp" && "$COLLSIM" topo check dgx-h100 && "$COLLSIM" topo check ./dgx-h100) >"$tmp/same" 2>&1
[ "$(cat "$tmp/same")" = "preset:dgx-h100: ok: 1 node, 8 GPUs, 33 links
./dgx-h100: ok: 1 node, 16 GPUs, 53 links" ] || { echo "FAIL: check of a preset's name: $(cat "$tmp/same")"; fail=1; }
[ ! -e "$tmp/bad-root.out" ] || { echo "FAIL: xml wrote a file for bad input"; fail=1; }

exit $fail
