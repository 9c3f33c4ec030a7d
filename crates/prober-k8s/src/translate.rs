//! The Kubernetes probe fields translated into specs and schedules, with the kubelet's
//! defaults and its rules (thresholds, named ports, `$(VAR)` in commands), for watch files and
//! manifests alike.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use prober::{ProbeKind, ProbeSpec, Role, Schedule, Scheme, SpecError, TlsOptions, TlsVerify, Url};
use prober_core::{TlsFieldNames, TlsFields, os_error_text};

use crate::ports::PortMap;

use crate::model::{
    ContainerPort, EnvVar, ExecAction, GrpcAction, HttpGetAction, PortRef, Probe, Probes,
    TcpSocketAction, TlsConfig,
};
/// One target to run: its name and its probes.
#[derive(Debug)]
pub struct TargetPlan {
    /// The target's name: a watch file's `name`, or `OWNER/CONTAINER` from a manifest.
    pub name: String,
    /// Its probes (at most one per role), each with the schedule it runs on.
    pub probes: Vec<(Role, ProbeSpec, Schedule)>,
    /// A watch file's `onChange`: the command `prober watch` runs when the target's state
    /// changes (manifests have none).
    pub on_change: Option<OnChange>,
}

/// A target's `onChange` (a watch-file extension, for `prober watch`): a command and its
/// arguments, run without a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnChange {
    /// The command and its arguments (at least the command; no NUL in any).
    pub command: Vec<String>,
}

/// Why a watch file or manifest cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// A problem in the file: a one-line message that says where (a line and column, or a
    /// field's path).
    File(String),
    /// A `--port` mapping that does not fit the file (a port name that nothing declares).
    Port(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::File(s) | LoadError::Port(s) => f.write_str(s),
        }
    }
}

impl From<String> for LoadError {
    fn from(s: String) -> LoadError {
        LoadError::File(s)
    }
}

/// Where probes come from, for defaults and error messages.
#[derive(Debug)]
pub(crate) struct Source<'a> {
    /// `target "web"` or `container web/app`: the start of every message about it.
    pub label: String,
    pub env: &'a [EnvVar],
    pub ports: &'a [ContainerPort],
    /// Host for probes that name none.
    pub host: &'a str,
    /// `--port` mappings: the local port for a container port.
    pub port_map: &'a PortMap,
    /// Directory that relative file names in `tls:` blocks are relative to (`None`: the
    /// current directory).
    pub base_dir: Option<&'a Path>,
}

/// Builds the target's probes. `notes` collects what is worth saying (non-static env).
pub(crate) fn plan(
    name: String,
    src: &Source<'_>,
    probes: Probes<'_>,
    notes: &mut Vec<String>,
) -> Result<TargetPlan, String> {
    let mut out = Vec::new();
    for (i, v) in src.env.iter().enumerate() {
        if v.value_from.is_some()
            && probes.by_role().iter().any(|(_, _, p)| p.is_some_and(|p| p.exec.is_some()))
        {
            notes.push(format!(
                "{}: env[{i}] {}: valueFrom is not resolved here; $({}) stays as written",
                src.label, v.name, v.name
            ));
        }
    }
    for (role, field, probe) in probes.by_role() {
        let Some(probe) = probe else { continue };
        let (spec, schedule) =
            build(src, role, field, probe).map_err(|e| format!("{}: {e}", src.label))?;
        // TLS files are checked at every run and read again when they change (a renewed
        // certificate is picked up), so one that is missing now is not an error; but its runs
        // would be Unknown, which is never published: say so, or the watch would just stay
        // silent. Only looked at (stat), never opened: a FIFO must not block the loading.
        for (name, path) in tls_files(&spec) {
            let problem = match std::fs::metadata(path) {
                Err(e) => Some(format!("cannot read {}: {}", path.display(), os_error_text(&e))),
                Ok(m) if !m.is_file() => Some(format!("{} is not a regular file", path.display())),
                Ok(_) => None,
            };
            if let Some(problem) = problem {
                notes.push(format!(
                    "{}: {field}.tls.{name}: {problem}; the probe's runs are unknown (never published) until it can be read",
                    src.label
                ));
            }
        }
        out.push((role, spec, schedule));
    }
    Ok(TargetPlan { name, probes: out, on_change: None })
}

/// The named ports of a container or target, with their numbers, for [`PortMap`].
pub(crate) fn named_ports(ports: &[ContainerPort]) -> Vec<(&str, i64)> {
    ports.iter().filter_map(|cp| Some((cp.name.as_deref()?, cp.container_port))).collect()
}

