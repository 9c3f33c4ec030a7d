//! Modules made ready once, at start: each maps onto the library's probe options, and the
//! checks the library does not make itself (several body and header expressions, HTTP
//! versions, SSL or not) are compiled here and judged on the outcome.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use prober::{
    HttpVersion, ProbeSpec, RedirectPolicy, StatusSet, TlsOptions, TlsVerify, TlsVersion,
};
use prober_core::{AddressFilter, BodyCel, Outcome};
use regex::bytes::Regex;

use crate::config::{self, File, HttpModule, RawModule, TlsConfig};
pub(crate) use crate::ip_protocol::{grpc_family, ip_family};
use crate::target;
pub use crate::target::TargetError;

/// Which prober a module runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prober {
    /// `prober: http`.
    Http,
    /// `prober: tcp`.
    Tcp,
    /// `prober: grpc`.
    Grpc,
    /// `prober: unix`: a stream connection to a Unix socket, the target its path.
    Unix,
    /// `prober: icmp`: one echo request to the target (a name or an IP address).
    Icmp,
}

impl Prober {
    /// The name as the file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Prober::Http => "http",
            Prober::Tcp => "tcp",
            Prober::Grpc => "grpc",
            Prober::Unix => "unix",
            Prober::Icmp => "icmp",
        }
    }
}

/// A header expectation (`fail_if_header_matches` / `_not_matches`).
#[derive(Debug)]
pub(crate) struct HeaderCheck {
    pub header: String,
    pub regexp: Regex,
    pub allow_missing: bool,
}

/// blackbox_exporter's help text of `probe_failed_due_to_cel`.
pub(crate) const CEL_HELP: &str = "Indicates if probe failed due to CEL expression not matching";

/// Which of blackbox_exporter's checks failed a probe, for its `probe_failed_due_to_*` gauges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FailedBy {
    /// A check without a gauge of its own (status, version, SSL, ...).
    Other,
    /// A body or header regular expression: `probe_failed_due_to_regex`.
    Regex,
    /// A CEL expression: `probe_failed_due_to_cel`.
    Cel,
}

/// One module, ready to build a spec for any target.
#[derive(Debug)]
pub struct Module {
    /// The module's name.
    pub name: String,
    /// Its prober.
    pub prober: Prober,
    /// Its `timeout` (`None`: only the scrape's).
    pub timeout: Option<Duration>,
    /// Its allow-list, `None` when it has none (every target is probed).
    pub filter: Option<Arc<AddressFilter>>,
    pub(crate) template: ProbeSpec,
    pub(crate) body_fail: Vec<Regex>,
    pub(crate) body_need: Vec<Regex>,
    /// `fail_if_body_json_matches_cel`.
    pub(crate) cel_fail: Option<BodyCel>,
    /// `fail_if_body_json_not_matches_cel`.
    pub(crate) cel_need: Option<BodyCel>,
    pub(crate) header_fail: Vec<HeaderCheck>,
    pub(crate) header_need: Vec<HeaderCheck>,
    pub(crate) versions: Vec<String>,
    pub(crate) fail_if_ssl: bool,
    pub(crate) fail_if_not_ssl: bool,
    pub(crate) valid_status: Option<Vec<u16>>,
    /// HTTP: redirects are followed (not `no_follow_redirects`).
    pub(crate) follow_redirects: bool,
    /// HTTP: `body_size_limit`, when set (and not 0): a longer body fails the probe.
    pub(crate) body_size_limit: Option<u64>,
    /// HTTP: `compression` names an algorithm blackbox_exporter does not know.
    pub(crate) unsupported_compression: bool,
    /// HTTP: `skip_resolve_phase_with_proxy` with a proxy configured: no `resolve` phase for
    /// the first request (see `proxy_module`).
    pub(crate) skip_resolve_phase: bool,
    /// gRPC and TCP: TLS is on.
    pub(crate) tls: bool,
    /// TCP: the `query_response` steps as the metrics read them (labels, bytes or lines).
    pub(crate) query_response: Vec<crate::tcp_module::QrStep>,
    /// Unix: the socket paths `allow.paths` admits (`None`: every path).
    pub(crate) paths: Option<Vec<String>>,
    /// The module as written (credentials as `<secret>`), for the debug page
    /// ([`crate::shown`]).
    pub(crate) shown: serde_norway::Value,
}

/// The modules of a file, by name.
#[derive(Debug, Default)]
pub struct Modules {
    /// The modules, by name.
    pub by_name: BTreeMap<String, Module>,
    /// The file as `/config` shows it (YAML, credentials as `<secret>`).
    shown: String,
}

/// blackbox_exporter v0.28.0's `User-Agent` (`Blackbox-Exporter/` and its `VERSION`, as its
/// release build sets `version.Version`), sent unless a module's header says otherwise.
pub const BLACKBOX_USER_AGENT: &str = "Blackbox-Exporter/0.28.0";

