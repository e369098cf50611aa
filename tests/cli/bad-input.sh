#!/bin/sh
# Bad input to `collsim` and `collsim run`: each case must exit 2, print
# exactly one line on stderr (the expected one, or one starting with the
# expected prefix), nothing on stdout, and leave no --json/--csv file.
set -u
: "${COLLSIM:?}" "${top_srcdir:?}"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0

# check NAME MODE EXPECTED -- ARGS...   (MODE: exact | prefix)
check() {
    name=$1 mode=$2 want=$3
    shift 4
    "$COLLSIM" "$@" >out.txt 2>err.txt
    rc=$?
    lines=$(wc -l <err.txt)
    got=$(cat err.txt)
    ok=1
    [ "$rc" -eq 2 ] || { echo "FAIL $name: exit $rc, expected 2"; ok=0; }
    [ "$lines" -eq 1 ] || { echo "FAIL $name: $lines stderr lines, expected 1"; ok=0; }
    [ -s out.txt ] && { echo "FAIL $name: wrote to stdout"; ok=0; }
    case $mode in
    exact) [ "$got" = "$want" ] || { echo "FAIL $name: stderr"; echo "  got:  $got"; echo "  want: $want"; ok=0; } ;;
    prefix) case $got in "$want"*) ;; *) echo "FAIL $name: stderr"; echo "  got:  $got"; echo "  want: $want..."; ok=0 ;; esac ;;
    esac
    for f in out.json out.csv; do
        [ -e "$f" ] && { echo "FAIL $name: $f written"; ok=0; rm -f "$f"; }
    done
    [ $ok -eq 1 ] && echo "ok $name" || fail=1
}

H="--topo dgx-h100"

# nccl-tests flags
check b-zero exact "collsim: -b: size must be at least 1 byte; got '0'" -- run $H -b 0
check b-text exact "collsim: -b: 'abc' is not a size; expected a number with optional K, M or G" -- run $H -b abc
check e-below-b exact "collsim: -e: maximum size 1024 is below the minimum size 1048576; expected at least the minimum" -- run $H -b 1M -e 1K
check b-above-default exact "collsim: -b: minimum size 67108864 is above the maximum size 33554432 (default 32M); expected at most the maximum (set -e too)" -- run $H -b 64M
check f-zero exact "collsim: -f: 0 is out of range; expected a whole step factor of at least 1" -- run $H -f 0
check f-fraction exact "collsim: -f: '1.5' is not a whole number; expected a whole step factor of at least 1" -- run $H -f 1.5
check i-too-many exact "collsim: -i: the sweep from 1 to 1073741824 bytes has more than 10000 sizes; expected a larger step (or -f 2)" -- run $H -b 1 -e 1G -i 1
check n-zero exact "collsim: -n: 0 is out of range; expected a number of iterations of at least 1" -- run $H -n 0
check long-flag exact "collsim: --maxbytes: 'x' is not a size; expected a number with optional K, M or G" -- run $H --maxbytes x
check d-all exact "collsim: -d: unknown data type 'all'; expected one of int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16, f8e4m3, f8e5m2" -- run $H -d all
check op-is-redop exact "collsim: --op: unknown collective 'sum'; expected one of broadcast, reduce, allgather, reducescatter, allreduce, sendrecv, alltoall (the reduction is -o/--redop)" -- run $H --op sum
check root-not-rank exact "collsim: -r: root 8 is not a rank; expected 0 to 7" -- run $H --op broadcast -r 8
check g-zero exact "collsim: -g: 0 is out of range; expected a number of GPUs per node of at least 1" -- run $H -g 0
check g-too-many prefix "collsim: --gpus: " -- run $H -g 16
check t-zero exact "collsim: -t: '0' is not a thread count; expected a whole number from 1 to 1024" -- run $H -t 0
check missing-arg exact "collsim: run: Missing argument for -b; expected the options of 'collsim run --help'" -- run $H -b
check unknown-flag exact "collsim: run: Unknown option --bogus; expected the options of 'collsim run --help'" -- run $H --bogus
check two-scenarios exact "collsim: run: unexpected argument 'b.ini'; expected at most one scenario file" -- run a.ini b.ini

