//! OAuth 2 client credentials for HTTP probes ([`OAuth2`], set with
//! [`ProbeSpec::set_oauth2`](super::ProbeSpec::set_oauth2)), as prometheus/common's `oauth2` in
//! an `http_client_config` (golang.org/x/oauth2's `clientcredentials`): before each run's
//! request, a token is asked of `token_url` (a `POST` of `grant_type=client_credentials`, the
//! scopes and the endpoint parameters, the client's id and secret as Basic credentials) and the
//! request carries `Authorization: <type> <token>`.
//!
//! This module holds the options and the token request's form; `prober-http` runs the exchange
//! and reads the answer.

use std::fmt;
use std::sync::Arc;

use base64::Engine as _;

use super::{HttpProxy, SpecError, TlsOptions};
use crate::secret::Secret;
use crate::url::Url;

/// The most scopes and the most endpoint parameters (each).
pub const MAX_OAUTH2_PARAMS: usize = 64;
/// The longest client id, secret, scope, parameter name or value, in bytes.
pub const MAX_OAUTH2_VALUE: usize = 4096;

/// The OAuth 2 client credentials grant of an HTTP probe.
#[derive(Clone, PartialEq, Eq)]
pub struct OAuth2 {
    /// Where the token is asked for (`http://` or `https://`).
    pub token_url: Url,
    /// The client's id.
    pub client_id: String,
    /// The client's secret (never printed).
    pub client_secret: Secret,
    /// The scopes asked for, sent space-separated as `scope` when there are any.
    pub scopes: Vec<String>,
    /// Further form parameters of the token request; `grant_type` among them replaces
    /// `client_credentials`, as golang.org/x/oauth2 allows.
    pub endpoint_params: Vec<(String, String)>,
    /// TLS options of the token request (the probe's own apply to the probed URL only).
    pub tls: TlsOptions,
    /// The proxy of the token request, if any (the probe's own applies to the probed URL).
    pub proxy: Option<Arc<HttpProxy>>,
}

/// How the client's credentials travel in the token request: golang.org/x/oauth2 tries the
/// `Authorization` header first and, when that request fails, the form's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OAuth2AuthStyle {
    /// `Authorization: Basic base64(urlencode(id):urlencode(secret))`.
    InHeader,
    /// `client_id` and `client_secret` (when not empty) among the form's parameters.
    InParams,
}

impl OAuth2 {
    /// Client credentials for `token_url`, without scopes or parameters, with the default TLS
    /// options that verify the server against the system's roots.
    ///
    /// # Errors
    ///
    /// [`SpecError::Url`] for a URL that is not an absolute `http://` or `https://` URL,
    /// [`SpecError::InvalidRequest`] for an empty or too long client id or secret.
    pub fn new(
        token_url: &str,
        client_id: &str,
        client_secret: Secret,
    ) -> Result<OAuth2, SpecError> {
        let o = OAuth2 {
            token_url: Url::parse(token_url)?,
            client_id: client_id.to_string(),
            client_secret,
            scopes: Vec::new(),
            endpoint_params: Vec::new(),
            tls: TlsOptions { verify: super::TlsVerify::SystemRoots, ..TlsOptions::default() },
            proxy: None,
        };
        o.validate()?;
        Ok(o)
    }

