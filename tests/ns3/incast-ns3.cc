// The lossy incast of tests/cli/ns3-crosscheck.sh in ns-3 (issue #11, item
// 9): N senders -> one switch -> one receiver, every link at the same rate,
// no flow control, a drop-tail or RED/ECN queue at the switch's port to the
// receiver. tests/ns3/incast-collsim.c runs the same incast on collsim's
// packet network; both print one line of the same keys.
//
// Same packets on the wire. collsim's RoCEv2 packet of P payload bytes costs
// P + 82 wire bytes (src/sim/cs_pkt_frame.h: Ethernet 14, IPv4 20, UDP 8,
// BTH 12, ICRC 4, FCS 4, preamble/SFD 8, gap 12). ns-3's point-to-point
// device serializes the IP packet plus its 2-byte PPP header, with no
// preamble or gap (InterframeGap 0). A UDP payload of P + 52 makes the frame
// P + 52 + 8 + 20 + 2 = P + 82 bytes, so both serialize the same bytes in
// the same time; goodput counts P per packet in both.
//
// Same senders. Without congestion control a RoCE QP streams at line rate;
// here each sender's socket sends one packet every (P + 82) x 8 / rate
// seconds from t = 0, which keeps its own link exactly busy. Times are in
// picoseconds (Time::SetResolution) so that a packet's serialization is
// exact (1106 B at 100 Gb/s: 88480 ps) as in collsim's integer picoseconds.
//
// Same buffer. collsim admits a packet when the switch's bytes plus it fit
// the buffer (its MMU with no reserve and no per-port threshold is a plain
// drop-tail) and frees them as the packet starts on the egress wire. ns-3
// holds a forwarded packet in the queue disc and then in the device's own
// queue (one packet, which flow control keeps full) before the wire, so a
// buffer of K packets is a queue disc of K - 1 packets plus that one.
//
// RED: ns-3's RedQueueDisc with ECN (UseEcn, no hard drop), instantaneous
// queue (QW 1), MinTh/MaxTh in packets, 1/LInterm = Pmax, a queue disc of
// K - 1 packets in packet mode. ns-3 decides at enqueue on the packets in
// the disc and spaces its marks by the count since the last (Floyd and
// Jacobson 1993, with Wait); collsim decides at dequeue on the bytes queued
// including the packet, each packet independently. The test derives what
// each should give.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

using namespace ns3;

namespace
{

// RoCEv2 framing minus what ns-3 puts on the wire itself (UDP 8, IPv4 20, PPP 2).
const uint32_t kRoceOverhead = 82;
const uint32_t kNs3Headers = 8 + 20 + 2;
const uint8_t kTosEct0 = 0x02; // ECN field ECT(0): RED may mark instead of dropping

struct Sink
{
    uint64_t pkts = 0;
    uint64_t ce = 0;
    uint64_t first_ps = 0;
    uint64_t last_ps = 0;
};

Sink g_sink;

void
Receive(Ptr<Socket> sock)
{
    Address from;
    while (Ptr<Packet> p = sock->RecvFrom(from))
    {
        SocketIpTosTag tos;
        if (p->PeekPacketTag(tos) && (tos.GetTos() & 0x3) == 0x3)
            g_sink.ce++;
        if (g_sink.pkts == 0)
            g_sink.first_ps = Simulator::Now().GetPicoSeconds();
        g_sink.last_ps = Simulator::Now().GetPicoSeconds();
        g_sink.pkts++;
    }
}

struct Sender
{
    Ptr<Socket> sock;
    uint32_t size;
    Time gap;
    uint64_t sent = 0;
};

void
SendOne(Sender* s)
{
    if (s->sock->Send(Create<Packet>(s->size)) >= 0)
        s->sent++;
    Simulator::Schedule(s->gap, &SendOne, s);
}

} // namespace

