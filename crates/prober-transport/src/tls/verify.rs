//! Certificate verification: [`prober_core::TlsVerify`]'s modes, pinning by the CA file, and the leaf's
//! `notAfter` recorded before any verdict.

use std::sync::{Arc, Mutex};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// Accepts or verifies the server's certificate, recording its expiry first.
///
/// A certificate that is byte for byte one of the CA file's is accepted when the chain check
/// refuses it (as rustls refuses a `CA:TRUE` certificate used by a server, which is what
/// `openssl req -x509` makes), provided its name and validity period fit, as Go's and
/// OpenSSL's verifiers accept it: it was pinned by the user.
#[derive(Debug)]
pub(super) struct Verifier {
    /// `None`: accept any certificate (signatures are still checked).
    pub(super) webpki: Option<Arc<WebPkiServerVerifier>>,
    /// The anchors `webpki` verifies with, with their expiries.
    pub(super) roots: Option<Arc<super::chain::TrustRoots>>,
    pub(super) pinned: Arc<[CertificateDer<'static>]>,
    pub(super) algorithms: WebPkiSupportedAlgorithms,
    pub(super) seen: Mutex<Seen>,
}

/// What the latest handshake's verification saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Seen {
    /// The leaf's `notAfter`.
    pub(super) not_after: Option<i64>,
    /// The certificates the server sent, its leaf first.
    pub(super) certs: Vec<CertificateDer<'static>>,
    /// Whether they were verified against trust anchors (not with verification off).
    pub(super) verified: bool,
    /// When verified: the latest expiry over the chains that verify (see `chain`); the leaf's
    /// when it is a certificate of the CA file itself (Go's chain is that certificate alone).
    pub(super) chain_not_after: Option<i64>,
}

impl Verifier {
    pub(super) fn slot(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        {
            let mut seen = self.slot();
            seen.not_after = crate::cert::not_after(end_entity);
            seen.certs = std::iter::once(end_entity)
                .chain(intermediates)
                .map(|c| c.clone().into_owned())
                .collect();
            seen.verified = false;
        }
        let Some(v) = &self.webpki else { return Ok(ServerCertVerified::assertion()) };
        let (verdict, chain_not_after) = match v.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(e) if self.pinned.iter().any(|c| c.as_ref() == end_entity.as_ref()) => (
                verify_pinned(end_entity, server_name, now).map_err(|_| e),
                crate::cert::not_after(end_entity),
            ),
            Ok(ok) => {
                let chains = self.roots.as_ref().and_then(|r| {
                    r.latest_chain_not_after(end_entity, intermediates, now, &self.algorithms)
                });
                (Ok(ok), chains)
            }
            Err(e) => (Err(e), None),
        };
        let mut seen = self.slot();
        seen.verified = verdict.is_ok();
        seen.chain_not_after = chain_not_after.filter(|_| verdict.is_ok());
        verdict
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The checks left for a certificate of the CA file presented by the server: its name, and
/// that `now` is within its validity period.
fn verify_pinned(
    cert: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<ServerCertVerified, rustls::Error> {
    let parsed = rustls::server::ParsedCertificate::try_from(cert)?;
    rustls::client::verify_server_name(&parsed, server_name)?;
    let (not_before, not_after) = crate::cert::validity(cert.as_ref())
        .ok_or(rustls::Error::InvalidCertificate(rustls::CertificateError::BadEncoding))?;
    let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    if now < not_before {
        return Err(rustls::Error::InvalidCertificate(rustls::CertificateError::NotValidYet));
    }
    if now > not_after {
        return Err(rustls::Error::InvalidCertificate(rustls::CertificateError::Expired));
    }
    Ok(ServerCertVerified::assertion())
}
