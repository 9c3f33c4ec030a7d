//! blackbox_exporter's module file, as its `config/config.go` (v0.25.0) reads it: unknown
//! fields are errors (it decodes with `KnownFields(true)`), and what this engine does not do is
//! refused at start with the module's name, never skipped in silence.

use std::collections::BTreeMap;
use std::fmt;

use prober_core::REDACTED;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The whole file: `modules:` by name.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct File {
    #[serde(default)]
    pub modules: BTreeMap<String, RawModule>,
}

/// One module as written.
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawModule {
    #[serde(default)]
    pub prober: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpModule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpModule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpc: Option<GrpcModule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unix: Option<UnixModule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icmp: Option<IcmpModule>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dns: Option<DnsModule>,
    /// Beyond blackbox_exporter: the targets this module may probe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Allow>,
}

/// `allow:` (ours): host patterns, networks and ports.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Allow {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortItem>,
    /// Unix socket paths (a unix module's only list): a path, or a directory ending in `/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
}

/// A port or a `LOW-HIGH` range.
#[derive(Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub(crate) enum PortItem {
    One(u32),
    Text(String),
}

/// prometheus/common's `tls_config`.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TlsConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_verify: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_version: Option<String>,
    // Inline PEM: refused (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<Secret>,
}

/// prometheus/common's `basic_auth`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BasicAuth {
    #[serde(default)]
    pub username: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<Secret>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username_file: Option<String>,
}

/// prometheus/common's `authorization`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Authorization {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials: Option<Secret>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials_file: Option<String>,
}

/// prometheus/common's `Secret` (a password, a token): read from a string; shown by `/config`
/// as `<secret>`, as blackbox_exporter marshals it, and printed so by `Debug`. Only where it
/// is sent is its value read ([`prober_core::Secret::expose`], through `Deref`).
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct Secret(pub(crate) prober_core::Secret);

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Secret, D::Error> {
        String::deserialize(d).map(|value| Secret(prober_core::Secret::new(value)))
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(REDACTED)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl std::ops::Deref for Secret {
    type Target = prober_core::Secret;
    fn deref(&self) -> &prober_core::Secret {
        &self.0
    }
}

/// `proxy_url`: it may carry a password, so it prints and shows as prometheus/common marshals
/// it (`URL.Redacted`: `http://user:xxxxx@host`); [`ProxyUrl::expose`] gives the text.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub(crate) struct ProxyUrl(String);

impl ProxyUrl {
    /// The URL as written, to build the proxy from (never to print).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ProxyUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", prober_core::redact_target(&self.0))
    }
}

impl Serialize for ProxyUrl {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&prober_core::redact_target(&self.0))
    }
}

/// `http.headers`: plain values to blackbox_exporter, but an API key is often one of them, so
/// the values of credential headers ([`prober_core::is_secret_header`]) are never printed.
#[derive(Default, Deserialize)]
#[serde(transparent)]
pub(crate) struct Headers(pub BTreeMap<String, String>);

impl Headers {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// As `Debug`: the values of credential headers are shown as `<secret>`.
impl Serialize for Headers {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(n, v)| (n, prober_core::printable_header_value(n, v))))
    }
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(n, v)| (n, prober_core::printable_header_value(n, v))))
            .finish()
    }
}

/// `fail_if_header_matches` / `fail_if_header_not_matches` entries.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HeaderMatch {
    #[serde(default)]
    pub header: String,
    #[serde(default)]
    pub regexp: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_missing: bool,
}

/// `http:`, with the inline `http_client_config` fields this engine has.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HttpModule {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub valid_status_codes: Vec<u16>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub valid_http_versions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_ip_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_protocol_fallback: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_follow_redirects: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow_redirects: Option<bool>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_if_ssl: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_if_not_ssl: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "Headers::is_empty")]
    pub headers: Headers,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_body_matches_regexp: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_body_not_matches_regexp: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_if_body_json_matches_cel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fail_if_body_json_not_matches_cel: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_header_matches: Vec<HeaderMatch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_header_not_matches: Vec<HeaderMatch>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<TlsConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<Secret>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_token_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization: Option<Authorization>,
    // prometheus/common's default is true (h2 offered by ALPN over TLS, as Go's transport
    // with `http2.ConfigureTransports`); false offers `http/1.1` alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_http2: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body_size_limit: Option<serde_norway::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
    // prometheus/common's proxy options and blackbox_exporter's own (see `proxy_module`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<ProxyUrl>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proxy_from_environment: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub proxy_connect_header: BTreeMap<String, Vec<Secret>>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip_resolve_phase_with_proxy: bool,
    /// OAuth 2 client credentials (see `oauth2_module`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth2: Option<OAuth2Config>,
    // Fields of blackbox_exporter this engine does not have: read to be refused by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http_headers: Option<serde_norway::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_http1: Option<serde_norway::Value>,
}

