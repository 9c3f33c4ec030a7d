//! Unix domain sockets as probe endpoints (issue 25): HTTP over a Unix socket (curl's
//! `--unix-socket`), a connect check of a Unix socket, gRPC health over `unix:` and
//! `unix-abstract:` targets (gRPC's naming, which grpc-health-probe accepts).

use std::fmt;
use std::path::PathBuf;

use crate::spec::SpecError;

/// The longest socket path or abstract name: `sun_path` is 108 bytes on Linux, one of which
/// is the path's final NUL (an abstract name has a leading NUL instead).
pub const MAX_UNIX_PATH: usize = 107;

/// A Unix domain socket to connect to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnixSocket {
    /// A socket file (`/run/app.sock`; a relative path is taken from the process's working
    /// directory at each connect).
    Path(PathBuf),
    /// A Linux abstract socket, by its name without the leading NUL (gRPC's
    /// `unix-abstract:NAME`, written `@NAME` by `ss` and in messages). Any bytes, NUL included.
    Abstract(Vec<u8>),
}

impl UnixSocket {
    /// A socket file at `path`.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an empty path, one with a NUL byte, or one longer than
    /// [`MAX_UNIX_PATH`] bytes.
    pub fn path(path: impl Into<PathBuf>) -> Result<UnixSocket, SpecError> {
        let s = UnixSocket::Path(path.into());
        s.validate()?;
        Ok(s)
    }

    /// A Linux abstract socket named `name` (without the leading NUL).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an empty name or one longer than [`MAX_UNIX_PATH`].
    pub fn abstract_name(name: impl Into<Vec<u8>>) -> Result<UnixSocket, SpecError> {
        let s = UnixSocket::Abstract(name.into());
        s.validate()?;
        Ok(s)
    }

    /// A socket in gRPC's naming: `unix:PATH` (relative or absolute), `unix:///ABSOLUTE`,
    /// `unix-abstract:NAME`; a text without a scheme is a path, as curl's `--unix-socket`.
    ///
    /// # Errors
    ///
    /// As [`UnixSocket::path`] and [`UnixSocket::abstract_name`]; `unix://HOST/...` with a
    /// host is refused, as gRPC refuses it.
    pub fn parse(target: &str) -> Result<UnixSocket, SpecError> {
        if let Some(name) = target.strip_prefix("unix-abstract:") {
            return UnixSocket::abstract_name(name.as_bytes());
        }
        if let Some(rest) = target.strip_prefix("unix://") {
            if !rest.starts_with('/') {
                return Err(SpecError::InvalidRequest(format!(
                    "invalid Unix socket target {target:?} (unix:// takes an absolute path: unix:///run/app.sock)"
                )));
            }
            return UnixSocket::path(rest);
        }
        UnixSocket::path(target.strip_prefix("unix:").unwrap_or(target))
    }

    /// Checks the path or name (see the constructors).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] saying what is wrong.
    pub fn validate(&self) -> Result<(), SpecError> {
        let (what, bytes) = match self {
            UnixSocket::Path(p) => ("Unix socket path", p.as_os_str().as_encoded_bytes()),
            UnixSocket::Abstract(n) => ("abstract Unix socket name", n.as_slice()),
        };
        if bytes.is_empty() {
            return Err(SpecError::InvalidRequest(format!("{what} is empty")));
        }
        if matches!(self, UnixSocket::Path(_)) && bytes.contains(&0) {
            return Err(SpecError::InvalidRequest(format!("{what} contains a NUL byte")));
        }
        if bytes.len() > MAX_UNIX_PATH {
            return Err(SpecError::InvalidRequest(format!(
                "{what} is {} bytes (at most {MAX_UNIX_PATH})",
                bytes.len()
            )));
        }
        Ok(())
    }
}

impl fmt::Display for UnixSocket {
    /// The path as it is; an abstract name with `@` in front, as Go and `ss` print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnixSocket::Path(p) => write!(f, "{}", p.display()),
            UnixSocket::Abstract(n) => write!(f, "@{}", String::from_utf8_lossy(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProbeKind, ProbeSpec};

    #[test]
    fn grpc_naming() {
        assert_eq!(UnixSocket::parse("unix:///run/a.sock"), UnixSocket::path("/run/a.sock"));
        assert_eq!(UnixSocket::parse("unix:/run/a.sock"), UnixSocket::path("/run/a.sock"));
        assert_eq!(UnixSocket::parse("unix:rel.sock"), UnixSocket::path("rel.sock"));
        assert_eq!(UnixSocket::parse("/x"), UnixSocket::path("/x"));
        assert_eq!(UnixSocket::parse("unix-abstract:app"), UnixSocket::abstract_name("app"));
        assert!(UnixSocket::parse("unix://host/x").is_err());
        assert!(UnixSocket::parse("unix:").is_err());
        assert!(UnixSocket::parse("unix-abstract:").is_err());
        let long = format!("/{}", "a".repeat(MAX_UNIX_PATH));
        assert_eq!(
            UnixSocket::parse(&long).unwrap_err().to_string(),
            "Unix socket path is 108 bytes (at most 107)"
        );
        assert_eq!(UnixSocket::abstract_name("app").unwrap().to_string(), "@app");
        assert_eq!(UnixSocket::path("/a b").unwrap().to_string(), "/a b");
    }

    #[test]
    fn specs_through_unix_sockets() {
        let s = ProbeSpec::unix(UnixSocket::path("/run/a.sock").unwrap()).unwrap();
        assert!(
            matches!(&s.kind, ProbeKind::Tcp(t) if t.connect.unix_socket.is_some() && t.port == 0)
        );
        assert!(s.validate().is_ok());
        let mut h = ProbeSpec::http("http://localhost/healthz").unwrap();
        h.set_unix_socket(UnixSocket::abstract_name("x").unwrap()).unwrap();
        assert!(matches!(&h.kind, ProbeKind::Http(h) if h.connect.unix_socket.is_some()));
        let mut e = ProbeSpec::exec(&["true"]).unwrap();
        assert_eq!(
            e.set_unix_socket(UnixSocket::path("/a").unwrap()).unwrap_err().to_string(),
            "a Unix socket applies to TCP, HTTP and gRPC probes only"
        );
        if let ProbeKind::Http(hh) = &mut h.kind {
            hh.connect.unix_socket = Some(UnixSocket::Path("".into()));
        }
        assert!(h.validate().is_err());
    }
}
