#!/bin/sh
# collsim doctor on the captured trees in tests/data/sysfs (README there):
# transport choice, findings and exit status (0 clean, 1 errors, 2 bad
# input), NCCL_* from --env, the environment, a scenario's [nccl] and
# /etc/nccl.conf, Markdown, the topology export, determinism, odd trees.
set -u
: "${COLLSIM:?}" "${top_srcdir:?}"

trees="$top_srcdir/tests/data/sysfs"
if ! "$COLLSIM" doctor --help >/dev/null 2>&1; then
    echo "SKIP: this collsim has no doctor command"
    exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0

# expect NAME RC PATTERN -- ARGS...: exit status RC and stdout holding
# PATTERN (a fixed string; "" for none). $RUNENV ("NAME=VALUE ...") is put
# in the command's environment.
RUNENV=
expect() {
    name=$1 want_rc=$2 pattern=$3
    shift 4
    env $RUNENV "$COLLSIM" doctor "$@" >out.txt 2>err.txt
    rc=$?
    ok=1
    [ "$rc" -eq "$want_rc" ] || { echo "FAIL $name: exit $rc, expected $want_rc"; cat err.txt; ok=0; }
    if [ -n "$pattern" ] && ! grep -F -q -- "$pattern" out.txt; then
        echo "FAIL $name: stdout lacks: $pattern"
        sed 's/^/  | /' out.txt | head -40
        ok=0
    fi
    [ $ok -eq 1 ] && echo "ok $name" || fail=1
}

# bad NAME PREFIX -- ARGS...: exit 2, one stderr line starting with PREFIX,
# nothing on stdout.
bad() {
    name=$1 want=$2
    shift 3
    "$COLLSIM" doctor "$@" >out.txt 2>err.txt
    rc=$?
    ok=1
    [ "$rc" -eq 2 ] || { echo "FAIL $name: exit $rc, expected 2"; ok=0; }
    [ "$(wc -l <err.txt)" -eq 1 ] || { echo "FAIL $name: stderr is not one line"; cat err.txt; ok=0; }
    [ -s out.txt ] && { echo "FAIL $name: wrote to stdout"; ok=0; }
    case $(cat err.txt) in "$want"*) ;; *) echo "FAIL $name: stderr: $(cat err.txt)"; echo "  want: $want..."; ok=0 ;; esac
    [ $ok -eq 1 ] && echo "ok $name" || fail=1
}

I=--ignore-environment

# --- the machines as they are
expect dgx-ib 0 "NCCL will use NET/IB over 8 InfiniBand port(s) at 400 Gb/s each: mlx5_0:1, mlx5_1:1," -- --root "$trees/dgx-h100" $I
grep -F -q "Findings: 0 errors, 0 warnings, 0 notes" out.txt || { echo "FAIL dgx-clean"; fail=1; }
grep -F -q "gpu0 0000:18:00.0 -> mlx5_0:1 (PIX)" out.txt || { echo "FAIL dgx-pix"; fail=1; }
expect roce-auto 0 "NET/IB over 1 RoCE port(s) at 100 Gb/s each: mlx5_0:1 (GID 3 ::ffff:10.1.0.5 RoCE v2)" -- --root "$trees/roce-gid" $I
expect lab-socket 0 "[warning] socket-slow: NCCL's data path is a slow interface: eth0 (1 Gb/s)" -- --root "$trees/lab-1gbe" $I
expect no-peermem 0 "[warning] gdr-unavailable" -- --root "$trees/no-peermem" $I
grep -F -q "[warning] rdma-port-not-active: 1 RDMA port(s) have link but are not ACTIVE: mlx5_2:1" out.txt ||
    { echo "FAIL no-peermem-init"; fail=1; }
expect docker-mtu 0 "[warning] roce-mtu-small" -- --root "$trees/docker-roce" $I

# --- the GID trap
expect gid-0 1 "[error] gid-index-roce-v1: NCCL_IB_GID_INDEX=0 selects a RoCE v1 GID on mlx5_0:1" -- \
    --root "$trees/roce-gid" $I --env NCCL_IB_GID_INDEX=0
grep -F -q "link-local (fe80::) as well: not routed either; its address as RoCE v2 is index 1, link-local too" out.txt ||
    { echo "FAIL gid-0-both-faults"; fail=1; }
