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
//! - Verification follows [`TlsVerify`](prober_core::TlsVerify). The kubelet's default, `None`, accepts any
//!   certificate and any name but still checks the handshake signatures with the provider's
//!   algorithms, so the server proves it holds the key of the certificate it sent.
//! - Whatever the verification, the leaf certificate's `notAfter` is recorded before the
//!   verdict ([`TlsClient::cert_not_after`]), so an expired certificate is reported as such.
//! - SNI: the options' `server_name`, else the host connected to; an IP address sends none.
//! - [`TlsConn`] is one connection: `handshake` until it says done, then read and write
//!   through [`crate::Transport::Tls`]. Each call moves records with
//!   `read_tls`/`write_tls`/`process_new_packets` until the socket would block, and
//!   `sync_interest` registers for what rustls wants next (`wants_read`/`wants_write`).

use std::io;
use std::sync::{Arc, Mutex};

use crate::conn::Conn;
use mio::{Interest, Token};
use prober_core::{CertInfo, Reason, TlsInfo, TlsOptions, TlsVersion};
use prober_io::{Answer, BlockingJob, Ctx};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};

pub use crate::{ALPN_H2, ALPN_HTTP1};

mod chain;
mod conn;
mod material;
mod verify;

use material::provider;
use verify::Verifier;

pub use conn::TlsConn;
pub use material::{MAX_FILE_BYTES, TlsMaterial, material_parses};

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
        (reason, format!("cannot load the TLS files: {}", prober_core::os_error_text(&e)))
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

/// The versions rustls may negotiate for `opts`: from `min_version` (1.2 by default) up to
/// `max_version` (1.3 by default).
fn protocol_versions(
    opts: &TlsOptions,
) -> Result<&'static [&'static rustls::SupportedProtocolVersion], String> {
    static BOTH: [&rustls::SupportedProtocolVersion; 2] =
        [&rustls::version::TLS13, &rustls::version::TLS12];
    static ONLY_13: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
    static ONLY_12: [&rustls::SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
    let min = opts.min_version.unwrap_or(TlsVersion::Tls12);
    let max = opts.max_version.unwrap_or(TlsVersion::Tls13);
    match (min, max) {
        (TlsVersion::Tls12, TlsVersion::Tls13) => Ok(&BOTH),
        (TlsVersion::Tls13, TlsVersion::Tls13) => Ok(&ONLY_13),
        (TlsVersion::Tls12, TlsVersion::Tls12) => Ok(&ONLY_12),
        // Refused by `TlsOptions::validate` already; a spec built by hand gets the same words.
        (TlsVersion::Tls13, TlsVersion::Tls12) => Err(format!(
            "cannot set up TLS: minimum TLS version {} is above the maximum {}",
            min.as_str(),
            max.as_str()
        )),
    }
}

/// A TLS client configuration for one probe run.
#[derive(Debug)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    verifier: Arc<Verifier>,
    /// The versions offered, for messages: `1.2 only`, `1.3 only`, `1.2 and 1.3`.
    offered: &'static str,
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
            roots: material.roots.clone(),
            pinned: material.pinned.clone(),
            algorithms: provider.signature_verification_algorithms,
            seen: Mutex::new(verify::Seen::default()),
        });
        let versions = protocol_versions(opts)?;
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
        let offered = match versions.len() {
            2 => "1.2 and 1.3",
            _ if opts.max_version == Some(TlsVersion::Tls12) => "1.2 only",
            _ => "1.3 only",
        };
        Ok(TlsClient { config: Arc::new(config), verifier, offered })
    }

    /// Starts TLS on `conn` (registered on `token`) with `name` as SNI and the name verified:
    /// the endpoint's server name, else its host ([`crate::dial`] picks, per connection, so that
    /// one client serves every hop of a run although a redirect to another host drops the
    /// server name).
    ///
    /// # Errors
    /// An invalid server name, or rustls refusing to start: the connection is handed back with
    /// the reason.
    pub fn connect(&self, conn: Conn, token: Token, name: &str) -> Result<TlsConn, (Conn, String)> {
        let server_name = match ServerName::try_from(name.to_string()) {
            Ok(n) => n,
            Err(e) => return Err((conn, format!("invalid TLS server name {name:?}: {e}"))),
        };
        *self.verifier.slot() = verify::Seen::default();
        match ClientConnection::new(self.config.clone(), server_name) {
            Ok(tls) => Ok(TlsConn {
                conn,
                tls,
                token,
                interest: Interest::READABLE | Interest::WRITABLE,
                eof: false,
                first_record_seen: false,
                offered: self.offered,
            }),
            Err(e) => Err((conn, format!("cannot start TLS: {e}"))),
        }
    }

    /// `notAfter` of the leaf certificate the server sent in the latest handshake (seconds
    /// since the epoch), also when verification then failed.
    pub fn cert_not_after(&self) -> Option<i64> {
        self.verifier.slot().not_after
    }

    /// What the latest handshake showed: `conn`'s version and cipher suite once its handshake
    /// is complete, and the certificates the server sent (also when verification then
    /// failed). `None` when no certificate was received and no handshake completed.
    pub fn tls_info(&self, conn: Option<&TlsConn>) -> Option<Arc<TlsInfo>> {
        let done = conn.filter(|c| !c.tls.is_handshaking());
        let seen = self.verifier.slot();
        if seen.certs.is_empty() && done.is_none() {
            return None;
        }
        let expiries: Vec<i64> =
            seen.certs.iter().filter_map(|c| crate::cert::not_after(c.as_ref())).collect();
        let earliest = expiries.iter().copied().min();
        let leaf = seen.certs.first().and_then(|c| {
            let d = crate::cert::describe(c.as_ref())?;
            Some(CertInfo {
                fingerprint_sha256: sha256_hex(c.as_ref()),
                subject: d.subject,
                issuer: d.issuer,
                dns_names: d.dns_names,
                serial: d.serial,
            })
        });
        Some(Arc::new(TlsInfo {
            version: done.and_then(TlsConn::protocol_version),
            cipher_suite: done
                .and_then(|c| c.tls.negotiated_cipher_suite())
                .and_then(|s| suite_name(s.suite())),
            earliest_not_after: earliest,
            // The chains' when known, else (no path found again: never expected) the certificates'
            // sent.
            verified_chain_not_after: if seen.verified {
                seen.chain_not_after.or(earliest)
            } else {
                None
            },
            leaf,
        }))
    }
}

/// The name of one of the ring provider's cipher suites. Its own list, not rustls's
/// `CipherSuite::as_str`: that names every registered suite, hundreds of strings the `prober`
/// binary would carry for the nine it can negotiate.
fn suite_name(suite: rustls::CipherSuite) -> Option<&'static str> {
    use rustls::CipherSuite as S;
    Some(match suite {
        S::TLS13_AES_256_GCM_SHA384 => "TLS13_AES_256_GCM_SHA384",
        S::TLS13_AES_128_GCM_SHA256 => "TLS13_AES_128_GCM_SHA256",
        S::TLS13_CHACHA20_POLY1305_SHA256 => "TLS13_CHACHA20_POLY1305_SHA256",
        S::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        S::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        S::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"
        }
        S::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        S::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        S::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256 => {
            "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"
        }
        _ => return None,
    })
}

/// SHA-256 of `data` in lower-case hex, with the provider's hash (no hashing crate of its own).
fn sha256_hex(data: &[u8]) -> String {
    let suite = rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256;
    match suite.tls13() {
        Some(s) => crate::cert::hex(s.common.hash_provider.hash(data).as_ref()),
        None => String::new(),
    }
}
