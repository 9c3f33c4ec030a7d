//! Probes from Kubernetes manifests: Pods, Deployments, StatefulSets and DaemonSets, in
//! multi-document YAML. Fields that probing does not use are ignored; the probe fields
//! themselves are read strictly.

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Deserializer};

use crate::LoadError;
use crate::model::{ContainerPort, EnvVar, Probe, Probes};
use crate::ports::{PortMap, declared_list};
use crate::translate::{Source, TargetPlan, named_ports, plan};

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

/// Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController and Job: the pod
/// template is `spec.template`.
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

/// CronJob: the pod template is `spec.jobTemplate.spec.template`.
#[derive(Debug, Deserialize)]
struct CronJobDoc {
    spec: CronJobSpec,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CronJobSpec {
    job_template: WorkloadDoc,
}

/// `kind: List` (what `kubectl get -o yaml` writes) and the API's typed lists (`PodList`,
/// `DeploymentList`, ...), whose items may leave out their `kind`.
#[derive(Debug, Deserialize)]
struct ListDoc {
    #[serde(default)]
    items: Vec<serde_norway::Value>,
}

/// The pod spec of a document of `kind`; `None` for a kind that has none this command reads.
fn pod_spec<'de, D: Deserializer<'de>>(kind: &str, d: D) -> Option<Result<PodSpec, D::Error>> {
    Some(match kind {
        "Pod" => PodDoc::deserialize(d).map(|d| d.spec),
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "ReplicationController"
        | "Job" => WorkloadDoc::deserialize(d).map(|d| d.spec.template.spec),
        "CronJob" => CronJobDoc::deserialize(d).map(|d| d.spec.job_template.spec.template.spec),
        _ => return None,
    })
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

const KINDS: &str = "Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, \
     Job, CronJob and List";

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
    port_map: &PortMap,
    base_dir: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<Vec<TargetPlan>, LoadError> {
    prober_yaml::check(text)?;
    let mut cx = Cx {
        host,
        port_map,
        base_dir,
        plans: Vec::new(),
        names: HashSet::new(),
        declared: HashSet::new(),
        overlap: None,
    };
    // First pass: what each document is. Second pass: the documents of interest, typed, so
    // that errors point into the file.
    let mut heads = Vec::new();
    for doc in serde_norway::Deserializer::from_str(text) {
        heads.push(Option::<Head>::deserialize(doc).map_err(|e| e.to_string())?);
    }
    for (i, (doc, head)) in serde_norway::Deserializer::from_str(text).zip(heads).enumerate() {
        let Some(head) = head else { continue };
        let kind = head.kind.unwrap_or_default();
        let name = head.metadata.and_then(|m| m.name).unwrap_or_default();
        let at = format!("document {}", i + 1);
        if kind == "List" || kind.ends_with("List") {
            let list = ListDoc::deserialize(doc).map_err(|e| e.to_string())?;
            let item_kind = kind.strip_suffix("List").unwrap_or_default();
            for (j, item) in list.items.iter().enumerate() {
                cx.item(&format!("{at} ({kind}) items[{j}]"), item_kind, item, notes)?;
            }
            continue;
        }
        match pod_spec(&kind, doc) {
            Some(spec) => {
                let spec = spec.map_err(|e| e.to_string())?;
                cx.workload(&at, &kind, &name, &spec, notes)?;
            }
            None => notes.push(skipped(&at, &kind, &name)),
        }
    }
    cx.check_port_map()?;
    if cx.plans.is_empty() {
        return Err(LoadError::File(format!(
            "no container with probes found (only {KINDS} are read)"
        )));
    }
    Ok(cx.plans)
}

/// A YAML error without its ` at line L column C` (for text that is not the user's file).
fn without_location(e: &serde_norway::Error) -> String {
    let s = e.to_string();
    match e.location() {
        Some(l) => {
            let suffix = format!(" at line {} column {}", l.line(), l.column());
            s.strip_suffix(&suffix).map_or_else(|| s.clone(), str::to_string)
        }
        None => s,
    }
}

/// The note for a document (or list item) at `at` that is not read.
fn skipped(at: &str, kind: &str, name: &str) -> String {
    let what = if kind.is_empty() { "no kind".to_string() } else { format!("kind {kind}") };
    format!("{at} ({what}{}): skipped, only {KINDS} are read", quoted(name))
}

fn quoted(name: &str) -> String {
    if name.is_empty() { String::new() } else { format!(" {name:?}") }
}

/// What every target of one manifest shares, and what was read so far.
#[derive(Debug)]
struct Cx<'a> {
    host: &'a str,
    port_map: &'a PortMap,
    base_dir: Option<&'a Path>,
    plans: Vec<TargetPlan>,
    /// Target names taken (`OWNER/CONTAINER`).
    names: HashSet<String>,
    /// Port names that containers declare, for `--port NAME=LOCAL`.
    declared: HashSet<String>,
    /// The first container of which two `--port` options map one port.
    overlap: Option<String>,
}

impl Cx<'_> {
    /// Refuses `--port` mappings that do not fit the manifest: a name that no container
    /// declares, or two mappings of one port of a container.
    fn check_port_map(&self) -> Result<(), LoadError> {
        if let Some(m) = self.port_map.unknown_name(|n| self.declared.contains(n)) {
            let mut declared: Vec<&str> = self.declared.iter().map(String::as_str).collect();
            declared.sort_unstable();
            return Err(LoadError::Port(format!(
                "--port {m}: no container of the manifest declares a port with this name ({})",
                declared_list(&declared)
            )));
        }
        match &self.overlap {
            Some(e) => Err(LoadError::Port(e.clone())),
            None => Ok(()),
        }
    }

