#!/bin/sh
# The checks of docs/workloads.md, as the page states them: published
# scaling efficiencies predicted by collsim step (within the page's
# tolerance, or, where the page documents a miss, inside the band it
# documents, so that a model change that moves the number is noticed and
# the page updated), and the verdicts on seed 004's tensor-parallel
# inference latency targets per machine. Every expectation below is a
# sentence of docs/workloads.md; change both together.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"
S="$top_srcdir/scenarios"
# a tree without collsim step (issue #15's command) has nothing to check
"$COLLSIM" step --help >/dev/null 2>&1 || { echo "skip: no collsim step"; exit 77; }
cd "$tmp" || exit 1

# summary NAME FILE: the value in ms of a summary line "# NAME  VALUE ms"
summary() { sed -n "s/^#  *$1  *\([0-9.]*\) ms.*/\1/p" "$2" | head -1; }
# within A LO HI: LO <= A <= HI
within() { awk -v a="$1" -v l="$2" -v h="$3" 'BEGIN { exit !(a != "" && a + 0 >= l && a + 0 <= h) }'; }
# eff FILE: weak-scaling efficiency in %: the same plan with free
# communication (step less exposed communication) over the step
eff() {
    awk -v s="$(summary 'step time' "$1")" -v e="$(summary 'exposed communication' "$1")" \
        'BEGIN { if (s > 0) printf "%.1f", 100 * (s - e) / s }'
}
# ratio A B: 100 A / B
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", 100 * a / b }'; }
# xfail NAME: a documented miss (docs/workloads.md says why): reported,
# not counted as a failure; the band check after it is the real test
xfail() { echo "xfail $1"; }

TOL=5   # percentage points; docs/workloads.md, "Tolerance"

# ---- A1: Megatron-LM 8.3B, TP 8 x DP 64, 512 GPUs: 76% -----------------------
# PyTorch DDP's overlapped buckets (collsim's default) and Megatron's local
# DDP (one all-reduce of all gradients after backward: bucket-cap-mb 4096)
"$COLLSIM" step "$S/wl-megatron-8.3b.ini" --model flow >a1.txt 2>a1.err || bad "A1: $(cat a1.err)"
"$COLLSIM" step "$S/wl-megatron-8.3b.ini" --model flow --bucket-cap-mb 4096 >a1-after.txt 2>a1a.err \
    || bad "A1 after backward: $(cat a1a.err)"
e1=$(eff a1.txt); e1a=$(eff a1-after.txt)
if within "$e1" $((76 - TOL)) $((76 + TOL)); then ok "A1: overlapped DDP $e1% within $TOL points of 76%"
else xfail "A1: overlapped DDP $e1% vs published 76% (documented miss: collsim over-predicts)"; fi
# the documented band: 83-89% (the page's 86.1% +- 3)
within "$e1" 83 89 && ok "A1: $e1% in the documented band 83-89%" || bad "A1: $e1% outside 83-89%"
# the published figure lies between the two schedules Megatron offered
within 76 "$e1a" "$e1" && ok "A1: 76% between all-reduce after backward ($e1a%) and overlapped ($e1%)" \
    || bad "A1: 76% not between $e1a% and $e1%"
within "$e1a" 58 64 && ok "A1: after backward $e1a% in the documented band 58-64%" || bad "A1: after backward $e1a%"

# ---- A2: Goyal et al. ResNet-50, 8 -> 256 GPUs: ~90% -------------------------
"$COLLSIM" step "$S/wl-resnet50-256.ini" --model flow >a2-256.txt 2>a2.err || bad "A2: $(cat a2.err)"
"$COLLSIM" step "$S/wl-resnet50-256.ini" --model flow --nodes 1 >a2-8.txt 2>a2.err || bad "A2 8 GPUs: $(cat a2.err)"
e2=$(ratio "$(summary 'step time' a2-8.txt)" "$(summary 'step time' a2-256.txt)")
if within "$e2" $((90 - TOL)) $((90 + TOL)); then ok "A2: $e2% within $TOL points of ~90%"
else xfail "A2: $e2% vs published ~90% (documented miss: collsim over-predicts)"; fi
within "$e2" 91 95 && ok "A2: $e2% in the documented band 91-95%" || bad "A2: $e2% outside 91-95%"
# the only exposed communication is the last bucket (the first layers')

