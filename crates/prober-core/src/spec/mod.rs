//! What to probe and how: specs, their options, and validation.
//!
//! Constructors and setters validate as they go, so bad input is refused where it enters;
//! [`ProbeSpec::validate`] re-checks a whole spec for callers that built one field by field.

use std::time::Duration;

use crate::allow::AddressFilter;
use crate::expect::{MAX_SEND_LEN, Pattern, StatusSet};
use crate::expect_cel::{BodyCel, CelMode};
use crate::ip_family::IpFamily;
use crate::unix::UnixSocket;
use crate::url::Url;

mod containment;
mod dns;
mod error;
mod host_run;
mod http_setters;
mod icmp;
mod kinds;
mod namespaces;
mod oauth2;
mod proxy;
mod tcp_steps;
#[cfg(test)]
mod tests;
mod tls;
mod validate;

pub use error::SpecError;
pub use host_run::{HostRunSpec, MAX_HOST_RUN_LABEL};
pub use kinds::{
    ClosePolicy, Compression, ExecSpec, GrpcSpec, HttpSpec, HttpVersion, RedirectPolicy, TcpSpec,
};
pub use kinds::{DnsRrChecks, DnsSpec, DnsTransport};
pub use oauth2::{MAX_OAUTH2_PARAMS, MAX_OAUTH2_VALUE, OAuth2, OAuth2AuthStyle, query_escape};
pub use proxy::{HttpProxy, MAX_CONNECT_HEADERS, MAX_NO_PROXY_ENTRIES, NoProxy, ProxyServer};
pub(crate) use tcp_steps::refuse_single;
pub use tcp_steps::{
    MAX_TCP_STEP_LINE, MAX_TCP_STEPS, MAX_TCP_STEPS_READ, TCP_BYTES_DIFFER, TcpStep,
};
pub use tls::{TlsOptions, TlsVerify, TlsVersion};
use validate::{validate_argv, validate_env, validate_port, validate_timeout};
pub use validate::{validate_header, validate_host};

/// The kubelet's default probe timeout (`timeoutSeconds: 1`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);
/// How much HTTP body or command output is kept (the kubelet's `maxReadLength`, 10 KiB).
pub const DEFAULT_OUTPUT_LIMIT: usize = 10 * 1024;
/// The `User-Agent` sent by default, as the kubelet's `kube-probe/<major>.<minor>`.
pub const DEFAULT_USER_AGENT: &str = "kube-probe/1.37";
/// Redirects an HTTP probe follows by default: the kubelet's checker refuses the 10th (it
/// counts the requests made, as Go's client does).
pub const DEFAULT_MAX_REDIRECTS: u32 = 9;
/// The largest [`HttpSpec::max_redirects`]: every hop is a connection within one deadline.
pub const MAX_MAX_REDIRECTS: u32 = 64;

/// What a probe checks, with the options of that kind of probe.
///
/// More kinds may be added: the enum is `#[non_exhaustive]`, so a `match` on it needs a
/// wildcard arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProbeKind {
    /// Connect to a TCP port (and optionally send and expect a reply).
    Tcp(TcpSpec),
    /// GET an HTTP or HTTPS URL.
    Http(HttpSpec),
    /// Run a command.
    Exec(ExecSpec),
    /// Ask a gRPC server's health service.
    Grpc(GrpcSpec),
    /// Ask a DNS server one question (boxed: its checks make it the largest spec).
    Dns(Box<DnsSpec>),
    /// A run the host performs and completes (see [`HostRunSpec`]): engine workers only.
    HostRun(HostRunSpec),
    /// Send ICMP echo requests (ping) to a host.
    Icmp(crate::IcmpSpec),
}

