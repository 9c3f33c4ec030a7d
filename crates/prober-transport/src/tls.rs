//! TLS clients for probes (feature `tls`): rustls with the ring provider, driven without
//! blocking over a mio socket.
//!
//! - [`TlsClient`] is built from [`TlsOptions`] once per probe run (so CA, certificate and key
//!   files are read when a run starts and a renewed file is picked up by the next run). The
//!   system trust store is loaded once per process.
//! - Verification follows [`TlsVerify`]. The kubelet's default, `None`, accepts any
//!   certificate and any name but still checks the handshake signatures with the provider's
//!   algorithms, so the server proves it holds the key of the certificate it sent.
//! - Whatever the verification, the leaf certificate's `notAfter` is recorded before the
//!   verdict ([`TlsClient::cert_not_after`]), so an expired certificate is reported as such.
//! - SNI: the options' `server_name`, else the host connected to; an IP address sends none.
//! - [`TlsConn`] is one connection: `handshake` until it says done, then read and write
//!   through [`crate::Transport::Tls`]. Each call moves records with
//!   `read_tls`/`write_tls`/`process_new_packets` until the socket would block, and
//!   `sync_interest` registers for what rustls wants next (`wants_read`/`wants_write`).

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use mio::{Interest, Registry, Token};
use prober_core::{ClosePolicy, TlsOptions, TlsVerify, TlsVersion};
use prober_io::Ctx;
use prober_tcp::Conn;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

use crate::TransportError;

/// ALPN for HTTP/1.1 probes.
pub const ALPN_HTTP1: &[u8] = b"http/1.1";
/// ALPN for HTTP/2 (gRPC).
pub const ALPN_H2: &[u8] = b"h2";

fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider())).clone()
}

/// The system trust store, loaded once per process.
fn system_roots() -> Result<Arc<RootCertStore>, String> {
    static ROOTS: OnceLock<Result<Arc<RootCertStore>, String>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map_or_else(|| "no certificates found".to_string(), |e| e.to_string());
                return Err(format!("cannot load the system's trusted certificates: {why}"));
            }
            Ok(Arc::new(roots))
        })
        .clone()
}

fn read_file(what: &str, path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path)
        .map_err(|e| format!("cannot read {what} {:?}: {}", path, prober_io::os_error_text(&e)))
}

fn read_certs(what: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = read_file(what, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("invalid {what} {path:?}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("invalid {what} {path:?}: no PEM certificate in it"));
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let pem = read_file("client key file", path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            format!("invalid client key file {path:?}: no PEM private key in it")
        }
        e => format!("invalid client key file {path:?}: {e}"),
    })
}

/// Accepts or verifies the server's certificate, recording its expiry first.
#[derive(Debug)]
struct Verifier {
    /// `None`: accept any certificate (signatures are still checked).
    webpki: Option<Arc<WebPkiServerVerifier>>,
    algorithms: WebPkiSupportedAlgorithms,
    not_after: Mutex<Option<i64>>,
}

impl Verifier {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<i64>> {
        self.not_after.lock().unwrap_or_else(|e| e.into_inner())
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
        *self.slot() = crate::cert::not_after(end_entity);
        match &self.webpki {
            Some(v) => {
                v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            }
            None => Ok(ServerCertVerified::assertion()),
        }
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

/// A TLS client configuration for one probe run.
#[derive(Debug)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    verifier: Arc<Verifier>,
    server_name: Option<String>,
}

impl TlsClient {
    /// Builds the configuration, reading the CA, certificate and key files the options name.
    /// `alpn`: the protocols offered, in order of preference. The error is a complete sentence
    /// for an Unknown outcome.
    pub fn new(opts: &TlsOptions, alpn: &[&[u8]]) -> Result<TlsClient, String> {
        let provider = provider();
        let roots = match &opts.verify {
            TlsVerify::None => None,
            TlsVerify::SystemRoots => Some(system_roots()?),
            TlsVerify::CaFile(path) => {
                let mut roots = RootCertStore::empty();
                for cert in read_certs("CA file", path)? {
                    roots.add(cert).map_err(|e| format!("invalid CA file {path:?}: {e}"))?;
                }
                Some(Arc::new(roots))
            }
        };
        let webpki = match roots {
            Some(roots) => Some(
                WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                    .build()
                    .map_err(|e| format!("cannot set up certificate verification: {e}"))?,
            ),
            None => None,
        };
        let verifier = Arc::new(Verifier {
            webpki,
            algorithms: provider.signature_verification_algorithms,
            not_after: Mutex::new(None),
        });
        let versions: &[&'static rustls::SupportedProtocolVersion] = match opts.min_version {
            Some(TlsVersion::Tls13) => &[&rustls::version::TLS13],
            Some(TlsVersion::Tls12) | None => &[&rustls::version::TLS13, &rustls::version::TLS12],
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .map_err(|e| format!("cannot set up TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier.clone());
        let mut config = match &opts.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = read_certs("client certificate file", cert)?;
                let key_der = read_key(key)?;
                builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                    format!("client certificate {cert:?} does not go with key {key:?}: {e}")
                })?
            }
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(TlsClient { config: Arc::new(config), verifier, server_name: opts.server_name.clone() })
    }

