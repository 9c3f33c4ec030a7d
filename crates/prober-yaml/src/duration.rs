//! Durations as Go's `time.ParseDuration` reads them: an optional sign, then one or more
//! numbers (a fraction allowed) each with its unit, `ns`, `us` (or `µs`, `μs`), `ms`, `s`, `m`
//! or `h`, as in `300ms`, `1.5h`, `1m30s`; `0` alone is zero. This is the grammar of
//! blackbox_exporter's module files, of the Prometheus exporter-toolkit's web configs and of
//! Prometheus itself, so every duration libprober reads, in a file or on `prober`'s command
//! line, is read here.
//!
//! Two readings of the one grammar: [`parse_go`] is Go's, to the nanosecond (fractions through
//! a float, as Go computes them) and to its range (an `i64` of nanoseconds, about 292 years);
//! [`parse_length`] is a length of time, which cannot be negative, in the wider range of a
//! [`Duration`] of `u64` nanoseconds (about 584 years), as `prober`'s options have always read.

use std::fmt;
use std::time::Duration;

/// Why a text is not a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Not the grammar: a number without a unit (`5`), an unknown unit (`1d`), no digits.
    Malformed,
    /// A negative duration where only a length of time makes sense ([`parse_length`]).
    Negative,
    /// Well formed, but too long to hold.
    TooLong,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DurationError::Malformed => "not a duration (expected a number and a unit: 1m30s)",
            DurationError::Negative => "a length of time cannot be negative",
            DurationError::TooLong => "too long",
        })
    }
}

impl std::error::Error for DurationError {}

/// The longest duration [`parse_length`] accepts, in whole hours: what nanoseconds in a `u64`
/// hold (about 584 years).
pub const MAX_LENGTH_HOURS: u64 = u64::MAX / 3_600_000_000_000;

/// Go's `time.ParseDuration`: signed nanoseconds, from `-2562047h47m16.854775808s` to
/// `2562047h47m16.854775807s`.
///
/// # Errors
///
/// [`DurationError::Malformed`] for text that is not the grammar, [`DurationError::TooLong`]
/// beyond Go's range (Go says "invalid duration" to both).
pub fn parse_go(text: &str) -> Result<i64, DurationError> {
    const GO_LIMIT: u64 = 1 << 63;
    let (negative, nanos) = scan(text, GO_LIMIT)?;
    match (negative, nanos) {
        (true, n) => Ok(0i64.wrapping_sub_unsigned(n)),
        (false, n) => i64::try_from(n).map_err(|_| DurationError::TooLong),
    }
}

/// A length of time in Go's grammar: no `-` sign (a `+` is allowed, as in Go), at most
/// [`MAX_LENGTH_HOURS`] hours. Zero is accepted; callers that need more than zero say so.
///
/// # Errors
///
/// [`DurationError::Negative`] for a `-` sign, else as [`parse_go`].
pub fn parse_length(text: &str) -> Result<Duration, DurationError> {
    let (negative, nanos) = scan(text, u64::MAX)?;
    if negative {
        return Err(DurationError::Negative);
    }
    Ok(Duration::from_nanos(nanos))
}

/// Go's algorithm (`time.ParseDuration` with its `leadingInt` and `leadingFraction`), with the
/// largest magnitude a parameter: whether a `-` came first, and the nanoseconds.
fn scan(text: &str, limit: u64) -> Result<(bool, u64), DurationError> {
    use DurationError::{Malformed, TooLong};
    let mut s = text.as_bytes();
    let mut negative = false;
    if let Some((&c @ (b'-' | b'+'), rest)) = s.split_first() {
        negative = c == b'-';
        s = rest;
    }
    if s == b"0" {
        return Ok((negative, 0));
    }
    if s.is_empty() {
        return Err(Malformed);
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(Malformed);
        }
        let digits = s.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut whole: u64 = 0;
        for &c in &s[..digits] {
            whole = whole
                .checked_mul(10)
                .and_then(|w| w.checked_add(u64::from(c - b'0')))
                .filter(|w| *w <= limit)
                .ok_or(TooLong)?;
        }
        s = &s[digits..];
        let mut fraction = None;
        if let Some((b'.', rest)) = s.split_first() {
            let (f, scale, len) = leading_fraction(rest);
            s = &rest[len..];
            fraction = (len > 0).then_some((f, scale));
        }
        if digits == 0 && fraction.is_none() {
            return Err(Malformed);
        }
        let unit_len = s.iter().take_while(|c| !(**c == b'.' || c.is_ascii_digit())).count();
        let unit: u64 = match &s[..unit_len] {
            b"ns" => 1,
            // `µs` (U+00B5) and `μs` (U+03BC) in UTF-8.
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => return Err(Malformed),
        };
        s = &s[unit_len..];
        let mut v = whole.checked_mul(unit).filter(|v| *v <= limit).ok_or(TooLong)?;
        if let Some((f, scale)) = fraction.filter(|(f, _)| *f > 0) {
            // As Go: a float is nanosecond-accurate for fractions of an hour.
            let part = (f as f64 * (unit as f64 / scale)) as u64;
            v = v.checked_add(part).filter(|v| *v <= limit).ok_or(TooLong)?;
        }
        total = total.checked_add(v).filter(|t| *t <= limit).ok_or(TooLong)?;
    }
    Ok((negative, total))
}

