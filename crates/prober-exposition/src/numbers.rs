//! Numbers written into the answer's text as the formatting machinery writes them (`{}` of
//! an integer, `{}` of a duration's `as_secs_f64()`, the log's `{:.3}` of milliseconds), but
//! pushed digit by digit: through `core::fmt` a value cost a few hundred instructions, a
//! float's shortest round-trip digits about a thousand, and every `/probe` writes about 25.
//! A duration is written from its integer nanoseconds wherever that gives the same text,
//! which is nearly always; else by the float formatting itself.

use std::fmt;
use std::time::Duration;

/// A value of a metric line, pushed onto the text.
pub trait Number {
    /// Pushes the value's text onto `out`.
    fn push_to(self, out: &mut String);
}

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn push_to(self, out: &mut String) {
                push_u64(out, u64::from(self));
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64);

macro_rules! signed {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn push_to(self, out: &mut String) {
                let v = i64::from(self);
                if v < 0 {
                    out.push('-');
                }
                push_u64(out, v.unsigned_abs());
            }
        }
    )*};
}
signed!(i32, i64);

/// A float as `{}` writes it (not pushed digit by digit: for the few values that are floats, a
/// timestamp of `/metrics`).
impl Number for f64 {
    fn push_to(self, out: &mut String) {
        use fmt::Write as _;
        let _ = write!(out, "{self}");
    }
}

/// Text written as it is (`probe_http_version`'s `1.1`).
impl Number for &str {
    fn push_to(self, out: &mut String) {
        out.push_str(self);
    }
}

impl Number for Secs {
    fn push_to(self, out: &mut String) {
        push_secs(out, self.0);
    }
}

/// `value` in decimal, as `{}` writes it.
pub fn push_u64(out: &mut String, value: u64) {
    let mut digits = [0u8; 20];
    let len = digits_of(&mut digits, value);
    for &d in digits[..len].iter().rev() {
        out.push(char::from(d));
    }
}

/// The decimal digits of `value`, least significant first; returns how many.
fn digits_of(digits: &mut [u8; 20], value: u64) -> usize {
    let mut len = 0;
    let mut n = value;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            return len;
        }
    }
}

/// The most whole seconds written from the integer: 10^6 (11.5 days), so that the
/// nanoseconds have at most 15 significant digits. Any decimal of at most 15 significant
/// digits is the only one of that length or shorter that converts to its nearest `f64`
/// (`f64::DIGITS`), so the shortest round-trip digits of that `f64` are the decimal's own.
const EXACT_SECS: u64 = 1_000_000;

/// `{}` of `d.as_secs_f64()`: the same text.
pub fn push_secs(out: &mut String, d: Duration) {
    let v = d.as_secs_f64();
    // `nanos as f64 / 1e9` is the nearest f64 to the decimal nanos × 10⁻⁹ (both operands
    // exact, the division correctly rounded). `as_secs_f64` rounds twice once there are whole
    // seconds; when the two differ, the float formatting writes it.
    let exact = d.as_secs() < EXACT_SECS;
    let nanos = d.as_secs().wrapping_mul(1_000_000_000) + u64::from(d.subsec_nanos());
    if !exact || (nanos as f64 / 1e9).to_bits() != v.to_bits() {
        use fmt::Write as _;
        let _ = write!(out, "{v}");
        return;
    }
    // nanos × 10⁻⁹ in plain decimal notation without trailing zeros (nor a trailing point),
    // as `f64`'s `Display` writes it: `0`, `1`, `0.5`, `0.000012`.
    let mut digits = [b'0'; 20];
    let len = digits_of(&mut digits, nanos).max(10);
    let mut skip = 0;
    while skip < 9 && digits[skip] == b'0' {
        skip += 1;
    }
    for &d in digits[9..len].iter().rev() {
        out.push(char::from(d));
    }
    if skip < 9 {
        out.push('.');
        for &d in digits[skip..9].iter().rev() {
            out.push(char::from(d));
        }
    }
}

