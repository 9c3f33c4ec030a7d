//! Request options beyond the kubelet's GET: the HTTP method and body of an HTTP probe
//! (Consul's `Method`/`Body`, Envoy's `method`, blackbox_exporter's `method`/`body`), and
//! STARTTLS of a TCP probe (blackbox_exporter's `starttls`).

use crate::spec::{HttpSpec, ProbeKind, ProbeSpec, SpecError};

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

impl ProbeSpec {
    /// Sets the HTTP method (HTTP only; `GET` by default). Any token is accepted, as Go's
    /// client and curl's `-X` accept it; `HEAD` reads no body. Redirects follow Go's client:
    /// 301, 302 and 303 turn any method but `GET` and `HEAD` into a `GET` without body, 307 and
    /// 308 keep the method and the body.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a method that is not a token, `CONNECT`, or a probe
    /// that is not HTTP.
    pub fn set_method(&mut self, method: &str) -> Result<(), SpecError> {
        validate_method(method)?;
        self.http_request("an HTTP method")?.method = method.to_string();
        Ok(())
    }

    /// [`ProbeSpec::set_method`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_method`].
    pub fn with_method(mut self, method: &str) -> Result<ProbeSpec, SpecError> {
        self.set_method(method)?;
        Ok(self)
    }

    /// Sets the request body (HTTP only), sent with `Content-Length` and any method (as Go's
    /// client sends it); a user `Content-Length` header is ignored. Empty: no body (`POST`,
    /// `PUT` and `PATCH` then send `Content-Length: 0`, as Go does).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for more than [`MAX_BODY_LEN`] bytes or a probe that is
    /// not HTTP.
    pub fn set_body(&mut self, body: Vec<u8>) -> Result<(), SpecError> {
        validate_body(&body)?;
        self.http_request("a request body")?.body = body;
        Ok(())
    }

    /// [`ProbeSpec::set_body`] for building a spec in one expression.
    ///
    /// # Errors
    ///
    /// As [`ProbeSpec::set_body`].
    pub fn with_body(mut self, body: Vec<u8>) -> Result<ProbeSpec, SpecError> {
        self.set_body(body)?;
        Ok(self)
    }

    /// Turns STARTTLS on or off for a TCP probe: the send/expect exchange runs in plain text
    /// (the server's go-ahead, such as SMTP's `220`), then TLS shakes hands on the same
    /// connection with the spec's TLS options (the default ones, no verification, when none
    /// were set). Without an exchange the upgrade follows the connect at once.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidTls`] for a probe that is not TCP.
    pub fn set_starttls(&mut self, on: bool) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Tcp(t) => {
                crate::spec::refuse_single(t, on)?;
                t.starttls = on;
                if on && t.connect.tls.is_none() {
                    t.connect.tls = Some(crate::TlsOptions::default());
                }
                Ok(())
            }
            _ => Err(SpecError::InvalidTls("STARTTLS applies to TCP probes only".into())),
        }
    }

    fn http_request(&mut self, what: &str) -> Result<&mut HttpSpec, SpecError> {
        match &mut self.kind {
            ProbeKind::Http(h) => Ok(h),
            _ => Err(SpecError::InvalidRequest(format!("{what} applies to HTTP probes only"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
