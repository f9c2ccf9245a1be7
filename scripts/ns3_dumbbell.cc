// The ns-3 side of scripts/ns3_parity.py (ns-3.44, built against the `ns3`
// wheel's headers and libraries): N NewReno bulk flows across a dumbbell (each
// flow its own access links, or all flows sharing one sender and one receiver
// host with --shared), a RED or drop-tail bottleneck, optional Pareto ON/OFF
// UDP sources; prints one JSON object of bottleneck and TCP counters. The TCP
// is what phblab's `ns3` profile models (docs/tcp.md): TcpNewReno,
// TcpClassicRecovery, SACK off, 128 KiB buffers, IW 10, MinRto 1 s, delayed
// ACKs every second segment, timestamps and Limited Transmit on. Every queue
// is a queue disc over a one-packet device queue, so that queueing happens in
// the queue disc as in phblab's qdiscs.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace ns3;

static std::vector<uint64_t> g_fastRetransmits;
static std::vector<uint64_t> g_timeouts;
static std::vector<uint64_t> g_retransmissions;
static std::vector<uint64_t> g_lossRetransmissions;
static std::vector<TcpSocketState::TcpCongState_t> g_state;
static double g_sojournSum = 0;
static uint64_t g_sojournCount = 0;
static uint64_t g_departedBytes = 0;
static uint64_t g_tcpDrops = 0;

static void
CongStateChanged(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    g_state[i] = now;
    if (now == TcpSocketState::CA_RECOVERY)
    {
        g_fastRetransmits[i]++;
    }
}

// ReTxTimeout doubles m_rto (capped at 60 s); every other change of m_rto
// (EstimateRtt, NewAck) recomputes it from the estimator.
static void
RtoChanged(uint32_t i, Time before, Time after)
{
    if (after > before && after == Min(before + before, Seconds(60)))
    {
        g_timeouts[i]++;
    }
}

static void
Retransmitted(uint32_t i,
              Ptr<const Packet>,
              const TcpHeader&,
              const Address&,
              const Address&,
              Ptr<const TcpSocketBase>)
{
    g_retransmissions[i]++;
    if (g_state[i] == TcpSocketState::CA_LOSS)
    {
        g_lossRetransmissions[i]++;
    }
}

static void
Sojourn(Time t)
{
    g_sojournSum += t.GetSeconds();
    g_sojournCount++;
}

static double g_backlogIntegral = 0;
static Time g_backlogSince;

static void
BacklogChanged(uint32_t before, uint32_t)
{
    g_backlogIntegral += before * (Simulator::Now() - g_backlogSince).GetSeconds();
    g_backlogSince = Simulator::Now();
}

static uint64_t g_udpDepartures = 0;

static void
Dequeued(Ptr<const QueueDiscItem> item)
{
    g_departedBytes += item->GetSize();
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (ip && ip->GetHeader().GetProtocol() == 17)
    {
        g_udpDepartures++;
    }
}

static void
Dropped(Ptr<const QueueDiscItem> item, const char*)
{
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (ip && ip->GetHeader().GetProtocol() == 6)
    {
        g_tcpDrops++;
    }
}

static std::map<uint32_t, uint32_t> g_socketsOnNode;

// Sockets are numbered on their node in the order the applications start,
// and these calls run in that order.
static void
ConnectSocket(uint32_t i, uint32_t node)
{
    uint32_t index = g_socketsOnNode[node]++;
    std::string base = "/NodeList/" + std::to_string(node) +
                       "/$ns3::TcpL4Protocol/SocketList/" + std::to_string(index) + "/";
    Config::ConnectWithoutContext(base + "CongState", MakeBoundCallback(&CongStateChanged, i));
    Config::ConnectWithoutContext(base + "RTO", MakeBoundCallback(&RtoChanged, i));
    Config::ConnectWithoutContext(base + "Retransmission", MakeBoundCallback(&Retransmitted, i));
}

