//! gRPC health probes and TLS options (HTTPS and gRPC over TLS).

use std::ffi::c_char;

use prober_core::{ConnectOption, ProbeSpec, TlsOptions, TlsVerify, TlsVersion};

use crate::enums::c_enum;
use crate::outcome::prober_outcome;
use crate::ptr::{BoxedHandle, ExclusiveHandle, Out, try_str_from_ptr};
use crate::spec::{new_spec, prober_spec, spec_status};
use crate::status::*;
use crate::{guard, guard_status, set_error};

c_enum! {
    /// Certificate verification modes (`prober_spec_set_tls_verify`).
    pub enum prober_tls_verify, inputs {
        /// No verification of chain or name: the kubelet's default (`InsecureSkipVerify`).
        PROBER_TLS_VERIFY_NONE = 0,
        /// Verify against the system's trust store.
        PROBER_TLS_VERIFY_SYSTEM = 1,
        /// Verify against the CA certificates of a PEM file.
        PROBER_TLS_VERIFY_CA_FILE = 2,
    }
}

/// A gRPC health probe (`grpc.health.v1.Health/Check`) of `service` (`""`: the server as a
/// whole) at `host`:`port`, plaintext HTTP/2 as the kubelet; `prober_spec_enable_tls` or any
/// TLS setter switches it to TLS. An empty `host` is the local machine, as the kubelet's
/// `":PORT"` (see docs/semantics.md).
///
/// # Safety
/// `host` and `service` must be NULL or NUL-terminated strings; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_new_grpc(
    host: *const c_char,
    port: i32,
    service: *const c_char,
    out: *mut *mut prober_spec,
) -> prober_status {
    guard_status(|| {
        let out = Out::try_from_ptr(out, "out")?;
        // Both strings are read before either error is reported: with two bad arguments,
        // `prober_last_error` names the service (the second read), the host's status is returned.
        let (host, service) =
            (try_str_from_ptr(host, "host"), try_str_from_ptr(service, "service"));
        let (host, service) = (host?, service?);
        new_spec(ProbeSpec::grpc(host, port.into(), service), out)
    })
}

/// The body of a TLS setter: `f` edits a copy of the spec's TLS options (HTTP, gRPC, TCP and
/// DNS specs), which replaces them unless `f` or the spec refuses it. On a TCP spec the first
/// setter turns TLS on (beyond the kubelet, issue 25); on a DNS spec it selects DNS over TLS.
fn edit_tls(
    spec: *mut prober_spec,
    f: impl FnOnce(&mut TlsOptions) -> Result<(), prober_status>,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        // The kinds that take TLS options are prober-core's table's; the text is the one
        // this function has always given.
        let Ok(options) = s.spec.options_taking(ConnectOption::Tls, "") else {
            return Err(set_error(
                PROBER_E_WRONG_KIND,
                "TLS options apply to HTTP, gRPC, TCP and DNS probes only",
            ));
        };
        // No options yet are the default ones (an HTTP spec's too: `HttpSpec::tls`).
        let mut tls = options.tls.clone().unwrap_or_default();
        f(&mut tls)?;
        s.spec.set_tls(tls).map_err(|e| spec_status(&e))
    })
}

/// Switches a gRPC probe to TLS with the current (default: unverified) options; a TCP probe
/// too (beyond the kubelet: Consul's `TCPUseTLS`, blackbox_exporter's `tls: true`; the TLS
/// handshake must then succeed, and any send/expect runs inside TLS). HTTP probes use TLS for
/// `https://` URLs and need no switch; for them this only checks the kind.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_enable_tls(spec: *mut prober_spec) -> prober_status {
    edit_tls(spec, |_| Ok(()))
}

/// Sets certificate verification: `PROBER_TLS_VERIFY_NONE` (default), `_SYSTEM`, or `_CA_FILE`
/// with `ca_file` naming a PEM file (read when the probe runs; NULL for the other modes).
///
/// # Safety
/// `spec` must be NULL or a live spec; `ca_file` NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tls_verify(
    spec: *mut prober_spec,
    mode: u32,
    ca_file: *const c_char,
) -> prober_status {
    edit_tls(spec, |t| {
        t.verify = match prober_tls_verify::from_code(mode) {
            Some(prober_tls_verify::PROBER_TLS_VERIFY_NONE) => TlsVerify::None,
            Some(prober_tls_verify::PROBER_TLS_VERIFY_SYSTEM) => TlsVerify::SystemRoots,
            Some(prober_tls_verify::PROBER_TLS_VERIFY_CA_FILE) => {
                TlsVerify::CaFile(try_str_from_ptr(ca_file, "ca_file")?.into())
            }
            None => {
                return Err(set_error(
                    PROBER_E_INVALID_ENUM,
                    format!("{mode} is not a PROBER_TLS_VERIFY_* value"),
                ));
            }
        };
        Ok(())
    })
}