/// The most nanoseconds written from the integer as milliseconds: 10^12 (1,000 s). Up to there
/// the float's error (three roundings, under 10⁻¹⁵ of the value) is far below the 1 ns that
/// separates the exact value from a rounding midpoint unless it is one; a midpoint
/// (nanoseconds ending in 500) goes to the float formatting, which rounds the float's exact
/// binary value.
const MILLIS_EXACT_NANOS: u64 = 1_000_000_000_000;

/// `{:.3}` of `d.as_secs_f64() * 1e3` (milliseconds, 3 decimals): the same text.
pub fn push_millis3(out: &mut String, d: Duration) {
    let exact = d.as_secs() < MILLIS_EXACT_NANOS / 1_000_000_000;
    let nanos = d.as_secs().wrapping_mul(1_000_000_000) + u64::from(d.subsec_nanos());
    if !exact || nanos % 1000 == 500 {
        use fmt::Write as _;
        let _ = write!(out, "{:.3}", d.as_secs_f64() * 1e3);
        return;
    }
    let micros = nanos / 1000 + u64::from(nanos % 1000 > 500);
    push_u64(out, micros / 1000);
    out.push('.');
    let frac = micros % 1000;
    for d in [frac / 100, frac / 10 % 10, frac % 10] {
        out.push(char::from(b'0' + d as u8));
    }
}

/// `Display` as `{}` of `self.0.as_secs_f64()`: the same text.
#[derive(Clone, Copy, Debug)]
pub struct Secs(pub Duration);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::with_capacity(24);
        push_secs(&mut s, self.0);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so that the comparison covers many values
    /// without a dependency.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    fn same(d: Duration) {
        let v = d.as_secs_f64();
        assert_eq!(Secs(d).to_string(), format!("{v}"), "{d:?}");
        let mut ms = String::new();
        push_millis3(&mut ms, d);
        assert_eq!(ms, format!("{:.3}", v * 1e3), "{d:?}");
    }

    #[test]
    fn integers_as_display_writes_them() {
        let mut state = 0x2545_f491_4f6c_dd1d;
        let mut values: Vec<u64> = vec![0, 1, 9, 10, 99, 100, u64::MAX, i64::MAX as u64];
        values.extend((0..10_000).map(|i| next(&mut state) >> (i % 64)));
        for v in values {
            let mut s = String::new();
            v.push_to(&mut s);
            assert_eq!(s, v.to_string());
            let signed = v as i64;
            let mut s = String::new();
            signed.push_to(&mut s);
            assert_eq!(s, signed.to_string());
        }
        for v in [i64::MIN, -1, i64::from(i32::MIN)] {
            let mut s = String::new();
            v.push_to(&mut s);
            assert_eq!(s, v.to_string());
        }
    }

    #[test]
    fn the_same_text_as_the_float_formatting() {
        for nanos in [0, 1, 9, 10, 500, 999, 1000, 1500, 123_456, 999_999_999, 1_000_000_000] {
            same(Duration::from_nanos(nanos));
        }
        for secs in [1, 2, 59, 119, 3600, 86_400, 999_999, 1_000_000, 1 << 40, u64::MAX] {
            for nanos in [0, 1, 5, 500, 1500, 499_999_999, 500_000_000, 999_999_999] {
                same(Duration::new(secs, nanos));
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            let r = next(&mut state);
            // Mostly what probes take (up to seconds), some long ones, every digit count.
            let d = match r % 4 {
                0 => Duration::from_nanos(next(&mut state) % 1_000_000),
                1 => Duration::from_nanos(next(&mut state) % 10_000_000_000),
                2 => Duration::from_nanos(next(&mut state) % 2_000_000_000_000),
                _ => Duration::from_nanos(next(&mut state) >> (r % 64)),
            };
            same(d);
        }
    }
}
