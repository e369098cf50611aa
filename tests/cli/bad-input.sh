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
check op-is-redop exact "collsim: --op: unknown collective 'sum'; expected one of broadcast, reduce, allgather, reducescatter, allreduce (the reduction is -o/--redop)" -- run $H --op sum
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
check bad-nic prefix "collsim: --nic: unknown NIC type 'ib-qdr'; expected one of " -- run $H --nic ib-qdr

# NCCL environment and model
check env-not-nccl exact "collsim: --env: 'FOO=1' is not an NCCL variable setting; expected NCCL_NAME=VALUE" -- run $H --env FOO=1
check env-no-value exact "collsim: --env: 'NCCL_ALGO' is not an NCCL variable setting; expected NCCL_NAME=VALUE" -- run $H --env NCCL_ALGO
check env-bad-value prefix "--env: NCCL_ALGO=Bogus" -- run $H --env NCCL_ALGO=Bogus --json out.json
check unknown-model prefix "collsim: --model: unknown model 'flowx'; expected one of " -- run $H --model flowx
check missing-calibration prefix "nosuch.ini: " -- run $H --calibration nosuch.ini

# scenario files: FILE:LINE
printf '[collective]\nop = allreduce\nminbytes = 0\n' >s1.ini
check ini-value exact "s1.ini:3: minbytes: size must be at least 1 byte; got '0'" -- run s1.ini $H
printf '[topology]\npreset = dgx-h100\n[collective]\nmaxbytes = 1K\nminbytes = 1M\n' >s2.ini
check ini-range exact "s2.ini:4: maxbytes: maximum size 1024 is below the minimum size 1048576; expected at least the minimum" -- run --scenario s2.ini
printf '[topology]\npreset = dgx-h100\n[colective]\n' >s3.ini
check ini-group exact "s3.ini:3: unknown group [colective]; expected [scenario], [topology], [collective], [nccl] or [output]" -- run s3.ini
printf '[topology]\npreset = dgx-h100\n[nccl]\nNCCL_ALGO = Bogus\n[output]\njson = out.json\ncsv = out.csv\n' >s4.ini
check ini-nccl prefix "s4.ini:4: " -- run s4.ini
printf '[topology]\npreset = dgx-h100\n[collective]\nroot = 9\nop = reduce\n' >s5.ini
check ini-root exact "s5.ini:4: root: root 9 is not a rank; expected 0 to 7" -- run s5.ini
check no-scenario exact "nosuch.ini: cannot read the scenario (No such file or directory); expected a readable INI file" -- run nosuch.ini

# outputs: an unwritable --json stops everything, --csv included
check json-unwritable prefix "$tmp/no/such/dir/x.json: cannot write the file (No such file or directory)" -- run $H -b 1M -e 1M --json "$tmp/no/such/dir/x.json" --csv out.csv

# the command itself
check no-command exact "collsim: no command given; expected one of run, topo, validate, real, doctor, calibrate (collsim --help lists them)" --
check unknown-command exact "collsim: unknown command 'rnu'; expected one of run, topo, validate, real, doctor, calibrate" -- rnu
check option-first exact "collsim: unknown option '-b'; expected a command first (run, topo, validate, real, doctor, calibrate), --help or --version" -- -b 8

exit $fail
