#!/bin/sh
# Runs `collsim validate` for every configuration of the validation
# manifest whose data file is present, and writes the report
# (docs/validation.md) and one plot per configuration (`collsim validate
# --svg`: measured against model:analytic) in the directory named as the
# report without ".md" (docs/validation/), which the report links. Run by
# `make validation`.
#
#   run.sh COLLSIM MANIFEST DATA_DIR OUTPUT
#
# The report and plots depend only on the inputs: same collsim, manifest
# and data, same bytes (no dates, no absolute paths, manifest order). The
# plot directory holds only what this script writes: its old .svg files
# are replaced by this run's.
set -eu

if [ $# -ne 4 ]; then
    echo "usage: $0 COLLSIM MANIFEST DATA_DIR OUTPUT" >&2
    exit 2
fi
collsim=$1
manifest=$2
data=$3
out=$4
plots=${out%.md}
mdir=$(cd "$(dirname "$manifest")" && pwd)
if [ ! -d "$data" ]; then
    echo "validation: $data: no such directory; expected the shared data set (shared/data/real) beside the repository" >&2
    exit 1
fi
if [ ! -r "$manifest" ]; then
    echo "validation: $manifest: cannot read the manifest" >&2
    exit 1
fi

LC_ALL=C
export LC_ALL
# The measured runs' NCCL settings come from the manifest, not from here.
unset $(env | sed -n 's/^\(NCCL_[A-Za-z0-9_]*\)=.*/\1/p') 2>/dev/null || true

tmp=$(mktemp -d "${TMPDIR:-/tmp}/collsim-validation.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# fields are separated by the ASCII unit separator: unlike a tab, it is not
# blank to `read`, so empty fields stay in place
tab=$(printf '\037')

# The manifest as one tab-separated line per group, keys in a fixed order.
keys="file table config topo nodes gpus gpu sockets cpu p2p nvlink-bridge nic nics-per-node procs-per-node env exclude skip note visible-gpus nccl-version nccl-version-max cause cause-flags"
awk -v keys="$keys" -v manifest="$manifest" '
function fail(line, what) {
    printf "validation: %s:%d: [%s] %s\n", manifest, line, group, what > "/dev/stderr"
    bad = 1
    exit 2
}
function flush(   i, line) {
    if (group == "") return
    # a cause is modelled only for a labelled (excluded) configuration,
    # and needs both its words and its flags
    if (("cause-flags" in v) && !("exclude" in v))
        fail(at["cause-flags"], "has cause-flags but no exclude; expected a cause only on a labelled (excluded) configuration")
    if (("cause" in v) != ("cause-flags" in v))
        fail(("cause" in v) ? at["cause"] : at["cause-flags"], "has one of cause and cause-flags; expected both (the shortfall the file states, and the flags that express it)")
    line = group
    for (i = 1; i <= nk; i++) line = line "\037" ((k[i] in v) ? v[k[i]] : "")
    print line
    delete v
    delete at
}
BEGIN { nk = split(keys, k, " ") }
/^[ \t]*(#|;|$)/ { next }
/^\[.*\][ \t]*$/ { flush(); group = $0; sub(/^\[/, "", group); sub(/\][ \t]*$/, "", group); next }
{
    eq = index($0, "=")
    if (eq == 0) { printf "validation: manifest line %d: expected key = value\n", NR > "/dev/stderr"; exit 2 }
    key = substr($0, 1, eq - 1); val = substr($0, eq + 1)
    gsub(/^[ \t]+|[ \t]+$/, "", key); gsub(/^[ \t]+|[ \t]+$/, "", val)
    gsub(/\037/, " ", val)
    v[key] = val
    at[key] = NR
}
END { if (!bad) flush() }
' "$manifest" > "$tmp/manifest.tsv"

# The fields of one "# summary ..." line: n median worst at result.
summary_fields() {
    # $1 = file with collsim's output, $2 = "busbw >=1MiB" or "time <=64KiB"
    grep -F "# summary $2:" "$1" | head -n 1 | awk '{
        n = "0"; med = "-"; worst = "-"; at = "-"; res = "none"
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == "n") n = kv[2]
            else if (kv[1] == "median") med = kv[2]
            else if (kv[1] == "worst") worst = kv[2]
            else if (kv[1] == "at") at = kv[2]
            else if (kv[1] == "result") res = kv[2]
        }
        print n "\037" med "\037" worst "\037" at "\037" res
    }'
}