    /// One item of a list at `at`: its own `kind`, else the list's (`default_kind`).
    fn item(
        &mut self,
        at: &str,
        default_kind: &str,
        item: &serde_norway::Value,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        let head = Head::deserialize(item).map_err(|e| format!("{at}: {e}"))?;
        let kind = head.kind.unwrap_or_else(|| default_kind.to_string());
        let name = head.metadata.and_then(|m| m.name).unwrap_or_default();
        // Read again from text, through the deserializer the documents use: one set of
        // typed readers in the binary instead of a second one over `Value` (about 0.2 MB).
        // The text is the item's alone, so its line numbers would mislead: errors drop them.
        let text = serde_norway::to_string(item).map_err(|e| format!("{at}: {e}"))?;
        let Some(doc) = serde_norway::Deserializer::from_str(&text).next() else {
            return Ok(());
        };
        match pod_spec(&kind, doc) {
            Some(spec) => {
                let spec = spec.map_err(|e| {
                    format!("{at} ({kind}{}): {}", quoted(&name), without_location(&e))
                })?;
                self.workload(at, &kind, &name, &spec, notes)
            }
            None => {
                notes.push(skipped(at, &kind, &name));
                Ok(())
            }
        }
    }

    /// The containers of one pod spec, owned by the object `name` of `kind` at `at`.
    fn workload(
        &mut self,
        at: &str,
        kind: &str,
        name: &str,
        spec: &PodSpec,
        notes: &mut Vec<String>,
    ) -> Result<(), String> {
        if name.is_empty() {
            return Err(format!("{at} ({kind}): metadata.name is missing"));
        }
        for c in spec.init_containers.iter().chain(&spec.containers) {
            self.declared.extend(c.ports.iter().filter_map(|p| p.name.clone()));
            if self.overlap.is_none() && !self.port_map.is_empty() {
                let whose = format!("container {name}/{}", c.name);
                self.overlap = self.port_map.overlap(&whose, &named_ports(&c.ports));
            }
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
            self.add(name, c, notes)?;
        }
        for c in &spec.containers {
            self.add(name, c, notes)?;
        }
        Ok(())
    }

