//! Options more than one prober's module takes: blackbox_exporter's `tls_config`, and base64
//! for credentials and binary metadata (the address family is ip_protocol.rs's).

use std::path::{Path, PathBuf};

use prober::{TlsOptions, TlsVerify, TlsVersion};

use crate::config::TlsConfig;

/// Standard base64 with padding (Basic credentials, gRPC's binary metadata), from the crate the
/// workspace pins.
pub(crate) fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

pub(crate) fn tls_options(c: Option<&TlsConfig>, base: &Path) -> Result<TlsOptions, String> {
    // Go's client verifies unless insecure_skip_verify: the opposite of the kubelet's default.
    let mut o = TlsOptions { verify: TlsVerify::SystemRoots, ..TlsOptions::default() };
    let Some(c) = c else { return Ok(o) };
    if c.ca.is_some() || c.cert.is_some() || c.key.is_some() {
        return Err(
            "tls_config: inline ca, cert and key are not supported (use the _file fields)".into()
        );
    }
    let path = |p: &str| -> PathBuf { base.join(p) };
    o.verify = match (&c.ca_file, c.insecure_skip_verify) {
        (_, true) => TlsVerify::None,
        (Some(ca), false) => TlsVerify::CaFile(path(ca)),
        (None, false) => TlsVerify::SystemRoots,
    };
    o.server_name = c.server_name.clone().filter(|s| !s.is_empty());
    o.client_cert = match (&c.cert_file, &c.key_file) {
        (Some(cert), Some(key)) => Some((path(cert), path(key))),
        (None, None) => None,
        _ => return Err("tls_config: cert_file and key_file go together".into()),
    };
    if let Some(v) = &c.min_version {
        o.min_version = Some(
            TlsVersion::parse(v)
                .ok_or_else(|| format!("tls_config.min_version: {v:?} (TLS12 or TLS13)"))?,
        );
    }
    if let Some(v) = &c.max_version {
        o.max_version = Some(
            TlsVersion::parse(v)
                .ok_or_else(|| format!("tls_config.max_version: {v:?} (TLS12 or TLS13)"))?,
        );
    }
    o.validate().map_err(|e| format!("tls_config: {e}"))?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn base64_matches_rfc4648() {
        for (i, o) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }
}
