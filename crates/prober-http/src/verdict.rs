//! From the final status and body to a result: the kubelet's `DoHTTPProbe`.

use std::time::Instant;

use prober_core::{BodyCel, CelMode, Pattern, ProbeResult, Reason, StatusSet};

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

/// [`evaluate`] with the spec's expectations (see `HttpSpec::expect_status` and
/// `expect_body`), used only when at least one is set so that the kubelet path stays as it is:
/// - `statuses`: a final status in the set is Success, any other a Failure with reason Status
///   and the kubelet's message (`HTTP probe failed with statuscode: N`);
/// - `body`: when the status passed (Success, or Warning without a status set), a kept body
///   that does not match is a Failure with reason Body.
pub fn evaluate_expected(
    status: u16,
    body: &[u8],
    statuses: Option<&StatusSet>,
    pattern: Option<&Pattern>,
) -> (ProbeResult, Reason, String) {
    let passed = match statuses {
        Some(set) if set.contains(status) => (ProbeResult::Success, Reason::None, String::new()),
        Some(_) => {
            return (
                ProbeResult::Failure,
                Reason::Status,
                format!("HTTP probe failed with statuscode: {status}"),
            );
        }
        None => evaluate(status, body),
    };
    match pattern {
        Some(p) if passed.0.is_ok() && !p.is_match(body) => (
            ProbeResult::Failure,
            Reason::Body,
            format!(
                "HTTP probe failed: body did not match {:?} (status {status}, {} bytes kept)",
                p.as_str(),
                body.len()
            ),
        ),
        _ => passed,
    }
}

/// The spec's CEL expressions over the kept body (`HttpSpec::expect_body_cel`), judged only
/// when the run has passed so far: the first that fails the body makes a Failure with reason
/// Body. `total` is the body's whole length: a body cut at the output limit is not JSON to
/// judge, and fails. `deadline` stops a long evaluation (see `BodyCel`).
pub fn evaluate_cel(
    checks: &[(CelMode, BodyCel)],
    body: &[u8],
    total: u64,
    deadline: Option<Instant>,
) -> Option<(ProbeResult, Reason, String)> {
    let fail = |why: String| {
        Some((ProbeResult::Failure, Reason::Body, format!("HTTP probe failed: {why}")))
    };
    for (mode, cel) in checks {
        if total > body.len() as u64 {
            return fail(format!(
                "body of {total} bytes is longer than the {} kept, and CEL expression {:?} needs all of it",
                body.len(),
                cel.as_str()
            ));
        }
        match (mode, cel.eval_json(body, deadline)) {
            (CelMode::FailIfMatches, Ok(true)) => {
                return fail(format!("body matched CEL expression {:?}", cel.as_str()));
            }
            (CelMode::FailIfNotMatches, Ok(false)) => {
                return fail(format!("body did not match CEL expression {:?}", cel.as_str()));
            }
            (_, Err(why)) => {
                return fail(format!("CEL expression {:?}: {why}", cel.as_str()));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_statuses_and_bodies() {
        let set = StatusSet::parse("200-204,418").unwrap();
        let ok = (ProbeResult::Success, Reason::None, String::new());
        assert_eq!(evaluate_expected(418, b"", Some(&set), None), ok);
        assert_eq!(evaluate_expected(204, b"", Some(&set), None), ok);
        for s in [205, 301, 500] {
            let (r, reason, m) = evaluate_expected(s, b"", Some(&set), None);
            assert_eq!((r, reason), (ProbeResult::Failure, Reason::Status));
            assert_eq!(m, format!("HTTP probe failed with statuscode: {s}"));
        }
        // A set with a 3xx makes it Success, not the kubelet's Warning.
        let redirects = StatusSet::parse("301").unwrap();
        assert_eq!(evaluate_expected(301, b"", Some(&redirects), None).0, ProbeResult::Success);

        let p = Pattern::new("^ok$").unwrap();
        assert_eq!(evaluate_expected(200, b"ok", None, Some(&p)), ok);
        assert_eq!(
            evaluate_expected(200, b"not ok", None, Some(&p)),
            (
                ProbeResult::Failure,
                Reason::Body,
                "HTTP probe failed: body did not match \"^ok$\" (status 200, 6 bytes kept)".into()
            )
        );
        // The status decides first; the body of a failed status is not looked at.
        assert_eq!(evaluate_expected(500, b"x", None, Some(&p)).1, Reason::Status);
        assert_eq!(evaluate_expected(500, b"x", Some(&set), Some(&p)).1, Reason::Status);
        // Without a set, a 3xx stays a Warning when its body matches.
        assert_eq!(evaluate_expected(302, b"ok", None, Some(&p)).0, ProbeResult::Warning);
        assert_eq!(evaluate_expected(302, b"no", None, Some(&p)).1, Reason::Body);
    }

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