/// One probe: what to check, and the limits of one run.
///
/// Built with a constructor per kind ([`ProbeSpec::tcp`], [`ProbeSpec::http`],
/// [`ProbeSpec::exec`], [`ProbeSpec::grpc`]) and refined with setters; each refuses bad input
/// when it is given, with a [`SpecError`] that says what is wrong. A spec is plain data: it is
/// run by `prober::check` (once, blocking) or by an engine (periodically, many at once).
///
/// ```
/// use std::net::TcpListener;
/// use std::time::Duration;
/// use prober_core::{ProbeKind, ProbeResult, ProbeSpec, SpecError};
///
/// // A real server to probe: a listener on a free loopback port.
/// let listener = TcpListener::bind("127.0.0.1:0")?;
/// let port = listener.local_addr()?.port();
///
/// let spec = ProbeSpec::tcp("127.0.0.1", port.into())?.with_timeout(Duration::from_secs(2))?;
/// assert!(matches!(&spec.kind, ProbeKind::Tcp(tcp) if tcp.port == port));
///
/// // Bad input is refused where it enters.
/// let err = ProbeSpec::tcp("127.0.0.1", 70000).unwrap_err();
/// assert_eq!(err, SpecError::InvalidPort(70000));
/// assert_eq!(err.to_string(), "invalid port 70000 (expected 1 to 65535)");
///
/// // The listener accepts the connection (the kernel does, before `accept`): Success.
/// let outcome = prober::check(&spec);
/// assert_eq!(outcome.result, ProbeResult::Success, "{}", outcome.message);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeSpec {
    /// What to probe, and the options of that kind of probe.
    pub kind: ProbeKind,
    /// One deadline for the whole run: resolve, connect, every redirect hop, the body, or the
    /// command.
    pub timeout: Duration,
    /// How many bytes of body or command output to keep.
    pub output_limit: usize,
}

impl ProbeSpec {
    pub(crate) fn with_kind(kind: ProbeKind) -> ProbeSpec {
        ProbeSpec { kind, timeout: DEFAULT_TIMEOUT, output_limit: DEFAULT_OUTPUT_LIMIT }
    }

    /// A TCP connect probe. `port` is taken wide so that out-of-range input gets a clear error.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`] or [`SpecError::InvalidPort`].
    pub fn tcp(host: &str, port: i64) -> Result<ProbeSpec, SpecError> {
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        validate_host(host)?;
        let port = validate_port(port)?;
        Ok(ProbeSpec::with_kind(ProbeKind::Tcp(TcpSpec {
            host: host.to_string(),
            port,
            close: ClosePolicy::Reset,
            send: Vec::new(),
            expect: None,
            unix_socket: None,
            tls: None,
            starttls: false,
            steps: Vec::new(),
            address_filter: None,
            netns: None,
            ip_family: IpFamily::Any,
            source_address: None,
        })))
    }

    /// An HTTP probe (GET until [`ProbeSpec::set_method`]) of an absolute `http://` or `https://` URL.
    ///
    /// # Errors
    ///
    /// [`SpecError::Url`] for a URL that is not an absolute `http://` or `https://` URL.
    pub fn http(url: &str) -> Result<ProbeSpec, SpecError> {
        let url = Url::parse(url)?;
        Ok(ProbeSpec::with_kind(ProbeKind::Http(HttpSpec {
            url,
            method: "GET".to_string(),
            body: Vec::new(),
            headers: Vec::new(),
            redirects: RedirectPolicy::SameHost,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            cookies: false,
            user_agent: DEFAULT_USER_AGENT.to_string(),
            close: ClosePolicy::Reset,
            tls: TlsOptions::default(),
            expect_status: None,
            expect_body: None,
            expect_body_cel: Vec::new(),
            keep_alive: false,
            unix_socket: None,
            address_filter: None,
            keep_headers: false,
            version: HttpVersion::Auto,
            netns: None,
            ip_family: IpFamily::Any,
            source_address: None,
            redirects_dial_by_name: false,
            compression: None,
            proxy: None,
            oauth2: None,
        })))
    }

    /// A gRPC health probe of `service` (empty: the whole server) at `host:port`, in plaintext
    /// h2c as the kubelet; [`ProbeSpec::set_tls`] switches it to TLS. An empty `host` is the
    /// local machine, as the kubelet's `":PORT"` is for Go's dialer (see [`GrpcSpec::host`]).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`] or [`SpecError::InvalidPort`].
    pub fn grpc(host: &str, port: i64, service: &str) -> Result<ProbeSpec, SpecError> {
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        if !host.is_empty() {
            validate_host(host)?;
        }
        let port = validate_port(port)?;
        Ok(ProbeSpec::with_kind(ProbeKind::Grpc(GrpcSpec {
            host: host.to_string(),
            port,
            service: service.to_string(),
            tls: None,
            close: ClosePolicy::Reset,
            unix_socket: None,
            metadata: Vec::new(),
            user_agent: None,
            authority: None,
            address_filter: None,
            keep_alive: false,
            netns: None,
            ip_family: IpFamily::Any,
            source_address: None,
        })))
    }

