//! TLS on loopback for HTTPS tests: certificates made at test time ([`TestCa`], rcgen) and
//! [`TlsTargetServer`], a rustls front for a [`TargetServer`] so that every route listed in the
//! crate docs is also served over TLS.
//!
//! One request per connection, as the plain server: the front completes the handshake
//! (recording the SNI name and whether a client certificate came, see [`Handshake`]), reads the
//! request head, passes it to its own plain [`TargetServer`] and relays the answer until the
//! backend closes, then sends `close_notify` and closes. A failed handshake is recorded with
//! rustls's error, its alert is sent, and the connection is held until the client closes it (at
//! most 2 s), so the client sees the alert rather than a reset. Routes that wait for the client
//! to close (`/never-answer`, `/stall-body`) are relayed until the client closes.
//!
//! Options ([`TlsServerOptions`]): the certificate chain and key, an optional client CA (then a
//! client certificate signed by it is required), the protocol versions, ALPN protocols.

use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};

use crate::server::TargetServer;
use crate::threads::{Restarting, lock, retry_interrupted};

/// A certificate and its private key, PEM and DER.
#[derive(Clone, Debug)]
pub struct Issued {
    /// The certificate, PEM (for files and trust stores).
    pub cert_pem: String,
    /// Its private key, PEM (PKCS#8).
    pub key_pem: String,
    /// The certificate, DER (for rustls).
    pub cert_der: Vec<u8>,
}

impl Issued {
    /// Writes `<stem>.crt` and `<stem>.key` into `dir` (created if needed); returns their paths.
    pub fn write_files(&self, dir: &Path, stem: &str) -> (PathBuf, PathBuf) {
        std::fs::create_dir_all(dir).expect("prober-testkit: create certificate directory");
        let cert = dir.join(format!("{stem}.crt"));
        let key = dir.join(format!("{stem}.key"));
        std::fs::write(&cert, &self.cert_pem).expect("prober-testkit: write certificate");
        std::fs::write(&key, &self.key_pem).expect("prober-testkit: write key");
        (cert, key)
    }
}

/// A certificate authority made at test time.
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    cert: Issued,
    name: String,
}

impl std::fmt::Debug for TestCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestCa").field("cert", &self.cert).finish_non_exhaustive()
    }
}

/// A CA certificate's parameters: `name` as its common name, expiring on `not_after` (rcgen's
/// default, 4096, when `None`).
fn ca_params(name: &str, not_after: Option<(i32, u8, u8)>) -> CertificateParams {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("no names");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
    if let Some((y, m, d)) = not_after {
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(y, m, d);
    }
    params
}

impl TestCa {
    /// A new self-signed CA whose common name is `name`.
    pub fn new(name: &str) -> TestCa {
        TestCa::with_params(name, None)
    }

    /// A new self-signed CA whose certificate expires at midnight UTC on `(year, month, day)`.
    pub fn new_expiring(name: &str, not_after: (i32, u8, u8)) -> TestCa {
        TestCa::with_params(name, Some(not_after))
    }

