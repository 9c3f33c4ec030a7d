//! The HTTP response head parser (`prober_http::response::HeadParser`), driven as the probe
//! drives it: interim (1xx) heads are dropped and the rest parsed again.
//!
//! Checked beyond "no panic":
//! - a complete head is at most `MAX_HEAD` bytes, inside the buffer, with a status of at most
//!   999 (any three digits, as Go's client: `050` is 50);
//! - the head does not depend on the bytes after it;
//! - every prefix of a head that parses is `Partial` (a head split by the network at any point
//!   must not fail, nor complete early with another value);
//! - `Partial` only while the buffer is within `MAX_HEAD`;
//! - error messages can be formatted;
//! - a keep-alive probe's parser completes the same head with the same status and length;
//! - reading it as the probe does, parsing only when `HeadParser::worth_parsing` says so,
//!   ends the same way as parsing after every read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_http::response::{HeadError, HeadParser, HeadStatus, MAX_HEAD, ResponseHead};

fn check_prefixes(head: &[u8]) {
    let n = head.len();
    let step = if n <= 2048 { 1 } else { n / 64 };
    let mut i = 0;
    while i < n {
        match HeadParser::new().parse(&head[..i]) {
            Ok(HeadStatus::Partial) => {}
            other => panic!("prefix of {i} of {n} bytes: {other:?}"),
        }
        i += step;
    }
}

/// The probe's way of reading a head: reads of `step` bytes, dropping interim heads, and
/// parsing only when `HeadParser::worth_parsing` says so (`gated`) or after every read, then
/// once more at EOF. Both must end the same way.
fn drive(data: &[u8], step: usize, gated: bool) -> Result<Option<ResponseHead>, HeadError> {
    let mut parser = HeadParser::new();
    let mut buf = Vec::new();
    for chunk in data.chunks(step) {
        buf.extend_from_slice(chunk);
        if gated && !HeadParser::worth_parsing(&buf, chunk.len()) {
            continue;
        }
        loop {
            match parser.parse(&buf)? {
                HeadStatus::Partial => break,
                HeadStatus::Interim { len, .. } => {
                    buf.drain(..len);
                }
                HeadStatus::Complete(h) => return Ok(Some(h)),
            }
        }
    }
    match parser.parse(&buf)? {
        HeadStatus::Partial => Err(parser.eof(&buf)),
        other => panic!("a head left unparsed until EOF: {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut parser = HeadParser::new();
    let mut buf = data;
    // Each interim head consumes at least one byte: the loop ends by itself within this bound.
    for _ in 0..=data.len() {
        match parser.parse(buf) {
            Ok(HeadStatus::Partial) => {
                assert!(buf.len() <= MAX_HEAD, "Partial with {} bytes", buf.len());
                break;
            }
            Ok(HeadStatus::Interim { status, len }) => {
                assert!((100..200).contains(&status) && status != 101, "{status}");
                assert!(len > 0 && len <= buf.len() && len <= MAX_HEAD);
                check_prefixes(&buf[..len]);
                buf = &buf[len..];
            }
            Ok(HeadStatus::Complete(head)) => {
                assert!(head.len > 0 && head.len <= buf.len() && head.len <= MAX_HEAD);
                // Any three digits, as Go's client reads them (`050` is status 50).
                assert!(head.status <= 999, "{}", head.status);
                assert!(head.version <= 1);
                if let Some(loc) = &head.location {
                    assert!(!loc.is_empty());
                    assert_eq!(loc.trim_matches(|c| c == ' ' || c == '\t'), loc);
                }
                let alone = HeadParser::new().parse(&buf[..head.len]);
                assert_eq!(alone, Ok(HeadStatus::Complete(head.clone())));
                // A keep-alive probe's parser also reads `Connection`: the same head otherwise.
                match HeadParser::keep_alive().parse(&buf[..head.len]) {
                    Ok(HeadStatus::Complete(kept)) => {
                        assert_eq!(
                            (kept.status, kept.len, kept.version),
                            (head.status, head.len, head.version)
                        );
                    }
                    other => panic!("keep-alive parser: {other:?} where the other completed"),
                }
                check_prefixes(&buf[..head.len]);
                break;
            }
            Err(e) => {
                let _ = e.to_string();
                break;
            }
        }
    }
    let _ = parser.eof(buf).to_string();

    // Parsing only when a line may have ended gives what parsing after every read gives.
    let step = 1 + data.len() / 200;
    assert_eq!(drive(data, step, true), drive(data, step, false), "reads of {step}");
});
