//! The URL parser and `Location` resolution (`prober_core::Url::parse` and `Url::join`).
//!
//! Input: UTF-8 text; the first line is parsed as a URL, the second resolved against it (or
//! against a fixed base when the first does not parse).
//!
//! Checked beyond "no panic":
//! - what parses prints back to a string that parses to the same URL (round trip);
//! - the request target starts with `/`, the host is not empty, and no part that goes on the
//!   wire (request target, `Host` header) holds a space, a control or a non-ASCII character;
//! - an absolute `http://` / `https://` reference resolves to what parsing it gives;
//! - a reference starting with `/` resolves to a path without `.` or `..` segments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_core::Url;

fn wire_safe(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_graphic()) && !s.contains('\\')
}

fn check(u: &Url) {
    let text = u.to_string();
    assert_eq!(Url::parse(&text).as_ref(), Ok(u), "round trip of {text:?}");
    assert!(u.request_target().starts_with('/'), "{text:?}");
    assert!(!u.host().is_empty());
    assert!(u.port() != 0);
    assert!(wire_safe(u.request_target()), "{text:?}");
    assert!(wire_safe(&u.host_header()), "{text:?}");
    assert!(!u.request_target().contains('#'), "fragment sent: {text:?}");
    assert_eq!(u.join(&text).as_ref(), Ok(u), "joining a URL's own text");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (first, second) = text.split_once('\n').unwrap_or((text, ""));
    let parsed = Url::parse(first);
    match &parsed {
        Ok(u) => check(u),
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let base = match parsed {
        Ok(u) => u,
        Err(_) => Url::parse("http://127.0.0.1:8080/a/b/c?q=1").unwrap(),
    };
    match base.join(second) {
        Ok(j) => {
            check(&j);
            let r = second.trim_matches(|c| c == ' ' || c == '\t');
            if r.starts_with("http://") || r.starts_with("https://") {
                assert_eq!(Url::parse(r).as_ref(), Ok(&j), "absolute reference {r:?}");
            }
            if r.starts_with('/') && !r.starts_with("//") {
                for seg in j.path().split('/') {
                    assert!(
                        seg != "." && seg != "..",
                        "dot segment left in {:?} from {r:?}",
                        j.path()
                    );
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
