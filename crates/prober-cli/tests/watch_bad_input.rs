//! Bad watch files and manifests: exit 64 with a precise message, 66 for an unreadable file,
//! notes for unreadable TLS files.

mod common;

use common::*;

#[test]
fn bad_watch_files_exit_64_with_a_precise_message() {
    let yaml = |probe: &str| {
        format!("targets:\n  - name: api\n    ports: [{{name: web, containerPort: 8080}}]\n{probe}")
    };
    // Unknown field: its name and its line.
    assert_bad_file(
        &[],
        &yaml("    readinessProbe:\n      httpGet: {port: 80}\n      perodSeconds: 3\n"),
        "yaml",
        &["unknown field `perodSeconds`", "targets[0].readinessProbe", "line 6 column 7"],
    );
    // Wrong type.
    assert_bad_file(
        &[],
        &yaml("    readinessProbe:\n      httpGet: {port: 80}\n      periodSeconds: often\n"),
        "yaml",
        &["periodSeconds", "invalid type: string \"often\", expected an integer", "line 6"],
    );
    assert_bad_file(
        &[],
        "targets:\n  - name: [a]\n",
        "yaml",
        &["targets[0].name", "invalid type: sequence", "line 2"],
    );
    // Missing port.
    assert_bad_file(
        &[],
        &yaml("    livenessProbe:\n      tcpSocket: {host: localhost}\n"),
        "yaml",
        &["targets[0].livenessProbe.tcpSocket", "missing field `port`", "line 5"],
    );
    // Named port not found: the target and the field path.
    assert_bad_file(
        &[],
        &yaml("    readinessProbe:\n      httpGet: {port: http, path: /}\n"),
        "yaml",
        &[
            "target \"api\"",
            "readinessProbe.httpGet.port",
            "named port \"http\" not found (declared: web)",
        ],
    );
    // Threshold rules.
    assert_bad_file(
        &[],
        &yaml("    livenessProbe:\n      tcpSocket: {port: web}\n      successThreshold: 2\n"),
        "yaml",
        &[
            "target \"api\"",
            "livenessProbe.successThreshold",
            "must be 1 for liveness probes (got 2)",
        ],
    );
    assert_bad_file(
        &[],
        &yaml(
            "    startupProbe:\n      tcpSocket: {port: 1}\n      periodSeconds: 1\n      periodMilliseconds: 500\n",
        ),
        "yaml",
        &["startupProbe", "periodSeconds or periodMilliseconds, not both"],
    );
    assert_bad_file(&[], "targets: []\n", "yaml", &["empty"]);
    assert_bad_file(&[], "targets: [\n", "yaml", &["line"]);
    // JSON files get serde_json's positions.
    assert_bad_file(
        &[],
        "{\"targets\": [{\"name\": \"a\",\n \"readinessProbe\": {\"tcpSocket\": {\"port\": 1}, \"bogus\": true}}]}",
        "json",
        &["unknown field `bogus`", "line 2"],
    );
    // Manifests: the container and the field path.
    let manifest = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    ports: [{name: http, containerPort: 80}]\n    readinessProbe: {httpGet: {port: htp}}\n";
    assert_bad_file(
        &["--manifest"],
        manifest,
        "yaml",
        &["container p/c", "readinessProbe.httpGet.port", "named port \"htp\""],
    );
    let manifest =
        manifest.replace("httpGet: {port: htp}", "httpGet: {port: http}, sucessThreshold: 1");
    assert_bad_file(
        &["--manifest"],
        &manifest,
        "yaml",
        &["unknown field `sucessThreshold`", "line 7"],
    );
}

#[test]
fn unreadable_file_exits_66() {
    let r = run(&["watch", "/no/such/watch-file.yaml"]);
    assert_eq!(r.code, 66, "{}", r.stderr);
    assert!(r.stderr.starts_with("prober: cannot read /no/such/watch-file.yaml: "), "{}", r.stderr);
}

#[test]
fn bad_grpc_and_tls_fields_exit_64_with_a_precise_message() {
    // Kubernetes does not allow named ports for gRPC probes.
    let manifest = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    ports: [{name: grpc, containerPort: 50051}]\n    livenessProbe: {grpc: {port: grpc}}\n";
    assert_bad_file(
        &["--manifest"],
        manifest,
        "yaml",
        &["container p/c: livenessProbe.grpc.port: named port \"grpc\" is not allowed for gRPC \
             probes (Kubernetes requires a port number here; write its number, 50051)"],
    );
    let yaml = |probe: &str| format!("targets:\n  - name: api\n    readinessProbe:\n{probe}");
    assert_bad_file(
        &[],
        &yaml("      grpc: {port: 1, mode: Secure}\n"),
        "yaml",
        &["target \"api\"", "readinessProbe.grpc.mode: expected Plaintext or TLS (got \"Secure\")"],
    );
    assert_bad_file(
        &[],
        &yaml("      grpc: {port: 1, serivce: x}\n"),
        "yaml",
        &["unknown field `serivce`", "line 4"],
    );
    assert_bad_file(
        &[],
        &yaml("      grpc: {port: 1}\n      tls: {caFile: ca.pem}\n"),
        "yaml",
        &[
            "readinessProbe.tls: applies to httpGet with scheme HTTPS, to grpc with mode TLS, to tcpSocket with tls or starttls and to dns with transport tls only",
        ],
    );
    assert_bad_file(
        &[],
        &yaml("      tcpSocket: {port: 1}\n      tls: {verify: true}\n"),
        "yaml",
        &["readinessProbe.tls: applies to"],
    );
    assert_bad_file(
        &[],
        &yaml("      httpGet: {port: 1, scheme: HTTPS}\n      tls: {certFile: c.pem}\n"),
        "yaml",
        &["readinessProbe.tls.keyFile: missing (certFile is set)"],
    );
    assert_bad_file(
        &[],
        &yaml("      httpGet: {port: 1, scheme: HTTPS}\n      tls: {minVersion: 1.1}\n"),
        "yaml",
        &["readinessProbe.tls.minVersion: expected 1.2 or 1.3 (got \"1.1\")"],
    );
    assert_bad_file(
        &[],
        &yaml("      httpGet: {port: 1, scheme: HTTPS}\n      tls: {verify: yes-please}\n"),
        "yaml",
        &["tls.verify", "invalid type", "line 5"],
    );
}

#[test]
fn watch_notes_unreadable_tls_files() {
    let file = write_file(
        "yaml",
        "targets:\n\
         - name: web\n\
         \x20 readinessProbe:\n\
         \x20   httpGet: {port: 1, scheme: HTTPS}\n\
         \x20   tls: {caFile: /no/such/ca.pem}\n",
    );
    let r = run(&["watch", "--for", "200ms", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "prober: note: {}: target \"web\": readinessProbe.tls.caFile: cannot read \
             /no/such/ca.pem: no such file or directory; the probe's runs are unknown (never \
             published) until it can be read\n",
            file.display()
        )
    );
}
