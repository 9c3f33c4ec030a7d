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
//! - Resumption (opt-in, `TlsOptions::resumption`): the client resumes from the target's
//!   [`crate::TlsSessions`], filed by configuration; a resumed run reports the certificate
//!   facts of the full handshake that made the session (see `resume.rs`). Without it, rustls's
//!   resumption is off altogether: every handshake is a full one, redirect hops included.
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
use rustls::client::Resumption;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::{ServerName, UnixTime};
use rustls::{ClientConfig, ClientConnection, HandshakeKind};

use crate::TlsSessions;

pub use crate::{ALPN_H2, ALPN_HTTP1};

mod chain;
mod conn;
mod material;
pub(crate) mod resume;
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
/// blocking job of `cx` (its answer goes to [`finish_setup`]). `sessions`: the target's, when
/// its options ask for resumption.
pub fn start_setup(
    cx: &Ctx<'_>,
    opts: &TlsOptions,
    alpn: &'static [&'static [u8]],
    sessions: Option<&TlsSessions>,
) -> TlsSetup {
    match TlsMaterial::without_files(opts) {
        Some(material) => TlsSetup::Ready(
            material.and_then(|m| TlsClient::with_material(&m, opts, alpn, sessions)),
        ),
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
    alpn: &'static [&'static [u8]],
    sessions: Option<&TlsSessions>,
) -> Result<TlsClient, (Reason, String)> {
    let answer = answer.map_err(|e| {
        let reason = if Reason::is_local_resource(&e) { Reason::Resource } else { Reason::Tls };
        (reason, format!("cannot load the TLS files: {}", prober_core::os_error_text(&e)))
    })?;
    let tls = |e: String| (Reason::Tls, e);
    match answer.downcast::<Result<Arc<TlsMaterial>, String>>() {
        Ok(material) => {
            let material: Arc<TlsMaterial> = (*material).map_err(tls)?;
            TlsClient::with_material(&material, opts, alpn, sessions).map_err(tls)
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
    /// The target's sessions of this configuration, when resumption is on.
    resume: Option<Arc<resume::Config>>,
}

impl TlsClient {
    /// Builds the configuration, reading the CA, certificate and key files the options name
    /// (through the cache of [`TlsMaterial::load`]). Blocks on the file system: probes use
    /// [`start_setup`] instead. `alpn`: the protocols offered, in order of preference.
    ///
    /// # Errors
    /// A complete sentence for an Unknown outcome: the files ([`TlsMaterial::load`]) or the
    /// configuration ([`TlsClient::with_material`]).
    pub fn new(opts: &TlsOptions, alpn: &'static [&'static [u8]]) -> Result<TlsClient, String> {
        let material = TlsMaterial::load(opts)?;
        TlsClient::with_material(&material, opts, alpn, None)
    }

    /// Builds the configuration from loaded material (no file access). With `sessions` (and
    /// options that ask for resumption), the client resumes from and keeps sessions in the
    /// target's store of this configuration; else resumption is off.
    ///
    /// # Errors
    /// A complete sentence: the protocol versions cannot be set up, or the client certificate
    /// does not go with its key.
    pub fn with_material(
        material: &TlsMaterial,
        opts: &TlsOptions,
        alpn: &'static [&'static [u8]],
        sessions: Option<&TlsSessions>,
    ) -> Result<TlsClient, String> {
        let versions = protocol_versions(opts)?;
        let offered = match versions.len() {
            2 => "1.2 and 1.3",
            _ if opts.max_version == Some(TlsVersion::Tls12) => "1.2 only",
            _ => "1.3 only",
        };
        let resume = sessions
            .filter(|_| opts.resumption)
            .map(|s| s.inner.config(opts, alpn, material.generation));
        // rustls resumes a session only with the very verifier and client credentials that
        // made it: the configuration's client is built once and kept with its sessions.
        if let Some((config, verifier)) = resume.as_ref().and_then(|r| r.client()) {
            return Ok(TlsClient { config, verifier, offered, resume });
        }
        let provider = provider();
        let verifier = Arc::new(Verifier {
            webpki: material.webpki.clone(),
            roots: material.roots.clone(),
            pinned: material.pinned.clone(),
            algorithms: provider.signature_verification_algorithms,
            seen: Mutex::new(verify::Seen::default()),
        });
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
        config.resumption = match &resume {
            Some(r) => r.resumption(),
            None => no_resumption(),
        };
        let config = Arc::new(config);
        if let Some(r) = &resume {
            r.keep_client(config.clone(), verifier.clone());
        }
        Ok(TlsClient { config, verifier, offered, resume })
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
        let resume_name = self.resume.as_ref().map(|r| {
            r.drop_expired(&server_name, unix_now());
            server_name.clone()
        });
        match ClientConnection::new(self.config.clone(), server_name) {
            Ok(tls) => Ok(TlsConn {
                conn,
                tls,
                token,
                interest: Interest::READABLE | Interest::WRITABLE,
                eof: false,
                first_record_seen: false,
                offered: self.offered,
                resume_name,
            }),
            Err(e) => Err((conn, format!("cannot start TLS: {e}"))),
        }
    }

    /// After `conn`'s handshake completed, with resumption on: the certificate facts of a full
    /// handshake are kept beside its sessions, and a resumed one takes those of the full
    /// handshake that made its session (rustls gives that handshake's chain, by which they are
    /// found). The verifier is the configuration's, shared by its runs: facts that are not
    /// those of `conn`'s chain (another run's handshake came in between, or a resumed chain
    /// with no facts kept) are made again by verifying the chain, as a full handshake would.
    /// [`TlsClient::tls_info`] and [`TlsClient::cert_not_after`] then say the same as after a
    /// full handshake.
    ///
    /// # Errors
    /// rustls's words for a chain verified again that does not verify.
    pub fn settle(&self, conn: &TlsConn) -> Result<(), String> {
        let (Some(resume), Some(name)) = (&self.resume, &conn.resume_name) else {
            return Ok(());
        };
        let chain = conn.tls.peer_certificates().unwrap_or(&[]);
        if conn.tls.handshake_kind() == Some(HandshakeKind::Resumed) {
            if let Some(seen) = resume.facts(name, chain) {
                *self.verifier.slot() = seen;
                return Ok(());
            }
        } else if self.verifier.slot().certs.as_slice() == chain {
            resume.record(name, &self.verifier.slot());
            return Ok(());
        }
        let Some((leaf, rest)) = chain.split_first() else {
            return Err("the TLS session carries no certificate".to_string());
        };
        self.verifier
            .verify_server_cert(leaf, rest, name, &[], UnixTime::now())
            .map_err(|e| e.to_string())?;
        resume.record(name, &self.verifier.slot());
        Ok(())
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
            resumed: done.is_some_and(TlsConn::resumed),
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

/// rustls's resumption turned off, made once: a run without resumption allocates no store.
fn no_resumption() -> Resumption {
    static OFF: std::sync::OnceLock<Resumption> = std::sync::OnceLock::new();
    OFF.get_or_init(Resumption::disabled).clone()
}

/// Seconds since the epoch now.
fn unix_now() -> i64 {
    i64::try_from(UnixTime::now().as_secs()).unwrap_or(i64::MAX)
}

/// SHA-256 of `data` in lower-case hex, with the provider's hash (no hashing crate of its own).
fn sha256_hex(data: &[u8]) -> String {
    let suite = rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256;
    match suite.tls13() {
        Some(s) => crate::cert::hex(s.common.hash_provider.hash(data).as_ref()),
        None => String::new(),
    }
}
