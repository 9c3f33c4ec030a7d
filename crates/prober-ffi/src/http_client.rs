//! What an HTTP probe's client does across the hops of one run beyond the kubelet: how many
//! redirects it follows, and whether it keeps the cookies responses set.

use prober_core::HttpSpec;

use crate::guard_status;
use crate::kind::require_kind;
use crate::ptr::ExclusiveHandle;
use crate::spec::{prober_spec, spec_status};
use crate::status::*;

/// Sets how many redirects an HTTP probe follows at most in a run (default 9, the kubelet's;
/// blackbox_exporter follows 10); the next one ends the run, a Failure with reason
/// `PROBER_REASON_TOO_MANY_REDIRECTS`. 0 to 64.
///
/// Errors: `PROBER_E_INVALID` above 64, `PROBER_E_WRONG_KIND` for a probe that is not HTTP.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_max_redirects(
    spec: *mut prober_spec,
    max: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        require_kind::<HttpSpec>(&mut s.spec, "a redirect limit applies to")?;
        s.spec.set_max_redirects(max).map_err(|e| spec_status(&e))
    })
}

/// Keeps, or not, the cookies an HTTP probe's responses set (`Set-Cookie`, on redirects too)
/// and sends them on the later hops of the same run they match by domain and path, as Go's
/// `net/http/cookiejar` (default off: the kubelet's client has no jar). Nothing outlives the
/// run. See docs/semantics.md.
///
/// Errors: `PROBER_E_WRONG_KIND` for a probe that is not HTTP.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_cookies(
    spec: *mut prober_spec,
    on: bool,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        require_kind::<HttpSpec>(&mut s.spec, "cookies applies to")?;
        s.spec.set_cookies(on).map_err(|e| spec_status(&e))
    })
}