    /// Starts TLS on `conn` (registered on `token`) to `host`, or the options' server name.
    /// On error the connection is handed back with the reason.
    pub fn connect(&self, conn: Conn, token: Token, host: &str) -> Result<TlsConn, (Conn, String)> {
        let name = self.server_name.as_deref().unwrap_or(host);
        let server_name = match ServerName::try_from(name.to_string()) {
            Ok(n) => n,
            Err(e) => return Err((conn, format!("invalid TLS server name {name:?}: {e}"))),
        };
        *self.verifier.slot() = None;
        match ClientConnection::new(self.config.clone(), server_name) {
            Ok(tls) => Ok(TlsConn {
                conn,
                tls,
                token,
                interest: Interest::READABLE | Interest::WRITABLE,
                eof: false,
            }),
            Err(e) => Err((conn, format!("cannot start TLS: {e}"))),
        }
    }

    /// `notAfter` of the leaf certificate the server sent in the latest handshake (seconds
    /// since the epoch), also when verification then failed.
    pub fn cert_not_after(&self) -> Option<i64> {
        *self.verifier.slot()
    }
}

/// One TLS connection over a nonblocking socket.
#[derive(Debug)]
pub struct TlsConn {
    conn: Conn,
    tls: ClientConnection,
    token: Token,
    interest: Interest,
    eof: bool,
}

impl TlsConn {
    /// Advances the handshake as far as the socket allows: `Ok(true)` once it is complete.
    pub fn handshake(&mut self) -> Result<bool, TransportError> {
        loop {
            match self.flush() {
                Ok(()) | Err(TransportError::WouldBlock) => {}
                Err(e) => return Err(e),
            }
            if !self.tls.is_handshaking() {
                return Ok(true);
            }
            if !self.tls.wants_read() {
                return Ok(false);
            }
            match self.tls.read_tls(self.conn.stream()) {
                Ok(0) => {
                    return Err(TransportError::Tls(
                        "the server closed the connection during the handshake (EOF)".into(),
                    ));
                }
                Ok(_) => self.process()?,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransportError::io("read", e)),
            }
        }
    }

    /// Processes received records; a TLS error is reported after trying to send the alert.
    fn process(&mut self) -> Result<(), TransportError> {
        if let Err(e) = self.tls.process_new_packets() {
            let _ = self.flush();
            return Err(TransportError::Tls(e.to_string()));
        }
        Ok(())
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> Result<usize, TransportError> {
        loop {
            match self.flush() {
                Ok(()) | Err(TransportError::WouldBlock) => {}
                Err(e) => return Err(e),
            }
            match self.tls.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The peer closed without close_notify: an end of stream like any other here.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
                Err(e) => return Err(TransportError::io("read", e)),
            }
            if self.eof {
                return Ok(0);
            }
            match self.tls.read_tls(self.conn.stream()) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(TransportError::io("read", e)),
            }
            self.process()?;
        }
    }

    pub(crate) fn write(&mut self, buf: &[u8]) -> Result<usize, TransportError> {
        let n = self.tls.writer().write(buf).map_err(|e| TransportError::io("write", e))?;
        match self.flush() {
            Ok(()) | Err(TransportError::WouldBlock) if n > 0 || buf.is_empty() => Ok(n),
            // rustls's buffer is full: wait until records have gone out.
            Ok(()) | Err(TransportError::WouldBlock) => Err(TransportError::WouldBlock),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn flush(&mut self) -> Result<(), TransportError> {
        while self.tls.wants_write() {
            match self.tls.write_tls(self.conn.stream()) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TransportError::io("write", e)),
            }
        }
        Ok(())
    }

    /// Updates the registration's interest to what rustls wants next (see the module docs).
    pub fn sync_interest(&mut self, registry: &Registry) {
        let want = match (self.tls.wants_read(), self.tls.wants_write()) {
            (true, true) => Interest::READABLE | Interest::WRITABLE,
            (false, true) => Interest::WRITABLE,
            _ => Interest::READABLE,
        };
        if want != self.interest
            && registry.reregister(self.conn.stream(), self.token, want).is_ok()
        {
            self.interest = want;
        }
    }

    /// The protocol the server chose by ALPN.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        self.tls.alpn_protocol()
    }

    /// The negotiated protocol version (after the handshake).
    pub fn protocol_version(&self) -> Option<TlsVersion> {
        match self.tls.protocol_version()? {
            rustls::ProtocolVersion::TLSv1_3 => Some(TlsVersion::Tls13),
            rustls::ProtocolVersion::TLSv1_2 => Some(TlsVersion::Tls12),
            _ => None,
        }
    }

    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    pub fn conn_mut(&mut self) -> &mut Conn {
        &mut self.conn
    }

    /// Closes the connection; with an orderly close policy `close_notify` is sent first (as far
    /// as the socket takes it without blocking).
    pub fn close(mut self, cx: &mut Ctx<'_>) {
        if self.conn.close_policy() == ClosePolicy::Fin {
            self.tls.send_close_notify();
            let _ = self.flush();
        }
        self.conn.close(cx);
    }
}
