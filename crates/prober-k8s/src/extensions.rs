//! The fields beyond the kubelet, named beside the Kubernetes fields they extend (see "Beyond
//! the kubelet" in `docs/semantics.md`): `httpGet.expectStatus`, `httpGet.expectBody`,
//! `httpGet.keepAlive`, `httpGet.http1Only`, `httpGet.maxRedirects`, `httpGet.cookies`,
//! `httpGet.method`, `httpGet.body`, `unixSocket` (under `httpGet`,
//! `tcpSocket` and `grpc`), `grpc.metadata`, `grpc.userAgent`, `grpc.authority`,
//! `grpc.keepAlive`,
//! `tcpSocket.send`, `tcpSocket.expect`,
//! `unhealthyPeriodSeconds`/`Milliseconds`, `transitionPeriodSeconds`/`Milliseconds` and
//! `jitterPercent`. Kept here so that the translation only calls in.

use std::time::Duration;

use prober::{
    HttpVersion, Pattern, ProbeKind, ProbeSpec, Scheme, StatusSet, TcpStep, UnixSocket, unescape,
};

/// `httpGet.expectStatus`, `httpGet.expectBody` and `httpGet.keepAlive` of a watch-file probe
/// at path `p`.
pub(crate) fn apply_http_fields(
    p: &str,
    spec: &mut ProbeSpec,
    expect_status: Option<&str>,
    expect_body: Option<&str>,
    keep_alive: bool,
) -> Result<(), String> {
    if keep_alive {
        spec.set_keep_alive(true).map_err(|e| format!("{p}.httpGet.keepAlive: {e}"))?;
    }
    if let Some(v) = expect_status {
        let set = StatusSet::parse(v).map_err(|e| format!("{p}.httpGet.expectStatus: {e}"))?;
        spec.set_expect_status(set).map_err(|e| format!("{p}.httpGet.expectStatus: {e}"))?;
    }
    if let Some(v) = expect_body {
        let pat = Pattern::new(v).map_err(|e| format!("{p}.httpGet.expectBody: {e}"))?;
        spec.set_expect_body(pat).map_err(|e| format!("{p}.httpGet.expectBody: {e}"))?;
    }
    Ok(())
}

/// `httpGet.maxRedirects` (at most `prober::MAX_MAX_REDIRECTS`), `httpGet.cookies` and
/// `httpGet.compression` of a watch-file probe at path `p`: the redirect limit, the run's
/// cookie jar and the body's content coding.
pub(crate) fn apply_http_client(
    p: &str,
    spec: &mut ProbeSpec,
    max_redirects: Option<u32>,
    cookies: bool,
    compression: Option<&str>,
) -> Result<(), String> {
    if let Some(name) = compression {
        let c = prober::Compression::from_name(name).ok_or_else(|| {
            format!("{p}.httpGet.compression: {name:?} is not gzip, deflate, br or identity")
        })?;
        spec.set_compression(Some(c)).map_err(|e| format!("{p}.httpGet.compression: {e}"))?;
    }
    if let Some(n) = max_redirects {
        spec.set_max_redirects(n).map_err(|e| format!("{p}.httpGet.maxRedirects: {e}"))?;
    }
    if cookies {
        spec.set_cookies(true).map_err(|e| format!("{p}.httpGet.cookies: {e}"))?;
    }
    Ok(())
}

