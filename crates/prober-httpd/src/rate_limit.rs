//! `rate_limit`: the exporter-toolkit's token bucket over every request a server takes (a
//! leaf: it names nothing else of the crate).
//!
//! As the toolkit's `rate.NewLimiter(rate.Every(interval), burst)`: the bucket holds at most
//! `burst` tokens and starts full, one token comes back every `interval`, and each request
//! takes one; a request that finds the bucket empty is answered `429 Too Many Requests`. The
//! bucket is checked on the server's loop, before authentication, for every request whose
//! head parsed (what the toolkit's handler sees): the count is one number and an instant, so
//! there is nothing to hold per client and nothing to do when it is not configured.

use std::cell::Cell;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// The `rate_limit` section as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RateLimitSection {
    /// A Go duration (`1s`, `500ms`, `1m30s`); 0 or absent: no limit, as the toolkit.
    interval: Option<serde_norway::Value>,
    /// Requests allowed at once after a quiet spell.
    burst: Option<i64>,
}

/// A checked `rate_limit`: one request per `interval` on average, `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateLimit {
    pub(crate) interval: Duration,
    pub(crate) burst: u64,
}

impl RateLimitSection {
    /// The limit it sets, `None` for none; on error, `rate_limit.FIELD: what is wrong`.
    pub(crate) fn check(self) -> Result<Option<RateLimit>, String> {
        let interval = match self.interval {
            None | Some(serde_norway::Value::Null) => Duration::ZERO,
            Some(serde_norway::Value::String(text)) => match go_duration(&text) {
                Some((false, d)) => d,
                Some((true, d)) if d.is_zero() => d,
                Some((true, _)) => {
                    return Err(format!("rate_limit.interval: '{text}' is negative"));
                }
                None => {
                    return Err(format!(
                        "rate_limit.interval: '{text}' is not a duration (such as 1s, 500ms, \
                         1m30s)"
                    ));
                }
            },
            Some(serde_norway::Value::Number(n)) if n.as_u64() == Some(0) => Duration::ZERO,
            Some(other) => {
                let shown = serde_norway::to_string(&other).unwrap_or_default();
                return Err(format!(
                    "rate_limit.interval: '{}' is not a duration: give its unit (such as 1s, \
                     500ms)",
                    shown.trim()
                ));
            }
        };
        let burst = self.burst.unwrap_or(0);
        if burst < 0 {
            return Err(format!("rate_limit.burst: {burst} is negative"));
        }
        if interval.is_zero() {
            if burst > 0 {
                return Err("rate_limit.interval: missing: a burst alone limits nothing (the \
                            exporter-toolkit ignores it)"
                    .into());
            }
            return Ok(None);
        }
        if burst == 0 {
            return Err("rate_limit.burst: missing or 0: every request would be refused with 429 \
                        (give how many requests may come at once, at least 1)"
                .into());
        }
        Ok(Some(RateLimit { interval, burst: burst.unsigned_abs() }))
    }
}

/// The bucket, kept as the time its tokens are worth (`credit`: `interval` per token), so that
/// refilling is exact integer arithmetic. Used by the server's loop only.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    interval: Duration,
    capacity: Duration,
    credit: Cell<Duration>,
    last: Cell<Instant>,
}

impl TokenBucket {
    /// A full bucket for `limit`, as of `now`.
    pub(crate) fn new(limit: RateLimit, now: Instant) -> TokenBucket {
        let tokens = u32::try_from(limit.burst).unwrap_or(u32::MAX);
        let capacity = limit.interval.checked_mul(tokens).unwrap_or(Duration::MAX);
        TokenBucket {
            interval: limit.interval,
            capacity,
            credit: Cell::new(capacity),
            last: Cell::new(now),
        }
    }

    /// Whether a request at `now` may go on (it takes a token) or is to be answered 429.
    pub(crate) fn allow(&self, now: Instant) -> bool {
        let earned = now.saturating_duration_since(self.last.get());
        self.last.set(self.last.get().max(now));
        let credit = self.credit.get().saturating_add(earned).min(self.capacity);
        let allowed = credit >= self.interval;
        self.credit.set(if allowed { credit - self.interval } else { credit });
        allowed
    }
}