/// One probe: its spec and its schedule.
fn build(
    src: &Source<'_>,
    role: Role,
    p: &str,
    probe: &Probe,
) -> Result<(ProbeSpec, Schedule), String> {
    let handlers = [
        probe.exec.is_some(),
        probe.http_get.is_some(),
        probe.tcp_socket.is_some(),
        probe.grpc.is_some(),
        probe.dns.is_some(),
        probe.icmp.is_some(),
    ];
    match handlers.iter().filter(|h| **h).count() {
        0 => {
            return Err(format!("{p}: needs one of exec, httpGet, tcpSocket, grpc, dns or icmp"));
        }
        1 => {}
        _ => {
            return Err(format!(
                "{p}: give only one of exec, httpGet, tcpSocket, grpc, dns and icmp"
            ));
        }
    }
    let schedule = schedule(role, p, probe)?;
    let timeout = interval(
        p,
        "timeout",
        probe.timeout_seconds,
        probe.timeout_milliseconds,
        prober::DEFAULT_TIMEOUT,
        false,
    )?;

    let mut spec = if let Some(h) = &probe.http_get {
        http_get_spec(src, p, h)?
    } else if let Some(t) = &probe.tcp_socket {
        tcp_socket_spec(src, p, t)?
    } else if let Some(e) = &probe.exec {
        exec_spec(src, p, e)?
    } else if let Some(g) = &probe.grpc {
        grpc_spec(src, p, g)?
    } else if let Some(d) = &probe.dns {
        crate::dns_icmp::dns_spec(p, src.host, d)?
    } else if let Some(i) = &probe.icmp {
        crate::dns_icmp::icmp_spec(p, src.host, i)?
    } else {
        unreachable!("exactly one handler was checked above");
    };
    if let Some(t) = &probe.tls {
        apply_tls(src, p, t, &mut spec)?;
    }
    let tfield =
        if probe.timeout_milliseconds.is_some() { "timeoutMilliseconds" } else { "timeoutSeconds" };
    spec.set_timeout(timeout).map_err(|e| format!("{p}.{tfield}: {e}"))?;
    if let ProbeKind::Icmp(i) = &spec.kind {
        // Every request of a run must leave within its timeout.
        i.validate_within(timeout).map_err(|e| format!("{p}.icmp: {e}"))?;
    }
    Ok((spec, schedule))
}

/// An `httpGet` probe at path `p`.
fn http_get_spec(src: &Source<'_>, p: &str, h: &HttpGetAction) -> Result<ProbeSpec, String> {
    let port = resolve_port(src, &format!("{p}.httpGet.port"), &h.port)?;
    let host = host_field(src, &format!("{p}.httpGet.host"), h.host.as_deref())?;
    let scheme = match h.scheme.as_deref() {
        None | Some("HTTP" | "http") => Scheme::Http,
        Some("HTTPS" | "https") => Scheme::Https,
        Some(other) => {
            return Err(format!("{p}.httpGet.scheme: expected HTTP or HTTPS (got {other:?})"));
        }
    };
    // As the kubelet's formatURL builds it: a path with spaces or non-ASCII is encoded,
    // `//x` is not a path, a bad escape is encoded. The host was checked above to be a
    // bare host, so it cannot carry a port, path, query or fragment into the URL.
    let path = h.path.as_deref().unwrap_or("/");
    let url = Url::for_http_get(scheme, host, port, path)
        .map_err(|e| format!("{p}.httpGet.path: {e}"))?;
    let mut spec = ProbeSpec::http(&url.to_string()).map_err(|e| format!("{p}.httpGet: {e}"))?;
    for (i, hh) in h.http_headers.iter().enumerate() {
        spec.add_header(&hh.name, &hh.value)
            .map_err(|e| format!("{p}.httpGet.httpHeaders[{i}]: {e}"))?;
    }
    crate::extensions::apply_http_fields(
        p,
        &mut spec,
        h.expect_status.as_deref(),
        h.expect_body.as_deref(),
        h.keep_alive,
    )?;
    crate::extensions::apply_http_request(p, &mut spec, h.method.as_deref(), h.body.as_deref())?;
    let coding = h.compression.as_deref();
    crate::extensions::apply_http_client(p, &mut spec, h.max_redirects, h.cookies, coding)?;
    crate::extensions::apply_http_protocol(
        p,
        &mut spec,
        h.protocol.as_deref(),
        h.host.as_deref(),
        h.http1_only,
    )?;
    crate::extensions::apply_unix_socket(
        &format!("{p}.httpGet"),
        &mut spec,
        h.unix_socket.as_deref(),
    )?;
    Ok(spec)
}