/// `httpGet.protocol` (Kubernetes 1.37, KEP-5999) with the API server's validation of it
/// (`validateHTTPGetAction`, v1.37.2), in its words: `HTTP1` or `HTTP2`; `HTTP2` only with
/// `scheme: HTTP` and without `host`. And `httpGet.http1Only` (libprober's): HTTP/1.1 alone.
pub(crate) fn apply_http_protocol(
    p: &str,
    spec: &mut ProbeSpec,
    protocol: Option<&str>,
    host: Option<&str>,
    http1_only: bool,
) -> Result<(), String> {
    let https = matches!(&spec.kind, ProbeKind::Http(h) if h.url.scheme() == Scheme::Https);
    let version = match protocol {
        None | Some("HTTP1") => HttpVersion::Auto,
        Some("HTTP2") if https => {
            return Err(format!(
                "{p}.httpGet.protocol: Invalid value: \"HTTP2\": is only supported with HTTP (H2C)"
            ));
        }
        Some("HTTP2") if host.is_some_and(|h| !h.is_empty()) => {
            let host = host.unwrap_or_default();
            return Err(format!(
                "{p}.httpGet.host: Invalid value: {host:?}: must be empty when `protocol` is \"HTTP2\""
            ));
        }
        Some("HTTP2") => HttpVersion::H2c,
        Some(other) => {
            return Err(format!(
                "{p}.httpGet.protocol: Unsupported value: {other:?}: supported values: \"HTTP1\", \"HTTP2\""
            ));
        }
    };
    let version = match (version, http1_only) {
        (HttpVersion::H2c, true) => {
            return Err(format!("{p}.httpGet.http1Only: does not apply with protocol: HTTP2"));
        }
        (_, true) => HttpVersion::Http1,
        (v, false) => v,
    };
    spec.set_http_version(version).map_err(|e| format!("{p}.httpGet.protocol: {e}"))
}

/// `httpGet.method` and `httpGet.body` of a watch-file probe at path `p` (Consul's `Method` and
/// `Body`, blackbox_exporter's `method` and `body`): the body is the text's UTF-8 bytes, sent
/// with any method (no implied `POST`, unlike curl's `-d`).
pub(crate) fn apply_http_request(
    p: &str,
    spec: &mut ProbeSpec,
    method: Option<&str>,
    body: Option<&str>,
) -> Result<(), String> {
    if let Some(m) = method {
        spec.set_method(m).map_err(|e| format!("{p}.httpGet.method: {e}"))?;
    }
    if let Some(b) = body {
        spec.set_body(b.as_bytes().to_vec()).map_err(|e| format!("{p}.httpGet.body: {e}"))?;
    }
    Ok(())
}

/// `unixSocket` under the handler at path `h` (`...httpGet`, `...grpc`): connect through it.
pub(crate) fn apply_unix_socket(
    h: &str,
    spec: &mut ProbeSpec,
    socket: Option<&str>,
) -> Result<(), String> {
    if let Some(s) = socket {
        let socket = UnixSocket::parse(s).map_err(|e| format!("{h}.unixSocket: {e}"))?;
        spec.set_unix_socket(socket).map_err(|e| format!("{h}.unixSocket: {e}"))?;
    }
    Ok(())
}

/// `grpc.metadata`, `grpc.userAgent`, `grpc.authority` and `grpc.keepAlive` (the handler at
/// path `h`).
pub(crate) fn apply_grpc_request(
    h: &str,
    spec: &mut ProbeSpec,
    g: &crate::model::GrpcAction,
) -> Result<(), String> {
    for (i, m) in g.metadata.iter().enumerate() {
        spec.add_grpc_metadata(&m.name, &m.value).map_err(|e| format!("{h}.metadata[{i}]: {e}"))?;
    }
    if let Some(ua) = &g.user_agent {
        spec.set_grpc_user_agent(ua).map_err(|e| format!("{h}.userAgent: {e}"))?;
    }
    if let Some(a) = &g.authority {
        spec.set_grpc_authority(a).map_err(|e| format!("{h}.authority: {e}"))?;
    }
    if g.keep_alive {
        spec.set_keep_alive(true).map_err(|e| format!("{h}.keepAlive: {e}"))?;
    }
    Ok(())
}

/// A connect check of `tcpSocket.unixSocket` (the handler at path `h`).
pub(crate) fn unix_spec(h: &str, socket: &str) -> Result<ProbeSpec, String> {
    let socket = UnixSocket::parse(socket).map_err(|e| format!("{h}.unixSocket: {e}"))?;
    ProbeSpec::unix(socket).map_err(|e| format!("{h}.unixSocket: {e}"))
}

