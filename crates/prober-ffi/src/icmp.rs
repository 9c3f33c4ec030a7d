//! ICMP echo probes on the C ABI (issue 36): `prober_spec_new_icmp`, the setters of its echoes
//! (size, don't fragment, TTL, count, interval, loss threshold, socket kind), and what a run
//! measured (`prober_outcome_icmp`: counts, loss, round-trip times, the reply's hop limit).
//! The connection options (address family, source address, allow-list) are the shared setters'.

use std::ffi::c_char;
use std::net::IpAddr;
use std::time::Duration;

use prober_core::{IcmpSocket, IcmpSocketKind, IcmpSpec, Outcome, ProbeSpec};

use crate::enums::c_enum;
use crate::outcome::{micros, prober_outcome};
use crate::ptr::{BoxedHandle, Out, try_str_from_ptr};
use crate::spec::{edit_kind, new_spec, prober_spec, spec_status};
use crate::status::*;
use crate::{guard, guard_status, set_error};

c_enum! {
    /// Which kind of ICMP socket an ICMP probe may use (`prober_spec_set_icmp_socket`); in
    /// `prober_icmp_facts.socket`, the kind a run used.
    pub enum prober_icmp_socket of IcmpSocket {
        /// An unprivileged ICMP socket (`SOCK_DGRAM`) where `net.ipv4.ping_group_range` admits
        /// the process, else a raw one (blackbox_exporter's order): the default. In facts: no
        /// socket was opened.
        PROBER_ICMP_SOCKET_AUTO = 0 => Auto,
        /// Only an unprivileged ICMP socket.
        PROBER_ICMP_SOCKET_UNPRIVILEGED = 1 => Unprivileged,
        /// Only a raw socket (needs `CAP_NET_RAW`).
        PROBER_ICMP_SOCKET_RAW = 2 => Raw,
    }
}

/// What an ICMP run measured, from `prober_outcome_icmp`: `ping -c`'s summary and
/// blackbox_exporter's `probe_icmp_*` figures. Durations in microseconds, -1 where there is
/// none (no reply).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prober_icmp_facts {
    /// Echo requests sent.
    pub sent: u32,
    /// Replies received (each request answered at most once).
    pub received: u32,
    /// The share of requests that got no reply, 0.0 to 1.0 (1.0 when none was sent).
    pub loss: f64,
    /// The shortest round-trip time.
    pub rtt_min_us: i64,
    /// The mean round-trip time.
    pub rtt_avg_us: i64,
    /// The longest round-trip time.
    pub rtt_max_us: i64,
    /// The population standard deviation of the round-trip times: ping's `mdev`, the jitter
    /// smokeping plots.
    pub rtt_stddev_us: i64,
    /// The first answered request's round-trip time:
    /// `probe_icmp_duration_seconds{phase="rtt"}`.
    pub first_rtt_us: i64,
    /// Resolving the host (0 for an IP literal): `{phase="resolve"}`.
    pub resolve_us: i64,
    /// Opening and setting up the socket: `{phase="setup"}`.
    pub setup_us: i64,
    /// The last reply's TTL or hop limit (`probe_icmp_reply_hop_limit`); -1 without one.
    pub reply_hop_limit: i32,
    /// The socket kind used: `PROBER_ICMP_SOCKET_UNPRIVILEGED` or `_RAW`;
    /// `PROBER_ICMP_SOCKET_AUTO` when none was opened.
    pub socket: u32,
    /// The echo identifier the requests carried (on an unprivileged socket, the kernel's).
    pub id: u32,
    /// 4 or 6 when an ICMP error (destination unreachable, time exceeded, ...) came back for
    /// one of the requests, the family of `error_from`; 0 without one.
    pub error_family: u32,
    /// The last such error's ICMP (family 4) or ICMPv6 (family 6) message type.
    pub error_type: u32,
    /// The last such error's code (host, port, prohibited, ...).
    pub error_code: u32,
    /// Who sent the error, in network byte order: 4 bytes (family 4) or 16 (family 6).
    pub error_from: [u8; 16],
    /// Reserved for future fields; zero.
    pub reserved: [u64; 4],
}