/// A `tcpSocket` probe at path `p`.
fn tcp_socket_spec(src: &Source<'_>, p: &str, t: &TcpSocketAction) -> Result<ProbeSpec, String> {
    let mut spec = match (&t.port, &t.unix_socket) {
        // A Unix socket is the whole address: a host or port beside it would name nothing.
        (Some(_), Some(_)) => {
            return Err(format!("{p}.tcpSocket: give port or unixSocket, not both"));
        }
        (None, Some(_)) if t.host.is_some() => {
            return Err(format!("{p}.tcpSocket.host: does not apply with unixSocket"));
        }
        (None, Some(socket)) => crate::extensions::unix_spec(&format!("{p}.tcpSocket"), socket)?,
        (Some(port), None) => {
            let port = resolve_port(src, &format!("{p}.tcpSocket.port"), port)?;
            let host = host_field(src, &format!("{p}.tcpSocket.host"), t.host.as_deref())?;
            ProbeSpec::tcp(host, i64::from(port)).map_err(|e| format!("{p}.tcpSocket: {e}"))?
        }
        (None, None) => unreachable!("refused when the file was read"),
    };
    crate::extensions::apply_tcp_fields(p, &mut spec, t.send.as_deref(), t.expect.as_deref())?;
    crate::extensions::apply_tcp_steps(p, &mut spec, &t.steps, t.tls)?;
    if t.tls {
        spec.set_tls(TlsOptions::default()).map_err(|e| format!("{p}.tcpSocket.tls: {e}"))?;
    }
    if t.starttls {
        spec.set_starttls(true).map_err(|e| format!("{p}.tcpSocket.starttls: {e}"))?;
    }
    Ok(spec)
}

/// An `exec` probe at path `p`, with the source's static environment.
fn exec_spec(src: &Source<'_>, p: &str, e: &ExecAction) -> Result<ProbeSpec, String> {
    if e.command.is_empty() {
        return Err(format!("{p}.exec.command: must not be empty"));
    }
    let mut spec = ProbeSpec::exec(&e.command).map_err(|err| format!("{p}.exec.command: {err}"))?;
    for (i, v) in src.env.iter().enumerate() {
        if v.value_from.is_some() {
            continue;
        }
        let value = v.value.as_deref().unwrap_or("");
        spec.set_env(&v.name, value).map_err(|err| format!("env[{i}]: {err}"))?;
    }
    Ok(spec)
}

/// A `grpc` probe at path `p`.
fn grpc_spec(src: &Source<'_>, p: &str, g: &GrpcAction) -> Result<ProbeSpec, String> {
    let port = match (&g.port, &g.unix_socket) {
        (Some(port), _) => grpc_port(src, &format!("{p}.grpc.port"), port)?,
        // The port names nothing through a socket; 1 passes the spec's check.
        (None, Some(_)) => 1,
        (None, None) => return Err(format!("{p}.grpc: missing field `port`")),
    };
    // Through a socket the host is only the `:authority`: grpc-go's `localhost` by default.
    let default_host = if g.unix_socket.is_some() { Some("localhost") } else { None };
    let host = host_field(src, &format!("{p}.grpc.host"), g.host.as_deref().or(default_host))?;
    let service = g.service.as_deref().unwrap_or("");
    let mut spec =
        ProbeSpec::grpc(host, i64::from(port), service).map_err(|e| format!("{p}.grpc: {e}"))?;
    match g.mode.as_deref() {
        None | Some("Plaintext" | "plaintext") => {}
        Some("TLS" | "tls") => {
            spec.set_tls(TlsOptions::default()).map_err(|e| format!("{p}.grpc.mode: {e}"))?;
        }
        Some(other) => {
            return Err(format!("{p}.grpc.mode: expected Plaintext or TLS (got {other:?})"));
        }
    }
    crate::extensions::apply_unix_socket(
        &format!("{p}.grpc"),
        &mut spec,
        g.unix_socket.as_deref(),
    )?;
    crate::extensions::apply_grpc_request(&format!("{p}.grpc"), &mut spec, g)?;
    Ok(spec)
}

/// The `tls:` block of the probe at path `p`, on a spec that uses TLS.
fn apply_tls(src: &Source<'_>, p: &str, t: &TlsConfig, spec: &mut ProbeSpec) -> Result<(), String> {
    let uses_tls = match &spec.kind {
        ProbeKind::Http(h) => h.url.scheme().as_str() == "https",
        ProbeKind::Grpc(g) => g.connect.tls.is_some(),
        ProbeKind::Tcp(t) => t.connect.tls.is_some(),
        ProbeKind::Dns(d) => d.transport == prober::DnsTransport::Tls,
        // Exec, and any kind added later: no TLS.
        _ => false,
    };
    if !uses_tls {
        return Err(format!(
            "{p}.tls: applies to httpGet with scheme HTTPS, to grpc with mode TLS, to tcpSocket with tls or starttls and to dns with transport tls only"
        ));
    }
    let opts = tls_options(src, &format!("{p}.tls"), t)?;
    spec.set_tls(opts).map_err(|e| format!("{p}.tls: {e}"))
}

/// The host of a probe: its `host` field (`field`, for messages) when set and not empty, else
/// the source's default; a name or an IP literal (IPv6 with or without brackets, returned
/// without), nothing else.
fn host_field<'a>(src: &Source<'a>, field: &str, host: Option<&'a str>) -> Result<&'a str, String> {
    let host = host.filter(|h| !h.is_empty()).unwrap_or(src.host);
    bare_host(host).map_err(|e| format!("{field}: {e}"))
}

