//! TLS clients for probes (feature `tls`): rustls with the ring provider, driven without
//! blocking over a mio socket.
//!
//! - [`TlsClient`] is built from [`TlsOptions`] once per probe run, from [`TlsMaterial`]: the
//!   parsed CA, certificate and key files. Files are a peer of the probe like any other input
//!   (a FIFO, a device, a huge file, a hung network file system), so they are never touched
//!   on a poll thread: [`start_setup`] hands the loading to the blocking-job pool of
//!   `prober-io` and the probe's deadline keeps running meanwhile. Loading opens each file
//!   non-blocking, accepts regular files of at most [`MAX_FILE_BYTES`] only, and reads no more.
//!   Parsed material is cached by the files' identity (path, device, inode, size, mtime), so
//!   each run only checks the files (`open` + `fstat`) and a renewed file is picked up by the
//!   next run. The system trust store is loaded once per process, also off the poll thread.
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

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use mio::{Interest, Registry, Token};
use prober_core::{ClosePolicy, Reason, TlsOptions, TlsVerify, TlsVersion};
use prober_io::{Answer, BlockingJob, Ctx, retry_interrupted};
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
pub use crate::{ALPN_H2, ALPN_HTTP1};

fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider())).clone()
}

static SYSTEM_ROOTS: OnceLock<Result<Arc<RootCertStore>, String>> = OnceLock::new();

/// The system trust store if it has been loaded already (no file access).
fn system_roots_loaded() -> Option<Result<Arc<RootCertStore>, String>> {
    SYSTEM_ROOTS.get().cloned()
}

/// The system trust store, loaded once per process (reads files: not on a poll thread).
fn system_roots() -> Result<Arc<RootCertStore>, String> {
    SYSTEM_ROOTS
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

/// The largest CA, certificate or key file accepted: far above any real bundle (the Mozilla
/// roots are about 220 KB of PEM), far below what could hurt the process.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Where a file is and which version of it: equal identities mean an unchanged file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct FileId {
    path: PathBuf,
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
}

/// A TLS file opened for reading: non-blocking (a FIFO must not wait for a writer), checked to
/// be a regular file within [`MAX_FILE_BYTES`].
struct TlsFile {
    file: std::fs::File,
    id: FileId,
}

impl TlsFile {
    fn open(what: &str, path: &Path) -> Result<TlsFile, String> {
        let cannot = |e: &io::Error| {
            format!("cannot read {what} {:?}: {}", path, prober_io::os_error_text(e))
        };
        // std opens with O_CLOEXEC; O_NONBLOCK: opening a FIFO does not wait for a writer;
        // O_NOCTTY: a terminal named here does not become ours.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(|e| cannot(&e))?;
        let meta = file.metadata().map_err(|e| cannot(&e))?;
        if !meta.file_type().is_file() {
            return Err(format!("cannot read {what} {path:?}: not a regular file"));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(format!(
                "cannot read {what} {path:?}: larger than the limit of {MAX_FILE_BYTES} bytes ({} bytes)",
                meta.len()
            ));
        }
        let id = FileId {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        };
        Ok(TlsFile { file, id })
    }

    /// The contents, at most [`MAX_FILE_BYTES`] even if the file grew since it was checked.
    fn read(self, what: &str) -> Result<Vec<u8>, String> {
        let path = &self.id.path;
        let mut buf = Vec::with_capacity(self.id.size as usize);
        self.file.take(MAX_FILE_BYTES + 1).read_to_end(&mut buf).map_err(|e| {
            format!("cannot read {what} {path:?}: {}", prober_io::os_error_text(&e))
        })?;
        if buf.len() as u64 > MAX_FILE_BYTES {
            return Err(format!(
                "cannot read {what} {path:?}: larger than the limit of {MAX_FILE_BYTES} bytes"
            ));
        }
        Ok(buf)
    }
}

fn parse_certs(
    what: &str,
    path: &Path,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("invalid {what} {path:?}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("invalid {what} {path:?}: no PEM certificate in it"));
    }
    Ok(certs)
}

fn parse_key(path: &Path, pem: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            format!("invalid client key file {path:?}: no PEM private key in it")
        }
        e => format!("invalid client key file {path:?}: {e}"),
    })
}

/// The parsed files of one [`TlsOptions`]: what every run with unchanged files shares.
#[derive(Debug)]
pub struct TlsMaterial {
    /// `None`: accept any certificate (`TlsVerify::None`).
    webpki: Option<Arc<WebPkiServerVerifier>>,
    /// The certificates of the CA file: one of them presented as the server's own is accepted
    /// (see [`Verifier`]).
    pinned: Arc<[CertificateDer<'static>]>,
    client: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
}

/// What the material of some options was made from: the verification mode and every file's
/// identity. Material depends on nothing else of the options (server name, versions and ALPN
/// are applied per run), so those are not part of the key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct MaterialKey {
    system_roots: bool,
    ca: Option<FileId>,
    client: Option<(FileId, FileId)>,
}

