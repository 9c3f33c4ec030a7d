//! The spec of each kind of probe (TCP, HTTP, exec, gRPC, DNS) and their policies.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::expect::{Pattern, StatusSet};
use crate::expect_cel::{BodyCel, CelMode};
use crate::secret::RedactedHeaders;
use crate::url::Url;

use super::connect_options::ConnectOptions;
use super::proxy::HttpProxy;
use super::tcp_steps::TcpStep;
use super::tls::{TlsOptions, TlsVerify};

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
    /// Follow to any host, scheme and port, up to the limit (Go's default client, and
    /// blackbox_exporter's unless `no_follow_redirects`; the kubelet's
    /// `followNonLocalRedirects`). With an [`AddressFilter`](crate::AddressFilter), every hop's
    /// address is checked before it is connected to.
    AnyHost = 3,
}

impl RedirectPolicy {
    /// The policy named `same-host`, `same-origin`, `none` or `any-host` (the names the
    /// command and manifests use); `None` for any other text.
    pub fn parse(s: &str) -> Option<RedirectPolicy> {
        match s {
            "same-host" => Some(RedirectPolicy::SameHost),
            "same-origin" => Some(RedirectPolicy::SameOrigin),
            "none" => Some(RedirectPolicy::None),
            "any-host" => Some(RedirectPolicy::AnyHost),
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
    /// Where and how it connects: close policy, TLS, Unix socket, address filter, network
    /// namespace, address family, source address (see [`ConnectOptions`]).
    pub connect: ConnectOptions,
    /// Bytes written once connected (HAProxy `tcp-check send`, Envoy `tcp_health_check`
    /// send); empty: nothing is sent, the kubelet's connect-only check.
    pub send: Vec<u8>,
    /// A regular expression the reply must match: bytes are read (up to 10240) until it
    /// matches (Success) or the peer closes or the deadline passes (Failure). `None`: nothing
    /// is read.
    pub expect: Option<Pattern>,
    /// STARTTLS (blackbox_exporter's `starttls` in `query_response`): the connection starts in
    /// plain text, the send/expect exchange runs (the server's go-ahead), then TLS with
    /// the TLS options of [`TcpSpec::connect`] shake hands on the same connection.
    pub starttls: bool,
    /// The steps of a multi-step exchange, in order (see [`TcpStep`]); empty: the single
    /// `send`/`expect`/`starttls` above, which a spec with steps leaves unset.
    pub steps: Vec<TcpStep>,
}

#[derive(Clone, PartialEq, Eq)]
/// An HTTP probe of a URL (the kubelet's `httpGet`; beyond it, any method and a body).
pub struct HttpSpec {
    /// The URL to request (`http://` or `https://`).
    pub url: Url,
    /// The request method: `GET` (the kubelet's) unless set with [`ProbeSpec::set_method`](crate::ProbeSpec::set_method).
    pub method: String,
    /// The request body, sent with its `Content-Length`; empty: no body.
    pub body: Vec<u8>,
    /// User headers in order. A user header replaces the default of the same name; an empty
    /// `User-Agent` or `Accept` removes that default; `Host` sets the virtual host.
    pub headers: Vec<(String, String)>,
    /// Which redirects are followed.
    pub redirects: RedirectPolicy,
    /// How many redirects a run follows at most; the next one ends it, a Failure with reason
    /// `too_many_redirects`. Default [`DEFAULT_MAX_REDIRECTS`](crate::DEFAULT_MAX_REDIRECTS),
    /// 9: the kubelet's checker (10 requests, as Go's client counts them); blackbox_exporter
    /// follows 10. At most [`MAX_MAX_REDIRECTS`](crate::MAX_MAX_REDIRECTS).
    pub max_redirects: u32,
    /// Keep the cookies a response sets (`Set-Cookie`) and send them on the later hops of the
    /// same run where their domain and path match, as Go's `net/http/cookiejar` in a client
    /// (blackbox_exporter makes one jar per probe). Nothing outlives the run. Default false:
    /// the kubelet's client has no jar.
    pub cookies: bool,
    /// Default `User-Agent` when the user sets none.
    pub user_agent: String,
    /// Where and how it connects (see [`ConnectOptions`]): TLS options of `https://` URLs
    /// ([`HttpSpec::tls`]), keep-alive, a Unix socket, the address filter (on every redirect
    /// hop), network namespace, address family and source address of every hop.
    pub connect: ConnectOptions,
    /// Statuses that are Success, replacing the kubelet's 2xx-success / 3xx-warning rule (any
    /// other final status is a Failure with reason `status`).
    pub expect_status: Option<StatusSet>,
    /// A regular expression the kept body must match, else Failure with reason `body`.
    pub expect_body: Option<Pattern>,
    /// CEL expressions over the kept body parsed as JSON (blackbox_exporter's
    /// `fail_if_body_json_matches_cel` and `fail_if_body_json_not_matches_cel`), at most one
    /// per [`CelMode`]: one whose mode says the body fails (or that cannot be evaluated: a body
    /// that is not JSON, a result that is not a boolean) makes the run a Failure with reason
    /// `body`, judged after `expect_body`. See [`BodyCel`] for its bounds.
    pub expect_body_cel: Vec<(CelMode, BodyCel)>,
    /// Keep the final response's header fields in [`Outcome::headers`](crate::Outcome::headers)
    /// (for checks on them by the caller); default false, which costs nothing.
    pub keep_headers: bool,
    /// Which HTTP version is spoken: by default what the kubelet's client does (HTTP/1.1 on
    /// `http://`, HTTP/2 or HTTP/1.1 by ALPN on `https://`).
    pub version: HttpVersion,
    /// A redirect whose `Location` names a host (an absolute URL or `//host`), and every hop
    /// after it, connects over every address of its host, as Go's client dials a redirect by
    /// name: the address family of [`HttpSpec::connect`] then holds for the target and the relative redirects
    /// before such a hop only, as in blackbox_exporter's HTTP prober (see
    /// [`ProbeSpec::set_redirects_dial_by_name`](crate::ProbeSpec::set_redirects_dial_by_name)).
    /// Default false: every hop keeps the family, as curl's `-4` / `-6` does.
    pub redirects_dial_by_name: bool,
    /// Decode the final response's body with this content coding before it is kept, counted
    /// and matched (blackbox_exporter's `compression`); `None` (the default, the kubelet's):
    /// the body as it arrives. See [`Compression`].
    pub compression: Option<Compression>,
    /// Send the requests through an HTTP proxy (beyond the kubelet, blackbox_exporter's
    /// `proxy_url`; see [`HttpProxy`]); `None`: straight to the target.
    pub proxy: Option<Arc<HttpProxy>>,
    /// Fetch an OAuth 2 token (client credentials) before the request and send it as
    /// `Authorization` (see [`ProbeSpec::set_oauth2`](crate::ProbeSpec::set_oauth2));
    /// `None`: no token.
    pub oauth2: Option<Arc<super::OAuth2>>,
}

/// The content coding an HTTP probe decodes the body with ([`HttpSpec::compression`]), as
/// blackbox_exporter's `compression` does: the body is decoded with it whatever the
/// response's `Content-Encoding` says, and a body that does not decode fails the run. No
/// `Accept-Encoding` is added to the request (blackbox_exporter adds none either): set one
/// among the headers to ask the server for the coding. The output limit bounds the decoded
/// bytes.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// The body as it arrives (blackbox_exporter's `identity`).
    Identity = 0,
    /// gzip (RFC 1952), members read one after another as Go's `gzip.Reader` reads them.
    Gzip = 1,
    /// Raw DEFLATE (RFC 1951), as Go's `compress/flate` reads it (blackbox_exporter's
    /// `deflate`), not the zlib wrapping.
    Deflate = 2,
    /// Brotli (RFC 7932).
    Br = 3,
}

impl Compression {
    /// The name used in module and watch files and on the command line: `identity`, `gzip`,
    /// `deflate`, `br`.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Identity => "identity",
            Compression::Gzip => "gzip",
            Compression::Deflate => "deflate",
            Compression::Br => "br",
        }
    }

    /// The coding named `name` (case-blind, as blackbox_exporter reads it).
    pub fn from_name(name: &str) -> Option<Compression> {
        [Compression::Identity, Compression::Gzip, Compression::Deflate, Compression::Br]
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }
}