awk -v e="$(summary 'exposed communication' a2-256.txt)" -v t="$(awk '!/^#/ && $1 == "DP" && $3 == 21162752 { print $6 / 1000 }' a2-256.txt)" \
    'BEGIN { exit !(t > 0 && e <= t * 1.01 && e >= t * 0.9) }' \
    && ok "A2: exposed = the last bucket's all-reduce" || bad "A2: exposed vs last bucket"

# ---- B: seed 004's latency targets per machine -------------------------------
# verdict FILE OP SIZE TARGET_US: met or missed, by the out-of-place time
verdict() {
    awk -v s="$3" -v t="$4" '!/^#/ && $1 == s { print ($6 + 0 <= t ? "met" : "missed"); exit }' "$1"
}
# sizes: 100K, 10M, 100M as nccl-tests -b 100K -f 10 counts them (powers of 1024 x 10)
K100=102400; M10=10240000; M100=102400000
check_machine() {   # NAME "topology flags" AR100K AR10M AR100M BC100M
    name=$1; topo=$2
    # shellcheck disable=SC2086
    "$COLLSIM" run $topo -d bfloat16 -b 100K -e 100M -f 10 >"ar-$name.txt" 2>err.txt || bad "B $name: $(cat err.txt)"
    # shellcheck disable=SC2086
    "$COLLSIM" run $topo -d bfloat16 --op broadcast -b 100K -e 100M -f 10 >"bc-$name.txt" 2>err.txt \
        || bad "B $name broadcast: $(cat err.txt)"
    got="$(verdict "ar-$name.txt" allreduce $K100 500) $(verdict "ar-$name.txt" allreduce $M10 1000)"
    got="$got $(verdict "ar-$name.txt" allreduce $M100 10000) $(verdict "bc-$name.txt" broadcast $M100 5000)"
    [ "$got" = "$3 $4 $5 $6" ] && ok "B $name: $got" || bad "B $name: got '$got', documented '$3 $4 $5 $6'"
}
check_machine a100x4 "--topo dgx-a100 --gpus 4" met met met met
check_machine h100x8 "--topo dgx-h100" met met met met
check_machine rtx4090x4 "--topo pcie --gpu rtx4090 --gpus 4" met missed missed missed
# the PCIe machine misses by about 3x (the page: 2.98 ms, 29.6 ms, 19.7 ms): bandwidth-bound
awk -v s=$M10 '!/^#/ && $1 == s { exit !($6 > 2500 && $6 < 3500) }' ar-rtx4090x4.txt \
    && ok "B rtx4090x4: 10 MB about 3 ms" || bad "B rtx4090x4: 10 MB time"

# collsim step --mode infer: a model whose TP all-reduce is ~100 KB
infer() {   # NAME "flags" SIZE
    # shellcheck disable=SC2086
    "$COLLSIM" step $2 --mode infer --target-allreduce 0.5ms >"inf-$1.txt" 2>err.txt || bad "B step $1: $(cat err.txt)"
    grep -q "^  TP    allreduce  *$3 " "inf-$1.txt" && grep -q '^# target per all-reduce .*target 0.500 ms met' "inf-$1.txt" \
        && ok "B step $1: TP all-reduce of $3 B meets 0.5 ms" || bad "B step $1: $(grep -E 'TP|target' "inf-$1.txt")"
}
infer a100x4 "$S/tp-inference.ini" 102400
infer h100x8 "--topo dgx-h100 --arch llama2-70b --tp 8 --batch 6" 98304
infer rtx4090x4 "--topo pcie --gpu rtx4090 --gpus 4 --arch llama2-13b --tp 4 --batch 10" 102400
# a decode step on the PCIe machine: the all-reduces are a third of the token
e=$(summary 'exposed communication' inf-rtx4090x4.txt); t=$(summary 'token latency' inf-rtx4090x4.txt)
within "$(ratio "$e" "$t")" 20 40 && ok "B step rtx4090x4: communication $(ratio "$e" "$t")% of the token" \
    || bad "B step rtx4090x4: exposed $e of $t ms"

# ---- lab 12 (docs/labs/lab12-optimization-report.md) runs as written ----------
# its ```sh lab-run blocks (as tests/cli/labs.sh runs the other labs), then
# the facts its answers quote
mkdir "$tmp/bin" "$tmp/lab" || exit 1
printf '#!/bin/sh\nexec "%s" "$@"\n' "$COLLSIM" >"$tmp/bin/collsim" && chmod +x "$tmp/bin/collsim" || exit 1
for d in scenarios docs tests; do ln -s "$top_srcdir/$d" "$tmp/lab/$d" || exit 1; done
awk '/^```sh lab-run[ \t]*$/ { on = 1; next } on && /^```/ { on = 0; next } on { print }' \
    "$top_srcdir/docs/labs/lab12-optimization-report.md" >lab12.sh
