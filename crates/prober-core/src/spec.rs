//! What to probe and how: specs, their options, and validation.
//!
//! Constructors and setters validate as they go, so bad input is refused where it enters;
//! [`ProbeSpec::validate`] re-checks a whole spec for callers that built one field by field.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::expect::{MAX_SEND_LEN, Pattern, StatusSet};
use crate::unix::UnixSocket;
use crate::url::{Url, UrlError};

/// The kubelet's default probe timeout (`timeoutSeconds: 1`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);
/// How much HTTP body or command output is kept (the kubelet's `maxReadLength`, 10 KiB).
pub const DEFAULT_OUTPUT_LIMIT: usize = 10 * 1024;
/// The `User-Agent` sent by default, as the kubelet's `kube-probe/<major>.<minor>`.
pub const DEFAULT_USER_AGENT: &str = "kube-probe/1.37";
/// The longest timeout accepted: longer "timeouts" are almost always unit mistakes.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// How a TCP connection made by a probe is closed.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ClosePolicy {
    /// `SO_LINGER` 0: close with RST. Nothing was sent, so nothing is lost, and no TIME_WAIT is
    /// left on this host (deliberate improvement over the kubelet).
    #[default]
    Reset = 0,
    /// An orderly close with FIN, as a plain `close()` does (leaves TIME_WAIT behind).
    Fin = 1,
}

/// Which redirects an HTTP probe follows.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RedirectPolicy {
    /// The kubelet's rule: follow when the host name is the same as the original request's
    /// (port and scheme may change).
    #[default]
    SameHost = 0,
    /// Follow only when scheme, host and port are all the same.
    SameOrigin = 1,
    /// Never follow: any 3xx is the final response (Warning).
    None = 2,
}

impl RedirectPolicy {
    /// The policy named `same-host`, `same-origin` or `none` (the names the command and
    /// manifests use); `None` for any other text.
    pub fn parse(s: &str) -> Option<RedirectPolicy> {
        match s {
            "same-host" => Some(RedirectPolicy::SameHost),
            "same-origin" => Some(RedirectPolicy::SameOrigin),
            "none" => Some(RedirectPolicy::None),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// A TCP probe: connect to `host:port` (the kubelet's `tcpSocket`), optionally send and
/// expect a reply.
pub struct TcpSpec {
    /// Host name or IP literal (IPv6 without brackets).
    pub host: String,
    /// The port to connect to (1 to 65535).
    pub port: u16,
    /// How the connection is closed once the probe is done.
    pub close: ClosePolicy,
    /// Bytes written once connected (HAProxy `tcp-check send`, Envoy `tcp_health_check`
    /// send); empty: nothing is sent, the kubelet's connect-only check.
    pub send: Vec<u8>,
    /// A regular expression the reply must match: bytes are read (up to 10240) until it
    /// matches (Success) or the peer closes or the deadline passes (Failure). `None`: nothing
    /// is read.
    pub expect: Option<Pattern>,
    /// Connect to this Unix socket instead of `host:port` (beyond the kubelet; see
    /// [`ProbeSpec::unix`]).
    pub unix_socket: Option<UnixSocket>,
    /// TLS (beyond the kubelet; Consul's `TCPUseTLS`, blackbox_exporter's `tls: true`): with
    /// these options, from the first byte, or after the exchange with [`TcpSpec::starttls`].
    /// Success then needs the handshake (and the verification the options ask for).
    pub tls: Option<TlsOptions>,
    /// STARTTLS (blackbox_exporter's `starttls` in `query_response`): the connection starts in
    /// plain text, the send/expect exchange runs (the server's go-ahead), then TLS with
    /// [`TcpSpec::tls`] shakes hands on the same connection.
    pub starttls: bool,
}

/// How a TLS client checks the server's certificate.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum TlsVerify {
    /// No verification of the chain or the name (the kubelet's `InsecureSkipVerify: true`). The
    /// handshake signatures are still checked, so the peer holds the key of the certificate it
    /// sent.
    #[default]
    None,
    /// Verify the chain against the system's trust store and the name against the server name.
    SystemRoots,
    /// Verify the chain against the CA certificates in this PEM file (read when a probe starts)
    /// and the name against the server name.
    CaFile(PathBuf),
}

/// A TLS protocol version.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TlsVersion {
    /// TLS 1.2.
    Tls12 = 12,
    /// TLS 1.3.
    Tls13 = 13,
}

impl TlsVersion {
    /// `1.2` or `1.3` (also `tls1.2`, `TLSv1.3`, ...).
    pub fn parse(s: &str) -> Option<TlsVersion> {
        let lower = s.to_ascii_lowercase();
        let v = lower.strip_prefix("tlsv").or_else(|| lower.strip_prefix("tls")).unwrap_or(&lower);
        match v {
            "1.2" | "12" => Some(TlsVersion::Tls12),
            "1.3" | "13" => Some(TlsVersion::Tls13),
            _ => None,
        }
    }

