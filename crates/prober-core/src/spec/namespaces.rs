//! Exec probes inside another process's namespaces (issue 29, section 2).

use super::{ProbeKind, ProbeSpec, SpecError};

/// The largest PID Linux hands out (`PID_MAX_LIMIT` on 64-bit systems, 2^22).
const PID_MAX_LIMIT: u32 = 1 << 22;

/// A PID that can name a process: 1 to 2^22. PID 0 would mean "ourselves" to several system
/// calls, which is never what a spec means.
pub(super) fn validate_pid(pid: u32) -> Result<(), SpecError> {
    if pid == 0 || pid > PID_MAX_LIMIT {
        return Err(SpecError::InvalidRequest(format!(
            "invalid PID {pid} for namespacesOf (expected 1 to {PID_MAX_LIMIT})"
        )));
    }
    Ok(())
}

impl ProbeSpec {
    /// Runs an exec probe's command inside the namespaces of process `pid` (mount, UTS, IPC,
    /// network, PID, cgroup and time; its user namespace only where it differs from ours), with
    /// that process's root and working directory, as `nsenter --target PID --all` does, but
    /// without a wrapper program: the child enters them between fork and exec. The command is
    /// found in the target's file system and keeps this process's credentials (root stays
    /// root); everything else an exec probe promises holds (bounded output, the process group
    /// killed at the deadline, only descriptors 0 to 2, exit codes). `None` runs on the host.
    ///
    /// A process that is gone, or namespaces this process may not enter (no `CAP_SYS_ADMIN`),
    /// make that run Unknown with a message naming the PID and the reason; the spec stays valid.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for PID 0 or above 2^22, or a probe that is not exec; the
    /// spec is unchanged.
    pub fn set_namespaces_of(&mut self, pid: Option<u32>) -> Result<(), SpecError> {
        if let Some(pid) = pid {
            validate_pid(pid)?;
        }
        match &mut self.kind {
            ProbeKind::Exec(e) => {
                e.namespaces_of = pid;
                Ok(())
            }
            _ => Err(SpecError::InvalidRequest(
                "namespacesOf applies to exec probes only".to_string(),
            )),
        }
    }

    /// [`ProbeSpec::set_namespaces_of`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_namespaces_of`].
    pub fn with_namespaces_of(mut self, pid: u32) -> Result<ProbeSpec, SpecError> {
        self.set_namespaces_of(Some(pid))?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exec_probes_and_real_pids() {
        let mut s = ProbeSpec::exec(&["true"]).unwrap();
        s.set_namespaces_of(Some(42)).unwrap();
        assert!(matches!(&s.kind, ProbeKind::Exec(e) if e.namespaces_of == Some(42)));
        s.validate().unwrap();
        for bad in [0, PID_MAX_LIMIT + 1] {
            let err = s.set_namespaces_of(Some(bad)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("invalid PID {bad} for namespacesOf (expected 1 to 4194304)")
            );
        }
        assert!(matches!(&s.kind, ProbeKind::Exec(e) if e.namespaces_of == Some(42)));
        s.set_namespaces_of(None).unwrap();
        assert!(matches!(&s.kind, ProbeKind::Exec(e) if e.namespaces_of.is_none()));

        let mut tcp = ProbeSpec::tcp("127.0.0.1", 80).unwrap();
        let err = tcp.set_namespaces_of(Some(1)).unwrap_err();
        assert_eq!(err.to_string(), "namespacesOf applies to exec probes only");
    }
}
