//! Key material: the CA, certificate and key files read off the poll thread (non-blocking
//! opens, regular files within [`MAX_FILE_BYTES`]), parsed once per version of the files and
//! cached by their identity; the system trust store, loaded once per process; the crypto
//! provider.

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use prober_core::{TlsOptions, TlsVerify};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::chain::TrustRoots;

pub(super) fn provider() -> Arc<CryptoProvider> {
    static PROVIDER: OnceLock<Arc<CryptoProvider>> = OnceLock::new();
    PROVIDER.get_or_init(|| Arc::new(rustls::crypto::ring::default_provider())).clone()
}

static SYSTEM_ROOTS: OnceLock<Result<Arc<TrustRoots>, String>> = OnceLock::new();

/// The system trust store if it has been loaded already (no file access).
fn system_roots_loaded() -> Option<Result<Arc<TrustRoots>, String>> {
    SYSTEM_ROOTS.get().cloned()
}

/// The system trust store, loaded once per process (reads files: not on a poll thread).
fn system_roots() -> Result<Arc<TrustRoots>, String> {
    SYSTEM_ROOTS
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = TrustRoots::new();
            // What cannot be an anchor is skipped, as `add_parsable_certificates` does.
            for cert in found.certs {
                let _ = roots.add(cert);
            }
            if roots.len() == 0 {
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
            format!("cannot read {what} {:?}: {}", path, prober_core::os_error_text(e))
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
            format!("cannot read {what} {path:?}: {}", prober_core::os_error_text(&e))
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
    pub(super) webpki: Option<Arc<WebPkiServerVerifier>>,
    /// The anchors `webpki` verifies with, and their expiries (for the verified chains').
    pub(super) roots: Option<Arc<TrustRoots>>,
    /// The certificates of the CA file: one of them presented as the server's own is accepted
    /// (see `Verifier`).
    pub(super) pinned: Arc<[CertificateDer<'static>]>,
    pub(super) client: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
    /// Which version of the files this is: equal numbers, the same files parsed once. 0
    /// without verification and 1 with the system's trust store (no file of the options);
    /// each parse of files takes the next number. Resumed sessions are kept per version
    /// (`super::resume`).
    pub(super) generation: u64,
}

/// The generation of the material parsed next (see [`TlsMaterial::generation`]).
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(2);

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
            TlsVerify::None => Some(Ok(Arc::new(TlsMaterial {
                webpki: None,
                roots: None,
                pinned: Arc::new([]),
                client: None,
                generation: 0,
            }))),
            TlsVerify::SystemRoots => {
                let roots = system_roots_loaded()?;
                Some(roots.and_then(|r| {
                    Ok(Arc::new(TlsMaterial {
                        webpki: Some(verifier(&r)?),
                        roots: Some(r),
                        pinned: Arc::new([]),
                        client: None,
                        generation: 1,
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
        let roots = match (&opts.verify, ca) {
            (TlsVerify::None, _) => None,
            (TlsVerify::SystemRoots, _) => Some(system_roots()?),
            (TlsVerify::CaFile(path), Some(file)) => {
                let pem = file.read("CA file")?;
                let mut roots = TrustRoots::new();
                for cert in parse_certs("CA file", path, &pem)? {
                    pinned.push(cert.clone());
                    roots.add(cert).map_err(|e| format!("invalid CA file {path:?}: {e}"))?;
                }
                Some(Arc::new(roots))
            }
            (TlsVerify::CaFile(_), None) => unreachable!("opened above"),
        };
        let webpki = roots.as_deref().map(verifier).transpose()?;
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
        let generation = NEXT_GENERATION.fetch_add(1, Ordering::Relaxed);
        let material =
            Arc::new(TlsMaterial { webpki, roots, pinned: pinned.into(), client, generation });
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

fn verifier(roots: &TrustRoots) -> Result<Arc<WebPkiServerVerifier>, String> {
    WebPkiServerVerifier::builder_with_provider(roots.store.clone(), provider())
        .build()
        .map_err(|e| format!("cannot set up certificate verification: {e}"))
}