/// `host` without the brackets of an IPv6 literal ([`prober_core::unbracket`], the rule of
/// every surface), when it is a host name or an IP address by the library's rule.
///
/// # Errors
///
/// The library's refusal of the host.
pub fn bare_host(host: &str) -> Result<&str, SpecError> {
    let bare = prober_core::unbracket(host);
    prober_core::validate_host(bare)?;
    Ok(bare)
}

/// The files named by a spec's TLS options, with their `tls:` field names.
fn tls_files(spec: &ProbeSpec) -> Vec<(&'static str, &Path)> {
    let tls = match &spec.kind {
        ProbeKind::Http(h) => Some(h.tls()),
        ProbeKind::Grpc(g) => g.connect.tls.as_ref(),
        ProbeKind::Dns(d) => d.connect.tls.as_ref(),
        // TCP, exec, and any kind added later: no TLS files.
        _ => None,
    };
    let Some(tls) = tls else { return Vec::new() };
    let mut files = Vec::new();
    if let TlsVerify::CaFile(ca) = &tls.verify {
        files.push(("caFile", ca.as_path()));
    }
    if let Some((cert, key)) = &tls.client_cert {
        files.push(("certFile", cert.as_path()));
        files.push(("keyFile", key.as_path()));
    }
    files
}

/// The options of a `tls:` block, through the one reader of TLS fields; `field` is its path
/// for messages (`readinessProbe.tls.keyFile: ...`).
fn tls_options(src: &Source<'_>, field: &str, t: &TlsConfig) -> Result<TlsOptions, String> {
    let verify = match (t.verify, &t.ca_file) {
        (Some(false), Some(_)) => {
            return Err(format!("{field}: verify: false and a caFile contradict each other"));
        }
        // `verify: true` with a caFile: verify, against that CA (the reader's CaFile).
        (Some(true), _) => TlsVerify::SystemRoots,
        (Some(false) | None, _) => TlsVerify::None,
    };
    let fields = TlsFields {
        ca_file: t.ca_file.as_deref(),
        cert_file: t.cert_file.as_deref(),
        key_file: t.key_file.as_deref(),
        server_name: t.server_name.as_deref(),
        min_version: t.min_version.as_deref(),
        max_version: t.max_version.as_deref(),
    };
    let mut options = fields.read(field, &TlsFieldNames::CAMEL_CASE, src.base_dir, verify)?;
    // Not a field of the shared reader: blackbox_exporter's `tls_config` has no such option,
    // and `prober serve` none either.
    options.resumption = t.resumption.unwrap_or(false);
    Ok(options)
}

/// The port of a gRPC probe: Kubernetes requires a number (`GRPCAction.port` is an int32).
fn grpc_port(src: &Source<'_>, field: &str, port: &PortRef) -> Result<u16, String> {
    match port {
        PortRef::Number(_) => resolve_port(src, field, port),
        PortRef::Name(name) => {
            let declared = src
                .ports
                .iter()
                .find(|cp| cp.name.as_deref() == Some(name.as_str()))
                .map_or(String::new(), |cp| format!("; write its number, {}", cp.container_port));
            Err(format!(
                "{field}: named port {name:?} is not allowed for gRPC probes (Kubernetes requires a port number here{declared})"
            ))
        }
    }
}

fn schedule(role: Role, p: &str, probe: &Probe) -> Result<Schedule, String> {
    let d = Schedule::default();
    let s = Schedule {
        initial_delay: interval(
            p,
            "initialDelay",
            probe.initial_delay_seconds,
            probe.initial_delay_milliseconds,
            d.initial_delay,
            true,
        )?,
        period: interval(
            p,
            "period",
            probe.period_seconds,
            probe.period_milliseconds,
            d.period,
            false,
        )?,
        success_threshold: threshold(
            p,
            "successThreshold",
            probe.success_threshold,
            d.success_threshold,
        )?,
        failure_threshold: threshold(
            p,
            "failureThreshold",
            probe.failure_threshold,
            d.failure_threshold,
        )?,
        jitter: false,
        unhealthy_period: crate::extensions::optional_period(
            p,
            "unhealthyPeriod",
            probe.unhealthy_period_seconds,
            probe.unhealthy_period_milliseconds,
        )?,
        transition_period: crate::extensions::optional_period(
            p,
            "transitionPeriod",
            probe.transition_period_seconds,
            probe.transition_period_milliseconds,
        )?,
        jitter_percent: crate::extensions::jitter_percent(p, probe.jitter_percent)?,
    };
    if role != Role::Readiness && s.success_threshold != 1 {
        return Err(format!(
            "{p}.successThreshold: must be 1 for {role} probes (got {})",
            s.success_threshold
        ));
    }
    s.validate(role).map_err(|e| format!("{p}: {e}"))?;
    Ok(s)
}

