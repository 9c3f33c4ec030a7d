//! What every run of one HTTP spec shares: [`HttpPlan`], made once per spec. A leaf of the
//! probe's modules: the probe, its hops' routes and its exchanges read it, it reads none of them.

use prober_core::{HttpSpec, Scheme, TlsOptions};

use crate::request::{Message, build_request_with, host_override, user_wants_close};

/// What every run of one HTTP spec shares, made once: the spec, its virtual host and the bytes
/// of its first request. A periodic worker holds one and each run takes a reference, so a run
/// copies no URL, header or user agent and formats no request (tests/allocations.rs in
/// `prober-engine` counts what a run allocates).
#[derive(Debug)]
pub struct HttpPlan {
    pub(super) spec: HttpSpec,
    pub(super) host_override: Option<String>,
    /// The spec's TLS options without its server name, for redirect hops to another host
    /// (`None` when the spec names no server): see [`endpoint`](super::route::endpoint).
    pub(super) other_host_tls: Option<TlsOptions>,
    pub(super) request: Vec<u8>,
    /// Keep-alive asked for and not overridden by a user `Connection: close`.
    pub(super) keep_alive: bool,
    /// The TLS sessions every run of this plan resumes from and adds to, when the TLS options
    /// ask for resumption: a plan is made once per periodic target (and per one-shot spec an
    /// engine keeps prepared), so its runs share them and no one else does.
    pub(super) tls_sessions: Option<std::sync::Arc<prober_transport::TlsSessions>>,
}

impl HttpPlan {
    /// Makes the plan of `spec`: its virtual host and its first request, once.
    pub fn new(spec: HttpSpec) -> HttpPlan {
        let host_override = host_override(&spec.headers);
        let keep_alive = spec.connect.keep_alive && !user_wants_close(&spec.headers);
        let message = Message { method: &spec.method, body: &spec.body };
        let request = match crate::proxy::proxy_for(&spec, &spec.url) {
            Some(p) if spec.url.scheme() == Scheme::Http => crate::proxy::build_proxied_request(
                p,
                &spec.url,
                &spec.headers,
                &spec.user_agent,
                host_override.as_deref(),
                None,
                keep_alive,
                message,
            ),
            _ => build_request_with(
                &spec.url,
                &spec.headers,
                &spec.user_agent,
                host_override.as_deref(),
                None,
                keep_alive,
                message,
            ),
        };
        let other_host_tls = spec
            .tls()
            .server_name
            .is_some()
            .then(|| TlsOptions { server_name: None, ..spec.tls().clone() });
        let tls_sessions = prober_transport::TlsSessions::for_options(Some(spec.tls()));
        HttpPlan { spec, host_override, other_host_tls, request, keep_alive, tls_sessions }
    }

    /// The spec planned.
    pub fn spec(&self) -> &HttpSpec {
        &self.spec
    }
}
