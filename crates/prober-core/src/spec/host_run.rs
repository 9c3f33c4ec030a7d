//! Host-run probes: the engine schedules a run and judges it by the worker rules, the host
//! performs it (a CRI `ExecSync`, a call into a VM's agent) and completes it with a result.

use super::error::SpecError;

/// The longest [`HostRunSpec::label`], in bytes: a label names the run in messages and events,
/// it is not a payload.
pub const MAX_HOST_RUN_LABEL: usize = 4096;

/// A probe whose run the host performs: the engine announces each run (an event carrying the
/// run's id, its target and role) and the host completes it with a result and output before the
/// probe's timeout, or the run ends as a timeout. Scheduling, thresholds, startup gating and the
/// retries of Unknown results are the engine's, as for every other kind.
///
/// For runtimes that cannot share a container's namespaces (a CRI client calling `ExecSync`, a
/// VM-based runtime) but want the engine's kubelet semantics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRunSpec {
    /// What the run is, in words the host chooses (a command line, say): it is carried by the
    /// run's announcement and quoted in the message of a run that times out. May be empty.
    pub label: String,
}

pub(super) fn validate_label(label: &str) -> Result<(), SpecError> {
    if label.len() > MAX_HOST_RUN_LABEL {
        return Err(SpecError::InvalidRequest(format!(
            "host-run label is {} bytes (at most {MAX_HOST_RUN_LABEL})",
            label.len()
        )));
    }
    if label.contains('\0') {
        return Err(SpecError::InvalidRequest("host-run label contains a NUL byte".into()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProbeKind, ProbeSpec};

    #[test]
    fn labels_are_bounded_and_free_of_nul() {
        let spec = ProbeSpec::host_run("crictl exec cat /tmp/healthy").unwrap();
        assert!(matches!(&spec.kind, ProbeKind::HostRun(h) if h.label.starts_with("crictl")));
        assert!(spec.validate().is_ok());
        assert!(ProbeSpec::host_run("").is_ok());
        let long = "x".repeat(MAX_HOST_RUN_LABEL + 1);
        assert_eq!(
            ProbeSpec::host_run(&long).unwrap_err().to_string(),
            "host-run label is 4097 bytes (at most 4096)"
        );
        assert_eq!(
            ProbeSpec::host_run("a\0b").unwrap_err().to_string(),
            "host-run label contains a NUL byte"
        );
        // Settings of other kinds are refused, as they are for exec.
        let mut spec = ProbeSpec::host_run("x").unwrap();
        assert!(spec.add_header("A", "b").is_err());
        assert!(spec.set_env("A", "b").is_err());
        assert!(spec.set_tls(crate::TlsOptions::default()).is_err());
    }
}