/// Redirects blackbox_exporter follows (its `CheckRedirect`); the 11th ends the probe, a
/// failure reporting `probe_http_redirects 11`.
pub const BLACKBOX_MAX_REDIRECTS: u32 = 10;

/// The largest module file read (1 MiB): a module file is a few kilobytes.
pub const MAX_FILE_LEN: usize = 1 << 20;

/// How much of a body is kept for the expressions: blackbox_exporter reads it whole unless
/// `body_size_limit`; here 1 MiB unless that option is set (then one byte more than it, to see
/// that a body is longer).
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

impl Modules {
    /// Reads a module file's text; `base` is the directory relative paths are read from.
    ///
    /// # Errors
    ///
    /// The first problem, naming the module and the field: `module "dns": prober dns is not
    /// supported by prober serve (http, tcp, grpc, unix and icmp are)`.
    pub fn parse(text: &str, base: &Path) -> Result<Modules, String> {
        if text.len() > MAX_FILE_LEN {
            return Err(format!("the file is larger than {MAX_FILE_LEN} bytes"));
        }
        prober_k8s::yaml_limits::check(text)?;
        // serde quotes a value it cannot take, and a credential written in the wrong place
        // must not reach a log or a `/-/reload` answer.
        let file: File = serde_norway::from_str(text)
            .map_err(|e| prober_core::redact_quoted_values(&e.to_string()))?;
        // Shown as read (what was written, no defaults filled in), through the config types'
        // own redaction of credentials.
        let shown = serde_norway::to_string(&file).map_err(|e| e.to_string())?;
        let mut by_name = BTreeMap::new();
        for (name, raw) in file.modules {
            let m = build(&name, raw, base).map_err(|e| format!("module {name:?}: {e}"))?;
            by_name.insert(name, m);
        }
        Ok(Modules { by_name, shown })
    }

    /// The configuration as blackbox_exporter's `/config` shows it: YAML, every credential
    /// (`password`, `bearer_token`, `credentials`, a credential header's value) as `<secret>`.
    pub fn config_yaml(&self) -> &str {
        if self.shown.is_empty() { "modules: {}\n" } else { &self.shown }
    }
}

fn build(name: &str, raw: RawModule, base: &Path) -> Result<Module, String> {
    let shown = serde_norway::to_value(&raw).map_err(|e| e.to_string())?;
    let prober = match raw.prober.as_str() {
        "http" => Prober::Http,
        "tcp" => Prober::Tcp,
        "grpc" => Prober::Grpc,
        "unix" => Prober::Unix,
        "icmp" => Prober::Icmp,
        "dns" => {
            return Err(format!(
                "prober {} is not supported by prober serve (http, tcp, grpc, unix and icmp are)",
                raw.prober
            ));
        }
        "" => return Err("prober: missing (http, tcp, grpc, unix or icmp)".into()),
        other => return Err(format!("prober: unknown prober {other:?}")),
    };
    let timeout = match raw.timeout.as_deref() {
        None => None,
        Some(t) => match config::go_duration(t) {
            Some(d) if d.is_zero() => None,
            Some(d) => Some(d),
            None => return Err(format!("timeout: {t:?} is not a duration (5s, 1m30s, 500ms)")),
        },
    };
    let paths = crate::unix_module::allowed_paths(prober, raw.allow.as_ref())?;
    let filter = match &raw.allow {
        None => None,
        Some(_) if prober == Prober::Unix => None,
        Some(a) => {
            let ports: Vec<String> = a
                .ports
                .iter()
                .map(|p| match p {
                    config::PortItem::One(n) => n.to_string(),
                    config::PortItem::Text(t) => t.clone(),
                })
                .collect();
            let f = AddressFilter::parse(&a.hosts, &a.networks, &ports)
                .map_err(|e| format!("allow: {e}"))?;
            Some(Arc::new(f))
        }
    };
    let mut m = Module {
        name: name.to_string(),
        prober,
        timeout,
        filter,
        template: ProbeSpec::tcp("localhost", 1).map_err(|e| e.to_string())?,
        body_fail: Vec::new(),
        body_need: Vec::new(),
        cel_fail: None,
        cel_need: None,
        header_fail: Vec::new(),
        header_need: Vec::new(),
        versions: Vec::new(),
        fail_if_ssl: false,
        fail_if_not_ssl: false,
        valid_status: None,
        follow_redirects: false,
        body_size_limit: None,
        unsupported_compression: false,
        skip_resolve_phase: false,
        tls: false,
        query_response: Vec::new(),
        paths,
        shown,
    };
    match prober {
        Prober::Http => http(&mut m, &raw.http.unwrap_or_default(), base)?,
        Prober::Tcp => crate::tcp_module::tcp(&mut m, &raw.tcp.unwrap_or_default(), base)?,
        Prober::Grpc => crate::grpc_module::grpc(&mut m, &raw.grpc.unwrap_or_default(), base)?,
        Prober::Unix => crate::unix_module::unix(&mut m, &raw.unix.unwrap_or_default(), base)?,
        Prober::Icmp => {
            m.template =
                crate::icmp_module::template(&raw.icmp.unwrap_or_default(), raw.allow.as_ref())?;
        }
    }
    Ok(m)
}