# topology
check no-topology exact "collsim: no topology given; expected --topo PRESET|FILE or [topology] preset or file" -- run -b 8
check unknown-preset prefix "collsim: --topo: unknown preset 'dgx-h1000' and no such file; expected one of dgx1-v100" -- run --topo dgx-h1000
check missing-file prefix "missing.xml" -- run --topo missing.xml
check bad-fabric exact "collsim: --fabric: unknown fabric 'torus'; expected rail or fat-tree" -- run $H --nodes 2 --fabric torus
check bad-ratio exact "collsim: --oversubscription: 'x' is not a ratio; expected a number such as 2 or 2:1" -- run $H --oversubscription x
# flags that do not apply to the preset, and the limits stated once
FIXED="is a fixed machine: its GPUs, sockets and GPU links are the vendor's)"
check gpu-fixed-preset exact "collsim: --gpu: applies to the pcie preset only (dgx-h100 $FIXED; expected no --gpu with dgx-h100" -- run $H --gpu a100-pcie
check sockets-fixed-preset exact "collsim: --sockets: applies to the pcie preset only (dgx-h100 $FIXED; expected no --sockets with dgx-h100" -- run $H --sockets 1
check cpu-fixed-preset exact "collsim: --cpu: applies to the pcie preset only (dgx-h100 $FIXED; expected no --cpu with dgx-h100" -- run $H --cpu turin
check cpu-unknown exact "collsim: --cpu: unknown CPU part 'grace'; expected one of bdw, skl, icx, spr, emr, rome, genoa, turin" -- run --topo pcie --gpu l40s --cpu grace
printf '[topology]\npreset = pcie\ngpu = l40s\ncpu = zen9\n' >cpu.ini
check ini-cpu-unknown exact "cpu.ini:4: cpu: unknown CPU part 'zen9'; expected one of bdw, skl, icx, spr, emr, rome, genoa, turin" -- run cpu.ini
check p2p-fixed-preset exact "collsim: --p2p: applies to the pcie preset only (dgx-h100 $FIXED; expected no --p2p with dgx-h100" -- topo show $H --p2p off
check nodes-limit exact "collsim: --nodes: 65537 is out of range; expected a number of nodes from 1 to 65536" -- run $H --nodes 65537
check nics-limit exact "collsim: --nics-per-node: 145 is out of range; expected a number of NICs per node from 1 to 144" -- run $H --nics-per-node 145
check over-one-node exact "collsim: --oversubscription: 2 does not apply: 1 node(s) without a network fabric; expected it with --nodes above 1 and a fabric with a spine, or none" -- run $H --oversubscription 2 --json out.json
check over-one-leaf exact "collsim: --oversubscription: 4 does not apply: the fat-tree of 2 nodes is one leaf switch, with no uplinks; expected it from 5 nodes up, or none" -- run $H --nodes 2 --fabric fat-tree --oversubscription 4:1
check bad-nic prefix "collsim: --nic: unknown NIC type 'ib-qdr'; expected one of " -- run $H --nic ib-qdr

