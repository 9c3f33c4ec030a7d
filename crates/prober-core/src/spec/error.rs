//! Why a spec was refused.

use std::fmt;
use std::time::Duration;

use crate::url::UrlError;

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
