//! Voice over IP: a codec's frames, their headers, and talk spurts.
//!
//! Firoiu, Zhang, Guo, "Best Effort Differentiated Services", ICT 2001,
//! Section II.B: NetMeeting-like voice with the G.723.1 codec at 6.4 kb/s of
//! voice data, one 24-byte voice frame every 30 ms while the speaker talks,
//! carried in RTP (12 bytes), UDP (8) and IP (20) — a 64-byte IP packet —
//! in an Ethernet frame (18 bytes of header and trailer): 82 bytes, "the
//! Ethernet transmission rate is 21.866 kb/s (or 1 packet/30 ms)". Talk
//! spurts and silences alternate as an ON/OFF Markov process with mean ON
//! 3 s and mean OFF 6 s.
//!
//! The source is ns-2's `Application/Traffic/Exponential` (see
//! [`super::onoff`]) at one frame per frame interval while ON; each talk
//! spurt holds the rounded exponential number of frames of mean `ON /
//! interval`, each silence an exponential time of mean `OFF`. Its long-run
//! rate is `size·8/interval · ON/(ON + OFF)`: 7.29 kb/s for the paper's
//! 82-byte frames (a third of 21.87 kb/s).
//!
//! **Which bytes the links carry.** phblab's links carry packets of their
//! stated size and add no framing of their own (a TCP packet is `mss +
//! header` bytes). With `link_layer = "ethernet"` (the default, the paper's
//! 82 bytes) a voice packet is charged its 18 Ethernet bytes on every link,
//! as the paper's ns-2 packets of 82 bytes were; with `"none"` it is the
//! 64-byte IP packet.

use phb::Time;

/// RTP (12) + UDP (8) + IP (20) header bytes.
pub const RTP_UDP_IP_BYTES: u32 = 40;
/// Ethernet header and trailer bytes as the paper counts them (14 + 4).
pub const ETHERNET_BYTES: u32 = 18;

/// A voice codec as packetized for VoIP (one frame per packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// ITU-T G.723.1 as the paper states it: 24 bytes every 30 ms
    /// (6.4 kb/s of voice data).
    G7231,
    /// ITU-T G.711 (64 kb/s PCM), 20 ms of speech per packet: 160 bytes.
    G711,
    /// ITU-T G.729 (8 kb/s), 20 ms per packet: 20 bytes.
    G729,
}

impl Codec {
    /// Voice bytes per packet.
    pub fn payload_bytes(self) -> u32 {
        match self {
            Codec::G7231 => 24,
            Codec::G711 => 160,
            Codec::G729 => 20,
        }
    }

    /// Time between packets while talking.
    pub fn frame_interval(self) -> Time {
        match self {
            Codec::G7231 => Time::from_millis(30),
            Codec::G711 | Codec::G729 => Time::from_millis(20),
        }
    }

    /// The size a packet is charged on the links: payload, RTP/UDP/IP and,
    /// with `ethernet`, the 18 Ethernet bytes.
    pub fn packet_size(self, ethernet: bool) -> u32 {
        self.payload_bytes() + RTP_UDP_IP_BYTES + if ethernet { ETHERNET_BYTES } else { 0 }
    }
}

/// The paper's mean talk spurt (ON).
pub const ON_MEAN: Time = Time::from_secs(3);
/// The paper's mean silence (OFF).
pub const OFF_MEAN: Time = Time::from_secs(6);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::{OnOff, Period};
    use phb::Rng;

    /// The paper's numbers: 82-byte frames every 30 ms are 21.866 kb/s
    /// while talking; 64 bytes without Ethernet.
    #[test]
    fn g723_frames_as_the_paper_counts_them() {
        assert_eq!(Codec::G7231.packet_size(true), 82);
        assert_eq!(Codec::G7231.packet_size(false), 64);
        let rate = 82.0 * 8.0 / Codec::G7231.frame_interval().as_secs_f64();
        assert!((rate - 21_866.67).abs() < 0.01, "{rate}");
        assert_eq!(Codec::G7231.payload_bytes() as f64 * 8.0 / 0.03, 6400.0);
        assert_eq!((Codec::G711.packet_size(false), Codec::G729.packet_size(true)), (200, 78));
    }

    /// ON 3 s, OFF 6 s: a third of the peak rate in the long run, 7.29 kb/s
    /// (within 2% over 200 000 s); talk spurts average 100 frames.
    #[test]
    fn long_run_rate_is_a_third_of_the_peak() {
        let interval = Codec::G7231.frame_interval();
        let mut s = OnOff::new(interval, ON_MEAN, OFF_MEAN, Period::Exponential, Rng::derive(4, "voip"));
        let (mut t, mut frames) = (Time::ZERO, 0u64);
        while t < Time::from_secs(200_000) {
            t += s.next_gap();
            frames += 1;
        }
        let rate = frames as f64 * 82.0 * 8.0 / t.as_secs_f64();
        let expected = 82.0 * 8.0 / 0.03 / 3.0;
        assert!((rate / expected - 1.0).abs() < 0.02, "rate {rate}, expected {expected}");
    }
}
