//! The setters of an HTTP probe's request and route beyond the kubelet's: method and body
//! (whose checks are `request.rs`'s), redirects dialed by name, a proxy and OAuth 2 credentials
//! (`proxy.rs`'s and `oauth2.rs`'s types: apart from the setters, so that those types' files do
//! not depend on [`ProbeSpec`]). The others, beside the constructor, are `mod.rs`'s.

use super::oauth2::OAuth2;
use super::proxy::HttpProxy;
use super::validate::validate_host;
use super::{HttpSpec, ProbeKind, ProbeSpec, SpecError};
use crate::request::{validate_body, validate_method};

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
    /// [`SpecError::InvalidRequest`] for more than [`MAX_BODY_LEN`](crate::MAX_BODY_LEN) bytes or a probe that is
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

    /// The HTTP part of an HTTP probe; `what` names the setting in the refusal.
    fn http_request(&mut self, what: &str) -> Result<&mut HttpSpec, SpecError> {
        match &mut self.kind {
            ProbeKind::Http(h) => Ok(h),
            _ => Err(SpecError::InvalidRequest(format!("{what} applies to HTTP probes only"))),
        }
    }

    /// Lets an HTTP probe's redirects that name a host dial it by name over both families,
    /// the address family holding for the target and its relative redirects only
    /// ([`HttpSpec::redirects_dial_by_name`](crate::HttpSpec::redirects_dial_by_name):
    /// blackbox_exporter's HTTP prober). Off by default: every hop keeps the family.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a probe that is not HTTP.
    pub fn set_redirects_dial_by_name(&mut self, on: bool) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Http(h) => h.redirects_dial_by_name = on,
            _ => {
                return Err(SpecError::InvalidRequest(
                    "redirects dialed by name apply to HTTP probes only".into(),
                ));
            }
        }
        Ok(())
    }

    /// Sends the HTTP probe's requests through a proxy (`None`: straight to the target, the
    /// default). With a Unix socket set, the socket wins: no proxy is used.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a probe that is not HTTP.
    pub fn set_http_proxy(&mut self, proxy: Option<HttpProxy>) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Http(h) => {
                if let Some(p) = &proxy {
                    for s in [&p.http, &p.https].into_iter().flatten() {
                        validate_host(s.host())?;
                    }
                }
                h.proxy = proxy.map(std::sync::Arc::new);
                Ok(())
            }
            _ => Err(SpecError::InvalidRequest("a proxy applies to HTTP probes only".into())),
        }
    }

    /// Fetches an OAuth 2 token with the client credentials grant before each run's request
    /// and sends it as `Authorization` (see [`OAuth2`]); `None` removes it. The token is asked
    /// for on every run, as blackbox_exporter (a new client per probe) does, within the run's
    /// one deadline.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a probe that is not HTTP, or options
    /// [`OAuth2::validate`] refuses.
    pub fn set_oauth2(&mut self, oauth2: Option<OAuth2>) -> Result<(), SpecError> {
        if let Some(o) = &oauth2 {
            o.validate()?;
        }
        match &mut self.kind {
            ProbeKind::Http(h) => {
                h.oauth2 = oauth2.map(std::sync::Arc::new);
                Ok(())
            }
            _ => Err(SpecError::InvalidRequest("oauth2 applies to HTTP probes only".into())),
        }
    }
}
