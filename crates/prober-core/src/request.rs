//! Request options beyond the kubelet's GET: the checks of the HTTP method and body of an HTTP
//! probe (Consul's `Method`/`Body`, Envoy's `method`, blackbox_exporter's `method`/`body`); the
//! setters are `spec/http_setters.rs`'s.

use crate::spec::SpecError;

/// The largest request body a probe sends (a health check's request, not an upload).
pub const MAX_BODY_LEN: usize = 64 * 1024;

/// Checks an HTTP method: an RFC 9110 token (as Go's `validMethod`), case kept as written.
/// `CONNECT` is refused: it asks for a tunnel, not a response a probe could judge.
///
/// # Errors
///
/// [`SpecError::InvalidRequest`] saying what is wrong.
pub fn validate_method(method: &str) -> Result<(), SpecError> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if method.is_empty() || !method.chars().all(tchar) {
        return Err(SpecError::InvalidRequest(format!(
            "invalid HTTP method {method:?} (expected a token such as GET, HEAD or POST)"
        )));
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        return Err(SpecError::InvalidRequest(
            "HTTP method CONNECT is not supported by probes (it opens a tunnel)".into(),
        ));
    }
    Ok(())
}

pub(crate) fn validate_body(body: &[u8]) -> Result<(), SpecError> {
    if body.len() > MAX_BODY_LEN {
        return Err(SpecError::InvalidRequest(format!(
            "request body is {} bytes (at most {MAX_BODY_LEN})",
            body.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProbeKind, ProbeSpec};

    #[test]
    fn methods_and_bodies() {
        let mut s = ProbeSpec::http("http://127.0.0.1:1/").unwrap();
        assert!(matches!(&s.kind, ProbeKind::Http(h) if h.method == "GET" && h.body.is_empty()));
        for good in ["POST", "HEAD", "PURGE", "m-search", "X_Y"] {
            s.set_method(good).unwrap();
        }
        for bad in ["", "GET /", "PO\r\nST", "G\u{e9}T", "a:b"] {
            assert!(matches!(s.set_method(bad), Err(SpecError::InvalidRequest(_))), "{bad:?}");
        }
        assert_eq!(
            s.set_method("connect").unwrap_err().to_string(),
            "HTTP method CONNECT is not supported by probes (it opens a tunnel)"
        );
        assert_eq!(
            s.set_method("GET /x").unwrap_err().to_string(),
            "invalid HTTP method \"GET /x\" (expected a token such as GET, HEAD or POST)"
        );
        s.set_body(b"{}".to_vec()).unwrap();
        assert!(s.set_body(vec![0; MAX_BODY_LEN + 1]).is_err());
        assert!(matches!(&s.kind, ProbeKind::Http(h) if h.method == "X_Y" && h.body == b"{}"));
        assert!(s.validate().is_ok());
        if let ProbeKind::Http(h) = &mut s.kind {
            h.method = "A B".into();
        }
        assert!(s.validate().is_err());
        let mut t = ProbeSpec::tcp("h", 1).unwrap();
        assert_eq!(
            t.set_method("POST").unwrap_err().to_string(),
            "an HTTP method applies to HTTP probes only"
        );
        assert!(t.set_body(vec![1]).is_err());
    }
}
