#!/bin/sh
# Copies what `collsim doctor` reads into DIR, replacing links by files
# holding their targets (see tests/data/sysfs/README).
set -u
out=${1:?usage: capture.sh DIR}
put() { mkdir -p "$out$(dirname "$1")" && cat "$1" >"$out$1" 2>/dev/null; }
link() { mkdir -p "$out$(dirname "$2")" && readlink -f "$1" >"$out$2"; }
for d in /sys/bus/pci/devices/*; do
    link "$d" "$d/.path"
    for a in class vendor device subsystem_vendor subsystem_device numa_node \
             current_link_speed current_link_width max_link_speed max_link_width; do
        put "$d/$a"
    done
done
for d in /sys/class/infiniband/*; do
    [ -d "$d" ] || continue
    link "$d/device" "$d/device"
    for a in hca_type fw_ver board_id; do put "$d/$a"; done
    for p in "$d"/ports/*; do
        for a in state phys_state link_layer rate; do put "$p/$a"; done
        for g in "$p"/gids/*; do
            i=${g##*/}
            put "$g"; put "$p/gid_attrs/types/$i"; put "$p/gid_attrs/ndevs/$i"
        done
    done
done
for d in /sys/class/net/*; do
    [ -d "$d" ] || continue
    for a in ifindex type mtu speed operstate flags carrier; do put "$d/$a"; done
    [ -e "$d/device" ] && link "$d/device" "$d/device"
done
for f in /proc/net/route /proc/net/fib_trie /proc/net/if_inet6 /proc/modules /proc/cpuinfo \
         /proc/sys/kernel/osrelease /proc/driver/nvidia/version /sys/module/nvidia/version \
         /sys/module/nvidia_peermem/version /sys/kernel/mm/memory_peers/nv_mem/version \
         /sys/kernel/mm/memory_peers/nv_mem_nc/version /etc/nccl.conf \
         /proc/self/status /sys/devices/system/cpu/online; do
    [ -r "$f" ] && put "$f"
done
exit 0