    /// The version as written in messages and options: `1.2` or `1.3`.
    pub fn as_str(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "1.2",
            TlsVersion::Tls13 => "1.3",
        }
    }
}

/// TLS client options of HTTPS and gRPC-over-TLS probes. The default is the kubelet's: no
/// certificate verification, SNI from the URL's host (none for an IP address), no client
/// certificate, TLS 1.2 or 1.3.
///
/// Files are read when a probe starts (so a renewed certificate is picked up by the next run);
/// one that is missing or unusable makes that run Unknown with reason `tls`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TlsOptions {
    /// How the server's certificate is checked.
    pub verify: TlsVerify,
    /// The server name sent as SNI and verified against the certificate, instead of the host
    /// the probe connects to. An IP address here sends no SNI (and is verified as an IP).
    pub server_name: Option<String>,
    /// Client certificate chain and private key, both PEM files (mutual TLS).
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// The oldest protocol version accepted; TLS 1.2 when `None`.
    pub min_version: Option<TlsVersion>,
}

impl TlsOptions {
    /// Checks the options without touching the file system (files are read at run time).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidTls`] for a server name that is neither a DNS name nor an IP
    /// address, or a file path that is empty or holds a NUL byte.
    pub fn validate(&self) -> Result<(), SpecError> {
        if let Some(name) = &self.server_name {
            if !valid_server_name(name) {
                return Err(SpecError::InvalidTls(format!(
                    "invalid server name {name:?} (expected a DNS name or an IP address)"
                )));
            }
        }
        if let TlsVerify::CaFile(p) = &self.verify {
            validate_path("CA file", p)?;
        }
        if let Some((cert, key)) = &self.client_cert {
            validate_path("client certificate file", cert)?;
            validate_path("client key file", key)?;
        }
        Ok(())
    }
}

fn validate_path(what: &str, p: &std::path::Path) -> Result<(), SpecError> {
    let bytes = p.as_os_str().as_encoded_bytes();
    if bytes.is_empty() {
        return Err(SpecError::InvalidTls(format!("{what}: empty path")));
    }
    if bytes.contains(&0) {
        return Err(SpecError::InvalidTls(format!("{what}: path contains a NUL byte")));
    }
    Ok(())
}