# The sizes an engine left out (collsim validate --skip-unsupported notes
# "skipped size N (ALGO): ..."): count and algorithms at >= 1 MiB, then at
# <= 64 KiB.
skipped_fields() {
    awk '
    function add(list, a) { return index(", " list ", ", ", " a ", ") ? list : (list == "" ? a : list ", " a) }
    /^# modelled: skipped size [0-9]+ \(/ {
        size = $5 + 0; algo = $6; gsub(/[():]/, "", algo)
        if (size >= 1048576) { nl++; al = add(al, algo) }
        if (size >= 1 && size <= 65536) { ns++; as = add(as, algo) }
    }
    END { print (nl + 0) "\037" al "\037" (ns + 0) "\037" as }' "$1"
}

# The first line of a collsim error, without the data and manifest
# directories (the report holds no absolute path).
first_line() {
    head -n 1 "$1" | sed "s|$data/||g; s|$mdir/\.\./||g; s|$mdir/||g"
}

human_size() {
    awk -v b="$1" 'BEGIN {
        if (b == "-" || b == "") { print "-"; exit }
        if (b >= 1073741824 && b % 1073741824 == 0) printf "%d GiB\n", b / 1073741824
        else if (b >= 1048576 && b % 1048576 == 0) printf "%d MiB\n", b / 1048576
        else if (b >= 1024 && b % 1024 == 0) printf "%d KiB\n", b / 1024
        else printf "%d B\n", b
    }'
}

