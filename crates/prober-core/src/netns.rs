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
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::spec::{ProbeKind, ProbeSpec, SpecError};

/// The longest namespace path accepted (Linux's `PATH_MAX` less the final NUL).
pub const MAX_NETNS_PATH: usize = 4095;

/// A network namespace named by an absolute path, for [`ProbeSpec::set_netns`].
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
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The last spec naming the path is gone: forget it (its descriptor closes with it),
        // unless a new one for the same path was made meanwhile.
        let mut map = interned().lock().unwrap_or_else(|e| e.into_inner());
        if map.get(&self.path).is_some_and(|w| w.strong_count() == 0) {
            map.remove(&self.path);
        }
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

impl ProbeSpec {
    /// Makes the probe's sockets in the network namespace at `path` (TCP, HTTP(S), gRPC and DNS;
    /// beyond the kubelet, KEP-4559's idea): `/run/netns/NAME` as `ip netns` makes them,
    /// `/proc/PID/ns/net` of a container's process, or any bind-mounted namespace file. So
    /// `127.0.0.1` is the container's own loopback. Only the socket is made there: connect,
    /// TLS, HTTP and gRPC run as for any probe, and host names resolve through the host's
    /// resolver (`/etc/hosts` and DNS as this process sees them), not the namespace's.
    ///
    /// # Errors
    ///
    /// As [`NetNs::new`]; [`SpecError::InvalidRequest`] for an exec probe or a probe through a
    /// Unix socket (a socket file is reached through the file system, not a network).
    pub fn set_netns(&mut self, path: impl AsRef<Path>) -> Result<(), SpecError> {
        let ns = NetNs::new(path)?;
        let (slot, unix) = match &mut self.kind {
            ProbeKind::Tcp(t) => (&mut t.netns, t.unix_socket.is_some()),
            ProbeKind::Http(h) => (&mut h.netns, h.unix_socket.is_some()),
            ProbeKind::Grpc(g) => (&mut g.netns, g.unix_socket.is_some()),
            ProbeKind::Dns(d) => (&mut d.netns, false),
            _ => return Err(not_applicable()),
        };
        if unix {
            return Err(with_unix());
        }
        *slot = Some(ns);
        Ok(())
    }

    /// [`ProbeSpec::set_netns`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_netns`].
    pub fn with_netns(mut self, path: impl AsRef<Path>) -> Result<ProbeSpec, SpecError> {
        self.set_netns(path)?;
        Ok(self)
    }

    /// The network namespace the probe's sockets are made in, if it names one.
    pub fn netns(&self) -> Option<&NetNs> {
        match &self.kind {
            ProbeKind::Tcp(t) => t.netns.as_ref(),
            ProbeKind::Http(h) => h.netns.as_ref(),
            ProbeKind::Grpc(g) => g.netns.as_ref(),
            ProbeKind::Dns(d) => d.netns.as_ref(),
            _ => None,
        }
    }
}

fn not_applicable() -> SpecError {
    SpecError::InvalidRequest(
        "a network namespace applies to TCP, HTTP, gRPC and DNS probes only".into(),
    )
}

fn with_unix() -> SpecError {
    SpecError::InvalidRequest(
        "a network namespace does not apply to a probe through a Unix socket".into(),
    )
}

/// The check of [`ProbeSpec::validate`]: a namespace only on a probe that connects over TCP.
pub(crate) fn validate(kind: &ProbeKind) -> Result<(), SpecError> {
    let (ns, unix) = match kind {
        ProbeKind::Tcp(t) => (t.netns.is_some(), t.unix_socket.is_some()),
        ProbeKind::Http(h) => (h.netns.is_some(), h.unix_socket.is_some()),
        ProbeKind::Grpc(g) => (g.netns.is_some(), g.unix_socket.is_some()),
        _ => (false, false),
    };
    if ns && unix { Err(with_unix()) } else { Ok(()) }
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

    #[test]
    fn applies_to_network_probes_only() {
        let mut tcp = ProbeSpec::tcp("127.0.0.1", 80).unwrap();
        tcp.set_netns("/proc/1/ns/net").unwrap();
        assert_eq!(tcp.netns().unwrap().path(), Path::new("/proc/1/ns/net"));
        tcp.validate().unwrap();
        let mut http = ProbeSpec::http("http://127.0.0.1/").unwrap();
        http.set_netns("/proc/1/ns/net").unwrap();
        let mut grpc = ProbeSpec::grpc("127.0.0.1", 1, "").unwrap();
        grpc.set_netns("/proc/1/ns/net").unwrap();
        let mut exec = ProbeSpec::exec(&["true"]).unwrap();
        assert_eq!(
            exec.set_netns("/proc/1/ns/net").unwrap_err().to_string(),
            "a network namespace applies to TCP, HTTP, gRPC and DNS probes only"
        );
        let sock = crate::UnixSocket::path("/run/app.sock").unwrap();
        let mut unix = ProbeSpec::unix(sock.clone()).unwrap();
        assert!(unix.set_netns("/proc/1/ns/net").is_err());
        // Set the other way round, the whole-spec check refuses it.
        http.set_unix_socket(sock).unwrap();
        assert_eq!(
            http.validate().unwrap_err().to_string(),
            "a network namespace does not apply to a probe through a Unix socket"
        );
    }
}
