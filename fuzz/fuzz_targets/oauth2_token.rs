//! The OAuth 2 token answer reader (`prober_http::oauth2::read_token`), which every probe with
//! OAuth 2 credentials runs on what its token endpoint sends.
//!
//! Input: byte 0 picks the `Content-Type` (JSON, form, text, none), byte 1 the status (2xx or
//! not); the rest is the body.
//!
//! Checked beyond "no panic": a granted value is a valid `Authorization` header value of the
//! form `TYPE TOKEN`; a refusal's message never quotes more of the body than the error code
//! (at most `MAX_ERROR_CODE` bytes, escaped), so it stays short.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_core::{Outcome, Reason, validate_header};
use prober_http::oauth2::{MAX_ERROR_CODE, read_token};

fuzz_target!(|data: &[u8]| {
    let (Some(&kind), Some(&status)) = (data.first(), data.get(1)) else { return };
    let body = &data[2..];
    let status: u16 = if status % 2 == 0 { 200 } else { 400 + u16::from(status % 100) };
    let mut o = if status == 200 {
        Outcome::success()
    } else {
        Outcome::failure(Reason::Status, "status")
    };
    o.http_status = Some(status);
    let content_type = match kind % 4 {
        0 => Some("application/json"),
        1 => Some("application/x-www-form-urlencoded"),
        2 => Some("text/plain; charset=utf-8"),
        _ => None,
    };
    if let Some(ct) = content_type {
        o.headers = vec![("Content-Type".into(), ct.into())];
    }
    o.output = body.to_vec();
    o.output_total = body.len() as u64;
    match read_token(&o) {
        Ok(auth) => {
            let value = auth.expose();
            assert!(validate_header("Authorization", value).is_ok(), "{value:?}");
            assert!(value.split_once(' ').is_some_and(|(t, tok)| !t.is_empty() && !tok.is_empty()));
        }
        Err((_, message)) => {
            // The error code, escaped (at most 4 bytes per byte, as \u{...} at worst 10).
            assert!(message.len() <= 160 + MAX_ERROR_CODE * 10, "{} bytes", message.len());
        }
    }
});
