//! Watch files: `targets:`, each like a container's probe fields (`name`, `env`, `ports`, the
//! three probes), in YAML or JSON.

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;

use crate::LoadError;
use crate::model::{ContainerPort, EnvVar, ExecAction, Probe, Probes};
use crate::ports::{PortMap, declared_list};
use crate::translate::{OnChange, Source, TargetPlan, named_ports, plan};

/// A watch file: `targets:`, each like a container's probe fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WatchFile {
    pub targets: Vec<TargetDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TargetDef {
    pub name: String,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    /// Named ports, as a container's `ports` (`name`, `containerPort`).
    #[serde(default)]
    pub ports: Vec<ContainerPort>,
    pub startup_probe: Option<Probe>,
    pub readiness_probe: Option<Probe>,
    pub liveness_probe: Option<Probe>,
    /// A command `prober watch` runs when the target's state changes (not a container field):
    /// `{command: [...]}`, as an exec probe's.
    pub on_change: Option<ExecAction>,
    /// Run the target's exec probes inside the namespaces of this process (not a container
    /// field; `nsenter --target PID --all`).
    pub namespaces_of: Option<u32>,
    /// Contain each run of the target's exec probes in a cgroup of its own, made in this cgroup
    /// v2 directory (not a container field; `ProbeSpec::set_exec_cgroup`).
    pub exec_cgroup: Option<String>,
    /// The network namespace the target's probes connect from (not a container field): a path,
    /// `/run/netns/NAME` or `/proc/PID/ns/net`. Targets without it probe from the host's.
    pub netns: Option<String>,
    /// The address family the target's network probes connect over (not a container field):
    /// `any` (default), `ipv4`, `ipv6`, `prefer-ipv4`, `prefer-ipv6`, as `check -4`, `-6`,
    /// `--prefer-ipv4`, `--prefer-ipv6`.
    pub ip_family: Option<String>,
    /// The local address the target's network probes bind their sockets to (not a container
    /// field), as `check --source-address`.
    pub source_address: Option<String>,
}

/// `sourceAddress:` of a target: every network probe of it binds its sockets to that address.
/// Exec probes have no socket and are left as they are.
fn apply_source_address(p: &mut TargetPlan, text: &str, label: &str) -> Result<(), LoadError> {
    let ip = prober_core::parse_source_address(text)
        .map_err(|e| LoadError::File(format!("{label}: sourceAddress: {e}")))?;
    for (_, spec, _) in &mut p.probes {
        if !matches!(spec.kind, prober_core::ProbeKind::Exec(_)) {
            spec.set_source_address(Some(ip))
                .map_err(|e| LoadError::File(format!("{label}: sourceAddress: {e}")))?;
        }
    }
    Ok(())
}

/// `ipFamily:` of a target: every network probe of it connects to that family's addresses
/// only (or prefers it). Exec probes have no address and are left as they are.
fn apply_ip_family(p: &mut TargetPlan, name: &str, label: &str) -> Result<(), LoadError> {
    let family = prober_core::IpFamily::from_name(name).ok_or_else(|| {
        LoadError::File(format!(
            "{label}: ipFamily: {name:?} is not one of any, ipv4, ipv6, prefer-ipv4, prefer-ipv6"
        ))
    })?;
    for (_, spec, _) in &mut p.probes {
        if !matches!(spec.kind, prober_core::ProbeKind::Exec(_)) {
            spec.set_ip_family(family)
                .map_err(|e| LoadError::File(format!("{label}: ipFamily: {e}")))?;
        }
    }
    Ok(())
}

/// `netns:` of a target: every network probe of it makes its sockets in that namespace. Exec
/// probes have no socket: unless `namespacesOf:` places them (`exec_placed`), a target with one
/// is refused rather than run outside the namespace.
fn apply_netns(
    p: &mut TargetPlan,
    path: &str,
    exec_placed: bool,
    label: &str,
) -> Result<(), LoadError> {
    for (role, spec, _) in &mut p.probes {
        let probe = format!("{}Probe", role.as_str());
        if matches!(spec.kind, prober_core::ProbeKind::Exec(_)) {
            if exec_placed {
                continue;
            }
            return Err(LoadError::File(format!(
                "{label}: netns: applies to tcpSocket, httpGet, grpc, dns and icmp probes; {probe} is exec"
            )));
        }
        spec.set_netns(path).map_err(|e| LoadError::File(format!("{label}: netns: {e}")))?;
    }
    Ok(())
}

/// `onChange:` of a target, checked: `command` (a list, as an exec probe's, no shell). Its
/// shape is an exec probe's (`{command: [...]}`), read by the same code: a structure of its
/// own (with a timeout) cost the size-limited binary 14 KB.
fn check_on_change(h: &ExecAction, label: &str) -> Result<OnChange, LoadError> {
    let bad =
        |field: &str, what: &str| LoadError::File(format!("{label}: onChange.{field}: {what}"));
    if h.command.is_empty() {
        return Err(bad("command", "must not be empty"));
    }
    if let Some(i) = h.command.iter().position(|a| a.contains('\0')) {
        return Err(bad(&format!("command[{i}]"), "contains a NUL byte"));
    }
    Ok(OnChange { command: h.command.clone() })
}

