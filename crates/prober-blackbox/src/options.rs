//! Options more than one prober's module takes: blackbox_exporter's `tls_config`, and base64
//! for credentials and binary metadata (the address family is ip_protocol.rs's).

use std::path::Path;

use prober::{TlsOptions, TlsVerify};
use prober_core::{TlsFieldNames, TlsFields};

use crate::config::TlsConfig;

/// Standard base64 with padding (Basic credentials, gRPC's binary metadata), from the crate the
/// workspace pins.
pub(crate) fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// prometheus/common's `tls_config` as blackbox_exporter reads it, through the one reader of
/// TLS fields (errors name the field: `tls_config.cert_file: ...`).
pub(crate) fn tls_options(c: Option<&TlsConfig>, base: &Path) -> Result<TlsOptions, String> {
    // Go's client verifies unless insecure_skip_verify: the opposite of the kubelet's default.
    let Some(c) = c else {
        return Ok(TlsOptions { verify: TlsVerify::SystemRoots, ..TlsOptions::default() });
    };
    if c.ca.is_some() || c.cert.is_some() || c.key.is_some() {
        return Err(
            "tls_config: inline ca, cert and key are not supported (use the _file fields)".into()
        );
    }
    let fields = TlsFields {
        // insecure_skip_verify leaves the CA unread, as Go's client does.
        ca_file: c.ca_file.as_deref().filter(|_| !c.insecure_skip_verify),
        cert_file: c.cert_file.as_deref(),
        key_file: c.key_file.as_deref(),
        // An empty server_name is none, as prometheus/common reads it.
        server_name: c.server_name.as_deref().filter(|s| !s.is_empty()),
        min_version: c.min_version.as_deref(),
        max_version: c.max_version.as_deref(),
    };
    let verify = if c.insecure_skip_verify { TlsVerify::None } else { TlsVerify::SystemRoots };
    fields.read("tls_config", &TlsFieldNames::SNAKE_CASE, Some(base), verify)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each error of a module's `tls_config` names its field's path.
    #[test]
    fn tls_config_errors_name_the_field() {
        let base = Path::new("/etc/prober");
        let err = |c: TlsConfig| tls_options(Some(&c), base).unwrap_err();
        let cert = Some("c.pem".to_string());
        assert_eq!(
            err(TlsConfig { cert_file: cert.clone(), ..TlsConfig::default() }),
            "tls_config.key_file: missing (cert_file is set)"
        );
        assert_eq!(
            err(TlsConfig { key_file: cert, ..TlsConfig::default() }),
            "tls_config.cert_file: missing (key_file is set)"
        );
        assert_eq!(
            err(TlsConfig { min_version: Some("TLS14".into()), ..TlsConfig::default() }),
            "tls_config.min_version: expected 1.2 or 1.3 (got \"TLS14\")"
        );
        assert_eq!(
            err(TlsConfig { ca_file: Some(String::new()), ..TlsConfig::default() }),
            "tls_config.ca_file: must not be empty"
        );
        let ok = TlsConfig { ca_file: Some("ca.pem".into()), ..TlsConfig::default() };
        let o = tls_options(Some(&ok), base).unwrap();
        assert_eq!(o.verify, TlsVerify::CaFile("/etc/prober/ca.pem".into()));
        let skip = TlsConfig { insecure_skip_verify: true, ..ok };
        assert_eq!(tls_options(Some(&skip), base).unwrap().verify, TlsVerify::None);
    }
    #[test]
    fn base64_matches_rfc4648() {
        for (i, o) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }
}
