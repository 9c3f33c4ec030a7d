//! Network namespaces as probe options (issue 29): a TCP, HTTP(S), gRPC or DNS probe may name a
//! network namespace by path (`/run/netns/NAME`, `/proc/PID/ns/net`, any bind-mounted nsfs
//! file); its sockets are made in that namespace and everything after is unchanged.
//!
//! This crate does no I/O: a [`NetNs`] is the validated path, shared by every spec that names
//! it, and the place where `prober-io` keeps the namespace's open descriptor. Because every
//! spec naming a path shares one [`NetNs`] (they are interned by path), the namespace is opened
//! once per path however many probes name it, and its descriptor is closed when the last spec
//! naming it is dropped.

use std::collections::HashMap;
use std::fmt;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::spec::SpecError;

/// The longest namespace path accepted (Linux's `PATH_MAX` less the final NUL).
pub const MAX_NETNS_PATH: usize = 4095;

/// A network namespace named by an absolute path, for
/// [`ProbeSpec::set_netns`](crate::ProbeSpec::set_netns).
///
/// Equal paths give the same shared value (compare, hash and print as the path).
#[derive(Clone)]
pub struct NetNs(Arc<Inner>);

struct Inner {
    path: PathBuf,
    open: Mutex<Option<OpenNetNs>>,
}

/// The namespace file as `prober-io` opened it: its descriptor and the file's identity when it
/// was opened (a path whose identity changed, a restarted container's `/proc/PID/ns/net` for
/// instance, is opened again). Kept here only so that it lives exactly as long as the specs
/// naming the path; this crate never opens, reads or closes it itself.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct OpenNetNs {
    /// `st_dev` of the namespace file.
    pub dev: u64,
    /// `st_ino` of the namespace file (the namespace's own number).
    pub ino: u64,
    /// The descriptor, `O_RDONLY | O_CLOEXEC`.
    pub fd: Arc<OwnedFd>,
}

fn interned() -> &'static Mutex<HashMap<PathBuf, Weak<Inner>>> {
    static MAP: OnceLock<Mutex<HashMap<PathBuf, Weak<Inner>>>> = OnceLock::new();
    MAP.get_or_init(Mutex::default)
}

impl NetNs {
    /// The namespace at `path`, which must be absolute (a relative path would depend on the
    /// working directory of whichever thread opens it).
    ///
    /// Only what can be seen without touching the file is checked here; a path that does not
    /// exist, is not a namespace, is a namespace of another type or cannot be entered is the
    /// run's Unknown result (reason `namespace`), naming the path and why.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an empty or relative path, one with a NUL byte, or one
    /// longer than [`MAX_NETNS_PATH`] bytes.
    pub fn new(path: impl AsRef<Path>) -> Result<NetNs, SpecError> {
        let path = path.as_ref();
        let bytes = path.as_os_str().as_encoded_bytes();
        let refuse = |why: &str| {
            Err(SpecError::InvalidRequest(format!(
                "invalid network namespace path {path:?}: {why}"
            )))
        };
        if bytes.is_empty() {
            return Err(SpecError::InvalidRequest("the network namespace path is empty".into()));
        }
        if bytes.contains(&0) {
            return refuse("it contains a NUL byte");
        }
        if !path.is_absolute() {
            return refuse("it must be absolute (/run/netns/NAME, /proc/PID/ns/net)");
        }
        if bytes.len() > MAX_NETNS_PATH {
            return refuse(&format!("it is {} bytes (at most {MAX_NETNS_PATH})", bytes.len()));
        }
        let mut map = interned().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(inner) = map.get(path).and_then(Weak::upgrade) {
            return Ok(NetNs(inner));
        }
        let inner = Arc::new(Inner { path: path.to_path_buf(), open: Mutex::new(None) });
        map.insert(path.to_path_buf(), Arc::downgrade(&inner));
        Ok(NetNs(inner))
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// The slot of the open namespace file, for `prober-io`.
    #[doc(hidden)]
    pub fn open_slot(&self) -> &Mutex<Option<OpenNetNs>> {
        &self.0.open
    }

    /// A reference that does not keep the path named: for `prober-io`'s per-namespace socket
    /// pools, which must let go of a namespace when the last spec naming it goes.
    #[doc(hidden)]
    pub fn downgrade(&self) -> WeakNetNs {
        WeakNetNs(Arc::downgrade(&self.0))
    }

    /// How many [`NetNs`] values (paths no longer named by any spec) have been let go in this
    /// process so far: a holder of [`WeakNetNs`]es looks for dead ones only when this moved.
    #[doc(hidden)]
    pub fn released() -> u64 {
        RELEASED.load(Ordering::Acquire)
    }
}

/// A [`NetNs`] that does not keep its path named (see [`NetNs::downgrade`]).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct WeakNetNs(Weak<Inner>);

impl WeakNetNs {
    /// Whether some spec still names the path.
    pub fn is_named(&self) -> bool {
        self.0.strong_count() > 0
    }

