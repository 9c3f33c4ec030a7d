//! Exec probes inside another process's namespaces (issue 29, section 2).

use prober_core::ExecSpec;

use crate::guard_status;
use crate::kind::require_kind;
use crate::ptr::ExclusiveHandle;
use crate::spec::{prober_spec, spec_status};
use crate::status::*;

/// Runs an exec probe's command inside the namespaces of process `pid` (mount, UTS, IPC,
/// network, PID, cgroup and time; its user namespace where it differs from the caller's), in
/// that process's root and working directory, as `nsenter --target PID --all` does, without a
/// wrapper program: a forked child enters them (no thread of the host ever does). The command
/// keeps the library's credentials and is looked up in the target's file system; a working
/// directory set with `prober_spec_set_workdir` is inside the target's root. `pid` 0 runs the
/// command on the host again (the default).
///
/// A process that is gone, or namespaces the caller may not enter (no `CAP_SYS_ADMIN`), make
/// that run `PROBER_UNKNOWN` with reason `PROBER_REASON_SPAWN` and a message naming the PID and
/// the reason.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_WRONG_KIND` for a probe that is not exec, `PROBER_E_INVALID` for
/// a PID above 2^22.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_namespaces_of(
    spec: *mut prober_spec,
    pid: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        require_kind::<ExecSpec>(&mut s.spec, "namespacesOf applies to")?;
        s.spec.set_namespaces_of((pid != 0).then_some(pid)).map_err(|e| spec_status(&e))
    })
}