    /// An exec probe: `argv[0]` is looked up in `PATH` when it has no `/`.
    ///
    /// # Errors
    ///
    /// [`SpecError::EmptyArgv`] for no command, [`SpecError::InvalidArgument`] for an argument
    /// with a NUL byte.
    pub fn exec<S: AsRef<str>>(argv: &[S]) -> Result<ProbeSpec, SpecError> {
        let argv: Vec<String> = argv.iter().map(|s| s.as_ref().to_string()).collect();
        validate_argv(&argv)?;
        Ok(ProbeSpec::with_kind(ProbeKind::Exec(ExecSpec {
            argv,
            env: Vec::new(),
            cwd: None,
            namespaces_of: None,
            cgroup: None,
        })))
    }

    /// Sets the one deadline of every run (default [`DEFAULT_TIMEOUT`], the kubelet's 1 s).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidTimeout`] outside 1 ms to 24 h; the spec is unchanged.
    pub fn set_timeout(&mut self, timeout: Duration) -> Result<(), SpecError> {
        validate_timeout(timeout)?;
        self.timeout = timeout;
        Ok(())
    }

    /// [`ProbeSpec::set_timeout`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_timeout`].
    pub fn with_timeout(mut self, timeout: Duration) -> Result<ProbeSpec, SpecError> {
        self.set_timeout(timeout)?;
        Ok(self)
    }

    /// Sets how many bytes of body or command output are kept (default
    /// [`DEFAULT_OUTPUT_LIMIT`], the kubelet's 10 KiB).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidOutputLimit`] outside 1 byte to 64 MiB; the spec is unchanged.
    pub fn set_output_limit(&mut self, limit: usize) -> Result<(), SpecError> {
        if limit == 0 || limit > 64 << 20 {
            return Err(SpecError::InvalidOutputLimit);
        }
        self.output_limit = limit;
        Ok(())
    }

    /// Adds an HTTP header (HTTP probes only; others get `InvalidHeaderName` with a note).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHeaderName`], [`SpecError::InvalidHeaderValue`] or
    /// [`SpecError::InvalidHostHeader`] for a header that could not be sent as given, and
    /// [`SpecError::InvalidHeaderName`] for a probe that is not HTTP.
    pub fn add_header(&mut self, name: &str, value: &str) -> Result<(), SpecError> {
        validate_header(name, value)?;
        match &mut self.kind {
            ProbeKind::Http(h) => {
                h.headers.push((name.to_string(), value.to_string()));
                Ok(())
            }
            _ => Err(SpecError::InvalidHeaderName(format!(
                "{name} (headers apply to HTTP probes only)"
            ))),
        }
    }

    /// [`ProbeSpec::add_header`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::add_header`].
    pub fn with_header(mut self, name: &str, value: &str) -> Result<ProbeSpec, SpecError> {
        self.add_header(name, value)?;
        Ok(self)
    }