    fn add(&mut self, owner: &str, c: &Container, notes: &mut Vec<String>) -> Result<(), String> {
        let target = format!("{owner}/{}", c.name);
        if c.probes().is_empty() {
            notes.push(format!("{target}: no probes"));
            return Ok(());
        }
        if !self.names.insert(target.clone()) {
            return Err(format!("container {target}: more than one container with this name"));
        }
        let src = Source {
            label: format!("container {target}"),
            env: &c.env,
            ports: &c.ports,
            host: self.host,
            port_map: self.port_map,
            base_dir: self.base_dir,
        };
        let p = plan(target, &src, c.probes(), notes)?;
        if !p.probes.is_empty() {
            self.plans.push(p);
        }
        Ok(())
    }
}

/// Whether `text` reads as a Kubernetes manifest (its first document has `apiVersion` and
/// `kind`): given as a watch file, it gets a hint to use `--manifest`.
pub fn looks_like_manifest(text: &str) -> bool {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Object {
        api_version: Option<serde::de::IgnoredAny>,
        kind: Option<serde::de::IgnoredAny>,
    }
    // Never build what the YAML limits refuse.
    if prober_yaml::check(text).is_err() {
        return false;
    }
    let Some(doc) = serde_norway::Deserializer::from_str(text).next() else {
        return false;
    };
    matches!(
        Option::<Object>::deserialize(doc),
        Ok(Some(Object { api_version: Some(_), kind: Some(_) }))
    )
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
        let plans = load(MANIFEST, "10.0.0.1", &PortMap::EMPTY, None, &mut notes).unwrap();
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

    /// The error of loading `text` (host `h`, no port map), as printed.
    fn load_error(text: &str) -> String {
        load(text, "h", &PortMap::EMPTY, None, &mut Vec::new()).unwrap_err().to_string()
    }

    #[test]
    fn errors_point_into_the_file() {
        let bad = MANIFEST.replace(
            "readinessProbe: {httpGet: {path: /ready",
            "readinessProbe: {htpGet: {path: /ready",
        );
        let e = load_error(&bad);
        assert!(e.contains("unknown field `htpGet`") && e.contains("at line 33 column 28"), "{e}");
        let bad = MANIFEST.replace("port: admin}", "port: adm}");
        let e = load_error(&bad);
        assert_eq!(
            e,
            "container web/proxy: readinessProbe.tcpSocket.port: named port \"adm\" not found (declared: admin)"
        );
        let e = load_error("kind: Service\nmetadata: {name: x}\n");
        assert!(e.starts_with("no container with probes found"), "{e}");
        let e = load_error(
            "kind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, ports: [{name: x}]}]}\n",
        );
        assert!(e.contains("missing field `containerPort`") && e.contains("line 3"), "{e}");
        let e = load_error("a: [\n");
        assert!(e.contains("line"), "{e}");
    }

    #[test]
    fn list_items_are_read_and_their_errors_say_which() {
        let list = "kind: List\nitems:\n- kind: ConfigMap\n  metadata: {name: c}\n- kind: Job\n  metadata: {name: j}\n  spec:\n    template:\n      spec:\n        containers:\n        - {name: c, readinessProbe: {tcpSocket: {port: 1}}}\n";
        let mut notes = Vec::new();
        let plans = load(list, "h", &PortMap::EMPTY, None, &mut notes).unwrap();
        assert_eq!(plans[0].name, "j/c");
        assert_eq!(
            notes,
            ["document 1 (List) items[0] (kind ConfigMap \"c\"): skipped, only Pod, Deployment, \
              StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob and List are read"]
        );
        let bad = list.replace("port: 1", "prt: 1");
        let e = load_error(&bad);
        assert!(
            e.starts_with(
                "document 1 (List) items[1] (Job \"j\"): spec.template.spec.containers[0].readinessProbe.tcpSocket: unknown field `prt`"
            ),
            "{e}"
        );
        assert!(!e.contains(" at line "), "{e}");
    }

    #[test]
    fn pods_by_name() {
        let pod = "kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    livenessProbe: {tcpSocket: {port: 1}}\n";
        let plans = load(pod, "h", &PortMap::EMPTY, None, &mut Vec::new()).unwrap();
        assert_eq!(plans[0].name, "p/c");
    }
}
