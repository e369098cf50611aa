# Shared by packet.sh and packet-ib.sh (sourced after lib.sh, in $tmp).

# time column ($6) of each size of a table
col_times() { grep -v '^#' "$1" | awk '{print $6}'; }

# agree_with_flow PCT_RING PCT_DEFAULT: on $T with 4 nodes, 1 MiB to 256
# MiB, the flow and packet engines' times with NCCL_ALGO=Ring and with
# NCCL's default, each size within its percent; leaves
# {flow,packet}-{Ring,default}.txt for later checks.
agree_with_flow() {
    for algo in Ring default; do
        env=""
        [ "$algo" = Ring ] && env="--env NCCL_ALGO=Ring"
        for m in flow packet; do
            # shellcheck disable=SC2086
            "$COLLSIM" run $T --nodes 4 $env --model "$m" -b 1M -e 256M -f 4 >"$m-$algo.txt" 2>"$m-$algo.err" \
                || bad "run-$m-$algo ($(cat "$m-$algo.err"))"
            col_times "$m-$algo.txt" >"$m-$algo.t"
        done
        pct=$1
        [ "$algo" = default ] && pct=$2
        paste "packet-$algo.t" "flow-$algo.t" | awk -v p="$pct" '
            { n++; d = ($1 - $2) / $2; if (d < 0) d = -d; if (d * 100 > p) { print "  " $0 " differs by " d * 100 "%"; b = 1 } }
            END { exit (n != 5 || b) }' && ok "agrees-with-flow-$algo ($pct%)" || bad "agrees-with-flow-$algo"
    done
}