impl std::str::FromStr for Compression {
    type Err = String;

    /// [`Compression::from_name`], or the name and what is expected, for messages:
    /// `'zstd' (expected gzip, deflate, br or identity)`.
    fn from_str(name: &str) -> Result<Compression, String> {
        Compression::from_name(name)
            .ok_or_else(|| format!("'{name}' (expected gzip, deflate, br or identity)"))
    }
}

/// The HTTP version an HTTP probe speaks.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HttpVersion {
    /// The kubelet's `Probe`: HTTP/1.1 on `http://`; on `https://` TLS offers ALPN `h2` and
    /// `http/1.1` and the probe speaks whichever the server picks (Go's transport as the
    /// kubelet configures it, `http2.ConfigureTransports`, whatever the TLS options).
    #[default]
    Auto = 0,
    /// HTTP/1.1 only: ALPN offers `http/1.1` alone (the kubelet run with `DISABLE_HTTP2`).
    Http1 = 1,
    /// HTTP/2 over cleartext with prior knowledge (h2c) on `http://` (the kubelet's
    /// `ProbeH2C`, `httpGet.protocol: HTTP2`, KEP-5999). A redirect to `https://` speaks
    /// HTTP/1.1 there (the kubelet's h2c transport offers no ALPN).
    H2c = 2,
}