/// A Go duration (`time.ParseDuration`, prober-yaml's reading of it): whether it is negative,
/// and its size.
fn go_duration(text: &str) -> Option<(bool, Duration)> {
    let nanos = prober_yaml::duration::parse_go(text).ok()?;
    Some((nanos < 0, Duration::from_nanos(nanos.unsigned_abs())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> Result<Option<RateLimit>, String> {
        serde_norway::from_str::<RateLimitSection>(text).map_err(|e| e.to_string())?.check()
    }

    #[test]
    fn sections() {
        let limit = |interval, burst| Ok(Some(RateLimit { interval, burst }));
        assert_eq!(section("{interval: 1s, burst: 5}"), limit(Duration::from_secs(1), 5));
        assert_eq!(section("{interval: 1m30s, burst: 1}"), limit(Duration::from_secs(90), 1));
        assert_eq!(section("{interval: 250ms, burst: 2}"), limit(Duration::from_millis(250), 2));
        assert_eq!(section("{}"), Ok(None));
        assert_eq!(section("{interval: 0, burst: 0}"), Ok(None));
        assert_eq!(section("{interval: 0s}"), Ok(None));
        let err = |text| section(text).unwrap_err();
        assert!(err("{interval: 1s}").starts_with("rate_limit.burst: missing or 0"));
        assert!(err("{interval: 1s, burst: -1}").starts_with("rate_limit.burst: -1 is negative"));
        assert!(err("{burst: 5}").starts_with("rate_limit.interval: missing"));
        assert!(err("{interval: -1s, burst: 1}").starts_with("rate_limit.interval: '-1s' is neg"));
        assert!(
            err("{interval: soon, burst: 1}").starts_with("rate_limit.interval: 'soon' is not")
        );
        assert!(err("{interval: 5, burst: 1}").starts_with("rate_limit.interval: '5' is not a"));
        assert!(err("{interval: 1s, burst: x}").contains("burst"));
        assert!(err("{interval: 1s, brust: 1}").contains("brust"));
    }

    #[test]
    fn durations_as_go_reads_them() {
        let d = |s| go_duration(s).map(|(neg, d)| (neg, d.as_nanos()));
        assert_eq!(d("1.5s"), Some((false, 1_500_000_000)));
        assert_eq!(d("+2ms"), Some((false, 2_000_000)));
        assert_eq!(d("-3us"), Some((true, 3_000)));
        assert_eq!(d("1h1m1s"), Some((false, 3_661_000_000_000)));
        for bad in ["", "s", "1", "1x", "1s2", ".s", "--1s", "1 s"] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }

    /// The bucket starts full, gives `burst` at once, then one per interval, never more than
    /// `burst` saved up: the toolkit's `rate.Limiter.Allow`.
    #[test]
    fn bucket() {
        let t0 = Instant::now();
        let interval = Duration::from_secs(10);
        let b = TokenBucket::new(RateLimit { interval, burst: 3 }, t0);
        assert_eq!([b.allow(t0), b.allow(t0), b.allow(t0), b.allow(t0)], [true, true, true, false]);
        assert!(!b.allow(t0 + interval / 2));
        assert!(b.allow(t0 + interval));
        assert!(!b.allow(t0 + interval));
        // A long quiet spell saves up `burst` tokens, no more.
        let later = t0 + 100 * interval;
        assert_eq!((0..5).map(|_| b.allow(later)).filter(|a| *a).count(), 3);
        // An instant before the last one (not monotonic across threads) earns nothing.
        assert!(!b.allow(t0));
        // A burst too large to count in time saturates instead of overflowing.
        let huge = TokenBucket::new(RateLimit { interval: Duration::MAX, burst: u64::MAX }, t0);
        assert!(huge.allow(t0) && !huge.allow(t0 + interval));
    }
}
