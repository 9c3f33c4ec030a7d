//! Facts a run learns beyond its verdict, for hosts that export them (blackbox_exporter's
//! metrics in `prober serve`): the TLS session and certificates, the HTTP version of the final
//! response, per-phase durations summed over redirect hops, and gRPC's status codes.

use std::fmt;
use std::time::Duration;

use crate::TlsVersion;

/// What the run's last TLS handshake showed ([`crate::Outcome::tls`]).
///
/// Certificates are those the server sent (its leaf first, then the intermediates it chose to
/// send), read before any verdict, so a failed verification still shows them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsInfo {
    /// The negotiated protocol version; `None` when the handshake did not complete.
    pub version: Option<TlsVersion>,
    /// The negotiated cipher suite as rustls names it (`TLS13_AES_256_GCM_SHA384`,
    /// `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`); `None` when the handshake did not complete.
    pub cipher_suite: Option<&'static str>,
    /// The earliest `notAfter` over every certificate the server sent (seconds since the
    /// epoch), as Go's `PeerCertificates` give it to blackbox_exporter's
    /// `probe_ssl_earliest_cert_expiry`.
    pub earliest_not_after: Option<i64>,
    /// When the certificate was verified (never with
    /// [`TlsVerify::None`](crate::TlsVerify::None)), the expiry of its chains as Go's verified
    /// chains give blackbox_exporter's `probe_ssl_last_chain_expiry_timestamp_seconds`: over
    /// every chain that verifies from the leaf through the certificates the server sent to a
    /// trust anchor, the earliest `notAfter` in each (the anchor's own certificate included),
    /// and the latest of those. An older copy of a root the server still sends does not count
    /// when a newer root of the trust store verifies the leaf too. A leaf that is itself a
    /// certificate of the CA file (pinned) is its own chain.
    pub verified_chain_not_after: Option<i64>,
    /// The leaf certificate, when one was received and could be read.
    pub leaf: Option<CertInfo>,
    /// The handshake resumed a session ([`TlsOptions::resumption`](crate::TlsOptions::resumption)):
    /// no certificate was sent, and the certificate facts above are those of the full
    /// handshake that made the session.
    pub resumed: bool,
}

/// A certificate as blackbox_exporter labels `probe_ssl_last_chain_info` with it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertInfo {
    /// SHA-256 of the DER certificate, lower-case hex.
    pub fingerprint_sha256: String,
    /// The subject as Go's `pkix.Name.String` writes it (`CN=web,O=Example,C=DE`).
    pub subject: String,
    /// The issuer, written as the subject.
    pub issuer: String,
    /// The DNS names of the subject alternative name extension, in order.
    pub dns_names: Vec<String>,
    /// The serial number's magnitude as lower-case hex without leading zero bytes (Go's
    /// `fmt.Sprintf("%x", serial.Bytes())`).
    pub serial: String,
}

/// The HTTP version of a response ([`crate::Outcome::http_version`]).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HttpResponseVersion {
    /// `HTTP/1.0`.
    Http10 = 10,
    /// `HTTP/1.1`.
    Http11 = 11,
    /// HTTP/2 (by ALPN over TLS, or h2c).
    Http2 = 20,
}

impl HttpResponseVersion {
    /// The version of an HTTP/1 status line with this minor version (`HTTP/1.0`, `HTTP/1.1`).
    pub fn http1(minor: u8) -> HttpResponseVersion {
        if minor == 0 { HttpResponseVersion::Http10 } else { HttpResponseVersion::Http11 }
    }

    /// As Go's `Response.Proto`: `HTTP/1.0`, `HTTP/1.1` or `HTTP/2.0`.
    pub fn as_str(self) -> &'static str {
        match self {
            HttpResponseVersion::Http10 => "HTTP/1.0",
            HttpResponseVersion::Http11 => "HTTP/1.1",
            HttpResponseVersion::Http2 => "HTTP/2.0",
        }
    }

    /// The version as a number: 1.0, 1.1 or 2 (blackbox_exporter's `probe_http_version`).
    pub fn as_f64(self) -> f64 {
        match self {
            HttpResponseVersion::Http10 => 1.0,
            HttpResponseVersion::Http11 => 1.1,
            HttpResponseVersion::Http2 => 2.0,
        }
    }
}

impl fmt::Display for HttpResponseVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// How long each phase of an HTTP run took, summed over all its hops (redirects), as
/// blackbox_exporter's `probe_http_duration_seconds` reports them. Unlike [`crate::Timings`]
/// (stamps from the start of the run, of the last hop), these are durations.
///
/// Per hop: `resolve` is the name lookup; `connect` from the lookup's end to the TCP
/// connection; `tls` the handshake; `processing` from the usable connection (after TLS, or the
/// hop's start on a kept-alive connection) to the first response byte; `transfer` from the
/// first byte to the end of the body, for the final response only (a redirect's body is not
/// read), and only when its body was read to the end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpPhases {
    /// Name lookups.
    pub resolve: Duration,
    /// TCP connects.
    pub connect: Duration,
    /// TLS handshakes.
    pub tls: Duration,
    /// Request sent to the first response byte (server time), per hop.
    pub processing: Duration,
    /// The final response's body.
    pub transfer: Duration,
}

/// What a gRPC health check answered ([`crate::Outcome::grpc`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GrpcFacts {
    /// The RPC's gRPC status code (0 OK, 12 Unimplemented, 14 Unavailable, ...), when the RPC
    /// got as far as an answer or a stream error: grpc-go's code for it.
    pub status_code: Option<u32>,
    /// The health response's serving status (0 UNKNOWN, 1 SERVING, 2 NOT_SERVING, 3
    /// SERVICE_UNKNOWN), when a response message was decoded.
    pub serving_status: Option<i32>,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`): the
/// one conversion of the dates that certificates (`notAfter`) and HTTP (`Last-Modified`) write.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
