//! TLS options of HTTPS and gRPC probes: verification, versions, server name, files.

use std::path::PathBuf;

use super::error::SpecError;
use super::validate::is_registered_name;

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
    /// the probe connects to. An IP address here sends no SNI (and is verified as an IP). An
    /// HTTP redirect hop to another host than the URL's uses that host's own name instead;
    /// hops back to the URL's host keep this one.
    pub server_name: Option<String>,
    /// Client certificate chain and private key, both PEM files (mutual TLS).
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// The oldest protocol version accepted; TLS 1.2 when `None`.
    pub min_version: Option<TlsVersion>,
    /// The newest protocol version offered; TLS 1.3 when `None`. Not below `min_version`.
    pub max_version: Option<TlsVersion>,
    /// Resume TLS sessions (beyond the kubelet, which makes a full handshake every time; off
    /// by default): the runs of one periodic target keep the session tickets (TLS 1.3) and
    /// session IDs or tickets (TLS 1.2) their servers give, and the next run offers them, so a
    /// handshake the server accepts to resume skips the certificate exchange and its
    /// verification. Sessions are kept per target and per TLS configuration (these options,
    /// the versions of the files they name, the server name): another configuration never
    /// resumes them. The certificate facts of a resumed run are those of the full handshake
    /// that made the session, and a session is dropped once the chain verified then has
    /// expired. Which runs share sessions: see `docs/semantics.md`.
    pub resumption: bool,
}

impl TlsOptions {
    /// Checks the options without touching the file system (files are read at run time).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidTls`] for a server name that is neither a DNS name nor an IP
    /// address, a file path that is empty or holds a NUL byte, or a minimum version above the
    /// maximum.
    pub fn validate(&self) -> Result<(), SpecError> {
        if let (Some(min), Some(max)) = (self.min_version, self.max_version) {
            if min > max {
                return Err(SpecError::InvalidTls(format!(
                    "minimum TLS version {} is above the maximum {}",
                    min.as_str(),
                    max.as_str()
                )));
            }
        }
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

pub(crate) fn validate_path(what: &str, p: &std::path::Path) -> Result<(), SpecError> {
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
pub(crate) fn valid_server_name(name: &str) -> bool {
    name.parse::<std::net::IpAddr>().is_ok() || is_registered_name(name)
}
