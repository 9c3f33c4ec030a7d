//! `httpGet.protocol` (Kubernetes 1.37, KEP-5999) and `httpGet.http1Only` in manifests and
//! watch files: the versions they give, and the API server's validation messages
//! (`validateHTTPGetAction` in k8s.io/kubernetes v1.37.2).

use prober::{HttpVersion, ProbeKind};
use prober_k8s::ports::PortMap;
use prober_k8s::{load_watch_file, manifest};

fn watch(http_get: &str) -> Result<HttpVersion, String> {
    let text = format!("targets:\n- name: web\n  readinessProbe:\n    httpGet: {http_get}\n");
    let plans = load_watch_file(&text, false, "127.0.0.1", &PortMap::EMPTY, None, &mut Vec::new())
        .map_err(|e| e.to_string())?;
    match &plans[0].probes[0].1.kind {
        ProbeKind::Http(h) => Ok(h.version),
        other => panic!("{other:?}"),
    }
}

fn pod(http_get: &str) -> Result<HttpVersion, String> {
    let text = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: c\n    livenessProbe:\n      httpGet: {http_get}\n"
    );
    let plans = manifest::load(&text, "127.0.0.1", &PortMap::EMPTY, None, &mut Vec::new())
        .map_err(|e| e.to_string())?;
    match &plans[0].probes[0].1.kind {
        ProbeKind::Http(h) => Ok(h.version),
        other => panic!("{other:?}"),
    }
}

#[test]
fn protocol_gives_the_version() {
    for load in [watch, pod] {
        assert_eq!(load("{port: 80}"), Ok(HttpVersion::Auto));
        assert_eq!(load("{port: 80, protocol: HTTP1}"), Ok(HttpVersion::Auto));
        // HTTP1 on HTTPS is the kubelet's Probe: h2 by ALPN stays possible.
        assert_eq!(load("{port: 443, scheme: HTTPS, protocol: HTTP1}"), Ok(HttpVersion::Auto));
        assert_eq!(load("{port: 80, protocol: HTTP2}"), Ok(HttpVersion::H2c));
        assert_eq!(load("{port: 80, scheme: HTTP, protocol: HTTP2}"), Ok(HttpVersion::H2c));
        assert_eq!(load("{port: 443, scheme: HTTPS, http1Only: true}"), Ok(HttpVersion::Http1));
    }
}

#[test]
fn protocol_is_validated_as_the_api_server_does() {
    let e = watch("{port: 443, scheme: HTTPS, protocol: HTTP2}").unwrap_err();
    assert!(
        e.ends_with("readinessProbe.httpGet.protocol: Invalid value: \"HTTP2\": is only supported with HTTP (H2C)"),
        "{e}"
    );
    let e = watch("{port: 80, host: 10.0.0.1, protocol: HTTP2}").unwrap_err();
    assert!(
        e.ends_with(
            "readinessProbe.httpGet.host: Invalid value: \"10.0.0.1\": must be empty when `protocol` is \"HTTP2\""
        ),
        "{e}"
    );
    let e = pod("{port: 80, protocol: HTTP3}").unwrap_err();
    assert!(
        e.ends_with(
            "livenessProbe.httpGet.protocol: Unsupported value: \"HTTP3\": supported values: \"HTTP1\", \"HTTP2\""
        ),
        "{e}"
    );
    // Lower case is not a value of the enum.
    assert!(
        pod("{port: 80, protocol: http2}").unwrap_err().contains("Unsupported value: \"http2\"")
    );
    let e = watch("{port: 80, protocol: HTTP2, http1Only: true}").unwrap_err();
    assert!(
        e.ends_with("readinessProbe.httpGet.http1Only: does not apply with protocol: HTTP2"),
        "{e}"
    );
}