: > "$tmp/results.tsv"
: > "$tmp/skipped.tsv"
: > "$tmp/absent.tsv"
: > "$tmp/failed.tsv"
: > "$tmp/flow.tsv"
: > "$tmp/cause.tsv"
: > "$tmp/info.tsv"
mkdir "$tmp/svg"
while IFS="$tab" read -r id file table config topo nodes gpus gpu sockets cpu p2p bridge nic nics procs env exclude skip note visible ncclv ncclvmax cause causeflags; do
    if [ -n "$skip" ]; then
        printf '%s\037%s\n' "$file" "$skip" >> "$tmp/skipped.tsv"
        continue
    fi
    if [ ! -f "$data/$file" ]; then
        printf '%s\037%s\n' "$file" "$id" >> "$tmp/absent.tsv"
        continue
    fi
    # a topology file is named relative to the manifest (a preset has no '/')
    case $topo in
    /*) ;;
    */*) topo=$mdir/$topo ;;
    esac
    set -- validate "$data/$file" --topo "$topo"
    [ -n "$table" ] && set -- "$@" --table "$table"
    [ -n "$nodes" ] && set -- "$@" --nodes "$nodes"
    [ -n "$visible" ] && set -- "$@" --visible-gpus "$visible"
    [ -n "$gpus" ] && set -- "$@" --gpus "$gpus"
    [ -n "$gpu" ] && set -- "$@" --gpu "$gpu"
    [ -n "$sockets" ] && set -- "$@" --sockets "$sockets"
    [ -n "$cpu" ] && set -- "$@" --cpu "$cpu"
    [ -n "$p2p" ] && set -- "$@" --p2p "$p2p"
    [ -n "$bridge" ] && set -- "$@" --nvlink-bridge "$bridge"
    [ -n "$nic" ] && set -- "$@" --nic "$nic"
    [ -n "$nics" ] && set -- "$@" --nics-per-node "$nics"
    [ -n "$procs" ] && set -- "$@" --procs-per-node "$procs"
    [ -n "$ncclv" ] && set -- "$@" --nccl-version "$ncclv"
    [ -n "$ncclvmax" ] && set -- "$@" --nccl-version-max "$ncclvmax"
    for kv in $env; do
        set -- "$@" --env "$kv"
    done
    # the command as the report shows it (data directory written as DATA)
    shown=$(printf '%s ' "$@" | sed "s|$data/|DATA/|; s|--topo $mdir/\.\./|--topo |; s|--topo $mdir/|--topo validation/|; s/ \$//")
    # the plot's file: the configuration's name in letters, digits, '.',
    # '-' and '_', made unique
    svg=$(printf '%s' "$id" | tr -c 'A-Za-z0-9._-' '-' | tr -s '-')
    n=1
    while [ -e "$tmp/svg/$svg.svg" ]; do
        n=$((n + 1))
        svg=$(printf '%s' "$id" | tr -c 'A-Za-z0-9._-' '-' | tr -s '-')-$n
    done
    if "$collsim" "$@" --svg "$tmp/svg/$svg.svg" > "$tmp/out" 2> "$tmp/err"; then
        bw=$(summary_fields "$tmp/out" "busbw >=1MiB")
        tm=$(summary_fields "$tmp/out" "time <=64KiB")
        nsizes=$(grep -c '^  *[0-9]' "$tmp/out" || true)
        printf '%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\n' "$id" "$file" "${table:-1}" "$config" \
            "$nsizes" "$bw" "$tm" "$exclude" "$note" "$shown" "$svg.svg" >> "$tmp/results.tsv"
        # what the table's NCCL INFO lines say, and each finding where the
        # model decided otherwise (the log's path without the data directory)
        seen=$(sed -n "s/^# measured: NCCL's INFO lines: //p" "$tmp/out" | head -n 1)
        if [ -n "$seen" ]; then
            found=$(sed -n "s/^# finding: //p" "$tmp/out" | sed "s|$data/||g" | tr '\n' '\036')
            printf '%s\037%s\037%s\037%s\n' "$id" "$exclude" "$seen" "$found" >> "$tmp/info.tsv"
        fi
    else
        msg=$(first_line "$tmp/err")
        printf '%s\037%s\037%s\037%s\037%s\n' "$id" "$file" "$exclude" "$msg" "$shown" >> "$tmp/failed.tsv"
    fi
    # A labelled run with the cause its file states (or the one it names as
    # likely): the same configuration again with the flags that express the
    # cause, reported beside the plain prediction, never instead of it.
    if [ -n "$causeflags" ]; then
        # shellcheck disable=SC2086  # the flags are words
        if "$collsim" "$@" $causeflags > "$tmp/cout" 2> "$tmp/cerr"; then
            cbw=$(summary_fields "$tmp/cout" "busbw >=1MiB")
            ctm=$(summary_fields "$tmp/cout" "time <=64KiB")
            cmsg=""
        else
            cbw="0$tab-$tab-$tab-${tab}none"
            ctm=$cbw
            cmsg=$(first_line "$tmp/cerr")
            [ -n "$cmsg" ] || cmsg="collsim stopped without a message"
        fi
        printf '%s\037%s\037%s\037%s\037%s\037%s\n' "$id" "$cause" "$causeflags" "$cbw" "$ctm" "$cmsg" >> "$tmp/cause.tsv"
    fi
    # The flow engine on the same configuration, same flags: the sizes it
    # cannot price (an algorithm it does not model) are left out and named.
    if "$collsim" "$@" --model flow --skip-unsupported > "$tmp/fout" 2> "$tmp/ferr"; then
        fbw=$(summary_fields "$tmp/fout" "busbw >=1MiB")
        ftm=$(summary_fields "$tmp/fout" "time <=64KiB")
        fsk=$(skipped_fields "$tmp/fout")
        fmsg=""
    else
        fbw="0$tab-$tab-$tab-${tab}none"
        ftm=$fbw
        fsk="0$tab${tab}0$tab"
        fmsg=$(first_line "$tmp/ferr")
        # a crash says nothing on stderr: the report must not read it as "no sizes"
        [ -n "$fmsg" ] || fmsg="collsim --model flow stopped without a message"
    fi
    printf '%s\037%s\037%s\037%s\037%s\037%s\n' "$id" "$exclude" "$fbw" "$ftm" "$fsk" "$fmsg" >> "$tmp/flow.tsv"
done < "$tmp/manifest.tsv"