int
main(int argc, char* argv[])
{
    uint32_t flows = 100;
    uint32_t seed = 1;
    double duration = 30;
    double jitter = 1;
    bool shared = false;
    std::string qdisc = "red";
    uint32_t limit = 1000;
    double minTh = 100;
    double maxTh = 300;
    double maxP = 0.1;
    double wq = 0.002;
    uint32_t meanPktSize = 1500;
    std::string bottleneckRate = "100Mbps";
    std::string bottleneckDelay = "10ms";
    std::string accessRate = "100Mbps";
    std::string accessDelay = "1ms";
    uint32_t accessLimit = 50;
    uint32_t mss = 1460;
    bool timestamps = true;
    bool limitedTransmit = true;
    uint32_t udpSources = 0;
    std::string udpRate = "1Mbps";
    uint32_t udpPacket = 500;
    double onMean = 0.05;
    double offMean = 0.05;
    double shape = 1.5;
    std::string periods = "pareto";

    CommandLine cmd;
    cmd.AddValue("flows", "TCP flows", flows);
    cmd.AddValue("seed", "run number", seed);
    cmd.AddValue("duration", "seconds", duration);
    cmd.AddValue("jitter", "start spread, seconds", jitter);
    cmd.AddValue("shared", "all flows from one host to one host", shared);
    cmd.AddValue("qdisc", "red or fifo", qdisc);
    cmd.AddValue("limit", "bottleneck buffer, packets", limit);
    cmd.AddValue("minTh", "RED min_th", minTh);
    cmd.AddValue("maxTh", "RED max_th", maxTh);
    cmd.AddValue("maxP", "RED max_p", maxP);
    cmd.AddValue("wq", "RED w_q", wq);
    cmd.AddValue("meanPktSize", "RED mean_pktsize", meanPktSize);
    cmd.AddValue("bottleneckRate", "", bottleneckRate);
    cmd.AddValue("bottleneckDelay", "", bottleneckDelay);
    cmd.AddValue("accessRate", "", accessRate);
    cmd.AddValue("accessDelay", "", accessDelay);
    cmd.AddValue("accessLimit", "access buffers, packets", accessLimit);
    cmd.AddValue("mss", "SegmentSize", mss);
    cmd.AddValue("timestamps", "Timestamp", timestamps);
    cmd.AddValue("limitedTransmit", "LimitedTransmit", limitedTransmit);
    cmd.AddValue("udpSources", "Pareto ON/OFF sources", udpSources);
    cmd.AddValue("udpRate", "rate while ON", udpRate);
    cmd.AddValue("udpPacket", "UDP packet payload bytes", udpPacket);
    cmd.AddValue("onMean", "", onMean);
    cmd.AddValue("offMean", "", offMean);
    cmd.AddValue("shape", "Pareto shape", shape);
    cmd.AddValue("periods", "ON and OFF periods: pareto or exponential", periods);
    cmd.Parse(argc, argv);
    uint32_t mtu = std::max<uint32_t>(1500, mss + 60);

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(131072));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(131072));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(timestamps));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(1)));

    uint32_t hosts = shared ? 1 : flows;
    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(hosts);
    NodeContainer receivers;
    receivers.Create(hosts);
    InternetStackHelper stack;
    stack.InstallAll();

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(bottleneckRate));
    bottleneck.SetChannelAttribute("Delay", StringValue(bottleneckDelay));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    // phblab's links carry packets of any size: an MTU above mss + 52
    // keeps IP from fragmenting segments that carry timestamps
    bottleneck.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue(accessRate));
    access.SetChannelAttribute("Delay", StringValue(accessDelay));
    access.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    access.SetDeviceAttribute("Mtu", UintegerValue(mtu));

    TrafficControlHelper bottleneckTc;
    std::string limitPackets = std::to_string(limit) + "p";
    if (qdisc == "red")
    {
        bottleneckTc.SetRootQueueDisc("ns3::RedQueueDisc",
                                      "MaxSize", StringValue(limitPackets),
                                      "MinTh", DoubleValue(minTh),
                                      "MaxTh", DoubleValue(maxTh),
                                      "QW", DoubleValue(wq),
                                      "LInterm", DoubleValue(1.0 / maxP),
                                      "Gentle", BooleanValue(true),
                                      "Wait", BooleanValue(true),
                                      "MeanPktSize", UintegerValue(meanPktSize),
                                      "LinkBandwidth", StringValue(bottleneckRate),
                                      "LinkDelay", StringValue(bottleneckDelay));
    }
    else
    {
        bottleneckTc.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(limitPackets));
    }
    TrafficControlHelper accessTc;
    accessTc.SetRootQueueDisc("ns3::FifoQueueDisc",
                              "MaxSize",
                              StringValue(std::to_string(accessLimit) + "p"));

    Ipv4AddressHelper address;
    address.SetBase("10.0.0.0", "255.255.255.0");
    NetDeviceContainer bottleneckDevices = bottleneck.Install(routers.Get(0), routers.Get(1));
    QueueDiscContainer bottleneckQueues = bottleneckTc.Install(bottleneckDevices);
    address.Assign(bottleneckDevices);
    address.NewNetwork();
    std::vector<Ipv4Address> sinks;
    for (uint32_t i = 0; i < hosts; i++)
    {
        NetDeviceContainer left = access.Install(senders.Get(i), routers.Get(0));
        accessTc.Install(left);
        address.Assign(left);
        address.NewNetwork();
        NetDeviceContainer right = access.Install(routers.Get(1), receivers.Get(i));
        accessTc.Install(right);
        Ipv4InterfaceContainer rightIf = address.Assign(right);
        address.NewNetwork();
        sinks.push_back(rightIf.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    g_fastRetransmits.assign(flows, 0);
    g_timeouts.assign(flows, 0);
    g_retransmissions.assign(flows, 0);
    g_lossRetransmissions.assign(flows, 0);
    g_state.assign(flows, TcpSocketState::CA_OPEN);
    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    std::vector<Ptr<PacketSink>> sinkApps;
    for (uint32_t i = 0; i < flows; i++)
    {
        uint32_t h = shared ? 0 : i;
        uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApp = sinkHelper.Install(receivers.Get(h));
        sinkApp.Start(Seconds(0));
        sinkApps.push_back(DynamicCast<PacketSink>(sinkApp.Get(0)));
        BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(sinks[h], port));
        source.SetAttribute("MaxBytes", UintegerValue(0));
        source.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer sourceApp = source.Install(senders.Get(h));
        Time at = Seconds(start->GetValue(0, jitter));
        sourceApp.Start(at);
        // the sender's socket exists once its application has started
        Simulator::Schedule(at + NanoSeconds(1),
                            &ConnectSocket,
                            i,
                            senders.Get(h)->GetId());
    }
    for (uint32_t k = 0; k < udpSources; k++)
    {
        uint16_t port = 9000 + k;
        PacketSinkHelper sinkHelper("ns3::UdpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        sinkHelper.Install(receivers.Get(0)).Start(Seconds(0));
        OnOffHelper onoff("ns3::UdpSocketFactory", InetSocketAddress(sinks[0], port));
        auto period = [&](double mean) {
            if (periods == "exponential")
            {
                return "ns3::ExponentialRandomVariable[Mean=" + std::to_string(mean) + "]";
            }
            return "ns3::ParetoRandomVariable[Scale=" + std::to_string(mean * (shape - 1) / shape) +
                   "|Shape=" + std::to_string(shape) + "]";
        };
        onoff.SetAttribute("OnTime", StringValue(period(onMean)));
        onoff.SetAttribute("OffTime", StringValue(period(offMean)));
        onoff.SetAttribute("DataRate", StringValue(udpRate));
        onoff.SetAttribute("PacketSize", UintegerValue(udpPacket));
        onoff.Install(senders.Get(0)).Start(Seconds(0));
    }

    Ptr<QueueDisc> q = bottleneckQueues.Get(0);
    q->TraceConnectWithoutContext("SojournTime", MakeCallback(&Sojourn));
    q->TraceConnectWithoutContext("Dequeue", MakeCallback(&Dequeued));
    q->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&BacklogChanged));
    q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&Dropped));
    q->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&Dropped));

    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    QueueDisc::Stats stats = q->GetStats();
    uint64_t fr = 0;
    uint64_t to = 0;
    uint64_t rtx = 0;
    uint64_t rx = 0;
    uint64_t lossRtx = 0;
    for (uint32_t i = 0; i < flows; i++)
    {
        fr += g_fastRetransmits[i];
        to += g_timeouts[i];
        rtx += g_retransmissions[i];
        lossRtx += g_lossRetransmissions[i];
        rx += sinkApps[i]->GetTotalRx();
    }
    std::printf("{\"bottleneck_drops\": %lu, \"bottleneck_tcp_drops\": %lu, "
                "\"queueing_delay_s\": %.9g, \"bottleneck_throughput_bps\": %.9g, "
                "\"goodput_bps\": %.9g, \"fast_retransmits\": %lu, \"timeouts\": %lu, "
                "\"retransmissions\": %lu, \"retransmissions_in_loss\": %lu, \"backlog_mean_pkts\": %.6g, \"departures\": %lu, \"udp_departures\": %lu, \"sojourns\": %lu, \"drop_reasons\": {",
                (unsigned long)stats.nTotalDroppedPackets,
                (unsigned long)g_tcpDrops,
                g_sojournCount ? g_sojournSum / g_sojournCount : 0.0,
                g_departedBytes * 8.0 / duration,
                rx * 8.0 / duration,
                (unsigned long)fr,
                (unsigned long)to,
                (unsigned long)rtx,
                (unsigned long)lossRtx,
                g_backlogIntegral / duration,
                (unsigned long)stats.nTotalDequeuedPackets,
                (unsigned long)g_udpDepartures,
                (unsigned long)g_sojournCount);
    const char* separator = "";
    for (const auto& [reason, count] : stats.nDroppedPacketsBeforeEnqueue)
    {
        std::printf("%s\"%s\": %u", separator, reason.c_str(), count);
        separator = ", ";
    }
    for (const auto& [reason, count] : stats.nDroppedPacketsAfterDequeue)
    {
        std::printf("%s\"%s\": %u", separator, reason.c_str(), count);
        separator = ", ";
    }
    std::printf("}}\n");
    Simulator::Destroy();
    return 0;
}
