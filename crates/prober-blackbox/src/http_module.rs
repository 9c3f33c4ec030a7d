//! A `prober: http` module as the library's HTTP probe: method, body, headers and
//! credentials, redirects as Go's client follows them, TLS, proxies, compression, and the
//! expressions the verdict (http_verdict.rs) judges.

use std::path::Path;

use prober::{HttpVersion, ProbeSpec, RedirectPolicy, StatusSet, TlsOptions};
use prober_core::BodyCel;
use regex::bytes::Regex;

use crate::config::{self, HttpModule};
use crate::ip_protocol::ip_family;
use crate::module::{HeaderCheck, Module};
use crate::options::{base64, tls_options};

/// blackbox_exporter v0.28.0's `User-Agent` (`Blackbox-Exporter/` and its `VERSION`, as its
/// release build sets `version.Version`), sent unless a module's header says otherwise.
pub const BLACKBOX_USER_AGENT: &str = "Blackbox-Exporter/0.28.0";

/// Redirects blackbox_exporter follows (its `CheckRedirect`); the 11th ends the probe, a
/// failure reporting `probe_http_redirects 11`.
pub const BLACKBOX_MAX_REDIRECTS: u32 = 10;

/// How much of a body is kept for the expressions: blackbox_exporter reads it whole unless
/// `body_size_limit`; here 1 MiB unless that option is set (then one byte more than it, to see
/// that a body is longer).
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

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

/// Fills `m` from the module's `http:` section.
pub(crate) fn http(m: &mut Module, h: &HttpModule, base: &Path) -> Result<(), String> {
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
        (None, Some(f)) => read_small(base, f, "http.body_file").unwrap_or_else(|e| {
            m.body_file_error = Some(format!("Error creating request: {e}"));
            Vec::new()
        }),
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
    let read = crate::oauth2_module::Readers {
        file: &|path, field| read_small(base, path, field),
        tls: &|c| tls_options(c, base),
    };
    crate::oauth2_module::apply(h, &mut spec, &read)?;
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
    // Only the fields read: `Last-Modified` (a metric), `Location` (a redirect not followed)
    // and those the expressions judge; copying every field cost more than the rest of the
    // response's reading.
    // (Set in place: the setter's code would be one more piece of `prober`, whose size is
    // bounded.)
    if let prober::ProbeKind::Http(kept) = &mut spec.kind {
        let mut names = vec!["Last-Modified".to_string(), "Location".to_string()];
        for c in m.header_fail.iter().chain(&m.header_need) {
            names.push(c.header.clone());
        }
        kept.keep_header_names = names;
    }
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

/// blackbox_exporter's TLS server name for an HTTP module without `tls_config.server_name`:
/// the `Host` header's value when there is one (else the target's host, the library's
/// default). A value that is no server name (a port is dropped) leaves the default.
pub(crate) fn server_name_from_host(spec: &mut ProbeSpec, host: &str) {
    let prober::ProbeKind::Http(h) = &spec.kind else { return };
    if h.tls().server_name.is_some() {
        return;
    }
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    let tls = TlsOptions { server_name: Some(name.to_string()), ..h.tls().clone() };
    // Refused (not a DNS name nor an address): the default stays.
    let _ = spec.set_tls(tls);
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn sizes() {
        assert_eq!(size(&serde_norway::Value::from(4096)), Some(4096));
        assert_eq!(size(&serde_norway::Value::from("1MB")), Some(1 << 20));
        assert_eq!(size(&serde_norway::Value::from("512KiB")), Some(512 << 10));
        assert_eq!(size(&serde_norway::Value::from("lots")), None);
    }
}