    fn with_params(name: &str, not_after: Option<(i32, u8, u8)>) -> TestCa {
        let params = ca_params(name, not_after);
        let key = KeyPair::generate().expect("prober-testkit: generate CA key");
        let cert = params.self_signed(&key).expect("prober-testkit: self-sign CA");
        let issued = Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            cert_der: cert.der().to_vec(),
        };
        TestCa { issuer: Issuer::new(params, key), cert: issued, name: name.to_string() }
    }

    /// Another self-signed certificate of this CA, with its name and key, that expires on
    /// `(year, month, day)`: a renewed root, or the older copy of it a server may still send.
    /// What the CA issues verifies through either.
    pub fn recertified(&self, not_after: (i32, u8, u8)) -> Issued {
        let key = KeyPair::from_pem(&self.cert.key_pem).expect("prober-testkit: CA key");
        let cert = ca_params(&self.name, Some(not_after))
            .self_signed(&key)
            .expect("prober-testkit: self-sign CA");
        Issued { cert_pem: cert.pem(), key_pem: key.serialize_pem(), cert_der: cert.der().to_vec() }
    }

    /// The CA's own certificate (PEM in `cert_pem`).
    pub fn cert(&self) -> &Issued {
        &self.cert
    }

    /// A server certificate for `names` (DNS names or IP addresses), valid until 4096.
    pub fn issue(&self, names: &[&str]) -> Issued {
        self.issue_with(names, None, ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A server certificate for `names` that expires at midnight UTC on `(year, month, day)`.
    pub fn issue_expiring(&self, names: &[&str], not_after: (i32, u8, u8)) -> Issued {
        self.issue_with(names, Some(not_after), ExtendedKeyUsagePurpose::ServerAuth)
    }

    /// A client certificate (for mutual TLS) with common name `name`.
    pub fn issue_client(&self, name: &str) -> Issued {
        self.issue_with(&[name], None, ExtendedKeyUsagePurpose::ClientAuth)
    }

    /// A client certificate whose subject alternative names are `sans`, each written as
    /// OpenSSL's `subjectAltName` writes them: `DNS:name`, `IP:address`, `email:address`,
    /// `URI:uri` (for servers that check them: the exporter-toolkit's `client_allowed_sans`).
    pub fn issue_client_sans(&self, sans: &[&str]) -> Issued {
        let sans = sans
            .iter()
            .map(|san| {
                let (kind, value) = san.split_once(':').expect("prober-testkit: KIND:value");
                let text = || value.to_string().try_into().expect("prober-testkit: IA5 text");
                match kind {
                    "DNS" => SanType::DnsName(text()),
                    "IP" => SanType::IpAddress(value.parse().expect("prober-testkit: an IP")),
                    "email" => SanType::Rfc822Name(text()),
                    "URI" => SanType::URI(text()),
                    _ => panic!("prober-testkit: SAN kind {kind} (DNS, IP, email or URI)"),
                }
            })
            .collect();
        self.issue_sans(&[], Some(sans), None, ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue_with(
        &self,
        names: &[&str],
        not_after: Option<(i32, u8, u8)>,
        usage: ExtendedKeyUsagePurpose,
    ) -> Issued {
        self.issue_sans(names, None, not_after, usage)
    }

    /// A certificate for `names` (SANs and common name), or with `sans` as its SANs.
    fn issue_sans(
        &self,
        names: &[&str],
        sans: Option<Vec<SanType>>,
        not_after: Option<(i32, u8, u8)>,
        usage: ExtendedKeyUsagePurpose,
    ) -> Issued {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names.clone()).expect("prober-testkit: names");
        if let Some(first) = names.first() {
            params.distinguished_name.push(DnType::CommonName, first.as_str());
        }
        if let Some(sans) = sans {
            params.distinguished_name.push(DnType::CommonName, "client");
            params.subject_alt_names = sans;
        }
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        if let Some((y, m, d)) = not_after {
            params.not_after = rcgen::date_time_ymd(y, m, d);
        }
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().expect("prober-testkit: generate key");
        let cert = params.signed_by(&key, &self.issuer).expect("prober-testkit: sign certificate");
        Issued { cert_pem: cert.pem(), key_pem: key.serialize_pem(), cert_der: cert.der().to_vec() }
    }
}

/// A self-signed server certificate for `names` (no CA involved).
pub fn self_signed(names: &[&str]) -> Issued {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let key = KeyPair::generate().expect("prober-testkit: generate key");
    let cert = CertificateParams::new(names)
        .expect("prober-testkit: names")
        .self_signed(&key)
        .expect("prober-testkit: self-sign");
    Issued { cert_pem: cert.pem(), key_pem: key.serialize_pem(), cert_der: cert.der().to_vec() }
}

/// A self-signed certificate for `names` that is also marked a CA (`CA:TRUE`), as
/// `openssl req -x509` makes them: the usual home-made server certificate.
pub fn self_signed_ca(names: &[&str]) -> Issued {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let key = KeyPair::generate().expect("prober-testkit: generate key");
    let mut params = CertificateParams::new(names).expect("prober-testkit: names");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("prober-testkit: self-sign");
    Issued { cert_pem: cert.pem(), key_pem: key.serialize_pem(), cert_der: cert.der().to_vec() }
}

/// Which TLS versions the server accepts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsVersions {
    /// TLS 1.2 and 1.3.
    #[default]
    Both,
    /// TLS 1.2 only (a client requiring 1.3 fails).
    Tls12Only,
    /// TLS 1.3 only (a client limited to 1.2 fails).
    Tls13Only,
}

/// How a [`TlsTargetServer`] does TLS.
#[derive(Clone, Debug)]
pub struct TlsServerOptions {
    /// The server's certificate (chain: leaf first) and key.
    pub cert: Issued,
    /// Extra chain certificates sent after the leaf (PEM).
    pub chain: Vec<String>,
    /// When set, a client certificate signed by this CA (PEM) is required.
    pub client_ca: Option<String>,
    /// Which protocol versions the server accepts.
    pub versions: TlsVersions,
    /// ALPN protocols the server accepts (none: ALPN is ignored).
    pub alpn: Vec<Vec<u8>>,
}

impl TlsServerOptions {
    /// Serving `cert`, with no extra chain, no client certificate, both versions, no ALPN.
    pub fn new(cert: Issued) -> TlsServerOptions {
        TlsServerOptions {
            cert,
            chain: Vec::new(),
            client_ca: None,
            versions: TlsVersions::Both,
            alpn: Vec::new(),
        }
    }
}

/// What the server saw of one handshake.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Handshake {
    /// The SNI name the client sent (`None`: no SNI, as for an IP address).
    pub sni: Option<String>,
    /// Whether the client presented a certificate.
    pub client_cert: bool,
    /// The ALPN protocol agreed on.
    pub alpn: Option<Vec<u8>>,
    /// rustls's error when the handshake failed.
    pub error: Option<String>,
    /// Whether the handshake resumed a session (rustls's `HandshakeKind::Resumed`): the
    /// server sent no certificate.
    pub resumed: bool,
    /// The protocol version agreed on (`TLSv1_2`, `TLSv1_3`).
    pub version: Option<String>,
}

