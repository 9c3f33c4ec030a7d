//! Durations on the command line (`500ms`, `2s`, `1.5s`, `1m`, `1h`) and in output.

use std::time::Duration;

/// Parses `<number><unit>` with unit `ms`, `s`, `m` or `h`; the number may have a fraction.
/// A bare number is refused: it is too easy to mean seconds and get milliseconds or the reverse.
/// A well-formed duration too long to hold ([`MAX_HOURS`] and more) gets its own message, so
/// that `100000000h` is not reported as malformed.
pub fn parse(s: &str) -> Result<Duration, String> {
    let bad = || format!("bad duration '{s}' (expected a number and a unit: 500ms, 2s, 1m, 1h)");
    let too_long = || format!("duration '{s}' out of range: at most {MAX_HOURS}h");
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
    let (num, unit) = s.split_at(split);
    let nanos_per_unit: u128 = match unit {
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(bad()),
    };
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if (int.is_empty() && frac.is_empty()) || frac.contains('.') || frac.len() > 9 {
        return Err(bad());
    }
    // `int` is digits only here: the one way its parse can fail is a number too large.
    let int: u128 = if int.is_empty() { 0 } else { int.parse().map_err(|_| too_long())? };
    let mut nanos = int.checked_mul(nanos_per_unit).ok_or_else(too_long)?;
    if !frac.is_empty() {
        let digits: u128 = frac.parse().map_err(|_| bad())?;
        let scale = 10u128.pow(frac.len() as u32);
        nanos += digits * nanos_per_unit / scale;
    }
    let nanos = u64::try_from(nanos).map_err(|_| too_long())?;
    Ok(Duration::from_nanos(nanos))
}

/// The longest duration [`parse`] accepts, in whole hours: what nanoseconds in a `u64` hold
/// (about 584 years).
pub const MAX_HOURS: u64 = u64::MAX / 3_600_000_000_000;

/// [`parse`], for a duration that must be more than zero (a timeout, a run's length).
pub fn parse_positive(s: &str) -> Result<Duration, String> {
    match parse(s)? {
        Duration::ZERO => Err(format!("must be positive (got '{s}')")),
        d => Ok(d),
    }
}

/// Human form: `0.4ms`, `12.3ms`, `1.204s`.
pub fn human(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{:.1}ms", d.as_secs_f64() * 1000.0)
    } else {
        format!("{:.3}s", d.as_secs_f64())
    }
}

/// Milliseconds with microsecond precision, for JSON.
pub fn millis(d: Duration) -> f64 {
    d.as_micros() as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_fractions() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse("1m"), Ok(Duration::from_secs(60)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse(".25s"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("0.5ms"), Ok(Duration::from_micros(500)));
        assert_eq!(parse("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn refuses_the_rest() {
        for s in ["", "5", "s", "1.s.", "1..2s", "1x", "-1s", "1 s", "1sec", "1.2.3s", ".s"] {
            let e = parse(s).unwrap_err();
            assert!(e.starts_with("bad duration"), "{s}: {e}");
        }
    }

    #[test]
    fn too_long_is_out_of_range_not_malformed() {
        assert_eq!(MAX_HOURS, 5_124_095);
        assert_eq!(parse("5124095h"), Ok(Duration::from_secs(5_124_095 * 3600)));
        for s in
            ["100000000h", "99999999999999999999h", "999999999999999999999999999999999999999ms"]
        {
            assert_eq!(
                parse(s),
                Err(format!("duration '{s}' out of range: at most 5124095h")),
                "{s}"
            );
        }
        assert_eq!(
            parse_positive("5124096h"),
            Err("duration '5124096h' out of range: at most 5124095h".into())
        );
    }

    #[test]
    fn positive() {
        assert_eq!(parse_positive("1ms"), Ok(Duration::from_millis(1)));
        assert_eq!(parse_positive("0s"), Err("must be positive (got '0s')".into()));
        assert_eq!(
            parse_positive("0.0000000001s"),
            Err("bad duration '0.0000000001s' (expected a number and a unit: 500ms, 2s, 1m, 1h)"
                .into())
        );
        assert_eq!(
            parse_positive("0.000000000s"),
            Err("must be positive (got '0.000000000s')".into())
        );
    }

    #[test]
    fn formats() {
        assert_eq!(human(Duration::from_micros(420)), "0.4ms");
        assert_eq!(human(Duration::from_millis(1204)), "1.204s");
        assert_eq!(millis(Duration::from_micros(1234)), 1.234);
    }
}
