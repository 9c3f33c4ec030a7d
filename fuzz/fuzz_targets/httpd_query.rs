//! What `prober serve` decodes from a `/probe` request before probing: its query string
//! (`prober_blackbox::parse_query`) and its `X-Prometheus-Scrape-Timeout-Seconds` header
//! (`prober_blackbox::timeout`). Hostile before authentication when no web config is given.
//!
//! Input: UTF-8 text (lossily); all of it as a query string, and as the header's value.
//!
//! Checked beyond "no panic":
//! - the pairs decoded, percent-encoded byte by byte and decoded again, are the same pairs;
//! - a timeout is at least a millisecond and at most the scrape's 120 s default or the
//!   module's, whichever applies.
#![no_main]

use std::fmt::Write as _;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use prober_blackbox::{parse_query, timeout};

fn encode(s: &str) -> String {
    s.bytes().fold(String::new(), |mut out, b| {
        let _ = write!(out, "%{b:02X}");
        out
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let pairs = parse_query(&text);
    let again: Vec<String> =
        pairs.iter().map(|(n, v)| format!("{}={}", encode(n), encode(v))).collect();
    assert_eq!(parse_query(&again.join("&")), pairs, "round trip of {text:?}");

    let module = Duration::from_secs(5);
    let offset = Duration::from_millis(500);
    for m in [None, Some(module)] {
        if let Ok(d) = timeout(Some(&text), m, offset) {
            assert!(d >= Duration::from_millis(1), "{d:?}");
            // The header's value less the offset, or the module's timeout: any finite value
            // is allowed, but no NaN or negative value gets through.
            assert!(d.as_secs_f64().is_finite(), "{d:?}");
        }
    }
});
