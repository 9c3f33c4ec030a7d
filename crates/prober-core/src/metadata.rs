//! gRPC request metadata of gRPC health probes (issue 25, grpc-health-probe's `-rpc-header`):
//! its check; the setters (metadata, `-user-agent`, grpc-go's `WithAuthority`) are
//! `spec/grpc_setters.rs`'s.

use crate::spec::SpecError;

/// Names a probe sets itself, or that gRPC reserves: refused as metadata.
const RESERVED: [&str; 4] = ["content-type", "te", "user-agent", "grpc-timeout"];

/// Checks one metadata pair as gRPC requires it, and returns the key in lower case (grpc-go's
/// `metadata.Pairs` lowers keys; HTTP/2 forbids upper case on the wire).
///
/// - keys: `0-9 a-z _ - .` once lowered, not empty, not starting with `grpc-` (reserved for
///   gRPC itself) nor `:` (pseudo-headers; the authority has its own setter), and none of
///   `content-type`, `te`, `user-agent` (its own setter), `grpc-timeout`;
/// - values of keys ending in `-bin`: base64 (standard alphabet, padded or not, as gRPC accepts
///   both), sent as written; other values: printable ASCII and space (`0x20..=0x7e`).
///
/// # Errors
///
/// [`SpecError::InvalidRequest`] saying what is wrong.
pub fn validate_metadata(key: &str, value: &str) -> Result<String, SpecError> {
    let bad =
        |why: String| SpecError::InvalidRequest(format!("invalid gRPC metadata {key:?}: {why}"));
    let lower = key.to_ascii_lowercase();
    if lower.is_empty() {
        return Err(bad("empty key".into()));
    }
    if !lower.bytes().all(|b| b.is_ascii_digit() || b.is_ascii_lowercase() || b"_-.".contains(&b)) {
        return Err(bad("keys take only 0-9 a-z _ - . (letters are sent in lower case)".into()));
    }
    if lower.starts_with("grpc-") || RESERVED.contains(&lower.as_str()) {
        return Err(bad("reserved key (set by the probe or by gRPC)".into()));
    }
    if lower.ends_with("-bin") {
        if !is_base64(value) {
            return Err(bad("a -bin key takes a base64 value".into()));
        }
    } else if !value.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Err(bad(
            "values take printable ASCII only (binary values go in a -bin key, as base64)".into(),
        ));
    }
    Ok(lower)
}

/// Standard base64, padded or unpadded (gRPC accepts both).
fn is_base64(v: &str) -> bool {
    let body = v.trim_end_matches('=');
    let pad = v.len() - body.len();
    body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
        && pad <= 2
        && (pad == 0 || v.len() % 4 == 0)
        && body.len() % 4 != 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProbeKind, ProbeSpec};

    #[test]
    fn metadata_as_grpc_requires() {
        assert_eq!(validate_metadata("X-Token", "abc").unwrap(), "x-token");
        assert_eq!(validate_metadata("trace.id_1", "a b").unwrap(), "trace.id_1");
        assert_eq!(validate_metadata("key-bin", "AAEC").unwrap(), "key-bin");
        assert!(validate_metadata("key-bin", "AAE").is_ok()); // unpadded
        assert!(validate_metadata("key-bin", "AA==").is_ok());
        for (k, v) in [
            ("", "v"),
            ("a b", "v"),
            ("a:b", "v"),
            (":authority", "h"),
            ("grpc-status", "0"),
            ("Grpc-Foo", "x"),
            ("content-type", "x"),
            ("user-agent", "x"),
            ("te", "x"),
            ("k", "caf\u{e9}"),
            ("k", "a\r\nb"),
            ("k-bin", "not base64!"),
            ("k-bin", "A"),
            ("k-bin", "AA="),
        ] {
            assert!(validate_metadata(k, v).is_err(), "{k:?}: {v:?}");
        }
        assert_eq!(
            validate_metadata("k-bin", "@@").unwrap_err().to_string(),
            "invalid gRPC metadata \"k-bin\": a -bin key takes a base64 value"
        );
    }

    #[test]
    fn grpc_request_setters() {
        let mut s = ProbeSpec::grpc("127.0.0.1", 1, "").unwrap();
        s.add_grpc_metadata("Authorization", "Bearer x").unwrap();
        s.set_grpc_user_agent("grpc_health_probe").unwrap();
        s.set_grpc_authority("svc.example:443").unwrap();
        let ProbeKind::Grpc(g) = &s.kind else { panic!() };
        assert_eq!(g.metadata, vec![("authorization".to_string(), "Bearer x".to_string())]);
        assert_eq!(g.user_agent.as_deref(), Some("grpc_health_probe"));
        assert_eq!(g.authority.as_deref(), Some("svc.example:443"));
        assert!(s.validate().is_ok());
        assert!(s.set_grpc_authority("a b").is_err());
        assert!(s.set_grpc_user_agent("").is_err());
        let mut h = ProbeSpec::http("http://h/").unwrap();
        assert_eq!(
            h.add_grpc_metadata("k", "v").unwrap_err().to_string(),
            "gRPC metadata applies to gRPC probes only"
        );
    }
}