# NCCL environment and model
check env-not-nccl exact "collsim: --env: 'FOO=1' is not an NCCL variable setting; expected NCCL_NAME=VALUE" -- run $H --env FOO=1
check env-no-value exact "collsim: --env: 'NCCL_ALGO' is not an NCCL variable setting; expected NCCL_NAME=VALUE" -- run $H --env NCCL_ALGO
check env-bad-value prefix "collsim: --env: NCCL_ALGO=Bogus" -- run $H --env NCCL_ALGO=Bogus --json out.json
check dump-refused-topology prefix "collsim: --oversubscription: 2 does not apply" -- run $H --nodes 2 --fabric fat-tree --oversubscription 2 --dump
check visible-gpus-twice exact "collsim: --visible-gpus: GPU 2 is listed twice in '0-3,2'; expected each GPU once" -- run $H --visible-gpus 0-3,2
# loopback for the bootstrap: every rank publishes 127.0.0.1, no other node
# connects (one node is fine)
check socket-ifname-loopback prefix "collsim: NCCL_SOCKET_IFNAME=lo puts NCCL's bootstrap on node 0's loopback interface: every rank publishes 127.0.0.1 (bootstrap.cc), which the other nodes cannot reach" -- run $H --nodes 2 --env NCCL_SOCKET_IFNAME=lo
check socket-ifname-excludes-not-lo prefix "collsim: NCCL_SOCKET_IFNAME=^docker puts NCCL's bootstrap on node 0's loopback interface" -- run $H --nodes 2 --env NCCL_SOCKET_IFNAME=^docker
"$COLLSIM" run $H --env NCCL_SOCKET_IFNAME=lo -b 1M -e 1M >out.txt 2>err.txt && grep -q '^ *1048576 ' out.txt &&
    echo "ok socket-ifname-loopback-1node" || { echo "FAIL socket-ifname-loopback-1node: $(cat err.txt)"; fail=1; }
check socket-ifname-none prefix "collsim: NCCL_SOCKET_IFNAME=eno matches no interface of node 0 (ib0, ib1, ib2, ib3, ib4, ib5, ib6, ib7, lo); NCCL logs \"Bootstrap : no socket interface found\"" -- run $H --nodes 2 --env NCCL_SOCKET_IFNAME=eno
# the model is checked before the topology, wherever each stands
check model-before-topo prefix "collsim: --model: unknown model 'bogus'; expected one of " -- run --topo nope --model bogus
check model-before-fixed prefix "collsim: --model: unknown model 'bogus'; expected one of " -- run $H --gpu l40s --model bogus
check model-before-topo-validate prefix "collsim: --model: unknown model 'bogus'; expected one of " -- validate "$top_srcdir/tests/data/logs/two-tables.txt" --topo nope --model bogus
check model-before-topo-calibrate prefix "collsim: --model: unknown model 'bogus'; expected one of " -- calibrate "$top_srcdir/tests/data/logs/two-tables.txt" --topo nope --model bogus -o cal.ini
printf '[scenario]\nmodel = bogus\n[topology]\npreset = nope\n' >s6.ini
check model-before-topo-ini prefix "s6.ini:2: model: unknown model 'bogus'; expected one of " -- run s6.ini
check unknown-model prefix "collsim: --model: unknown model 'flowx'; expected one of " -- run $H --model flowx
# the list of models is written as every list in messages: ", " between names
"$COLLSIM" run $H --model flowx 2>&1 | grep -Eq "expected one of analytic(, [a-z]+)+$" && ok=1 || ok=0
[ $ok -eq 1 ] && echo "ok model-list-spacing" || { echo "FAIL model-list-spacing: $("$COLLSIM" run $H --model flowx 2>&1)"; fail=1; }
check missing-calibration prefix "nosuch.ini: " -- run $H --calibration nosuch.ini

