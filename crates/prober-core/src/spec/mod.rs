//! What to probe and how: specs, their options, and validation.
//!
//! Constructors and setters validate as they go, so bad input is refused where it enters;
//! [`ProbeSpec::validate`] re-checks a whole spec for callers that built one field by field.

use std::time::Duration;

use crate::expect::{Pattern, StatusSet};
use crate::expect_cel::{BodyCel, CelMode};
use crate::unix::UnixSocket;
use crate::url::Url;

mod check;
mod connect_options;
mod connect_setters;
mod containment;
mod dns;
mod error;
mod grpc_setters;
mod host_run;
mod http_setters;
mod icmp;
mod kinds;
mod namespaces;
mod oauth2;
mod proxy;
mod tcp_setters;
mod tcp_steps;
#[cfg(test)]
mod tests;
mod tls;
mod tls_fields;
mod validate;

pub use connect_options::{ClosePolicy, ConnectOption, ConnectOptions};
pub use error::SpecError;
pub use host_run::{HostRunSpec, MAX_HOST_RUN_LABEL};
pub use kinds::{Compression, ExecSpec, GrpcSpec, HttpSpec, HttpVersion, RedirectPolicy, TcpSpec};
pub use kinds::{DnsRrChecks, DnsSpec, DnsTransport};
pub use oauth2::{MAX_OAUTH2_PARAMS, MAX_OAUTH2_VALUE, OAuth2, OAuth2AuthStyle, query_escape};
pub use proxy::{HttpProxy, MAX_CONNECT_HEADERS, MAX_NO_PROXY_ENTRIES, NoProxy, ProxyServer};
pub use tcp_steps::{
    MAX_TCP_STEP_LINE, MAX_TCP_STEPS, MAX_TCP_STEPS_READ, TCP_BYTES_DIFFER, TcpStep,
};
pub use tls::{TlsOptions, TlsVerify, TlsVersion};
pub use tls_fields::{TlsFieldNames, TlsFields};
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
        let host = crate::target::unbracket(host);
        validate_host(host)?;
        let port = validate_port(port)?;
        Ok(ProbeSpec::with_kind(ProbeKind::Tcp(TcpSpec {
            host: host.to_string(),
            port,
            connect: ConnectOptions::default(),
            send: Vec::new(),
            expect: None,
            starttls: false,
            steps: Vec::new(),
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
            connect: ConnectOptions {
                tls: Some(TlsOptions::default()),
                ..ConnectOptions::default()
            },
            expect_status: None,
            expect_body: None,
            expect_body_cel: Vec::new(),
            keep_headers: false,
            keep_header_names: Vec::new(),
            version: HttpVersion::Auto,
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
        let host = crate::target::unbracket(host);
        if !host.is_empty() {
            validate_host(host)?;
        }
        let port = validate_port(port)?;
        Ok(ProbeSpec::with_kind(ProbeKind::Grpc(GrpcSpec {
            host: host.to_string(),
            port,
            service: service.to_string(),
            connect: ConnectOptions::default(),
            metadata: Vec::new(),
            user_agent: None,
            authority: None,
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

    /// A connect check of a Unix socket (the TCP probe's rules: connect within the deadline,
    /// optionally send and expect, close). Its `host` is `localhost` and its `port` 0: they
    /// name nothing.
    ///
    /// # Errors
    ///
    /// None beyond those of [`UnixSocket`]'s constructors, which made `socket`.
    pub fn unix(socket: UnixSocket) -> Result<ProbeSpec, SpecError> {
        socket.validate()?;
        let mut spec = ProbeSpec::tcp("localhost", 1)?;
        if let ProbeKind::Tcp(t) = &mut spec.kind {
            t.port = 0;
            t.connect.unix_socket = Some(socket);
        }
        Ok(spec)
    }

    /// A gRPC health probe of `service` through a Unix socket (grpc-health-probe's
    /// `-addr unix:///run/app.sock`): `:authority` is `localhost`, as grpc-go sends for `unix:`
    /// targets; the port (0) names nothing.
    ///
    /// # Errors
    ///
    /// As [`UnixSocket::validate`].
    pub fn grpc_unix(socket: UnixSocket, service: &str) -> Result<ProbeSpec, SpecError> {
        socket.validate()?;
        let mut spec = ProbeSpec::grpc("localhost", 1, service)?;
        if let ProbeKind::Grpc(g) = &mut spec.kind {
            g.port = 0;
            g.connect.unix_socket = Some(socket);
        }
        Ok(spec)
    }

    /// A probe that the host runs (see [`HostRunSpec`]). `label` names it in announcements and
    /// messages; it may be empty. Only an engine's worker can run it: a one-shot check or
    /// submit has no host to perform it and is refused.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a label longer than [`MAX_HOST_RUN_LABEL`] bytes or
    /// holding a NUL byte.
    pub fn host_run(label: &str) -> Result<ProbeSpec, SpecError> {
        host_run::validate_label(label)?;
        Ok(ProbeSpec::with_kind(ProbeKind::HostRun(HostRunSpec { label: label.to_string() })))
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

    /// Keeps only the final response's header fields of these names (ASCII case-insensitive)
    /// in the outcome, and turns [`HttpSpec::keep_headers`] on (HTTP only; see
    /// [`HttpSpec::keep_header_names`]). An empty list keeps every field.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_keep_header_names(&mut self, names: Vec<String>) -> Result<(), SpecError> {
        let h = self.http_only("keeping headers applies to HTTP probes only")?;
        h.keep_headers = true;
        h.keep_header_names = names;
        Ok(())
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
}
