//! The receiving side: reassembly, cumulative ACKs, SACK blocks and
//! delayed ACKs.
//!
//! - Cumulative ACK of the next byte expected; out-of-order data is kept as
//!   byte ranges.
//! - SACK blocks (RFC 2018 §4): up to three, the first holding the segment
//!   that triggered the ACK, then the most recently changed other ranges.
//! - Delayed ACKs (RFC 5681 §4.2; ns-2's `DelAckSink`): an in-order segment
//!   is acknowledged when a second full segment arrives or when the
//!   delayed-ACK timer expires; an out-of-order segment, or one that fills a
//!   hole, is acknowledged at once.
//! - Timestamps (RFC 7323 §4.3): every ACK echoes the send time of a
//!   segment, `TS.Recent`, taken from a segment that arrives at the left
//!   edge of the window (`SEG.SEQ = RCV.NXT`) and not beyond the last ACK
//!   sent (`SEG.SEQ ≤ Last.ACK.sent`), its timestamp no older than any seen
//!   (ns-3's `TcpSocketBase::ProcessOptionTimestamp`): a delayed ACK echoes
//!   the first of its segments, a duplicate ACK the last in-order one, the
//!   ACK of a filled hole the retransmission.
//! - ECN-Echo (RFC 3168 §6.1.3): after a CE-marked data segment, every ACK
//!   carries ECE until a segment with CWR arrives (a CWR segment that is
//!   itself CE-marked keeps the echo on). A CE mark does not hasten the
//!   ACK (ns-2's sinks; Linux acknowledges at once, `tcp_ecn_check_ce`).

use phb::Time;

/// What an ACK carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Next byte expected.
    pub ack: u64,
    /// SACK blocks `[start, end)`, the first `sack_len` valid.
    pub sack: [(u64, u64); 3],
    pub sack_len: u8,
    /// The timestamp echoed (RFC 7323 `TSecr`): the send time of the
    /// segment `TS.Recent` came from.
    pub ts_echo: Time,
    /// ECN-Echo (RFC 3168 §6.1.3): a CE-marked segment arrived and no
    /// CWR since.
    pub ece: bool,
}

impl Ack {
    pub fn blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.sack_len as usize]
    }
}

#[derive(Clone, Copy, Debug)]
struct Range {
    start: u64,
    end: u64,
    /// When this range last grew (a counter), for SACK block order.
    touched: u64,
}

pub struct Receiver {
    rcv_nxt: u64,
    out_of_order: Vec<Range>,
    sack: bool,
    delayed_ack: bool,
    delack_timeout: Time,
    mss: u32,
    /// In-order segments received but not yet acknowledged.
    unacked: u32,
    delack_deadline: Option<Time>,
    arrivals: u64,
    /// RFC 7323's `TS.Recent`, the newest timestamp seen, and the ACK
    /// number last sent (`Last.ACK.sent`).
    ts_recent: Time,
    ts_newest: Time,
    last_ack_sent: u64,
    /// Bytes delivered in order to the application.
    pub delivered: u64,
    /// ACKs carry ECN-Echo.
    ece: bool,
}

impl Receiver {
    pub fn new(mss: u32, sack: bool, delayed_ack: bool, delack_timeout: Time) -> Receiver {
        Receiver {
            rcv_nxt: 0,
            out_of_order: Vec::new(),
            sack,
            delayed_ack,
            delack_timeout,
            mss,
            unacked: 0,
            delack_deadline: None,
            arrivals: 0,
            ts_recent: Time::ZERO,
            ts_newest: Time::ZERO,
            last_ack_sent: 0,
            delivered: 0,
            ece: false,
        }
    }