impl HttpModule {
    /// The first field set that this engine does not do.
    pub fn unsupported(&self) -> Option<&'static str> {
        let fields = [
            ("http_headers", self.http_headers.is_some()),
            ("enable_http1", self.enable_http1.is_some()),
        ];
        fields.into_iter().find(|(_, set)| *set).map(|(name, _)| name)
    }
}

/// `http.oauth2` as written (what of it is done: see `oauth2_module`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OAuth2Config {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub client_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_certificate_key_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_certificate_key: Option<Secret>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_certificate_key_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_certificate_key_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature_algorithm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claims: Option<serde_norway::Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub token_url: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub endpoint_params: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<TlsConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<ProxyUrl>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proxy_from_environment: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub proxy_connect_header: BTreeMap<String, Vec<Secret>>,
}

/// One `query_response` step.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryResponse {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
    /// Bytes to read and compare (not a regular expression), the string's UTF-8 bytes as Go's
    /// `[]byte(s)` makes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expect_bytes: Option<String>,
    /// `probe_expect_info`'s labels, their values templates of `expect`'s match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<Label>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub starttls: bool,
}

/// A `labels` entry of a `query_response` step.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Label {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub value: String,
}

/// `tcp:`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TcpModule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_ip_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_protocol_fallback: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ip_address: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query_response: Vec<QueryResponse>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<TlsConfig>,
}

/// `icmp:` as blackbox_exporter v0.28.0's `ICMPProbe` reads it (the numbers as written, its
/// bounds checked by `icmp_module`).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IcmpModule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_ip_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_protocol_fallback: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ip_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload_size: Option<i64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dont_fragment: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<i64>,
}

/// `unix:` (blackbox_exporter v0.28.0).
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UnixModule {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query_response: Vec<QueryResponse>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<TlsConfig>,
}

/// `grpc:`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrpcModule {
    #[serde(default)]
    pub service: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<TlsConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_ip_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_protocol_fallback: Option<bool>,
    /// Request metadata (grpc-go's `metadata.MD`: each key takes a list of values).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, Vec<String>>,
}

/// `dns:` (blackbox_exporter v0.28.0's `DNSProbe`); its defaults are dns_module.rs's.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DnsModule {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preferred_ip_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_protocol_fallback: Option<bool>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dns_over_tls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<TlsConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_ip_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_class: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recursion_desired: Option<bool>,
    /// `None`: NOERROR only (blackbox_exporter's nil list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_rcodes: Option<Vec<String>>,
    #[serde(default)]
    pub validate_answer_rrs: DnsRrValidator,
    #[serde(default)]
    pub validate_authority_rrs: DnsRrValidator,
    #[serde(default)]
    pub validate_additional_rrs: DnsRrValidator,
}

/// `DNSRRValidator`: one section's regular expressions.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DnsRrValidator {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_matches_regexp: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_all_match_regexp: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_not_matches_regexp: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fail_if_none_matches_regexp: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::File;

    /// Every secret field of the file: read as written (a number too, as Go's YAML reads it
    /// into a string), shown as `<secret>` by `/config`'s YAML and by `Debug`, never as itself.
    #[test]
    fn every_secret_is_read_and_shown_redacted() {
        let yaml = "modules:\n  m:\n    prober: http\n    http:\n      \
            tls_config: {key: v-key}\n      basic_auth: {username: u, password: 12345}\n      \
            bearer_token: v-bearer\n      authorization: {credentials: v-cred}\n      \
            proxy_url: 'http://p:1'\n      proxy_connect_header: {X-A: [v-hdr1, v-hdr2]}\n      \
            oauth2: {client_secret: v-client, client_certificate_key: v-cert, \
            proxy_connect_header: {X-B: [v-hdr3]}}\n";
        let file: File = serde_norway::from_str(yaml).unwrap();
        let http = file.modules["m"].http.as_ref().unwrap();
        assert_eq!(http.basic_auth.as_ref().unwrap().password.as_ref().unwrap().expose(), "12345");
        assert_eq!(http.proxy_connect_header["X-A"][1].expose(), "v-hdr2");
        let shown = serde_norway::to_string(&file).unwrap();
        let debug = format!("{file:?}");
        for page in [&shown, &debug] {
            assert!(!page.contains("v-") && !page.contains("12345"), "{page}");
        }
        assert_eq!(shown.matches("<secret>").count(), 9, "{shown}");
        assert!(shown.contains("bearer_token: <secret>"), "{shown}");
        // No value, or null, is no header (as it was before the type).
        let empty = "modules:\n  m:\n    http:\n      proxy_connect_header:\n";
        let file: File = serde_norway::from_str(empty).unwrap();
        assert!(file.modules["m"].http.as_ref().unwrap().proxy_connect_header.is_empty());
    }
}