# ---- the report ---------------------------------------------------------------
{
cat <<'EOF'
# Validation against published nccl-tests runs

Generated by `make validation` (validation/run.sh) from validation/manifest.ini and
the published runs in `shared/data/real`; do not edit by hand.

## Method

- **Measured**: the nccl-tests tables of each file as published (`collsim validate`
  reads the text table or `-J` JSON). The out-of-place columns are compared; the
  in-place columns are not used.
- **Modelled**: `collsim validate FILE --topo PRESET ...` with the flags listed per
  configuration: the topology from a preset with the hardware the file's header
  states (or, for machines no preset builds, a topology file in `topologies/`
  written from the header and the run's NCCL INFO lines: the DGX-2 and the AMD
  EPYC Turin RTX PRO 6000 server, each file saying what it takes from where),
  and the NCCL variables the header states for that run. The model is
  `model:analytic` with its built-in parameters; nothing is fitted per file, and the
  manifest holds no measured number or correction.
- **SHARP (CollNet)**: the three coreweave SHARP runs are modelled with
  `NCCL_COLLNET_ENABLE=1` (and `NCCL_ALGO=COLLNETCHAIN` where the header sets
  it) on the presets' InfiniBand NICs; collsim assumes Quantum switches with
  SHARP and the SHARP plugin there (the header's "# collnet:" line). The
  decisions are NCCL v2.28.9's (the runs used 2.12, 2.14 and 2.18.1, whose CollNet
  tuning differed: 2.14 had a 0.75 factor on CollNetChain); the time is the
  mechanism (heads' slices up the aggregation tree and back, NVLink to the
  heads), with NCCL's own CollNet latency (tuning.cc, 31/30 us) and no fitted
  number.
- **Errors**: (predicted - measured) / measured, per size. Bus bandwidth is judged at
  sizes >= 1 MiB, time at sizes <= 64 KiB; the busbw error is computed from the two
  times (t_measured / t_predicted - 1), which is the busbw error without the
  rounding of the printed busbw column.
- **Targets**: a configuration passes when the median |busbw error| at >= 1 MiB is
  <= 10 %, and the median |time error| at <= 64 KiB is <= 25 %. The worst error is
  shown beside each median.
- **Plots**: each configuration's name links to its plot (`collsim validate
  --svg`): measured (solid) against model:analytic (dashed) bus bandwidth and time
  over size on log axes, shaded where a prediction meets the target at that size
  (busbw within ±10 % of the measurement at >= 1 MiB, time within ±25 % at <= 64 KiB).
- **Counted**: configurations whose file has no status label. Files labelled
  MISCONFIG, UNDERPERFORMING, PATHOLOGICAL, DEGRADED or PARTIAL, whose header
  leaves the hardware open, or whose run did what collsim does not price and
  the evidence shows it (each says why in the manifest's `exclude`: processes
  bound to one core, an old nccl-tests's misaligned chunks; `collsim validate`
  names both in a finding), are shown for the "why is it slow" story but not
  counted.

## Results

| configuration | table | sizes | busbw >= 1 MiB: median / worst (n) | | time <= 64 KiB: median / worst (n) | |
|---|---|---|---|---|---|---|
EOF
while IFS="$tab" read -r id file table config nsizes bn bmed bworst bat bres tn tmed tworst tat tres exclude note shown svg; do
    mark=""
    [ -n "$exclude" ] && mark=" (not counted)"
    if [ "$bn" = "0" ]; then b="no sizes"; else b="$bmed / $bworst at $(human_size "$bat") ($bn)"; fi
    if [ "$tn" = "0" ]; then t="no sizes"; else t="$tmed / $tworst at $(human_size "$tat") ($tn)"; fi
    printf '| [%s](%s/%s)%s | %s | %s | %s | %s | %s | %s |\n' "$id" "${plots##*/}" "$svg" "$mark" "$table" "$nsizes" \
        "$b" "$bres" "$t" "$tres"
done < "$tmp/results.tsv"

echo
echo "## Overall"
echo
awk -F "$tab" '
function pct(s) { sub(/%/, "", s); return s + 0 }
function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$16 != "" { next }
{
    if ($6 != "0") { nb++; mb[nb] = pct($7); if ($10 == "pass") pb++ }
    if ($11 != "0") { nt++; mt[nt] = pct($12); if ($15 == "pass") pt++ }
}
END {
    printf "Counted configurations (no label):\n\n"
    if (nb > 0) printf "- bus bandwidth, sizes >= 1 MiB: %d of %d pass (median |error| <= 10 %%); median of the medians %.1f %%\n", pb, nb, median(mb, nb)
    else printf "- bus bandwidth, sizes >= 1 MiB: no configuration has such sizes\n"
    if (nt > 0) printf "- time, sizes <= 64 KiB: %d of %d pass (median |error| <= 25 %%); median of the medians %.1f %%\n", pt, nt, median(mt, nt)
    else printf "- time, sizes <= 64 KiB: no configuration has such sizes\n"
}' "$tmp/results.tsv"

echo
echo "## Flow engine beside the analytic model"
echo
cat <<'EOF'
The same configurations and flags (the commands below, with `--model flow
--skip-unsupported` added): the flow engine (docs/model-flow.md) simulates the
data movement of each call with its built-in parameters. Sizes at which NCCL would run an algorithm the flow engine does not model are
left out and shown as "n/a (ALGO not in the flow engine)"; the median and
worst are over the sizes it priced (n), so a flow median is not over the same
sizes as the analytic one when some were left out. Same targets as above.

| configuration | busbw >= 1 MiB: analytic | busbw >= 1 MiB: flow, median / worst (n) | time <= 64 KiB: analytic | time <= 64 KiB: flow, median / worst (n) |
|---|---|---|---|---|
EOF
# joined with the analytic results by configuration (manifest order)
awk -F "$tab" '
function hs(b) {
    if (b >= 1073741824 && b % 1073741824 == 0) return sprintf("%d GiB", b / 1073741824)
    if (b >= 1048576 && b % 1048576 == 0) return sprintf("%d MiB", b / 1048576)
    if (b >= 1024 && b % 1024 == 0) return sprintf("%d KiB", b / 1024)
    return sprintf("%d B", b)
}
function cell(n, med, worst, at, res, nskip, algos, whole, analytic_n,   s) {
    if (whole != "") return (analytic_n == "0") ? "no sizes" : "n/a (" whole " not in the flow engine)"
    if (n == "0" && nskip > 0) return "n/a (" algos " not in the flow engine)"
    if (n == "0") return "no sizes"
    s = med " / " worst " at " hs(at) " (" n ") " res
    if (nskip > 0) s = s "; " nskip " more sizes n/a (" algos " not in the flow engine)"
    return s
}
FNR == NR { abn[$1] = $6; abm[$1] = $7; abr[$1] = $10; atn[$1] = $11; atm[$1] = $12; atr[$1] = $15; next }
{
    id = $1; mark = ($2 != "") ? " (not counted)" : ""
    whole = ""
    if ($17 != "") {
        # the engine priced no size: its message names what it does not model
        if (match($17, /does not model [^(]*[(]/)) whole = substr($17, RSTART + 15, RLENGTH - 17)
        else whole = "-"
    }
    if (id in abn) {
        ab = (abn[id] == "0") ? "no sizes" : abm[id] " " abr[id]
        at = (atn[id] == "0") ? "no sizes" : atm[id] " " atr[id]
    } else { ab = "failed"; at = "failed" }
    if (whole == "-") { fb = "failed: `" $17 "`"; ft = fb }
    else {
        fb = cell($3, $4, $5, $6, $7, $13, $14, whole, (id in abn) ? abn[id] : "1")
        ft = cell($8, $9, $10, $11, $12, $15, $16, whole, (id in atn) ? atn[id] : "1")
    }
    printf "| %s%s | %s | %s | %s | %s |\n", id, mark, ab, fb, at, ft
}' "$tmp/results.tsv" "$tmp/flow.tsv"
echo
awk -F "$tab" '
function pct(s) { sub(/%/, "", s); return s + 0 }
function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function na(conf, sizes) {
    if (conf == 0 && sizes == 0) return "; every size priced"
    return sprintf("; %d configurations n/a (no such size priced), %d more sizes n/a in the priced ones", conf, sizes)
}
FNR == NR { abn[$1] = $6; atn[$1] = $11; next }
$2 != "" { next }
{
    # n/a: sizes in the range that the flow engine left out (all of them
    # when it priced none and the analytic model had some)
    if ($3 != "0") { nb++; mb[nb] = pct($4); if ($7 == "pass") pb++ }
    else if ($13 > 0 || ($17 != "" && abn[$1] != "0")) xb++
    if ($8 != "0") { nt++; mt[nt] = pct($9); if ($12 == "pass") pt++ }
    else if ($15 > 0 || ($17 != "" && atn[$1] != "0")) xt++
    sb += $13; st += $15
}
END {
    printf "Flow engine, counted configurations (no label):\n\n"
    if (nb > 0) printf "- bus bandwidth, sizes >= 1 MiB: %d of %d priced configurations pass (median |error| <= 10 %%); median of the medians %.1f %%%s\n", pb, nb, median(mb, nb), na(xb, sb)
    else printf "- bus bandwidth, sizes >= 1 MiB: no configuration priced%s\n", na(xb, sb)
    if (nt > 0) printf "- time, sizes <= 64 KiB: %d of %d priced configurations pass (median |error| <= 25 %%); median of the medians %.1f %%%s\n", pt, nt, median(mt, nt), na(xt, st)
    else printf "- time, sizes <= 64 KiB: no configuration priced%s\n", na(xt, st)
}' "$tmp/results.tsv" "$tmp/flow.tsv"

echo
echo "## Misses"
echo
awk -F "$tab" '
function hs(b) {
    if (b >= 1073741824 && b % 1073741824 == 0) return sprintf("%d GiB", b / 1073741824)
    if (b >= 1048576 && b % 1048576 == 0) return sprintf("%d MiB", b / 1048576)
    if (b >= 1024 && b % 1024 == 0) return sprintf("%d KiB", b / 1024)
    return sprintf("%d B", b)
}
$16 == "" && ($10 == "miss" || $15 == "miss") {
    any = 1
    printf "- **%s** (table %s):", $1, $3
    if ($10 == "miss") printf " bus bandwidth median %s, worst %s at %s;", $7, $8, hs($9)
    if ($15 == "miss") printf " time median %s, worst %s at %s;", $12, $13, hs($14)
    printf " %s\n", $4
}
END { if (!any) print "None among the counted configurations." }' "$tmp/results.tsv"
if [ -s "$tmp/failed.tsv" ]; then
    echo
    echo "Configurations collsim could not validate (counted as misses unless labelled):"
    echo
    while IFS="$tab" read -r id file exclude msg shown; do
        printf -- '- **%s**: `%s`\n' "$id" "$msg"
    done < "$tmp/failed.tsv"
fi

echo
echo "## Not counted (labelled, or hardware not fully stated)"
echo
awk -F "$tab" '$16 != "" { printf "- **%s**: %s. Bus bandwidth %s, time %s.\n", $1, $16, ($6 == "0" ? "-" : $7 " (" $10 ")"), ($11 == "0" ? "-" : $12 " (" $15 ")"); any = 1 }
END { if (!any) print "None." }' "$tmp/results.tsv"

echo
echo "## Labelled runs with their cause modelled"
echo
cat <<'EOF'
Where a labelled (not counted) file states why its run fell short, or names the
likely cause itself, the configuration is modelled a second time with the
flags that express that cause (manifest key `cause-flags`), beside the plain
prediction of a healthy run. A cause is **explained** when the prediction with
it meets the targets, **partly** when it brings a median error down, and none
up, without meeting them, and **not** otherwise. The cause is the file's; nothing here is
fitted, and the counted results above do not use these runs.

| configuration | cause (from the file) | modelled with | busbw >= 1 MiB: healthy / with the cause | time <= 64 KiB: healthy / with the cause | explained |
|---|---|---|---|---|---|
EOF
awk -F "$tab" '
function pct(s) { sub(/%/, "", s); return s + 0 }
function cell(n, med, res, cn, cmed, cres) {
    if (n == "0" && cn == "0") return "no sizes"
    return (n == "0" ? "-" : med " (" res ")") " / " (cn == "0" ? "-" : cmed " (" cres ")")
}
FNR == NR { bn[$1] = $6; bm[$1] = $7; br[$1] = $10; tn[$1] = $11; tm[$1] = $12; tr[$1] = $15; next }
$14 != "" { k++; printf "| %s | %s | `%s` | collsim failed: `%s` | | not |\n", $1, $2, $3, $14; next }
{
    id = $1; k++
    # closer: some median comes down and none goes up
    pass = 1; down = 0; up = 0; any = 0
    if ($4 != "0") {
        any = 1; if ($8 != "pass") pass = 0
        if (bn[id] != "0") { if (pct($5) < pct(bm[id])) down = 1; else if (pct($5) > pct(bm[id])) up = 1 }
    }
    if ($9 != "0") {
        any = 1; if ($13 != "pass") pass = 0
        if (tn[id] != "0") { if (pct($10) < pct(tm[id])) down = 1; else if (pct($10) > pct(tm[id])) up = 1 }
    }
    v = !any ? "not" : pass ? "explained" : (down && !up) ? "partly" : "not"
    if (v == "explained") e++; else if (v == "partly") pa++
    printf "| %s | %s | `%s` | %s | %s | %s |\n", id, $2, $3, cell(bn[id], bm[id], br[id], $4, $5, $8),
        cell(tn[id], tm[id], tr[id], $9, $10, $13), v
}
END {
    if (!k) { print "| none | | | | | |"; exit }
    printf "\nLabelled configurations with a cause modelled: %d; explained by it: %d; partly: %d.\n", k, e + 0, pa + 0
}' "$tmp/results.tsv" "$tmp/cause.tsv"

echo
echo "## NCCL's INFO lines against the model"
echo
cat <<'EOF'
Where a compared table's run was logged with `NCCL_DEBUG=INFO`, `collsim
validate` holds what NCCL printed (each connection's transport, the network,
GPUDirect RDMA, the channel count, rank 0's rings) against the model's
decisions for the same configuration (collsim(1), validate): each
disagreement is a finding.

EOF
awk -F "$tab" '
{
    k++
    printf "- **%s**%s: %s.", $1, $2 != "" ? " (not counted)" : "", $3
    n = split($4, f, "\036")
    if (n <= 1 && f[1] == "") { print " The model decides the same."; next }
    printf " Findings:\n"
    for (i = 1; i <= n; i++) if (f[i] != "") printf "  - %s\n", f[i]
}
END { if (!k) print "None of the compared tables has INFO lines." }' "$tmp/info.tsv"

echo
echo "## Notes"
echo
awk -F "$tab" '$17 != "" { printf "- **%s**: %s\n", $1, $17; any = 1 } END { if (!any) print "None." }' "$tmp/results.tsv"

echo
echo "## Skipped files"
echo
echo "| file | why |"
echo "|---|---|"
while IFS="$tab" read -r file why; do
    printf '| %s | %s |\n' "$file" "$why"
done < "$tmp/skipped.tsv"
if [ -s "$tmp/absent.tsv" ]; then
    echo
    echo "Data files named by the manifest but absent:"
    echo
    while IFS="$tab" read -r file id; do
        printf -- '- %s (%s)\n' "$file" "$id"
    done < "$tmp/absent.tsv"
fi

echo
echo "## Commands"
echo
echo "Each configuration was run as (DATA = shared/data/real):"
echo
echo '```'
awk -F "$tab" '{ printf "collsim %s\n", $18 }' "$tmp/results.tsv"
awk -F "$tab" '{ printf "collsim %s\n", $5 }' "$tmp/failed.tsv"
echo '```'
} > "$tmp/report.md"

mkdir -p "$(dirname "$out")"
# the plots: this run's replace the directory's old ones (a configuration
# renamed or removed leaves no stale plot)
mkdir -p "$plots"
for f in "$plots"/*.svg; do
    [ -e "$f" ] && [ ! -e "$tmp/svg/${f##*/}" ] && rm -f "$f"
done
for f in "$tmp/svg"/*.svg; do
    [ -e "$f" ] || continue
    cp "$f" "$plots/${f##*/}.tmp"
    mv "$plots/${f##*/}.tmp" "$plots/${f##*/}"
done
cp "$tmp/report.md" "$out.tmp"
mv "$out.tmp" "$out"
echo "validation: wrote $out and $(ls "$tmp/svg" | wc -l) plots in $plots"
