//! `tls_server_config`: the rustls configuration made from a web config's files, made again
//! when one of them changes (a certificate rotated on disk is served from the next connection
//! on, as the exporter-toolkit reads its files for every connection).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{NoClientAuth, WebPkiClientVerifier};
use rustls::{
    CipherSuite, DigitallySignedStruct, DistinguishedName, NamedGroup, RootCertStore, ServerConfig,
    SignatureScheme, SupportedProtocolVersion,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, UnixTime};

use crate::client_sans::AllowedSans;

/// `client_auth_type`, with Go's `crypto/tls` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientAuth {
    NoClientCert,
    RequestClientCert,
    RequireAnyClientCert,
    VerifyClientCertIfGiven,
    RequireAndVerifyClientCert,
}

/// What `tls_server_config` says, files resolved against the web config's directory.
#[derive(Debug, Clone)]
pub(crate) struct TlsFiles {
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
    pub(crate) client_ca: Option<PathBuf>,
    pub(crate) client_auth: ClientAuth,
    pub(crate) versions: Vec<&'static SupportedProtocolVersion>,
    /// TLS 1.2 suites allowed (TLS 1.3's are not chosen, as in Go); `None`: all.
    pub(crate) cipher_suites: Option<Vec<CipherSuite>>,
    pub(crate) curves: Option<Vec<NamedGroup>>,
    pub(crate) prefer_server_order: bool,
    /// `client_allowed_sans`: a client certificate must carry one of these.
    pub(crate) allowed_sans: Option<Vec<String>>,
}

/// A file's identity and version: a change of any of these is a new file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<SystemTime>,
}

fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(FileId { dev: m.dev(), ino: m.ino(), len: m.len(), modified: m.modified().ok() })
}

/// The configuration in force and the files it was made from.
#[derive(Debug)]
pub(crate) struct TlsState {
    files: TlsFiles,
    seen: Vec<Option<FileId>>,
    config: Arc<ServerConfig>,
}

impl TlsState {
    /// The state for `files`, whose configuration `build` made.
    pub(crate) fn new(files: TlsFiles, config: Arc<ServerConfig>) -> TlsState {
        let seen = files.paths().map(file_id).collect();
        TlsState { files, seen, config }
    }

    /// The configuration for a new connection: made again first when a file changed. A file
    /// that does not make a configuration (a certificate written before its key) leaves the
    /// previous one in force, and is said once on standard error.
    pub(crate) fn current(&mut self) -> Arc<ServerConfig> {
        let ids: Vec<_> = self.files.paths().map(file_id).collect();
        if ids != self.seen {
            self.seen = ids;
            match build(&self.files) {
                Ok(c) => self.config = c,
                Err((field, e)) => {
                    eprintln!("prober: web config: {field}: {e} (serving the previous one)");
                }
            }
        }
        self.config.clone()
    }
}

impl TlsFiles {
    fn paths(&self) -> impl Iterator<Item = &Path> {
        [Some(&self.cert), Some(&self.key), self.client_ca.as_ref()]
            .into_iter()
            .flatten()
            .map(PathBuf::as_path)
    }
}

/// Reads a regular file (never a FIFO or a device, which could block the server's loop).
fn read(path: &Path) -> Result<Vec<u8>, String> {
    let what = |e: std::io::Error| format!("{}: {e}", path.display());
    let m = std::fs::metadata(path).map_err(what)?;
    if !m.is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    std::fs::read(path).map_err(what)
}

