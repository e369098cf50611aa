#!/bin/sh
# collsim step: one step of a parallel job. The table and --json agree;
# the step is at least its compute; DDP hides part of its gradient
# all-reduces behind backward, inference hides none of its TP all-reduces;
# with --model flow calls that share links take longer than alone; --svg,
# --trace and --json are written together and identical on a second run;
# --dump round-trips [workload]; bad input is one line and exit 2.
. "${top_srcdir:?}/tests/cli/lib.sh"
: "${COLLSIM:?}" "${top_srcdir:?}"
cd "$tmp" || exit 1

# summary NAME FILE: the value of the summary line "# NAME  VALUE ms"
summary() { sed -n "s/^#  *$1  *\([0-9.]*\) ms.*/\1/p" "$2" | head -1; }

"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --json ddp.json >ddp.txt 2>err.txt \
    && ok ddp-runs || bad "ddp: $(cat err.txt)"
grep -q '^# collsim step: llama3-8b, training, one step (model:analytic)' ddp.txt && ok ddp-header || bad ddp-header
grep -q '^# parallelism: 16 GPUs = tp 1 x pp 1 x dp 16; DDP, buckets of 25 MiB' ddp.txt && ok ddp-plan || bad ddp-plan
grep -q '^# transports, DP: .*NET/IB' ddp.txt && ok ddp-transports || bad "transports: $(grep transports ddp.txt)"
step=$(summary "step time" ddp.txt); comp=$(summary "compute" ddp.txt)
comm=$(summary "communication" ddp.txt); exp=$(summary "exposed communication" ddp.txt)
# the step holds its compute and what communication adds; DDP overlaps
# buckets with backward, so the exposed part is less than the whole
awk -v s="$step" -v c="$comp" -v m="$comm" -v e="$exp" \
    'BEGIN { exit !(s >= c && e > 0 && e < m && s - c - e < 0.002 && s - c - e > -0.002) }' \
    && ok ddp-overlap || bad "ddp overlap: step $step compute $comp comm $comm exposed $exp"
if command -v python3 >/dev/null 2>&1; then
    python3 - <<'PY' && ok ddp-json || bad ddp-json
import json
j = json.load(open("ddp.json"))
assert j["producer"] == "model:analytic"
s = j["summary"]
rows = [l.split() for l in open("ddp.txt") if l.startswith("  DP")]
assert len(rows) == len(j["calls"]) > 0
for r, c in zip(rows, j["calls"]):
    assert int(r[2]) == c["size"] and int(r[4]) == c["calls"] and abs(float(r[5]) - c["time_s"] * 1e6) < 0.006
# every op ends after it starts, none after the step
assert all(0 <= o["start_s"] <= o["end_s"] <= s["step_s"] + 1e-12 for o in j["ops"])
# buckets: every gradient byte of the model once (bf16, 2 bytes each)
total = sum(c["size"] * c["calls"] for c in j["calls"])
assert abs(total / 2 - j["workload"]["params"]) / j["workload"]["params"] < 0.01, (total, j["workload"]["params"])
PY
fi

# inference: each TP all-reduce blocks the next layer, none is hidden
# (a missed target is a failed check: exit 1 after the whole output)
"$COLLSIM" step --topo dgx-h100 --arch llama2-70b --mode infer --tp 8 --batch 8 --target-allreduce 0.5ms \
    --target-token 1ms >inf.txt 2>err.txt
rc=$?
[ $rc -eq 1 ] && [ ! -s err.txt ] && grep -q '^# throughput' inf.txt && ok infer-runs-missed-exit-1 ||
    bad "infer: exit $rc, $(cat err.txt)"
"$COLLSIM" step --topo dgx-h100 --arch llama2-70b --mode infer --tp 8 --batch 8 --target-allreduce 0.5ms \
    >inf-met.txt 2>err.txt && ok infer-met-exit-0 || bad "infer met: exit $?, $(cat err.txt)"
