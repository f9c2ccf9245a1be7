//! What every column of the result tables means, and its unit: written into
//! each Parquet file as the column's field metadata (`description`, `unit`),
//! and the source of docs/results.md's column tables.
//!
//! Counts, rates and delays of the `classes` and `flows` tables cover the
//! measured period, after the warm-up. End to end, a packet counts as sent
//! when it is created after the warm-up and as received when it arrives after
//! the warm-up, so a packet created before the end of the warm-up and
//! received after it counts only as received: `received + dropped` may
//! differ from `sent` by the packets in flight at either edge of the period.

/// A column's unit ("" for none: names, counts of things) and meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDoc {
    pub unit: &'static str,
    pub description: &'static str,
}

const fn doc(unit: &'static str, description: &'static str) -> ColumnDoc {
    ColumnDoc { unit, description }
}

/// The documentation of `column` of `table`, or `None` for a column this
/// module does not know (a test keeps that from happening).
pub fn column_doc(table: &str, column: &str) -> Option<ColumnDoc> {
    Some(match (table, column) {
        ("classes", "scope") => doc("", "\"end-to-end\" (source to sink), or a link direction \"from->to\" (its output queue)"),
        ("classes" | "flows" | "delay_histogram", "class") => doc("", "traffic class, as named in the scenario's [classes]"),
        ("classes", "arrivals") => doc("packets", "end to end: packets sent (created) after the warm-up; at a link: packets that arrived at its qdisc"),
        ("classes", "departures") => doc("packets", "end to end: packets received after the warm-up; at a link: packets that left its qdisc for the wire"),
        ("classes", "dropped") => doc("packets", "packets dropped, for any reason (the sum of the drop_* columns)"),
        ("classes", "drop_overflow") => doc("packets", "dropped because the buffer (or its hard limit) was full"),
        ("classes", "drop_early") => doc("packets", "dropped early by an AQM with a probability below one (RED between min_th and max_th)"),
        ("classes", "drop_forced") => doc("packets", "dropped by an AQM with certainty (RED above max_th, or 2·max_th when gentle)"),
        ("classes", "drop_policer") => doc("packets", "dropped by a policer (an edge conditioner) as out of profile"),
        ("classes", "drop_eviction") => doc("packets", "pushed out of a queue to make room for another packet (PLR, PLC)"),
        ("classes", "drop_loss_module") => doc("packets", "dropped by a link's random loss element"),
        ("classes", "drop_deadline") => doc("packets", "dropped by JoBS so that the absolute delay bounds stay feasible (its eq. 64)"),
        ("classes", "marked") => doc("packets", "ECN: ECN-capable packets an AQM set CE on instead of dropping them early (they are not in dropped; they also depart); end to end: data packets marked anywhere on the path"),
        ("classes" | "flows", "loss_rate") => doc("fraction", "dropped / (departed + dropped): the fraction of the packets whose fate was decided in the period that were lost"),
        ("classes", "delay_mean_s") => doc("s", "mean delay: one way (creation to reception) end to end; queueing (arrival at the qdisc to start of transmission) at a link"),
        ("classes", "delay_p50_s") => doc("s", "median delay (as delay_mean_s), from a log-linear histogram within 0.8%"),
        ("classes", "delay_p95_s") => doc("s", "95th-percentile delay (as delay_mean_s), within 0.8%"),
        ("classes", "delay_p99_s") => doc("s", "99th-percentile delay (as delay_mean_s), within 0.8%"),
        ("classes", "delay_max_s") => doc("s", "largest delay (as delay_mean_s), exact"),
        ("classes", "throughput_bps") => doc("bit/s", "bits of the departed packets (IP size) per second of the measured period"),
        ("classes", "queued_end") => doc("packets", "still queued at this link (or, end to end, still in the network) when the run ended"),
        ("classes", "backlog_mean_pkts") => doc("packets", "at a link: the class's packets in the qdisc, averaged over the measured period (the time integral of its backlog / the period; a packet in transmission is no longer in the qdisc); NaN end to end"),
        ("classes", "arrivals_cells") => doc("cells", "at a link with AAL5 framing: the ATM cells of the packets counted in arrivals; 0 elsewhere and end to end"),
        ("classes", "departures_cells") => doc("cells", "at a link with AAL5 framing: the cells of the packets counted in departures; 0 elsewhere and end to end"),
        ("classes", "dropped_cells") => doc("cells", "at a link with AAL5 framing: the cells of the packets counted in dropped (frames are dropped whole); 0 elsewhere and end to end"),
        ("classes", "queued_end_cells") => doc("cells", "at a link with AAL5 framing: the cells of the packets counted in queued_end; 0 elsewhere and end to end"),
        ("classes", "backlog_mean_cells") => doc("cells", "at a link with AAL5 framing: as backlog_mean_pkts, in cells (the buffer occupancy a cell switch reports); NaN elsewhere and end to end"),
        ("flows" | "transfers", "flow") => doc("", "flow name: the traffic group's name, with .<index> (from 0) when the group has several flows"),
        ("flows", "group") => doc("", "the traffic group ([[traffic]] entry) the flow belongs to"),
        ("flows", "generator") => doc("", "the generator and template that made the flow's group (\"<generator name>.<template>\", e.g. \"wide.traffic\"); \"\" for a group the file wrote"),
        ("flows", "transport") => doc("", "\"tcp\" or \"udp\""),
        ("flows", "src") => doc("", "the node the flow is sent from"),
        ("flows", "dst") => doc("", "the node the flow is sent to"),
        ("flows", "start_s") => doc("s", "when the flow started (its start time plus jitter)"),
        ("flows", "sent_pkts") => doc("packets", "UDP packets or TCP data segments (retransmissions included) sent after the warm-up"),
        ("flows", "sent_bytes") => doc("bytes", "IP bytes of sent_pkts"),
        ("flows", "received_pkts") => doc("packets", "packets of the flow received at the sink after the warm-up"),
        ("flows", "received_bytes") => doc("bytes", "IP bytes of received_pkts"),
        ("flows", "lost_pkts") => doc("packets", "packets of the flow dropped anywhere on the path after the warm-up"),
        ("flows", "marked_pkts") => doc("packets", "ECN: data packets of the flow CE-marked (instead of dropped) anywhere on the path after the warm-up"),
        ("flows", "delay_mean_s") => doc("s", "mean one-way delay (creation to reception) of the received packets"),
        ("flows", "queueing_delay_mean_s") => doc("s", "mean of the received packets' waits in qdiscs, summed over the hops"),
        ("flows", "throughput_bps") => doc("bit/s", "IP bits received per second of the measured period"),
        ("flows", "goodput_bps") => doc("bit/s", "application bits delivered in order per second of the measured period (UDP: as throughput_bps)"),
        ("flows", "acks_sent") => doc("packets", "TCP: ACKs the receiver sent (0 for UDP)"),
        ("flows", "acks_lost") => doc("packets", "TCP: ACKs dropped on the way back (0 for UDP)"),
        ("flows", "retransmissions") => doc("packets", "TCP: segments sent again (0 for UDP)"),
        ("flows", "fast_retransmits") => doc("events", "TCP: fast retransmits (entries into fast recovery) (0 for UDP)"),
        ("flows", "ecn_reductions") => doc("events", "TCP with ECN: congestion window halvings in response to ECN-Echo, at most one per window (RFC 3168 §6.1.2) (0 for UDP or without ECN)"),
        ("flows", "timeouts") => doc("events", "TCP: retransmission timeouts (0 for UDP)"),
        ("flows", "first_timeouts") => doc("events", "TCP: timeouts that fired with no back-off in force, each the first of a sequence of consecutive timeouts (PFTK's timeout sequence; 0 for UDP and under emulation)"),
        ("flows", "first_timeouts_s") => doc("s", "TCP: the summed duration of those timeouts, each the RTO its timer ran for (PFTK's basic timeout T_0): first_timeouts_s / first_timeouts is the mean (0 for UDP; NaN under emulation)"),
        ("flows", "cwnd_mean_segments") => doc("segments", "TCP: the time average of the congestion window (without fast recovery's inflation: ns-2's cwnd_) over the measured period while the flow ran, in segments (0 for UDP, or a TCP flow that did not run then)"),
        ("transfers", "size_bytes") => doc("bytes", "the file's size"),
        ("transfers", "start_s") => doc("s", "when the application wrote the file"),
        ("transfers", "end_s") => doc("s", "when its last byte was delivered in order"),
        ("transfers", "completion_s") => doc("s", "end_s - start_s"),
        ("timeseries", "time_s") => doc("s", "the end of the sampling interval"),
        ("timeseries", "scope") => doc("", "\"end-to-end\", a link direction \"from->to\", \"flow/<name>\" for a traced TCP flow, or \"lsp/<name>\" for an LSP"),
        ("timeseries", "class") => doc("", "the class, for per-class metrics; \"\" for a link's totals; for the RED average (or DWRED max_th) of a qdisc with several buffers, the buffer's name"),
        ("timeseries", "metric") => doc("", "what value measures: one of the names in TIMESERIES_METRICS (docs/results.md)"),
        ("timeseries", "value") => doc("", "the metric's value, in the unit TIMESERIES_METRICS gives for it"),
        ("counters", "scope") => doc("", "the link direction \"from->to\" whose qdisc counted"),
        ("counters", "queue") => doc("", "the qdisc's queue (class) the counter is about; \"\" for the qdisc as a whole"),
        ("counters", "counter") => doc("", "what was counted: one of the names in docs/results.md (JoBS: busy_periods, relax_delay, delay_violations, ...)"),
        ("counters", "value") => doc("", "how many times it happened after the warm-up"),
        ("delay_histogram", "scope") => doc("", "as in classes: \"end-to-end\" (one-way delay) or a link direction \"from->to\" (queueing delay at its output)"),
        ("delay_histogram", "lower_s") => doc("s", "the bucket's lower bound: it holds the delays in [lower_s, upper_s)"),
        ("delay_histogram", "upper_s") => doc("s", "the bucket's upper bound (excluded); 16 buckets per power of two of nanoseconds, 6.25% wide (8 ns below 128 ns)"),
        ("delay_histogram", "packets") => doc("packets", "packets of the class whose delay fell in the bucket, in the measured period (those of classes.delay_*)"),
        ("conditioners", "scope") => doc("", "the link direction \"from->to\" at whose ingress the conditioner runs"),
        ("conditioners", "rule") => doc("", "the rule (its name); \"\" for the packets no rule matched, which pass unchanged"),
        ("conditioners", "colour") => doc("", "the colour the rule's meter gave: \"green\", \"yellow\" or \"red\" (a rule without a meter: \"green\" only); \"\" for unmatched packets"),
        ("conditioners", "action") => doc("", "what the rule does with that colour: \"pass\", \"drop\" (a policer) or \"mark <class>\" (re-mark to the class's codepoint)"),
        ("conditioners", "packets") => doc("packets", "packets the rule matched and its meter coloured so, after the warm-up"),
        ("conditioners", "bytes") => doc("bytes", "their IP bytes"),
        ("delay_ratios", "scope") => doc("", "\"end-to-end\" (queueing delay over the path) or a link direction \"from->to\" (the wait in its qdisc)"),
        ("delay_ratios", "numerator") => doc("", "the class whose mean delay is divided"),
        ("delay_ratios", "denominator") => doc("", "the class whose mean delay divides"),
        ("delay_ratios", "timescale_s") => doc("s", "the length of the intervals the measured period is cut into"),
        ("delay_ratios", "intervals") => doc("intervals", "whole intervals in the measured period"),
        ("delay_ratios", "intervals_used") => doc("intervals", "intervals in which both classes had departures (and the denominator's mean delay was positive)"),
        ("delay_ratios", "per_packet") => doc("ratio", "numerator's mean delay / denominator's, over every packet that left in the measured period"),
        ("delay_ratios", "interval_mean") => doc("ratio", "the mean over the used intervals of each interval's ratio of mean delays (the Vukadinovic thesis' achieved delay ratio)"),
        ("delay_ratios", "interval_p05") => doc("ratio", "5th percentile of the per-interval ratios"),
        ("delay_ratios", "interval_p25") => doc("ratio", "25th percentile of the per-interval ratios"),
        ("delay_ratios", "interval_p50") => doc("ratio", "median of the per-interval ratios"),
        ("delay_ratios", "interval_p75") => doc("ratio", "75th percentile of the per-interval ratios"),
        ("delay_ratios", "interval_p95") => doc("ratio", "95th percentile of the per-interval ratios"),
        ("events", "time_ns") => doc("ns", "when the event happened, in nanoseconds of simulated time"),
        ("events", "event") => doc("", "\"arrive\" (offered to the link direction's conditioner, loss element and qdisc), \"enqueue\" (kept by the qdisc), \"drop\" (see reason), \"dequeue\" (start of transmission) or \"deliver\" (its last bit reached the far end)"),
        ("events", "scope") => doc("", "the traced link direction \"from->to\""),
        ("events", "class") => doc("", "traffic class, as named in the scenario's [classes] (the class of dscp: after the conditioner re-marked it)"),
        ("events", "dscp") => doc("", "the packet's codepoint (DSCP, 0-63) at the event"),
        ("events", "ecn") => doc("", "the IP header's ECN field at the event: 0 not-ECT, 1 ECT(1), 2 ECT(0), 3 CE"),
        ("events", "colour") => doc("", "the packet's drop precedence: \"green\", \"yellow\" or \"red\""),
        ("events", "flow") => doc("", "the flow the packet belongs to (its name, as in the flows table; an ACK belongs to the TCP flow it acknowledges)"),
        ("events", "kind") => doc("", "\"udp\", \"data\" (a TCP segment) or \"ack\" (a TCP acknowledgement)"),
        ("events", "seq") => doc("", "UDP: the packet's number in its flow (from 0); TCP data: the sequence number of its first payload byte (from 0); 0 for an ACK"),
        ("events", "ack") => doc("bytes", "TCP ACK: the next byte expected (cumulative acknowledgement); 0 otherwise"),
        ("events", "size_bytes") => doc("bytes", "the IP packet's size, headers included"),
        ("events", "cells") => doc("cells", "at a link with AAL5 framing: the ATM cells of the packet's frame; 0 elsewhere"),
        ("events", "reason") => doc("", "for a drop, why: overflow, early, forced, policer, eviction, loss_module or deadline (as the classes table's drop_* columns); \"\" otherwise"),
        ("events", "backlog_pkts") => doc("packets", "packets in the direction's qdisc just after the event"),
        ("events", "backlog_bytes") => doc("bytes", "bytes in the direction's qdisc just after the event"),
        ("events", "red_avg") => doc("packets, bytes or cells", "the RED-family average queue of a single-buffer qdisc (in its unit) just after the event; NaN for a drop-tail queue or a qdisc with several buffers"),
        _ => return None,
    })
}

