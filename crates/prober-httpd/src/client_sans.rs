//! `client_allowed_sans`: a client certificate must carry one of the listed subject
//! alternative names, or the TLS handshake is refused, as the exporter-toolkit's
//! `VerifyPeerCertificate` refuses it (a leaf: it names nothing else of the crate).
//!
//! As the toolkit: the client's own certificate (the first one sent) is read; its DNS names,
//! e-mail addresses, IP addresses (as Go prints them: `192.0.2.1`, `2001:db8::1`, an
//! IPv4-mapped address as IPv4) and URIs are compared, exactly, with the list; the check
//! comes after the `client_auth_type`'s own (a certificate of another issuer is refused for
//! that first). A client that sends no certificate is refused too: the toolkit's check fails
//! on it (its connection is closed), whatever `client_auth_type` says.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};
use rustls_pki_types::{CertificateDer, UnixTime};
use x509_parser::extensions::GeneralName;

/// The verifier of `client_auth_type`, then the SAN check.
#[derive(Debug)]
pub(crate) struct AllowedSans {
    pub(crate) inner: Arc<dyn ClientCertVerifier>,
    pub(crate) allowed: Vec<String>,
}

impl ClientCertVerifier for AllowedSans {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self.inner.verify_client_cert(end_entity, intermediates, now)?;
        if sans(end_entity).is_some_and(|names| names.iter().any(|n| self.allowed.contains(n))) {
            Ok(verified)
        } else {
            // Go's crypto/tls answers a failed VerifyPeerCertificate with a bad_certificate
            // alert; rustls sends that one for this error.
            Err(rustls::Error::InvalidCertificate(CertificateError::NotValidForName))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The subject alternative names of `cert` as the toolkit compares them (DNS names, e-mail
/// addresses, IP addresses, URIs); `None` when it is not a certificate (the toolkit refuses
/// what Go's x509 cannot parse).
fn sans(cert: &CertificateDer<'_>) -> Option<Vec<String>> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    let Some(ext) = parsed.subject_alternative_name().ok()? else {
        return Some(Vec::new());
    };
    let names = ext.value.general_names.iter().filter_map(|name| match name {
        GeneralName::DNSName(s) | GeneralName::RFC822Name(s) | GeneralName::URI(s) => {
            Some((*s).to_string())
        }
        GeneralName::IPAddress(bytes) => go_ip(bytes),
        _ => None,
    });
    Some(names.collect())
}

/// An IP address SAN as Go's `net.IP.String` prints it.
fn go_ip(bytes: &[u8]) -> Option<String> {
    let ip = match bytes.len() {
        4 => IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?)),
        16 => {
            let v6 = Ipv6Addr::from(<[u8; 16]>::try_from(bytes).ok()?);
            v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)
        }
        _ => return None,
    };
    Some(ip.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_print_as_go_prints_them() {
        let v6: Ipv6Addr = "2001:db8:0:0:0:0:0:1".parse().unwrap();
        assert_eq!(go_ip(&v6.octets()).as_deref(), Some("2001:db8::1"));
        let mapped: Ipv6Addr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(go_ip(&mapped.octets()).as_deref(), Some("192.0.2.1"));
        assert_eq!(go_ip(&[127, 0, 0, 1]).as_deref(), Some("127.0.0.1"));
        assert_eq!(go_ip(&[1, 2, 3]), None);
    }

    #[test]
    fn not_a_certificate_has_no_names() {
        assert_eq!(sans(&CertificateDer::from(vec![0x30, 0x03, 0x02, 0x01, 0x00])), None);
        assert_eq!(sans(&CertificateDer::from(Vec::new())), None);
    }
}
