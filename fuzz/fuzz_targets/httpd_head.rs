//! The request head of `prober-httpd`'s server (`head::find`, then `head::parse`), driven as
//! the server drives it: input arrives in pieces, the end of the head is looked for after each
//! (remembering how far it looked), the head parsed once found. Hostile before authentication.
//!
//! Input: the first byte picks the size of the pieces and the limits (the defaults, or small
//! ones that the input crosses often); the rest is what a client sends.
//!
//! Checked beyond "no panic":
//! - searched piece by piece, the first verdict that is not `More` is the verdict on that
//!   prefix searched at once (remembering how far it looked changes nothing);
//! - `More` only while the input is below `capacity`, and a head ends inside the input;
//! - a head's end follows an empty line (LF then LF, or LF then CRLF), the head is more than
//!   empty lines (those before a request line are skipped), and it does not depend on the
//!   bytes after it;
//! - a head that parses is a `GET`-able shape: a method and a path with no space or line
//!   break, the query what follows the first `?`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_httpd::Limits;
use prober_httpd::fuzz::{Found, Parsed, capacity, find, parse};

fuzz_target!(|data: &[u8]| {
    let Some((&control, input)) = data.split_first() else { return };
    let limits = if control & 0x80 == 0 {
        Limits::default()
    } else {
        Limits { max_request_line: 40, max_header_bytes: 100, ..Limits::default() }
    };
    let piece = 1 + usize::from(control & 0x3f);
    // The server reads at most `capacity` bytes of a head.
    let input = &input[..input.len().min(capacity(&limits))];

    let mut scanned = 0;
    let mut verdict = Found::More;
    let mut seen = 0;
    while seen < input.len() {
        seen = (seen + piece).min(input.len());
        verdict = find(&input[..seen], &mut scanned, &limits);
        if verdict != Found::More {
            break;
        }
    }
    assert_eq!(verdict, find(&input[..seen], &mut 0, &limits), "piecewise differs at {seen}");
    match verdict {
        Found::More => assert!(seen < capacity(&limits), "More with {seen} bytes"),
        Found::TooLarge(status) => assert!(status == 414 || status == 431, "{status}"),
        Found::Head(len) => {
            assert!(len <= seen && len >= 2, "{len} of {seen}");
            let head = &input[..len];
            assert!(head.ends_with(b"\n\n") || head.ends_with(b"\n\r\n"), "{head:?}");
            // Empty lines alone are no head: they are skipped (RFC 9112 section 2.2).
            assert!(head.iter().any(|&b| b != b'\r' && b != b'\n'), "{head:?}");
            assert_eq!(find(head, &mut 0, &limits), Found::Head(len));
            match parse(head) {
                Parsed::Request(req, _close) => {
                    assert!(!req.method.is_empty());
                    let bad = |s: &str| s.contains([' ', '\r', '\n']);
                    assert!(!bad(&req.method) && !bad(&req.path) && !bad(&req.query), "{req:?}");
                    assert!(!req.path.contains('?'), "{req:?}");
                    for (name, value) in &req.headers {
                        assert!(!name.is_empty() && !bad(name), "{name:?}");
                        assert!(!value.contains(['\r', '\n']), "{value:?}");
                    }
                }
                Parsed::Bad(status, why) => {
                    assert!(status == 400 || status == 431, "{status}");
                    assert!(why.ends_with('\n'));
                }
            }
        }
    }
});