impl MaterialKey {
    /// Whether both name the same files (in whatever version).
    fn same_files(&self, other: &MaterialKey) -> bool {
        self.paths() == other.paths()
    }

    fn paths(&self) -> (bool, Option<&Path>, Option<(&Path, &Path)>) {
        let ca = self.ca.as_ref().map(|f| f.path.as_path());
        let client = self.client.as_ref().map(|(c, k)| (c.path.as_path(), k.path.as_path()));
        (self.system_roots, ca, client)
    }
}

/// At most this many parsed materials are kept (one per set of files: a new version of the
/// files replaces the old one); when full, the cache is emptied and refills with what is in
/// use. With files of at most [`MAX_FILE_BYTES`], that bounds it to some tens of MiB at worst.
const MATERIAL_CACHE_CAP: usize = 64;

fn material_cache() -> &'static Mutex<HashMap<MaterialKey, Arc<TlsMaterial>>> {
    static CACHE: OnceLock<Mutex<HashMap<MaterialKey, Arc<TlsMaterial>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

static PARSES: AtomicU64 = AtomicU64::new(0);

/// How many times TLS files have been read and parsed in this process (a cache miss), for
/// tests and diagnostics: an unchanged file is parsed once, however many runs use it.
pub fn material_parses() -> u64 {
    PARSES.load(Ordering::Relaxed)
}

impl TlsMaterial {
    /// Material that needs no file access: `None` when `opts` name files, or the system trust
    /// store is not loaded yet (then [`TlsMaterial::load`] must run off the poll thread).
    pub fn without_files(opts: &TlsOptions) -> Option<Result<Arc<TlsMaterial>, String>> {
        if opts.client_cert.is_some() {
            return None;
        }
        match &opts.verify {
            TlsVerify::None => {
                Some(Ok(Arc::new(TlsMaterial { webpki: None, pinned: Arc::new([]), client: None })))
            }
            TlsVerify::SystemRoots => {
                let roots = system_roots_loaded()?;
                Some(roots.and_then(|r| {
                    Ok(Arc::new(TlsMaterial {
                        webpki: Some(verifier(r)?),
                        pinned: Arc::new([]),
                        client: None,
                    }))
                }))
            }
            TlsVerify::CaFile(_) => None,
        }
    }

