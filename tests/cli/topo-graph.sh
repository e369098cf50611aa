#!/bin/sh
# collsim topo graph: NCCL's own INFO lines for its graphs and channels.
#  - Against real logs: the NCCL_DEBUG=INFO lines of the RTX PRO 6000 runs
#    in ../shared/data/real, on their machine as topologies/
#    rtxpro6000-turin-nps4.xml describes it (NUMA placement, NICs and the
#    GPUs' bus ids from those logs; the 2-GPU run saw GPUs 0 and 1). Every
#    line NCCL printed about graphs, trees and rings must come out the same,
#    rank by rank, GPU ids (bus ids) included. The 8-GPU log's search fell
#    back to "simple order", the order in which NCCL's topology lists the
#    GPUs (0 2 4 3 1 5 6 7 there: the XMLs of rank 0's GPU, the NICs, then
#    the other ranks' GPUs, fused); its excerpt has the search lines of
#    rank 3 only.
#  - `collsim run` names the devices by the same bus ids, as nccl-tests
#    prints them ("[0000:03:00]"); a preset has none (a placeholder).
#  - The formats (rings.cc dumpLine, init.cc "Trees"), --rank, --dump-xml
#    (NCCL_GRAPH_DUMP_FILE), channel counts under NCCL_MIN/MAX_NCHANNELS,
#    two nodes, and bad input.
# Environment (from `make check`): COLLSIM, top_srcdir.
: "${COLLSIM:?}" "${top_srcdir:?}"
[ -x "$COLLSIM" ] || { echo "no $COLLSIM"; exit 77; }
. "$top_srcdir/tests/cli/lib.sh"
unset $(env | sed -n 's/^\(NCCL_[A-Za-z0-9_]*\)=.*/\1/p') 2>/dev/null || true

turin="$top_srcdir/topologies/rtxpro6000-turin-nps4.xml"
real="$top_srcdir/../shared/data/real"

# keep: the graph, tree and ring lines of a log or of collsim's output
# (stdin), without the prefix before "NCCL INFO ", the comm pointer dropped.
keep() {
    sed -n 's/^.*NCCL INFO //p' |
        grep -E '^(Pattern |  ?[0-9]+ :|Tree [0-9]+ :|Channel [0-9]+/[0-9]+ :|Ring [0-9]+ :|Trees|comm [^ ]* rank [0-9]+ nRanks )' |
        grep -v ' via ' |
        sed -e 's/^comm [^ ]* rank/comm rank/'
}

# ---- the 2-GPU log: every line, per rank -----------------------------------
log2=$(ls "$real"/rtxpro6000bw-x2-pcie5-SYS-amd-*INFO*.txt 2>/dev/null | head -n 1)
if [ -n "$log2" ]; then
    for r in 0 1; do
        grep -F "[$r] NCCL INFO" "$log2" | keep >"$tmp/nccl$r"
        "$COLLSIM" topo graph "$turin" --visible-gpus 0,1 --rank $r | keep >"$tmp/ours$r"
        if [ -s "$tmp/nccl$r" ] && cmp -s "$tmp/nccl$r" "$tmp/ours$r"; then
            ok "2-GPU log, rank $r: $(wc -l <"$tmp/nccl$r") lines as NCCL printed them"
        else
            bad "2-GPU log, rank $r differs (< NCCL, > collsim)"; diff "$tmp/nccl$r" "$tmp/ours$r"
        fi
    done
    # nccl-tests' device lines: rank, device and bus id as the run printed
    # them (its first table)
    devs() { sed -n 's/^#  Rank *\([0-9]*\) .* device *\([0-9]*\) \(\[[^]]*\]\).*/\1 \2 \3/p'; }
    awk '/^# Using devices/ { on = 1; next } on && !/^#  Rank/ { exit } on' "$log2" | devs >"$tmp/devs.nccl"
    "$COLLSIM" run --topo "$turin" --visible-gpus 0,1 --procs-per-node 1 --op sendrecv -b 1M -e 1M \
        --env NCCL_NVLS_ENABLE=0 2>&1 | devs >"$tmp/devs.ours"
    if [ "$(wc -l <"$tmp/devs.nccl")" -eq 2 ] && cmp -s "$tmp/devs.nccl" "$tmp/devs.ours"; then
        ok "2-GPU log: the devices' bus ids as nccl-tests printed them"
    else
        bad "2-GPU log: device lines differ (< nccl-tests, > collsim run)"; diff "$tmp/devs.nccl" "$tmp/devs.ours"
    fi