grep -F -q "usually the next index" out.txt && { echo "FAIL gid-0-next-index"; fail=1; }
expect gid-1 1 "[error] gid-index-link-local" -- --root "$trees/roce-gid" $I --env NCCL_IB_GID_INDEX=1
expect gid-2 1 "evidence: NCCL_IB_GID_INDEX=2 (--env); /sys/class/infiniband/mlx5_0/ports/1/gids/2 = ::ffff:10.1.0.5, gid_attrs/types/2 = IB/RoCE v1" -- \
    --root "$trees/roce-gid" $I --env NCCL_IB_GID_INDEX=2
grep -F -q "its address as RoCE v2 is index 3" out.txt || { echo "FAIL gid-2-v2-index"; fail=1; }
expect gid-3 0 "[note] gid-index-redundant" -- --root "$trees/roce-gid" $I --env NCCL_IB_GID_INDEX=3

# --- interfaces: prefix, exact, missing; from the environment
RUNENV=NCCL_SOCKET_IFNAME=eth
expect ifname-env 0 "evidence: NCCL_SOCKET_IFNAME=eth (environment); /sys/class/net/eth0/speed = 1000" -- \
    --root "$trees/lab-1gbe"
RUNENV=
expect ifname-missing 1 "[error] socket-ifname-missing: NCCL_SOCKET_IFNAME=eth1 matches no interface" -- \
    --root "$trees/lab-1gbe" $I --env NCCL_SOCKET_IFNAME=eth1
expect ifname-exact 1 "[error] socket-ifname-missing" -- --root "$trees/lab-1gbe" $I --env NCCL_SOCKET_IFNAME==eth
RUNENV=NCCL_SOCKET_IFNAME=eth1
expect env-ignored 0 "" -- --root "$trees/lab-1gbe" $I
RUNENV=
# settings that take NCCL off the GPUs' paths or past its safe default
expect p2p-disabled 0 "[warning] p2p-disabled: NCCL_P2P_DISABLE=1 turns off peer-to-peer between this machine's 2 GPUs" -- \
    --root "$trees/roce-gid" $I --env NCCL_P2P_DISABLE=1
expect ll128-forced 0 "[warning] ll128-forced: NCCL_PROTO forces LL128 on GPUs joined by PCIe only (rtx4090, no NVLink)" -- \
    --root "$trees/lab-1gbe" $I --env NCCL_PROTO=^LL
# A100 PCIe cards may be NVLink-bridged (not seen in sysfs): no warning
expect ll128-bridgeable 0 "" -- --root "$trees/roce-gid" $I --env NCCL_PROTO=LL128
grep -q 'll128-forced' out.txt && { echo "FAIL ll128-bridgeable: warned"; fail=1; }
expect ll128-nvswitch 0 "Findings: 0 errors, 0 warnings, 0 notes" -- --root "$trees/dgx-h100" $I --env NCCL_PROTO=LL128
expect ll128-default 0 "Findings: 0 errors, 0 warnings, 0 notes" -- --root "$trees/roce-gid" $I --env NCCL_PROTO=^LL128
expect roce-tc 0 "[note] roce-tc-priority: NCCL_IB_TC=0 puts RoCE data on DSCP 0, priority 0 under the usual map" -- \
    --root "$trees/roce-gid" $I --env NCCL_IB_TC=0
expect roce-tc-106 0 "Findings: 0 errors, 0 warnings, 0 notes" -- --root "$trees/roce-gid" $I --env NCCL_IB_TC=106
expect roce-tc-ib 0 "Findings: 0 errors, 0 warnings, 0 notes" -- --root "$trees/dgx-h100" $I --env NCCL_IB_TC=0
expect bootstrap-lo 0 "[warning] bootstrap-loopback: NCCL_SOCKET_IFNAME=lo puts NCCL's bootstrap on the loopback interface lo" -- \
    --root "$trees/roce-gid" $I --env NCCL_SOCKET_IFNAME=lo
grep -F -q "fix:      set NCCL_SOCKET_IFNAME to the interface the hosts share (this machine has: eno1, ens1f0np0)" out.txt ||
    { echo "FAIL bootstrap-lo-fix"; fail=1; }
expect ifname-docker 0 "[warning] socket-virtual-bridge" -- --root "$trees/docker-roce" $I \
    --env NCCL_IB_DISABLE=1 --env NCCL_SOCKET_IFNAME=docker0

# --- IB selection
expect ib-disabled 0 "[warning] ib-disabled-with-rdma" -- --root "$trees/docker-roce" $I --env NCCL_IB_DISABLE=1
grep -F -q "NCCL will use NET/Socket (TCP) over 1 interface(s): enp94s0f0np0 (25 Gb/s)" out.txt ||
    { echo "FAIL ib-disabled-socket"; fail=1; }
