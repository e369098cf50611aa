#!/bin/sh
# The packet network against ns-3 on a lossy incast (issue #11 item 9), as
# tests/cli/simgrid.sh checks the flow engine against SimGrid.
#
# The incast (tests/ns3/incast-collsim.c on cs_pkt_net, tests/ns3/incast-ns3.cc
# in ns-3; their comments say how the two are made the same): N = 4 and 8
# senders streaming at line rate without congestion control -> one switch ->
# one receiver, 100 Gb/s links of 500 ns, 1024-B RoCE payloads (1106 wire
# bytes in both: 88480 ps each), a 200-packet buffer at the bottleneck, no
# PFC. Run 1: drop-tail. Run 2: RED/ECN marking with Kmin 100, Kmax 300
# packets, Pmax 0.2 (the queue then sits at the buffer, 200 packets, where
# p = 0.2 x (200 - 100) / 200 = 0.1).
#
# Checked, with a third, analytic check beside the two simulators:
# - goodput (packets delivered by T): the bottleneck is busy from the first
#   arrival, so delivered = floor((T - 2 (t + d)) / t) + 1 with t = 88480 ps
#   and d = 500 ns. Both within 0.1% of it and of each other: both simulators
#   serialize the same bytes in the same integer picoseconds, so they can
#   only differ by the order of events at one instant (a packet or two;
#   0.1% is 22 packets at 2 ms).
# - drops: every arrival the buffer cannot hold, so drops = arrivals -
#   delivered - buffer - packets on the last wire, with arrivals N x
#   floor((T - d) / t) and ceil((t + d) / t) packets on the wire: once the
#   buffer is full, (N - 1)/N of what arrives. Both within 0.1% of it and
#   of each other (where the buffer's last packet is counted: one packet).
# - ECN marks, which the two decide differently on purpose:
#   collsim marks each packet independently with p(q) at dequeue, q the
#   queue including the packet (200 packets here): delivered packets marked
#   p = 0.1 of the time, checked within 4 binomial standard deviations plus
#   the fill (packets before the queue reached Kmin are never marked).
#   ns-3's RedQueueDisc (Floyd and Jacobson 1993, its default Wait) marks at
#   enqueue on the disc's packets (K - 2 for the one admitted after each
#   departure, K - 1 for the others, which then overflow) and spaces marks
#   by the count c of arrivals since the last: none while c p < 1, then
#   p / (2 - c p). The fraction of arrivals it marks is computed below from
#   that rule's Markov chain over (c, arrival position in the period) and
#   checked within 3%. Which arrival is admitted is phase-locked (the senders
#   are in step), so the marked fraction of delivered packets lies between
#   the chain's value for the admitted position and its mean over
#   arrivals; checked with 3% slack on each side.
set -u
: "${top_builddir:?}"
b=$top_builddir/tests/ns3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
ok() { echo "ok $1"; }
bad() { echo "FAIL $1"; fail=1; }

have_ns3=no
grep -q '^#define HAVE_NS3 1' "$top_builddir/config.h" && have_ns3=yes
[ -x "$b/incast-collsim" ] || { echo "FAIL incast-collsim not built"; exit 1; }
[ "$have_ns3" = no ] || [ -x "$b/incast-ns3" ] || { echo "FAIL incast-ns3 not built"; exit 1; }

# key FILE KEY: the value of KEY= on the line in FILE
key() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }
# within A B REL: |A - B| <= REL x B
within() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= r * b) }'; }

T=2000 K=200 D=500
common="--payload=1024 --rate-gbps=100 --prop-ns=$D --buffer-pkts=$K"
red="--kmin-pkts=100 --kmax-pkts=300 --pmax=0.2"

# ns-3's RED (Wait): expected marked fraction of arrivals, and of the
# admitted position, from the chain over (count, position mod N).
ns3_red_model() {
    awk -v N="$1" -v K="$K" -v kmin=100 -v kmax=300 -v pmax=0.2 '
    function haz(c, p) { if (c * p < 1) return 0; if (c * p < 2) return p / (2 - c * p); return 1 }
    BEGIN {
        for (j = 0; j < N; j++) P[j] = pmax * ((j == 0 ? K - 2 : K - 1) - kmin) / (kmax - kmin)
        C = int(2 / P[0]) + 3
        for (c = 1; c <= C; c++) for (j = 0; j < N; j++) pi[c, j] = 1 / (C * N)
        for (it = 0; it < 3000; it++) {
            for (c = 1; c <= C; c++) for (j = 0; j < N; j++) nx[c, j] = 0
            for (c = 1; c <= C; c++) for (j = 0; j < N; j++) {
                h = haz(c, P[j]); jn = (j + 1) % N
                nx[1, jn] += pi[c, j] * h
                if (c < C) nx[c + 1, jn] += pi[c, j] * (1 - h)
            }
            for (c = 1; c <= C; c++) for (j = 0; j < N; j++) pi[c, j] = nx[c, j]
        }
        for (c = 1; c <= C; c++) { m0 += pi[c, 0] * haz(c, P[0]); t0 += pi[c, 0]
                                   for (j = 0; j < N; j++) ma += pi[c, j] * haz(c, P[j]) }
        printf "%.6f %.6f\n", m0 / t0, ma
    }'
}

for N in 4 8; do
    # ---- drop-tail ----------------------------------------------------------
    # shellcheck disable=SC2086
    "$b/incast-collsim" --senders=$N $common --time-us=$T >c$N.txt 2>c$N.err || bad "collsim-$N ($(cat c$N.err))"
    read -r exp_del exp_drop <<EOF
