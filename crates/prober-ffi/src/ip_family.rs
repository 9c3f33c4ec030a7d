//! The address family of TCP, HTTP(S) and gRPC probes (issue 28): every address, one family
//! only (curl's `-4` / `-6`), or one preferred (blackbox_exporter's `preferred_ip_protocol`
//! with `ip_protocol_fallback`).

use prober_core::IpFamily;

use crate::ptr::ExclusiveHandle;
use crate::spec::prober_spec;
use crate::status::*;
use crate::{guard_status, set_error};

/// Address families of network probes (`prober_spec_set_ip_family`).
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prober_ip_family {
    /// Every address the host resolves to, raced as Go's dialer races them (Happy Eyeballs):
    /// the default.
    PROBER_IP_FAMILY_ANY = 0,
    /// IPv4 addresses only; a name without one, or an IPv6 literal, fails with
    /// `PROBER_REASON_DNS`.
    PROBER_IP_FAMILY_V4 = 1,
    /// IPv6 addresses only; a name without one, or an IPv4 literal, fails with
    /// `PROBER_REASON_DNS`.
    PROBER_IP_FAMILY_V6 = 2,
    /// The host's IPv4 addresses if it has any, else its IPv6 ones.
    PROBER_IP_FAMILY_PREFER_V4 = 3,
    /// The host's IPv6 addresses if it has any, else its IPv4 ones.
    PROBER_IP_FAMILY_PREFER_V6 = 4,
}

/// Sets which addresses of its host a TCP, HTTP(S) or gRPC probe connects to: one of
/// `PROBER_IP_FAMILY_*` (default `PROBER_IP_FAMILY_ANY`). It applies to every connection of a
/// run (each redirect hop); kept-alive connections are only reused by probes asking for the
/// same family. A probe through a Unix socket takes it and ignores it. A DNS probe queries
/// its server at an address of the family, an ICMP probe pings its host at one (the first;
/// echoes are not raced).
///
/// Errors: `PROBER_E_NULL`, `PROBER_E_INVALID_ENUM` for another value (whatever the probe's
/// kind), `PROBER_E_WRONG_KIND` for an exec probe.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_ip_family(
    spec: *mut prober_spec,
    family: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let Some(f) = IpFamily::from_u32(family) else {
            return Err(set_error(
                PROBER_E_INVALID_ENUM,
                format!("{family} is not a PROBER_IP_FAMILY_* value"),
            ));
        };
        s.spec.set_ip_family(f).map_err(|e| set_error(PROBER_E_WRONG_KIND, e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C numbers are the Rust enum's, one for one.
    #[test]
    fn numbers_match_the_library() {
        use prober_ip_family::*;
        let c = [
            PROBER_IP_FAMILY_ANY,
            PROBER_IP_FAMILY_V4,
            PROBER_IP_FAMILY_V6,
            PROBER_IP_FAMILY_PREFER_V4,
            PROBER_IP_FAMILY_PREFER_V6,
        ];
        for (c, r) in c.into_iter().zip(prober_core::IP_FAMILIES) {
            assert_eq!(c as u32, r as u32, "{r:?}");
        }
    }
}