comm=$(summary "communication" inf.txt); exp=$(summary "exposed communication" inf.txt)
awk -v m="$comm" -v e="$exp" 'BEGIN { d = m - e; exit !(m > 0 && d < 0.002 && d > -0.002) }' \
    && ok infer-exposed || bad "infer: comm $comm exposed $exp"
grep -q '^# target per all-reduce .*target 0.500 ms met$' inf.txt && ok target-met || bad target-met
grep -q '^# target per token .*target 1.000 ms missed$' inf.txt && ok target-missed || bad target-missed

# a pipeline's critical path crosses every stage's calls, so what it
# exposes can exceed the communication line (one rank's communicators);
# the exposed line then says why, and only then (not for DDP above)
"$COLLSIM" step --topo dgx-h100 --nodes 4 --arch llama3-70b --tp 8 --pp 4 --micro-batches 8 >pp.txt 2>err.txt \
    && ok pp-runs || bad "pp: $(cat err.txt)"
comm=$(summary "communication" pp.txt); exp=$(summary "exposed communication" pp.txt)
awk -v m="$comm" -v e="$exp" 'BEGIN { exit !(e > m) }' && grep -q '^#   exposed .*several pipeline stages)$' pp.txt \
    && ! grep -q 'several pipeline stages' ddp.txt && ok pp-exposed-explained \
    || bad "pp: comm $comm exposed $exp: $(grep exposed pp.txt ddp.txt)"

# flow: TP groups inside nodes and DP groups across them at once; a call
# never beats its time alone, and some are slowed by the others
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --layers 4 --tp 2 --micro-batches 2 --model flow \
    --json flow.json --trace flow.trace --svg flow.svg >flow.txt 2>err.txt && ok flow-runs || bad "flow: $(cat err.txt)"
awk '/^  (TP|DP|PP|EP) / { n++; if ($6 < $7 - 0.01) bad = 1; if ($6 > $7 * 1.01) slow++ }
     END { exit !(n >= 2 && !bad && slow >= 1) }' flow.txt && ok flow-contention \
    || bad "flow contention: $(grep '^  [TDPE]P ' flow.txt)"
grep -q 'every call run together' flow.txt && ok flow-says-together || bad flow-says-together
if command -v python3 >/dev/null 2>&1; then
    python3 - <<'PY' && ok flow-trace || bad flow-trace