/// -1 for no duration.
fn opt_us(d: Option<Duration>) -> i64 {
    d.map_or(-1, |d| i64::try_from(micros(d)).unwrap_or(i64::MAX))
}

/// The C form of a run's ICMP facts; `None` when the run was not an ICMP probe's.
pub(crate) fn icmp_facts_of(o: &Outcome) -> Option<prober_icmp_facts> {
    let f = o.icmp.as_deref()?;
    let s = &f.stats;
    let socket = match f.socket {
        None => IcmpSocket::Auto,
        Some(IcmpSocketKind::Unprivileged) => IcmpSocket::Unprivileged,
        Some(IcmpSocketKind::Raw) => IcmpSocket::Raw,
    };
    let mut facts = prober_icmp_facts {
        sent: s.sent,
        received: s.received,
        loss: s.loss(),
        rtt_min_us: opt_us(s.min),
        rtt_avg_us: opt_us(s.avg),
        rtt_max_us: opt_us(s.max),
        rtt_stddev_us: opt_us(s.stddev),
        first_rtt_us: opt_us(s.first_rtt),
        resolve_us: opt_us(Some(f.resolve)),
        setup_us: opt_us(Some(f.setup)),
        reply_hop_limit: s.reply_hop_limit.map_or(-1, i32::from),
        socket: prober_icmp_socket::code_of(socket),
        id: f.id.into(),
        error_family: 0,
        error_type: 0,
        error_code: 0,
        error_from: [0; 16],
        reserved: [0; 4],
    };
    if let Some(e) = s.last_error {
        facts.error_type = e.kind.into();
        facts.error_code = e.code.into();
        match e.from {
            IpAddr::V4(a) => {
                facts.error_family = 4;
                facts.error_from[..4].copy_from_slice(&a.octets());
            }
            IpAddr::V6(a) => {
                facts.error_family = 6;
                facts.error_from = a.octets();
            }
        }
    }
    Some(facts)
}

/// An ICMP echo probe of `host` (a name, or an IP literal; IPv6 with or without brackets):
/// one echo request with 28 bytes of data, as blackbox_exporter's icmp prober sends it; the
/// run passes when its reply comes back within the timeout. On success `*out` owns a new spec.
///
/// Sockets: an unprivileged ICMP socket where `net.ipv4.ping_group_range` admits the process,
/// else a raw one (`CAP_NET_RAW`); with neither, each run is Unknown, the message naming both
/// ways and the sysctl.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_UTF8`, `PROBER_E_INVALID_HOST`.
///
/// # Safety
/// `host` must be NULL or a NUL-terminated string; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_icmp(
    host: *const c_char,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        let host = try_str_from_ptr(host, "host")?;
        new_spec(ProbeSpec::icmp(host), out)
    })
}

/// The body of an ICMP setter: `f` edits a copy of the spec's ICMP options, which replaces
/// them when it passes their checks; a spec of another kind is `PROBER_E_WRONG_KIND`.
fn edit_icmp(
    spec: *mut prober_spec,
    subject: &str,
    f: impl FnOnce(&mut IcmpSpec) -> Result<(), prober_status>,
) -> prober_status {
    edit_kind(spec, subject, |icmp: &mut IcmpSpec| {
        let mut next = icmp.clone();
        f(&mut next)?;
        next.validate().map_err(|e| spec_status(&e))?;
        *icmp = next;
        Ok(())
    })
}

/// Sets the bytes of data after each echo header (0 to 65527; default 28). The data begins
/// with a random cookie of 8 bytes that tells our replies from others'; a shorter payload
/// keeps only the echo identifier and sequence for that.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID` over 65527, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_icmp_payload_size(
    spec: *mut prober_spec,
    bytes: usize,
) -> prober_status {
    edit_icmp(spec, "a payload size applies to", |i| {
        i.payload_size = bytes;
        Ok(())
    })
}

/// Sets don't-fragment on IPv4 requests (`IP_PMTUDISC_DO`; default off): a request larger
/// than the path's MTU then fails instead of being fragmented.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_icmp_dont_fragment(
    spec: *mut prober_spec,
    on: bool,
) -> prober_status {
    edit_icmp(spec, "don't fragment applies to", |i| {
        i.dont_fragment = on;
        Ok(())
    })
}

