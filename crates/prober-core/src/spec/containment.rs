//! Containing an exec probe's run in a cgroup of its own (red-team finding 9).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::{ProbeKind, ProbeSpec, SpecError};

/// The directory must be absolute (the host's working directory is not a cgroup's) and a
/// path the children can be given (no NUL byte).
pub(super) fn validate_cgroup_dir(dir: &Path) -> Result<(), SpecError> {
    if !dir.is_absolute() || dir.as_os_str().as_bytes().contains(&0) {
        return Err(SpecError::InvalidRequest(format!(
            "invalid cgroup directory {:?} (expected an absolute path without NUL bytes)",
            dir.display().to_string()
        )));
    }
    Ok(())
}

impl ProbeSpec {
    /// Contains every run of an exec probe in a cgroup of its own: a child cgroup is created in
    /// `dir` (a cgroup v2 directory this process may write: one delegated to it, or any as
    /// root) before the spawn, the command is born in it, and at the end of the run (exit,
    /// timeout or cancel) every process in it gets SIGKILL through `cgroup.kill` (Linux 5.14)
    /// and the cgroup is removed once they are gone. That reaches what the process group kill
    /// cannot: processes that left the group (`setsid`, a daemon's double fork). A process that
    /// moves itself to another cgroup (write access there: root can) is not contained.
    ///
    /// The price is a cgroup made and removed per run, and a `fork` instead of `posix_spawn`
    /// for commands on the host (the C library's spawn cannot place a child in a cgroup before
    /// glibc 2.39). `None` (the default): only the command's process group is killed. A
    /// directory that cannot be used (missing, not cgroup v2, not writable, no `cgroup.kill`)
    /// makes each run Unknown with a message naming it; the command is never run uncontained
    /// when containment was asked for.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a relative path, a path with a NUL byte, or a probe
    /// that is not exec; the spec is unchanged.
    pub fn set_exec_cgroup(&mut self, dir: Option<PathBuf>) -> Result<(), SpecError> {
        if let Some(dir) = &dir {
            validate_cgroup_dir(dir)?;
        }
        match &mut self.kind {
            ProbeKind::Exec(e) => {
                e.cgroup = dir;
                Ok(())
            }
            _ => Err(SpecError::InvalidRequest("cgroup applies to exec probes only".to_string())),
        }
    }

    /// [`ProbeSpec::set_exec_cgroup`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_exec_cgroup`].
    pub fn with_exec_cgroup(mut self, dir: impl Into<PathBuf>) -> Result<ProbeSpec, SpecError> {
        self.set_exec_cgroup(Some(dir.into()))?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_exec_cgroup_takes_absolute_paths_on_exec_probes() {
        let mut s = ProbeSpec::exec(&["true"]).unwrap();
        s.set_exec_cgroup(Some("/sys/fs/cgroup/probes".into())).unwrap();
        assert!(matches!(&s.kind, ProbeKind::Exec(e)
            if e.cgroup.as_deref() == Some(Path::new("/sys/fs/cgroup/probes"))));
        let err = s.set_exec_cgroup(Some("relative/dir".into())).unwrap_err();
        assert!(err.to_string().contains("invalid cgroup directory"), "{err}");
        assert!(matches!(&s.kind, ProbeKind::Exec(e) if e.cgroup.is_some()), "unchanged");
        s.kind = match s.kind {
            ProbeKind::Exec(mut e) => {
                e.cgroup = Some("rel".into());
                ProbeKind::Exec(e)
            }
            k => k,
        };
        assert!(s.validate().is_err(), "validate checks the field too");
        s.set_exec_cgroup(None).unwrap();
        assert!(matches!(&s.kind, ProbeKind::Exec(e) if e.cgroup.is_none()));
        let mut tcp = ProbeSpec::tcp("127.0.0.1", 1).unwrap();
        assert!(tcp.set_exec_cgroup(Some("/sys/fs/cgroup".into())).is_err());
    }
}