    /// Whether this refers to `netns` (the same shared value, not only the same path).
    pub fn is(&self, netns: &NetNs) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&netns.0))
    }

    /// A key for maps: the shared value's address, which stays unique while this weak
    /// reference lives (it keeps the allocation).
    pub fn key(&self) -> usize {
        self.0.as_ptr() as usize
    }
}

impl NetNs {
    /// The key [`WeakNetNs::key`] gives for this value.
    #[doc(hidden)]
    pub fn key(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
}

static RELEASED: AtomicU64 = AtomicU64::new(0);

impl fmt::Debug for Inner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("NetNs").field(&self.path).finish()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The last spec naming the path is gone: forget it (its descriptor closes with it),
        // unless a new one for the same path was made meanwhile.
        let mut map = interned().lock().unwrap_or_else(|e| e.into_inner());
        if map.get(&self.path).is_some_and(|w| w.strong_count() == 0) {
            map.remove(&self.path);
        }
        drop(map);
        // After the descriptor has closed (the fields drop after this body runs would be too
        // late for a reader that sees the count move): take it out first.
        drop(self.open.lock().unwrap_or_else(|e| e.into_inner()).take());
        RELEASED.fetch_add(1, Ordering::Release);
    }
}

impl PartialEq for NetNs {
    fn eq(&self, other: &NetNs) -> bool {
        self.0.path == other.0.path
    }
}

impl Eq for NetNs {}

impl std::hash::Hash for NetNs {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.path.hash(state);
    }
}

impl fmt::Debug for NetNs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("NetNs").field(&self.0.path).finish()
    }
}

impl fmt::Display for NetNs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0.path.display())
    }
}

/// The refusal of a namespace on a probe through a Unix socket.
pub(crate) fn with_unix() -> SpecError {
    SpecError::InvalidRequest(
        "a network namespace does not apply to a probe through a Unix socket".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked_where_they_can_be_seen() {
        let err = |p: &str| NetNs::new(p).unwrap_err().to_string();
        assert_eq!(err(""), "the network namespace path is empty");
        assert_eq!(
            err("run/netns/a"),
            "invalid network namespace path \"run/netns/a\": it must be absolute (/run/netns/NAME, /proc/PID/ns/net)"
        );
        assert!(err("/run/netns/a\0b").ends_with("it contains a NUL byte"), "{}", err("/a\0"));
        let long = format!("/{}", "a".repeat(MAX_NETNS_PATH));
        assert!(err(&long).ends_with("bytes (at most 4095)"));
        assert_eq!(NetNs::new("/run/netns/a").unwrap().path(), Path::new("/run/netns/a"));
    }

    #[test]
    fn one_value_per_path_while_named() {
        let a = NetNs::new("/run/netns/interned-test").unwrap();
        let b = NetNs::new("/run/netns/interned-test").unwrap();
        assert!(Arc::ptr_eq(&a.0, &b.0));
        drop((a, b));
        let present =
            interned().lock().unwrap().contains_key(Path::new("/run/netns/interned-test"));
        assert!(!present, "a path nobody names is forgotten");
    }
}
