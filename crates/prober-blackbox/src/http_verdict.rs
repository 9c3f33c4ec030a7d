//! The checks blackbox_exporter's HTTP prober makes on a response beyond what the library
//! judges: statuses, versions, SSL, body and header expressions, CEL.

use std::time::Instant;

use prober_core::Outcome;

use crate::module::{FailedBy, Module, Prober};

impl Module {
    /// Whether the final response is a redirect blackbox_exporter's `CheckRedirect` refused
    /// because the module does not follow redirects: Go's client asks it for a 301, 302, 303,
    /// 307 or 308 with a `Location`, and then returns that response with its body closed.
    pub(crate) fn redirect_not_followed(&self, o: &Outcome) -> bool {
        let location =
            o.headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("location") && !v.is_empty());
        self.prober == Prober::Http
            && !self.follow_redirects
            && crate::facts::http_responded(o)
            && o.http_status.is_some_and(|s| matches!(s, 301 | 302 | 303 | 307 | 308))
            && location
    }

    /// The checks blackbox_exporter makes beyond the status: `None` when they pass, else
    /// the failing check's description and whether it was a regular expression.
    pub(crate) fn judge(
        &self,
        o: &Outcome,
        deadline: Option<Instant>,
    ) -> Option<(String, FailedBy)> {
        if self.prober == Prober::Dns {
            return self.judge_dns(o).map(|why| (why, FailedBy::Other));
        }
        if let Some(status) = o.http_status {
            let ok = match &self.valid_status {
                Some(list) => list.contains(&status),
                None => (200..300).contains(&status),
            };
            if !ok {
                return Some((
                    format!("Invalid HTTP response status code {status}, wanted 2xx"),
                    FailedBy::Other,
                ));
            }
        }
        if self.prober != Prober::Http {
            return None;
        }
        if self.unsupported_compression {
            let e = "Failed to get decompressor for HTTP response body: unsupported compression algorithm";
            return Some((e.into(), FailedBy::Other));
        }
        // Go's `Response.Proto`, judged only when there was a response, as blackbox does.
        if let (false, Some(v)) = (self.versions.is_empty(), o.http_version) {
            let v = v.as_str();
            if !self.versions.iter().any(|w| w == v) {
                return Some((format!("Invalid HTTP version number {v}"), FailedBy::Other));
            }
        }
        let ssl = crate::facts::http_ssl(o);
        if self.fail_if_ssl && ssl {
            return Some(("Final request was over SSL".into(), FailedBy::Other));
        }
        if self.fail_if_not_ssl && !ssl {
            return Some(("Final request was not over SSL".into(), FailedBy::Other));
        }
        // The first of blackbox_exporter's body checks to read the body (the regular
        // expressions, then CEL) meets a read error first, and fails on it.
        let body_reader = if !self.body_fail.is_empty() || !self.body_need.is_empty() {
            Some(FailedBy::Regex)
        } else if self.has_cel() {
            Some(FailedBy::Cel)
        } else {
            None
        };
        if let (Some(by), true) = (body_reader, self.redirect_not_followed(o)) {
            // Its body expressions then read a closed body, and fail on the error.
            return Some((
                "Error reading HTTP body: http: read on closed response body".into(),
                by,
            ));
        }
        if self.body_size_limit.is_some_and(|l| o.output_total > l) {
            return Some((
                "Failed to read HTTP response body: http: request body too large".into(),
                body_reader.unwrap_or(FailedBy::Other),
            ));
        }
        for r in &self.body_fail {
            if r.is_match(&o.output) {
                return Some((format!("Body matched regular expression {r}"), FailedBy::Regex));
            }
        }
        for r in &self.body_need {
            if !r.is_match(&o.output) {
                return Some((
                    format!("Body did not match regular expression {r}"),
                    FailedBy::Regex,
                ));
            }
        }
        if let Some(failed) = self.judge_cel(o, deadline) {
            return Some((failed, FailedBy::Cel));
        }
        let values = |name: &str| -> Vec<&str> {
            o.headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
                .collect()
        };
        for h in &self.header_fail {
            let vs = values(&h.header);
            if vs.is_empty() && !h.allow_missing {
                return Some((format!("Missing required header {}", h.header), FailedBy::Regex));
            }
            if vs.iter().any(|v| h.regexp.is_match(v.as_bytes())) {
                return Some((
                    format!("Header {} matched regular expression {}", h.header, h.regexp),
                    FailedBy::Regex,
                ));
            }
        }
        for h in &self.header_need {
            let vs = values(&h.header);
            if vs.is_empty() && !h.allow_missing {
                return Some((format!("Missing required header {}", h.header), FailedBy::Regex));
            }
            if !vs.is_empty() && !vs.iter().any(|v| h.regexp.is_match(v.as_bytes())) {
                return Some((
                    format!("Header {} did not match regular expression {}", h.header, h.regexp),
                    FailedBy::Regex,
                ));
            }
        }
        None
    }

    /// The module has a CEL expression (and so the `probe_failed_due_to_cel` gauge).
    pub(crate) fn has_cel(&self) -> bool {
        self.cel_fail.is_some() || self.cel_need.is_some()
    }

    /// `fail_if_body_json_matches_cel` and `fail_if_body_json_not_matches_cel` on the whole
    /// body (blackbox_exporter v0.28.0 gives them what its regular expressions left of the
    /// body, nothing when there are any: a module with both always fails there; here each sees
    /// the body). Messages as blackbox_exporter logs them.
    fn judge_cel(&self, o: &Outcome, deadline: Option<Instant>) -> Option<String> {
        if let Some(cel) = &self.cel_fail {
            match cel.eval_json(&o.output, deadline) {
                Ok(true) => return Some(format!("Body matched CEL expression {cel}")),
                Ok(false) => {}
                Err(why) => return Some(why),
            }
        }
        if let Some(cel) = &self.cel_need {
            match cel.eval_json(&o.output, deadline) {
                Ok(false) => return Some(format!("Body did not match CEL expression {cel}")),
                Ok(true) => {}
                Err(why) => return Some(why),
            }
        }
        None
    }
}
