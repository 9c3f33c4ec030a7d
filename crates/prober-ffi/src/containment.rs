//! Containing an exec probe's runs in a cgroup of their own: `prober_spec_set_exec_cgroup`.

use std::ffi::c_char;

use prober_core::ExecSpec;

use crate::guard_status;
use crate::kind::require_kind;
use crate::ptr::{ExclusiveHandle, try_str_from_ptr};
use crate::spec::{prober_spec, spec_status};
use crate::status::*;

/// Contains each run of an exec probe in a cgroup of its own, made in the cgroup v2 directory
/// `dir` (absolute; one delegated to the caller, or any as root): the command is born in it,
/// and at the end of the run (exit, timeout or cancel) everything in it gets SIGKILL through
/// `cgroup.kill` (Linux 5.14), including processes that left the command's process group
/// (`setsid`, a daemon's double fork), which the process group kill alone cannot reach. The
/// cgroup is removed by a library thread once empty. Exit codes, output and timeouts are
/// unchanged. It costs a `fork` instead of `posix_spawn` and a cgroup made and removed per run,
/// so it is off by default. NULL or `""` turns it off again.
///
/// A directory that cannot be used (not cgroup v2, not writable, no `cgroup.kill`) makes each
/// run `PROBER_UNKNOWN` with reason `PROBER_REASON_SPAWN` and a message naming it; the command
/// is then not run.
///
/// # Errors
/// `PROBER_E_NULL` for a NULL spec, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID` for a relative
/// path, `PROBER_E_WRONG_KIND` for a probe that is not exec.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `dir` must
/// be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_exec_cgroup(
    spec: *mut prober_spec,
    dir: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let dir = if dir.is_null() { "" } else { try_str_from_ptr(dir, "dir")? };
        require_kind::<ExecSpec>(&mut s.spec, "cgroup applies to")?;
        let dir = (!dir.is_empty()).then(|| dir.into());
        s.spec.set_exec_cgroup(dir).map_err(|e| spec_status(&e))
    })
}