/// Sets the TTL (IPv4) or hop limit (IPv6) of the requests, 1 to 255; 0: the system's default
/// (the default). A TTL that runs out on the way makes the run a Failure naming the router
/// that said so (`time to live exceeded`).
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID` over 255, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_icmp_ttl(
    spec: *mut prober_spec,
    ttl: u32,
) -> prober_status {
    edit_icmp(spec, "a TTL applies to", |i| {
        let Ok(ttl) = u8::try_from(ttl) else {
            return Err(set_error(PROBER_E_INVALID, format!("TTL {ttl} is over 255")));
        };
        i.ttl = (ttl != 0).then_some(ttl);
        Ok(())
    })
}

/// Sets how many echo requests a run sends (1 to 10000; default 1, blackbox_exporter's) and
/// the time between two of them in milliseconds (at least 2 when `packets` is over 1; default
/// 1000), as `ping -c packets -i interval`. The run reports loss and round-trip times over
/// all of them (`prober_outcome_icmp`). Every request goes out within the run's timeout, the
/// last with time to be answered: a spec whose `packets - 1` intervals take the timeout or
/// more is refused when it is run or added (`prober_check` gives Unknown, the engine
/// `PROBER_E_INVALID`).
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID` for a count or an interval out of range,
/// `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_icmp_packets(
    spec: *mut prober_spec,
    packets: u32,
    interval_ms: u32,
) -> prober_status {
    edit_icmp(spec, "a packet count applies to", |i| {
        i.packets = packets;
        i.interval = Duration::from_millis(interval_ms.into());
        Ok(())
    })
}

/// Sets the loss that fails a run: a Failure when more than `percent` (0 to 100) of the
/// requests got no reply (default 100: only a run with no reply at all fails, whatever the
/// threshold).
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID` over 100, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_icmp_max_loss_percent(
    spec: *mut prober_spec,
    percent: u32,
) -> prober_status {
    edit_icmp(spec, "a loss threshold applies to", |i| {
        i.max_loss_percent = u8::try_from(percent).unwrap_or(u8::MAX);
        Ok(())
    })
}

/// Sets which kind of ICMP socket the probe may use: one of `PROBER_ICMP_SOCKET_*` (default
/// `PROBER_ICMP_SOCKET_AUTO`). A kind the system does not allow makes each run Unknown, the
/// message saying why.
///
/// # Errors
/// `PROBER_E_NULL`, `PROBER_E_INVALID_ENUM`, `PROBER_E_WRONG_KIND`.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_icmp_socket(
    spec: *mut prober_spec,
    socket: u32,
) -> prober_status {
    let Some(kind) = prober_icmp_socket::from_code(socket) else {
        return set_error(
            PROBER_E_INVALID_ENUM,
            format!("{socket} is not a PROBER_ICMP_SOCKET_* value"),
        );
    };
    edit_icmp(spec, "a socket kind applies to", |i| {
        i.socket = kind;
        Ok(())
    })
}

/// Copies what an ICMP run measured into `*out` and returns true; false (and `*out`
/// untouched) for NULL arguments and for a run that was not an ICMP probe's.
///
/// # Safety
/// `o` must be NULL or a live outcome; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_icmp(
    o: *const prober_outcome,
    out: *mut prober_icmp_facts,
) -> bool {
    guard(|| {
        let facts = prober_outcome::ref_from_ptr(o).and_then(|o| icmp_facts_of(&o.outcome));
        match (facts, Out::from_ptr(out)) {
            (Some(f), Some(out)) => {
                out.write(f);
                true
            }
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The socket numbers are the ABI: never renumbered.
    #[test]
    fn socket_numbers_stay() {
        let kinds = [IcmpSocket::Auto, IcmpSocket::Unprivileged, IcmpSocket::Raw];
        for (n, k) in (0..).zip(kinds) {
            assert_eq!(
                (prober_icmp_socket::from_code(n), prober_icmp_socket::code_of(k)),
                (Some(k), n)
            );
        }
        assert_eq!(prober_icmp_socket::from_code(3), None);
    }
}
