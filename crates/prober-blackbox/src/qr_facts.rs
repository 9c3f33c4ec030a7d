//! The metrics of a `query_response` exchange as blackbox_exporter v0.28.0 writes them:
//! `probe_expect_info` (the labels of the step whose `expect` matched, expanded with the match),
//! `probe_failed_due_to_bytes` and `probe_failed_due_to_regex`.
//!
//! Which line a step matched is found again in the outcome's output (the first 10240 bytes the
//! steps read, in order): lines are read there as the library reads them (`\n` ends one, a `\r`
//! before it is dropped, an unterminated rest counts only when the peer closed, which a
//! successful run shows), an `expect_bytes` step takes its bytes. Two limits follow: a line
//! matched past those 10240 bytes gives no `probe_expect_info`, and after STARTTLS the search
//! goes on from where the plain text stopped (plain bytes a server sends past its go-ahead,
//! which the library drops, would shift it).

use prober::{Outcome, ProbeResult, Reason};
use prober_core::{Expansion, MAX_SEND_LEN, TCP_BYTES_DIFFER};

use crate::facts::{gauge, gauge_family, sample};
use crate::module::Module;

/// `probe_expect_info{NAME="VALUE",...} 1` for the step with labels, when its `expect` matched.
pub(crate) fn expect_info(out: &mut String, m: &Module, o: &Outcome) {
    let steps = &m.query_response;
    let Some(labelled) = steps.iter().position(|s| s.expect.is_some() && !s.labels.is_empty())
    else {
        return;
    };
    let data = &o.output;
    let closed = o.result == ProbeResult::Success;
    let mut at = 0usize;
    for (i, step) in steps.iter().enumerate().take(labelled + 1) {
        if step.bytes > 0 {
            if data.len() - at < step.bytes {
                return;
            }
            at += step.bytes;
        }
        let Some(re) = &step.expect else { continue };
        let line = loop {
            let rest = &data[at..];
            let (line, used) = match rest.iter().position(|&b| b == b'\n') {
                Some(n) => (&rest[..n], n + 1),
                None if closed && !rest.is_empty() => (rest, rest.len()),
                None => return,
            };
            at += used;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if re.is_match(line) {
                break line;
            }
        };
        if i < labelled {
            continue;
        }
        let mut pairs = Vec::with_capacity(step.labels.len());
        for (name, template) in &step.labels {
            let Expansion::Expanded(v) = re.expand(line, template.as_bytes(), MAX_SEND_LEN) else {
                return;
            };
            pairs.push((name.as_str(), String::from_utf8_lossy(&v).into_owned()));
        }
        // client_golang writes a sample's labels sorted by name.
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        let name = "probe_expect_info";
        gauge_family(out, name, "Explicit content matched");
        let labels: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sample(out, name, &labels, 1u8);
        return;
    }
}

/// Whether blackbox_exporter's `probeQueryResponses` ran: its dial succeeded (with
/// `tls: true`, the handshake too). Before it, none of this file's series exist.
pub(crate) fn dialed(m: &Module, o: &Outcome) -> bool {
    let tls_first = m.tls && !m.query_response.iter().any(|s| s.starttls);
    o.timings.connect.is_some()
        && (!tls_first || o.tls.as_ref().is_some_and(|t| t.version.is_some()))
}

/// `probe_failed_due_to_bytes` and `probe_failed_due_to_regex`, both written for a tcp module
/// once connected, as blackbox_exporter v0.28.0 registers them then: 1 when an `expect_bytes` step read other bytes,
/// or when an `expect` saw the peer close before a matching line. A timeout, or an
/// `expect_bytes` step that got fewer bytes before the close, sets neither (blackbox_exporter
/// returns on those errors before it sets them).
pub(crate) fn failed_due_to(out: &mut String, m: &Module, o: &Outcome) {
    let body = o.result == ProbeResult::Failure && o.reason == Reason::Body;
    // The library's step messages begin `step N of M: `.
    let failed = o
        .message
        .strip_prefix("step ")
        .and_then(|r| r.split_once(" of "))
        .and_then(|(n, rest)| Some((n.parse::<usize>().ok()?, rest.split_once(": ")?.1)));
    let bytes_step = failed
        .and_then(|(n, _)| m.query_response.get(n.wrapping_sub(1)))
        .is_some_and(|s| s.bytes > 0);
    let bytes = body && bytes_step && failed.is_some_and(|(_, w)| w.starts_with(TCP_BYTES_DIFFER));
    let regex = body && !bytes_step;
    gauge(
        out,
        "probe_failed_due_to_bytes",
        "Indicates if probe failed due to bytes",
        u8::from(bytes),
    );
    gauge(
        out,
        "probe_failed_due_to_regex",
        "Indicates if probe failed due to regex",
        u8::from(regex),
    );
}