/// A DNS name as TLS accepts it in SNI (labels of letters, digits, `-` and `_`, at most 253
/// characters, an optional final dot), or an IP address.
fn valid_server_name(name: &str) -> bool {
    if name.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        && !name.rsplit('.').next().is_some_and(|tld| tld.chars().all(|c| c.is_ascii_digit()))
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// An HTTP probe of a URL (the kubelet's `httpGet`; beyond it, any method and a body).
pub struct HttpSpec {
    /// The URL to request (`http://` or `https://`).
    pub url: Url,
    /// The request method: `GET` (the kubelet's) unless set with [`ProbeSpec::set_method`].
    pub method: String,
    /// The request body, sent with its `Content-Length`; empty: no body.
    pub body: Vec<u8>,
    /// User headers in order. A user header replaces the default of the same name; an empty
    /// `User-Agent` or `Accept` removes that default; `Host` sets the virtual host.
    pub headers: Vec<(String, String)>,
    /// Which redirects are followed.
    pub redirects: RedirectPolicy,
    /// Default `User-Agent` when the user sets none.
    pub user_agent: String,
    /// How the connection is closed once the response is read.
    pub close: ClosePolicy,
    /// TLS options for `https://` URLs (also those reached by a redirect).
    pub tls: TlsOptions,
    /// Statuses that are Success, replacing the kubelet's 2xx-success / 3xx-warning rule (any
    /// other final status is a Failure with reason `status`).
    pub expect_status: Option<StatusSet>,
    /// A regular expression the kept body must match, else Failure with reason `body`.
    pub expect_body: Option<Pattern>,
    /// Keep the connection alive between runs (beyond the kubelet, which closes it after every
    /// probe): runs to the same origin reuse an idle HTTP/1.1 connection the engine holds, and
    /// the request carries no `Connection: close`. Only an engine keeps connections; a one-shot
    /// check closes its connection as without it. Default false.
    pub keep_alive: bool,
    /// Connect through this Unix socket instead of to the URL's host and port (curl's
    /// `--unix-socket`); the URL still gives `Host`, SNI and the path.
    pub unix_socket: Option<UnixSocket>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
/// An exec probe: run a command and judge it by its exit status (the kubelet's `exec`).
pub struct ExecSpec {
    /// The command and its arguments; no shell is involved.
    pub argv: Vec<String>,
    /// Static environment, in order: the source of `$(VAR)` expansion in argv (values as
    /// written), and added to the child's environment with each value expanded against the
    /// variables before it, as the kubelet builds a container's environment.
    pub env: Vec<(String, String)>,
    /// Working directory of the command; the host's when `None`.
    pub cwd: Option<PathBuf>,
}

/// A gRPC health probe: `grpc.health.v1.Health/Check` with `service`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcSpec {
    /// Host name or IP literal (IPv6 without brackets).
    pub host: String,
    /// The port to connect to (1 to 65535).
    pub port: u16,
    /// The service asked about; empty asks about the server as a whole.
    pub service: String,
    /// `None`: plaintext HTTP/2 with prior knowledge (h2c), as the kubelet. `Some`: TLS with
    /// ALPN `h2` and these options.
    pub tls: Option<TlsOptions>,
    /// How the connection is closed once the RPC is done.
    pub close: ClosePolicy,
    /// Connect through this Unix socket instead of `host:port` (gRPC's `unix:` and
    /// `unix-abstract:` targets); `host` is then the `:authority` sent.
    pub unix_socket: Option<UnixSocket>,
    /// Request metadata, in order, keys in lower case (grpc-health-probe's `-rpc-header`; see
    /// [`crate::validate_metadata`]).
    pub metadata: Vec<(String, String)>,
    /// The `user-agent` sent instead of [`DEFAULT_USER_AGENT`] (grpc-health-probe's
    /// `-user-agent`).
    pub user_agent: Option<String>,
    /// The `:authority` sent instead of `host:port` (grpc-go's `WithAuthority`).
    pub authority: Option<String>,
}

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

/// Why a spec was refused.
///
/// New checks may bring new variants: the enum is `#[non_exhaustive]`, so a `match` on it
/// needs a wildcard arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// The URL is not an absolute `http://` or `https://` URL a probe can fetch.
    Url(UrlError),
    /// The host is not a host name or an IP address (the host as given).
    InvalidHost(String),
    /// The port is outside 1 to 65535 (the port as given).
    InvalidPort(i64),
    /// A header name is not an HTTP token, or headers were given to a probe that is not HTTP.
    InvalidHeaderName(String),
    /// A header value holds CR, LF, NUL or another control character (the header's name).
    InvalidHeaderValue(String),
    /// A user `Host` header value that is not `host[:port]` (the value as given).
    InvalidHostHeader(String),
    /// An exec probe without a command.
    EmptyArgv,
    /// The argument at this index holds a NUL byte.
    InvalidArgument(usize),
    /// An environment variable name is empty or holds `=` or NUL, or an environment was given
    /// to a probe that is not exec.
    InvalidEnvName(String),
    /// An environment variable's value holds a NUL byte (the variable's name).
    InvalidEnvValue(String),
    /// The timeout is outside 1 ms to 24 h.
    InvalidTimeout(Duration),
    /// The output limit is outside 1 byte to 64 MiB.
    InvalidOutputLimit,
    /// A scheduling parameter (period, thresholds, ...) is out of range.
    InvalidSchedule(String),
    /// A TLS option is invalid, or TLS options were given to a probe without TLS.
    InvalidTls(String),
    /// A request option (HTTP method or body, gRPC metadata or authority, Unix socket path)
    /// is invalid or does not apply to the probe's kind.
    InvalidRequest(String),
    /// An expectation (status set, regular expression, data to send) is invalid or does not
    /// apply to the probe's kind.
    InvalidExpectation(String),
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Url(e) => write!(f, "{e}"),
            SpecError::InvalidHost(h) => {
                write!(f, "invalid host {h:?} (expected a host name or an IP address)")
            }
            SpecError::InvalidPort(p) => write!(f, "invalid port {p} (expected 1 to 65535)"),
            SpecError::InvalidHeaderName(n) => write!(f, "invalid HTTP header name {n:?}"),
            SpecError::InvalidHeaderValue(n) => write!(
                f,
                "invalid value for HTTP header {n:?} (CR, LF, NUL and other control characters are not allowed)"
            ),
            SpecError::InvalidHostHeader(v) => write!(
                f,
                "invalid value {v:?} for HTTP header \"Host\" (expected a host name or IP address with an optional :port)"
            ),
            SpecError::EmptyArgv => f.write_str("exec probe needs a command (argv is empty)"),
            SpecError::InvalidArgument(i) => write!(f, "argv[{i}] contains a NUL byte"),
            SpecError::InvalidEnvName(n) => write!(f, "invalid environment variable name {n:?}"),
            SpecError::InvalidEnvValue(n) => {
                write!(f, "environment variable {n:?} has a value with a NUL byte")
            }
            SpecError::InvalidTimeout(d) => {
                write!(f, "invalid timeout {d:?} (expected 1 ms to 24 h)")
            }
            SpecError::InvalidOutputLimit => {
                f.write_str("invalid output limit (expected 1 byte to 64 MiB)")
            }
            SpecError::InvalidSchedule(m) => f.write_str(m),
            SpecError::InvalidTls(m) => write!(f, "invalid TLS option: {m}"),
            SpecError::InvalidExpectation(m) => f.write_str(m),
            SpecError::InvalidRequest(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SpecError {
    /// The [`UrlError`] of [`SpecError::Url`]; other variants wrap no error.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpecError::Url(e) => Some(e),
            _ => None,
        }
    }
}

