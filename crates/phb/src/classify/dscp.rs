//! The behaviour-aggregate (BA) table: standard DSCP names, their codepoints
//! and the drop precedence an AF codepoint encodes.
//!
//! - **Default / DF** = 0 (RFC 2474 §4.1; "DF" in RFC 4594); `BE` and
//!   `CS0` are accepted as aliases.
//! - **Class Selector** `CSn` = 8·n, n = 0..=7 (RFC 2474 §4.2.2).
//! - **Assured Forwarding** `AFxy` = 8·x + 2·y, class x = 1..=4, drop
//!   precedence y = 1..=3 (RFC 2597 §6). Drop precedence y maps to this
//!   crate's [`Colour`]: 1 → Green, 2 → Yellow, 3 → Red (the three levels of
//!   RFC 2597 §2, as RFC 2697/2698 markers colour them).
//! - **Expedited Forwarding** `EF` = 46 (RFC 3246, its recommended codepoint 101110).
//! - **VOICE-ADMIT** = 44, capacity-admitted EF traffic (RFC 5865).
//! - **Lower Effort** `LE` = 1 (RFC 8622) — not in the brief's list, added
//!   because it is a standard name a scenario may well use.
//!
//! Names are matched case-insensitively, and `_` is accepted for `-`
//! (`voice_admit`). Every codepoint that is not an AF codepoint has drop
//! precedence Green: neither the class selectors (RFC 2474) nor EF define a drop
//! precedence.

use crate::packet::Colour;

pub const DF: u8 = 0;
pub const LE: u8 = 1;
pub const CS1: u8 = 8;
pub const AF11: u8 = 10;
pub const AF12: u8 = 12;
pub const AF13: u8 = 14;
pub const CS2: u8 = 16;
pub const AF21: u8 = 18;
pub const AF22: u8 = 20;
pub const AF23: u8 = 22;
pub const CS3: u8 = 24;
pub const AF31: u8 = 26;
pub const AF32: u8 = 28;
pub const AF33: u8 = 30;
pub const CS4: u8 = 32;
pub const AF41: u8 = 34;
pub const AF42: u8 = 36;
pub const AF43: u8 = 38;
pub const CS5: u8 = 40;
pub const VOICE_ADMIT: u8 = 44;
pub const EF: u8 = 46;
pub const CS6: u8 = 48;
pub const CS7: u8 = 56;

/// The largest codepoint (DSCP is six bits).
pub const MAX_CODEPOINT: u8 = 63;

/// Canonical names in codepoint order: what [`name`] returns.
pub const NAMES: [(&str, u8); 23] = [
    ("DF", DF),
    ("LE", LE),
    ("CS1", CS1),
    ("AF11", AF11),
    ("AF12", AF12),
    ("AF13", AF13),
    ("CS2", CS2),
    ("AF21", AF21),
    ("AF22", AF22),
    ("AF23", AF23),
    ("CS3", CS3),
    ("AF31", AF31),
    ("AF32", AF32),
    ("AF33", AF33),
    ("CS4", CS4),
    ("AF41", AF41),
    ("AF42", AF42),
    ("AF43", AF43),
    ("CS5", CS5),
    ("VOICE-ADMIT", VOICE_ADMIT),
    ("EF", EF),
    ("CS6", CS6),
    ("CS7", CS7),
];

/// Other accepted names: both mean codepoint 0.
pub const ALIASES: [(&str, u8); 2] = [("BE", DF), ("CS0", DF)];

/// `a` equals `b` ignoring ASCII case, with `_` in `a` read as `-`.
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| {
            let x = if x == b'_' { b'-' } else { x };
            x.eq_ignore_ascii_case(&y)
        })
}

/// The codepoint of a standard name (case-insensitive), e.g. `"af12"` → 12.
pub fn codepoint(name: &str) -> Option<u8> {
    NAMES.iter().chain(ALIASES.iter()).find(|(n, _)| same_name(name, n)).map(|&(_, cp)| cp)
}

/// The canonical name of a codepoint, if it has one (`0` → `"DF"`).
pub fn name(codepoint: u8) -> Option<&'static str> {
    NAMES.iter().find(|&&(_, cp)| cp == codepoint).map(|&(n, _)| n)
}

/// The AF class x (1..=4) and drop precedence y (1..=3) of an AF codepoint.
pub fn af(codepoint: u8) -> Option<(u8, u8)> {
    let (x, low) = (codepoint >> 3, codepoint & 0b111);
    ((1..=4).contains(&x) && matches!(low, 2 | 4 | 6)).then_some((x, low / 2))
}

/// The drop precedence a codepoint encodes: for `AFxy`, y = 1, 2, 3 gives
/// Green, Yellow, Red (RFC 2597); every other codepoint is Green.
pub fn drop_precedence(codepoint: u8) -> Colour {
    match af(codepoint) {
        Some((_, 2)) => Colour::Yellow,
        Some((_, 3)) => Colour::Red,
        _ => Colour::Green,
    }
}

