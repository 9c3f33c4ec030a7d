//! Probes from Kubernetes manifests: Pods, Deployments, StatefulSets and DaemonSets, in
//! multi-document YAML. Fields this command does not use are ignored; the probe fields
//! themselves are read strictly.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::config::{ContainerPort, EnvVar, Probe, Probes, Source, TargetPlan, plan};

#[derive(Debug, Deserialize)]
struct Head {
    kind: Option<String>,
    metadata: Option<Meta>,
}

#[derive(Debug, Deserialize)]
struct Meta {
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PodDoc {
    spec: PodSpec,
}

#[derive(Debug, Deserialize)]
struct WorkloadDoc {
    spec: WorkloadSpec,
}

#[derive(Debug, Deserialize)]
struct WorkloadSpec {
    template: PodTemplate,
}

#[derive(Debug, Deserialize)]
struct PodTemplate {
    spec: PodSpec,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSpec {
    #[serde(default)]
    containers: Vec<Container>,
    #[serde(default)]
    init_containers: Vec<Container>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Container {
    name: String,
    #[serde(default)]
    ports: Vec<ContainerPort>,
    #[serde(default)]
    env: Vec<EnvVar>,
    restart_policy: Option<String>,
    startup_probe: Option<Probe>,
    readiness_probe: Option<Probe>,
    liveness_probe: Option<Probe>,
}

impl Container {
    fn probes(&self) -> Probes<'_> {
        Probes {
            startup: self.startup_probe.as_ref(),
            readiness: self.readiness_probe.as_ref(),
            liveness: self.liveness_probe.as_ref(),
        }
    }
}

const KINDS: &str = "Pod, Deployment, StatefulSet and DaemonSet";

/// Every container's probes, as targets named `NAME/CONTAINER`, probing `host`. Relative file
/// names (in `tls:` blocks) are taken relative to `base_dir`; `notes` collects what is
/// worth saying without being an error (skipped documents, containers without probes).
///
/// # Errors
///
/// A one-line message for the first problem found: a YAML error with its line and column, a
/// document without `metadata.name`, a probe field's path and what is wrong with it, or no
/// container with probes at all.
pub fn load(
    text: &str,
    host: &str,
    base_dir: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<Vec<TargetPlan>, String> {
    crate::config::check_nesting(text)?;
    let cx = Cx { host, base_dir };
    // First pass: what each document is. Second pass: the documents of interest, typed, so
    // that errors point into the file.
    let mut heads = Vec::new();
    for doc in serde_norway::Deserializer::from_str(text) {
        heads.push(Option::<Head>::deserialize(doc).map_err(|e| e.to_string())?);
    }
    let mut plans: Vec<TargetPlan> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    for (i, (doc, head)) in serde_norway::Deserializer::from_str(text).zip(heads).enumerate() {
        let Some(head) = head else { continue };
        let kind = head.kind.unwrap_or_default();
        let name = head.metadata.and_then(|m| m.name).unwrap_or_default();
        let spec = match kind.as_str() {
            "Pod" => PodDoc::deserialize(doc).map(|d| d.spec),
            "Deployment" | "StatefulSet" | "DaemonSet" => {
                WorkloadDoc::deserialize(doc).map(|d| d.spec.template.spec)
            }
            _ => {
                let what =
                    if kind.is_empty() { "no kind".to_string() } else { format!("kind {kind}") };
                notes.push(format!(
                    "document {} ({what}{}): skipped, only {KINDS} are read",
                    i + 1,
                    quoted(&name)
                ));
                continue;
            }
        };
        let spec = spec.map_err(|e| e.to_string())?;
        if name.is_empty() {
            return Err(format!("document {} ({kind}): metadata.name is missing", i + 1));
        }
        for c in &spec.init_containers {
            let sidecar = c.restart_policy.as_deref() == Some("Always");
            if !sidecar {
                if !c.probes().is_empty() {
                    notes.push(format!(
                        "{name}/{}: init container without restartPolicy Always: probes skipped",
                        c.name
                    ));
                }
                continue;
            }
            add(&mut plans, &mut names, &name, c, &cx, notes)?;
        }
        for c in &spec.containers {
            add(&mut plans, &mut names, &name, c, &cx, notes)?;
        }
    }
    if plans.is_empty() {
        return Err(format!("no container with probes found (only {KINDS} are read)"));
    }
    Ok(plans)
}

fn quoted(name: &str) -> String {
    if name.is_empty() { String::new() } else { format!(" {name:?}") }
}

/// What every target of one manifest shares.
#[derive(Debug, Clone, Copy)]
struct Cx<'a> {
    host: &'a str,
    base_dir: Option<&'a Path>,
}

fn add(
    plans: &mut Vec<TargetPlan>,
    names: &mut HashSet<String>,
    owner: &str,
    c: &Container,
    cx: &Cx<'_>,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let target = format!("{owner}/{}", c.name);
    if c.probes().is_empty() {
        notes.push(format!("{target}: no probes"));
        return Ok(());
    }
    if !names.insert(target.clone()) {
        return Err(format!("container {target}: more than one container with this name"));
    }
    let src = Source {
        label: format!("container {target}"),
        env: &c.env,
        ports: &c.ports,
        host: cx.host,
        base_dir: cx.base_dir,
    };
    let p = plan(target, &src, c.probes(), notes)?;
    if !p.probes.is_empty() {
        plans.push(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober::Role;

    const MANIFEST: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      initContainers:
        - name: migrate
          image: x
        - name: proxy
          image: x
          restartPolicy: Always
          ports: [{name: admin, containerPort: 9901, protocol: TCP}]
          readinessProbe: {tcpSocket: {port: admin}}
      containers:
        - name: app
          image: example/app:1
          resources: {limits: {cpu: 100m}}
          ports:
            - name: http
              containerPort: 8080
          env:
            - {name: MODE, value: strict}
            - name: POD_IP
              valueFrom: {fieldRef: {fieldPath: status.podIP}}
          startupProbe: {httpGet: {path: /started, port: http}, failureThreshold: 30, periodSeconds: 1}
          readinessProbe: {httpGet: {path: /ready, port: 8080}}
          livenessProbe: {exec: {command: [check, "$(MODE)"]}}
        - name: nothing
          image: x
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80, targetPort: http}]}
---
"#;