(cd "$tmp/lab" && PATH="$tmp/bin:$PATH" sh "$tmp/lab12.sh") >lab12.log 2>&1 && ok "lab12: ran $(grep -c . lab12.sh) commands" \
    || bad "lab12: $(tail -3 lab12.log)"
L="$tmp/lab"
G=1073741824
bus() { awk -v s="$2" '!/^#/ && $1 == s { print $8; exit }' "$L/$1"; }
b0=$(bus r-baseline.txt $G); br=$(bus r-roce.txt $G); bi=$(bus r-ib.txt $G); bg=$(bus r-gdr-off.txt $G)
within "$b0" 0.15 0.25 && within "$br" 10.2 10.6 && within "$bi" 10.2 10.6 && within "$bg" 9.9 10.3 \
    && ok "lab12: busbw baseline $b0, RoCE $br, IB $bi, no GDR $bg GB/s (the page: 0.20, 10.40, 10.40, 10.18)" \
    || bad "lab12: busbw baseline $b0 RoCE $br IB $bi no GDR $bg"
grep -q '^# transports: SHM intra (ring edges: 4 P2P/PCI, 3 SHM; the slowest, SHM, paces the ring), NET/Socket inter (1 of 3 interfaces: eno1, 1 Gb/s)' "$L/r-baseline.txt" \
    && grep -q 'GID\[3\] ::ffff:10.1.0.5  RoCE v2' "$L/r-doctor.txt" && grep -q 'ib-disabled-with-rdma' "$L/r-doctor.txt" \
    && ok "lab12: baseline transport, GID table, doctor's finding" || bad "lab12: baseline/doctor lines"
grep -q 'data on priority 0 (NCCL_IB_TC 5: DSCP 1, priority 0 by the DSCP map, lossy' "$L/r-tc5-small.txt" \
    && grep -q 'drops 0,' "$L/r-tc5-small.txt" && ok "lab12: TC 5 lossy but no drop on two servers" || bad "lab12: tc5 small"
t5=$(bus r-tc5-spine.txt 67108864); t106=$(bus r-tc106-spine.txt 67108864); tm=$(bus r-tc5-mapped.txt 67108864)
# the page's numbers within 2% (221.5 GB/s; 30413 drops, 1375 timeouts)
d5=$(sed -n 's/.*drops \([0-9]*\),.*/\1/p' "$L/r-tc5-spine.txt" | head -1)
within "$t5" 0 1 && within "$t106" 217 226 && [ "$tm" = "$t106" ] && within "$d5" 29800 31000 \
    && ok "lab12: spine: TC 5 $t5 GB/s with $d5 drops, TC 106 $t106, TC 5 mapped to priority 3 $tm" \
    || bad "lab12: spine TC 5 $t5, 106 $t106, mapped $tm"
s0=$(summary 'step time' "$L/r-ddp-sockets.txt"); sr=$(summary 'step time' "$L/r-ddp-roce.txt")
si=$(summary 'step time' "$L/r-ddp-ib.txt")
# the page's numbers within 2%
within "$s0" 2267 2360 && within "$sr" 71.5 74.5 && [ "$sr" = "$si" ] \
    && ok "lab12: DDP step sockets $s0 ms, RoCE $sr, IB $si (the page: 2313.4, 73.0, 73.0)" \
    || bad "lab12: DDP sockets $s0 RoCE $sr IB $si"
grep -q 'NCCL INFO Channel 00/04 :  0  1  2  3  7  6  5  4  8  9 10 11 15 14 13 12' "$L/r-graph.txt" \
    && ok "lab12: the channel line the page quotes" || bad "lab12: graph"

# context = 0 was taken as "the default" and silently priced seq-len: refused
printf '[topology]\npreset = dgx-h100\n[workload]\nmode = infer\narch = llama2-70b\ntp = 8\ncontext = 0\n' > "$L/ctx0.ini"
"$COLLSIM" step "$L/ctx0.ini" >"$L/ctx0.txt" 2>"$L/ctx0.err"
[ $? -eq 2 ] && [ "$(cat "$L/ctx0.err")" = "$L/ctx0.ini:7: context: 0 is out of range; expected a number of tokens from 1" ] &&
    ok "context 0 refused" || bad "context 0: $(cat "$L/ctx0.err")"

exit $fail
