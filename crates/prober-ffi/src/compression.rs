//! Content decoding of HTTP bodies (blackbox_exporter's `compression`).

use prober_core::{Compression, HttpSpec};

use crate::enums::c_enum;
use crate::kind::require_kind;
use crate::ptr::ExclusiveHandle;
use crate::spec::{prober_spec, spec_status};
use crate::status::*;
use crate::{guard_status, set_error};

c_enum! {
    /// Content codings an HTTP probe decodes its body with (`prober_spec_set_compression`).
    pub enum prober_compression, inputs {
        /// No decoding: the body as it arrives (the default, the kubelet's).
        PROBER_COMPRESSION_NONE = 0,
        /// The body as it arrives (blackbox_exporter's `identity`).
        PROBER_COMPRESSION_IDENTITY = 1,
        /// gzip (RFC 1952), members one after another.
        PROBER_COMPRESSION_GZIP = 2,
        /// Raw DEFLATE (RFC 1951), as Go's `compress/flate` and blackbox_exporter's `deflate`.
        PROBER_COMPRESSION_DEFLATE = 3,
        /// Brotli (RFC 7932).
        PROBER_COMPRESSION_BR = 4,
    }
}

/// Sets the content coding an HTTP probe decodes the final response's body with before it is
/// kept, counted and matched: one of `PROBER_COMPRESSION_*` (default
/// `PROBER_COMPRESSION_NONE`). The coding named decides, whatever the response's
/// `Content-Encoding` says; a body that does not decode is a Failure with reason
/// `PROBER_REASON_BROKEN_BODY`. The output limit bounds the decoded bytes. No
/// `Accept-Encoding` is added: set one with `prober_spec_add_header` to ask for the coding.
/// See docs/semantics.md.
///
/// Errors: `PROBER_E_INVALID_ENUM` for another value, `PROBER_E_WRONG_KIND` for a probe that
/// is not HTTP.
///
/// # Safety
/// `spec` must be NULL or a live spec not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn prober_spec_set_compression(
    spec: *mut prober_spec,
    coding: u32,
) -> prober_status {
    guard_status(|| {
        let s = prober_spec::try_mut_from_ptr(spec)?;
        let c = match prober_compression::from_code(coding) {
            Some(prober_compression::PROBER_COMPRESSION_NONE) => None,
            Some(prober_compression::PROBER_COMPRESSION_IDENTITY) => Some(Compression::Identity),
            Some(prober_compression::PROBER_COMPRESSION_GZIP) => Some(Compression::Gzip),
            Some(prober_compression::PROBER_COMPRESSION_DEFLATE) => Some(Compression::Deflate),
            Some(prober_compression::PROBER_COMPRESSION_BR) => Some(Compression::Br),
            None => {
                return Err(set_error(
                    PROBER_E_INVALID_ENUM,
                    format!("{coding} is not a PROBER_COMPRESSION_* value"),
                ));
            }
        };
        require_kind::<HttpSpec>(&mut s.spec, "compression applies to")?;
        s.spec.set_compression(c).map_err(|e| spec_status(&e))
    })
}
