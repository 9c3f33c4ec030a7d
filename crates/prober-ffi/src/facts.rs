//! Facts a run learns beyond its verdict: the TLS version, the HTTP version of the final
//! response, and gRPC's codes (also in `prober_event`, from its former reserved space).

use prober_core::{HttpResponseVersion, Outcome, TlsVersion};

use crate::guard;
use crate::outcome::prober_outcome;
use crate::ptr::BoxedHandle;

/// 12 or 13 for the last completed handshake's TLS version, 0 without one.
pub(crate) fn tls_version_code(o: &Outcome) -> u32 {
    match o.tls.as_ref().and_then(|t| t.version) {
        Some(TlsVersion::Tls12) => 12,
        Some(TlsVersion::Tls13) => 13,
        None => 0,
    }
}

/// 10, 11 or 20 for the final HTTP response's version, 0 without one.
pub(crate) fn http_version_code(o: &Outcome) -> u32 {
    o.http_version.map_or(0, |v: HttpResponseVersion| v as u32)
}

/// The TLS version of the run's last completed handshake: 12 (TLS 1.2) or 13 (TLS 1.3); 0
/// without one (no TLS, or the handshake failed).
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_tls_version(o: *const prober_outcome) -> u32 {
    guard(|| prober_outcome::ref_from_ptr(o).map_or(0, |o| tls_version_code(&o.outcome)))
}

/// The final HTTP response's version: 10 (HTTP/1.0), 11 (HTTP/1.1) or 20 (HTTP/2); 0 without
/// a response, and for other probes.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_http_version(o: *const prober_outcome) -> u32 {
    guard(|| prober_outcome::ref_from_ptr(o).map_or(0, |o| http_version_code(&o.outcome)))
}

/// gRPC: the RPC's status code as grpc-go reports it (0 OK once the server answered, 14
/// Unavailable when the connection failed, 4 DeadlineExceeded at the deadline, ...); -1 when
/// the run reached no RPC, and for other probes.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_grpc_status(o: *const prober_outcome) -> i32 {
    guard(|| {
        prober_outcome::ref_from_ptr(o)
            .and_then(|o| o.outcome.grpc.status_code)
            .map_or(-1, |c| i32::try_from(c).unwrap_or(-1))
    })
}

/// gRPC: the health response's serving status (0 UNKNOWN, 1 SERVING, 2 NOT_SERVING, 3
/// SERVICE_UNKNOWN); -1 without a decoded response, and for other probes.
///
/// # Safety
/// `o` must be NULL or a live outcome.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_grpc_serving_status(o: *const prober_outcome) -> i32 {
    guard(|| {
        prober_outcome::ref_from_ptr(o).and_then(|o| o.outcome.grpc.serving_status).unwrap_or(-1)
    })
}
