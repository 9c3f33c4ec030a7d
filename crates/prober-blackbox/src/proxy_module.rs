//! `http.proxy_url`, `no_proxy`, `proxy_from_environment`, `proxy_connect_header` (prometheus/common
//! v0.67's `ProxyConfig`) and `skip_resolve_phase_with_proxy` (blackbox_exporter v0.28.0's
//! `prober/http.go`), onto the library's [`HttpProxy`].
//!
//! - `proxy_url` alone: every request through it, loopback targets too (Go's
//!   `http.ProxyURL`); with `no_proxy`, Go's `NO_PROXY` rules, which never proxy `localhost`
//!   and loopback addresses.
//! - `proxy_from_environment`: `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` (or their lower-case
//!   forms) as Go's `httpproxy.FromEnvironment` reads them, at start and at each reload; not
//!   `HTTP_PROXY` when `REQUEST_METHOD` is set (a CGI process, Go's rule).
//! - The combinations prometheus/common refuses are refused, in its words.
//! - `skip_resolve_phase_with_proxy: true` with a proxy configured (by URL or environment,
//!   whether or not it serves the target, as blackbox_exporter decides it) reports no `resolve`
//!   phase for the first request. The name is never resolved here through a proxy (the proxy
//!   resolves it), with or without the option: where blackbox_exporter without it resolves the
//!   target first and sends the proxy the address, the proxy gets the name (docs/cli.md).

use prober::ProbeSpec;
use prober_core::HttpProxy;

use crate::config::HttpModule;

/// Sets the spec's proxy from the module; returns whether the module skips the resolve phase
/// (`skip_resolve_phase_with_proxy` with a proxy configured).
///
/// # Errors
/// prometheus/common's refusals, and a proxy URL or list the library refuses.
pub(crate) fn apply(h: &HttpModule, spec: &mut ProbeSpec) -> Result<bool, String> {
    let env = |upper: &str| {
        std::env::var(upper).ok().or_else(|| std::env::var(upper.to_ascii_lowercase()).ok())
    };
    apply_with(h, spec, env)
}

fn apply_with(
    h: &HttpModule,
    spec: &mut ProbeSpec,
    env: impl Fn(&str) -> Option<String>,
) -> Result<bool, String> {
    let url = h.proxy_url.as_ref().map(|u| u.expose()).filter(|u| !u.is_empty());
    if !h.proxy_connect_header.is_empty() && url.is_none() && !h.proxy_from_environment {
        return Err("if proxy_connect_header is configured, proxy_url or proxy_from_environment \
                    must also be configured"
            .into());
    }
    if h.proxy_from_environment && url.is_some() {
        return Err(
            "if proxy_from_environment is configured, proxy_url must not be configured".into()
        );
    }
    let no_proxy = h.no_proxy.as_deref().filter(|n| !n.is_empty());
    if h.proxy_from_environment && no_proxy.is_some() {
        return Err(
            "if proxy_from_environment is configured, no_proxy must not be configured".into()
        );
    }
    if no_proxy.is_some() && url.is_none() {
        return Err("if no_proxy is configured, proxy_url must also be configured".into());
    }
    let bad = |e: prober::SpecError| format!("http.proxy_url: {e}");
    let proxy = match url {
        Some(u) => {
            let mut p = HttpProxy::new(u).map_err(bad)?;
            if let Some(n) = no_proxy {
                p.set_no_proxy(n).map_err(bad)?;
            }
            Some(p)
        }
        None if h.proxy_from_environment => {
            let http = env("REQUEST_METHOD").is_none().then(|| env("HTTP_PROXY")).flatten();
            let (https, no) = (env("HTTPS_PROXY"), env("NO_PROXY"));
            HttpProxy::from_values(http.as_deref(), https.as_deref(), no.as_deref())
                .map_err(|e| format!("http.proxy_from_environment: {e}"))?
        }
        None => None,
    };
    let proxy = match proxy {
        Some(mut p) => {
            for (name, values) in &h.proxy_connect_header {
                for v in values {
                    p.add_connect_header(name, v.expose())
                        .map_err(|e| format!("http.proxy_connect_header: {e}"))?;
                }
            }
            Some(p)
        }
        None => None,
    };
    spec.set_http_proxy(proxy).map_err(|e| e.to_string())?;
    Ok(h.skip_resolve_phase_with_proxy && (url.is_some() || h.proxy_from_environment))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(yaml: &str) -> HttpModule {
        serde_norway::from_str(yaml).unwrap()
    }

    fn proxy_of(spec: &ProbeSpec) -> Option<&HttpProxy> {
        match &spec.kind {
            prober::ProbeKind::Http(h) => h.proxy.as_deref(),
            _ => None,
        }
    }

    #[test]
    fn refusals_as_prometheus_common() {
        for (yaml, want) in [
            ("no_proxy: a.b", "if no_proxy is configured, proxy_url must also be configured"),
            ("proxy_connect_header: {X: [y]}", "if proxy_connect_header is configured"),
            ("proxy_url: http://p:1\nproxy_from_environment: true", "proxy_url must not"),
            ("proxy_from_environment: true\nno_proxy: a", "no_proxy must not be configured"),
            ("proxy_url: socks5://u:pw@p:1", "is not supported"),
        ] {
            let mut spec = ProbeSpec::http("http://localhost/").unwrap();
            let e = apply_with(&module(yaml), &mut spec, |_| None).unwrap_err();
            assert!(e.contains(want) && !e.contains("pw"), "{yaml}: {e}");
        }
    }

    #[test]
    fn environment_and_skip_resolve() {
        let mut spec = ProbeSpec::http("http://localhost/").unwrap();
        let env = |k: &str| match k {
            "HTTP_PROXY" => Some("127.0.0.1:3128".to_string()),
            "NO_PROXY" => Some("example.com".to_string()),
            _ => None,
        };
        let m = module("proxy_from_environment: true\nskip_resolve_phase_with_proxy: true");
        assert!(apply_with(&m, &mut spec, env).unwrap());
        let p = proxy_of(&spec).unwrap();
        assert!(p.http.is_some() && p.https.is_none() && p.no_proxy.is_some());
        // Configured but empty in the environment: no proxy, the phase still skipped.
        let mut spec = ProbeSpec::http("http://localhost/").unwrap();
        assert!(apply_with(&m, &mut spec, |_| None).unwrap());
        assert!(proxy_of(&spec).is_none());
        // Skipping without a proxy resolves as ever.
        let m = module("skip_resolve_phase_with_proxy: true");
        assert!(!apply_with(&m, &mut spec, |_| None).unwrap());
        // The CONNECT headers, kept as secrets.
        let m = module("proxy_url: http://u:pw@127.0.0.1:1\nproxy_connect_header: {X-T: [v1, v2]}");
        assert!(!apply_with(&m, &mut spec, |_| None).unwrap());
        assert_eq!(proxy_of(&spec).unwrap().connect_headers.len(), 2);
        assert!(!format!("{m:?}{spec:?}").contains("pw"), "{m:?}");
    }
}