expect hca-typo 1 "[error] ib-hca-no-match: NCCL_IB_HCA=mlx4 matches no RDMA device" -- \
    --root "$trees/no-peermem" $I --env NCCL_IB_HCA=mlx4
expect hca-inactive 1 "[error] ib-hca-inactive" -- --root "$trees/no-peermem" $I --env NCCL_IB_HCA=mlx5_2
expect hca-exclude 0 "NET/IB over 1 InfiniBand port(s) at 200 Gb/s each: mlx5_1:1" -- --root "$trees/no-peermem" $I --env NCCL_IB_HCA=^mlx5_0
expect net-ib 1 "[error] net-unavailable" -- --root "$trees/lab-1gbe" $I --env NCCL_NET=IB

# --- a scenario's [nccl] section, and --env over it
cat >scen.ini <<'EOF'
[nccl]
NCCL_IB_DISABLE = 1
NCCL_TIMEOUT = 1800
EOF
expect scenario 0 "[warning] unknown-variable: NCCL_TIMEOUT is not a variable NCCL v2.28.9 reads" -- \
    --root "$trees/docker-roce" $I --scenario scen.ini
grep -F -q "NCCL_IB_DISABLE=1 (scen.ini:2)" out.txt || { echo "FAIL scenario-origin"; fail=1; }
expect scenario-env 0 "NET/IB over 1 RoCE port(s)" -- --root "$trees/docker-roce" $I --scenario scen.ini \
    --env NCCL_IB_DISABLE=0

# --- /etc/nccl.conf under the root; the environment wins over it
cp -R "$trees/no-peermem" conf-tree && chmod -R u+w conf-tree && mkdir -p conf-tree/etc
printf '# site defaults\nNCCL_IB_HCA=mlx5_9\nNCCL_DEBUG = INFO\n' >conf-tree/etc/nccl.conf
expect conf 1 "NCCL_IB_HCA=mlx5_9 (/etc/nccl.conf:2)" -- --root conf-tree $I
grep -F -q "unknown-variable: NCCL_DEBUG  is not" out.txt || { echo "FAIL conf-space-in-name"; fail=1; }
RUNENV=NCCL_IB_HCA=mlx5_0
expect conf-env 0 "NET/IB over 1 InfiniBand port(s) at 200 Gb/s each: mlx5_0:1" -- --root conf-tree
RUNENV=

# --- Markdown
expect markdown 0 "## Machine check (collsim doctor)" -- --root "$trees/roce-gid" $I --markdown
grep -F -q "| mlx5_0:1 | 4: ACTIVE | Ethernet | 100 Gb/sec (4X EDR) | ens1f0np0 |" out.txt ||
    { echo "FAIL markdown-table"; fail=1; }

# --- topology export
expect topo 0 "" -- --root "$trees/dgx-h100" $I --topology dgx.xml
grep -q '<nic id="nic7" kind="ib"' dgx.xml || { echo "FAIL topo-nics"; fail=1; }
if "$COLLSIM" topo --help >/dev/null 2>&1; then
    "$COLLSIM" topo check dgx.xml >/dev/null 2>&1 || { echo "FAIL topo-check"; fail=1; }
fi
expect topo-stdout 0 "<collsim-topology" -- --root "$trees/roce-gid" $I --topology -
grep -F -q "collsim doctor:" err.txt || { echo "FAIL topo-stdout-report"; fail=1; }
expect topo-unknown-gpu 1 "" -- --root "$trees/docker-roce" $I --topology a10.xml
[ -e a10.xml ] && { echo "FAIL topo-unknown-gpu: file written"; fail=1; }
grep -F -q -- "--gpu-model" err.txt || { echo "FAIL topo-unknown-gpu message"; fail=1; }
bad gpu-model-unknown "collsim: --gpu-model: 'bogus' is not a catalogue model; expected one of " -- \
    --root "$trees/dgx-h100" $I --gpu-model bogus
bad topology-unwritable "/nonexistent-dir/x.xml: " -- --root "$trees/dgx-h100" $I --topology /nonexistent-dir/x.xml
expect topo-assumed 0 "[note] gpu-model-assumed" -- --root "$trees/docker-roce" $I --topology a10.xml --gpu-model l40s
[ -s a10.xml ] || { echo "FAIL topo-assumed: no file"; fail=1; }