/// Sets the server name sent as SNI and verified against the certificate (default: the host
/// probed; an IP address sends no SNI). An HTTP redirect hop to another host uses that host's
/// own name; hops back to the probed host keep this one.
///
/// # Safety
/// `spec` must be NULL or a live spec; `name` NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tls_server_name(
    spec: *mut prober_spec,
    name: *const c_char,
) -> prober_status {
    edit_tls(spec, |t| {
        t.server_name = Some(try_str_from_ptr(name, "name")?.to_string());
        Ok(())
    })
}

/// Sets a client certificate chain and its private key, both PEM files (mutual TLS).
///
/// # Safety
/// `spec` must be NULL or a live spec; `cert_file` and `key_file` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tls_client_cert(
    spec: *mut prober_spec,
    cert_file: *const c_char,
    key_file: *const c_char,
) -> prober_status {
    edit_tls(spec, |t| {
        let cert = try_str_from_ptr(cert_file, "cert_file")?;
        let key = try_str_from_ptr(key_file, "key_file")?;
        t.client_cert = Some((cert.into(), key.into()));
        Ok(())
    })
}

/// Sets the lowest TLS version accepted: 12 (TLS 1.2, the default) or 13 (TLS 1.3).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tls_min_version(
    spec: *mut prober_spec,
    version: u32,
) -> prober_status {
    edit_tls(spec, |t| {
        t.min_version = Some(tls_version(version)?);
        Ok(())
    })
}

/// Sets the highest TLS version offered: 12 (TLS 1.2) or 13 (TLS 1.3, the default).
/// `PROBER_E_INVALID_TLS` for another number, or one below the minimum version already set
/// (the spec keeps its options).
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tls_max_version(
    spec: *mut prober_spec,
    version: u32,
) -> prober_status {
    edit_tls(spec, |t| {
        t.max_version = Some(tls_version(version)?);
        Ok(())
    })
}

/// Turns TLS session resumption on or off (default off: the kubelet makes a full handshake
/// every time). On, the runs of one target (one engine target's probe, or a one-shot HTTP spec
/// the engine keeps prepared) offer the session tickets (TLS 1.3) and session IDs or tickets
/// (TLS 1.2) their server gave the earlier runs, and a resumed handshake skips the certificate
/// exchange. Sessions are kept per TLS configuration (options, files, server name): another
/// configuration never resumes them. A resumed run reports the certificate facts of the full
/// handshake that made its session; a session is dropped once the chain verified then has
/// expired. Like every TLS setter, it switches a gRPC or TCP probe to TLS and a DNS probe to
/// DNS over TLS. `prober_check` resumes nothing (each call is a spec of its own). See
/// docs/semantics.md.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_tls_resumption(
    spec: *mut prober_spec,
    on: bool,
) -> prober_status {
    edit_tls(spec, |t| {
        t.resumption = on;
        Ok(())
    })
}

/// A TLS version as the C API numbers it: 12 or 13.
fn tls_version(version: u32) -> Result<TlsVersion, prober_status> {
    match version {
        12 => Ok(TlsVersion::Tls12),
        13 => Ok(TlsVersion::Tls13),
        other => {
            Err(set_error(PROBER_E_INVALID_TLS, format!("TLS version {other} (expected 12 or 13)")))
        }
    }
}

/// The expiry (notAfter, seconds since the epoch) of the peer's leaf certificate into `*out`;
/// false when the run saw no certificate (no TLS, or it failed before the certificate).
///
/// # Safety
/// `o` must be NULL or a live outcome; `out` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_outcome_cert_not_after(
    o: *const prober_outcome,
    out: *mut i64,
) -> bool {
    guard(|| {
        let Some(o) = prober_outcome::ref_from_ptr(o) else { return false };
        match (o.outcome.cert_not_after, Out::from_ptr(out)) {
            (Some(t), Some(out)) => {
                out.write(t);
                true
            }
            _ => false,
        }
    })
}