#[derive(Debug, Default)]
struct TlsShared {
    stop: AtomicBool,
    handshakes: Mutex<Vec<Handshake>>,
}

/// A TLS front for a [`TargetServer`] on `127.0.0.1` (see the module docs).
#[derive(Debug)]
pub struct TlsTargetServer {
    addr: SocketAddr,
    backend: TargetServer,
    shared: Arc<TlsShared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl TlsTargetServer {
    /// Starts on `127.0.0.1:0`. Panics on failure (test helper).
    pub fn start(opts: TlsServerOptions) -> TlsTargetServer {
        let config = Arc::new(server_config(opts));
        let backend = TargetServer::start();
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .expect("prober-testkit: cannot listen on 127.0.0.1");
        let addr = listener.local_addr().expect("prober-testkit: local_addr");
        let shared = Arc::new(TlsShared::default());
        let (thread_shared, backend_addr) = (Arc::clone(&shared), backend.addr());
        let accept_thread = accept_each(
            listener,
            "prober-tls",
            move || thread_shared.stop.load(Ordering::Acquire),
            {
                let shared = Arc::clone(&shared);
                move |stream| serve(stream, &config, &shared, backend_addr)
            },
        );
        TlsTargetServer { addr, backend, shared, accept_thread: Some(accept_thread) }
    }

    /// The address the TLS front listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port the TLS front listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `https://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{path}", self.addr)
    }

    /// The plain server behind the front (its counters count relayed requests).
    pub fn backend(&self) -> &TargetServer {
        &self.backend
    }

    /// Every handshake so far, in the order they ended.
    pub fn handshakes(&self) -> Vec<Handshake> {
        lock(&self.shared.handshakes).clone()
    }

