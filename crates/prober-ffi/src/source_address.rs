//! The local address of TCP, HTTP(S), gRPC, DNS and ICMP probes (issues 34 and 36, blackbox_exporter's
//! `source_ip_address`): `prober_spec_set_source_address`.

use prober_core::parse_source_address;
use std::ffi::c_char;

use crate::ptr::{ExclusiveHandle, try_str_from_ptr};
use crate::spec::prober_spec;
use crate::status::*;
use crate::{guard_status, set_error};

/// Binds the socket of a TCP, HTTP(S), gRPC or DNS (UDP, TCP, DNS over TLS) probe to the local IP address `address`
/// (`"10.0.0.5"`, `"fd00::5"`; no port, no brackets) before it connects; NULL: the system
/// chooses (the default). Every connection of a run is bound (each redirect hop, the one to a
/// proxy), in the probe's network namespace when it has one (the address is looked up
/// there). Only the target's addresses of `address`'s family are connected to, after
/// `prober_spec_set_ip_family` has chosen among them: when none is left the run is a Failure
/// with `PROBER_REASON_DNS`, the message naming the source address (`no suitable address
/// found`). An address this host (or namespace) does not have is a Failure with
/// `PROBER_REASON_UNREACHABLE`: `dial tcp 192.0.2.1:0->10.0.0.1:80: bind: cannot assign
/// requested address`. `"0.0.0.0"` and `"::"` bind nothing. Kept-alive connections are only
/// reused by probes with the same source address. A probe through a Unix socket takes it and
/// ignores it. An ICMP probe sends its echo requests from it (an IP literal host of the other
/// family makes each run Unknown).
///
/// # Errors
/// `PROBER_E_NULL` for a NULL spec, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID` for text that
/// is not an IP address, `PROBER_E_WRONG_KIND` for an exec probe.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call; `address`
/// must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_source_address(
    spec: *mut prober_spec,
    address: *const c_char,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let source = match address.is_null() {
            true => None,
            false => {
                let text = try_str_from_ptr(address, "address")?;
                Some(parse_source_address(text).map_err(|e| set_error(PROBER_E_INVALID, e))?)
            }
        };
        s.spec.set_source_address(source).map_err(|e| set_error(PROBER_E_WRONG_KIND, e))
    })
}