    #[test]
    fn reads_a_deployment() {
        let mut notes = Vec::new();
        let plans = load(MANIFEST, "10.0.0.1", None, &mut notes).unwrap();
        let names: Vec<&str> = plans.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["web/proxy", "web/app"]);
        let roles: Vec<Role> = plans[1].probes.iter().map(|p| p.0).collect();
        assert_eq!(roles, [Role::Startup, Role::Readiness, Role::Liveness]);
        let prober::ProbeKind::Http(h) = &plans[1].probes[0].1.kind else { panic!() };
        assert_eq!((h.url.host(), h.url.port(), h.url.path()), ("10.0.0.1", 8080, "/started"));
        assert_eq!(plans[1].probes[0].2.failure_threshold, 30);
        let prober::ProbeKind::Exec(e) = &plans[1].probes[2].1.kind else { panic!() };
        assert_eq!(e.env, vec![("MODE".into(), "strict".into())]);
        assert!(notes.iter().any(|n| n.contains("kind Service \"web\"): skipped")), "{notes:?}");
        assert!(notes.iter().any(|n| n == "web/nothing: no probes"), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("POD_IP: valueFrom is not resolved")), "{notes:?}");
    }

    #[test]
    fn errors_point_into_the_file() {
        let bad = MANIFEST.replace(
            "readinessProbe: {httpGet: {path: /ready",
            "readinessProbe: {htpGet: {path: /ready",
        );
        let e = load(&bad, "h", None, &mut Vec::new()).unwrap_err();
        assert!(e.contains("unknown field `htpGet`") && e.contains("at line 33 column 28"), "{e}");
        let bad = MANIFEST.replace("port: admin}", "port: adm}");
        let e = load(&bad, "h", None, &mut Vec::new()).unwrap_err();
        assert_eq!(
            e,
            "container web/proxy: readinessProbe.tcpSocket.port: named port \"adm\" not found (declared: admin)"
        );
        let e =
            load("kind: Service\nmetadata: {name: x}\n", "h", None, &mut Vec::new()).unwrap_err();
        assert!(e.starts_with("no container with probes found"), "{e}");
        let e = load(
            "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, ports: [{name: x}]}]}\n",
            "h",
            None,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(e.contains("missing field `containerPort`") && e.contains("line 3"), "{e}");
        let e = load("a: [\n", "h", None, &mut Vec::new()).unwrap_err();
        assert!(e.contains("line"), "{e}");
    }

    #[test]
    fn pods_by_name() {
        let pod = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    livenessProbe: {tcpSocket: {port: 1}}\n";
        let plans = load(pod, "h", None, &mut Vec::new()).unwrap();
        assert_eq!(plans[0].name, "p/c");
    }
}
