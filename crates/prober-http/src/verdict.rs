//! From the final status and body to a result: the kubelet's `DoHTTPProbe`.

use prober_core::{ProbeResult, Reason};

/// Result, reason and message for a final response with `status` and (kept) `body`:
/// - 200..=299: Success, empty message (the body is the output);
/// - 300..=399: Warning, reason Redirect, `Probe terminated redirects, Response body: <body>`;
/// - anything else: Failure, reason Status, `HTTP probe failed with statuscode: N`, never the
///   body (kubernetes#99425).
pub fn evaluate(status: u16, body: &[u8]) -> (ProbeResult, Reason, String) {
    match status {
        200..=299 => (ProbeResult::Success, Reason::None, String::new()),
        300..=399 => (
            ProbeResult::Warning,
            Reason::Redirect,
            format!("Probe terminated redirects, Response body: {}", String::from_utf8_lossy(body)),
        ),
        _ => (
            ProbeResult::Failure,
            Reason::Status,
            format!("HTTP probe failed with statuscode: {status}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubelet_mapping() {
        assert_eq!(evaluate(200, b"ok body"), (ProbeResult::Success, Reason::None, String::new()));
        assert_eq!(evaluate(299, b"").0, ProbeResult::Success);
        assert_eq!(
            evaluate(308, b"ok body"),
            (
                ProbeResult::Warning,
                Reason::Redirect,
                "Probe terminated redirects, Response body: ok body".to_string()
            )
        );
        assert_eq!(evaluate(300, b"").2, "Probe terminated redirects, Response body: ");
        assert_eq!(
            evaluate(302, b"\xffx").2,
            "Probe terminated redirects, Response body: \u{fffd}x"
        );
        for s in [101, 199, 400, 404, 500, 503, 999] {
            let (r, reason, m) = evaluate(s, b"fail body");
            assert_eq!((r, reason), (ProbeResult::Failure, Reason::Status));
            assert_eq!(m, format!("HTTP probe failed with statuscode: {s}"));
        }
    }
}
