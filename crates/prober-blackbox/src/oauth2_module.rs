//! `http.oauth2` (prometheus/common v0.67's `OAuth2`, the client credentials grant) onto the
//! library's [`OAuth2`]: each probe first asks `token_url` for a token (a new one every
//! probe, as blackbox_exporter's client per probe does), then sends it as `Authorization`; a
//! token endpoint that refuses or fails makes the probe fail, saying so.
//!
//! - `client_secret_file` is read at start and at each reload (as the module's other files;
//!   blackbox_exporter reads it at each probe).
//! - `tls_config` and the proxy options (`proxy_url`, `no_proxy`, `proxy_from_environment`,
//!   `proxy_connect_header`) are the token request's own.
//! - Refused at start, naming the field: the JWT bearer grant
//!   (`grant_type: urn:ietf:params:oauth:grant-type:jwt-bearer` and its `client_certificate_*`,
//!   `signature_algorithm`, `iss`, `audience`, `claims`) and `client_secret_ref` (a secret
//!   manager, which blackbox_exporter has none of either).

use prober::ProbeSpec;
use prober_core::{OAuth2, Secret};

use crate::config::{HttpModule, OAuth2Config, TlsConfig};

/// prometheus/common's JWT bearer grant type.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Reads a small file named by the module: its path, then its field's name for errors.
pub(crate) type ReadFile<'a> = &'a dyn Fn(&str, &str) -> Result<Vec<u8>, String>;

/// How the module's files and TLS options are read (the module's own rules, given by the
/// caller so that this file does not depend on it).
pub(crate) struct Readers<'a> {
    /// A small file named by the module, by its path and its field's name.
    pub file: ReadFile<'a>,
    /// A `tls_config` as the library's options.
    pub tls: &'a dyn Fn(Option<&TlsConfig>) -> Result<prober_core::TlsOptions, String>,
}

/// Sets the spec's OAuth 2 credentials from the module's `oauth2`, if any.
///
/// # Errors
///
/// prometheus/common's refusals in its words, the fields this engine does not do, and files
/// or values the library refuses.
pub(crate) fn apply(
    h: &HttpModule,
    spec: &mut ProbeSpec,
    read: &Readers<'_>,
) -> Result<(), String> {
    let Some(o) = &h.oauth2 else { return Ok(()) };
    if h.bearer_token.is_some() || h.bearer_token_file.is_some() {
        return Err("at most one of basic_auth, oauth2, bearer_token & bearer_token_file must be \
                    configured"
            .into());
    }
    if h.basic_auth.is_some() || h.authorization.is_some() {
        return Err("at most one of basic_auth, oauth2 & authorization must be configured".into());
    }
    if o.client_id.is_empty() {
        return Err("oauth2 client_id must be configured".into());
    }
    if o.token_url.is_empty() {
        return Err("oauth2 token_url must be configured".into());
    }
    let jwt = [
        ("grant_type", o.grant_type.as_deref() == Some(JWT_BEARER)),
        ("client_certificate_key_id", o.client_certificate_key_id.is_some()),
        ("client_certificate_key", o.client_certificate_key.is_some()),
        ("client_certificate_key_file", o.client_certificate_key_file.is_some()),
        ("client_certificate_key_ref", o.client_certificate_key_ref.is_some()),
        ("signature_algorithm", o.signature_algorithm.is_some()),
        ("iss", o.iss.is_some()),
        ("audience", o.audience.is_some()),
        ("claims", o.claims.is_some()),
        ("client_secret_ref", o.client_secret_ref.is_some()),
    ];
    if let Some((field, _)) = jwt.into_iter().find(|(_, set)| *set) {
        return Err(format!(
            "http.oauth2.{field} is not supported by prober serve (the client credentials grant \
             is, with client_secret or client_secret_file)"
        ));
    }
    let secret = match (&o.client_secret, &o.client_secret_file) {
        (Some(s), None) => s.0.clone(),
        (None, Some(f)) => {
            let bytes = (read.file)(f, "http.oauth2.client_secret_file")?;
            let text = String::from_utf8(bytes)
                .map_err(|_| "http.oauth2.client_secret_file: not UTF-8".to_string())?;
            Secret::new(text.trim())
        }
        (None, None) => Secret::default(),
        (Some(_), Some(_)) => {
            return Err("at most one of oauth2 client_secret, client_secret_file & \
                        client_secret_ref must be configured using grant-type=client_credentials"
                .into());
        }
    };
    let bad = |e: prober::SpecError| format!("http.oauth2: {e}");
    let mut creds = OAuth2::new(&o.token_url, &o.client_id, secret).map_err(bad)?;
    creds.scopes = o.scopes.clone();
    creds.endpoint_params = o.endpoint_params.clone().into_iter().collect();
    creds.tls = (read.tls)(o.tls_config.as_ref()).map_err(|e| format!("http.oauth2.{e}"))?;
    creds.proxy = token_proxy(o)?;
    spec.set_oauth2(Some(creds)).map_err(bad)
}