else
    echo "# skip: the RTX PRO 6000 2-GPU log is not in $real"
fi
"$COLLSIM" run --topo dgx-h100 --op allreduce -b 1M -e 1M 2>&1 | grep -q 'device  0 \[----:--:--\] ' \
    && ok "a preset's devices: the bus id left a placeholder" || bad "a preset's bus id placeholder"

# ---- the 8-GPU log: every line, per rank (the search's where the excerpt has them)
log8=$(ls "$real"/rtxpro6000bw-x8-pcie5-2socket-amd-*INFO*.txt 2>/dev/null | head -n 1)
if [ -n "$log8" ]; then
    for r in 0 1 2 3 4 5 6 7; do
        grep -F "[$r] NCCL INFO" "$log8" | keep >"$tmp/n8.$r"
        "$COLLSIM" topo graph "$turin" --rank $r --env NCCL_NVLS_ENABLE=0 |
            keep >"$tmp/o8.$r"
        # a rank whose search lines the excerpt left out: compare the rest
        grep -q '^Pattern ' "$tmp/n8.$r" ||
            { grep -Ev '^(Pattern |  ?[0-9]+ :)' "$tmp/o8.$r" >"$tmp/x8" && mv "$tmp/x8" "$tmp/o8.$r"; }
        if [ -s "$tmp/n8.$r" ] && cmp -s "$tmp/n8.$r" "$tmp/o8.$r"; then
            ok "8-GPU log, rank $r: $(wc -l <"$tmp/n8.$r") lines as NCCL printed them"
        else
            bad "8-GPU log, rank $r differs (< NCCL, > collsim)"; diff "$tmp/n8.$r" "$tmp/o8.$r"
        fi
    done
    grep -qx 'Channel 00/02 : 0 2 4 3 1 5 6 7' "$tmp/o8.0" \
        && ok "8-GPU log: the fallback ring in NCCL's topology order" || bad "8-GPU log: fallback ring"
else
    echo "# skip: the RTX PRO 6000 8-GPU log is not in $real"
fi

# ---- formats -----------------------------------------------------------------
"$COLLSIM" topo graph dgx1-v100 >"$tmp/d1" 2>"$tmp/err" || bad "dgx1-v100: exit status"
# rings.cc: rank 0 prints each final channel from itself, " %*d" per rank
if grep -qx 'node0:rank0 \[0\] NCCL INFO Channel 00/12 : 0 3 2 1 5 6 7 4' "$tmp/d1" &&
   [ "$(grep -c 'NCCL INFO Channel ' "$tmp/d1")" = 12 ] &&
   [ "$(grep -c 'NCCL INFO Trees' "$tmp/d1")" = 8 ] &&
   [ "$(grep -c 'NCCL INFO Ring ' "$tmp/d1")" = 96 ] && head -n 1 "$tmp/d1" | grep -q 'not a log from NCCL'; then
    ok "dgx1-v100: 12 channels, rank 0's rings, a Trees line and 12 Ring lines per rank, labelled"
else
    bad "dgx1-v100: channel lines"; head -n 40 "$tmp/d1"
fi
# 16 ranks: two-digit fields ("%*d" of nranks-1)
"$COLLSIM" topo graph dgx-h100 --nodes 2 --rank 0 >"$tmp/h2" || bad "dgx-h100 --nodes 2: exit status"
if grep -Eq 'NCCL INFO Channel 00/[0-9]+ :(  [0-9]| [0-9]{2}){16}$' "$tmp/h2" &&
   grep -q 'NCCL INFO  0 : NET/0-0 GPU/0-0 ' "$tmp/h2" && grep -q 'NCCL INFO comm - rank 0 nRanks 16 nNodes 2 ' "$tmp/h2"; then
    ok "two nodes: NET ends on the graph lines, two-digit ring fields"
else
    bad "two nodes"; head -n 30 "$tmp/h2"