/// A codepoint written as a standard name (any case) or a decimal number
/// 0..=63. The error lists the valid names.
pub fn parse_codepoint(text: &str) -> Result<u8, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return match t.parse::<u32>() {
            Ok(n) if n <= MAX_CODEPOINT as u32 => Ok(n as u8),
            _ => Err(format!("DSCP codepoint {t} is out of range: a codepoint is 0..=63")),
        };
    }
    codepoint(t).ok_or_else(|| {
        let names: Vec<&str> = NAMES.iter().chain(ALIASES.iter()).map(|&(n, _)| n).collect();
        format!("unknown DSCP name {text:?}: expected a number 0..=63 or one of {}", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_codepoints() {
        assert_eq!(codepoint("AF11"), Some(10));
        assert_eq!(codepoint("AF13"), Some(14));
        assert_eq!(codepoint("AF43"), Some(38));
        assert_eq!(codepoint("EF"), Some(46));
        assert_eq!(codepoint("CS5"), Some(40));
        assert_eq!(codepoint("VOICE-ADMIT"), Some(44));
        assert_eq!(codepoint("voice_admit"), Some(44));
        assert_eq!(codepoint("be"), Some(0));
        assert_eq!(codepoint("Df"), Some(0));
        assert_eq!(codepoint("cs0"), Some(0));
        assert_eq!(codepoint("LE"), Some(1));
        assert_eq!(codepoint("AF14"), None);
        assert_eq!(codepoint("AF1"), None);
        assert_eq!(codepoint(""), None);
        for n in 0..=7u8 {
            assert_eq!(codepoint(&format!("cs{n}")), Some(8 * n));
        }
        for x in 1..=4u8 {
            for y in 1..=3u8 {
                let cp = codepoint(&format!("af{x}{y}")).unwrap();
                assert_eq!(cp, 8 * x + 2 * y);
                assert_eq!(af(cp), Some((x, y)));
            }
        }
        assert_eq!(name(0), Some("DF"));
        assert_eq!(name(46), Some("EF"));
        assert_eq!(name(44), Some("VOICE-ADMIT"));
        assert_eq!(name(47), None);
        assert_eq!(name(64), None);
    }

    #[test]
    fn drop_precedences() {
        assert_eq!(drop_precedence(AF12), Colour::Yellow);
        assert_eq!(drop_precedence(AF11), Colour::Green);
        assert_eq!(drop_precedence(AF43), Colour::Red);
        assert_eq!(drop_precedence(AF33), Colour::Red);
        assert_eq!(drop_precedence(AF22), Colour::Yellow);
        for cp in [DF, LE, CS1, CS5, EF, VOICE_ADMIT, CS7, 63, 42, 9] {
            assert_eq!(drop_precedence(cp), Colour::Green, "{cp}");
        }
        // Exactly twelve codepoints are AF: 4 classes × 3 precedences.
        assert_eq!((0..=63u8).filter(|&c| af(c).is_some()).count(), 12);
        assert_eq!(af(8), None);
        assert_eq!(af(42), None); // 8·5 + 2: no class 5
        assert_eq!(af(0b1_0000), None); // CS2
    }

    #[test]
    fn names_round_trip() {
        for &(n, cp) in NAMES.iter() {
            assert_eq!(codepoint(n), Some(cp), "{n}");
            assert_eq!(codepoint(&n.to_ascii_lowercase()), Some(cp), "{n}");
            assert_eq!(name(cp), Some(n), "{n}");
            assert_eq!(parse_codepoint(n), Ok(cp));
        }
        for &(n, cp) in ALIASES.iter() {
            assert_eq!(codepoint(n), Some(cp));
            assert_eq!(codepoint(name(cp).unwrap()), Some(cp));
        }
        // Codepoints are distinct among the canonical names.
        for (i, a) in NAMES.iter().enumerate() {
            for b in &NAMES[i + 1..] {
                assert!(a.1 < b.1, "{a:?} {b:?}");
            }
        }
        for cp in 0..=63u8 {
            if let Some(n) = name(cp) {
                assert_eq!(codepoint(n), Some(cp));
            }
        }
    }

    #[test]
    fn parse_numbers_and_names() {
        assert_eq!(parse_codepoint("0"), Ok(0));
        assert_eq!(parse_codepoint(" 46 "), Ok(46));
        assert_eq!(parse_codepoint("63"), Ok(63));
        assert_eq!(parse_codepoint("af12"), Ok(12));
        let e = parse_codepoint("64").unwrap_err();
        assert!(e.contains("0..=63"), "{e}");
        assert!(parse_codepoint("99999999999999999999").is_err());
        assert!(parse_codepoint("-1").is_err());
    }

    #[test]
    fn bad_name_lists_the_valid_names() {
        let e = parse_codepoint("AF14").unwrap_err();
        assert!(e.starts_with("unknown DSCP name \"AF14\""), "{e}");
        for &(n, _) in NAMES.iter().chain(ALIASES.iter()) {
            assert!(e.contains(n), "{n} missing from: {e}");
        }
        assert!(e.contains("0..=63"));
        assert!(parse_codepoint("").is_err());
    }
}