/// `tcpSocket.send` (with escapes) and `tcpSocket.expect` of a watch-file probe at path `p`.
pub(crate) fn apply_tcp_fields(
    p: &str,
    spec: &mut ProbeSpec,
    send: Option<&str>,
    expect: Option<&str>,
) -> Result<(), String> {
    if let Some(v) = send {
        let data = unescape(v).map_err(|e| format!("{p}.tcpSocket.send: {e}"))?;
        spec.set_send(data).map_err(|e| format!("{p}.tcpSocket.send: {e}"))?;
    }
    if let Some(v) = expect {
        let pat = Pattern::new(v).map_err(|e| format!("{p}.tcpSocket.expect: {e}"))?;
        spec.set_expect_reply(pat).map_err(|e| format!("{p}.tcpSocket.expect: {e}"))?;
    }
    Ok(())
}

/// `tcpSocket.steps` of a watch-file probe at path `p` (`tls`: `tcpSocket.tls` is set).
pub(crate) fn apply_tcp_steps(
    p: &str,
    spec: &mut ProbeSpec,
    fields: &[crate::model::TcpStepField],
    tls: bool,
) -> Result<(), String> {
    if fields.is_empty() {
        return Ok(());
    }
    let mut steps = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let at = format!("{p}.tcpSocket.steps[{i}]");
        let expect = match &f.expect {
            Some(v) => Some(Pattern::new(v).map_err(|e| format!("{at}.expect: {e}"))?),
            None => None,
        };
        let (field, text, expand) = match (&f.send, &f.send_template) {
            (Some(_), Some(_)) => return Err(format!("{at}: give send or sendTemplate, not both")),
            (Some(v), None) => ("send", v.as_str(), false),
            (None, Some(v)) => ("sendTemplate", v.as_str(), true),
            (None, None) => ("send", "", false),
        };
        if expand && expect.is_none() {
            return Err(format!(
                "{at}.sendTemplate: needs expect on the same step (its groups fill the template)"
            ));
        }
        if f.starttls && tls {
            return Err(format!(
                "{at}.starttls: does not go with tcpSocket.tls (TLS from the first byte)"
            ));
        }
        let send = unescape(text).map_err(|e| format!("{at}.{field}: {e}"))?;
        steps.push(TcpStep {
            expect,
            send,
            expand,
            line: false,
            starttls: f.starttls,
            ..TcpStep::default()
        });
    }
    spec.set_tcp_steps(steps).map_err(|e| format!("{p}.tcpSocket.steps: {e}"))
}

/// An optional per-state period, `{name}Seconds` or `{name}Milliseconds`. Unlike the
/// Kubernetes fields there is no default to fall back to, so zero is refused like a negative.
pub(crate) fn optional_period(
    p: &str,
    name: &str,
    secs: Option<i64>,
    ms: Option<i64>,
) -> Result<Option<Duration>, String> {
    match (secs, ms) {
        (Some(_), Some(_)) => {
            Err(format!("{p}: give {name}Seconds or {name}Milliseconds, not both"))
        }
        (None, None) => Ok(None),
        (Some(s), None) if s <= 0 => {
            Err(format!("{p}.{name}Seconds: must be at least 1 (got {s})"))
        }
        (Some(s), None) => Ok(Some(Duration::from_secs(s as u64))),
        (None, Some(m)) if m <= 0 => {
            Err(format!("{p}.{name}Milliseconds: must be at least 1 (got {m})"))
        }
        (None, Some(m)) => Ok(Some(Duration::from_millis(m as u64))),
    }
}

/// `jitterPercent`: 0 to [`prober::MAX_JITTER_PERCENT`].
pub(crate) fn jitter_percent(p: &str, v: Option<i64>) -> Result<u32, String> {
    match v {
        None => Ok(0),
        Some(n) if (0..=i64::from(prober::MAX_JITTER_PERCENT)).contains(&n) => Ok(n as u32),
        Some(n) => Err(format!(
            "{p}.jitterPercent: expected 0 to {} (got {n})",
            prober::MAX_JITTER_PERCENT
        )),
    }
}
