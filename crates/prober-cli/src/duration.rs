//! Durations on the command line and in output. The options read Go's grammar (`500ms`, `2s`,
//! `1.5s`, `1m30s`, `1h`; prober-yaml's [`duration`](prober_yaml::duration), shared with the
//! files `prober serve` and `prober watch` read) as lengths of time: never negative.

use std::time::Duration;

use prober_yaml::duration::{DurationError, MAX_LENGTH_HOURS, parse_length};

/// Parses a length of time in Go's grammar. A bare number other than `0` is refused: it is too
/// easy to mean seconds and get milliseconds or the reverse. A well-formed duration too long to
/// hold ([`MAX_LENGTH_HOURS`] and more) gets its own message, so that `100000000h` is not
/// reported as malformed.
pub fn parse(s: &str) -> Result<Duration, String> {
    parse_length(s).map_err(|e| match e {
        DurationError::Malformed => {
            format!("bad duration '{s}' (expected a number and a unit: 500ms, 2s, 1m30s, 1h)")
        }
        DurationError::Negative => format!("bad duration '{s}' (a length of time, not negative)"),
        DurationError::TooLong => {
            format!("duration '{s}' out of range: at most {MAX_LENGTH_HOURS}h")
        }
    })
}

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
    fn parses_go_durations_as_lengths() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse(".25s"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        for s in ["", "5", "s", "1.s.", "1..2s", "1x", "1 s", "1sec", "1.2.3s", ".s"] {
            let e = parse(s).unwrap_err();
            assert!(e.starts_with(&format!("bad duration '{s}' (expected")), "{s}: {e}");
        }
        assert_eq!(parse("-1s"), Err("bad duration '-1s' (a length of time, not negative)".into()));
    }

    #[test]
    fn too_long_is_out_of_range_not_malformed() {
        assert_eq!(MAX_LENGTH_HOURS, 5_124_095);
        assert_eq!(parse("5124095h"), Ok(Duration::from_secs(5_124_095 * 3600)));
        for s in
            ["100000000h", "99999999999999999999h", "999999999999999999999999999999999999999ms"]
        {
            let want = format!("duration '{s}' out of range: at most 5124095h");
            assert_eq!(parse(s), Err(want), "{s}");
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
        // Below a nanosecond is zero, as Go reads it.
        assert_eq!(
            parse_positive("0.0000000001s"),
            Err("must be positive (got '0.0000000001s')".into())
        );
    }

    #[test]
    fn formats() {
        assert_eq!(human(Duration::from_micros(420)), "0.4ms");
        assert_eq!(human(Duration::from_millis(1204)), "1.204s");
        assert_eq!(millis(Duration::from_micros(1234)), 1.234);
    }
}