impl From<UrlError> for SpecError {
    fn from(e: UrlError) -> SpecError {
        SpecError::Url(e)
    }
}

impl ProbeSpec {
    fn with_kind(kind: ProbeKind) -> ProbeSpec {
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
            user_agent: DEFAULT_USER_AGENT.to_string(),
            close: ClosePolicy::Reset,
            tls: TlsOptions::default(),
            expect_status: None,
            expect_body: None,
            keep_alive: false,
            unix_socket: None,
        })))
    }

    /// A gRPC health probe of `service` (empty: the whole server) at `host:port`, in plaintext
    /// h2c as the kubelet; [`ProbeSpec::set_tls`] switches it to TLS.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`] or [`SpecError::InvalidPort`].
    pub fn grpc(host: &str, port: i64, service: &str) -> Result<ProbeSpec, SpecError> {
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        validate_host(host)?;
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
        Ok(ProbeSpec::with_kind(ProbeKind::Exec(ExecSpec { argv, env: Vec::new(), cwd: None })))
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

    /// Sets how TCP connections are closed (TCP, HTTP and gRPC; ignored for exec).
    pub fn set_close_policy(&mut self, policy: ClosePolicy) {
        match &mut self.kind {
            ProbeKind::Tcp(t) => t.close = policy,
            ProbeKind::Http(h) => h.close = policy,
            ProbeKind::Grpc(g) => g.close = policy,
            ProbeKind::Exec(_) => {}
        }
    }

    /// Sets the TLS options: of `https://` URLs for HTTP probes; for gRPC probes this also
    /// switches from h2c to TLS; for TCP probes too (beyond the kubelet: TLS from the first
    /// byte, or after the exchange with [`ProbeSpec::set_starttls`]). Exec probes refuse them.
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
            _ => {
                return Err(SpecError::InvalidTls(
                    "TLS options apply to HTTP, gRPC and TCP probes only".into(),
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

    /// Turns keep-alive on or off (HTTP only; see [`HttpSpec::keep_alive`]).
    ///
    /// # Errors
    /// [`SpecError::InvalidExpectation`] for a probe that is not HTTP.
    pub fn set_keep_alive(&mut self, on: bool) -> Result<(), SpecError> {
        self.http_only("keep-alive applies to HTTP probes only")?.keep_alive = on;
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
            }
            ProbeKind::Grpc(g) => {
                validate_host(&g.host)?;
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
            }
        }
        Ok(())
    }
}

fn validate_timeout(timeout: Duration) -> Result<(), SpecError> {
    if timeout < Duration::from_millis(1) || timeout > MAX_TIMEOUT {
        return Err(SpecError::InvalidTimeout(timeout));
    }
    Ok(())
}

/// Checks a host to connect to: a registered name (labels of letters, digits, `-` and `_`,
/// dots between them, an optional final dot, at most 253 characters, the last label not all
/// digits), an IPv4 literal, or an IPv6 literal without brackets (with an optional `%zone`).
/// ASCII only; no port, path, query, user information or white space can pass, so a host can
/// never change which port or resource a probe reaches.
///
/// # Errors
///
/// [`SpecError::InvalidHost`] with the host as given.
pub fn validate_host(host: &str) -> Result<(), SpecError> {
    if is_host(host) { Ok(()) } else { Err(SpecError::InvalidHost(host.to_string())) }
}

fn is_host(host: &str) -> bool {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    if let Some((ip, zone)) = host.split_once('%') {
        return ip.parse::<std::net::Ipv6Addr>().is_ok()
            && !zone.is_empty()
            && zone.len() <= 64
            && zone.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    }
    is_registered_name(host)
}

/// LDH labels (plus `_`, as service names use it), as [`valid_server_name`] minus IP literals.
fn is_registered_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        // `127.1` or `2130706433` would be read as IPv4 by the resolver: not a name.
        && !name.rsplit('.').next().is_some_and(|tld| tld.chars().all(|c| c.is_ascii_digit()))
}