$(awk -v N=$N -v T=$T -v K=$K -v D=$D 'BEGIN {
    t = 88480; d = D * 1000; T *= 1e6
    del = int((T - 2 * (t + d)) / t) + 1
    arr = N * int((T - d) / t)
    wire = int((t + d + t - 1) / t)
    print del, arr - del - K - wire }')
EOF
    cd_=$(key c$N.txt delivered) cdr=$(key c$N.txt dropped)
    within "$cd_" "$exp_del" 0.001 && ok "collsim-$N goodput: $cd_ packets, $(key c$N.txt goodput_gbps) Gb/s (analytic $exp_del)" \
        || bad "collsim-$N goodput: $cd_ packets, analytic $exp_del"
    within "$cdr" "$exp_drop" 0.001 && ok "collsim-$N drops: $cdr (analytic $exp_drop)" \
        || bad "collsim-$N drops: $cdr, analytic $exp_drop"
    # ---- RED/ECN ------------------------------------------------------------
    # shellcheck disable=SC2086
    "$b/incast-collsim" --senders=$N $common $red --time-us=5000 >cr$N.txt 2>cr$N.err || bad "collsim-red-$N ($(cat cr$N.err))"
    # shellcheck disable=SC2086
    "$b/incast-collsim" --senders=$N $common $red --time-us=5000 >cr$N.again 2>&1
    [ "$(sed 's/ wall_s=.*//' cr$N.txt)" = "$(sed 's/ wall_s=.*//' cr$N.again)" ] && ok "collsim-red-$N repeats" \
        || bad "collsim-red-$N repeats"
    cm=$(key cr$N.txt marked) cdel=$(key cr$N.txt delivered)
    # p = 0.1; the fill: K / (N - 1) departures, none marked below Kmin
    awk -v m="$cm" -v n="$cdel" -v N=$N -v K=$K 'BEGIN { p = 0.1; e = n * p
        sd = sqrt(n * p * (1 - p)); fill = K / (N - 1) * p
        d = m - e; if (d < 0) d = -d; exit !(d <= 4 * sd + fill) }' \
        && ok "collsim-red-$N marks: $cm of $cdel delivered (p = 0.1)" \
        || bad "collsim-red-$N marks: $cm of $cdel delivered, expected p = 0.1"
    [ "$have_ns3" = yes ] || continue

    # ---- ns-3 ---------------------------------------------------------------
    # shellcheck disable=SC2086
    "$b/incast-ns3" --senders=$N $common --time-us=$T >n$N.txt 2>n$N.err || bad "ns3-$N ($(cat n$N.err))"
    nd=$(key n$N.txt delivered) ndr=$(key n$N.txt dropped)
    [ "$(key n$N.txt ser_ps)" = 88480 ] && [ "$(key n$N.txt wire)" = "$(key c$N.txt wire)" ] \
        && ok "ns3-$N same frame: $(key n$N.txt wire) B in 88480 ps" || bad "ns3-$N frame ($(cat n$N.txt))"
    within "$nd" "$exp_del" 0.001 && within "$nd" "$cd_" 0.001 \
        && ok "ns3-$N goodput: $nd packets, $(key n$N.txt goodput_gbps) Gb/s (collsim $cd_)" \
        || bad "ns3-$N goodput: $nd packets, collsim $cd_, analytic $exp_del"
    within "$ndr" "$exp_drop" 0.001 && within "$ndr" "$cdr" 0.001 \
        && ok "ns3-$N drops: $ndr (collsim $cdr)" || bad "ns3-$N drops: $ndr, collsim $cdr, analytic $exp_drop"
    # shellcheck disable=SC2086
    "$b/incast-ns3" --senders=$N $common $red --time-us=5000 >nr$N.txt 2>nr$N.err || bad "ns3-red-$N ($(cat nr$N.err))"
    read -r m_adm m_arr <<EOF
$(ns3_red_model $N)
EOF
    nm=$(key nr$N.txt marked) ndel=$(key nr$N.txt delivered)
    nma=$(key nr$N.txt marked_arrivals) narr=$(key nr$N.txt arrivals)
    within "$ndel" "$cdel" 0.001 && within "$(key nr$N.txt dropped)" "$(key cr$N.txt dropped)" 0.001 \
        && ok "ns3-red-$N goodput and drops as collsim's: $ndel, $(key nr$N.txt dropped)" \
        || bad "ns3-red-$N goodput/drops: $ndel/$(key nr$N.txt dropped), collsim $cdel/$(key cr$N.txt dropped)"
    within "$(awk -v a="$nma" -v n="$narr" 'BEGIN { print a / n }')" "$m_arr" 0.03 \
        && ok "ns3-red-$N marks $nma of $narr arrivals (model $m_arr)" \
        || bad "ns3-red-$N marks $nma of $narr arrivals, model $m_arr"
    awk -v m="$nm" -v n="$ndel" -v lo="$m_adm" -v hi="$m_arr" 'BEGIN { f = m / n
        exit !(f >= lo * 0.97 && f <= hi * 1.03) }' \
        && ok "ns3-red-$N marks $nm of $ndel delivered (model $m_adm..$m_arr; collsim $cm, p = 0.1)" \
        || bad "ns3-red-$N marks $nm of $ndel delivered, model $m_adm..$m_arr"
done

if [ "$have_ns3" = no ]; then
    [ "$fail" -eq 0 ] || exit 1
    echo "skip: ns-3 not configured (collsim's analytic checks above passed)"
    exit 77
fi
exit $fail
