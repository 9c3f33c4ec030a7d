//! The Kubernetes probe fields (`core/v1` `Probe`, `EnvVar`, `ContainerPort` and the
//! actions), as serde reads them from a watch file or a Pod manifest, with the extensions
//! beyond the kubelet named beside the field they extend (see `docs/semantics.md`).

use std::fmt;

use prober::Role;
use serde::de::{self, IgnoredAny, Visitor};
use serde::{Deserialize, Deserializer};

use crate::ints::{int, opt_int};

/// The three probe fields of a container or target.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Probes<'a> {
    pub startup: Option<&'a Probe>,
    pub readiness: Option<&'a Probe>,
    pub liveness: Option<&'a Probe>,
}

impl Probes<'_> {
    pub(crate) fn by_role(&self) -> [(Role, &'static str, Option<&Probe>); 3] {
        [
            (Role::Startup, "startupProbe", self.startup),
            (Role::Readiness, "readinessProbe", self.readiness),
            (Role::Liveness, "livenessProbe", self.liveness),
        ]
    }

    pub fn is_empty(&self) -> bool {
        self.by_role().iter().all(|(_, _, p)| p.is_none())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct EnvVar {
    pub name: String,
    pub value: Option<String>,
    /// Not static: such a variable is not used for `$(VAR)` expansion.
    pub value_from: Option<IgnoredAny>,
}

/// A container port; fields other than these two are ignored (`protocol`, `hostPort`, ...).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContainerPort {
    pub name: Option<String>,
    #[serde(deserialize_with = "int")]
    pub container_port: i64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Probe {
    pub exec: Option<ExecAction>,
    pub http_get: Option<HttpGetAction>,
    pub tcp_socket: Option<TcpSocketAction>,
    pub grpc: Option<GrpcAction>,
    /// libprober extension: a DNS query (blackbox_exporter's dns prober).
    pub dns: Option<crate::dns_icmp::DnsAction>,
    /// libprober extension: ICMP echo requests (blackbox_exporter's icmp prober, and ping's
    /// count).
    pub icmp: Option<crate::dns_icmp::IcmpAction>,
    #[serde(default, deserialize_with = "opt_int")]
    pub initial_delay_seconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub period_seconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub timeout_seconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub success_threshold: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub failure_threshold: Option<i64>,
    /// Accepted for pasted manifests; it concerns the container's kill, which has no meaning here.
    #[serde(rename = "terminationGracePeriodSeconds")]
    pub _termination_grace_period_seconds: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "opt_int")]
    pub initial_delay_milliseconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub period_milliseconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub timeout_milliseconds: Option<i64>,
    /// libprober extension: TLS options of `httpGet` with scheme HTTPS and `grpc` with mode TLS.
    pub tls: Option<TlsConfig>,
    /// libprober extensions beyond the kubelet: the period while Failure is published
    /// (HAProxy `downinter`), while results move towards a threshold (HAProxy `fastinter`),
    /// and ± jitter on every period (Envoy `interval_jitter_percent`).
    #[serde(default, deserialize_with = "opt_int")]
    pub unhealthy_period_seconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub unhealthy_period_milliseconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub transition_period_seconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub transition_period_milliseconds: Option<i64>,
    #[serde(default, deserialize_with = "opt_int")]
    pub jitter_percent: Option<i64>,
}