    /// Checks the bounds and golang.org/x/oauth2's rule that an endpoint parameter may not
    /// replace `scope` (nor the client's credentials in the form).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] naming the field.
    pub fn validate(&self) -> Result<(), SpecError> {
        let bad = |why: String| Err(SpecError::InvalidRequest(format!("oauth2: {why}")));
        if self.client_id.is_empty() {
            return bad("client_id must be set".into());
        }
        if self.scopes.len() > MAX_OAUTH2_PARAMS || self.endpoint_params.len() > MAX_OAUTH2_PARAMS {
            return bad(format!("at most {MAX_OAUTH2_PARAMS} scopes and endpoint parameters"));
        }
        let values = [self.client_id.as_str(), self.client_secret.expose()]
            .into_iter()
            .chain(self.scopes.iter().map(String::as_str))
            .chain(self.endpoint_params.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]));
        if values.into_iter().any(|v| v.len() > MAX_OAUTH2_VALUE) {
            return bad(format!("a value is longer than {MAX_OAUTH2_VALUE} bytes"));
        }
        for (k, _) in &self.endpoint_params {
            if matches!(k.as_str(), "scope" | "client_id" | "client_secret") {
                return bad(format!("endpoint_params: cannot overwrite parameter {k:?}"));
            }
        }
        self.tls.validate()
    }

    /// The token request's body (`application/x-www-form-urlencoded`, keys sorted as Go's
    /// `url.Values.Encode`), with the client's credentials when `style` puts them there.
    pub fn form(&self, style: OAuth2AuthStyle) -> Secret {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        if !self.endpoint_params.iter().any(|(k, _)| k == "grant_type") {
            pairs.push(("grant_type", "client_credentials"));
        }
        let scope = self.scopes.join(" ");
        if !self.scopes.is_empty() {
            pairs.push(("scope", &scope));
        }
        for (k, v) in &self.endpoint_params {
            pairs.push((k, v));
        }
        if style == OAuth2AuthStyle::InParams {
            pairs.push(("client_id", &self.client_id));
            if !self.client_secret.expose().is_empty() {
                pairs.push(("client_secret", self.client_secret.expose()));
            }
        }
        // Go sorts by key and keeps the order of one key's values.
        pairs.sort_by(|a, b| a.0.cmp(b.0));
        let encoded: Vec<String> =
            pairs.iter().map(|(k, v)| format!("{}={}", query_escape(k), query_escape(v))).collect();
        Secret::new(encoded.join("&"))
    }

    /// The `Authorization` value of the token request in [`OAuth2AuthStyle::InHeader`]: Basic
    /// credentials of the URL-encoded id and secret (golang.org/x/oauth2 encodes them so, as
    /// RFC 6749 section 2.3.1 asks).
    pub fn basic_auth(&self) -> Secret {
        let raw = format!(
            "{}:{}",
            query_escape(&self.client_id),
            query_escape(self.client_secret.expose())
        );
        Secret::new(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(raw)))
    }
}

/// As derived, the secret printed `<secret>` and the proxy through its own redacting `Debug`.
impl fmt::Debug for OAuth2 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let OAuth2 { token_url, client_id, client_secret, scopes, endpoint_params, tls, proxy } =
            self;
        f.debug_struct("OAuth2")
            .field("token_url", token_url)
            .field("client_id", client_id)
            .field("client_secret", client_secret)
            .field("scopes", scopes)
            .field("endpoint_params", endpoint_params)
            .field("tls", tls)
            .field("proxy", proxy)
            .finish()
    }
}

/// Go's `url.QueryEscape`: unreserved bytes as they are, space as `+`, the rest `%XX`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProbeSpec;

    fn creds() -> OAuth2 {
        OAuth2::new("http://127.0.0.1:1/token", "my id", Secret::new("s3cr:t/+")).unwrap()
    }

    /// The body golang.org/x/oauth2 sends: sorted keys, `+` for spaces, scopes joined.
    #[test]
    fn form_is_gos() {
        let mut o = creds();
        o.scopes = vec!["read".into(), "write all".into()];
        o.endpoint_params = vec![("audience".into(), "a&b".into())];
        assert_eq!(
            o.form(OAuth2AuthStyle::InHeader).expose(),
            "audience=a%26b&grant_type=client_credentials&scope=read+write+all"
        );
        assert_eq!(
            o.form(OAuth2AuthStyle::InParams).expose(),
            "audience=a%26b&client_id=my+id&client_secret=s3cr%3At%2F%2B&\
             grant_type=client_credentials&scope=read+write+all"
        );
        o.endpoint_params = vec![("grant_type".into(), "other".into())];
        o.scopes.clear();
        assert_eq!(o.form(OAuth2AuthStyle::InHeader).expose(), "grant_type=other");
    }

    /// Basic credentials of the URL-encoded id and secret, as Go's `SetBasicAuth(
    /// url.QueryEscape(id), url.QueryEscape(secret))`.
    #[test]
    fn basic_auth_encodes_first() {
        let expect = base64::engine::general_purpose::STANDARD.encode("my+id:s3cr%3At%2F%2B");
        assert_eq!(creds().basic_auth().expose(), format!("Basic {expect}"));
    }

    #[test]
    fn refusals_and_redaction() {
        let mut o = creds();
        o.endpoint_params = vec![("scope".into(), "x".into())];
        assert!(o.validate().unwrap_err().to_string().contains("cannot overwrite"));
        assert!(OAuth2::new("http://h/t", "", Secret::new("x")).is_err());
        assert!(OAuth2::new("ftp://h/t", "id", Secret::new("x")).is_err());
        let shown = format!("{:?}", creds());
        assert!(!shown.contains("s3cr") && shown.contains("<secret>"), "{shown}");
        let mut spec = ProbeSpec::tcp("h", 1).unwrap();
        assert!(spec.set_oauth2(Some(creds())).is_err());
    }
}
