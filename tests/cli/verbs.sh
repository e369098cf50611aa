#!/bin/sh
# collsim real --verbs: option errors (exit 2, one line), the machine
# without an RDMA device (exit 1, one clear line), and, where this machine
# has an ACTIVE RDMA port, a loopback run (server and client on this host,
# over the NIC) of the bandwidth and latency tests. The parts that need
# hardware say so and are skipped (exit 77 if nothing else ran). The loopback
# is numeric (127.0.0.1): a minimal Debian's /etc/hosts may lack "localhost".
set -u
: "${COLLSIM:?}" "${top_srcdir:?}"

if ! "$COLLSIM" real --verbs --help 2>/dev/null | grep -q -- '--gid-index'; then
    echo "SKIP: this collsim has no 'real --verbs' (built without rdma-core, or the command is not wired in)"
    exit 77
fi

tmp=$(mktemp -d) || exit 1
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 1
fail=0

# expect NAME RC STDERR-PATTERN -- ARGS...
expect() {
    name=$1 want_rc=$2 pattern=$3
    shift 4
    "$COLLSIM" real "$@" >out.txt 2>err.txt
    rc=$?
    if [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL $name: exit $rc, expected $want_rc"; cat err.txt; fail=1; return
    fi
    if [ -n "$pattern" ] && ! grep -qF -- "$pattern" err.txt; then
        echo "FAIL $name: stderr lacks '$pattern':"; cat err.txt; fail=1; return
    fi
    if [ "$want_rc" -eq 2 ] && [ "$(wc -l <err.txt)" -ne 1 ]; then
        echo "FAIL $name: expected one line on stderr:"; cat err.txt; fail=1; return
    fi
    echo "ok $name"
}

# ---- bad input: exit 2 before any device is touched ----------------------------
expect both 2 "--server and --client both given" -- --verbs --server --client x
expect neither 2 "expected --server" -- --verbs
expect port 2 "collsim: --port: '0' is not a TCP port" -- --verbs --client x --port 0
expect sl 2 "collsim: --sl: '16' is not a service level" -- --verbs --client x --sl 16
expect tc 2 "collsim: --tc: 'abc'" -- --verbs --client x --tc abc
expect ibdev 2 "has no valid port" -- --verbs --client x --ib-dev mlx5_0:z
expect server-plan 2 "the server takes its plan from the client" -- --verbs --server --all
expect all-replay 2 "expected one of them" -- --verbs --client x --all --topo dgx-h100 --nodes 2
# the replay's plan is checked before any device or peer
expect one-node 2 "expected --nodes 2 or more" -- --verbs --client x --topo dgx-h100
expect no-scenario 2 "no-such.ini" -- --verbs --client x --scenario no-such.ini
printf '[collective]\nminbytes = lots\n' >bad.ini
expect bad-scenario 2 "bad.ini:2:" -- --verbs --client x --scenario bad.ini

# ---- the machine ------------------------------------------------------------------
ndev=0
[ -d /sys/class/infiniband ] && ndev=$(ls /sys/class/infiniband 2>/dev/null | wc -l)
if [ "$ndev" -eq 0 ]; then
    expect no-device 1 "collsim: real --verbs: no RDMA device found (ibv_get_device_list returned none); needs an InfiniBand or RoCE NIC" \
        -- --verbs --client 127.0.0.1
    [ "$(wc -l <err.txt)" -eq 1 ] || { echo "FAIL no-device: expected one line"; fail=1; }
    [ -s out.txt ] && { echo "FAIL no-device: wrote to stdout"; fail=1; }
    echo "SKIP (needs an RDMA device): loopback bandwidth/latency run and scenario replay"
    exit $fail
fi

active=$(cat /sys/class/infiniband/*/ports/*/state 2>/dev/null | grep -c ACTIVE)
if [ "$active" -eq 0 ]; then
    echo "SKIP (needs an ACTIVE RDMA port): loopback run ($ndev device(s), none ACTIVE)"
    exit $fail
fi

# ---- loopback through the NIC: server and client on this host -----------------------
port=$((20000 + $$ % 20000))
"$COLLSIM" real --verbs --server --port "$port" >server.txt 2>server.err &
server_pid=$!
sleep 1
expect loopback 0 "" -- --verbs --client 127.0.0.1 --port "$port" --size 4096 --bw-iters 200 --lat-iters 200 --report-gbits
grep -q 'BW average\[Gb/sec\]' out.txt || { echo "FAIL loopback: no bandwidth table"; cat out.txt; fail=1; }
grep -q '99% percentile\[usec\]' out.txt || { echo "FAIL loopback: no latency table"; cat out.txt; fail=1; }
grep -q 'measurement (verbs-write)' out.txt || { echo "FAIL loopback: no collsim table"; cat out.txt; fail=1; }
wait "$server_pid" || { echo "FAIL loopback: server exit $?"; cat server.err; fail=1; }
server_pid=

port=$((port + 1))
"$COLLSIM" real --verbs --server --port "$port" >server.txt 2>server.err &
server_pid=$!
sleep 1
expect replay 0 "" -- --verbs --client 127.0.0.1 --port "$port" --topo dgx-h100 --nodes 2 -b 1M -e 4M -f 2 -n 2 -w 1
grep -q 'measurement (verbs-replay)' out.txt || { echo "FAIL replay: no replay table"; cat out.txt; fail=1; }
wait "$server_pid" || { echo "FAIL replay: server exit $?"; cat server.err; fail=1; }
server_pid=
exit $fail
