//! Link-layer framing: what a packet costs on the wire and in a buffer that
//! counts cells.
//!
//! Most links carry IP packets as they are ([`Framing::None`]): a packet of
//! `L` bytes takes `L` bytes of the link's rate and one packet of a buffer.
//! An ATM link carries each IP packet as one AAL5 frame of fixed 53-byte
//! cells ([`Framing::Aal5`]):
//!
//! - **AAL5 CPCS-PDU** (ITU-T I.363.5 §6.1.2): the payload, then padding to
//!   a multiple of 48 bytes, then an 8-byte trailer (CPCS-UU, CPI, length,
//!   CRC-32). A packet of `L` bytes therefore fills `n = ⌈(L + 8)/48⌉` cell
//!   payloads.
//! - **ATM cells** (ITU-T I.361): 5 bytes of header and 48 of payload, so the
//!   frame is `53·n` bytes on the wire; the link's serialisation time and
//!   throughput count those bytes.
//! - **Encapsulation** (RFC 2684): IP over AAL5 is either VC-multiplexed
//!   (§6.1, "null encapsulation": the IP packet is the AAL5 payload) or
//!   LLC-encapsulated (§5.1, LLC/SNAP `AA-AA-03 00-00-00 08-00`: 8 more
//!   bytes before the IP header, RFC 1483's and RFC 2225's default for
//!   classical IP over ATM). `llc_snap` adds those 8 bytes:
//!   `n = ⌈(L + 16)/48⌉`. Tufail, Jennes & Leduc (1999, Section 2.2) say
//!   only that their simulator fragments every packet into cells; the
//!   default here is the null encapsulation, the cell count the AAL5
//!   trailer alone gives (a 1500-byte packet is 32 cells either way; a
//!   40-byte ACK is 1 cell, or 2 with LLC/SNAP).
//!
//! A frame is accepted or discarded whole: phblab's qdiscs decide per packet,
//! and with AAL5 framing a packet is one frame (no partial frames, as with
//! Early and Partial Packet Discard together). The cell count is what a
//! buffer that counts cells ([`crate::aqm::Limit::Cells`], F-RED, DI-RO)
//! sees of a packet, and the wire bytes are what schedulers and the link
//! see; the framing belongs to the link and its buffers, never to a
//! mechanism, so a scheduler or dropper written for IP packets runs
//! unchanged on an ATM link.
//!
//! On a link without framing both calls cost a branch on a constant of the
//! port: [`Framing::cells`] returns 0 and [`Framing::wire_bytes`] the size.

/// Bytes of one ATM cell on the wire (ITU-T I.361: 5 of header, 48 of payload).
pub const CELL_BYTES: u32 = 53;
/// Payload bytes of one ATM cell.
pub const CELL_PAYLOAD: u32 = 48;
/// The AAL5 CPCS-PDU trailer (ITU-T I.363.5 §6.1.2.2).
pub const AAL5_TRAILER: u32 = 8;
/// The LLC/SNAP header of RFC 2684 §5.1 for routed IPv4.
pub const LLC_SNAP: u32 = 8;

/// How a link carries packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Framing {
    /// IP packets as they are.
    #[default]
    None,
    /// Each packet one AAL5 frame of 53-byte ATM cells; `llc_snap` adds
    /// RFC 2684's 8-byte LLC/SNAP header to every frame.
    Aal5 { llc_snap: bool },
}

impl Framing {
    /// AAL5 with the null (VC-multiplexed) encapsulation.
    pub const AAL5: Framing = Framing::Aal5 { llc_snap: false };

    /// Whether the link carries cells (its buffers may count them).
    #[inline]
    pub const fn has_cells(self) -> bool {
        matches!(self, Framing::Aal5 { .. })
    }

    /// The cells of a packet of `size` bytes: `⌈(size + 8)/48⌉` (plus the
    /// LLC/SNAP header's 8 bytes with `llc_snap`); 0 without framing.
    #[inline]
    pub const fn cells(self, size: u32) -> u32 {
        match self {
            Framing::None => 0,
            Framing::Aal5 { llc_snap } => {
                let overhead = AAL5_TRAILER + if llc_snap { LLC_SNAP } else { 0 };
                (size + overhead).div_ceil(CELL_PAYLOAD)
            }
        }
    }

    /// The bytes a packet of `size` bytes takes on the wire: `53·cells`,
    /// or `size` itself without framing.
    #[inline]
    pub const fn wire_bytes(self, size: u32) -> u32 {
        match self {
            Framing::None => size,
            Framing::Aal5 { .. } => CELL_BYTES * self.cells(size),
        }
    }

    /// The name scenario files use: `"none"`, `"aal5"` or `"aal5_llc_snap"`.
    pub const fn name(self) -> &'static str {
        match self {
            Framing::None => "none",
            Framing::Aal5 { llc_snap: false } => "aal5",
            Framing::Aal5 { llc_snap: true } => "aal5_llc_snap",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// n = ⌈(L + 8)/48⌉ at and around the cell boundaries: 40 bytes (an
    /// ACK) + 8 = 48, one cell; 41 bytes spill into a second; 1500 bytes
    /// (an MSS of 1460 with 40 bytes of headers) + 8 = 1508 → 32 cells =
    /// 1696 bytes on the wire; 1528 + 8 = 1536 is exactly 32 cells, 1529 is
    /// 33. With LLC/SNAP the ACK needs 2 cells, the 1500-byte packet still 32.
    #[test]
    fn aal5_cell_counts_by_hand() {
        let aal5 = Framing::AAL5;
        for (size, cells) in [(0, 1), (1, 1), (40, 1), (41, 2), (88, 2), (89, 3), (1500, 32), (1528, 32), (1529, 33)] {
            assert_eq!(aal5.cells(size), cells, "{size} bytes");
            assert_eq!(aal5.wire_bytes(size), 53 * cells, "{size} bytes");
        }
        let llc = Framing::Aal5 { llc_snap: true };
        assert_eq!((llc.cells(40), llc.cells(1500), llc.cells(1520), llc.cells(1521)), (2, 32, 32, 33));
    }

    #[test]
    fn no_framing_is_the_packet_itself() {
        for size in [0, 40, 1500, 65_535] {
            assert_eq!(Framing::None.cells(size), 0);
            assert_eq!(Framing::None.wire_bytes(size), size);
        }
        assert!(!Framing::None.has_cells() && Framing::AAL5.has_cells());
    }

    /// The formula against a byte-by-byte construction of the CPCS-PDU:
    /// payload, pad, trailer, cut into 48-byte cell payloads.
    #[test]
    fn cells_match_a_built_frame() {
        for size in 0..5000u32 {
            for llc_snap in [false, true] {
                let mut pdu = if llc_snap { LLC_SNAP } else { 0 } + size + AAL5_TRAILER;
                while !pdu.is_multiple_of(CELL_PAYLOAD) {
                    pdu += 1;
                }
                assert_eq!(Framing::Aal5 { llc_snap }.cells(size), pdu / CELL_PAYLOAD);
            }
        }
    }
}