    /// When the delayed-ACK timer fires, if it runs.
    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack_deadline
    }

    fn ack(&mut self, latest: Option<(u64, u64)>) -> Ack {
        self.unacked = 0;
        self.delack_deadline = None;
        self.last_ack_sent = self.rcv_nxt;
        let mut ack = Ack { ack: self.rcv_nxt, ts_echo: self.ts_recent, ece: self.ece, ..Ack::default() };
        if !self.sack || self.out_of_order.is_empty() {
            return ack;
        }
        let mut order: Vec<&Range> = self.out_of_order.iter().collect();
        order.sort_by_key(|r| std::cmp::Reverse(r.touched));
        if let Some((start, end)) = latest {
            if let Some(pos) = order.iter().position(|r| r.start <= start && end <= r.end) {
                let first = order.remove(pos);
                order.insert(0, first);
            }
        }
        for (slot, r) in ack.sack.iter_mut().zip(order) {
            *slot = (r.start, r.end);
            ack.sack_len += 1;
        }
        ack
    }

    /// Adds `[start, end)` to the out-of-order ranges, merging neighbours.
    fn store(&mut self, start: u64, end: u64) {
        self.arrivals += 1;
        let mut merged = Range { start, end, touched: self.arrivals };
        self.out_of_order.retain(|r| {
            if r.end < merged.start || r.start > merged.end {
                true
            } else {
                merged.start = merged.start.min(r.start);
                merged.end = merged.end.max(r.end);
                false
            }
        });
        let at = self.out_of_order.partition_point(|r| r.start < merged.start);
        self.out_of_order.insert(at, merged);
    }

    /// The ECN signals of the data segment about to be passed to
    /// [`Receiver::on_segment`]: its IP header's CE mark and its CWR flag.
    pub fn on_ecn(&mut self, ce: bool, cwr: bool) {
        if cwr {
            self.ece = false;
        }
        if ce {
            self.ece = true;
        }
    }

    /// A data segment `[seq, seq + len)`, sent at `sent_at` (its
    /// timestamp), arrives at `now`. Returns the ACK to send now, if any.
    pub fn on_segment(&mut self, seq: u64, len: u32, sent_at: Time, now: Time) -> Option<Ack> {
        if sent_at >= self.ts_newest {
            self.ts_newest = sent_at;
            if seq == self.rcv_nxt && seq <= self.last_ack_sent {
                self.ts_recent = sent_at;
            }
        }
        let end = seq + len as u64;
        if end <= self.rcv_nxt {
            // A duplicate: acknowledge at once so the sender learns.
            return Some(self.ack(None));
        }
        if seq > self.rcv_nxt {
            self.store(seq, end);
            return Some(self.ack(Some((seq, end))));
        }
        let had_holes = !self.out_of_order.is_empty();
        self.rcv_nxt = end;
        while let Some(first) = self.out_of_order.first() {
            if first.start > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(first.end);
            self.out_of_order.remove(0);
        }
        self.delivered = self.rcv_nxt;
        if !self.delayed_ack || had_holes {
            return Some(self.ack(None));
        }
        if len >= self.mss {
            self.unacked += 1;
        }
        if self.unacked >= 2 {
            return Some(self.ack(None));
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.delack_timeout);
        }
        None
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack_timeout(&mut self) -> Option<Ack> {
        self.delack_deadline.take()?;
        Some(self.ack(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver(sack: bool, delayed: bool) -> Receiver {
        Receiver::new(1000, sack, delayed, Time::from_millis(100))
    }

    /// RFC 3168 §6.1.3: after a CE-marked segment every ACK carries ECE
    /// until a segment with CWR arrives; a CWR segment that is itself
    /// CE-marked keeps the echo on; delayed ACKs carry it too.
    #[test]
    fn ece_is_echoed_from_a_ce_mark_until_cwr() {
        let mut r = receiver(false, false);
        let segment = |r: &mut Receiver, i: u64, ce: bool, cwr: bool| {
            r.on_ecn(ce, cwr);
            r.on_segment(i * 1000, 1000, Time::ZERO, Time::ZERO).expect("ACK every segment").ece
        };
        assert!(!segment(&mut r, 0, false, false));
        assert!(segment(&mut r, 1, true, false), "the CE-marked segment's ACK");
        assert!(segment(&mut r, 2, false, false), "and the ones after it");
        assert!(segment(&mut r, 3, false, false));
        assert!(!segment(&mut r, 4, false, true), "CWR ends the echo");
        assert!(!segment(&mut r, 5, false, false));
        assert!(segment(&mut r, 6, true, true), "a CE-marked CWR segment keeps it");
        assert!(segment(&mut r, 7, false, false));

        let mut delayed = receiver(false, true);
        delayed.on_ecn(true, false);
        assert_eq!(delayed.on_segment(0, 1000, Time::ZERO, Time::ZERO), None, "a CE mark does not hasten the ACK");
        assert!(delayed.on_delack_timeout().unwrap().ece);
    }

    #[test]
    fn in_order_data_is_acknowledged_cumulatively() {
        let mut r = receiver(false, false);
        assert_eq!(r.on_segment(0, 1000, Time::ZERO, Time::ZERO).unwrap().ack, 1000);
        assert_eq!(r.on_segment(1000, 1000, Time::ZERO, Time::ZERO).unwrap().ack, 2000);
        assert_eq!(r.delivered, 2000);
    }

    #[test]
    fn a_hole_gives_duplicate_acks_with_sack_blocks_latest_first() {
        let mut r = receiver(true, false);
        r.on_segment(0, 1000, Time::ZERO, Time::ZERO);
        let a = r.on_segment(2000, 1000, Time::ZERO, Time::ZERO).unwrap();
        assert_eq!((a.ack, a.blocks()), (1000, &[(2000, 3000)][..]));
        let b = r.on_segment(5000, 1000, Time::ZERO, Time::ZERO).unwrap();
        assert_eq!((b.ack, b.blocks()), (1000, &[(5000, 6000), (2000, 3000)][..]));
        let c = r.on_segment(3000, 1000, Time::ZERO, Time::ZERO).unwrap();
        assert_eq!(c.blocks(), &[(2000, 4000), (5000, 6000)][..]);
        // Filling the first hole acknowledges up to the next one.
        let d = r.on_segment(1000, 1000, Time::ZERO, Time::ZERO).unwrap();
        assert_eq!((d.ack, d.blocks()), (4000, &[(5000, 6000)][..]));
    }

    #[test]
    fn without_sack_no_blocks_are_sent() {
        let mut r = receiver(false, false);
        r.on_segment(0, 1000, Time::ZERO, Time::ZERO);
        assert_eq!(r.on_segment(2000, 1000, Time::ZERO, Time::ZERO).unwrap().sack_len, 0);
    }

    #[test]
    fn delayed_acks_cover_two_segments_or_wait_for_the_timer() {
        let mut r = receiver(false, true);
        assert_eq!(r.on_segment(0, 1000, Time::ZERO, Time::ZERO), None);
        assert_eq!(r.delack_deadline(), Some(Time::from_millis(100)));
        assert_eq!(r.on_segment(1000, 1000, Time::ZERO, Time::from_millis(1)).unwrap().ack, 2000);
        assert_eq!(r.delack_deadline(), None);
        assert_eq!(r.on_segment(2000, 1000, Time::ZERO, Time::from_millis(2)), None);
        assert_eq!(r.on_delack_timeout().unwrap().ack, 3000);
        assert_eq!(r.on_delack_timeout(), None);
    }

    #[test]
    fn out_of_order_segments_are_acknowledged_at_once_even_with_delayed_acks() {
        let mut r = receiver(false, true);
        assert_eq!(r.on_segment(1000, 1000, Time::ZERO, Time::ZERO).unwrap().ack, 0);
        assert_eq!(r.on_segment(0, 1000, Time::ZERO, Time::ZERO).unwrap().ack, 2000);
    }

    #[test]
    fn acks_echo_the_timestamp_rfc_7323_and_ns3_choose() {
        let ms = Time::from_millis;
        // Delayed ACKs echo the first of the two segments they cover.
        let mut r = receiver(false, true);
        assert_eq!(r.on_segment(0, 1000, ms(1), ms(11)), None);
        assert_eq!(r.on_segment(1000, 1000, ms(2), ms(12)).unwrap().ts_echo, ms(1));
        // Out of order: duplicate ACKs echo the last segment that arrived in
        // order, the ACK of the filled hole echoes the retransmission.
        let mut r = receiver(false, false);
        assert_eq!(r.on_segment(0, 1000, ms(1), ms(11)).unwrap().ts_echo, ms(1));
        assert_eq!(r.on_segment(2000, 1000, ms(3), ms(13)).unwrap().ts_echo, ms(1));
        assert_eq!(r.on_segment(3000, 1000, ms(4), ms(14)).unwrap().ts_echo, ms(1));
        let filled = r.on_segment(1000, 1000, ms(20), ms(30)).unwrap();
        assert_eq!((filled.ack, filled.ts_echo), (4000, ms(20)));
    }
}