impl HttpVersion {
    /// The name used in watch files, the command line and messages: `auto`, `http1`, `h2c`.
    pub fn name(self) -> &'static str {
        match self {
            HttpVersion::Auto => "auto",
            HttpVersion::Http1 => "http1",
            HttpVersion::H2c => "h2c",
        }
    }
}

#[derive(Clone, PartialEq, Eq)]
/// An exec probe: run a command and judge it by its exit status (the kubelet's `exec`).
/// `Debug` hides the values of environment variables whose names look like credentials
/// ([`crate::is_secret_header`]'s rule: `DB_PASSWORD`, `API_TOKEN`, ...).
pub struct ExecSpec {
    /// The command and its arguments; no shell is involved.
    pub argv: Vec<String>,
    /// Static environment, in order: the source of `$(VAR)` expansion in argv (values as
    /// written), and added to the child's environment with each value expanded against the
    /// variables before it, as the kubelet builds a container's environment.
    pub env: Vec<(String, String)>,
    /// Working directory of the command; the host's when `None`.
    pub cwd: Option<PathBuf>,
    /// Run the command inside the namespaces of this process (mount, UTS, IPC, network, PID,
    /// cgroup, time, and its user namespace where it differs from ours), in its root and
    /// working directory, as `nsenter --target PID --all` does; see
    /// [`ProbeSpec::set_namespaces_of`](crate::ProbeSpec::set_namespaces_of). `cwd`, when set,
    /// is then a directory inside that process's root.
    pub namespaces_of: Option<u32>,
    /// Contain each run in a cgroup of its own, created in this cgroup v2 directory (one
    /// delegated to this process) and removed after the run: at the end of the run everything
    /// the command started is killed, including processes that left its process group
    /// (`setsid`, daemons). `None`: the process group is all that is killed; see
    /// [`ProbeSpec::set_exec_cgroup`](crate::ProbeSpec::set_exec_cgroup).
    pub cgroup: Option<PathBuf>,
}