int
main(int argc, char** argv)
{
    uint32_t senders = 4, payload = 1024, bufferPkts = 200, seed = 1;
    double rateGbps = 100, propNs = 500, timeUs = 2000;
    double kminPkts = 0, kmaxPkts = 0, pmax = 0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("senders", "senders into the switch", senders);
    cmd.AddValue("payload", "RoCE payload bytes per packet (collsim's MTU)", payload);
    cmd.AddValue("rate-gbps", "every link's rate, Gb/s", rateGbps);
    cmd.AddValue("prop-ns", "every link's propagation delay, ns", propNs);
    cmd.AddValue("buffer-pkts", "bottleneck buffer, packets", bufferPkts);
    cmd.AddValue("time-us", "simulated time, us", timeUs);
    cmd.AddValue("kmin-pkts", "RED MinTh, packets (RED when pmax > 0)", kminPkts);
    cmd.AddValue("kmax-pkts", "RED MaxTh, packets", kmaxPkts);
    cmd.AddValue("pmax", "RED marking probability at MaxTh; 0: drop-tail", pmax);
    cmd.AddValue("seed", "RNG seed (RED draws)", seed);
    cmd.Parse(argc, argv);
    if (senders < 1 || bufferPkts < 2 || payload < 1 || rateGbps <= 0 || timeUs <= 0 ||
        pmax < 0 || pmax > 1 || (pmax > 0 && !(kminPkts < kmaxPkts)))
    {
        std::fprintf(stderr, "incast-ns3: bad arguments\n");
        return 2;
    }

    Time::SetResolution(Time::PS);
    RngSeedManager::SetSeed(seed);

    const uint32_t wire = payload + kRoceOverhead;
    const uint64_t bps = (uint64_t)(rateGbps * 1e9 + 0.5);
    if ((uint64_t)wire * 8 * 1000000000000ULL % bps != 0)
    {
        std::fprintf(stderr, "incast-ns3: %u B at %.17g Gb/s is not a whole number of ps\n", wire,
                     rateGbps);
        return 2;
    }
    const Time gap = PicoSeconds((uint64_t)wire * 8 * 1000000000000ULL / bps);
    const std::string rate = std::to_string(bps) + "bps";

    NodeContainer hosts, sw, rx;
    hosts.Create(senders);
    sw.Create(1);
    rx.Create(1);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds((uint64_t)(propNs * 1000 + 0.5))));
    Ipv4AddressHelper addr;
    std::vector<NetDeviceContainer> up(senders);
    // Sender links: room for a packet or two behind the one on the wire
    // (the socket sends exactly at line rate).
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("16p"));
    for (uint32_t i = 0; i < senders; i++)
    {
        up[i] = p2p.Install(hosts.Get(i), sw.Get(0));
        addr.SetBase(("10.1." + std::to_string(i) + ".0").c_str(), "255.255.255.0");
        addr.Assign(up[i]);
    }
    // The bottleneck: a one-packet device queue below the queue disc.
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer down = p2p.Install(sw.Get(0), rx.Get(0));
    addr.SetBase("10.2.0.0", "255.255.255.0");
    Ipv4InterfaceContainer rxIf = addr.Assign(down);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    TrafficControlHelper tch;
    for (uint32_t i = 0; i < senders; i++)
        tch.Uninstall(up[i]);
    tch.Uninstall(down);
    const std::string disc = std::to_string(bufferPkts - 1) + "p";
    if (pmax > 0)
        tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(disc), "MinTh",
                             DoubleValue(kminPkts), "MaxTh", DoubleValue(kmaxPkts), "LInterm",
                             DoubleValue(1.0 / pmax), "QW", DoubleValue(1.0), "UseEcn",
                             BooleanValue(true), "UseHardDrop", BooleanValue(false), "MeanPktSize",
                             UintegerValue(wire - 2), "LinkBandwidth", DataRateValue(DataRate(rate)),
                             "LinkDelay", TimeValue(NanoSeconds((uint64_t)propNs)));
    else
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(disc));
    QueueDiscContainer qd = tch.Install(down.Get(0));

    const uint16_t port = 4791; // RoCEv2's UDP port
    Ptr<Socket> sinkSock = Socket::CreateSocket(rx.Get(0), UdpSocketFactory::GetTypeId());
    sinkSock->SetIpRecvTos(true);
    sinkSock->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    sinkSock->SetRecvCallback(MakeCallback(&Receive));

    std::vector<Sender> tx(senders);
    for (uint32_t i = 0; i < senders; i++)
    {
        tx[i].sock = Socket::CreateSocket(hosts.Get(i), UdpSocketFactory::GetTypeId());
        tx[i].sock->Connect(InetSocketAddress(rxIf.GetAddress(1), port));
        tx[i].sock->SetIpTos(kTosEct0); // after Connect, which sets the address's (0)
        tx[i].size = payload + kRoceOverhead - kNs3Headers;
        tx[i].gap = gap;
        Simulator::ScheduleWithContext(hosts.Get(i)->GetId(), Seconds(0), &SendOne, &tx[i]);
    }

    const Time stop = PicoSeconds((uint64_t)(timeUs * 1e6 + 0.5));
    Simulator::Stop(stop);
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t events = Simulator::GetEventCount();

    uint64_t sent = 0;
    for (auto& s : tx)
        sent += s.sent;
    const QueueDisc::Stats& st = qd.Get(0)->GetStats();
    Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(down.Get(0));
    uint64_t devDrops = dev->GetQueue()->GetTotalDroppedPackets();
    uint64_t ser = DataRate(rate).CalculateBytesTxTime(wire - 0).GetPicoSeconds();
    double goodput = (double)g_sink.pkts * payload * 8 / (timeUs * 1e-6) / 1e9;
    std::printf("model=ns3 senders=%u payload=%u wire=%u ser_ps=%" PRIu64 " gap_ps=%" PRId64
                " sent=%" PRIu64 " delivered=%" PRIu64 " goodput_gbps=%.6f dropped=%" PRIu64
                " marked=%" PRIu64 " arrivals=%" PRIu64 " marked_arrivals=%" PRIu64 " first_ps=%" PRIu64 " last_ps=%" PRIu64 " events=%" PRIu64
                " wall_s=%.6f events_per_s=%.0f\n",
                senders, payload, wire, ser, gap.GetPicoSeconds(), sent, g_sink.pkts, goodput,
                (uint64_t)st.nTotalDroppedPackets + devDrops, g_sink.ce, (uint64_t)st.nTotalReceivedPackets,
                (uint64_t)st.GetNMarkedPackets(RedQueueDisc::UNFORCED_MARK), g_sink.first_ps,
                g_sink.last_ps, events, wall, wall > 0 ? events / wall : 0.0);
    Simulator::Destroy();
    return 0;
}
