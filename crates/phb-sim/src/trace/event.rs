//! What the event log records of a packet at a traced link direction: the
//! five events of its passage, from arrival to the far end of the wire.

/// An event of a packet at a link direction, in the order a packet meets
/// them (a dropped packet has no dequeue or delivery).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceEvent {
    /// The packet reached the direction's output: its edge conditioner,
    /// loss element and qdisc are offered it (the `arrivals` of the
    /// `classes` table).
    Arrive = 0,
    /// The qdisc kept it.
    Enqueue = 1,
    /// It was dropped (the row's `reason` says why): on arrival, or later
    /// (pushed out, or dropped at dequeue by an AQM or JoBS).
    Drop = 2,
    /// The qdisc gave it to the transmitter: the start of its transmission.
    Dequeue = 3,
    /// Its last bit reached the far end of the link (transmission plus
    /// propagation after its dequeue).
    Deliver = 4,
}

impl TraceEvent {
    pub const ALL: [TraceEvent; 5] =
        [TraceEvent::Arrive, TraceEvent::Enqueue, TraceEvent::Drop, TraceEvent::Dequeue, TraceEvent::Deliver];

    /// The name in scenarios (`trace.events`) and in the event log.
    pub fn name(self) -> &'static str {
        match self {
            TraceEvent::Arrive => "arrive",
            TraceEvent::Enqueue => "enqueue",
            TraceEvent::Drop => "drop",
            TraceEvent::Dequeue => "dequeue",
            TraceEvent::Deliver => "deliver",
        }
    }
}
