//! The fields of a real IPv4 packet the router reads (addresses, protocol,
//! ports, DSCP, ECN) and the ones it writes (DSCP, and CE in the ECN field,
//! RFC 3168 §5), with the header checksum updated incrementally (RFC 1624).

use phb::classify::Protocol;
use phb::Ecn;

/// What the router needs of a packet's headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub protocol: Protocol,
    pub src_port: u16,
    pub dst_port: u16,
    /// The DSCP codepoint (the six high bits of the TOS byte).
    pub dscp: u8,
    /// The ECN field (the two low bits of the TOS byte, RFC 3168 §5).
    pub ecn: Ecn,
}

const TCP: u8 = 6;
const UDP: u8 = 17;

/// The headers of `packet`, if it is an IPv4 TCP or UDP packet whose
/// headers fit in it (anything else the router does not forward).
pub fn parse(packet: &[u8]) -> Option<Header> {
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return None;
    }
    let ihl = usize::from(packet[0] & 0x0f) * 4;
    let protocol = match packet[9] {
        TCP => Protocol::Tcp,
        UDP => Protocol::Udp,
        _ => return None,
    };
    let ports = packet.get(ihl..ihl + 4)?;
    let addr = |at: usize| [packet[at], packet[at + 1], packet[at + 2], packet[at + 3]];
    Some(Header {
        src: addr(12),
        dst: addr(16),
        protocol,
        src_port: u16::from_be_bytes([ports[0], ports[1]]),
        dst_port: u16::from_be_bytes([ports[2], ports[3]]),
        dscp: packet[1] >> 2,
        ecn: match packet[1] & 0x03 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        },
    })
}

/// Writes `dscp` into the packet's TOS byte, keeping the ECN bits.
pub fn set_dscp(packet: &mut [u8], dscp: u8) {
    set_tos(packet, (dscp << 2) | (packet[1] & 0x03));
}

/// Sets the ECN field to CE (congestion experienced, RFC 3168 §5), keeping
/// the DSCP.
pub fn set_ce(packet: &mut [u8]) {
    set_tos(packet, packet[1] | Ecn::Ce as u8);
}

/// Writes `tos` into the packet's TOS byte and updates the header checksum:
/// `HC' = ~(~HC + ~m + m')` over the 16-bit word holding the TOS byte
/// (RFC 1624, eqn. 3).
fn set_tos(packet: &mut [u8], tos: u8) {
    let old_word = u16::from_be_bytes([packet[0], packet[1]]);
    packet[1] = tos;
    let new_word = u16::from_be_bytes([packet[0], packet[1]]);
    let checksum = u16::from_be_bytes([packet[10], packet[11]]);
    let mut sum = u32::from(!checksum) + u32::from(!old_word) + u32::from(new_word);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    packet[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checksum of a header computed from scratch.
    fn checksum(header: &[u8]) -> u16 {
        let mut sum: u32 = header
            .chunks(2)
            .enumerate()
            .filter(|(i, _)| *i != 5)
            .map(|(_, w)| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }

    fn udp_packet(tos: u8) -> Vec<u8> {
        let mut p = vec![0x45, tos, 0, 28, 0x12, 0x34, 0x40, 0, 64, UDP, 0, 0, 10, 77, 0, 1, 10, 77, 0, 3];
        let c = checksum(&p);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p.extend_from_slice(&[0x4e, 0x20, 0x13, 0x89, 0, 8, 0, 0]);
        p
    }

    #[test]
    fn reads_the_five_tuple_and_dscp() {
        let h = parse(&udp_packet(46 << 2)).unwrap();
        assert_eq!(h.src, [10, 77, 0, 1]);
        assert_eq!(h.dst, [10, 77, 0, 3]);
        assert_eq!((h.src_port, h.dst_port), (20000, 5001));
        assert_eq!(h.protocol, Protocol::Udp);
        assert_eq!(h.dscp, 46);
        assert_eq!(h.ecn, Ecn::NotEct);
        for (bits, ecn) in [(1, Ecn::Ect1), (2, Ecn::Ect0), (3, Ecn::Ce)] {
            assert_eq!(parse(&udp_packet((46 << 2) | bits)).unwrap().ecn, ecn);
        }
    }

    /// RFC 3168 §5: a router sets CE in an ECT packet; the DSCP stays and the
    /// header checksum stays valid (it is checked by every receiving stack).
    #[test]
    fn setting_ce_keeps_the_dscp_and_a_valid_checksum() {
        for tos in [0b10u8, 0b01, (46 << 2) | 0b10, (10 << 2) | 0b01, 0xfe, 0xfd] {
            let mut p = udp_packet(tos);
            set_ce(&mut p);
            assert_eq!(p[1] >> 2, tos >> 2);
            assert_eq!(parse(&p).unwrap().ecn, Ecn::Ce);
            assert_eq!(u16::from_be_bytes([p[10], p[11]]), checksum(&p[..20]), "tos {tos:#x}");
        }
    }

    #[test]
    fn rewriting_dscp_keeps_ecn_and_a_valid_checksum() {
        for (tos, dscp) in [(0u8, 46u8), ((46 << 2) | 2, 10), (0xff, 0), (0, 63)] {
            let mut p = udp_packet(tos);
            set_dscp(&mut p, dscp);
            assert_eq!(p[1] >> 2, dscp);
            assert_eq!(p[1] & 3, tos & 3);
            assert_eq!(u16::from_be_bytes([p[10], p[11]]), checksum(&p[..20]), "tos {tos} -> dscp {dscp}");
        }
    }

    #[test]
    fn other_packets_are_not_parsed() {
        assert_eq!(parse(&[0x60; 40]), None); // IPv6
        let mut icmp = udp_packet(0);
        icmp[9] = 1;
        assert_eq!(parse(&icmp), None);
        assert_eq!(parse(&udp_packet(0)[..21]), None);
    }
}
