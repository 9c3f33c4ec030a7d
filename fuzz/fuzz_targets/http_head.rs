//! The HTTP response head parser (`prober_http::response::HeadParser`), driven as the probe
//! drives it: interim (1xx) heads are dropped and the rest parsed again.
//!
//! Checked beyond "no panic":
//! - a complete head is at most `MAX_HEAD` bytes, inside the buffer, with a status of 100..=999;
//! - the head does not depend on the bytes after it;
//! - every prefix of a head that parses is `Partial` (a head split by the network at any point
//!   must not fail, nor complete early with another value);
//! - `Partial` only while the buffer is within `MAX_HEAD`;
//! - error messages can be formatted;
//! - reading it as the probe does, parsing only when `HeadParser::worth_parsing` says so,
//!   ends the same way as parsing after every read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_http::response::{
    HeadError, HeadParser, HeadStatus, MAX_HEAD, MAX_INTERIM, ResponseHead,
};

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
    for _ in 0..=MAX_INTERIM + 1 {
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
                assert!((100..=999).contains(&head.status), "{}", head.status);
                assert!(head.version <= 1);
                if let Some(loc) = &head.location {
                    assert!(!loc.is_empty());
                    assert_eq!(loc.trim_matches(|c| c == ' ' || c == '\t'), loc);
                }
                let alone = HeadParser::new().parse(&buf[..head.len]);
                assert_eq!(alone, Ok(HeadStatus::Complete(head.clone())));
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
    assert_eq!(
        drive(data, step, true),
        drive(data, step, false),
        "reads of {step}"
    );
});