/// Go's `leadingFraction`: the digits at the start of `s` as a number and its scale (10 to the
/// number of digits kept), and how many digits there were. Digits past what a `u64` holds
/// only lose precision.
fn leading_fraction(s: &[u8]) -> (u64, f64, usize) {
    let (mut x, mut scale, mut overflow) = (0u64, 1f64, false);
    let len = s.iter().take_while(|c| c.is_ascii_digit()).count();
    for &c in &s[..len] {
        if overflow {
            continue;
        }
        if x > ((1 << 63) - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > 1 << 63 {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: i64 = 1;
    const US: i64 = 1_000;
    const MS: i64 = 1_000_000;
    const S: i64 = 1_000_000_000;
    const M: i64 = 60 * S;
    const H: i64 = 60 * M;

    /// Go's own table: `parseDurationTests` of `src/time/time_test.go` (golang/go at
    /// f7396aaea0297a2e95b502a4075b0aed6efda89f), every case.
    #[test]
    fn go_parse_duration_table() {
        let cases: &[(&str, i64)] = &[
            // simple
            ("0", 0),
            ("5s", 5 * S),
            ("30s", 30 * S),
            ("1478s", 1478 * S),
            // sign
            ("-5s", -5 * S),
            ("+5s", 5 * S),
            ("-0", 0),
            ("+0", 0),
            // decimal
            ("5.0s", 5 * S),
            ("5.6s", 5 * S + 600 * MS),
            ("5.s", 5 * S),
            (".5s", 500 * MS),
            ("1.0s", S),
            ("1.00s", S),
            ("1.004s", S + 4 * MS),
            ("1.0040s", S + 4 * MS),
            ("100.00100s", 100 * S + MS),
            // different units
            ("10ns", 10 * NS),
            ("11us", 11 * US),
            ("12µs", 12 * US), // U+00B5
            ("12μs", 12 * US), // U+03BC
            ("13ms", 13 * MS),
            ("14s", 14 * S),
            ("15m", 15 * M),
            ("16h", 16 * H),
            // composite durations
            ("3h30m", 3 * H + 30 * M),
            ("10.5s4m", 4 * M + 10 * S + 500 * MS),
            ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
            ("1h2m3s4ms5us6ns", H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
            ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
            // large value
            ("52763797000ns", 52763797000 * NS),
            // more than 9 digits after decimal point (golang.org/issue/6617)
            ("0.3333333333333333333h", 20 * M),
            // 9007199254740993 = 1<<53+1 cannot be stored precisely in a float64
            ("9007199254740993ns", ((1 << 53) + 1) * NS),
            // largest duration that can be represented by int64 in nanoseconds
            ("9223372036854775807ns", i64::MAX),
            ("9223372036854775.807us", i64::MAX),
            ("9223372036s854ms775us807ns", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("-9223372036854775.808us", i64::MIN),
            ("-9223372036s854ms775us808ns", i64::MIN),
            // largest negative value
            ("-9223372036854775808ns", i64::MIN),
            // largest negative round trip value (golang.org/issue/48629)
            ("-2562047h47m16.854775808s", i64::MIN),
            // huge string (issue 15011)
            ("0.100000000000000000000h", 6 * M),
            // the first overflow check in leadingFraction
            ("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS),
        ];
        for (text, want) in cases {
            assert_eq!(parse_go(text), Ok(*want), "{text}");
        }
    }

    /// Go's `parseDurationErrorTests`, every case (Go's table has invalid UTF-8 too; a `&str`
    /// cannot, so those are the bytes' replacement characters, refused the same way).
    #[test]
    fn go_parse_duration_error_table() {
        let malformed = ["", "3", "-", "s", ".", "-.", ".s", "+.s", "1d", "\u{FFFD}"];
        for text in malformed.into_iter().chain(["\u{FFFD} hello \u{FFFD} world", "hello f"]) {
            assert_eq!(parse_go(text), Err(DurationError::Malformed), "{text}");
        }
        for text in [
            "9223372036854775810ns",
            "9223372036854775808ns",
            "-9223372036854775809ns",
            "9223372036854776us",
            "3000000h",
            "9223372036854775.808us",
            "9223372036854ms775us808ns",
        ] {
            assert_eq!(parse_go(text), Err(DurationError::TooLong), "{text}");
        }
    }

    #[test]
    fn lengths() {
        let ok = |t: &str, d: Duration| assert_eq!(parse_length(t), Ok(d), "{t}");
        ok("500ms", Duration::from_millis(500));
        ok("1m30s", Duration::from_secs(90));
        ok("1.5h", Duration::from_secs(5400));
        ok("+2s", Duration::from_secs(2));
        ok("0", Duration::ZERO);
        // Past Go's range, within a Duration's: the command's options have always taken it.
        ok("5124095h", Duration::from_secs(MAX_LENGTH_HOURS * 3600));
        ok("18446744073709551615ns", Duration::from_nanos(u64::MAX));
        for t in ["-1s", "-0", "-0s"] {
            assert_eq!(parse_length(t), Err(DurationError::Negative), "{t}");
        }
        for t in ["5124096h", "18446744073709551616ns", "99999999999999999999h", "1e3s"] {
            let want = if t == "1e3s" { DurationError::Malformed } else { DurationError::TooLong };
            assert_eq!(parse_length(t), Err(want), "{t}");
        }
    }
}
