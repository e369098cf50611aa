# Labs 9 and 10: a summary of the "fabric" gauges of a collsim --trace file
# (--model packet): for each link and priority, how long its sender was
# paused and its egress queue's maximum. The engine samples the gauges every
# simulated microsecond and writes a value when it changes, so times are to
# the microsecond. Usage: awk -f docs/labs/data/trace-fabric.awk TRACE.json
/"cat":"fabric"/ && /"ph":"C"/ {
    name = $0; sub(/.*"name":"/, "", name); sub(/".*/, "", name)
    ts = $0; sub(/.*"ts":/, "", ts); sub(/,.*/, "", ts)
    v = $0; sub(/.*"args":\{"[a-z]*":/, "", v); sub(/\}.*/, "", v)
    if (name ~ /^paused /) {
        link = substr(name, 8)
        if (on[link]) paused[link] += ts - since[link]
        on[link] = v + 0 > 0; since[link] = ts; seen[link] = 1
    } else if (name ~ /^queue /) {
        link = substr(name, 7)
        if (!(link in qmax) || v + 0 > qmax[link]) qmax[link] = v + 0
    }
}
END {
    for (l in seen) printf "paused %9.1f us  %s\n", paused[l], l
    for (l in qmax) printf "queue  %9d B   %s\n", qmax[l], l
}