/// The rustls configuration for `files`; on error, the field and what is wrong.
pub(crate) fn build(files: &TlsFiles) -> Result<Arc<ServerConfig>, (&'static str, String)> {
    let pem = read(&files.cert).map_err(|e| ("cert_file", e))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| ("cert_file", format!("{}: {e}", files.cert.display())))?;
    if certs.is_empty() {
        return Err(("cert_file", format!("{}: no certificate in it", files.cert.display())));
    }
    let pem = read(&files.key).map_err(|e| ("key_file", e))?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        ("key_file", format!("{}: no private key in it ({e})", files.key.display()))
    })?;

    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(allowed) = &files.cipher_suites {
        provider
            .cipher_suites
            .retain(|s| s.version() == &rustls::version::TLS13 || allowed.contains(&s.suite()));
    }
    if let Some(curves) = &files.curves {
        provider.kx_groups.retain(|g| curves.contains(&g.name()));
        provider.kx_groups.sort_by_key(|g| curves.iter().position(|c| *c == g.name()));
    }
    let algorithms = provider.signature_verification_algorithms;
    let provider = Arc::new(provider);
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&files.versions)
        .map_err(|e| ("min_version", e.to_string()))?;
    let verifier: Arc<dyn ClientCertVerifier> = match files.client_auth {
        ClientAuth::NoClientCert => Arc::new(NoClientAuth),
        ClientAuth::RequestClientCert => Arc::new(AnyClientCert { mandatory: false, algorithms }),
        ClientAuth::RequireAnyClientCert => Arc::new(AnyClientCert { mandatory: true, algorithms }),
        ClientAuth::VerifyClientCertIfGiven | ClientAuth::RequireAndVerifyClientCert => {
            let Some(ca) = &files.client_ca else {
                return Err(("client_ca_file", "required by this client_auth_type".into()));
            };
            let pem = read(ca).map_err(|e| ("client_ca_file", e))?;
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert =
                    cert.map_err(|e| ("client_ca_file", format!("{}: {e}", ca.display())))?;
                roots
                    .add(cert)
                    .map_err(|e| ("client_ca_file", format!("{}: {e}", ca.display())))?;
            }
            let b = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let b = if files.client_auth == ClientAuth::VerifyClientCertIfGiven {
                b.allow_unauthenticated()
            } else {
                b
            };
            b.build().map_err(|e| ("client_ca_file", format!("{}: {e}", ca.display())))?
        }
    };
    let verifier: Arc<dyn ClientCertVerifier> = match &files.allowed_sans {
        Some(allowed) => Arc::new(AllowedSans { inner: verifier, allowed: allowed.clone() }),
        None => verifier,
    };
    let mut config = builder
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .map_err(|e| ("key_file", format!("{}: {e}", files.key.display())))?;
    config.ignore_client_order = files.prefer_server_order;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// `RequestClientCert` and `RequireAnyClientCert`: a client certificate is asked for (or
/// required) and its signature over the handshake checked, but its issuer is not.
#[derive(Debug)]
struct AnyClientCert {
    mandatory: bool,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for AnyClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        self.mandatory
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// `min_version` / `max_version`: Go's names. TLS 1.0 and 1.1 are accepted in the file but
/// never spoken (rustls has neither): a minimum below 1.2 means 1.2.
pub(crate) fn version(name: &str) -> Option<u8> {
    match name {
        "TLS10" => Some(0),
        "TLS11" => Some(1),
        "TLS12" => Some(2),
        "TLS13" => Some(3),
        _ => None,
    }
}

/// The versions between `min` and `max` (as [`version`] numbers them).
pub(crate) fn versions(min: u8, max: u8) -> Vec<&'static SupportedProtocolVersion> {
    let mut v = Vec::new();
    if min <= 2 && max >= 2 {
        v.push(&rustls::version::TLS12);
    }
    if max >= 3 {
        v.push(&rustls::version::TLS13);
    }
    v
}

/// A cipher suite by its IANA name (Go's names are the same), among the TLS 1.2 suites of the
/// ring provider.
pub(crate) fn cipher_suite(name: &str) -> Option<CipherSuite> {
    rustls::crypto::ring::default_provider()
        .cipher_suites
        .iter()
        .map(|s| s.suite())
        .find(|s| format!("{s:?}") == name)
}

/// `curve_preferences`: Go's names of the groups rustls' ring provider has.
pub(crate) fn curve(name: &str) -> Option<NamedGroup> {
    match name {
        "X25519" => Some(NamedGroup::X25519),
        "CurveP256" => Some(NamedGroup::secp256r1),
        "CurveP384" => Some(NamedGroup::secp384r1),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(cipher_suite("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256").is_some());
        assert!(cipher_suite("TLS_RSA_WITH_RC4_128_SHA").is_none());
        assert_eq!(versions(0, 3).len(), 2);
        assert_eq!(versions(3, 3), vec![&rustls::version::TLS13]);
        assert_eq!(curve("CurveP521"), None);
    }
}