# --- odd trees and determinism
expect garbage 1 "[error] no-socket-interface" -- --root "$trees/garbage" $I
for t in dgx-h100 roce-gid lab-1gbe docker-roce no-peermem garbage; do
    "$COLLSIM" doctor --root "$trees/$t" $I >a.txt 2>&1
    "$COLLSIM" doctor --root "$trees/$t" $I >b.txt 2>&1
    cmp -s a.txt b.txt || { echo "FAIL deterministic $t"; fail=1; }
done

# --- a tree captured with tests/data/sysfs/capture.sh reads as the live machine
if [ -d /sys/class/net ] && [ -d /sys/bus/pci/devices ]; then
    sh "$trees/capture.sh" cap >/dev/null 2>&1
    "$COLLSIM" doctor $I >live.txt 2>&1
    "$COLLSIM" doctor --root cap $I 2>&1 | sed '1s|^collsim doctor: .*|collsim doctor: /|' >captured.txt
    if cmp -s live.txt captured.txt; then
        echo "ok capture"
    else
        echo "FAIL capture: the captured tree reads differently"
        diff live.txt captured.txt | head -20
        fail=1
    fi
fi

# --- a hostile tree: values holding escape sequences, newlines and tabs are
# printed as one line of printable characters; an entry whose name holds
# them is skipped (issue 13, item 6)
cp -R "$trees/roce-gid" hostile && chmod -R u+w hostile
ESC=$(printf '\033')
printf '5.15.0\n%s[2J%s[31mFAKE LINE: all good\n' "$ESC" "$ESC" >hostile/proc/sys/kernel/osrelease
printf 'RoCE v2\n[error] fake finding\n' >hostile/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/types/1
printf '4: ACTIVE%s]0;title\007\tx\n' "$ESC" >hostile/sys/class/infiniband/mlx5_0/ports/1/state
long=$(head -c 5000 /dev/zero | tr '\0' 'A')
printf '%s\n' "$long" >hostile/sys/module/nvidia/version 2>/dev/null || true
mkdir -p "hostile/sys/class/net/evil${ESC}[31m" 2>/dev/null
"$COLLSIM" doctor --root hostile $I >hostile.txt 2>&1
hrc=$?
hok=1
[ "$hrc" -le 1 ] || { echo "FAIL hostile: exit $hrc"; hok=0; }
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" hostile.txt; then
    echo "FAIL hostile: a control byte reached the report"; hok=0
fi
grep -q '^FAKE LINE' hostile.txt && { echo "FAIL hostile: a value's second line printed as a line"; hok=0; }
grep -q '^\[error\] fake finding' hostile.txt && { echo "FAIL hostile: a fake finding line"; hok=0; }
grep -q 'kernel 5\.15\.0??\[2J?\[31mFAKE LINE: all good;' hostile.txt ||
    { echo "FAIL hostile: the kernel value is not one sanitized line"; hok=0; }
grep -q 'AAAAAAAAAA' hostile.txt && ! grep -q 'A\{100\}\.\.\.;' hostile.txt &&
    { echo "FAIL hostile: a long value was not cut"; hok=0; }
grep -q 'A\{200\}' hostile.txt && { echo "FAIL hostile: a value longer than 128 characters"; hok=0; }
grep -q 'evil' hostile.txt && { echo "FAIL hostile: an entry with an escape in its name was read"; hok=0; }
[ $hok -eq 1 ] && echo "ok hostile" || { fail=1; sed 's/^/  | /' hostile.txt | head -20; }

# --- the report to a full disk: exit 3, one line
if [ -w /dev/full ]; then
    "$COLLSIM" doctor --root "$trees/roce-gid" $I >/dev/full 2>err.txt
    rc=$?
    [ $rc -eq 3 ] && [ "$(cat err.txt)" = "collsim: standard output: No space left on device" ] &&
        echo "ok full-disk" || { echo "FAIL full-disk: exit $rc, $(cat err.txt)"; fail=1; }
fi

# --- bad input
mkdir empty
bad no-root "collsim: --root: '/nonexistent/x' is not a directory" -- --root /nonexistent/x
bad no-sys "collsim: --root: empty has no sys/ directory" -- --root empty
bad env-not-nccl "collsim: --env: 'FOO=1' is not an NCCL variable setting" -- --env FOO=1
bad env-no-value "collsim: --env: 'NCCL_IB_HCA' is not an NCCL variable setting" -- --env NCCL_IB_HCA
bad extra-arg "collsim: doctor: unexpected argument 'x'" -- x
bad unknown-flag "collsim: doctor: Unknown option --frobnicate" -- --frobnicate
bad no-scenario "missing.ini" -- --root "$trees/roce-gid" --scenario missing.ini

exit $fail