impl fmt::Debug for ExecSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured whole, so that a new field cannot be left out (nor printed unchecked).
        let ExecSpec { argv, env, cwd, namespaces_of, cgroup } = self;
        f.debug_struct("ExecSpec")
            .field("argv", argv)
            .field("env", &RedactedHeaders(env))
            .field("cwd", cwd)
            .field("namespaces_of", namespaces_of)
            .field("cgroup", cgroup)
            .finish()
    }
}

/// A gRPC health probe: `grpc.health.v1.Health/Check` with `service`.
#[derive(Clone, PartialEq, Eq)]
pub struct GrpcSpec {
    /// Host name or IP literal (IPv6 without brackets). Empty: the local machine, as the
    /// kubelet's code dials `":PORT"` (its pod IP left empty): Go's dialer connects to the
    /// unspecified address, `[::]` where IPv6 is available (the kernel's loopback, `::1`,
    /// which also reaches dual-stack listeners) and `0.0.0.0` otherwise; messages name
    /// `":PORT"` and `:authority` is `localhost:PORT`, as grpc-go's.
    pub host: String,
    /// The port to connect to (1 to 65535).
    pub port: u16,
    /// The service asked about; empty asks about the server as a whole.
    pub service: String,
    /// Where and how it connects (see [`ConnectOptions`]): TLS (`None`: plaintext h2c, as the
    /// kubelet; `Some`: TLS with ALPN `h2`), a Unix socket (`host` is then the `:authority`
    /// sent), keep-alive of the HTTP/2 connection, and the rest.
    pub connect: ConnectOptions,
    /// Request metadata, in order, keys in lower case (grpc-health-probe's `-rpc-header`; see
    /// [`crate::validate_metadata`]).
    pub metadata: Vec<(String, String)>,
    /// The `user-agent` sent instead of [`DEFAULT_USER_AGENT`](crate::DEFAULT_USER_AGENT) (grpc-health-probe's
    /// `-user-agent`).
    pub user_agent: Option<String>,
    /// The `:authority` sent instead of `host:port` (grpc-go's `WithAuthority`).
    pub authority: Option<String>,
}

/// The options of a TLS client when none were given: the kubelet's (see [`TlsOptions`]).
static DEFAULT_TLS: TlsOptions = TlsOptions {
    verify: TlsVerify::None,
    server_name: None,
    client_cert: None,
    min_version: None,
    max_version: None,
    resumption: false,
};

impl HttpSpec {
    /// The TLS options of `https://` URLs: those of [`HttpSpec::connect`], or the default ones
    /// when it has none (the constructor sets the default ones; `None` written there means
    /// them too).
    pub fn tls(&self) -> &TlsOptions {
        self.connect.tls.as_ref().unwrap_or(&DEFAULT_TLS)
    }
}

/// As derived, but the values of credential headers ([`crate::is_secret_header`]) are
/// printed `<secret>`: a spec is shown on debug pages and in logs.
impl fmt::Debug for HttpSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured whole, so that a new field cannot be left out (nor printed unchecked).
        let HttpSpec {
            url,
            method,
            body,
            headers,
            redirects,
            user_agent,
            connect,
            expect_status,
            expect_body,
            expect_body_cel,
            keep_headers,
            version,
            redirects_dial_by_name,
            max_redirects,
            cookies,
            compression,
            proxy,
            oauth2,
        } = self;
        f.debug_struct("HttpSpec")
            .field("url", url)
            .field("method", method)
            .field("body", body)
            .field("headers", &RedactedHeaders(headers))
            .field("redirects", redirects)
            .field("user_agent", user_agent)
            .field("connect", connect)
            .field("expect_status", expect_status)
            .field("expect_body", expect_body)
            .field("expect_body_cel", expect_body_cel)
            .field("keep_headers", keep_headers)
            .field("version", version)
            .field("redirects_dial_by_name", redirects_dial_by_name)
            .field("max_redirects", max_redirects)
            .field("cookies", cookies)
            .field("compression", compression)
            .field("proxy", proxy)
            .field("oauth2", oauth2)
            .finish()
    }
}