fn regexes(field: &str, list: &[String]) -> Result<Vec<Regex>, String> {
    list.iter().map(|r| Regex::new(r).map_err(|e| format!("{field}: {r:?}: {e}"))).collect()
}

fn header_checks(field: &str, list: &[config::HeaderMatch]) -> Result<Vec<HeaderCheck>, String> {
    list.iter()
        .map(|h| {
            if h.header.is_empty() {
                return Err(format!("{field}: header name must be set for HTTP header matchers"));
            }
            if h.regexp.is_empty() {
                return Err(format!("{field}: regexp must be set for HTTP header matchers"));
            }
            let regexp =
                Regex::new(&h.regexp).map_err(|e| format!("{field}: {:?}: {e}", h.regexp))?;
            Ok(HeaderCheck { header: h.header.clone(), regexp, allow_missing: h.allow_missing })
        })
        .collect()
}

/// A CEL expression of the module, compiled at start: one that does not compile refuses the
/// module file with its position (blackbox_exporter refuses it too, without one).
fn cel(field: &str, source: Option<&str>) -> Result<Option<BodyCel>, String> {
    source.map(|s| BodyCel::new(s).map_err(|e| format!("{field}: {e}"))).transpose()
}

/// A small file named by the module (a body, a token, a password): read at start.
fn read_small(base: &Path, path: &str, field: &str) -> Result<Vec<u8>, String> {
    let p = base.join(path);
    let meta = std::fs::metadata(&p).map_err(|e| format!("{field}: {}: {e}", p.display()))?;
    if !meta.is_file() || meta.len() > prober::MAX_BODY_LEN as u64 {
        return Err(format!(
            "{field}: {}: not a regular file of at most {} bytes",
            p.display(),
            prober::MAX_BODY_LEN
        ));
    }
    std::fs::read(&p).map_err(|e| format!("{field}: {}: {e}", p.display()))
}

