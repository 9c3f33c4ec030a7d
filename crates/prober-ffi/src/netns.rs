//! Probes in another network namespace (issue 29): `prober_spec_set_netns`.

use std::ffi::c_char;

use prober_core::{ConnectOption, NetNs};

use crate::ptr::{ExclusiveHandle, try_str_from_ptr};
use crate::spec::{prober_spec, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

/// Makes the sockets of a TCP, HTTP(S) or gRPC probe in the network namespace at `path`:
/// `"/run/netns/NAME"` (`ip netns`), `"/proc/PID/ns/net"` of a container's process, or any
/// bind-mounted namespace file. So `127.0.0.1` is the container's own loopback. Only the
/// socket is made there, by a library thread (never the caller's nor the engine's); connect,
/// TLS, HTTP and gRPC run as for any probe. Host names resolve through the host's resolver.
/// The path is opened once however many specs name it, and closed when the last one is freed.
///
/// A namespace that cannot be used (no such path, not a namespace file, a namespace of another
/// type, no permission: entering needs `CAP_SYS_ADMIN`) makes each run Unknown with
/// `PROBER_REASON_NAMESPACE`, the message naming the path and why; what can be seen here is
/// refused now.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID` for an empty or relative path
/// or a probe through a Unix socket, `PROBER_E_WRONG_KIND` for an exec probe.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `path` must
/// be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_netns(
    spec: *mut prober_spec,
    path: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let path = try_str_from_ptr(path, "path")?;
        let refusal =
            s.spec.options_taking(ConnectOption::Netns, "a network namespace applies to").err();
        // A kind that never connects (exec, host-run) is refused whatever the path.
        if let (Some(refusal), None) = (&refusal, s.spec.connect_options()) {
            return Err(set_error(PROBER_E_WRONG_KIND, refusal));
        }
        s.spec.set_netns(path).map_err(|e| {
            // A network kind without a namespace option would refuse a good path: that is the
            // kind's refusal, not the path's. The kinds that take one refuse only bad paths
            // and Unix sockets, whose statuses stay `PROBER_E_INVALID`.
            match refusal.is_none() || NetNs::new(path).is_err() {
                true => spec_status(&e),
                false => set_error(PROBER_E_WRONG_KIND, e),
            }
        })
    })
}