/// `{name}Seconds` or `{name}Milliseconds`. A zero in seconds means the default, as Kubernetes
/// defaults zero values, except where zero is meaningful (`zero_ok`: the initial delay).
fn interval(
    p: &str,
    name: &str,
    secs: Option<i64>,
    ms: Option<i64>,
    default: Duration,
    zero_ok: bool,
) -> Result<Duration, String> {
    match (secs, ms) {
        (Some(_), Some(_)) => {
            Err(format!("{p}: give {name}Seconds or {name}Milliseconds, not both"))
        }
        (None, None) => Ok(default),
        (Some(s), None) if s < 0 => {
            Err(format!("{p}.{name}Seconds: must not be negative (got {s})"))
        }
        (Some(0), None) if !zero_ok => Ok(default),
        (Some(s), None) => Ok(Duration::from_secs(s as u64)),
        (None, Some(m)) if m < 0 => {
            Err(format!("{p}.{name}Milliseconds: must not be negative (got {m})"))
        }
        (None, Some(0)) if !zero_ok => Err(format!("{p}.{name}Milliseconds: must be at least 1")),
        (None, Some(m)) => Ok(Duration::from_millis(m as u64)),
    }
}

fn threshold(p: &str, field: &str, v: Option<i64>, default: u32) -> Result<u32, String> {
    match v {
        None | Some(0) => Ok(default),
        Some(n) if n < 0 => Err(format!("{p}.{field}: must not be negative (got {n})")),
        Some(n) => u32::try_from(n).map_err(|_| format!("{p}.{field}: too large (got {n})")),
    }
}