import json
t = json.load(open("flow.trace"))
names = [e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
assert any(n.startswith("compute") for n in names), names
assert any(n.startswith("DP allreduce") for n in names) and any(n.startswith("TP allreduce") for n in names), names
PY
fi
grep -q '^<svg ' flow.svg && grep -q 'TP comm' flow.svg && grep -q '>compute<' flow.svg && ok svg || bad svg
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --layers 4 --tp 2 --micro-batches 2 --model flow \
    --json flow2.json --trace flow2.trace --svg flow2.svg >flow2.txt 2>/dev/null
cmp -s flow.txt flow2.txt && cmp -s flow.json flow2.json && cmp -s flow.trace flow2.trace && cmp -s flow.svg flow2.svg \
    && ok deterministic || bad deterministic

# pipeline: 1F1B leaves a bubble; the analytic engine says it priced calls alone
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --tp 8 --pp 2 --micro-batches 4 >pp.txt 2>err.txt \
    && ok pp-runs || bad "pp: $(cat err.txt)"
b=$(summary "pipeline bubble" pp.txt)
awk -v b="$b" 'BEGIN { exit !(b > 0) }' && ok pp-bubble || bad "pp bubble: $b"
grep -q '^  PP    sendrecv' pp.txt && grep -q 'priced each call alone' pp.txt && ok pp-rows || bad pp-rows

# --dump writes [workload] back; the dumped scenario gives the same table
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --tp 2 --dump >d.ini 2>/dev/null
grep -q '^\[workload\]' d.ini && grep -q '^arch=llama3-8b' d.ini && grep -q '^tp=2' d.ini && ok dump || bad dump
"$COLLSIM" step d.ini >d1.txt 2>/dev/null && "$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --tp 2 \
    >d2.txt 2>/dev/null && grep -q '^# step time' d1.txt && cmp -s d1.txt d2.txt && ok dump-round-trip \
    || bad dump-round-trip

# bad input: one line, exit 2, no file written
check_one() {   # name expected-line-pattern args...
    name=$1 pat=$2
    shift 2
    "$COLLSIM" "$@" >o.txt 2>e.txt
    st=$?
    if [ $st -eq 2 ] && [ "$(wc -l <e.txt)" -eq 1 ] && grep -q "$pat" e.txt; then ok "$name"; else
        bad "$name: status $st: $(cat e.txt)"; fi
}
check_one tp-does-not-divide '^collsim: --tp: tp = 3' step --topo dgx-h100 --arch llama3-8b --tp 3
check_one unknown-arch "^collsim: --arch: unknown model 'gpt5'" step --topo dgx-h100 --arch gpt5
check_one sweep-flag '^collsim: step: Unknown option -b' step --topo dgx-h100 --arch llama3-8b -b 1M
printf '[collective]\nminbytes = 1M\n[workload]\narch = llama3-8b\n' >sw.ini
check_one sweep-key '^sw.ini:2: minbytes: does not apply to collsim step' step --topo dgx-h100 sw.ini
check_one trace-analytic '^collsim: --trace: the analytic model has no timeline' step --topo dgx-h100 \
    --arch llama3-8b --trace t.json
printf '[workload]\narch = llama3-8b\n' >w.ini
check_one run-refuses-workload '^w.ini:2: arch: \[workload\] describes a step' run w.ini
printf '[topology]\npreset = dgx-h100\n[workload]\narch = custom\nlayers = 2\nhidden = 64\nheads = 4\ntp = 16\n' >c.ini
check_one key-origin '^c.ini:8: tp: ' step c.ini
check_one no-workload '^collsim: step: no \[workload\]' step --topo dgx-h100
# a check against a preset's shape names the key the user set
check_one preset-shape '^collsim: --heads: hidden = 4096 is not a multiple of heads = 12' step --topo dgx-h100 \
    --arch llama3-8b --heads 12
printf '[workload]\narch = llama3-8b\nlayers = 6\n' >l.ini
check_one plan-key-origin '^collsim: --pp: pp = 4 does not divide layers = 6' step --topo dgx-h100 l.ini --pp 4
check_one layer-list-arch '^collsim: --layer-params: a layer list has no transformer shapes' step \
    --topo dgx-h100 --arch llama3-8b --layer-params 1M,2M
check_one ep-dense '^collsim: --ep: ep = 2 needs a mixture-of-experts model' step --topo dgx-h100 --arch llama3-8b --ep 2
check_one infer-dp '^collsim: --mode: mode = infer decodes on one model replica' step --topo dgx-h100 \
    --arch llama3-8b --mode infer
check_one too-small '^collsim: the workload.s TP reducescatter of 32 B on 8 ranks' step --topo dgx-h100 --hidden 16 \
    --heads 8 --layers 2 --vocab 8 --tp 8 --seq-len 1 --sequence-parallel on
# an unwritable --svg fails before anything is written, and an existing
# --json stays as it was
echo keep >j.json
"$COLLSIM" step --topo dgx-h100 --arch llama3-8b --json j.json --svg /nonexistent/dir/s.svg >o.txt 2>e.txt
st=$?
[ $st -eq 2 ] && [ "$(wc -l <e.txt)" -eq 1 ] && [ "$(cat j.json)" = keep ] && [ ! -s o.txt ] \
    && ok nothing-half-written || bad "half-written: status $st: $(cat e.txt)"
# keys nothing would read are refused, not ignored
check_one params-with-shapes '^collsim: --params: the model.s shapes give its parameters' step --topo dgx-h100 \
    --arch llama3-8b --params 1B
check_one top-k-dense '^collsim: --top-k: a dense model' step --topo dgx-h100 --arch llama3-8b --top-k 2
check_one batch-in-training '^collsim: --batch: an inference key' step --topo dgx-h100 --arch llama3-8b --batch 8
check_one target-without-tp '^collsim: --target-allreduce: tp = 1 makes no tensor-parallel all-reduce' step --topo dgx-h100 --arch llama3-8b --target-allreduce 0.5ms
check_one target-bare-number "^collsim: --target-allreduce: '0.5' has no unit; expected a latency target with its unit, such as 0.5ms" step --topo dgx-h100 --arch llama2-70b --mode infer --tp 8 --target-allreduce 0.5
check_one units-with-ddp '^collsim: --fsdp-units: DDP has no FSDP units' step --topo dgx-h100 --arch llama3-8b \
    --fsdp-units 4
check_one efficiency-with-tflops '^collsim: --efficiency: tflops gives' step --topo dgx-h100 --arch llama3-8b \
    --tflops 400 --efficiency 0.4
# a run that would not fit is refused before it runs, at once (exit 3)
"$COLLSIM" step --topo dgx-h100 --nodes 1024 --arch llama3-8b --model flow --max-memory 1G >o.txt 2>e.txt
st=$?
# (after the warning that plain DDP of 8B does not fit an 80 GB GPU)
[ $st -eq 3 ] && [ "$(grep -vc '^collsim: warning: memory: ' e.txt)" -eq 1 ] && \
    tail -n 1 e.txt | grep -q '^collsim: --model flow on 1024 nodes needs about' \
    && ok memory-refused || bad "memory: status $st: $(cat e.txt)"
# a TP group wider than a node is said so
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --layers 2 --tp 16 >o.txt 2>e.txt
grep -q '^collsim: warning: --tp: tp = 16 is more than a node.s 8 GPUs' e.txt && ok tp-spans-nodes \
    || bad "tp across nodes: $(cat e.txt)"
# a model known by its layers has samples, not tokens
"$COLLSIM" step --topo dgx-h100 --nodes 2 --layer-params 9.4K,37K,2.4M --micro-batch 32 --seq-len 1 \
    --layer-time 0.2ms >o.txt 2>e.txt && grep -q '^# throughput .* samples/s (512 samples per step' o.txt \
    && ok samples || bad "samples: $(grep throughput o.txt) $(cat e.txt)"
# what a GPU holds against its memory: plain DDP of 8B on an 80 GiB H100 is
# warned of (16 bytes a parameter), FSDP over 16 GPUs fits and says how much
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b >o.txt 2>e.txt
grep -q "^collsim: warning: memory: one GPU holds about 119.7 GiB (8.03e+09 local parameters x 16 B: .*more than the NVIDIA H100 80GB HBM3's 80 GiB: the plan does not fit as set" e.txt \
    && grep -q '^# warning: memory: one GPU holds about 119.7 GiB' o.txt && ok memory-ddp-warned || bad "memory-ddp-warned: $(cat e.txt)"
# ... and the JSON carries the same warning
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --json st.json >/dev/null 2>&1 &&
    python3 -c 'import json,sys; d=json.load(open("st.json")); sys.exit(not any(w.startswith("memory: one GPU holds about 119.7 GiB") for w in d["warnings"]))' \
    && ok memory-warning-in-json || bad memory-warning-in-json
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --data-parallel fsdp >o.txt 2>e.txt
! grep -q 'memory' e.txt && grep -q "^# note: Memory: one GPU holds about 7.5 GiB (8.03e+09 local parameters x 16 B: .*, sharded over the 16 DP ranks) of the NVIDIA H100 80GB HBM3's 80 GiB; activations" o.txt \
    && ok memory-fsdp-note || bad "memory-fsdp-note: $(grep -i memory o.txt e.txt)"
"$COLLSIM" step --topo dgx-h100 --arch llama3-70b --tp 8 --mode infer --batch 4096 --context 4096 >o.txt 2>e.txt
grep -q 'memory: one GPU holds about 656.4 GiB (16.4 GiB of weights (8.82e+09 parameters x 2 B) and 640.0 GiB of KV cache (4096 sequences x 4096 tokens of context)), more than .*pipeline parallelism, or a smaller batch or context$' e.txt \
    && ok memory-kv-warned || bad "memory-kv-warned: $(cat e.txt)"
# a PP group's pairs inside a node and across nodes: two rows, each its own
# price, and the transports line names both
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --pp 16 >o.txt 2>e.txt
grep -q '^# transports, PP: P2P/NVL intra; NET/IB GDR inter' o.txt \
    && [ "$(grep -c '^  PP    sendrecv ' o.txt)" -eq 2 ] \
    && grep '^  PP    sendrecv .*(communicators across 2 nodes)$' o.txt | awk '{ exit !($6 == $7 && $6 > 200) }' \
    && grep '^  PP    sendrecv .*(communicators inside a node)$' o.txt | awk '{ exit !($6 == $7 && $6 < 200) }' \
    && ok pp-shapes-apart || bad "pp-shapes-apart: $(grep -e transports -e '^  PP' o.txt) $(cat e.txt)"
# run's alternatives key is a sweep's: refused at its line, not in --dump
printf '[topology]\npreset = dgx-h100\n[workload]\narch = llama3-8b\nlayers = 2\n[output]\nalternatives = true\n' >alt.ini
"$COLLSIM" step alt.ini >o.txt 2>e.txt
[ $? -eq 2 ] && grep -q '^alt.ini:7: ' e.txt && [ "$(wc -l <e.txt)" -eq 1 ] && ok step-refuses-alternatives \
    || bad "step-refuses-alternatives: $(cat e.txt)"
"$COLLSIM" step --topo dgx-h100 --arch llama3-8b --layers 2 --dump >o.txt 2>e.txt && ! grep -q alternatives o.txt \
    && ok step-dump-no-alternatives || bad "step-dump-no-alternatives: $(grep alternatives o.txt)"
# one PP boundary whose pairs sit both inside a node and across nodes (3
# nodes, 4 stages of 6 GPUs): each row is its own shape's mean, not a blend
"$COLLSIM" step --topo dgx-h100 --nodes 3 --arch llama3-8b --pp 4 >o.txt 2>e.txt
[ "$(grep -c '^  PP    sendrecv ' o.txt)" -eq 2 ] && grep '^  PP    sendrecv ' o.txt | awk '{ if ($6 != $7) exit 1 }' \
    && ok pp-shapes-per-instance || bad "pp-shapes-per-instance: $(grep '^  PP' o.txt)"
# sequence parallelism needs a tensor-parallel group and a training sequence
"$COLLSIM" step --topo dgx-h100 --arch llama2-70b --mode infer --tp 8 --batch 8 --sequence-parallel on >sp1.txt 2>sp1.err
r1=$?
"$COLLSIM" step --topo dgx-h100 --nodes 2 --arch llama3-8b --sequence-parallel on >sp2.txt 2>sp2.err
r2=$?
[ $r1 = 2 ] && [ $r2 = 2 ] && [ ! -s sp1.txt ] && [ ! -s sp2.txt ] &&
    grep -q '^collsim: --sequence-parallel: sequence-parallel = on splits a training sequence.s activations .*decode step' sp1.err &&
    grep -q '^collsim: --sequence-parallel: .*tp = 1 has none; expected sequence-parallel = off (or tp above 1)' sp2.err \
    && ok sequence-parallel-refused || bad "sequence-parallel-refused ($r1 $r2: $(cat sp1.err sp2.err))"

# the caveat a sweep notes with its sizes comes with the step's calls too
# (NVLSTree across nodes at mid sizes: DDP buckets of an 8-node H100 step)
"$COLLSIM" step --topo dgx-h100 --nodes 8 --arch llama3-8b > ap.txt 2>&1 &&
    grep -q '^# note: approximate for allreduce of [0-9]* [KM]iB.*: NVLSTree across nodes at mid sizes' ap.txt &&
    [ "$(grep -c 'approximate for' ap.txt)" -eq 1 ] && ok step-approximate-said || bad "step-approximate-said ($(grep -c approximate ap.txt))"
exit $fail