/// The `tls:` block of a probe (a libprober extension). Without it, TLS is the kubelet's: no
/// certificate verification.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TlsConfig {
    /// `true`: verify the certificate against the system's roots.
    pub verify: Option<bool>,
    /// Verify against the CA certificates in this PEM file (relative to the file's directory).
    pub ca_file: Option<String>,
    pub server_name: Option<String>,
    /// Client certificate chain and key (PEM files), both or neither.
    pub cert_file: Option<String>,
    pub key_file: Option<String>,
    /// `1.2` or `1.3` (a string or a YAML number).
    #[serde(default, deserialize_with = "opt_version")]
    pub min_version: Option<String>,
    /// `1.2` or `1.3`: the newest version offered (not below `minVersion`).
    #[serde(default, deserialize_with = "opt_version")]
    pub max_version: Option<String>,
    /// `true`: resume TLS sessions between the probe's runs (default `false`, the kubelet's
    /// full handshake every time).
    pub resumption: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExecAction {
    #[serde(default)]
    pub command: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct HttpGetAction {
    pub host: Option<String>,
    pub port: PortRef,
    pub path: Option<String>,
    pub scheme: Option<String>,
    #[serde(default)]
    pub http_headers: Vec<HttpHeader>,
    /// libprober extension: statuses that are Success, such as `"200-299,418"`.
    pub expect_status: Option<String>,
    /// libprober extension: a regular expression the body must match.
    pub expect_body: Option<String>,
    /// libprober extension: keep the connection alive between runs.
    #[serde(default)]
    pub keep_alive: bool,
    /// libprober extension: the request method (`GET` when absent).
    pub method: Option<String>,
    /// libprober extension: the request body, as text (sent as its UTF-8 bytes).
    pub body: Option<String>,
    /// libprober extension: connect through this Unix socket (curl's `--unix-socket`; a path,
    /// or `unix-abstract:NAME`).
    pub unix_socket: Option<String>,
    /// Kubernetes 1.37 (KEP-5999, feature gate `H2CContainerProbe`): `HTTP1` (the default) or
    /// `HTTP2` (h2c with prior knowledge, `scheme: HTTP` only).
    pub protocol: Option<String>,
    /// libprober extension: speak HTTP/1.1 only (ALPN offers `http/1.1` alone on HTTPS).
    #[serde(default, rename = "http1Only")]
    pub http1_only: bool,
    /// libprober extension: redirects followed at most (9, the kubelet's, when absent).
    pub max_redirects: Option<u32>,
    /// libprober extension: keep the cookies responses set for the later hops of each run.
    #[serde(default)]
    pub cookies: bool,
    /// libprober extension: decode the body with this content coding (`gzip`, `deflate`,
    /// `br`, `identity`), as blackbox_exporter's `compression`.
    pub compression: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpHeader {
    pub name: String,
    pub value: String,
}

#[derive(Debug)]
pub(crate) struct TcpSocketAction {
    pub host: Option<String>,
    /// `None` only with `unix_socket`.
    pub port: Option<PortRef>,
    /// libprober extension: bytes to write once connected (`\r \n \t \\ \xHH` escapes).
    pub send: Option<String>,
    /// libprober extension: a regular expression the reply must match.
    pub expect: Option<String>,
    /// libprober extension: connect to this Unix socket instead (a path, `unix:///PATH` or
    /// `unix-abstract:NAME`); then no port is needed.
    pub unix_socket: Option<String>,
    /// libprober extension: TLS from the first byte (the probe's `tls:` block sets options).
    pub tls: bool,
    /// libprober extension: TLS after the send/expect exchange (STARTTLS).
    pub starttls: bool,
    /// libprober extension: a multi-step exchange in order (instead of send/expect/starttls).
    pub steps: Vec<TcpStepField>,
}

/// One of `tcpSocket.steps` (see `prober::TcpStep`): read lines until `expect` matches, then
/// write `send` (escapes as `tcpSocket.send`) or `sendTemplate` (the same, with `${1}` filled
/// from the match), then STARTTLS.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TcpStepField {
    pub expect: Option<String>,
    pub send: Option<String>,
    pub send_template: Option<String>,
    #[serde(default)]
    pub starttls: bool,
}

/// `tcpSocket` as written: `port` is required unless `unixSocket` is given, and its absence
/// is refused with serde's own words, from inside the mapping (so the error has the same path,
/// line and column as serde's derived check gave).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TcpSocketFields {
    host: Option<String>,
    port: Option<PortRef>,
    send: Option<String>,
    expect: Option<String>,
    unix_socket: Option<String>,
    #[serde(default)]
    tls: bool,
    #[serde(default)]
    starttls: bool,
    #[serde(default)]
    steps: Vec<TcpStepField>,
}

