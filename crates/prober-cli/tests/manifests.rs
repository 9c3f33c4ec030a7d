//! `prober watch --manifest`: the probes of every container of a Kubernetes manifest.

mod common;
// Skipped by rustfmt: `cargo fmt -p prober-cli` must not reformat prober-grpc's file.
#[rustfmt::skip]
#[path = "../../prober-grpc/tests/support/mod.rs"]
mod support;

use common::*;
use support::HealthServer;

const MANIFEST: &str = r#"# A Deployment with two containers and a sidecar, plus a Service.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
        - name: migrate
          image: example/migrate:1
          command: [/bin/migrate]
      containers:
        - name: app
          image: example/app:1
          ports:
            - name: http
              containerPort: PORT
              protocol: TCP
          resources:
            limits: {cpu: 500m, memory: 128Mi}
          startupProbe:
            tcpSocket:
              port: http
            periodSeconds: 1
            failureThreshold: 30
          readinessProbe:
            httpGet:
              path: /health
              port: http
              httpHeaders:
                - name: X-Probe
                  value: readiness
            periodSeconds: 5
          livenessProbe:
            httpGet:
              path: /ok
              port: PORT
            periodSeconds: 10
            timeoutSeconds: 2
        - name: worker
          image: example/worker:1
          ports:
            - name: metrics
              containerPort: PORT
          env:
            - name: MODE
              value: ready
            - name: NODE
              valueFrom:
                fieldRef: {fieldPath: spec.nodeName}
          readinessProbe:
            exec:
              command: ["/bin/sh", "-c", "test $(MODE) = ready"]
            periodSeconds: 5
          livenessProbe:
            tcpSocket: {port: metrics}
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
    - port: 80
      targetPort: http
"#;

#[test]
fn watch_manifest_runs_every_containers_probes() {
    let server = TargetServer::start();
    let file = write_file("yaml", &MANIFEST.replace("PORT", &server.port().to_string()));
    let mut child = prober()
        .args([
            "watch",
            "--manifest",
            file.to_str().unwrap(),
            "--until-ready",
            "--for",
            "30s",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = reader(child.stdout.take().unwrap());
    let err = reader(child.stderr.take().unwrap());
    let status = wait_bounded(&mut child, HANG);
    let (stdout, stderr) = (out.recv().unwrap(), err.recv().unwrap());
    assert_eq!(status.code(), Some(0), "{stdout}{stderr}");
    assert!(stderr.contains("kind Service \"web\"): skipped"), "{stderr}");
    assert!(stderr.contains("web/worker: env[1] NODE: valueFrom is not resolved"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let states: Vec<String> = lines
        .iter()
        .filter(|v| v.get("role").is_some())
        .map(|v| {
            format!(
                "{} {} {}",
                v["target"].as_str().unwrap(),
                v["role"].as_str().unwrap(),
                v["result"].as_str().unwrap()
            )
        })
        .collect();
    for want in [
        "web/app startup unknown",
        "web/app readiness failure",
        "web/app liveness success",
        "web/app startup success",
        "web/app readiness success",
        "web/worker readiness failure",
        "web/worker liveness success",
        "web/worker readiness success",
    ] {
        assert!(states.iter().any(|s| s == want), "{want:?} missing from {states:?}");
    }
    let summary = lines.last().unwrap();
    assert_eq!(summary["all_ready"], true);
    let targets: Vec<&str> = summary["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["web/app", "web/worker"]);
    assert!(server.requests() > 0);
}

#[test]
fn watch_manifest_with_grpc_and_https_probes() {
    let p = pki("manifest", &["127.0.0.1"]);
    let plain = HealthServer::start(&[]);
    let tls = HealthServer::start(&["-tls-cert", &p.cert, "-tls-key", &p.key]);
    let web = TlsTargetServer::start(TlsServerOptions::new(p.server.clone()));
    let manifest = format!(
        "apiVersion: v1\n\
         kind: Pod\n\
         metadata: {{name: api}}\n\
         spec:\n\
         \x20 containers:\n\
         \x20 - name: server\n\
         \x20   image: example/api:1\n\
         \x20   ports:\n\
         \x20   - {{name: grpc, containerPort: {grpc}}}\n\
         \x20   readinessProbe:\n\
         \x20     grpc: {{port: {grpc}}}\n\
         \x20     periodSeconds: 1\n\
         \x20 - name: web\n\
         \x20   image: example/web:1\n\
         \x20   ports:\n\
         \x20   - {{name: https, containerPort: {https}}}\n\
         \x20   readinessProbe:\n\
         \x20     httpGet: {{path: /health, port: https, scheme: HTTPS}}\n\
         \x20 - name: secure\n\
         \x20   image: example/api:1\n\
         \x20   startupProbe:\n\
         \x20     grpc: {{port: {tls}, mode: TLS}}\n\
         \x20     periodSeconds: 1\n",
        grpc = plain.port(),
        https = web.port(),
        tls = tls.port(),
    );
    let file = write_file("yaml", &manifest);
    let r = run(&[
        "watch",
        "--manifest",
        file.to_str().unwrap(),
        "--until-ready",
        "--for",
        "30s",
        "--json",
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr, "");
    let (states, _) = states_of(&r.stdout);
    for want in
        ["api/server readiness success", "api/web readiness success", "api/secure startup success"]
    {
        assert!(states.iter().any(|s| s == want), "{want:?} missing from {states:?}");
    }
    assert!(web.backend().requests() > 0);
}
