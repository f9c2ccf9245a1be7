//! Human units in scenario files: rates, times, sizes and queue limits.
//!
//! Each parser takes the text of one value (`"10Mbps"`, `"1.5s"`, `"64KB"`,
//! `"250pkt"`) and returns it in the engine's integer unit (bits per second,
//! [`Time`] nanoseconds, bytes, [`Limit`]), or a message saying what was
//! expected. Prefixes are decimal SI (`k` = 1000) except the binary `KiB`,
//! `MiB`, `GiB`. Numbers are decimal (`1.5`, no exponent) and converted
//! exactly: a value that is not a whole number of the integer unit (`0.5ns`,
//! `1.5B`) is an error rather than silently rounded. Whitespace between the
//! number and the unit is allowed. A bare number is an error naming the unit
//! expected.

use phb::aqm::Limit;
use phb::Time;

const RATE_EXAMPLES: &str = "10Mbps, 64kbps, 1Gbps";
const TIME_EXAMPLES: &str = "50ms, 1.5s, 10us";
const SIZE_EXAMPLES: &str = "500B, 64KB, 1.5MB";
const LIMIT_EXAMPLES: &str = "250pkt, 64KB, 20000cells";

/// A rate in bits per second: `100bps`, `64kbps`, `10Mbps`, `1.5Mb/s`,
/// `2Mbit/s`, `1Gbps`. Must be positive.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let (number, unit) = split(text, "rate", RATE_EXAMPLES)?;
    let (prefix, base) = match unit.find(['b', 'B']) {
        Some(i) => unit.split_at(i),
        None => return Err(not_a(text, "rate", RATE_EXAMPLES)),
    };
    if base.starts_with('B') {
        return Err(format!("{text:?}: rates are in bits per second, not bytes; expected e.g. {RATE_EXAMPLES}"));
    }
    if !matches!(base, "bps" | "b/s" | "bit/s" | "bits/s") {
        return Err(not_a(text, "rate", RATE_EXAMPLES));
    }
    let multiplier = match prefix {
        "" => 1,
        "k" | "K" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        _ => return Err(not_a(text, "rate", RATE_EXAMPLES)),
    };
    match scale(number, multiplier) {
        Ok(0) => Err(format!("{text:?}: a rate must be positive")),
        Ok(bps) => Ok(bps),
        Err(Inexact) => Err(format!("{text:?} is not a whole number of bits per second")),
        Err(TooLarge) => Err(format!("{text:?} is too large a rate")),
    }
}

/// A time: `100ns`, `10us` (or `µs`), `50ms`, `1.5s`, `2min`. Zero is allowed.
pub fn parse_time(text: &str) -> Result<Time, String> {
    let (number, unit) = split(text, "time", TIME_EXAMPLES)?;
    let multiplier = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        _ => return Err(not_a(text, "time", TIME_EXAMPLES)),
    };
    match scale(number, multiplier) {
        Ok(ns) => Ok(Time::from_nanos(ns)),
        Err(Inexact) => Err(format!("{text:?} is not a whole number of nanoseconds")),
        Err(TooLarge) => Err(format!("{text:?} is too long a time")),
    }
}

/// A size in bytes: `500B`, `64KB` (64 000 bytes), `64KiB` (65 536 bytes),
/// `1.5MB`. Zero is allowed.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (number, unit) = split(text, "size", SIZE_EXAMPLES)?;
    size_in(text, number, unit, "size", SIZE_EXAMPLES)
}

/// A queue limit: packets (`250pkt`, `250 pkts`, `250p`, `250packets`),
/// ATM cells (`20000cells`, `1cell`; on a link with AAL5 framing) or a size
/// in bytes (`64KB`).
pub fn parse_limit(text: &str) -> Result<Limit, String> {
    let (number, unit) = split(text, "limit", LIMIT_EXAMPLES)?;
    let whole = |what: &str| match scale(number, 1) {
        Ok(n) => Ok(n),
        Err(Inexact) => Err(format!("{text:?} is not a whole number of {what}")),
        Err(TooLarge) => Err(format!("{text:?} is too large a limit")),
    };
    if matches!(unit, "p" | "pkt" | "pkts" | "packet" | "packets") {
        return whole("packets").map(Limit::Packets);
    }
    if matches!(unit, "cell" | "cells") {
        return whole("cells").map(Limit::Cells);
    }
    size_in(text, number, unit, "limit", LIMIT_EXAMPLES).map(Limit::Bytes)
}

fn size_in(text: &str, number: &str, unit: &str, what: &str, examples: &str) -> Result<u64, String> {
    let multiplier = match unit {
        "B" | "byte" | "bytes" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "b" | "kb" | "Kb" | "Mb" | "Gb" => {
            return Err(format!("{text:?}: sizes are in bytes (B, KB, MB), not bits; expected e.g. {examples}"))
        }
        _ => return Err(not_a(text, what, examples)),
    };
    match scale(number, multiplier) {
        Ok(bytes) => Ok(bytes),
        Err(Inexact) => Err(format!("{text:?} is not a whole number of bytes")),
        Err(TooLarge) => Err(format!("{text:?} is too large a {what}")),
    }
}

fn not_a(text: &str, what: &str, examples: &str) -> String {
    let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{text:?} is not {article} {what}; expected a number and a unit such as {examples}")
}

/// Splits `" 1.5 Mbps "` into `("1.5", "Mbps")`, rejecting negative numbers,
/// a missing number and a missing unit.
fn split<'a>(text: &'a str, what: &str, examples: &str) -> Result<(&'a str, &'a str), String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!("{text:?}: a {what} must not be negative"));
    }
    let end = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(end);
    let unit = unit.trim_start();
    if !number.bytes().any(|b| b.is_ascii_digit()) || number.matches('.').count() > 1 {
        return Err(not_a(text, what, examples));
    }
    if unit.is_empty() {
        return Err(format!("{text:?} has no unit; expected a {what} such as {examples}"));
    }
    Ok((number, unit))
}