/// The time-series metrics: name, unit and meaning.
pub const TIMESERIES_METRICS: &[(&str, &str, &str)] = &[
    ("queue_pkts", "packets", "packets in the link's qdisc at the sampling time"),
    ("queue_bytes", "bytes", "bytes in the link's qdisc at the sampling time"),
    ("queue_cells", "cells", "ATM cells in the link's qdisc at the sampling time (links with AAL5 framing only)"),
    (
        "red_avg",
        "packets, bytes or cells",
        "the RED family's average queue (in the buffer's unit: F-RED and DI-RO count cells) at the sampling time",
    ),
    (
        "dwred_max_th",
        "packets",
        "a DWRED buffer's max_th at the sampling time (the LSP's last W_LSP^cwnd, or the configured value)",
    ),
    ("backlog_pkts", "packets", "packets of the class in the link's qdisc at the sampling time"),
    (
        "backlog_cells",
        "cells",
        "cells of the class in the link's qdisc at the sampling time (links with AAL5 framing only)",
    ),
    (
        "throughput_bps",
        "bit/s",
        "bits of the class that departed (at a link) or were received (end to end) in the interval, per second",
    ),
    (
        "delay_mean_s",
        "s",
        "mean delay of the class' packets that departed in the interval (queueing at a link, one way end to end)",
    ),
    (
        "offered_bps",
        "bit/s",
        "bits of the class that arrived at the link's qdisc in the interval (dropped ones included), per second",
    ),
    (
        "loss_rate",
        "fraction",
        "the class' drops at the link in the interval over its departures and drops there (absent when it had neither)",
    ),
    (
        "busy_loss_rate",
        "fraction",
        "under JoBS, per queue (class: the queue's name): its loss rate over the current busy period at the sampling time (eq. 5)",
    ),
    ("cwnd_segments", "segments", "a traced TCP flow's congestion window at the sampling time"),
    ("ssthresh_segments", "segments", "a traced TCP flow's slow-start threshold at the sampling time"),
    ("srtt_s", "s", "a traced TCP flow's smoothed RTT at the sampling time (absent before the first sample)"),
    (
        "retransmissions",
        "segments",
        "`phblab emulate` only: a traced TCP flow's segments retransmitted so far (TCP_INFO's tcpi_total_retrans)",
    ),
    (
        "w_lsp_segments",
        "segments",
        "an LSP's W_LSP^cwnd as its TWAM last computed it (eq. 7 or 8; 0 before the first update)",
    ),
];
