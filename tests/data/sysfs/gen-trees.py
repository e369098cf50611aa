#!/usr/bin/env python3
"""Writes the captured-machine trees under tests/data/sysfs/ (see README).

Each tree holds the files `collsim doctor --root` reads, in the formats the
Linux kernel prints them. Symlinks are stood in for by plain files so the
trees survive `make dist`: a link that is only resolved is a file holding
its target; a linked directory that is also read (/sys/bus/pci/devices/BDF)
is a directory holding a `.path` file with its resolved path.

Run from anywhere: python3 tests/data/sysfs/gen-trees.py
"""
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


class Tree:
    def __init__(self, name):
        self.root = os.path.join(HERE, name)
        if os.path.isdir(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.root)
        self.addrs4 = []   # (ifname, addr, prefixlen)
        self.addrs6 = []   # (ifname, ifindex, hex32, plen, scope)

    def put(self, path, text):
        full = os.path.join(self.root, path.lstrip("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text if text.endswith("\n") or text == "" else text + "\n")

    # -- PCI -------------------------------------------------------------
    def pci(self, path, cls, vendor, device, numa, speed="16.0 GT/s PCIe", width=16,
            max_speed=None, max_width=None, subvendor=0, subdevice=0):
        """path: "/sys/devices/pci0000:15/0000:15:01.0/.../BDF" (resolved)."""
        bdf = path.rsplit("/", 1)[1]
        d = "/sys/bus/pci/devices/" + bdf
        self.put(d + "/.path", path)
        self.put(d + "/class", "0x%06x" % cls)
        self.put(d + "/vendor", "0x%04x" % vendor)
        self.put(d + "/device", "0x%04x" % device)
        self.put(d + "/subsystem_vendor", "0x%04x" % subvendor)
        self.put(d + "/subsystem_device", "0x%04x" % subdevice)
        self.put(d + "/numa_node", str(numa))
        self.put(d + "/current_link_speed", speed)
        self.put(d + "/current_link_width", str(width))
        self.put(d + "/max_link_speed", max_speed or speed)
        self.put(d + "/max_link_width", str(max_width or width))
        return path

    def bridge(self, path, numa, speed="32.0 GT/s PCIe", vendor=0x1000, device=0xc030, subdevice=0):
        return self.pci(path, 0x060400, vendor, device, numa, speed, 16,
                        subvendor=vendor if subdevice else 0, subdevice=subdevice)

    # -- RDMA ------------------------------------------------------------
    def ib(self, name, pci_path, ports, hca="MT4129", fw="28.39.1002", board="MT_0000000970"):
        d = "/sys/class/infiniband/" + name
        self.put(d + "/device", pci_path)
        self.put(d + "/hca_type", hca)
        self.put(d + "/fw_ver", fw)
        self.put(d + "/board_id", board)
        for p in ports:
            pd = "%s/ports/%d" % (d, p["num"])
            self.put(pd + "/state", p["state"])
            self.put(pd + "/phys_state", p["phys"])
            self.put(pd + "/link_layer", p["ll"])
            self.put(pd + "/rate", p["rate"])
            for i, g in enumerate(p["gids"]):
                gid, typ, ndev = g
                self.put("%s/gids/%d" % (pd, i), gid)
                if typ is not None:   # unpopulated entries: reading the type fails (EINVAL)
                    self.put("%s/gid_attrs/types/%d" % (pd, i), typ)
                if ndev is not None:
                    self.put("%s/gid_attrs/ndevs/%d" % (pd, i), ndev)

    # -- interfaces ------------------------------------------------------
    def netif(self, name, ifindex, type_=1, mtu=1500, speed=None, oper="up", flags=0x1003,
              device=None, carrier=1):
        d = "/sys/class/net/" + name
        self.put(d + "/ifindex", str(ifindex))
        self.put(d + "/type", str(type_))
        self.put(d + "/mtu", str(mtu))
        if speed is not None:   # absent = the read fails (link down, virtual device)
            self.put(d + "/speed", str(speed))
        self.put(d + "/operstate", oper)
        self.put(d + "/flags", "0x%x" % flags)
        self.put(d + "/carrier", str(carrier))
        if device is not None:
            self.put(d + "/device", device)

    def addr4(self, ifname, addr, plen):
        self.addrs4.append((ifname, addr, plen))

    def addr6(self, ifname, ifindex, hex32, plen=64, scope=0x20):
        self.addrs6.append((ifname, ifindex, hex32, plen, scope))

    def finish_net(self):
        # /proc/net/route: connected routes, the network-order word printed
        # as a little-endian host integer (x86-64).
        def word(a):
            b = [int(x) for x in a.split(".")]
            return "%02X%02X%02X%02X" % (b[3], b[2], b[1], b[0])

        def net_of(a, plen):
            b = [int(x) for x in a.split(".")]
            v = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]
            m = (0xffffffff << (32 - plen)) & 0xffffffff
            v &= m
            return ".".join(str((v >> s) & 255) for s in (24, 16, 8, 0)), \
                ".".join(str((m >> s) & 255) for s in (24, 16, 8, 0))

        lines = ["Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT"]
        trie = ["Main:", "  +-- 0.0.0.0/0 3 0 5"]
        local = ["Local:", "  +-- 0.0.0.0/0 3 0 5"]
        for ifname, addr, plen in self.addrs4:
            if addr.startswith("127."):
                local += ["     |-- 127.0.0.1", "        /32 host LOCAL"]
                continue
            net, mask = net_of(addr, plen)
            lines.append("%s\t%s\t00000000\t0001\t0\t0\t0\t%s\t0\t0\t0" % (ifname, word(net), word(mask)))
            trie += ["     +-- %s/%d 2 0 2" % (net, plen), "        |-- %s" % net,
                     "           /%d link UNICAST" % plen]
            local += ["     |-- %s" % addr, "        /32 host LOCAL"]
        self.put("/proc/net/route", "\n".join(lines))
        self.put("/proc/net/fib_trie", "\n".join(trie + local))
        self.put("/proc/net/if_inet6", "\n".join(
            "%s %02x %02x %02x %02x %8s" % (h, idx, plen, scope, 0x80, n)
            for n, idx, h, plen, scope in self.addrs6))

    def host(self, kernel, nvidia=None, peermem=False, cpu=None, modules=()):
        self.put("/proc/sys/kernel/osrelease", kernel)
        mods = list(modules)
        if nvidia is not None:
            version, open_ = nvidia
            self.put("/sys/module/nvidia/version", version)
            if open_:
                line = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  Release Build  (dvs-builder@U16-I3-B03-4-3)" % version
            else:
                line = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  %s  Thu Oct 19 18:56:32 UTC 2023" % version
            self.put("/proc/driver/nvidia/version", line + "\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)")
            mods.append("nvidia 56008704 450 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)")
        if peermem:
            self.put("/sys/module/nvidia_peermem/version", nvidia[0])
            mods.append("nvidia_peermem 16384 0 - Live 0x0000000000000000 (POE)")
        self.put("/proc/modules", "\n".join(mods))
        if cpu is not None:
            vendor, family, model, name = cpu
            self.put("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: %s\ncpu family\t: %d\nmodel\t\t: %d\n"
                     "model name\t: %s\nstepping\t: 8\n\nprocessor\t: 1\nvendor_id\t: %s\n" %
                     (vendor, family, model, name, vendor))


def ib_gid(guid):
    return "fe80:0000:0000:0000:" + guid


ZERO = "0000:0000:0000:0000:0000:0000:0000:0000"


def roce_gids(ndev, ipv4, mac_ll):
    """The kernel's table for one IPv4 address: fe80 v1, fe80 v2, ::ffff:ip v1, v2."""
    b = [int(x) for x in ipv4.split(".")]
    mapped = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(b)
    return [(mac_ll, "IB/RoCE v1", ndev), (mac_ll, "RoCE v2", ndev),
            (mapped, "IB/RoCE v1", ndev), (mapped, "RoCE v2", ndev)]


def dgx_h100():
    t = Tree("dgx-h100")
    bases = [0x15, 0x3d, 0x4d, 0x5d, 0x99, 0xbd, 0xcd, 0xdd]
    t.netif("lo", 1, type_=772, mtu=65536, oper="unknown", flags=0x9)
    t.addr4("lo", "127.0.0.1", 8)
    t.netif("eno3", 2, speed=10000, device="/sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0")
    t.pci("/sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0", 0x020000, 0x8086, 0x1563, 0, "8.0 GT/s PCIe", 4)
    t.addr4("eno3", "10.0.0.10", 24)
    t.addr6("eno3", 2, "fe80000000000000a288c2fffe000a0a")
    for k, b in enumerate(bases):
        numa = k // 4
        rc = "/sys/devices/pci0000:%02x" % b
        rp = rc + "/0000:%02x:01.0" % b
        up = rp + "/0000:%02x:00.0" % (b + 1)
        t.bridge(rp, numa, vendor=0x8086, device=0x352a)
        t.bridge(up, numa, subdevice=0x000b)   # Broadcom PEX Gen5 switch, first level
        t.bridge(up + "/0000:%02x:00.0" % (b + 2), numa, subdevice=0x100b)
        t.bridge(up + "/0000:%02x:01.0" % (b + 2), numa, subdevice=0x100b)
        gpu = t.pci(up + "/0000:%02x:00.0/0000:%02x:00.0" % (b + 2, b + 3), 0x030200, 0x10de, 0x2330, numa,
                    "32.0 GT/s PCIe", 16)
        nic = t.pci(up + "/0000:%02x:01.0/0000:%02x:00.0" % (b + 2, b + 4), 0x020700, 0x15b3, 0x1021, numa,
                    "32.0 GT/s PCIe", 16)
        guid = "a088:c203:00%02x:%04x" % (k, 0x1a58 + k)
        t.ib("mlx5_%d" % k, nic, [dict(num=1, state="4: ACTIVE", phys="5: LinkUp", ll="InfiniBand",
                                       rate="400 Gb/sec (4X NDR)",
                                       gids=[(ib_gid(guid), "IB/RoCE v1", None), (ZERO, None, None),
                                             (ZERO, None, None), (ZERO, None, None)])])
        t.netif("ib%d" % k, 3 + k, type_=32, mtu=4092, speed=400000, device=nic, flags=0x1003)
        t.addr4("ib%d" % k, "10.1.%d.10" % k, 24)
    for s in range(4):   # the NVSwitch chips' PCI functions (10de:22a3, class 0x068000)
        t.pci("/sys/devices/pci0000:00/0000:00:0%d.0/0000:%02x:00.0" % (s + 2, s + 5), 0x068000, 0x10de, 0x22a3, 0,
              "16.0 GT/s PCIe", 2)
    t.netif("docker0", 11, oper="down", flags=0x1003, carrier=0)
    t.addr4("docker0", "172.17.0.1", 16)
    t.finish_net()
    t.host("5.15.0-91-generic", nvidia=("535.129.03", False), peermem=True,
           cpu=("GenuineIntel", 6, 143, "Intel(R) Xeon(R) Platinum 8480CL"))


def roce_gid():
    t = Tree("roce-gid")
    rp = "/sys/devices/pci0000:00/0000:00:01.0"
    up = rp + "/0000:01:00.0"
    t.bridge(rp, 0, "16.0 GT/s PCIe", vendor=0x1022, device=0x1483)
    t.bridge(up, 0, "16.0 GT/s PCIe", vendor=0x10b5, device=0x8747)
    for i, dev in enumerate(("08", "10", "18")):
        t.bridge(up + "/0000:02:%s.0" % dev, 0, "16.0 GT/s PCIe", vendor=0x10b5, device=0x8747)
    g0 = t.pci(up + "/0000:02:08.0/0000:03:00.0", 0x030200, 0x10de, 0x20b5, 0)
    g1 = t.pci(up + "/0000:02:10.0/0000:04:00.0", 0x030200, 0x10de, 0x20b5, 0)
    nic = t.pci(up + "/0000:02:18.0/0000:05:00.0", 0x020000, 0x15b3, 0x101d, 0)
    mac_ll = "fe80:0000:0000:0000:ba3f:d2ff:fe12:3456"
    gids = roce_gids("ens1f0np0", "10.1.0.5", mac_ll) + [(ZERO, None, None)] * 4
    t.ib("mlx5_0", nic, [dict(num=1, state="4: ACTIVE", phys="5: LinkUp", ll="Ethernet",
                              rate="100 Gb/sec (4X EDR)", gids=gids)], hca="MT4125", fw="22.36.1010")
    t.netif("lo", 1, type_=772, mtu=65536, oper="unknown", flags=0x9)
    t.addr4("lo", "127.0.0.1", 8)
    t.netif("eno1", 2, speed=1000, device="/sys/devices/pci0000:00/0000:00:08.1/0000:0a:00.0")
    t.pci("/sys/devices/pci0000:00/0000:00:08.1/0000:0a:00.0", 0x020000, 0x14e4, 0x165f, 0, "5.0 GT/s PCIe", 1)
    t.addr4("eno1", "192.168.1.10", 24)
    t.addr6("eno1", 2, "fe800000000000001e34dafffe5a1b2c")
    t.netif("ens1f0np0", 4, mtu=9000, speed=100000, device=nic)
    t.addr4("ens1f0np0", "10.1.0.5", 24)
    t.addr6("ens1f0np0", 4, "fe80000000000000ba3fd2fffe123456")
    t.finish_net()
    t.host("5.15.0-91-generic", nvidia=("535.129.03", False), peermem=True,
           cpu=("AuthenticAMD", 25, 1, "AMD EPYC 7543 32-Core Processor"))


def lab_1gbe():
    t = Tree("lab-1gbe")
    rc = "/sys/devices/pci0000:00"
    for bus, rp in ((1, "01.1"), (2, "01.2")):
        t.bridge(rc + "/0000:00:%s" % rp, -1, "16.0 GT/s PCIe", vendor=0x1022, device=0x14db)
        t.pci(rc + "/0000:00:%s/0000:%02x:00.0" % (rp, bus), 0x030000, 0x10de, 0x2684, -1, "2.5 GT/s PCIe", 16,
              "16.0 GT/s PCIe", 16)   # idle GPUs train down to 2.5 GT/s; the width stays
        t.pci(rc + "/0000:00:%s/0000:%02x:00.1" % (rp, bus), 0x040300, 0x10de, 0x22ba, -1)   # HDMI audio
    eth = t.pci(rc + "/0000:00:1f.6", 0x020000, 0x8086, 0x15bc, -1, "2.5 GT/s PCIe", 1)
    t.netif("lo", 1, type_=772, mtu=65536, oper="unknown", flags=0x9)
    t.addr4("lo", "127.0.0.1", 8)
    t.netif("eth0", 2, speed=1000, device=eth)
    t.addr4("eth0", "192.168.10.20", 24)
    t.addr6("eth0", 2, "fe80000000000000021e67fffe8c7b2a")
    t.finish_net()
    t.host("6.8.0-45-generic", nvidia=("550.107.02", True), peermem=False,
           cpu=("AuthenticAMD", 25, 97, "AMD Ryzen 9 7950X 16-Core Processor"))


def docker_ib_disabled():
    t = Tree("docker-roce")
    t.bridge("/sys/devices/pci0000:3a/0000:3a:00.0", 0, "8.0 GT/s PCIe", vendor=0x8086, device=0x2030)
    t.pci("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0x030200, 0x10de, 0x2236, 0, "8.0 GT/s PCIe", 16)
    t.bridge("/sys/devices/pci0000:5d/0000:5d:00.0", 0, "8.0 GT/s PCIe", vendor=0x8086, device=0x2030)
    nic = t.pci("/sys/devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0", 0x020000, 0x15b3, 0x1015, 0,
                "8.0 GT/s PCIe", 8)
    mac_ll = "fe80:0000:0000:0000:0e42:a1ff:fe6e:0b90"
    t.ib("mlx5_0", nic, [dict(num=1, state="4: ACTIVE", phys="5: LinkUp", ll="Ethernet",
                              rate="25 Gb/sec (1X EDR)",
                              gids=roce_gids("enp94s0f0np0", "172.16.0.7", mac_ll))],
         hca="MT4117", fw="14.32.1010")
    t.netif("lo", 1, type_=772, mtu=65536, oper="unknown", flags=0x9)
    t.addr4("lo", "127.0.0.1", 8)
    t.netif("eno1", 2, oper="down", flags=0x1003, carrier=0,
            device="/sys/devices/pci0000:00/0000:00:1c.0/0000:01:00.0")
    t.netif("enp94s0f0np0", 3, mtu=1500, speed=25000, device=nic)
    t.addr4("enp94s0f0np0", "172.16.0.7", 16)
    t.addr6("enp94s0f0np0", 3, "fe800000000000000e42a1fffe6e0b90")
    t.netif("docker0", 5, oper="up", flags=0x1003)
    t.addr4("docker0", "172.17.0.1", 16)
    t.addr6("docker0", 5, "fe80000000000000004202fffe4c3d11")
    t.finish_net()
    t.host("5.4.0-150-generic", nvidia=("470.223.02", False), peermem=False,
           cpu=("GenuineIntel", 6, 85, "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz"))


def no_peermem():
    t = Tree("no-peermem")
    t.netif("lo", 1, type_=772, mtu=65536, oper="unknown", flags=0x9)
    t.addr4("lo", "127.0.0.1", 8)
    mg = t.pci("/sys/devices/pci0000:00/0000:00:03.1/0000:01:00.0", 0x020000, 0x8086, 0x1563, 0, "8.0 GT/s PCIe", 4)
    t.netif("enp1s0", 2, speed=10000, device=mg)
    t.addr4("enp1s0", "10.0.0.21", 24)
    for s, b in enumerate((0x40, 0xc0)):
        rp = "/sys/devices/pci0000:%02x/0000:%02x:01.1" % (b, b)
        up = rp + "/0000:%02x:00.0" % (b + 1)
        t.bridge(rp, s, "16.0 GT/s PCIe", vendor=0x1022, device=0x1483)
        t.bridge(up, s, "16.0 GT/s PCIe", vendor=0x1000, device=0xc010)
        for port in ("00", "04", "08"):
            t.bridge(up + "/0000:%02x:%s.0" % (b + 2, port), s, "16.0 GT/s PCIe", vendor=0x1000, device=0xc010)
        t.pci(up + "/0000:%02x:00.0/0000:%02x:00.0" % (b + 2, b + 3), 0x030200, 0x10de, 0x20b0, s)
        t.pci(up + "/0000:%02x:04.0/0000:%02x:00.0" % (b + 2, b + 4), 0x030200, 0x10de, 0x20b0, s)
        nic = t.pci(up + "/0000:%02x:08.0/0000:%02x:00.0" % (b + 2, b + 5), 0x020700, 0x15b3, 0x101b, s)
        guid = "1070:fd03:00%02x:5c2e" % s
        t.ib("mlx5_%d" % s, nic, [dict(num=1, state="4: ACTIVE", phys="5: LinkUp", ll="InfiniBand",
                                       rate="200 Gb/sec (4X HDR)",
                                       gids=[(ib_gid(guid), "IB/RoCE v1", None), (ZERO, None, None)])],
             hca="MT4123", fw="20.37.1014")
        t.netif("ib%d" % s, 3 + s, type_=32, mtu=4092, speed=200000, device=nic)
        t.addr4("ib%d" % s, "10.1.%d.21" % s, 24)
    # a third HCA whose link is up but which no subnet manager has configured
    t.bridge("/sys/devices/pci0000:00/0000:00:03.2", 0, "16.0 GT/s PCIe", vendor=0x1022, device=0x1483)
    nic2 = t.pci("/sys/devices/pci0000:00/0000:00:03.2/0000:02:00.0", 0x020700, 0x15b3, 0x101b, 0,
                 "8.0 GT/s PCIe", 8, "16.0 GT/s PCIe", 16)
    t.ib("mlx5_2", nic2, [dict(num=1, state="2: INIT", phys="5: LinkUp", ll="InfiniBand",
                               rate="200 Gb/sec (4X HDR)",
                               gids=[(ib_gid("1070:fd03:0002:5c2e"), "IB/RoCE v1", None)])],
         hca="MT4123", fw="20.37.1014")
    t.netif("ib2", 5, type_=32, mtu=4092, oper="down", flags=0x1003, carrier=0, device=nic2)
    t.finish_net()
    t.host("5.4.0-150-generic", nvidia=("470.223.02", False), peermem=False,
           cpu=("AuthenticAMD", 23, 49, "AMD EPYC 7742 64-Core Processor"))


def garbage():
    """Odd and broken files: every reader must cope."""
    t = Tree("garbage")
    d = "/sys/bus/pci/devices/0000:01:00.0"
    t.put(d + "/.path", "../../../../../../../../..")
    t.put(d + "/class", "0xZZ0302")
    t.put(d + "/vendor", "0x10de")
    t.put(d + "/device", "banana")
    t.put(d + "/numa_node", "99999999999999999999")
    t.put(d + "/current_link_speed", "Unknown")
    t.put(d + "/current_link_width", "-3")
    t.put("/sys/bus/pci/devices/0000:02:00.0/class", "0x030200")
    t.put("/sys/bus/pci/devices/0000:02:00.0/vendor", "0x10de")
    t.put("/sys/bus/pci/devices/0000:02:00.0/device", "0xffff")
    t.put("/sys/bus/pci/devices/0000:02:00.0/.path", "/sys/devices/pci0000:00/0000:00:01.0/0000:00:01.0/0000:02:00.0")
    t.put("/sys/bus/pci/devices/not-a-bdf/class", "0x030200")
    t.put("/sys/class/infiniband/mlx5_0/device", "")
    p = "/sys/class/infiniband/mlx5_0/ports/1"
    t.put(p + "/state", "4: ACTIVE")
    t.put(p + "/link_layer", "Ethernet")
    t.put(p + "/rate", "fast (9X QQQ)")
    t.put(p + "/gids/0", "zzzz::1")
    t.put(p + "/gids/1", "fe80::1")
    t.put(p + "/gid_attrs/types/0", "\x01\x02 RoCE v3 \xff")
    t.put(p + "/gid_attrs/ndevs/1", "nosuchdev")
    t.put(p + "/gids/99999999", ZERO)
    t.put("/sys/class/infiniband/mlx5_0/ports/abc/state", "4: ACTIVE")
    t.put("/sys/class/infiniband/mlx5_0/ports/0/state", "4: ACTIVE")
    t.put("/sys/class/infiniband/stray-file", "x")
    t.put("/sys/class/net/bonding_masters", "")
    t.put("/sys/class/net/eth0/ifindex", "two")
    t.put("/sys/class/net/eth0/speed", "-1")
    t.put("/sys/class/net/eth0/operstate", "up")
    t.put("/sys/class/net/eth0/flags", "0xZZ")
    t.put("/sys/class/net/eth0/mtu", "")
    t.put("/sys/class/net/eth0/device", "../../../../../../../../../etc")
    t.put("/proc/net/route", "Iface\tDestination\nbroken line\neth0\tZZZZ\t0\t0\t0\t0\t0\t0\neth0 0\n")
    t.put("/proc/net/fib_trie", "  |-- 999.1.1.1\n     /32 host LOCAL\n|-- \n/32 host LOCAL\n")
    t.put("/proc/net/if_inet6", "xyz 02 40 20 80 eth0\n" + "g" * 32 + " 02 40 20 80 eth0\n")
    t.put("/proc/modules", "\n\n")
    t.put("/proc/cpuinfo", "vendor_id : \ncpu family : x\nmodel : \n")
    t.put("/proc/sys/kernel/osrelease", "not.a.version")
    t.put("/proc/driver/nvidia/version", "")


if __name__ == "__main__":
    dgx_h100()
    roce_gid()
    lab_1gbe()
    docker_ib_disabled()
    no_peermem()
    garbage()