fn resolve_port(src: &Source<'_>, field: &str, port: &PortRef) -> Result<u16, String> {
    let n = match port {
        PortRef::Number(n) => *n,
        PortRef::Name(name) => {
            let found = src.ports.iter().find(|cp| cp.name.as_deref() == Some(name.as_str()));
            match found {
                Some(cp) => cp.container_port,
                None => {
                    let names: Vec<&str> =
                        src.ports.iter().filter_map(|cp| cp.name.as_deref()).collect();
                    let known = if names.is_empty() {
                        "no named ports are declared in ports".to_string()
                    } else {
                        format!("declared: {}", names.join(", "))
                    };
                    return Err(format!("{field}: named port {name:?} not found ({known})"));
                }
            }
        }
    };
    let n = u16::try_from(n)
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("{field}: invalid port {n} (expected 1 to 65535)"))?;
    if src.port_map.is_empty() {
        return Ok(n);
    }
    Ok(src.port_map.local(n, &named_ports(src.ports)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prober::TlsVersion;

    static NO_PORT_MAP: PortMap = PortMap::EMPTY;

    fn src<'a>(env: &'a [EnvVar], ports: &'a [ContainerPort]) -> Source<'a> {
        Source {
            label: "target \"t\"".into(),
            env,
            ports,
            host: "127.0.0.1",
            port_map: &NO_PORT_MAP,
            base_dir: None,
        }
    }

    fn probe(yaml: &str) -> Probe {
        serde_norway::from_str(yaml).unwrap()
    }

    #[test]
    fn kubernetes_defaults() {
        let p = probe("tcpSocket: {port: 80}");
        let (spec, s) = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap();
        assert_eq!(s, Schedule::default());
        assert_eq!(spec.timeout, Duration::from_secs(1));
        let p = probe(
            "tcpSocket: {port: 80}\nperiodSeconds: 0\ntimeoutSeconds: 0\nfailureThreshold: 0",
        );
        let (spec, s) = build(&src(&[], &[]), Role::Liveness, "livenessProbe", &p).unwrap();
        assert_eq!(s, Schedule::default());
        assert_eq!(spec.timeout, Duration::from_secs(1));
    }

    #[test]
    fn milliseconds_and_conflicts() {
        let p = probe(
            "tcpSocket: {port: 80}\nperiodMilliseconds: 250\ntimeoutMilliseconds: 100\ninitialDelayMilliseconds: 50",
        );
        let (spec, s) = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap();
        assert_eq!(
            (s.period, s.initial_delay),
            (Duration::from_millis(250), Duration::from_millis(50))
        );
        assert_eq!(spec.timeout, Duration::from_millis(100));
        let p = probe("tcpSocket: {port: 80}\nperiodMilliseconds: 250\nperiodSeconds: 1");
        let e = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert_eq!(e, "readinessProbe: give periodSeconds or periodMilliseconds, not both");
        let p = probe("tcpSocket: {port: 80}\nperiodMilliseconds: 0");
        let e = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert_eq!(e, "readinessProbe.periodMilliseconds: must be at least 1");
        let p = probe("tcpSocket: {port: 80}\ntimeoutSeconds: -1");
        let e = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert_eq!(e, "readinessProbe.timeoutSeconds: must not be negative (got -1)");
        let p = probe("tcpSocket: {port: 80}\ntimeoutSeconds: 100000");
        let e = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert!(e.starts_with("readinessProbe.timeoutSeconds: invalid timeout"), "{e}");
        let p = probe("tcpSocket: {port: 80}\nperiodSeconds: 10000000");
        let e = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert!(e.starts_with("readinessProbe: invalid period"), "{e}");
    }

    #[test]
    fn integers() {
        let e = serde_norway::from_str::<Probe>("periodSeconds: ten").unwrap_err().to_string();
        assert_eq!(
            e,
            "periodSeconds: invalid type: string \"ten\", expected an integer at line 1 column 16"
        );
        let e = serde_json::from_str::<Probe>("{\"periodSeconds\": 1.5}").unwrap_err().to_string();
        assert_eq!(
            e,
            "invalid type: floating point `1.5`, expected an integer at line 1 column 21"
        );
        let p: Probe = serde_norway::from_str("periodSeconds:\ntimeoutSeconds: 3").unwrap();
        assert_eq!((p.period_seconds, p.timeout_seconds), (None, Some(3)));
        let p: Probe =
            serde_json::from_str("{\"periodSeconds\": null, \"failureThreshold\": 4}").unwrap();
        assert_eq!((p.period_seconds, p.failure_threshold), (None, Some(4)));
    }

    #[test]
    fn integers_out_of_range_are_said_in_words() {
        let big = "99999999999999999999";
        let cases = [
            format!("periodSeconds: {big}"),
            format!("periodSeconds: -{big}"),
            "timeoutSeconds: 18446744073709551615".to_string(),
            format!("tcpSocket: {{port: {big}}}"),
            "tcpSocket: {port: 18446744073709551615}".to_string(),
            format!("jitterPercent: {big}"),
        ];
        for yaml in &cases {
            let e = serde_norway::from_str::<Probe>(yaml).unwrap_err().to_string();
            assert!(e.contains("out of range") || e.contains("invalid port"), "{yaml}: {e}");
            for t in ["u128", "i128", "u64", "i64", "u32", "u16"] {
                assert!(!e.contains(t), "{yaml}: {e}");
            }
        }
        let e =
            serde_norway::from_str::<Vec<ContainerPort>>(&format!("[{{containerPort: {big}}}]"))
                .unwrap_err()
                .to_string();
        assert!(
            e.contains(&format!("[0].containerPort: the integer {big} is out of range")),
            "{e}"
        );
        let e = serde_norway::from_str::<Vec<ContainerPort>>("[{containerPort: x}]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected an integer") && !e.contains("i64"), "{e}");
        let p = probe(&format!("tcpSocket: {{port: 1}}\ntls: {{minVersion: {big}}}"));
        assert!(p.tls.is_some());
    }

    #[test]
    fn thresholds() {
        let p = probe("tcpSocket: {port: 80}\nsuccessThreshold: 2");
        assert_eq!(build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap().1.success_threshold, 2);
        for role in [Role::Liveness, Role::Startup] {
            let e = build(&src(&[], &[]), role, "livenessProbe", &p).unwrap_err();
            assert_eq!(
                e,
                format!("livenessProbe.successThreshold: must be 1 for {role} probes (got 2)")
            );
        }
        let p = probe("tcpSocket: {port: 80}\nfailureThreshold: -3");
        assert!(
            build(&src(&[], &[]), Role::Readiness, "r", &p)
                .unwrap_err()
                .contains("failureThreshold: must not be negative")
        );
    }

    #[test]
    fn ports_and_urls() {
        let ports: Vec<ContainerPort> =
            serde_norway::from_str("[{name: http, containerPort: 8080}, {containerPort: 9}]")
                .unwrap();
        let p = probe(
            "httpGet: {port: http, path: healthz, scheme: HTTPS, host: '::1', httpHeaders: [{name: X-A, value: b}]}",
        );
        let (spec, _) = build(&src(&[], &ports), Role::Readiness, "readinessProbe", &p).unwrap();
        let prober::ProbeKind::Http(h) = &spec.kind else { panic!() };
        assert_eq!(h.url.scheme().as_str(), "https");
        assert_eq!(h.url.port(), 8080);
        assert_eq!(h.headers, vec![("X-A".to_string(), "b".to_string())]);
        let p = probe("tcpSocket: {port: metrics}");
        let e = build(&src(&[], &ports), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert_eq!(
            e,
            "readinessProbe.tcpSocket.port: named port \"metrics\" not found (declared: http)"
        );
        let e = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert!(e.ends_with("(no named ports are declared in ports)"), "{e}");
        let p = probe("tcpSocket: {port: 70000}");
        let e = build(&src(&[], &[]), Role::Readiness, "readinessProbe", &p).unwrap_err();
        assert_eq!(e, "readinessProbe.tcpSocket.port: invalid port 70000 (expected 1 to 65535)");
        let p = probe("tcpSocket: {port: '8080'}");
        assert!(build(&src(&[], &[]), Role::Readiness, "r", &p).is_ok());
        let p = probe("httpGet: {port: 1, scheme: FTP}");
        assert!(build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap_err().contains("scheme"));
    }

    #[test]
    fn handlers_and_env() {
        let p = probe("periodSeconds: 1");
        assert_eq!(
            build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap_err(),
            "r: needs one of exec, httpGet, tcpSocket, grpc, dns or icmp"
        );
        let p = probe("tcpSocket: {port: 1}\nexec: {command: [a]}");
        assert!(build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap_err().contains("only one"));
        let p = probe("grpc: {port: 1}");
        assert!(build(&src(&[], &[]), Role::Readiness, "r", &p).is_ok());
        let p = probe("exec: {command: []}");
        assert!(
            build(&src(&[], &[]), Role::Readiness, "r", &p)
                .unwrap_err()
                .contains("must not be empty")
        );
        let env: Vec<EnvVar> = serde_norway::from_str(
            "[{name: A, value: x}, {name: B, valueFrom: {fieldRef: {fieldPath: x}}}, {name: C}]",
        )
        .unwrap();
        let p = probe("exec: {command: [echo, '$(A)']}");
        let (spec, _) = build(&src(&env, &[]), Role::Readiness, "r", &p).unwrap();
        let prober::ProbeKind::Exec(e) = &spec.kind else { panic!() };
        assert_eq!(e.env, vec![("A".into(), "x".into()), ("C".into(), String::new())]);
    }

    /// `httpGet.maxRedirects` and `httpGet.cookies`: the kubelet's 9 and no jar by default.
    #[test]
    fn http_redirect_limit_and_cookies() {
        let http_of = |spec: &ProbeSpec| match &spec.kind {
            ProbeKind::Http(h) => (h.max_redirects, h.cookies),
            other => panic!("not HTTP: {other:?}"),
        };
        let p = probe("httpGet: {port: 80}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert_eq!(http_of(&spec), (prober::DEFAULT_MAX_REDIRECTS, false));
        let p = probe("httpGet: {port: 80, maxRedirects: 10, cookies: true}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert_eq!(http_of(&spec), (10, true));
        let p = probe("httpGet: {port: 80, maxRedirects: 65}");
        assert_eq!(
            build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap_err(),
            "r.httpGet.maxRedirects: at most 64 redirects can be followed, not 65"
        );
    }

    /// `httpGet.compression`: none by default; a coding's name, any case.
    #[test]
    fn http_compression() {
        let coding_of = |spec: &ProbeSpec| match &spec.kind {
            ProbeKind::Http(h) => h.compression,
            other => panic!("not HTTP: {other:?}"),
        };
        let p = probe("httpGet: {port: 80}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert_eq!(coding_of(&spec), None);
        let p = probe("httpGet: {port: 80, compression: GZIP}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert_eq!(coding_of(&spec), Some(prober::Compression::Gzip));
        let p = probe("httpGet: {port: 80, compression: zstd}");
        assert_eq!(
            build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap_err(),
            "r.httpGet.compression: \"zstd\" is not gzip, deflate, br or identity"
        );
    }

    fn grpc_of(spec: &ProbeSpec) -> &prober::GrpcSpec {
        match &spec.kind {
            ProbeKind::Grpc(g) => g,
            other => panic!("not gRPC: {other:?}"),
        }
    }

    #[test]
    fn grpc_probes() {
        let p = probe("grpc: {port: 50051, service: my.Svc}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        let g = grpc_of(&spec);
        assert_eq!(
            (g.host.as_str(), g.port, g.service.as_str(), &g.connect.tls),
            ("127.0.0.1", 50051, "my.Svc", &None)
        );
        let p = probe("grpc: {port: '9', host: '::1', mode: Plaintext}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert_eq!((grpc_of(&spec).host.as_str(), grpc_of(&spec).port), ("::1", 9));
        let p = probe("grpc: {port: 9, mode: TLS}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert_eq!(grpc_of(&spec).connect.tls, Some(TlsOptions::default()));
        // grpc.keepAlive: httpGet.keepAlive's option for gRPC; off by default.
        assert!(!grpc_of(&spec).connect.keep_alive);
        let p = probe("grpc: {port: 9, keepAlive: true}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert!(grpc_of(&spec).connect.keep_alive);
        let p = probe("grpc: {port: 9, mode: mTLS}");
        assert_eq!(
            build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap_err(),
            "r.grpc.mode: expected Plaintext or TLS (got \"mTLS\")"
        );
        let p = probe("grpc: {port: 0}");
        assert_eq!(
            build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap_err(),
            "r.grpc.port: invalid port 0 (expected 1 to 65535)"
        );
        // Named ports: refused, as Kubernetes does, with the number when it is declared.
        let ports: Vec<ContainerPort> =
            serde_norway::from_str("[{name: grpc, containerPort: 50051}]").unwrap();
        let p = probe("grpc: {port: grpc}");
        assert_eq!(
            build(&src(&[], &ports), Role::Liveness, "livenessProbe", &p).unwrap_err(),
            "livenessProbe.grpc.port: named port \"grpc\" is not allowed for gRPC probes \
             (Kubernetes requires a port number here; write its number, 50051)"
        );
        assert_eq!(
            build(&src(&[], &[]), Role::Liveness, "livenessProbe", &p).unwrap_err(),
            "livenessProbe.grpc.port: named port \"grpc\" is not allowed for gRPC probes \
             (Kubernetes requires a port number here)"
        );
        // The port may be left out only with unixSocket (issue 25): refused when translated.
        let p = serde_norway::from_str::<Probe>("grpc: {service: x}").unwrap();
        let e = build(&src(&[], &[]), Role::Liveness, "livenessProbe", &p).unwrap_err();
        assert_eq!(e, "livenessProbe.grpc: missing field `port`");
    }

    #[test]
    fn tls_blocks() {
        let dir = Path::new("/etc/probes");
        let with_dir = Source { base_dir: Some(dir), ..src(&[], &[]) };
        let p = probe(
            "httpGet: {port: 8443, scheme: HTTPS}\ntls: {caFile: ca.pem, serverName: api.example, certFile: /abs/c.pem, keyFile: k.pem, minVersion: 1.3, resumption: true}",
        );
        let (spec, _) = build(&with_dir, Role::Readiness, "r", &p).unwrap();
        let ProbeKind::Http(h) = &spec.kind else { panic!() };
        assert_eq!(
            h.tls(),
            &TlsOptions {
                verify: TlsVerify::CaFile("/etc/probes/ca.pem".into()),
                server_name: Some("api.example".into()),
                client_cert: Some(("/abs/c.pem".into(), "/etc/probes/k.pem".into())),
                min_version: Some(TlsVersion::Tls13),
                max_version: None,
                resumption: true,
            }
        );
        let p = probe(
            "grpc: {port: 9, mode: TLS}\ntls: {verify: true, minVersion: '1.2', maxVersion: 1.2}",
        );
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        let tls = grpc_of(&spec).connect.tls.clone().unwrap();
        assert_eq!(
            (tls.verify, tls.min_version, tls.max_version),
            (TlsVerify::SystemRoots, Some(TlsVersion::Tls12), Some(TlsVersion::Tls12))
        );
        let p = probe("grpc: {port: 9, mode: TLS}\ntls: {verify: false}");
        let (spec, _) = build(&src(&[], &[]), Role::Readiness, "r", &p).unwrap();
        assert_eq!(grpc_of(&spec).connect.tls, Some(TlsOptions::default()));

        let cases = [
            (
                "tcpSocket: {port: 1}\ntls: {verify: true}",
                "r.tls: applies to httpGet with scheme HTTPS, to grpc with mode TLS, to tcpSocket with tls or starttls and to dns with transport tls only",
            ),
            ("httpGet: {port: 1}\ntls: {verify: true}", "r.tls: applies to httpGet"),
            ("grpc: {port: 1}\ntls: {verify: true}", "r.tls: applies to httpGet"),
            (
                "grpc: {port: 1, mode: TLS}\ntls: {verify: false, caFile: c}",
                "r.tls: verify: false and a caFile contradict each other",
            ),
            (
                "grpc: {port: 1, mode: TLS}\ntls: {certFile: c}",
                "r.tls.keyFile: missing (certFile is set)",
            ),
            (
                "grpc: {port: 1, mode: TLS}\ntls: {keyFile: k}",
                "r.tls.certFile: missing (keyFile is set)",
            ),
            (
                "grpc: {port: 1, mode: TLS}\ntls: {minVersion: 1.1}",
                "r.tls.minVersion: expected 1.2 or 1.3 (got \"1.1\")",
            ),
            (
                "grpc: {port: 1, mode: TLS}\ntls: {maxVersion: 1.4}",
                "r.tls.maxVersion: expected 1.2 or 1.3 (got \"1.4\")",
            ),
            (
                "grpc: {port: 1, mode: TLS}\ntls: {minVersion: 1.3, maxVersion: 1.2}",
                "r.tls.minVersion: 1.3 is above maxVersion 1.2",
            ),
            ("grpc: {port: 1, mode: TLS}\ntls: {caFile: ''}", "r.tls.caFile: must not be empty"),
            (
                "grpc: {port: 1, mode: TLS}\ntls: {serverName: 'a b'}",
                "r.tls.serverName: \"a b\" is neither a DNS name nor an IP address",
            ),
        ];
        for (yaml, want) in cases {
            let e = build(&src(&[], &[]), Role::Readiness, "r", &probe(yaml)).unwrap_err();
            assert!(e.starts_with(want), "{yaml}: {e}");
        }
        let e = serde_norway::from_str::<Probe>("tls: {verfy: true}").unwrap_err().to_string();
        assert!(e.contains("unknown field `verfy`"), "{e}");
    }
}