fi
# NCCL_MAX_NCHANNELS cuts, NCCL_MIN_NCHANNELS copies (connect.cc copyChannels)
n=$("$COLLSIM" topo graph dgx1-v100 --rank 0 --env NCCL_MAX_NCHANNELS=4 | grep -c 'NCCL INFO Channel ')
m=$("$COLLSIM" topo graph dgx1-v100 --rank 0 --env NCCL_MIN_NCHANNELS=20 | grep -c 'NCCL INFO Channel ')
if [ "$n" = 4 ] && [ "$m" = 20 ]; then ok "NCCL_MAX/MIN_NCHANNELS: 4 and 20 channels"; else bad "channel env: $n, $m"; fi
# same inputs, same bytes
"$COLLSIM" topo graph dgx1-v100 >"$tmp/d1b"
cmp -s "$tmp/d1" "$tmp/d1b" && ok "deterministic" || bad "two runs differ"

# ---- NCCL_GRAPH_DUMP_FILE --------------------------------------------------
if "$COLLSIM" topo graph dgx1-v100 --rank 0 --dump-xml "$tmp/g.xml" -o "$tmp/info" &&
   head -n 1 "$tmp/g.xml" | grep -qx '<graphs version="1">' &&
   grep -q '<graph id="0" pattern="4" crossnic="0" nchannels="6" speedintra="20" speedinter="20" latencyinter="0" typeintra="NVL" typeinter="PIX" samechannels="0">' "$tmp/g.xml" &&
   grep -q '<gpu dev="0x3" rank="3"/>' "$tmp/g.xml" && grep -q '<graph id="4" pattern="6" .*/>' "$tmp/g.xml" &&
   [ "$(grep -c '<channel>' "$tmp/g.xml")" = 12 ] && grep -q 'Channel 00/12' "$tmp/info"; then
    if command -v xmllint >/dev/null 2>&1 && ! xmllint --noout "$tmp/g.xml"; then
        bad "--dump-xml: not well-formed XML"
    else
        ok "--dump-xml: ring and tree graphs, 12 channels, CollNet graphs empty; -o"
    fi
else
    bad "--dump-xml"; cat "$tmp/g.xml"
fi

# ---- bad input: one line on stderr, exit 2, nothing written ----------------
for args in "dgx1-v100 --rank 8" "dgx1-v100 --env FOO" "dgx1-v100 --bogus" "no-such-preset" \
            "dgx1-v100 --env NCCL_MAX_NCHANNELS=x" "dgx1-v100 --dump-xml $tmp/nodir/x.xml"; do
    # shellcheck disable=SC2086
    "$COLLSIM" topo graph $args >"$tmp/out" 2>"$tmp/err"
    st=$?
    if [ "$st" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ ! -s "$tmp/out" ]; then
        ok "bad input '$args': $(cat "$tmp/err")"
    else
        bad "bad input '$args': exit $st, $(wc -l <"$tmp/err") lines on stderr"; cat "$tmp/err"
    fi
done
# -1 is no rank (it used to mean every rank, silently)
"$COLLSIM" topo graph dgx1-v100 --rank -1 >/dev/null 2>"$tmp/neg"
[ $? -eq 2 ] && [ "$(wc -l <"$tmp/neg")" -eq 1 ] && grep -qx -- 'collsim: topo: --rank: -1 is not a rank of the topology; expected 0 to 7' "$tmp/neg" \
    && ok "--rank -1 refused" || bad "--rank -1: $(cat "$tmp/neg")"
# a variable NCCL does not read is a warning, as with run
"$COLLSIM" topo graph dgx1-v100 --env NCCL_BOGUS=1 >/dev/null 2>"$tmp/bogus"
grep -q '^collsim: warning: NCCL_BOGUS (--env): ' "$tmp/bogus" && ok "unknown variable warned" || bad "unknown variable: $(cat "$tmp/bogus")"
echo keep >"$tmp/kept"
"$COLLSIM" topo graph dgx1-v100 --rank 9 -o "$tmp/kept" 2>/dev/null
[ "$(cat "$tmp/kept")" = keep ] && ok "a refused run leaves -o FILE as it was" || bad "-o FILE clobbered"

exit $fail