/// Checks the value of a user `Host` header: a host as [`validate_host`] allows, with an
/// optional `:port` (1 to 65535); IPv6 in brackets when a port follows (`[::1]:8080`). Spaces
/// and tabs around it are ignored, as the request does; an empty value asks for no virtual
/// host and is allowed.
fn validate_host_header(value: &str) -> Result<(), SpecError> {
    let v = value.trim_matches(|c| c == ' ' || c == '\t');
    if v.is_empty() || is_host_port(v) {
        Ok(())
    } else {
        Err(SpecError::InvalidHostHeader(value.to_string()))
    }
}

fn is_host_port(v: &str) -> bool {
    let port_ok = |p: &str| {
        !p.is_empty()
            && p.len() <= 5
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n))
    };
    if let Some(rest) = v.strip_prefix('[') {
        let Some((ip, after)) = rest.split_once(']') else { return false };
        let ip_ok = ip.parse::<std::net::Ipv6Addr>().is_ok();
        return ip_ok && (after.is_empty() || after.strip_prefix(':').is_some_and(port_ok));
    }
    if v.parse::<std::net::Ipv6Addr>().is_ok() {
        return true;
    }
    match v.rsplit_once(':') {
        Some((host, port)) => {
            !host.contains(':')
                && (host.parse::<std::net::Ipv4Addr>().is_ok() || is_registered_name(host))
                && port_ok(port)
        }
        None => v.parse::<std::net::Ipv4Addr>().is_ok() || is_registered_name(v),
    }
}

fn validate_port(port: i64) -> Result<u16, SpecError> {
    if (1..=65535).contains(&port) { Ok(port as u16) } else { Err(SpecError::InvalidPort(port)) }
}

/// Header names must be RFC 9110 tokens; values must not contain CR, LF, NUL or other controls
/// (tab is allowed), so no request can be injected through a header. A `Host` value must be a
/// host with an optional port (see `validate_host`): it names the virtual host, and anything
/// else (`a b`, `evil/x?y#z`, `user@evil`, non-ASCII) would go on the wire as written.
///
/// # Errors
///
/// [`SpecError::InvalidHeaderName`], [`SpecError::InvalidHeaderValue`], or
/// [`SpecError::InvalidHostHeader`] for a `Host` value that is not `host[:port]`.
pub fn validate_header(name: &str, value: &str) -> Result<(), SpecError> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(tchar) {
        return Err(SpecError::InvalidHeaderName(name.to_string()));
    }
    if value.chars().any(|c| (c.is_control() && c != '\t') || c == '\u{7f}') {
        return Err(SpecError::InvalidHeaderValue(name.to_string()));
    }
    if name.eq_ignore_ascii_case("host") {
        validate_host_header(value)?;
    }
    Ok(())
}

fn validate_argv(argv: &[String]) -> Result<(), SpecError> {
    if argv.is_empty() || argv[0].is_empty() {
        return Err(SpecError::EmptyArgv);
    }
    match argv.iter().position(|a| a.contains('\0')) {
        Some(i) => Err(SpecError::InvalidArgument(i)),
        None => Ok(()),
    }
}