/// As derived, but the values of credential metadata ([`crate::is_secret_header`]) are
/// printed `<secret>`.
impl fmt::Debug for GrpcSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let GrpcSpec { host, port, service, connect, metadata, user_agent, authority } = self;
        f.debug_struct("GrpcSpec")
            .field("host", host)
            .field("port", port)
            .field("service", service)
            .field("connect", connect)
            .field("metadata", &RedactedHeaders(metadata))
            .field("user_agent", user_agent)
            .field("authority", authority)
            .finish()
    }
}

/// How the query is carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DnsTransport {
    /// One datagram each way (blackbox_exporter's default).
    #[default]
    Udp,
    /// A TCP connection with two-byte length prefixes (RFC 1035 4.2.2, RFC 7766).
    Tcp,
    /// DNS over TLS (RFC 7858): the TCP exchange inside TLS, blackbox_exporter's
    /// `dns_over_tls`. The port is the one given (853 is DoT's, but nothing is assumed, as
    /// blackbox uses the target's); the TLS options are those of [`DnsSpec::connect`].
    Tls,
}

/// One section's checks, blackbox_exporter's `DNSRRValidator`: regular expressions matched
/// anywhere in each record's text as miekg/dns prints it (`RR.String()`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DnsRrChecks {
    /// Fail if any record matches any of these.
    pub fail_if_matches: Vec<Pattern>,
    /// Fail unless every record matches each of these.
    pub fail_if_all_match: Vec<Pattern>,
    /// Fail if any record does not match one of these (and if there is no record).
    pub fail_if_not_matches: Vec<Pattern>,
    /// Fail unless some record matches one of these (and if there is no record).
    pub fail_if_none_matches: Vec<Pattern>,
}

impl DnsRrChecks {
    /// True when no check is set.
    pub fn is_empty(&self) -> bool {
        self.fail_if_matches.is_empty()
            && self.fail_if_all_match.is_empty()
            && self.fail_if_not_matches.is_empty()
            && self.fail_if_none_matches.is_empty()
    }
}

/// A DNS probe: one query of `query_name` to the server `host:port`, the response checked as
/// blackbox_exporter's dns prober checks it.
///
/// Built by [`ProbeSpec::dns`](super::ProbeSpec::dns) (spec/dns.rs, with its checks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DnsSpec {
    /// The server: a host name or an address.
    pub host: String,
    /// The server's port (53).
    pub port: u16,
    /// Which of the server's addresses to query (address family), which servers may be
    /// queried (address filter), the network namespace of the query's socket, and the TLS
    /// options of [`DnsTransport::Tls`] (set with
    /// [`ProbeSpec::set_tls`](super::ProbeSpec::set_tls), which also selects that transport;
    /// `None` with that transport: the chain verified against the system's trust store and the
    /// name against the server's host as given, blackbox's default `tls_config`). The other
    /// [`ConnectOptions`] are not a DNS probe's.
    pub connect: ConnectOptions,
    /// UDP, TCP or TLS.
    pub transport: DnsTransport,
    /// The question's name, as text (`\` escapes allowed; always fully qualified).
    pub query_name: String,
    /// The question's type (default 1, A).
    pub query_type: u16,
    /// The question's class (default 1, IN).
    pub query_class: u16,
    /// The RD bit (default set).
    pub recursion_desired: bool,
    /// EDNS0: an OPT record advertising this UDP payload size (default none).
    pub edns_udp_size: Option<u16>,
    /// Ask again over TCP when the UDP answer is truncated (default: check it as it is).
    pub tcp_on_truncation: bool,
    /// The response codes that pass; empty means NOERROR only.
    pub valid_rcodes: Vec<u16>,
    /// `validate_answer_rrs`.
    pub validate_answer: DnsRrChecks,
    /// `validate_authority_rrs`.
    pub validate_authority: DnsRrChecks,
    /// `validate_additional_rrs`.
    pub validate_additional: DnsRrChecks,
}