/// `execCgroup: DIR` of a target: each run of its exec probes is contained in a cgroup of its
/// own made in `DIR`. Its network probes start no process and are left as they are.
fn apply_exec_cgroup(plan: &mut TargetPlan, dir: &str, label: &str) -> Result<(), LoadError> {
    for (_, spec, _) in &mut plan.probes {
        if matches!(spec.kind, prober::ProbeKind::Exec(_)) {
            spec.set_exec_cgroup(Some(dir.into()))
                .map_err(|e| LoadError::File(format!("{label}: execCgroup: {e}")))?;
        }
    }
    Ok(())
}

/// `namespacesOf: PID` of a target: its exec probes run inside that process's namespaces. A
/// network probe beside them is refused rather than silently run on the host: it would reach
/// the host's 127.0.0.1, not the process's, unless `netns:` places it (`network_placed`).
fn apply_namespaces_of(
    plan: &mut TargetPlan,
    pid: u32,
    network_placed: bool,
    label: &str,
) -> Result<(), LoadError> {
    for (role, spec, _) in &mut plan.probes {
        let field = match role {
            prober::Role::Startup => "startupProbe",
            prober::Role::Readiness => "readinessProbe",
            prober::Role::Liveness => "livenessProbe",
        };
        if !matches!(spec.kind, prober::ProbeKind::Exec(_)) {
            if network_placed {
                continue;
            }
            return Err(LoadError::File(format!(
                "{label}: namespacesOf applies to exec probes only, and {field} is not one \
                 (a network probe into the process's network namespace names it with \
                 netns: /proc/{pid}/ns/net)"
            )));
        }
        spec.set_namespaces_of(Some(pid))
            .map_err(|e| LoadError::File(format!("{label}: namespacesOf: {e}")))?;
    }
    Ok(())
}

impl TargetDef {
    pub fn probes(&self) -> Probes<'_> {
        Probes {
            startup: self.startup_probe.as_ref(),
            readiness: self.readiness_probe.as_ref(),
            liveness: self.liveness_probe.as_ref(),
        }
    }
}

/// Reads a watch file: JSON when `json`, else YAML. Errors carry the line and column.
/// Relative file names in it are taken relative to `base_dir`; `host` is the host of probes
/// that name none; `notes` collects what is worth saying without being an error.
///
/// # Errors
///
/// A one-line message for the first problem found: a YAML or JSON error with its line and
/// column, or a field's path (`target "web": readinessProbe.httpGet.port: ...`) and what is
/// wrong with it.
pub fn load_watch_file(
    text: &str,
    json: bool,
    host: &str,
    port_map: &PortMap,
    base_dir: Option<&Path>,
    notes: &mut Vec<String>,
) -> Result<Vec<TargetPlan>, LoadError> {
    // JSON too: its nesting is held to the same limit (libyaml reads JSON as YAML; where it
    // cannot, it stops, and serde_json reports the file as it sees it).
    prober_yaml::check(text)?;
    let file: WatchFile = if json {
        serde_json::from_str(text).map_err(|e| e.to_string())?
    } else {
        serde_norway::from_str(text).map_err(|e| e.to_string())?
    };
    if file.targets.is_empty() {
        return Err(LoadError::File("targets: the list is empty".into()));
    }
    check_port_map(&file.targets, port_map)?;
    let mut plans: Vec<TargetPlan> = Vec::with_capacity(file.targets.len());
    let mut names: HashSet<&str> = HashSet::with_capacity(file.targets.len());
    for (i, t) in file.targets.iter().enumerate() {
        if t.name.is_empty() {
            return Err(LoadError::File(format!("targets[{i}].name: must not be empty")));
        }
        if !names.insert(&t.name) {
            return Err(LoadError::File(format!(
                "targets[{i}].name: duplicate target name {:?}",
                t.name
            )));
        }
        let src = Source {
            label: format!("target {:?}", t.name),
            env: &t.env,
            ports: &t.ports,
            host,
            port_map,
            base_dir,
        };
        let mut p = plan(t.name.clone(), &src, t.probes(), notes)?;
        p.on_change = t.on_change.as_ref().map(|h| check_on_change(h, &src.label)).transpose()?;
        if let Some(pid) = t.namespaces_of {
            apply_namespaces_of(&mut p, pid, t.netns.is_some(), &src.label)?;
        }
        if let Some(dir) = &t.exec_cgroup {
            apply_exec_cgroup(&mut p, dir, &src.label)?;
        }
        if let Some(path) = &t.netns {
            apply_netns(&mut p, path, t.namespaces_of.is_some(), &src.label)?;
        }
        if let Some(name) = &t.ip_family {
            apply_ip_family(&mut p, name, &src.label)?;
        }
        if let Some(text) = &t.source_address {
            apply_source_address(&mut p, text, &src.label)?;
        }
        plans.push(p);
    }
    Ok(plans)
}