    /// Waits until at least `n` handshakes have ended; returns them (possibly fewer on
    /// timeout).
    pub fn wait_for_handshakes(&self, n: usize, timeout: Duration) -> Vec<Handshake> {
        let end = Instant::now() + timeout;
        loop {
            let h = self.handshakes();
            if h.len() >= n || Instant::now() >= end {
                return h;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for TlsTargetServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        // Wakes the blocking accept.
        drop(TcpStream::connect(self.addr));
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) fn server_config(opts: TlsServerOptions) -> ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&'static rustls::SupportedProtocolVersion] = match opts.versions {
        TlsVersions::Both => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersions::Tls12Only => &[&rustls::version::TLS12],
        TlsVersions::Tls13Only => &[&rustls::version::TLS13],
    };
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .expect("prober-testkit: TLS versions");
    let builder = match &opts.client_ca {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
                roots.add(c.expect("prober-testkit: client CA PEM")).expect("client CA");
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .expect("prober-testkit: client verifier");
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut chain = vec![CertificateDer::from(opts.cert.cert_der)];
    for pem in &opts.chain {
        chain.extend(CertificateDer::pem_slice_iter(pem.as_bytes()).map(|c| c.expect("chain PEM")));
    }
    let key = PrivateKeyDer::from_pem_slice(opts.cert.key_pem.as_bytes())
        .expect("prober-testkit: server key PEM");
    let mut config = builder.with_single_cert(chain, key).expect("prober-testkit: server cert");
    config.alpn_protocols = opts.alpn;
    config
}

fn serve(tcp: TcpStream, config: &Arc<ServerConfig>, shared: &TlsShared, backend: SocketAddr) {
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = tcp.set_write_timeout(Some(Duration::from_secs(10)));
    // rustls reads and writes through this: with the timeouts above a signal interrupts them.
    let mut io = Restarting(tcp);
    let Ok(mut tls) = ServerConnection::new(Arc::clone(config)) else { return };
    let mut record = Handshake::default();
    while tls.is_handshaking() {
        if let Err(e) = tls.complete_io(&mut io) {
            record.sni = tls.server_name().map(str::to_string);
            record.error = Some(e.to_string());
            while tls.wants_write() && tls.write_tls(&mut io).is_ok() {}
            lock(&shared.handshakes).push(record);
            drain_until_closed(&io.0, Duration::from_secs(2));
            return;
        }
    }
    record.sni = tls.server_name().map(str::to_string);
    record.client_cert = tls.peer_certificates().is_some_and(|c| !c.is_empty());
    record.alpn = tls.alpn_protocol().map(<[u8]>::to_vec);
    record.resumed = tls.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
    record.version = tls.protocol_version().map(|v| format!("{v:?}"));
    lock(&shared.handshakes).push(record);

    // The request head.
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        match rustls::Stream::new(&mut tls, &mut io).read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let Ok(mut up) = TcpStream::connect(backend) else { return };
    if up.write_all(&head).is_err() {
        return;
    }
    let _ = up.set_read_timeout(Some(Duration::from_millis(100)));
    loop {
        match retry_interrupted(|| up.read(&mut buf)) {
            Ok(0) => break,
            Ok(n) => {
                if rustls::Stream::new(&mut tls, &mut io).write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                if client_closed(&io.0) {
                    return;
                }
            }
            Err(_) => break,
        }
    }
    tls.send_close_notify();
    while tls.wants_write() && tls.write_tls(&mut io).is_ok() {}
    let _ = io.0.shutdown(Shutdown::Write);
    drain_until_closed(&io.0, Duration::from_secs(2));
}

/// Whether the client has closed its side (EOF or error), without consuming data.
fn client_closed(tcp: &TcpStream) -> bool {
    let _ = tcp.set_nonblocking(true);
    let mut b = [0u8; 1];
    let closed = match retry_interrupted(|| tcp.peek(&mut b)) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != io::ErrorKind::WouldBlock,
    };
    let _ = tcp.set_nonblocking(false);
    closed
}

fn drain_until_closed(mut tcp: &TcpStream, limit: Duration) {
    let end = Instant::now() + limit;
    let _ = tcp.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 4096];
    while Instant::now() < end {
        match retry_interrupted(|| tcp.read(&mut buf)) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// Accepts connections on `listener` on a thread of its own (`NAME-accept`), serving each on a
/// thread of its own (`NAME-conn`, small stack) with `serve`, until `stopped` says so (checked
/// at each connection: the owner wakes the loop with one last connection of its own).
pub(crate) fn accept_each(
    listener: TcpListener,
    name: &str,
    stopped: impl Fn() -> bool + Send + 'static,
    serve: impl Fn(TcpStream) + Send + Sync + 'static,
) -> JoinHandle<()> {
    let serve = Arc::new(serve);
    let conn_name = format!("{name}-conn");
    std::thread::Builder::new()
        .name(format!("{name}-accept"))
        .spawn(move || {
            for stream in listener.incoming() {
                if stopped() {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let serve = Arc::clone(&serve);
                let _ = std::thread::Builder::new()
                    .name(conn_name.clone())
                    .stack_size(256 * 1024)
                    .spawn(move || serve(stream));
            }
        })
        .expect("prober-testkit: spawn accept thread")
}