# scenario files: FILE:LINE
printf '[collective]\nop = allreduce\nminbytes = 0\n' >s1.ini
check ini-value exact "s1.ini:3: minbytes: size must be at least 1 byte; got '0'" -- run s1.ini $H
printf '[topology]\npreset = dgx-h100\n[collective]\nmaxbytes = 1K\nminbytes = 1M\n' >s2.ini
check ini-range exact "s2.ini:4: maxbytes: maximum size 1024 is below the minimum size 1048576; expected at least the minimum" -- run --scenario s2.ini
printf '[topology]\npreset = pcie\ngpu = rtx3090\nnvlink-bridge = twice\n' >s7.ini
check ini-bridge exact "s7.ini:4: nvlink-bridge: unknown NVLink bridge layout 'twice'; expected none or pairs" -- run s7.ini
printf '[topology]\npreset = dgx-h100\nnvlink-bridge = pairs\n' >s8.ini
check ini-bridge-fixed exact "s8.ini:3: nvlink-bridge: applies to the pcie preset only (dgx-h100 $FIXED; expected no nvlink-bridge with dgx-h100" -- run s8.ini
printf '[topology]\npreset = dgx-h100\n[colective]\n' >s3.ini
check ini-group exact "s3.ini:3: unknown group [colective]; expected [scenario], [topology], [collective], [nccl], [fabric], [output], [workload] or [job NAME]" -- run s3.ini
# a group given twice (GKeyFile would merge the two halves)
printf '[topology]\npreset = dgx-h100\n[collective]\nop = allreduce\n[collective]\nminbytes = 1M\n' >s9.ini
check ini-group-twice exact "s9.ini:5: [collective] already appeared on line 3; expected each group once" -- run s9.ini
# several jobs, --trace, --link-stats
J='[scenario]\nmodel = flow\n[topology]\npreset = dgx-h100\nnodes = 2\n'
printf "$J[job a b]\nsize = 1M\n" >j1.ini
check job-name exact "j1.ini:6: 'a b' is not a job name; expected letters, digits, '-', '_' or '.' (up to 64)" -- run j1.ini
printf "$J[job a]\nsize = 1M\n[job a]\nsize = 2M\n" >j2.ini
check job-twice exact "j2.ini:8: [job a] already appeared on line 6; expected each job once" -- run j2.ini
printf "$J[job a]\nnodes = 0-x\n" >j3.ini
check job-nodes-syntax exact "j3.ini:7: nodes: '0-x' is not an index list; expected node indices such as 0-3,8" -- run j3.ini
printf "$J[job a]\nnodes = 5\nsize = 1M\n" >j4.ini
check job-nodes-range exact "j4.ini:7: nodes: node 5 does not exist; expected 0 to 1" -- run j4.ini
printf "$J[job a]\nnodes = 0\n" >j5.ini
check job-no-size exact "j5.ini:6: [job a] has no size; expected size = SIZE (e.g. 1G)" -- run j5.ini
printf "$J[job a]\nsize = 1M\n[job b]\nnodes = 1\nsize = 1M\n" >j6.ini
check job-overlap exact "j6.ini:8: [job b] uses machine rank 8, which [job a] uses too; expected jobs on distinct GPUs" -- run j6.ini
printf "$J[job a]\nsize = 1M\nstart = soon\n" >j7.ini
check job-start exact "j7.ini:8: start: 'soon' is not a start time; expected 0 to 1 hour such as 0, 250us or 1.5ms" -- run j7.ini
printf "$J[job a]\nsize = 1M\nbogus = 1\n" >j8.ini
check job-key exact "j8.ini:8: unknown key 'bogus' in [job a]; expected one of nodes, gpus, op, datatype, redop, root, size, start, iters or an NCCL_NAME (the job's own variable)" -- run j8.ini
printf "$J[job a]\nsize = 1M\n" >j9.ini
check job-analytic exact "collsim: --model: the analytic model cannot run several jobs at once; expected --model flow or packet" -- run j9.ini --model analytic
check trace-analytic exact "collsim: --trace: the analytic model has no timeline for a trace; expected --model flow or packet" -- run $H --trace t.json
# the analytic and flow models report link statistics; SimGrid (where built) does not
if "$COLLSIM" run $H --model simgrid -b 8 -e 8 >/dev/null 2>&1; then
    check link-stats-simgrid exact "collsim: --link-stats: the simgrid model reports no link statistics; expected --model analytic, flow or packet" -- run $H --model simgrid --link-stats