/// The token request's proxy, read as `http`'s own (see `proxy_module`).
fn token_proxy(o: &OAuth2Config) -> Result<Option<std::sync::Arc<prober_core::HttpProxy>>, String> {
    let options = HttpModule {
        proxy_url: o.proxy_url.clone(),
        no_proxy: o.no_proxy.clone(),
        proxy_from_environment: o.proxy_from_environment,
        proxy_connect_header: o.proxy_connect_header.clone(),
        ..HttpModule::default()
    };
    let mut scratch = ProbeSpec::http("http://localhost/").map_err(|e| e.to_string())?;
    crate::proxy_module::apply(&options, &mut scratch).map_err(|e| format!("oauth2: {e}"))?;
    match scratch.kind {
        prober::ProbeKind::Http(h) => Ok(h.proxy),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use crate::Modules;
    use std::path::Path;

    fn load(oauth2: &str) -> Result<Modules, String> {
        let file = format!("modules:\n  o:\n    prober: http\n    http:\n      oauth2: {oauth2}\n");
        Modules::parse(&file, Path::new("."))
    }

    #[test]
    fn refusals_in_prometheus_commons_words() {
        for (oauth2, want) in [
            ("{token_url: 'http://t/'}", "oauth2 client_id must be configured"),
            ("{client_id: a}", "oauth2 token_url must be configured"),
            (
                "{client_id: a, token_url: 'http://t/', client_secret: x, client_secret_file: f}",
                "at most one of oauth2 client_secret",
            ),
            (
                "{client_id: a, token_url: 'http://t/', grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer'}",
                "http.oauth2.grant_type is not supported",
            ),
            ("{client_id: a, token_url: 'http://t/', client_secret_ref: r}", "client_secret_ref"),
            ("{client_id: a, token_url: 'ftp://t/'}", "http.oauth2:"),
            ("{client_id: a, token_url: 'http://t/', endpoint_params: {scope: x}}", "scope"),
            ("{client_id: a, token_url: 'http://t/', no_proxy: x}", "no_proxy is configured"),
        ] {
            let e = load(oauth2).unwrap_err();
            assert!(e.contains(want), "{oauth2}: {e}");
        }
        let file = "modules:\n  o:\n    prober: http\n    http:\n      bearer_token: x\n      \
                    oauth2: {client_id: a, token_url: 'http://t/'}\n";
        let e = Modules::parse(file, Path::new(".")).unwrap_err();
        assert!(e.contains("at most one of basic_auth, oauth2, bearer_token"), "{e}");
    }

    /// `/config` and the module's `Debug` show the secrets as `<secret>`.
    #[test]
    fn secrets_are_never_shown() {
        let m = load(
            "{client_id: a, client_secret: s3cret, token_url: 'http://t/', \
             proxy_url: 'http://u:pw1@p:1', proxy_connect_header: {X: [hv1]}}",
        )
        .unwrap();
        let shown = format!("{}{:?}", m.config_yaml(), m.by_name["o"]);
        for secret in ["s3cret", "pw1", "hv1"] {
            assert!(!shown.contains(secret), "{secret}: {shown}");
        }
        assert!(shown.contains("client_secret: <secret>"), "{shown}");
    }
}