impl<'de> Deserialize<'de> for TcpSocketAction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TcpSocketAction, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TcpSocketAction;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("struct TcpSocketAction")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<TcpSocketAction, A::Error> {
                let f = TcpSocketFields::deserialize(de::value::MapAccessDeserializer::new(map))?;
                if f.port.is_none() && f.unix_socket.is_none() {
                    return Err(de::Error::missing_field("port"));
                }
                Ok(TcpSocketAction {
                    host: f.host,
                    port: f.port,
                    send: f.send,
                    expect: f.expect,
                    unix_socket: f.unix_socket,
                    tls: f.tls,
                    starttls: f.starttls,
                    steps: f.steps,
                })
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrpcAction {
    /// A number: Kubernetes does not allow named ports here (a name is refused with a message).
    /// Required, except with `unixSocket` (then ignored).
    pub port: Option<PortRef>,
    pub service: Option<String>,
    /// libprober extension: the host to probe (the kubelet always probes the pod IP).
    pub host: Option<String>,
    /// `Plaintext` (default, h2c) or `TLS` (KEP-4939, no certificate verification).
    pub mode: Option<String>,
    /// libprober extension: connect through this Unix socket (`unix:///PATH`, `unix:PATH`,
    /// `unix-abstract:NAME` or a path, as grpc-health-probe's `-addr`); the port is ignored
    /// and `host` (default `localhost`) is the `:authority`.
    #[serde(rename = "unixSocket")]
    pub unix_socket: Option<String>,
    /// libprober extension: request metadata (grpc-health-probe's `-rpc-header`), as
    /// `httpHeaders` are written.
    #[serde(default)]
    pub metadata: Vec<HttpHeader>,
    /// libprober extension: the user-agent (grpc-health-probe's `-user-agent`).
    #[serde(rename = "userAgent")]
    pub user_agent: Option<String>,
    /// libprober extension: the `:authority` (grpc-go's `WithAuthority`).
    pub authority: Option<String>,
    /// libprober extension: keep the HTTP/2 connection between runs (`httpGet.keepAlive`'s
    /// semantics), one stream per check.
    #[serde(default, rename = "keepAlive")]
    pub keep_alive: bool,
}

/// Kubernetes' IntOrString port: a number, or the name of a container port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PortRef {
    Number(i64),
    Name(String),
}

impl<'de> Deserialize<'de> for PortRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PortRef, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = PortRef;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a port number or a port name")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<PortRef, E> {
                Ok(PortRef::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<PortRef, E> {
                i64::try_from(v).map(PortRef::Number).map_err(|_| port_out_of_range(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<PortRef, E> {
                Err(port_out_of_range(v))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<PortRef, E> {
                Err(port_out_of_range(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PortRef, E> {
                if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                    Ok(PortRef::Number(v.parse().unwrap_or(i64::MAX)))
                } else {
                    Ok(PortRef::Name(v.to_string()))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A port number that no integer type of the parser holds.
fn port_out_of_range<E: de::Error>(v: impl fmt::Display) -> E {
    E::custom(format_args!("invalid port {v} (expected 1 to 65535)"))
}

/// An optional TLS version: `"1.3"`, or `1.3` as YAML reads it (a float), kept as text.
fn opt_version<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a TLS version (1.2 or 1.3)")
        }
        fn visit_none<E: de::Error>(self) -> Result<Option<String>, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
            d.deserialize_any(V)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<String>, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<String>, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<String>, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<String>, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_u128<E: de::Error>(self, v: u128) -> Result<Option<String>, E> {
            Ok(Some(v.to_string()))
        }
        fn visit_i128<E: de::Error>(self, v: i128) -> Result<Option<String>, E> {
            Ok(Some(v.to_string()))
        }
    }
    d.deserialize_option(V)
}