fn validate_env(name: &str, value: &str) -> Result<(), SpecError> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(SpecError::InvalidEnvName(name.to_string()));
    }
    if value.contains('\0') {
        return Err(SpecError::InvalidEnvValue(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_specs() {
        let s = ProbeSpec::tcp("127.0.0.1", 80).unwrap();
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        assert!(matches!(&s.kind, ProbeKind::Tcp(t) if t.close == ClosePolicy::Reset));
        let s = ProbeSpec::tcp("[::1]", 8080).unwrap();
        assert!(matches!(&s.kind, ProbeKind::Tcp(t) if t.host == "::1"));
        assert_eq!(ProbeSpec::tcp("h", 0), Err(SpecError::InvalidPort(0)));
        assert_eq!(ProbeSpec::tcp("h", 65536), Err(SpecError::InvalidPort(65536)));
        assert_eq!(ProbeSpec::tcp("h", -1), Err(SpecError::InvalidPort(-1)));
        assert_eq!(ProbeSpec::tcp("", 1), Err(SpecError::InvalidHost(String::new())));
        assert!(ProbeSpec::tcp("a b", 1).is_err());
        assert!(ProbeSpec::tcp("a/b", 1).is_err());
        let msg = ProbeSpec::tcp("h", 70000).unwrap_err().to_string();
        assert_eq!(msg, "invalid port 70000 (expected 1 to 65535)");
    }

    #[test]
    fn http_headers_refuse_injection() {
        let mut s = ProbeSpec::http("http://127.0.0.1:1/").unwrap();
        s.add_header("X-Ok", "a b\tc").unwrap();
        assert_eq!(
            s.add_header("X-Bad", "a\r\nEvil: 1"),
            Err(SpecError::InvalidHeaderValue("X-Bad".into()))
        );
        assert!(s.add_header("X-Bad", "a\nb").is_err());
        assert!(s.add_header("X-Bad", "a\0b").is_err());
        assert!(s.add_header("Bad Name", "v").is_err());
        assert!(s.add_header("Bad\r\nName", "v").is_err());
        assert!(s.add_header("", "v").is_err());
        s.add_header("User-Agent", "").unwrap();
        assert!(s.validate().is_ok());
        assert!(ProbeSpec::http("tcp://x:1").is_err());
        let mut t = ProbeSpec::tcp("h", 1).unwrap();
        assert!(t.add_header("A", "b").is_err());
    }

    #[test]
    fn hosts_are_hosts() {
        for bad in [
            "127.0.0.1/x",
            "a?b",
            "a#b",
            "a b",
            "a\tb",
            "user@evil",
            "h:80",
            "[::1]:80",
            "a..b",
            "-a",
            "a-",
            ".",
            "127.1",
            "x.123",
            "caf\u{e9}",
            "a\u{202e}b",
            "a%b",
            "::1%",
            "a\0b",
            "h\r\nX: y",
        ] {
            assert_eq!(
                ProbeSpec::tcp(bad, 80),
                Err(SpecError::InvalidHost(bad.to_string())),
                "{bad:?}"
            );
            assert!(ProbeSpec::grpc(bad, 80, "").is_err(), "{bad:?}");
            assert!(validate_host(bad).is_err(), "{bad:?}");
        }
        for good in [
            "localhost",
            "svc.ns.svc.cluster.local.",
            "my_svc",
            "a-b.example",
            "127.0.0.1",
            "::1",
            "[::1]",
            "fe80::1%eth0",
            "2001:db8::2",
        ] {
            assert!(ProbeSpec::tcp(good, 80).is_ok(), "{good:?}");
            assert!(ProbeSpec::grpc(good, 80, "").is_ok(), "{good:?}");
        }
        assert_eq!(
            ProbeSpec::tcp("127.0.0.1/x", 1).unwrap_err().to_string(),
            "invalid host \"127.0.0.1/x\" (expected a host name or an IP address)"
        );
        // validate() re-checks a host changed field by field.
        let mut s = ProbeSpec::tcp("h", 1).unwrap();
        if let ProbeKind::Tcp(t) = &mut s.kind {
            t.host = "h/x".into();
        }
        assert_eq!(s.validate(), Err(SpecError::InvalidHost("h/x".into())));
    }

    #[test]
    fn host_header_is_host_and_port() {
        let mut s = ProbeSpec::http("http://127.0.0.1:1/").unwrap();
        for bad in [
            "a b",
            "a\tb",
            "evil/x?y#z",
            "user@evil",
            "caf\u{e9}.example",
            "h:0",
            "h:65536",
            "h:",
            "h:x",
            "[::1",
            "[::1]x",
            "[h]:1",
            "::1:80:",
            "a:b:c",
            "h:80/x",
            "\u{202e}h",
        ] {
            for name in ["Host", "host", "HOST"] {
                assert_eq!(
                    s.add_header(name, bad),
                    Err(SpecError::InvalidHostHeader(bad.into())),
                    "{name}: {bad:?}"
                );
            }
        }
        for good in [
            "example.com",
            "example.com:8080",
            "127.0.0.1",
            "127.0.0.1:80",
            "[::1]",
            "[::1]:8080",
            "::1",
            " vhost.local ",
            "",
            "my_svc:1",
        ] {
            s.add_header("Host", good).unwrap();
        }
        assert_eq!(
            s.add_header("Host", "a b").unwrap_err().to_string(),
            "invalid value \"a b\" for HTTP header \"Host\" (expected a host name or IP address with an optional :port)"
        );
        // Other headers keep their rules: spaces are fine there.
        s.add_header("X-Host", "a b").unwrap();
        assert!(s.validate().is_ok());
        if let ProbeKind::Http(h) = &mut s.kind {
            h.headers.push(("Host".into(), "evil/x".into()));
        }
        assert_eq!(s.validate(), Err(SpecError::InvalidHostHeader("evil/x".into())));
    }

    #[test]
    fn exec_specs() {
        assert_eq!(ProbeSpec::exec::<&str>(&[]), Err(SpecError::EmptyArgv));
        assert_eq!(ProbeSpec::exec(&[""]), Err(SpecError::EmptyArgv));
        assert_eq!(ProbeSpec::exec(&["a", "b\0"]), Err(SpecError::InvalidArgument(1)));
        let mut s = ProbeSpec::exec(&["/bin/true"]).unwrap();
        s.set_env("A", "1").unwrap();
        s.set_env("A", "2").unwrap();
        assert!(
            matches!(&s.kind, ProbeKind::Exec(e) if e.env == vec![("A".to_string(), "2".to_string())])
        );
        assert!(s.set_env("A=B", "1").is_err());
        assert!(s.set_env("", "1").is_err());
    }

    #[test]
    fn grpc_specs() {
        let s = ProbeSpec::grpc("127.0.0.1", 50051, "").unwrap();
        let ProbeKind::Grpc(g) = &s.kind else { panic!() };
        assert_eq!((g.host.as_str(), g.port, g.service.as_str()), ("127.0.0.1", 50051, ""));
        assert_eq!((g.tls.as_ref(), g.close), (None, ClosePolicy::Reset));
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        let s = ProbeSpec::grpc("[::1]", 1, "my.Service").unwrap();
        assert!(
            matches!(&s.kind, ProbeKind::Grpc(g) if g.host == "::1" && g.service == "my.Service")
        );
        assert_eq!(ProbeSpec::grpc("h", 0, ""), Err(SpecError::InvalidPort(0)));
        assert_eq!(ProbeSpec::grpc("", 1, ""), Err(SpecError::InvalidHost(String::new())));
        let mut s = ProbeSpec::grpc("h", 1, "").unwrap();
        s.set_close_policy(ClosePolicy::Fin);
        s.set_tls(TlsOptions::default()).unwrap();
        assert!(
            matches!(&s.kind, ProbeKind::Grpc(g) if g.close == ClosePolicy::Fin && g.tls == Some(TlsOptions::default()))
        );
        assert!(s.validate().is_ok());
        assert!(s.add_header("A", "b").is_err());
    }

    #[test]
    fn tls_options() {
        let mut s = ProbeSpec::http("https://127.0.0.1:8443/").unwrap();
        assert!(matches!(&s.kind, ProbeKind::Http(h) if h.tls == TlsOptions::default()));
        let tls = TlsOptions {
            verify: TlsVerify::CaFile("/etc/ca.pem".into()),
            server_name: Some("svc.example".into()),
            client_cert: Some(("c.pem".into(), "k.pem".into())),
            min_version: Some(TlsVersion::Tls13),
        };
        s.set_tls(tls.clone()).unwrap();
        assert!(matches!(&s.kind, ProbeKind::Http(h) if h.tls == tls));
        assert!(s.validate().is_ok());

        for name in ["a b", "", "-x.example", "x..y", "a/b", "1.2.3", "x.123"] {
            let bad = TlsOptions { server_name: Some(name.into()), ..TlsOptions::default() };
            assert!(matches!(s.set_tls(bad), Err(SpecError::InvalidTls(_))), "{name:?}");
        }
        for name in ["localhost", "svc.ns.svc.cluster.local.", "10.0.0.1", "::1", "a_b.example"] {
            let good = TlsOptions { server_name: Some(name.into()), ..TlsOptions::default() };
            assert!(s.set_tls(good).is_ok(), "{name:?}");
        }
        let bad = TlsOptions { verify: TlsVerify::CaFile("".into()), ..TlsOptions::default() };
        assert_eq!(
            s.set_tls(bad).unwrap_err().to_string(),
            "invalid TLS option: CA file: empty path"
        );
        let bad =
            TlsOptions { client_cert: Some(("c".into(), "".into())), ..TlsOptions::default() };
        assert!(s.set_tls(bad).is_err());
        // validate() re-checks options set field by field.
        if let ProbeKind::Http(h) = &mut s.kind {
            h.tls.server_name = Some("bad name".into());
        }
        assert!(matches!(s.validate(), Err(SpecError::InvalidTls(_))));

        let mut t = ProbeSpec::exec(&["true"]).unwrap();
        assert_eq!(
            t.set_tls(TlsOptions::default()).unwrap_err().to_string(),
            "invalid TLS option: TLS options apply to HTTP, gRPC and TCP probes only"
        );

        assert_eq!(TlsVersion::parse("1.2"), Some(TlsVersion::Tls12));
        assert_eq!(TlsVersion::parse("TLSv1.3"), Some(TlsVersion::Tls13));
        assert_eq!(TlsVersion::parse("tls1.3"), Some(TlsVersion::Tls13));
        assert_eq!(TlsVersion::parse("1.1"), None);
        assert_eq!(TlsVersion::Tls13.as_str(), "1.3");
    }

    #[test]
    fn expectations() {
        let mut s = ProbeSpec::http("http://127.0.0.1:1/").unwrap();
        s.set_expect_status(StatusSet::parse("200,418").unwrap()).unwrap();
        s.set_expect_body(Pattern::new("ok").unwrap()).unwrap();
        let ProbeKind::Http(h) = &s.kind else { panic!() };
        assert!(h.expect_status.as_ref().is_some_and(|e| e.contains(418)));
        assert_eq!(h.expect_body.as_ref().map(Pattern::as_str), Some("ok"));
        let mut t = ProbeSpec::tcp("h", 1).unwrap();
        assert_eq!(
            t.set_expect_status(StatusSet::parse("200").unwrap()).unwrap_err().to_string(),
            "expected statuses apply to HTTP probes only"
        );
        assert!(t.set_expect_body(Pattern::new("x").unwrap()).is_err());
        t.set_send(b"PING\r\n".to_vec()).unwrap();
        t.set_expect_reply(Pattern::new("^\\+PONG").unwrap()).unwrap();
        assert!(
            matches!(&t.kind, ProbeKind::Tcp(c) if c.send == b"PING\r\n" && c.expect.is_some())
        );
        assert!(t.set_send(vec![b'x'; MAX_SEND_LEN + 1]).is_err());
        assert!(t.validate().is_ok());
        assert_eq!(
            s.set_send(b"x".to_vec()).unwrap_err().to_string(),
            "data to send applies to TCP probes only"
        );
        assert!(s.set_expect_reply(Pattern::new("x").unwrap()).is_err());
    }

    #[test]
    fn timeouts_and_limits() {
        let mut s = ProbeSpec::tcp("h", 1).unwrap();
        assert!(s.set_timeout(Duration::ZERO).is_err());
        assert!(s.set_timeout(Duration::from_millis(1)).is_ok());
        assert!(s.set_timeout(Duration::from_secs(100_000)).is_err());
        assert!(s.set_output_limit(0).is_err());
        assert!(s.set_output_limit(100).is_ok());
        s.output_limit = 0;
        assert_eq!(s.validate(), Err(SpecError::InvalidOutputLimit));
    }
}
