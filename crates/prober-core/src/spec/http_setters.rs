//! The setters of an HTTP probe's proxy and OAuth 2 credentials: apart from the types they
//! set ([`HttpProxy`], [`OAuth2`]), which the spec's kinds name, so that those types' files do
//! not depend on [`ProbeSpec`].

use std::sync::Arc;

use super::{HttpProxy, OAuth2, ProbeSpec, SpecError, validate_host};

impl ProbeSpec {
    /// Sends the HTTP probe's requests through a proxy (`None`: straight to the target, the
    /// default). With a Unix socket set, the socket wins: no proxy is used.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a probe that is not HTTP.
    pub fn set_http_proxy(&mut self, proxy: Option<HttpProxy>) -> Result<(), SpecError> {
        match &mut self.kind {
            super::ProbeKind::Http(h) => {
                if let Some(p) = &proxy {
                    for s in [&p.http, &p.https].into_iter().flatten() {
                        validate_host(s.host())?;
                    }
                }
                h.proxy = proxy.map(Arc::new);
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
            super::ProbeKind::Http(h) => {
                h.oauth2 = oauth2.map(Arc::new);
                Ok(())
            }
            _ => Err(SpecError::InvalidRequest("oauth2 applies to HTTP probes only".into())),
        }
    }
}