    /// Opens, checks, reads and parses the files `opts` name, or takes their parsed material
    /// from the cache when every file is unchanged. Blocks (file system access): call it off
    /// the poll thread.
    ///
    /// # Errors
    /// A complete sentence naming the file that is missing, unreadable, too large, not a
    /// regular file or not PEM that parses.
    pub fn load(opts: &TlsOptions) -> Result<Arc<TlsMaterial>, String> {
        if let Some(ready) = TlsMaterial::without_files(opts) {
            return ready;
        }
        let ca = match &opts.verify {
            TlsVerify::CaFile(path) => Some(TlsFile::open("CA file", path)?),
            _ => None,
        };
        let client = match &opts.client_cert {
            Some((cert, key)) => Some((
                TlsFile::open("client certificate file", cert)?,
                TlsFile::open("client key file", key)?,
            )),
            None => None,
        };
        let key = MaterialKey {
            system_roots: matches!(opts.verify, TlsVerify::SystemRoots),
            ca: ca.as_ref().map(|f| f.id.clone()),
            client: client.as_ref().map(|(c, k)| (c.id.clone(), k.id.clone())),
        };
        if let Some(hit) = lock(material_cache()).get(&key) {
            return Ok(hit.clone());
        }
        PARSES.fetch_add(1, Ordering::Relaxed);
        let mut pinned = Vec::new();
        let webpki = match (&opts.verify, ca) {
            (TlsVerify::None, _) => None,
            (TlsVerify::SystemRoots, _) => Some(verifier(system_roots()?)?),
            (TlsVerify::CaFile(path), Some(file)) => {
                let pem = file.read("CA file")?;
                let mut roots = RootCertStore::empty();
                for cert in parse_certs("CA file", path, &pem)? {
                    pinned.push(cert.clone());
                    roots.add(cert).map_err(|e| format!("invalid CA file {path:?}: {e}"))?;
                }
                Some(verifier(Arc::new(roots))?)
            }
            (TlsVerify::CaFile(_), None) => unreachable!("opened above"),
        };
        let client = match (client, &opts.client_cert) {
            (Some((cert_file, key_file)), Some((cert, key))) => {
                let chain = parse_certs(
                    "client certificate file",
                    cert,
                    &cert_file.read("client certificate file")?,
                )?;
                let key = parse_key(key, &key_file.read("client key file")?)?;
                Some((chain, key))
            }
            _ => None,
        };
        let material = Arc::new(TlsMaterial { webpki, pinned: pinned.into(), client });
        let mut cache = lock(material_cache());
        // Older versions of the same files are of no use any more.
        cache.retain(|k, _| !k.same_files(&key));
        if cache.len() >= MATERIAL_CACHE_CAP {
            cache.clear();
        }
        cache.insert(key, material.clone());
        Ok(material)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn verifier(roots: Arc<RootCertStore>) -> Result<Arc<WebPkiServerVerifier>, String> {
    WebPkiServerVerifier::builder_with_provider(roots, provider())
        .build()
        .map_err(|e| format!("cannot set up certificate verification: {e}"))
}

/// Getting a run's [`TlsClient`] without blocking the poll thread: see [`start_setup`].
#[derive(Debug)]
pub enum TlsSetup {
    /// Built at once (no file involved), or why not.
    Ready(Result<TlsClient, String>),
    /// The files are being loaded: keep the job until its answer reaches
    /// [`prober_io::Machine::job_done`], then call [`finish_setup`].
    Loading(BlockingJob),
}

/// Starts building the TLS client for `opts`: at once when no file is involved, else through a
/// blocking job of `cx` (its answer goes to [`finish_setup`]).
pub fn start_setup(cx: &Ctx<'_>, opts: &TlsOptions, alpn: &[&[u8]]) -> TlsSetup {
    match TlsMaterial::without_files(opts) {
        Some(material) => {
            TlsSetup::Ready(material.and_then(|m| TlsClient::with_material(&m, opts, alpn)))
        }
        None => {
            let opts = opts.clone();
            TlsSetup::Loading(cx.run_blocking(move || Box::new(TlsMaterial::load(&opts)) as Answer))
        }
    }
}

/// The TLS client for `opts` from the answer of the job [`start_setup`] started.
///
/// The error comes with its reason: `resource` when the node could not run the job (no thread,
/// no descriptor), `tls` for everything about the files themselves.
///
/// # Errors
/// As said: the reason and the text of what failed.
pub fn finish_setup(
    answer: io::Result<Answer>,
    opts: &TlsOptions,
    alpn: &[&[u8]],
) -> Result<TlsClient, (Reason, String)> {
    let answer = answer.map_err(|e| {
        let reason = if Reason::is_local_resource(&e) { Reason::Resource } else { Reason::Tls };
        (reason, format!("cannot load the TLS files: {}", prober_io::os_error_text(&e)))
    })?;
    let tls = |e: String| (Reason::Tls, e);
    match answer.downcast::<Result<Arc<TlsMaterial>, String>>() {
        Ok(material) => {
            let material: Arc<TlsMaterial> = (*material).map_err(tls)?;
            TlsClient::with_material(&material, opts, alpn).map_err(tls)
        }
        Err(_) => Err(tls("cannot load the TLS files: unexpected answer".to_string())),
    }
}

/// Accepts or verifies the server's certificate, recording its expiry first.
///
/// A certificate that is byte for byte one of the CA file's is accepted when the chain check
/// refuses it (as rustls refuses a `CA:TRUE` certificate used by a server, which is what
/// `openssl req -x509` makes), provided its name and validity period fit, as Go's and
/// OpenSSL's verifiers accept it: it was pinned by the user.
#[derive(Debug)]
struct Verifier {
    /// `None`: accept any certificate (signatures are still checked).
    webpki: Option<Arc<WebPkiServerVerifier>>,
    pinned: Arc<[CertificateDer<'static>]>,
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
        let Some(v) = &self.webpki else { return Ok(ServerCertVerified::assertion()) };
        match v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(e) if self.pinned.iter().any(|c| c.as_ref() == end_entity.as_ref()) => {
                verify_pinned(end_entity, server_name, now).map_err(|_| e)
            }
            other => other,
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

/// A TLS client configuration for one probe run.
#[derive(Debug)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    verifier: Arc<Verifier>,
    server_name: Option<String>,
}

impl TlsClient {
    /// Builds the configuration, reading the CA, certificate and key files the options name
    /// (through the cache of [`TlsMaterial::load`]). Blocks on the file system: probes use
    /// [`start_setup`] instead. `alpn`: the protocols offered, in order of preference.
    ///
    /// # Errors
    /// A complete sentence for an Unknown outcome: the files ([`TlsMaterial::load`]) or the
    /// configuration ([`TlsClient::with_material`]).
    pub fn new(opts: &TlsOptions, alpn: &[&[u8]]) -> Result<TlsClient, String> {
        let material = TlsMaterial::load(opts)?;
        TlsClient::with_material(&material, opts, alpn)
    }

    /// Builds the configuration from loaded material (no file access).
    ///
    /// # Errors
    /// A complete sentence: the protocol versions cannot be set up, or the client certificate
    /// does not go with its key.
    pub fn with_material(
        material: &TlsMaterial,
        opts: &TlsOptions,
        alpn: &[&[u8]],
    ) -> Result<TlsClient, String> {
        let provider = provider();
        let verifier = Arc::new(Verifier {
            webpki: material.webpki.clone(),
            pinned: material.pinned.clone(),
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
        let mut config = match (&material.client, &opts.client_cert) {
            (Some((chain, key_der)), Some((cert, key))) => {
                builder.with_client_auth_cert(chain.clone(), key_der.clone_key()).map_err(|e| {
                    format!("client certificate {cert:?} does not go with key {key:?}: {e}")
                })?
            }
            _ => builder.with_no_client_auth(),
        };
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(TlsClient { config: Arc::new(config), verifier, server_name: opts.server_name.clone() })
    }

    /// Starts TLS on `conn` (registered on `token`) to `host`, or the options' server name.
    ///
    /// # Errors
    /// An invalid server name, or rustls refusing to start: the connection is handed back with
    /// the reason.
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
                first_record_seen: false,
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
    /// Whether the server's first five bytes have been seen (and were not `HTTP/`).
    first_record_seen: bool,
}

impl TlsConn {
    /// Advances the handshake as far as the socket allows: `Ok(true)` once it is complete.
    ///
    /// # Errors
    /// A socket error, a TLS failure (alert, verification), or the server closing first.
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
            if !self.first_record_seen && !self.check_first_record()? {
                return Ok(false);
            }
            match retry_interrupted(|| self.tls.read_tls(self.conn.stream())) {
                Ok(0) => {
                    return Err(TransportError::Tls(
                        "the server closed the connection during the handshake (EOF)".into(),
                    ));
                }
                Ok(_) => self.process()?,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) => return Err(TransportError::io("read", e)),
            }
        }
    }

    /// Looks at the server's first bytes without consuming them, as Go's transport looks at
    /// the first record header: `HTTP/` there is a plain HTTP server. `Ok(false)` while
    /// nothing has arrived. A first segment shorter than five bytes is not looked at (an HTTP
    /// server writes its status line in one piece); EOF and socket errors are left to the read
    /// that follows.
    fn check_first_record(&mut self) -> Result<bool, TransportError> {
        let mut head = [0u8; 5];
        match retry_interrupted(|| self.conn.stream().peek(&mut head)) {
            Ok(5) if &head == b"HTTP/" => Err(TransportError::HttpResponseToHttps),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            Ok(_) | Err(_) => {
                self.first_record_seen = true;
                Ok(true)
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
            match retry_interrupted(|| self.tls.read_tls(self.conn.stream())) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
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
            retry_interrupted(|| self.tls.write_tls(self.conn.stream()))
                .map_err(|e| TransportError::io("write", e))?;
        }
        Ok(())
    }

    /// Updates the registration's interest to what rustls wants next (see the module docs).
    pub fn sync_interest(&mut self, registry: &Registry) {
        let want = self.wanted_interest();
        if want != self.interest
            && registry.reregister(self.conn.stream(), self.token, want).is_ok()
        {
            self.interest = want;
        }
    }

    /// See [`crate::Transport::is_quiet`].
    pub(crate) fn is_quiet(&mut self) -> bool {
        if self.eof || self.tls.wants_write() {
            return false;
        }
        let mut byte = [0u8; 1];
        let buffered = match self.tls.reader().read(&mut byte) {
            Err(e) => e.kind() != io::ErrorKind::WouldBlock,
            // Data, or the peer's close_notify.
            Ok(_) => true,
        };
        !buffered && crate::peer_is_quiet(&mut self.conn)
    }

    /// What rustls needs the socket for next.
    fn wanted_interest(&self) -> Interest {
        match (self.tls.wants_read(), self.tls.wants_write()) {
            (true, true) => Interest::READABLE | Interest::WRITABLE,
            (false, true) => Interest::WRITABLE,
            _ => Interest::READABLE,
        }
    }

    /// See [`crate::Transport::rearm`]. Registered for what rustls wants next, as
    /// [`TlsConn::sync_interest`] would leave it: for an idle connection that is reading only,
    /// so the first read of the run that takes it finds the interest it needs instead of
    /// re-registering a second time.
    pub(crate) fn rearm(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let interest = self.wanted_interest();
        registry.reregister(self.conn.stream(), token, interest)?;
        self.token = token;
        self.interest = interest;
        Ok(())
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

    /// The TCP connection underneath.
    pub fn conn(&self) -> &Conn {
        &self.conn
    }

    /// The TCP connection underneath, mutably.
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