/// Refuses `--port` mappings that do not fit the targets: a name that none declares, or two
/// mappings of one port of a target.
fn check_port_map(targets: &[TargetDef], port_map: &PortMap) -> Result<(), LoadError> {
    if port_map.is_empty() {
        return Ok(());
    }
    let declared = |name: &str| {
        targets.iter().any(|t| t.ports.iter().any(|p| p.name.as_deref() == Some(name)))
    };
    if let Some(m) = port_map.unknown_name(declared) {
        let mut names: Vec<&str> =
            targets.iter().flat_map(|t| t.ports.iter().filter_map(|p| p.name.as_deref())).collect();
        names.sort_unstable();
        names.dedup();
        return Err(LoadError::Port(format!(
            "--port {m}: no target declares a port with this name in its ports ({})",
            declared_list(&names)
        )));
    }
    for t in targets {
        if let Some(e) = port_map.overlap(&format!("target {:?}", t.name), &named_ports(&t.ports)) {
            return Err(LoadError::Port(e));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(yaml: &str) -> Result<Vec<TargetPlan>, LoadError> {
        load_watch_file(yaml, false, "127.0.0.1", &PortMap::default(), None, &mut Vec::new())
    }

    #[test]
    fn namespaces_of_applies_to_exec_probes() {
        let yaml = "targets:\n- name: c\n  namespacesOf: 4242\n  livenessProbe:\n    exec: {command: [hostname]}\n  readinessProbe:\n    exec: {command: ['true']}\n";
        let plans = load(yaml).unwrap();
        for (_, spec, _) in &plans[0].probes {
            let prober::ProbeKind::Exec(e) = &spec.kind else { panic!("exec") };
            assert_eq!(e.namespaces_of, Some(4242));
        }
        let yaml = "targets:\n- name: c\n  namespacesOf: 4242\n  livenessProbe:\n    exec: {command: [hostname]}\n  readinessProbe:\n    tcpSocket: {port: 80}\n";
        assert_eq!(
            load(yaml).unwrap_err().to_string(),
            "target \"c\": namespacesOf applies to exec probes only, and readinessProbe is not one (a network probe into the process's network namespace names it with netns: /proc/4242/ns/net)"
        );
        let yaml = "targets:\n- name: c\n  namespacesOf: 0\n  livenessProbe:\n    exec: {command: [hostname]}\n";
        assert_eq!(
            load(yaml).unwrap_err().to_string(),
            "target \"c\": namespacesOf: invalid PID 0 for namespacesOf (expected 1 to 4194304)"
        );
        let yaml = "targets:\n- name: c\n  namespacesOf: -1\n  livenessProbe:\n    exec: {command: [hostname]}\n";
        assert!(load(yaml).unwrap_err().to_string().contains("namespacesOf"));
    }

    #[test]
    fn exec_cgroup_applies_to_exec_probes() {
        let yaml = "targets:\n- name: c\n  execCgroup: /sys/fs/cgroup/probes\n  livenessProbe:\n    exec: {command: [hostname]}\n  readinessProbe:\n    tcpSocket: {port: 80}\n";
        let plans = load(yaml).unwrap();
        assert_eq!(plans[0].probes.len(), 2);
        for (_, spec, _) in &plans[0].probes {
            if let prober::ProbeKind::Exec(e) = &spec.kind {
                assert_eq!(e.cgroup.as_deref(), Some(Path::new("/sys/fs/cgroup/probes")));
            }
        }
        let yaml = "targets:\n- name: c\n  execCgroup: probes\n  livenessProbe:\n    exec: {command: [hostname]}\n";
        assert_eq!(
            load(yaml).unwrap_err().to_string(),
            "target \"c\": execCgroup: invalid cgroup directory \"probes\" (expected an absolute path without NUL bytes)"
        );
    }

    #[test]
    fn missing_tls_files_are_noted() {
        let yaml = "targets:\n- name: t\n  readinessProbe:\n    httpGet: {port: 1, scheme: HTTPS}\n    tls: {caFile: no-such-ca.pem, certFile: /no/such/c.pem, keyFile: /no/such/k.pem}\n";
        let mut notes = Vec::new();
        let plans = load_watch_file(
            yaml,
            false,
            "127.0.0.1",
            &PortMap::default(),
            Some(Path::new("/no/dir")),
            &mut notes,
        )
        .unwrap();
        assert_eq!(plans[0].probes.len(), 1);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert_eq!(
            notes[0],
            "target \"t\": readinessProbe.tls.caFile: cannot read /no/dir/no-such-ca.pem: no such file or directory; the probe's runs are unknown (never published) until it can be read"
        );
        assert!(notes[2].contains("tls.keyFile: cannot read /no/such/k.pem"), "{notes:?}");
    }
}