fi
check trace-unwritable prefix "nosuchdir/t.json: cannot write the file (" -- run $H --model flow -b 1M -e 1M --trace nosuchdir/t.json --json out.json
check real-jobs exact "j9.ini:6: [job a]: several jobs at once are a prediction (collsim run --model flow); expected a scenario without [job NAME] groups for collsim real" -- real j9.ini
check real-trace exact "collsim: --trace: only a simulation has a timeline; expected it with collsim run, not collsim real" -- real $H --trace t.json
check real-model exact "collsim: --model: collsim real measures, it prices nothing; expected it with collsim run (a scenario file's model, shared with run, is ignored here)" -- real $H --model flow
check real-calibration exact "collsim: --calibration: collsim real measures, it prices nothing; expected it with collsim run (a scenario file's calibration, shared with run, is ignored here)" -- real $H --calibration cal.ini
check real-alternatives exact "collsim: --alternatives: a measurement runs NCCL's own pick; expected --alternatives with collsim run (the model prices what NCCL passed over), not collsim real" -- real $H --alternatives
printf '[topology]\npreset = dgx-h100\n[nccl]\nNCCL_ALGO = Bogus\n[output]\njson = out.json\ncsv = out.csv\n' >s4.ini
check ini-nccl prefix "s4.ini:4: " -- run s4.ini
printf '[topology]\npreset = dgx-h100\n[collective]\nroot = 9\nop = reduce\n' >s5.ini
check ini-root exact "s5.ini:4: root: root 9 is not a rank; expected 0 to 7" -- run s5.ini
check no-scenario exact "nosuch.ini: cannot read the scenario (No such file or directory); expected a readable INI file" -- run nosuch.ini

# outputs: an unwritable --json stops everything, --csv included
check json-unwritable prefix "$tmp/no/such/dir/x.json: cannot write the file (No such file or directory)" -- run $H -b 1M -e 1M --json "$tmp/no/such/dir/x.json" --csv out.csv

# the command itself
check no-command prefix "collsim: no command given; expected one of run, topo, validate, " --
check unknown-command prefix "collsim: unknown command 'rnu'; expected one of run, topo, validate, " -- rnu
check option-first prefix "collsim: unknown option '-b'; expected a command first (run, topo, validate, " -- -b 8

# an output named as one of the command's own inputs is refused, the input
# untouched: the scenario under --json, a log under validate --csv or
# calibrate -o, a topology under topo dot -o
printf '[topology]\npreset = dgx-h100\n[collective]\nminbytes = 1M\nmaxbytes = 1M\n' > in.ini
cp in.ini in.orig
check out-is-scenario exact "collsim: --json: in.ini is the input file in.ini; expected another file to write" -- \
    run in.ini --json in.ini
cmp -s in.ini in.orig && echo "ok out-is-scenario-untouched" || { echo "FAIL out-is-scenario-untouched"; fail=1; }
cp "$top_srcdir/tests/data/logs/two-tables.txt" in.log
cp in.log in.log.orig
check out-is-log exact "collsim: --csv: in.log is the input file in.log; expected another file to write" -- \
    validate in.log --topo dgx-h100 --nodes 2 --gpus 2 --csv in.log
check calibrate-out-is-log exact "collsim: -o: in.log is the input file in.log; expected another file to write" -- \
    calibrate in.log --topo dgx-h100 --nodes 2 --gpus 2 -o in.log
cmp -s in.log in.log.orig && echo "ok out-is-log-untouched" || { echo "FAIL out-is-log-untouched"; fail=1; }
# sweep's workers read a grid's files in other processes: still inputs
printf '[params]\nlat.launch = 7\n' > c1.ini
printf '[params]\nlat.launch = 8\n' > c2.ini
cp c1.ini c1.orig
check sweep-out-is-grid-file exact "collsim: --output: c1.ini is the input file c1.ini; expected another file to write" -- \
    sweep --topo dgx-h100 -b 1M -e 1M --grid scenario.calibration=c1.ini,c2.ini -j 2 --format csv --output c1.ini
cmp -s c1.ini c1.orig && echo "ok sweep-grid-file-untouched" || { echo "FAIL sweep-grid-file-untouched"; fail=1; }
# calibrate -o over its own --calibration start file refines it in place
"$COLLSIM" calibrate in.log --topo dgx-h100 --nodes 2 --gpus 2 -o fit.ini >/dev/null 2>&1 &&
    "$COLLSIM" calibrate in.log --topo dgx-h100 --nodes 2 --gpus 2 --calibration fit.ini -o fit.ini >/dev/null 2>err.txt &&
    grep -q '^\[params\]' fit.ini && echo "ok calibrate-refine-in-place" ||
    { echo "FAIL calibrate-refine-in-place: $(cat err.txt)"; fail=1; }
