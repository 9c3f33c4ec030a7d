//! A module made ready, at start, to build a spec for any target: which prober it runs, the
//! library's probe options (its template spec) and the checks the library does not make itself
//! (several body and header expressions, HTTP versions, SSL or not), judged on the outcome.
//! Reading a file into modules is modules.rs's; each prober's options are its `*_module.rs`'s;
//! a target into a spec is target_spec.rs's; the HTTP checks are http_verdict.rs's.

use std::sync::Arc;
use std::time::Duration;

use prober::ProbeSpec;
use prober_core::{AddressFilter, BodyCel, Pattern};
use regex::bytes::Regex;

pub use crate::target::TargetError;

/// Which prober a module runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prober {
    /// `prober: http`.
    Http,
    /// `prober: tcp`.
    Tcp,
    /// `prober: grpc`.
    Grpc,
    /// `prober: unix`: a stream connection to a Unix socket, the target its path.
    Unix,
    /// `prober: icmp`: one echo request to the target (a name or an IP address).
    Icmp,
    /// `prober: dns`: a query to the server the target names.
    Dns,
}

impl Prober {
    /// The name as the file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Prober::Http => "http",
            Prober::Tcp => "tcp",
            Prober::Grpc => "grpc",
            Prober::Unix => "unix",
            Prober::Icmp => "icmp",
            Prober::Dns => "dns",
        }
    }
}

/// A header expectation (`fail_if_header_matches` / `_not_matches`).
#[derive(Debug)]
pub(crate) struct HeaderCheck {
    pub header: String,
    pub regexp: Regex,
    pub allow_missing: bool,
}

/// blackbox_exporter's help text of `probe_failed_due_to_cel`.
pub(crate) const CEL_HELP: &str = "Indicates if probe failed due to CEL expression not matching";

/// Which of blackbox_exporter's checks failed a probe, for its `probe_failed_due_to_*` gauges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailedBy {
    /// A check without a gauge of its own (status, version, SSL, ...).
    Other,
    /// A body or header regular expression: `probe_failed_due_to_regex`.
    Regex,
    /// A CEL expression: `probe_failed_due_to_cel`.
    Cel,
}

/// One module, ready to build a spec for any target.

#[derive(Debug)]
pub struct Module {
    /// The module's name.
    pub name: String,
    /// Its prober.
    pub prober: Prober,
    /// Its `timeout` (`None`: only the scrape's).
    pub timeout: Option<Duration>,
    /// Its allow-list, `None` when it has none (every target is probed).
    pub filter: Option<Arc<AddressFilter>>,
    pub(crate) template: ProbeSpec,
    pub(crate) body_fail: Vec<Regex>,
    pub(crate) body_need: Vec<Regex>,
    /// `fail_if_body_json_matches_cel`.
    pub(crate) cel_fail: Option<BodyCel>,
    /// `fail_if_body_json_not_matches_cel`.
    pub(crate) cel_need: Option<BodyCel>,
    pub(crate) header_fail: Vec<HeaderCheck>,
    pub(crate) header_need: Vec<HeaderCheck>,
    pub(crate) versions: Vec<String>,
    pub(crate) fail_if_ssl: bool,
    pub(crate) fail_if_not_ssl: bool,
    pub(crate) valid_status: Option<Vec<u16>>,
    /// HTTP: redirects are followed (not `no_follow_redirects`).
    pub(crate) follow_redirects: bool,
    /// HTTP: `body_size_limit`, when set (and not 0): a longer body fails the probe.
    pub(crate) body_size_limit: Option<u64>,
    /// HTTP: why `body_file` could not be read when the module was loaded. The module loads
    /// all the same and each probe fails with it, as blackbox_exporter opens the file per probe
    /// and fails that probe (its own example.yml names `/files/body.txt`).
    pub(crate) body_file_error: Option<String>,
    /// HTTP: `compression` names an algorithm blackbox_exporter does not know.
    pub(crate) unsupported_compression: bool,
    /// HTTP: `skip_resolve_phase_with_proxy` with a proxy configured: no `resolve` phase for
    /// the first request (see `proxy_module`).
    pub(crate) skip_resolve_phase: bool,
    /// gRPC and TCP: TLS is on.
    pub(crate) tls: bool,
    /// TCP: the `query_response` steps as the metrics read them (labels, bytes or lines).
    pub(crate) query_response: Vec<QrStep>,
    /// DNS: a `valid_rcodes` name miekg/dns does not know (every answered probe fails).
    pub(crate) dns_unknown_rcode: Option<String>,
    /// Unix: the socket paths `allow.paths` admits (`None`: every path).
    pub(crate) paths: Option<Vec<String>>,
    /// The module as written (credentials as `<secret>`), for the debug page
    /// ([`crate::shown`]).
    pub(crate) shown: serde_norway::Value,
}

/// One `query_response` step as the metrics read it.
#[derive(Debug, Clone)]
pub(crate) struct QrStep {
    /// `expect`: the lines read until one matches.
    pub expect: Option<Pattern>,
    /// `expect_bytes`: how many bytes the step reads (0: none).
    pub bytes: usize,
    /// `labels`: names and value templates for `probe_expect_info`, when `expect` matched.
    pub labels: Vec<(String, String)>,
    /// `starttls`: the bytes after this step come through TLS.
    pub starttls: bool,
}
