//! `prober watch --manifest`: the probes of every container of a Kubernetes manifest.

mod common;

use common::*;
use prober_testkit::grpc::HealthServer;

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
    let r = watch_until_ready(&["--manifest", file.path()]);
    let (stdout, stderr) = (r.stdout, r.stderr);
    assert_eq!(r.code, 0, "{stdout}{stderr}");
    assert!(stderr.contains("kind Service \"web\"): skipped"), "{stderr}");
    assert!(stderr.contains("web/worker: env[1] NODE: valueFrom is not resolved"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let (states, lines) = states_of(&stdout);
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
    let r = watch_until_ready(&["--manifest", file.path()]);
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

/// Runs `prober watch --json --until-ready --for 30s ARGS` to completion.
fn watch_until_ready(args: &[&str]) -> Run {
    let mut all = vec!["watch", "--json", "--until-ready", "--for", "30s"];
    all.extend_from_slice(args);
    run(&all)
}

/// The targets of the summary line, and whether all were ready.
fn summary_of(stdout: &str) -> (Vec<String>, bool) {
    let last: Value = serde_json::from_str(stdout.lines().last().expect("a summary")).unwrap();
    let targets =
        last["summary"].as_array().unwrap().iter().map(|t| t["target"].to_string()).collect();
    (targets, last["all_ready"] == true)
}

#[test]
fn port_maps_container_ports_to_where_they_are_published() {
    // As with `docker run -p LOCAL:8080 -p LOCAL2:9000`: the manifest's ports are the
    // container's, the servers listen on other local ports.
    let http = TargetServer::start();
    let tcp = TargetServer::start();
    let manifest = "apiVersion: v1\nkind: Pod\nmetadata: {name: db}\nspec:\n  containers:\n  - name: app\n    ports: [{name: http, containerPort: 8080}, {name: admin, containerPort: 9000}]\n    readinessProbe: {httpGet: {path: /health, port: http}, periodSeconds: 1}\n    livenessProbe: {tcpSocket: {port: 9000}, periodSeconds: 1}\n";
    let file = write_file("yaml", manifest);
    let (h, t) = (format!("http={}", http.port()), format!("9000={}", tcp.port()));
    let r = watch_until_ready(&["--port", &h, "--port", &t, "--manifest", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (states, _) = states_of(&r.stdout);
    assert!(states.iter().any(|s| s == "db/app readiness success"), "{states:?}");
    assert!(http.requests() > 0 && tcp.connections() > 0);
    // The same, mapping the named port by its number.
    let n = format!("8080={}", http.port());
    let r = watch_until_ready(&["--port", &n, "--port", &t, "--manifest", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    // A name that no container declares: a usage error naming --port.
    let r = watch_until_ready(&["--port", "htp=1", "--manifest", file.to_str().unwrap()]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "prober: --port htp=1: no container of the manifest declares a port with this name \
         (declared: admin, http) (see 'prober watch --help')\n"
    );
    // The named port and its number, mapped to two places: refused whatever the order, naming
    // both options as typed (the first one given used to win, silently).
    for (a, b) in [("http=1", "8080=2"), ("8080=2", "http=1")] {
        let r =
            watch_until_ready(&["--port", a, "--port", b, "--manifest", file.to_str().unwrap()]);
        assert_eq!(r.code, 64, "{}", r.stderr);
        assert_eq!(
            r.stderr,
            format!(
                "prober: --port {a} and --port {b} both map port 8080 (container db/app declares \
                 http as containerPort 8080) (see 'prober watch --help')\n"
            )
        );
    }
    // The same port twice by number: the same refusal, at once.
    let r = watch_until_ready(&["--port", "8080=1", "--port", "8080=2", "--manifest", "m.yaml"]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        "prober: --port 8080=1 and --port 8080=2 both map port 8080 (see 'prober watch --help')\n"
    );
}

/// A command that succeeds when its environment is what the kubelet would give the container
/// with `env: [B=x, A=$(B)y, C=$$(B)]`, and prints it either way.
const ENV_CHECK: &str = r#"["/bin/sh", "-c", "printf '%s|%s' \"$A\" \"$C\"; test \"$A\" = xy && test \"$C\" = '$$(B)'"]"#;

#[test]
fn exec_probes_get_the_environment_the_container_would_have() {
    let env = r#"[{name: B, value: x}, {name: A, value: "$(B)y"}, {name: C, value: "$$(B)"}]"#;
    let manifest = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n  - name: c\n    env: {env}\n    readinessProbe: {{exec: {{command: {ENV_CHECK}}}, periodMilliseconds: 100}}\n"
    );
    let file = write_file("yaml", &manifest);
    let r = watch_until_ready(&["--manifest", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(summary_of(&r.stdout).1, "{}", r.stdout);
    // The same target in a watch file.
    let file = write_file(
        "yaml",
        &format!(
            "targets:\n- name: t\n  env: {env}\n  readinessProbe: {{exec: {{command: {ENV_CHECK}}}, periodMilliseconds: 100}}\n"
        ),
    );
    let r = watch_until_ready(&[file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(summary_of(&r.stdout).1, "{}", r.stdout);
}

#[test]
fn lists_and_more_workload_kinds_are_read() {
    let s = TargetServer::start();
    let probe = |name: &str| {
        format!(
            "spec: {{containers: [{{name: {name}, readinessProbe: {{tcpSocket: {{port: {}}}, periodSeconds: 1}}}}]}}",
            s.port()
        )
    };
    // What `kubectl get -o yaml` writes (kind: List, items of any kind), and a typed list
    // from the API, whose items have no kind.
    let manifest = format!(
        "apiVersion: v1\nkind: List\nitems:\n\
         - {{apiVersion: batch/v1, kind: Job, metadata: {{name: migrate}}, spec: {{template: {{{job}}}}}}}\n\
         - {{apiVersion: batch/v1, kind: CronJob, metadata: {{name: backup}}, spec: {{schedule: '@daily', jobTemplate: {{spec: {{template: {{{cron}}}}}}}}}}}\n\
         - {{apiVersion: apps/v1, kind: ReplicaSet, metadata: {{name: rs}}, spec: {{template: {{{rs}}}}}}}\n\
         - {{apiVersion: v1, kind: ReplicationController, metadata: {{name: rc}}, spec: {{template: {{{rc}}}}}}}\n\
         - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: cfg}}}}\n\
         ---\n\
         apiVersion: apps/v1\nkind: DeploymentList\nitems:\n\
         - {{metadata: {{name: web}}, spec: {{template: {{{web}}}}}}}\n",
        job = probe("job"),
        cron = probe("cron"),
        rs = probe("rs"),
        rc = probe("rc"),
        web = probe("web"),
    );
    let file = write_file("yaml", &manifest);
    let r = watch_until_ready(&["--manifest", file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (targets, all_ready) = summary_of(&r.stdout);
    assert_eq!(
        targets,
        ["\"migrate/job\"", "\"backup/cron\"", "\"rs/rs\"", "\"rc/rc\"", "\"web/web\""]
    );
    assert!(all_ready);
    assert!(
        r.stderr.contains("document 1 (List) items[4] (kind ConfigMap \"cfg\"): skipped"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_manifest_given_as_a_watch_file_suggests_manifest() {
    let file = write_file(
        "yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    readinessProbe: {tcpSocket: {port: 1}}\n",
    );
    let path = file.to_str().unwrap();
    let r = run(&["watch", path]);
    assert_eq!(r.code, 64, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "prober: {path} is a Kubernetes manifest (it has apiVersion and kind), not a watch \
             file: run 'prober watch --manifest {path}' (see 'prober watch --help')\n"
        )
    );
}

#[test]
fn port_applies_to_watch_files_too() {
    let s = TargetServer::start();
    let file = write_file(
        "yaml",
        "targets:\n- name: db\n  ports: [{name: pg, containerPort: 5432}]\n  readinessProbe: {tcpSocket: {port: pg}, periodSeconds: 1}\n",
    );
    let map = format!("pg={}", s.port());
    let r = watch_until_ready(&["--port", &map, file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(s.connections() > 0);
    let r = watch_until_ready(&["--port", "postgres=1", file.to_str().unwrap()]);
    assert_eq!(r.code, 64);
    assert_eq!(
        r.stderr,
        "prober: --port postgres=1: no target declares a port with this name in its ports \
         (declared: pg) (see 'prober watch --help')\n"
    );
    let r = watch_until_ready(&["--port", "pg=1", "--port", "5432=2", file.to_str().unwrap()]);
    assert_eq!(r.code, 64);
    assert_eq!(
        r.stderr,
        "prober: --port pg=1 and --port 5432=2 both map port 5432 (target \"db\" declares pg as \
         containerPort 5432) (see 'prober watch --help')\n"
    );
}

#[test]
fn port_names_with_other_numbers_elsewhere_map_each_their_own_port() {
    // `http` is 8080 in one target and 9090 in another: `--port http=...` maps both, and a
    // mapping of 8080 by number overlaps only in the first, which is the one named.
    let (a, b) = (TargetServer::start(), TargetServer::start());
    let file = write_file(
        "yaml",
        "targets:\n\
         - name: one\n  ports: [{name: http, containerPort: 9090}]\n  readinessProbe: {tcpSocket: {port: http}, periodSeconds: 1}\n\
         - name: two\n  ports: [{name: http, containerPort: 8080}]\n  readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}\n",
    );
    let r = watch_until_ready(&["--port", "http=1", "--port", "8080=2", file.to_str().unwrap()]);
    assert_eq!(r.code, 64);
    assert_eq!(
        r.stderr,
        "prober: --port http=1 and --port 8080=2 both map port 8080 (target \"two\" declares \
         http as containerPort 8080) (see 'prober watch --help')\n"
    );
    // Without the overlap: each target's port goes where its mapping says.
    let (ma, mb) = (format!("http={}", a.port()), format!("8080={}", b.port()));
    let file = write_file(
        "yaml",
        "targets:\n\
         - name: one\n  ports: [{name: http, containerPort: 9090}]\n  readinessProbe: {tcpSocket: {port: http}, periodSeconds: 1}\n\
         - name: two\n  readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}\n",
    );
    let r = watch_until_ready(&["--port", &ma, "--port", &mb, file.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(a.connections() > 0 && b.connections() > 0);
}