cp "$top_srcdir/topologies/cluster-2node-rail.xml" in.xml
check out-is-topology exact "collsim: --output: in.xml is the input file in.xml; expected another file to write" -- \
    topo dot in.xml -o in.xml
check topo-empty-output exact "collsim: --output: an empty file name; expected a path to write" -- topo dot dgx-h100 -o ''
check topo-xml-empty-output exact "collsim: --output: an empty file name; expected a path to write" -- topo xml dgx-h100 -o ''
# a line break in a one-line text would start a row of the nccl-tests table
printf '[scenario]\nname = a\\n  1048576 x\n[topology]\npreset = dgx-h100\n' > nl.ini
check name-line-break exact "nl.ini:2: name: 'a\\n  1048576 x' holds a control character (a line break or tab); expected a name on one line" -- \
    run nl.ini
printf '<?xml version="1.0"?>\n<collsim-topology version="1" description="a&#10;b">\n<node><gpu id="g0" model="h100-sxm"/></node>\n</collsim-topology>\n' > nl.xml
check description-line-break exact "nl.xml:2: description holds a control character (a line break or tab); expected a one-line description" -- \
    run --topo nl.xml

# a size NCCL's tuner prices above its one-hour ceiling: refused as NCCL
# does, saying why (after the warning that such buffers do not fit)
"$COLLSIM" run --topo dgx-h100 -b 1125899906842624 -e 1125899906842624 >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] && [ ! -s out.txt ] && [ "$(tail -n 1 err.txt)" = "collsim: no algorithm available for allreduce of 1125899906842624 bytes on this topology: NCCL's tuner prices every algorithm above its one-hour ceiling (tuning.cc), and NCCL refuses such a call; expected a smaller size" ] &&
    echo "ok size-past-ceiling" || { echo "FAIL size-past-ceiling ($rc: $(cat err.txt))"; fail=1; }

# --nic over a node without NICs: what is missing is a count of them
printf '<?xml version="1.0"?>\n<collsim-topology version="1"><node><cpu id="cpu0" vendor="amd"/>\n<gpu id="gpu0" model="h100-sxm"/><link a="cpu0" b="gpu0" type="pcie"/></node></collsim-topology>\n' > nonic.xml
check nic-without-count exact "collsim: --nics-per-node: 2 nodes need a network, but the node has no NIC for --nic ib-ndr to retype; expected --nics-per-node N (NICs added to the node)" -- \
    run --topo nonic.xml --nodes 2 --nic ib-ndr -b 1M -e 1M

check calibrate-empty-output exact "collsim: -o: an empty file name; expected a path to write" -- \
    calibrate "$top_srcdir/tests/data/logs/two-tables.txt" --topo dgx-h100 --nodes 2 --gpus 2 -o ''

# a run past the flow engine's time range is refused, not priced wrongly
printf '<?xml version="1.0"?>\n<collsim-topology version="1"><node><cpu id="cpu0" vendor="amd"/>\n<gpu id="gpu0" model="l40s"/><gpu id="gpu1" model="l40s"/>\n<link a="cpu0" b="gpu0" type="pcie" bw="1Mbps"/><link a="cpu0" b="gpu1" type="pcie"/></node></collsim-topology>\n' > slow.xml
"$COLLSIM" run --topo slow.xml -b 1T -e 1T --model flow --env NCCL_ALGO=Ring >out.txt 2>err.txt
rc=$?
[ $rc -eq 2 ] && [ ! -s out.txt ] && tail -n 1 err.txt | grep -q "^collsim: size 1099511627776: the simulated time passes the flow engine's range" &&
    echo "ok flow-past-horizon" || { echo "FAIL flow-past-horizon ($rc: $(cat err.txt))"; fail=1; }

exit $fail