    /// Sets a static environment variable of an exec probe (replacing an earlier value, in its
    /// place). `$(VAR)` in argv is expanded from the values as written; the command's own
    /// variables have their values expanded against the variables set before them, as the
    /// kubelet expands a container's `env` ([`ExecSpec::env`]).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidEnvName`] or [`SpecError::InvalidEnvValue`], and
    /// [`SpecError::InvalidEnvName`] for a probe that is not exec.
    pub fn set_env(&mut self, name: &str, value: &str) -> Result<(), SpecError> {
        validate_env(name, value)?;
        match &mut self.kind {
            ProbeKind::Exec(e) => {
                match e.env.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = value.to_string(),
                    None => e.env.push((name.to_string(), value.to_string())),
                }
                Ok(())
            }
            _ => Err(SpecError::InvalidEnvName(format!(
                "{name} (environment applies to exec probes only)"
            ))),
        }
    }

    /// [`ProbeSpec::set_env`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_env`].
    pub fn with_env(mut self, name: &str, value: &str) -> Result<ProbeSpec, SpecError> {
        self.set_env(name, value)?;
        Ok(self)
    }

    /// Sets the redirect policy (HTTP only; ignored for other kinds, which never redirect).
    pub fn set_redirect_policy(&mut self, policy: RedirectPolicy) {
        if let ProbeKind::Http(h) = &mut self.kind {
            h.redirects = policy;
        }
    }

    /// [`ProbeSpec::set_redirect_policy`] for building a spec in one expression.
    pub fn with_redirect_policy(mut self, policy: RedirectPolicy) -> ProbeSpec {
        self.set_redirect_policy(policy);
        self
    }

    /// Sets the allow-list of destinations (TCP, HTTP and gRPC probes; see [`AddressFilter`]):
    /// the connector checks each address, after resolution and on every redirect hop, and a
    /// refused one is a Failure with reason `denied`. `None` removes it.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for an exec probe.
    pub fn set_address_filter(
        &mut self,
        filter: Option<std::sync::Arc<AddressFilter>>,
    ) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Tcp(t) => t.address_filter = filter,
            ProbeKind::Http(h) => h.address_filter = filter,
            ProbeKind::Grpc(g) => g.address_filter = filter,
            ProbeKind::Icmp(i) => i.address_filter = filter,
            ProbeKind::Dns(d) => d.address_filter = filter,
            _ => {
                return Err(SpecError::InvalidExpectation(
                    "an address filter applies to ICMP and to TCP, HTTP and gRPC probes only"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// Sets how many redirects a run follows at most (HTTP only; see
    /// [`HttpSpec::max_redirects`]).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] above [`MAX_MAX_REDIRECTS`] or for a probe that is not
    /// HTTP.
    pub fn set_max_redirects(&mut self, max: u32) -> Result<(), SpecError> {
        if max > MAX_MAX_REDIRECTS {
            return Err(SpecError::InvalidExpectation(format!(
                "at most {MAX_MAX_REDIRECTS} redirects can be followed, not {max}"
            )));
        }
        self.http_only("a redirect limit applies to HTTP probes only")?.max_redirects = max;
        Ok(())
    }

    /// Keeps the cookies responses set for the later hops of the same run (HTTP only; see
    /// [`HttpSpec::cookies`]).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_cookies(&mut self, on: bool) -> Result<(), SpecError> {
        self.http_only("cookies apply to HTTP probes only")?.cookies = on;
        Ok(())
    }

    /// Decodes the final response's body with `coding` (HTTP only; see [`Compression`]);
    /// `None`: the body as it arrives (the default).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_compression(&mut self, coding: Option<Compression>) -> Result<(), SpecError> {
        self.http_only("compression applies to HTTP probes only")?.compression = coding;
        Ok(())
    }

    /// Keeps the final response's header fields in the outcome (HTTP only; see
    /// [`HttpSpec::keep_headers`]).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_keep_headers(&mut self, on: bool) -> Result<(), SpecError> {
        self.http_only("keeping headers applies to HTTP probes only")?.keep_headers = on;
        Ok(())
    }

    /// Sets how TCP connections are closed (TCP, HTTP and gRPC; ignored for exec, host-run and
    /// ICMP).
    pub fn set_close_policy(&mut self, policy: ClosePolicy) {
        match &mut self.kind {
            ProbeKind::Tcp(t) => t.close = policy,
            ProbeKind::Http(h) => h.close = policy,
            ProbeKind::Grpc(g) => g.close = policy,
            ProbeKind::Exec(_) | ProbeKind::HostRun(_) | ProbeKind::Icmp(_) | ProbeKind::Dns(_) => {
            }
        }
    }

    /// Sets the TLS options: of `https://` URLs for HTTP probes; for gRPC probes this also
    /// switches from h2c to TLS; for TCP probes too (beyond the kubelet: TLS from the first
    /// byte, or after the exchange with [`ProbeSpec::set_starttls`]); for DNS probes this
    /// selects DNS over TLS ([`DnsTransport::Tls`](super::DnsTransport::Tls)). Exec and ICMP
    /// probes refuse them.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidTls`] for invalid options ([`TlsOptions::validate`]) or an exec
    /// probe.
    pub fn set_tls(&mut self, tls: TlsOptions) -> Result<(), SpecError> {
        tls.validate()?;
        match &mut self.kind {
            ProbeKind::Http(h) => h.tls = tls,
            ProbeKind::Grpc(g) => g.tls = Some(tls),
            ProbeKind::Tcp(t) => t.tls = Some(tls),
            // As for gRPC, TLS options select the TLS transport: DNS over TLS.
            ProbeKind::Dns(d) => {
                d.tls = Some(tls);
                d.transport = super::DnsTransport::Tls;
            }
            _ => {
                return Err(SpecError::InvalidTls(
                    "TLS options apply to HTTP, gRPC, TCP and DNS probes only".into(),
                ));
            }
        }
        Ok(())
    }

    /// [`ProbeSpec::set_tls`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_tls`].
    pub fn with_tls(mut self, tls: TlsOptions) -> Result<ProbeSpec, SpecError> {
        self.set_tls(tls)?;
        Ok(self)
    }

    /// Sets the statuses that are Success (HTTP only), replacing the kubelet's rule.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_expect_status(&mut self, set: StatusSet) -> Result<(), SpecError> {
        self.http_only("expected statuses apply to HTTP probes only")?.expect_status = Some(set);
        Ok(())
    }

    /// Turns keep-alive on or off (HTTP and gRPC; see [`HttpSpec::keep_alive`] and
    /// [`GrpcSpec::keep_alive`]).
    ///
    /// # Errors
    /// [`SpecError::InvalidExpectation`] for a probe that is neither HTTP nor gRPC.
    pub fn set_keep_alive(&mut self, on: bool) -> Result<(), SpecError> {
        if let ProbeKind::Grpc(g) = &mut self.kind {
            g.keep_alive = on;
            return Ok(());
        }
        self.http_only("keep-alive applies to HTTP and gRPC probes only")?.keep_alive = on;
        Ok(())
    }

    /// Sets the HTTP version spoken (HTTP only; see [`HttpVersion`]).
    ///
    /// # Errors
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP;
    /// [`SpecError::InvalidRequest`] for [`HttpVersion::H2c`] on an `https://` URL (h2c is
    /// cleartext: the kubelet's validation accepts `protocol: HTTP2` with `scheme: HTTP` only).
    pub fn set_http_version(&mut self, version: HttpVersion) -> Result<(), SpecError> {
        let http = self.http_only("an HTTP version applies to HTTP probes only")?;
        if version == HttpVersion::H2c && http.url.scheme() != crate::Scheme::Http {
            return Err(SpecError::InvalidRequest(
                "HTTP/2 with prior knowledge (h2c) is only supported with http:// URLs".into(),
            ));
        }
        http.version = version;
        Ok(())
    }

    /// Sets a regular expression the body must match (HTTP only).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_expect_body(&mut self, pattern: Pattern) -> Result<(), SpecError> {
        self.http_only("a body expression applies to HTTP probes only")?.expect_body =
            Some(pattern);
        Ok(())
    }

    /// Sets a CEL expression over the body parsed as JSON (HTTP only), replacing the one of the
    /// same `mode`: with [`CelMode::FailIfMatches`] the run fails when it is true, with
    /// [`CelMode::FailIfNotMatches`] when it is false (see [`HttpSpec::expect_body_cel`]).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_expect_body_cel(&mut self, mode: CelMode, cel: BodyCel) -> Result<(), SpecError> {
        let checks =
            &mut self.http_only("a CEL expression applies to HTTP probes only")?.expect_body_cel;
        checks.retain(|(m, _)| *m != mode);
        checks.push((mode, cel));
        Ok(())
    }

    /// The HTTP part of an HTTP probe, for a setting that only HTTP probes have; `refusal` is
    /// the message of the error any other probe gets.
    fn http_only(&mut self, refusal: &str) -> Result<&mut HttpSpec, SpecError> {
        match &mut self.kind {
            ProbeKind::Http(h) => Ok(h),
            _ => Err(SpecError::InvalidExpectation(refusal.into())),
        }
    }

    /// Sets the bytes a TCP probe writes once connected (at most [`MAX_SEND_LEN`]); see
    /// [`crate::unescape`] for data written as text.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for more than [`MAX_SEND_LEN`] bytes or a probe that is
    /// not TCP.
    pub fn set_send(&mut self, data: Vec<u8>) -> Result<(), SpecError> {
        if data.len() > MAX_SEND_LEN {
            return Err(SpecError::InvalidExpectation(format!(
                "data to send is {} bytes (at most {MAX_SEND_LEN})",
                data.len()
            )));
        }
        match &mut self.kind {
            ProbeKind::Tcp(t) => {
                tcp_steps::refuse_single(t, !data.is_empty())?;
                t.send = data;
                Ok(())
            }
            _ => {
                Err(SpecError::InvalidExpectation("data to send applies to TCP probes only".into()))
            }
        }
    }

    /// Sets a regular expression a TCP probe's reply must match (TCP only).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not TCP.
    pub fn set_expect_reply(&mut self, pattern: Pattern) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Tcp(t) => {
                tcp_steps::refuse_single(t, true)?;
                t.expect = Some(pattern);
                Ok(())
            }
            _ => Err(SpecError::InvalidExpectation(
                "an expected reply applies to TCP probes only".into(),
            )),
        }
    }

    /// Checks every field, for specs built or changed field by field.
    ///
    /// # Errors
    ///
    /// The first problem found, as the constructor or setter that checks that field would
    /// report it.
    pub fn validate(&self) -> Result<(), SpecError> {
        validate_timeout(self.timeout)?;
        if self.output_limit == 0 || self.output_limit > 64 << 20 {
            return Err(SpecError::InvalidOutputLimit);
        }
        crate::netns::validate(&self.kind)?;
        if let ProbeKind::Tcp(t) = &self.kind {
            tcp_steps::validate(t)?;
        }
        match &self.kind {
            ProbeKind::Tcp(t) if t.tls.as_ref().is_some_and(|o| o.validate().is_err()) => {
                t.tls.as_ref().map_or(Ok(()), TlsOptions::validate)?;
            }
            ProbeKind::Tcp(t) if t.unix_socket.is_some() => {
                t.unix_socket.as_ref().map_or(Ok(()), UnixSocket::validate)?;
                if t.send.len() > MAX_SEND_LEN {
                    return Err(SpecError::InvalidExpectation(format!(
                        "data to send is {} bytes (at most {MAX_SEND_LEN})",
                        t.send.len()
                    )));
                }
            }
            ProbeKind::Tcp(t) => {
                validate_host(&t.host)?;
                validate_port(t.port.into())?;
                if t.send.len() > MAX_SEND_LEN {
                    return Err(SpecError::InvalidExpectation(format!(
                        "data to send is {} bytes (at most {MAX_SEND_LEN})",
                        t.send.len()
                    )));
                }
            }
            ProbeKind::Http(h) => {
                for (n, v) in &h.headers {
                    validate_header(n, v)?;
                }
                validate_header("User-Agent", &h.user_agent)?;
                h.tls.validate()?;
                crate::request::validate_method(&h.method)?;
                crate::request::validate_body(&h.body)?;
                h.unix_socket.as_ref().map_or(Ok(()), UnixSocket::validate)?;
                h.oauth2.as_ref().map_or(Ok(()), |o| o.validate())?;
            }
            ProbeKind::Grpc(g) => {
                // Empty: the local machine, as the kubelet's ":PORT" (GrpcSpec::host).
                if !g.host.is_empty() {
                    validate_host(&g.host)?;
                }
                if g.unix_socket.is_none() {
                    validate_port(g.port.into())?;
                }
                if let Some(tls) = &g.tls {
                    tls.validate()?;
                }
                g.unix_socket.as_ref().map_or(Ok(()), UnixSocket::validate)?;
                for (k, v) in &g.metadata {
                    crate::metadata::validate_metadata(k, v)?;
                }
                let mut copy = ProbeSpec::grpc("h", 1, "")?;
                if let Some(ua) = &g.user_agent {
                    copy.set_grpc_user_agent(ua)?;
                }
                if let Some(a) = &g.authority {
                    copy.set_grpc_authority(a)?;
                }
            }
            ProbeKind::Exec(e) => {
                validate_argv(&e.argv)?;
                for (n, v) in &e.env {
                    validate_env(n, v)?;
                }
                if let Some(pid) = e.namespaces_of {
                    namespaces::validate_pid(pid)?;
                }
                if let Some(dir) = &e.cgroup {
                    containment::validate_cgroup_dir(dir)?;
                }
            }
            ProbeKind::HostRun(h) => host_run::validate_label(&h.label)?,
            ProbeKind::Icmp(i) => i.validate_within(self.timeout)?,
            ProbeKind::Dns(d) => d.validate()?,
        }
        Ok(())
    }
}