/// Why a decimal could not be scaled to an integer.
#[derive(Debug, PartialEq)]
enum ScaleError {
    /// The result has a fractional part.
    Inexact,
    /// The result does not fit in a `u64`.
    TooLarge,
}
use ScaleError::{Inexact, TooLarge};

/// `number × multiplier` computed exactly, for a decimal `number` made of
/// digits and at most one point (checked by [`split`]).
fn scale(number: &str, multiplier: u64) -> Result<u64, ScaleError> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let fraction = fraction.trim_end_matches('0');
    let mut digits: u128 = 0;
    for b in whole.bytes().chain(fraction.bytes()) {
        digits = digits.checked_mul(10).and_then(|d| d.checked_add(u128::from(b - b'0'))).ok_or(TooLarge)?;
    }
    let denominator = 10u128.checked_pow(fraction.len() as u32).ok_or(Inexact)?;
    let scaled = digits.checked_mul(u128::from(multiplier)).ok_or(TooLarge)?;
    if scaled % denominator != 0 {
        return Err(Inexact);
    }
    u64::try_from(scaled / denominator).map_err(|_| TooLarge)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_use_decimal_prefixes_and_several_spellings() {
        assert_eq!(parse_rate("100bps"), Ok(100));
        assert_eq!(parse_rate("64kbps"), Ok(64_000));
        assert_eq!(parse_rate("10Mbps"), Ok(10_000_000));
        assert_eq!(parse_rate("1.5Mb/s"), Ok(1_500_000));
        assert_eq!(parse_rate("2 Mbit/s"), Ok(2_000_000));
        assert_eq!(parse_rate("1Gbps"), Ok(1_000_000_000));
        assert_eq!(parse_rate(" 0.25 Gbps "), Ok(250_000_000));
    }

    #[test]
    fn bad_rates_say_what_was_expected() {
        assert_eq!(
            parse_rate("10Mbs").unwrap_err(),
            "\"10Mbs\" is not a rate; expected a number and a unit such as 10Mbps, 64kbps, 1Gbps"
        );
        assert!(parse_rate("10").unwrap_err().contains("has no unit; expected a rate such as 10Mbps"));
        assert!(parse_rate("0Mbps").unwrap_err().contains("must be positive"));
        assert!(parse_rate("-1Mbps").unwrap_err().contains("must not be negative"));
        assert!(parse_rate("10MBps").unwrap_err().contains("bits per second, not bytes"));
        assert!(parse_rate("1.5bps").unwrap_err().contains("whole number of bits"));
        assert!(parse_rate("Mbps").unwrap_err().contains("is not a rate"));
        assert!(parse_rate("1.2.3Mbps").unwrap_err().contains("is not a rate"));
        assert!(parse_rate("99999999999Tbps").unwrap_err().contains("too large"));
    }

    #[test]
    fn times_convert_to_nanoseconds() {
        assert_eq!(parse_time("100ns"), Ok(Time::from_nanos(100)));
        assert_eq!(parse_time("10us"), Ok(Time::from_micros(10)));
        assert_eq!(parse_time("10µs"), Ok(Time::from_micros(10)));
        assert_eq!(parse_time("50ms"), Ok(Time::from_millis(50)));
        assert_eq!(parse_time("1.5s"), Ok(Time::from_millis(1500)));
        assert_eq!(parse_time("2min"), Ok(Time::from_secs(120)));
        assert_eq!(parse_time("0ms"), Ok(Time::ZERO));
        assert_eq!(parse_time("0.000000001 s"), Ok(Time::from_nanos(1)));
    }

    #[test]
    fn bad_times_say_what_was_expected() {
        assert!(parse_time("50").unwrap_err().contains("has no unit; expected a time such as 50ms"));
        assert!(parse_time("5 sec").unwrap_err().contains("is not a time"));
        assert!(parse_time("0.5ns").unwrap_err().contains("whole number of nanoseconds"));
        assert!(parse_time("-1s").unwrap_err().contains("negative"));
        assert!(parse_time("").unwrap_err().contains("is not a time"));
    }

    #[test]
    fn sizes_are_decimal_unless_binary() {
        assert_eq!(parse_size("500B"), Ok(500));
        assert_eq!(parse_size("64KB"), Ok(64_000));
        assert_eq!(parse_size("64 KiB"), Ok(65_536));
        assert_eq!(parse_size("1.5MB"), Ok(1_500_000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("500").unwrap_err().contains("has no unit; expected a size such as 500B"));
        assert!(parse_size("64kb").unwrap_err().contains("not bits"));
        assert!(parse_size("1.5B").unwrap_err().contains("whole number of bytes"));
    }

    #[test]
    fn limits_are_packets_or_bytes() {
        assert_eq!(parse_limit("250pkt"), Ok(Limit::Packets(250)));
        assert_eq!(parse_limit("250 pkts"), Ok(Limit::Packets(250)));
        assert_eq!(parse_limit("250p"), Ok(Limit::Packets(250)));
        assert_eq!(parse_limit("64KB"), Ok(Limit::Bytes(64_000)));
        assert_eq!(parse_limit("20000cells"), Ok(Limit::Cells(20_000)));
        assert_eq!(parse_limit("1 cell"), Ok(Limit::Cells(1)));
        assert!(parse_limit("1.5cells").unwrap_err().contains("whole number of cells"));
        assert!(parse_limit("250").unwrap_err().contains("has no unit; expected a limit such as 250pkt, 64KB"));
        assert!(parse_limit("2.5pkt").unwrap_err().contains("whole number of packets"));
    }
}