fn http(m: &mut Module, h: &HttpModule, base: &Path) -> Result<(), String> {
    if let Some(field) = h.unsupported() {
        return Err(format!("http.{field} is not supported by prober serve"));
    }
    // The URL is the target's; the template carries every other option.
    let mut spec = ProbeSpec::http("http://localhost/").map_err(|e| e.to_string())?;
    if let Some(method) = &h.method {
        spec.set_method(method).map_err(|e| format!("http.method: {e}"))?;
    }
    let body = match (&h.body, &h.body_file) {
        (Some(_), Some(_)) => return Err("setting body and body_file both are not allowed".into()),
        (Some(b), None) => b.clone().into_bytes(),
        (None, Some(f)) => read_small(base, f, "http.body_file")?,
        (None, None) => Vec::new(),
    };
    if !body.is_empty() {
        spec.set_body(body).map_err(|e| format!("http.body: {e}"))?;
    }
    // blackbox_exporter's default User-Agent, which a module's `User-Agent` header replaces
    // (an empty one sends none, as Go's client).
    if let prober::ProbeKind::Http(spec) = &mut spec.kind {
        spec.user_agent = BLACKBOX_USER_AGENT.to_string();
    }
    for (name, value) in &h.headers.0 {
        spec.add_header(name, value).map_err(|e| format!("http.headers: {e}"))?;
    }
    // Go's client sends no `Accept`: the library's default one (the kubelet's `*/*`) is
    // removed unless the module sets its own.
    if !h.headers.0.iter().any(|(n, _)| n.eq_ignore_ascii_case("Accept")) {
        spec.add_header("Accept", "").map_err(|e| e.to_string())?;
    }
    if let Some(auth) = authorization(h, base)? {
        spec.add_header("Authorization", &auth).map_err(|e| format!("http: {e}"))?;
    }
    // blackbox_exporter follows redirects (Go's client, to any host) unless told not to.
    let follow = match (h.no_follow_redirects, h.follow_redirects) {
        (Some(no), _) => !no,
        (None, Some(yes)) => yes,
        (None, None) => true,
    };
    m.follow_redirects = follow;
    spec.set_redirect_policy(if follow { RedirectPolicy::AnyHost } else { RedirectPolicy::None });
    // Its checker refuses a redirect when `len(via) > 10`: 10 are followed, where the
    // kubelet's (the library's default) follows 9.
    spec.set_max_redirects(BLACKBOX_MAX_REDIRECTS).map_err(|e| e.to_string())?;
    // One cookie jar per probe (net/http/cookiejar): a login redirect's cookie goes back.
    spec.set_cookies(true).map_err(|e| e.to_string())?;
    spec.set_tls(tls_options(h.tls_config.as_ref(), base)?).map_err(|e| e.to_string())?;
    // prometheus/common (v0.52, blackbox_exporter v0.25.0's) configures HTTP/2 on its transport
    // unless `enable_http2: false`; without it Go's transport, built with its own TLS config
    // and dialer, never offers `h2`, so every request is HTTP/1.1.
    if h.enable_http2 == Some(false) {
        spec.set_http_version(HttpVersion::Http1).map_err(|e| e.to_string())?;
    }
    if let Some(host) = h.headers.0.iter().find(|(n, _)| n.eq_ignore_ascii_case("Host")) {
        server_name_from_host(&mut spec, host.1);
    }
    // Statuses are judged here (blackbox_exporter's rule: 2xx unless listed), the library
    // keeping its kubelet rule out of the way: every status is a "success" to it.
    spec.set_expect_status(StatusSet::parse("100-599").map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    // blackbox_exporter reads the body through `http.MaxBytesReader`: a body longer than
    // `body_size_limit` (a positive one) fails the probe. One byte more than the limit is
    // kept, so that the run itself reads far enough to see it.
    let limit = match &h.body_size_limit {
        None => None,
        Some(v) => Some(size(v).ok_or("http.body_size_limit: not a size (1MB, 512KiB, 4096)")?)
            .filter(|l| *l > 0),
    };
    let keep = limit.map_or(DEFAULT_BODY_LIMIT, |l| l.saturating_add(1));
    spec.set_output_limit(keep.clamp(1, 64 << 20)).map_err(|e| e.to_string())?;
    m.body_size_limit = limit.map(|l| l as u64);
    m.unsupported_compression =
        crate::compression::apply(h, &mut spec)? == crate::compression::Wanted::Unsupported;
    m.skip_resolve_phase = crate::proxy_module::apply(h, &mut spec)?;
    // Kept always: the header expressions judge them, and `Last-Modified` is a metric.
    spec.set_keep_headers(true).map_err(|e| e.to_string())?;
    m.body_fail = regexes("http.fail_if_body_matches_regexp", &h.fail_if_body_matches_regexp)?;
    m.body_need =
        regexes("http.fail_if_body_not_matches_regexp", &h.fail_if_body_not_matches_regexp)?;
    m.cel_fail =
        cel("http.fail_if_body_json_matches_cel", h.fail_if_body_json_matches_cel.as_deref())?;
    m.cel_need = cel(
        "http.fail_if_body_json_not_matches_cel",
        h.fail_if_body_json_not_matches_cel.as_deref(),
    )?;
    m.header_fail = header_checks("http.fail_if_header_matches", &h.fail_if_header_matches)?;
    m.header_need =
        header_checks("http.fail_if_header_not_matches", &h.fail_if_header_not_matches)?;
    // blackbox_exporter refuses HTTP/3.0 unless `enable_http3`, which this engine lacks: a
    // module that names it is refused too, not left to wait for a version it never speaks.
    if h.valid_http_versions.iter().any(|v| v == "HTTP/3.0") {
        return Err("http.valid_http_versions: HTTP/3.0 needs enable_http3, which prober serve \
                    does not support"
            .into());
    }
    m.versions = h.valid_http_versions.clone();
    m.fail_if_ssl = h.fail_if_ssl;
    m.fail_if_not_ssl = h.fail_if_not_ssl;
    m.valid_status = (!h.valid_status_codes.is_empty()).then(|| h.valid_status_codes.clone());
    let family = ip_family(h.preferred_ip_protocol.as_deref(), h.ip_protocol_fallback, "http")?;
    spec.set_ip_family(family).map_err(|e| e.to_string())?;
    // blackbox_exporter dials the target's chosen address, and Go's client dials a redirect
    // that names a host by name, over both families.
    spec.set_redirects_dial_by_name(true).map_err(|e| e.to_string())?;
    m.template = spec;
    Ok(())
}

/// `body_size_limit` as prometheus/common's units read it (`1MB` is 2^20, as `1MiB`).
fn size(v: &serde_norway::Value) -> Option<usize> {
    if let Some(n) = v.as_u64() {
        return usize::try_from(n).ok();
    }
    let s = v.as_str()?.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: usize = s[..split].parse().ok()?;
    let scale: usize = match &s[split..] {
        "" | "B" => 1,
        "KB" | "KiB" => 1 << 10,
        "MB" | "MiB" => 1 << 20,
        "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// The `Authorization` header of `basic_auth`, `bearer_token(_file)` or `authorization`.
fn authorization(h: &HttpModule, base: &Path) -> Result<Option<String>, String> {
    let text = |bytes: Vec<u8>, field: &str| {
        String::from_utf8(bytes)
            .map(|s| s.trim().to_string())
            .map_err(|_| format!("{field}: not UTF-8"))
    };
    let mut found = Vec::new();
    if let Some(b) = &h.basic_auth {
        let user = match &b.username_file {
            Some(f) => text(read_small(base, f, "http.basic_auth.username_file")?, "username")?,
            None => b.username.clone(),
        };
        let password = match (&b.password, &b.password_file) {
            (Some(_), Some(_)) => {
                return Err("http.basic_auth: at most one of password and password_file".into());
            }
            (Some(p), None) => p.expose().to_string(),
            (None, Some(f)) => {
                text(read_small(base, f, "http.basic_auth.password_file")?, "password")?
            }
            (None, None) => String::new(),
        };
        found.push(format!("Basic {}", base64(format!("{user}:{password}").as_bytes())));
    }
    match (&h.bearer_token, &h.bearer_token_file) {
        (Some(t), None) => found.push(format!("Bearer {}", t.expose())),
        (None, Some(f)) => found.push(format!(
            "Bearer {}",
            text(read_small(base, f, "http.bearer_token_file")?, "bearer token")?
        )),
        (Some(_), Some(_)) => {
            return Err("http: at most one of bearer_token and bearer_token_file".into());
        }
        (None, None) => {}
    }
    if let Some(a) = &h.authorization {
        let kind = a.kind.clone().unwrap_or_else(|| "Bearer".into());
        let cred = match (&a.credentials, &a.credentials_file) {
            (Some(c), None) => c.expose().to_string(),
            (None, Some(f)) => {
                text(read_small(base, f, "http.authorization.credentials_file")?, "credentials")?
            }
            (None, None) => String::new(),
            (Some(_), Some(_)) => {
                return Err(
                    "http.authorization: at most one of credentials and credentials_file".into()
                );
            }
        };
        found.push(format!("{kind} {cred}"));
    }
    if found.len() > 1 {
        return Err("http: at most one of basic_auth, bearer_token and authorization".into());
    }
    Ok(found.pop())
}

/// Standard base64 with padding (Basic credentials, gRPC's binary metadata), from the crate the
/// workspace pins.
pub(crate) fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

pub(crate) fn tls_options(c: Option<&TlsConfig>, base: &Path) -> Result<TlsOptions, String> {
    // Go's client verifies unless insecure_skip_verify: the opposite of the kubelet's default.
    let mut o = TlsOptions { verify: TlsVerify::SystemRoots, ..TlsOptions::default() };
    let Some(c) = c else { return Ok(o) };
    if c.ca.is_some() || c.cert.is_some() || c.key.is_some() {
        return Err(
            "tls_config: inline ca, cert and key are not supported (use the _file fields)".into()
        );
    }
    let path = |p: &str| -> PathBuf { base.join(p) };
    o.verify = match (&c.ca_file, c.insecure_skip_verify) {
        (_, true) => TlsVerify::None,
        (Some(ca), false) => TlsVerify::CaFile(path(ca)),
        (None, false) => TlsVerify::SystemRoots,
    };
    o.server_name = c.server_name.clone().filter(|s| !s.is_empty());
    o.client_cert = match (&c.cert_file, &c.key_file) {
        (Some(cert), Some(key)) => Some((path(cert), path(key))),
        (None, None) => None,
        _ => return Err("tls_config: cert_file and key_file go together".into()),
    };
    if let Some(v) = &c.min_version {
        o.min_version = Some(
            TlsVersion::parse(v)
                .ok_or_else(|| format!("tls_config.min_version: {v:?} (TLS12 or TLS13)"))?,
        );
    }
    if let Some(v) = &c.max_version {
        o.max_version = Some(
            TlsVersion::parse(v)
                .ok_or_else(|| format!("tls_config.max_version: {v:?} (TLS12 or TLS13)"))?,
        );
    }
    o.validate().map_err(|e| format!("tls_config: {e}"))?;
    Ok(o)
}

/// blackbox_exporter's TLS server name for an HTTP module without `tls_config.server_name`:
/// the `Host` header's value when there is one (else the target's host, the library's
/// default). A value that is no server name (a port is dropped) leaves the default.
fn server_name_from_host(spec: &mut ProbeSpec, host: &str) {
    let prober::ProbeKind::Http(h) = &spec.kind else { return };
    if h.tls.server_name.is_some() {
        return;
    }
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    let tls = TlsOptions { server_name: Some(name.to_string()), ..h.tls.clone() };
    // Refused (not a DNS name nor an address): the default stays.
    let _ = spec.set_tls(tls);
}

impl Module {
    /// blackbox_exporter's `hostname` parameter of `/probe`: for an HTTP module the `Host`
    /// header (refused when the module sets another one) and, unless `tls_config.server_name`
    /// is set, the TLS server name; for a TCP module with TLS the server name unless set. gRPC
    /// modules ignore it, as blackbox_exporter does.
    ///
    /// # Errors
    ///
    /// [`TargetError::Bad`] (400): the module's own `Host` header differs, or the value
    /// cannot be a header value.
    pub fn apply_hostname(&self, spec: &mut ProbeSpec, hostname: &str) -> Result<(), TargetError> {
        match self.prober {
            Prober::Http => {
                let prober::ProbeKind::Http(h) = &spec.kind else { return Ok(()) };
                match h.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("Host")) {
                    Some((_, v)) if v != hostname => {
                        return Err(TargetError::Bad(format!(
                            "host header defined both in module configuration ({v}) and with URL-parameter 'hostname' ({hostname})"
                        )));
                    }
                    Some(_) => {}
                    None => spec
                        .add_header("Host", hostname)
                        .map_err(|e| TargetError::Bad(format!("hostname: {e}")))?,
                }
                server_name_from_host(spec, hostname);
            }
            Prober::Tcp if self.tls => {
                let prober::ProbeKind::Tcp(t) = &spec.kind else { return Ok(()) };
                let Some(tls) = t.tls.as_ref().filter(|t| t.server_name.is_none()) else {
                    return Ok(());
                };
                let tls = TlsOptions { server_name: Some(hostname.to_string()), ..tls.clone() };
                spec.set_tls(tls).map_err(|e| TargetError::Bad(format!("hostname: {e}")))?;
            }
            Prober::Tcp | Prober::Grpc | Prober::Unix | Prober::Icmp => {}
        }
        Ok(())
    }

    /// The spec that probes `target` with this module within `timeout`.
    ///
    /// # Errors
    ///
    /// [`TargetError::Unprobeable`] for a target this prober cannot take (a malformed URL, no
    /// port, no host), [`TargetError::Bad`] for a spec the library refuses, [`TargetError::Denied`]
    /// for one the allow-list refuses by its name or port (its addresses are checked again
    /// when it is connected to).
    pub fn spec(&self, target: &str, timeout: Duration) -> Result<ProbeSpec, TargetError> {
        let mut spec = self.template.clone();
        let bad = |e: String| TargetError::Bad(e);
        if self.prober == Prober::Icmp {
            return crate::icmp_module::spec(&self.template, self.filter.as_ref(), target, timeout);
        }
        if self.prober == Prober::Unix {
            crate::unix_module::set_target(&mut spec, target, self.paths.as_deref())?;
            spec.set_timeout(timeout.max(Duration::from_millis(1)))
                .map_err(|e| bad(e.to_string()))?;
            return Ok(spec);
        }
        match self.prober {
            Prober::Http => {
                let parsed = target::http_url(target).map_err(TargetError::Unprobeable)?;
                if let Some(f) = &self.filter {
                    self.precheck(f, parsed.host(), parsed.port())?;
                }
                // Moved in, not copied: most modules have no allow-list to read it after.
                if let prober::ProbeKind::Http(h) = &mut spec.kind {
                    h.url = parsed;
                }
            }
            Prober::Tcp | Prober::Grpc | Prober::Unix | Prober::Icmp => {
                let (host, port) = target::host_port(target).map_err(TargetError::Unprobeable)?;
                if let Some(f) = &self.filter {
                    self.precheck(f, &host, port)?;
                }
                match &mut spec.kind {
                    prober::ProbeKind::Tcp(t) => {
                        t.host = host;
                        t.port = port;
                    }
                    prober::ProbeKind::Grpc(g) => {
                        g.host = host;
                        g.port = port;
                    }
                    _ => {}
                }
            }
        }
        if let Some(f) = &self.filter {
            spec.set_address_filter(Some(f.clone())).map_err(|e| bad(e.to_string()))?;
        }
        spec.set_timeout(timeout.max(Duration::from_millis(1))).map_err(|e| bad(e.to_string()))?;
        Ok(spec)
    }

    /// The allow-list's verdict on what the target says before anything is resolved: its
    /// port, its name, and an address written in any of the forms the resolver reads.
    fn precheck(&self, f: &AddressFilter, host: &str, port: u16) -> Result<(), TargetError> {
        let denied = |why: String| {
            TargetError::Denied(format!("target {host}:{port} is not allowed: {why}"))
        };
        if !f.port_allowed(port) {
            return Err(denied(format!("port {port} is not allowed")));
        }
        let literal = host
            .parse::<std::net::IpAddr>()
            .ok()
            .or_else(|| prober_core::allow::parse_ipv4_loose(host).map(std::net::IpAddr::V4));
        match literal {
            Some(ip) => f
                .check(None, std::net::SocketAddr::new(ip, port))
                .map_err(|e| denied(e.to_string())),
            None if !f.host_allowed(host) => Err(denied(format!("host {host} is not allowed"))),
            None => Ok(()),
        }
    }

    /// Whether the final response is a redirect blackbox_exporter's `CheckRedirect` refused
    /// because the module does not follow redirects: Go's client asks it for a 301, 302, 303,
    /// 307 or 308 with a `Location`, and then returns that response with its body closed.
    pub(crate) fn redirect_not_followed(&self, o: &Outcome) -> bool {
        let location =
            o.headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("location") && !v.is_empty());
        self.prober == Prober::Http
            && !self.follow_redirects
            && crate::facts::http_responded(o)
            && o.http_status.is_some_and(|s| matches!(s, 301 | 302 | 303 | 307 | 308))
            && location
    }

    /// The checks blackbox_exporter makes beyond the status: `None` when they pass, else
    /// the failing check's description and whether it was a regular expression.
    pub(crate) fn judge(
        &self,
        o: &Outcome,
        deadline: Option<Instant>,
    ) -> Option<(String, FailedBy)> {
        if let Some(status) = o.http_status {
            let ok = match &self.valid_status {
                Some(list) => list.contains(&status),
                None => (200..300).contains(&status),
            };
            if !ok {
                return Some((
                    format!("Invalid HTTP response status code {status}, wanted 2xx"),
                    FailedBy::Other,
                ));
            }
        }
        if self.prober != Prober::Http {
            return None;
        }
        if self.unsupported_compression {
            let e = "Failed to get decompressor for HTTP response body: unsupported compression algorithm";
            return Some((e.into(), FailedBy::Other));
        }
        // Go's `Response.Proto`, judged only when there was a response, as blackbox does.
        if let (false, Some(v)) = (self.versions.is_empty(), o.http_version) {
            let v = v.as_str();
            if !self.versions.iter().any(|w| w == v) {
                return Some((format!("Invalid HTTP version number {v}"), FailedBy::Other));
            }
        }
        let ssl = crate::facts::http_ssl(o);
        if self.fail_if_ssl && ssl {
            return Some(("Final request was over SSL".into(), FailedBy::Other));
        }
        if self.fail_if_not_ssl && !ssl {
            return Some(("Final request was not over SSL".into(), FailedBy::Other));
        }
        // The first of blackbox_exporter's body checks to read the body (the regular
        // expressions, then CEL) meets a read error first, and fails on it.
        let body_reader = if !self.body_fail.is_empty() || !self.body_need.is_empty() {
            Some(FailedBy::Regex)
        } else if self.has_cel() {
            Some(FailedBy::Cel)
        } else {
            None
        };
        if let (Some(by), true) = (body_reader, self.redirect_not_followed(o)) {
            // Its body expressions then read a closed body, and fail on the error.
            return Some((
                "Error reading HTTP body: http: read on closed response body".into(),
                by,
            ));
        }
        if self.body_size_limit.is_some_and(|l| o.output_total > l) {
            return Some((
                "Failed to read HTTP response body: http: request body too large".into(),
                body_reader.unwrap_or(FailedBy::Other),
            ));
        }
        for r in &self.body_fail {
            if r.is_match(&o.output) {
                return Some((format!("Body matched regular expression {r}"), FailedBy::Regex));
            }
        }
        for r in &self.body_need {
            if !r.is_match(&o.output) {
                return Some((
                    format!("Body did not match regular expression {r}"),
                    FailedBy::Regex,
                ));
            }
        }
        if let Some(failed) = self.judge_cel(o, deadline) {
            return Some((failed, FailedBy::Cel));
        }
        let values = |name: &str| -> Vec<&str> {
            o.headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
                .collect()
        };
        for h in &self.header_fail {
            let vs = values(&h.header);
            if vs.is_empty() && !h.allow_missing {
                return Some((format!("Missing required header {}", h.header), FailedBy::Regex));
            }
            if vs.iter().any(|v| h.regexp.is_match(v.as_bytes())) {
                return Some((
                    format!("Header {} matched regular expression {}", h.header, h.regexp),
                    FailedBy::Regex,
                ));
            }
        }
        for h in &self.header_need {
            let vs = values(&h.header);
            if vs.is_empty() && !h.allow_missing {
                return Some((format!("Missing required header {}", h.header), FailedBy::Regex));
            }
            if !vs.is_empty() && !vs.iter().any(|v| h.regexp.is_match(v.as_bytes())) {
                return Some((
                    format!("Header {} did not match regular expression {}", h.header, h.regexp),
                    FailedBy::Regex,
                ));
            }
        }
        None
    }

    /// The module has a CEL expression (and so the `probe_failed_due_to_cel` gauge).
    pub(crate) fn has_cel(&self) -> bool {
        self.cel_fail.is_some() || self.cel_need.is_some()
    }

    /// `fail_if_body_json_matches_cel` and `fail_if_body_json_not_matches_cel` on the whole
    /// body (blackbox_exporter v0.28.0 gives them what its regular expressions left of the
    /// body, nothing when there are any: a module with both always fails there; here each sees
    /// the body). Messages as blackbox_exporter logs them.
    fn judge_cel(&self, o: &Outcome, deadline: Option<Instant>) -> Option<String> {
        if let Some(cel) = &self.cel_fail {
            match cel.eval_json(&o.output, deadline) {
                Ok(true) => return Some(format!("Body matched CEL expression {cel}")),
                Ok(false) => {}
                Err(why) => return Some(why),
            }
        }
        if let Some(cel) = &self.cel_need {
            match cel.eval_json(&o.output, deadline) {
                Ok(false) => return Some(format!("Body did not match CEL expression {cel}")),
                Ok(true) => {}
                Err(why) => return Some(why),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober_core::IpFamily;

    #[test]
    fn base64_matches_rfc4648() {
        for (i, o) in
            [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foobar", "Zm9vYmFy")]
        {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }

    /// A CEL expression compiles at start: a bad one refuses the file, naming the field and
    /// the position; a good one gives the module its gauge.
    #[test]
    fn cel_expressions_compile_at_start() {
        let file =
            "modules:\n  c: {prober: http, http: {fail_if_body_json_matches_cel: \"body.a ==\"}}\n";
        let e = Modules::parse(file, Path::new(".")).unwrap_err();
        assert!(e.contains("http.fail_if_body_json_matches_cel"), "{e}");
        assert!(e.contains("line 1, column"), "{e}");
        let file = "modules:\n  c: {prober: http, http: {fail_if_body_json_not_matches_cel: \"body.a\"}}\n";
        let m = Modules::parse(file, Path::new(".")).unwrap();
        assert!(m.by_name["c"].has_cel() && m.by_name["c"].cel_fail.is_none());
    }

    /// blackbox_exporter's defaults (ip6, with fallback) and its two options, on every prober
    /// (gRPC connects over both families unless one is required).
    #[test]
    fn ip_protocol_options_map_to_families() {
        let file = "modules:
  h: {prober: http}
  h4: {prober: http, http: {preferred_ip_protocol: ip4}}
  t6only: {prober: tcp, tcp: {ip_protocol_fallback: false}}
  g4only: {prober: grpc, grpc: {preferred_ip_protocol: ip4, ip_protocol_fallback: false}}
  g4: {prober: grpc, grpc: {preferred_ip_protocol: ip4}}
  g: {prober: grpc}
";
        let m = Modules::parse(file, Path::new(".")).unwrap();
        let family = |name: &str| m.by_name[name].template.ip_family();
        assert_eq!(family("h"), IpFamily::PreferV6);
        assert_eq!(family("h4"), IpFamily::PreferV4);
        assert_eq!(family("t6only"), IpFamily::V6);
        assert_eq!(family("g4only"), IpFamily::V4);
        assert_eq!(family("g4"), IpFamily::Any);
        // gRPC dials by name over both families unless the family is required (grpc.go).
        assert_eq!(family("g"), IpFamily::Any);
        let bad = "modules:\n  x: {prober: grpc, grpc: {preferred_ip_protocol: ipv4}}\n";
        let err = Modules::parse(bad, Path::new(".")).unwrap_err();
        assert!(err.contains("grpc.preferred_ip_protocol: \"ipv4\" is not ip4 or ip6"), "{err}");
    }

    /// blackbox_exporter refuses a module that accepts HTTP/3.0 without `enable_http3`
    /// (config.go), which this engine does not have: refused here too, not left to fail.
    #[test]
    fn http3_version_is_refused() {
        let file =
            "modules:\n  h: {prober: http, http: {valid_http_versions: [HTTP/1.1, HTTP/3.0]}}\n";
        let err = Modules::parse(file, Path::new(".")).unwrap_err();
        assert!(err.contains("http.valid_http_versions: HTTP/3.0"), "{err}");
        let ok =
            "modules:\n  h: {prober: http, http: {valid_http_versions: [HTTP/1.1, HTTP/2.0]}}\n";
        assert!(Modules::parse(ok, Path::new(".")).is_ok());
    }

    #[test]
    fn sizes() {
        assert_eq!(size(&serde_norway::Value::from(4096)), Some(4096));
        assert_eq!(size(&serde_norway::Value::from("1MB")), Some(1 << 20));
        assert_eq!(size(&serde_norway::Value::from("512KiB")), Some(512 << 10));
        assert_eq!(size(&serde_norway::Value::from("lots")), None);
    }
}
