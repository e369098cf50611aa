#!/bin/sh
# Events per second of collsim's packet network and of ns-3 on the same
# lossy incast on this machine, measured in this run (issue #11 item 10:
# collsim >= 10x ns-3). The incast of tests/cli/ns3-crosscheck.sh, longer:
# 8 senders at 100 Gb/s into one port, a 200-packet drop-tail buffer, 1024-B
# RoCE payloads, 10 ms simulated. Each program times its own event loop
# (set-up excluded); best of three runs each, as the machine is shared.
# An "event" is what each simulator's scheduler executes: the two count
# different work per packet, so the wall time for the same simulated
# incast is printed too (packets simulated per second).
# Usage: bench-ns3.sh BUILDDIR
set -u
b=${1:-.}
args="--senders=8 --buffer-pkts=200 --payload=1024 --rate-gbps=100 --time-us=10000"
if [ ! -x "$b/tests/ns3/incast-ns3" ]; then
    echo "bench-ns3: ns-3 was not configured (see configure's summary): nothing to compare"
    exit 0
fi
# best NAME PROG: the run with the most events per second of three
best() {
    for i in 1 2 3; do
        # shellcheck disable=SC2086
        "$2" $args || exit 1
    done | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                  if (v["events_per_s"] + 0 > bestv) { bestv = v["events_per_s"] + 0; line = $0 } }
                END { print line }'
}
c=$(best collsim "$b/tests/ns3/incast-collsim") || exit 1
n=$(best ns3 "$b/tests/ns3/incast-ns3") || exit 1
printf '%s\n%s\n' "$c" "$n" | awk '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[NR, kv[1]] = kv[2] } }
    END {
        printf "incast 8:1, 100 Gb/s, 10 ms simulated, 200-packet drop-tail buffer\n"
        for (r = 1; r <= 2; r++)
            printf "  %-8s %9d events in %.3f s: %11.0f events/s; %d packets sent, %d delivered, %d dropped\n",
                   v[r, "model"], v[r, "events"], v[r, "wall_s"], v[r, "events_per_s"],
                   v[r, "sent"], v[r, "delivered"], v[r, "dropped"]
        printf "  events/s ratio collsim/ns-3: %.1fx (target >= 10x)\n", v[1, "events_per_s"] / v[2, "events_per_s"]
        printf "  wall time ratio ns-3/collsim for the same incast: %.1fx\n", v[2, "wall_s"] / v[1, "wall_s"]
    }'
