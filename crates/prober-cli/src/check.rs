//! `prober check`: one probe, one line, an exit status.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use prober::{
    Engine, Outcome, ProbeKind, ProbeResult, ProbeSpec, RedirectPolicy, TlsOptions, TlsVerify,
    TlsVersion,
};

use crate::args::{EXIT_FAILURE, EXIT_UNKNOWN, Failure, Parser};
use crate::duration;
use crate::output::{human_line, json_line};
use crate::signals::{self, Signals};

/// What `prober check` was asked to do.
#[derive(Debug)]
pub struct CheckArgs {
    pub spec: ProbeSpec,
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `http://`: TLS options are refused (they would only apply to redirects to https://).
    Http,
    Https,
    Tcp,
    Grpc,
    Exec,
    Dns,
    Icmp,
}

impl Kind {
    fn is_http(self) -> bool {
        matches!(self, Kind::Http | Kind::Https)
    }
}

/// The `--tls*` options as given, checked against the target once it is known.
#[derive(Debug, Default)]
pub struct TlsArgs {
    /// The options given, in order, for messages (`--tls`, `--tls-ca`, ...).
    given: Vec<&'static str>,
    tls: bool,
    verify: bool,
    pub ca: Option<PathBuf>,
    pub server_name: Option<String>,
    pub cert: Option<PathBuf>,
    pub key: Option<PathBuf>,
    min_version: Option<TlsVersion>,
    max_version: Option<TlsVersion>,
    /// `--starttls` (tcp:// targets): TLS after the send/expect exchange.
    starttls: bool,
    /// `--tls-resumption`: resume TLS sessions (a single check has none to resume).
    resumption: bool,
}

impl TlsArgs {
    /// Records that option `name` was given (`--tls` and `--tls-verify` are switches), and
    /// gives the options to set its value in.
    pub fn note(&mut self, name: &'static str) -> &mut TlsArgs {
        match name {
            "--tls" => self.tls = true,
            "--tls-verify" => self.verify = true,
            "--starttls" => self.starttls = true,
            "--tls-resumption" => self.resumption = true,
            _ => {}
        }
        if !self.given.contains(&name) {
            self.given.push(name);
        }
        self
    }

    /// `--tls-min-version V` or `--tls-max-version V`.
    pub fn version(&mut self, p: &Parser, opt: &str, v: &str) -> Result<(), Failure> {
        let version = TlsVersion::parse(v)
            .ok_or_else(|| p.usage(format!("bad {opt} '{v}' (expected 1.2 or 1.3)")))?;
        if opt == "--tls-max-version" {
            self.max_version = Some(version);
            self.note("--tls-max-version");
        } else {
            self.min_version = Some(version);
            self.note("--tls-min-version");
        }
        Ok(())
    }

    /// The first option given other than `--tls` (or `--starttls`) itself.
    fn first_option(&self) -> Option<&'static str> {
        self.given.iter().copied().find(|n| *n != "--tls" && *n != "--starttls")
    }

    /// Applies the options to `spec` of `kind`, or says why they do not fit.
    fn apply(&self, args: &Parser, spec: &mut ProbeSpec, kind: Kind) -> Result<(), Failure> {
        let Some(&first) = self.given.first() else {
            return Ok(());
        };
        match (&self.cert, &self.key) {
            (Some(_), None) => {
                return Err(args.usage("--tls-cert needs --tls-key (give both or neither)"));
            }
            (None, Some(_)) => {
                return Err(args.usage("--tls-key needs --tls-cert (give both or neither)"));
            }
            _ => {}
        }
        if self.starttls && kind != Kind::Tcp {
            return Err(args.usage("--starttls applies to tcp:// targets only"));
        }
        match kind {
            Kind::Exec | Kind::Icmp => {
                return Err(args.usage(format!(
                    "{first} applies to https://, grpc://, tcp:// and dns:// targets only"
                )));
            }
            Kind::Dns if !self.tls => {
                return Err(args.usage(format!(
                    "{first} needs --tls on dns:// targets (DNS over TLS; UDP unless --tls is given)"
                )));
            }
            Kind::Tcp if !self.tls && !self.starttls => {
                return Err(args.usage(format!(
                    "{first} needs --tls or --starttls on tcp:// targets (TCP is plain unless one is given)"
                )));
            }
            Kind::Tcp => {}
            Kind::Http => {
                return Err(args.usage(format!(
                    "{first} applies to https:// and grpc:// targets, not http:// (write https://... for HTTPS)"
                )));
            }
            Kind::Grpc if !self.tls => {
                return Err(args.usage(format!(
                    "{first} needs --tls on grpc:// targets (gRPC is plaintext h2c unless --tls is given)"
                )));
            }
            Kind::Https if self.first_option().is_none() => return Ok(()),
            Kind::Https | Kind::Grpc | Kind::Dns => {}
        }
        // `--tls-verify --tls-ca FILE` reads as "verify, against FILE": the CA file decides.
        let verify = match (&self.ca, self.verify) {
            (Some(ca), _) => TlsVerify::CaFile(ca.clone()),
            (None, true) => TlsVerify::SystemRoots,
            (None, false) => TlsVerify::None,
        };
        let opts = TlsOptions {
            verify,
            server_name: self.server_name.clone(),
            client_cert: self
                .cert
                .as_ref()
                .zip(self.key.as_ref())
                .map(|(c, k)| (c.clone(), k.clone())),
            min_version: self.min_version,
            max_version: self.max_version,
            resumption: self.resumption,
        };
        spec.set_tls(opts).map_err(|e| args.usage(e))?;
        if self.starttls {
            spec.set_starttls(true).map_err(|e| args.usage(e))?;
        }
        Ok(())
    }
}

/// The options of `prober check` as given (by the table of `check_flags.rs`), before the target
/// decides what they mean.
#[derive(Debug, Default)]
pub struct Given {
    pub json: bool,
    pub timeout: Option<Duration>,
    pub headers: Vec<(String, String)>,
    pub redirects: Option<RedirectPolicy>,
    pub env: Vec<(String, String)>,
    pub namespaces_of: Option<u32>,
    pub exec_cgroup: Option<String>,
    target: Option<String>,
    command: Option<Vec<OsString>>,
    pub tls: TlsArgs,
    pub extensions: crate::extensions::CheckFlags,
    pub kinds: crate::kinds::KindFlags,
}

impl Given {
    /// A TARGET.
    pub fn target(&mut self, p: &Parser, v: OsString) -> Result<(), Failure> {
        if self.target.is_some() || self.command.is_some() {
            let v = v.to_string_lossy();
            return Err(p.usage(format!("unexpected argument '{v}' (one TARGET only)")));
        }
        self.target = Some(p.to_text(v, "TARGET")?);
        Ok(())
    }

    /// `-- CMD [ARG...]`.
    pub fn command(&mut self, p: &Parser, argv: Vec<OsString>) -> Result<(), Failure> {
        if self.target.is_some() {
            return Err(p.usage("give either a TARGET or '-- CMD', not both"));
        }
        if argv.is_empty() {
            return Err(p.usage("missing command after '--'"));
        }
        self.command = Some(argv);
        Ok(())
    }

    /// The spec: the target's, with the options applied and checked against it.
    pub fn build(self, p: &Parser) -> Result<CheckArgs, Failure> {
        let unix = self.extensions.unix_socket(p)?;
        let (mut spec, kind) = match (&self.target, self.command) {
            (Some(t), None) => parse_target(t, unix.is_some()).map_err(|e| p.usage(e))?,
            (None, Some(argv)) => (exec_spec(p, argv)?, Kind::Exec),
            _ => {
                return Err(p.usage(
                    "missing TARGET (http://..., https://..., tcp://HOST:PORT, grpc://HOST:PORT[/SERVICE], dns://SERVER[:PORT]/NAME, icmp://HOST or -- CMD [ARG...])",
                ));
            }
        };
        if let Some(t) = self.timeout {
            spec.set_timeout(t).map_err(|e| p.usage(format!("--timeout: {e}")))?;
        }
        // A flag for one kind of target: refused on the others, named in the message.
        let only = |ok: bool, m: String| if ok { Ok(()) } else { Err(p.usage(m)) };
        let http = "to http:// and https:// targets only";
        let exec = "to command targets ('-- CMD [ARG...]') only";
        only(self.headers.is_empty() || kind.is_http(), format!("-H/--header applies {http}"))?;
        for (name, value) in &self.headers {
            spec.add_header(name, value).map_err(|e| p.usage(format!("bad header: {e}")))?;
        }
        if let Some(policy) = self.redirects {
            only(kind.is_http(), format!("--redirects applies {http}"))?;
            spec.set_redirect_policy(policy);
        }
        only(self.env.is_empty() || kind == Kind::Exec, format!("--env applies {exec}"))?;
        for (name, value) in &self.env {
            spec.set_env(name, value).map_err(|e| p.usage(format!("bad --env: {e}")))?;
        }
        if let Some(pid) = self.namespaces_of {
            only(kind == Kind::Exec, format!("--namespaces-of applies {exec}"))?;
            let set = spec.set_namespaces_of(Some(pid));
            set.map_err(|e| p.usage(format!("--namespaces-of: {e}")))?;
        }
        if let Some(dir) = &self.exec_cgroup {
            only(kind == Kind::Exec, format!("--exec-cgroup applies {exec}"))?;
            let set = spec.set_exec_cgroup(Some(dir.into()));
            set.map_err(|e| p.usage(format!("--exec-cgroup: {e}")))?;
        }
        if let Some(socket) = unix {
            if !kind.is_http() && kind != Kind::Grpc {
                return Err(p.usage(
                    "--unix-socket applies to http://, https:// and grpc:// targets (a connect check of a socket is the TARGET unix:///PATH)",
                ));
            }
            spec.set_unix_socket(socket).map_err(|e| p.usage(format!("--unix-socket: {e}")))?;
        }
        self.tls.apply(p, &mut spec, kind)?;
        self.extensions.apply(p, &mut spec, kind.is_http(), kind == Kind::Tcp)?;
        self.kinds.apply(p, &mut spec, self.timeout.is_some(), self.target.as_deref())?;
        Ok(CheckArgs { spec, json: self.json })
    }
}

/// The command of `-- CMD [ARG...]`. The probe library takes its arguments as text.
fn exec_spec(p: &Parser, argv: Vec<OsString>) -> Result<ProbeSpec, Failure> {
    let mut text = Vec::with_capacity(argv.len());
    for (i, a) in argv.into_iter().enumerate() {
        let what = if i == 0 { "command".to_string() } else { format!("command argument {i}") };
        text.push(p.to_text(a, &what)?);
    }
    ProbeSpec::exec(&text).map_err(|e| p.usage(format!("bad command: {e}")))
}

/// `--namespaces-of PID`: a process ID.
pub fn pid(p: &Parser, v: &str) -> Result<u32, Failure> {
    v.parse().map_err(|_| p.usage(format!("bad --namespaces-of '{v}' (expected a process ID)")))
}

/// `--timeout DUR`: a positive duration.
pub fn timeout(p: &Parser, v: &str) -> Result<Duration, Failure> {
    duration::parse_positive(v).map_err(|e| p.usage(format!("--timeout: {e}")))
}

/// `--redirects POLICY`.
pub fn redirects(p: &Parser, v: &str) -> Result<RedirectPolicy, Failure> {
    RedirectPolicy::parse(v).ok_or_else(|| {
        p.usage(format!(
            "bad --redirects '{v}' (expected same-host, same-origin, none or any-host)"
        ))
    })
}

/// `--env NAME=VALUE`.
pub fn env_var(p: &Parser, v: &str) -> Result<(String, String), Failure> {
    let Some((name, value)) = v.split_once('=') else {
        return Err(p.usage(format!("bad --env '{v}' (expected NAME=VALUE)")));
    };
    Ok((name.to_string(), value.to_string()))
}

/// `Name: value` (the value may be empty: `User-Agent:` removes that default header).
pub fn parse_header(h: &str) -> Result<(String, String), String> {
    match h.split_once(':') {
        Some((name, value)) if !name.is_empty() => {
            Ok((name.to_string(), value.trim_matches(|c| c == ' ' || c == '\t').to_string()))
        }
        _ => Err(format!(
            "bad header '{h}' (expected 'Name: value', or 'Name:' to remove a default)"
        )),
    }
}

/// A TARGET; `through_socket`: `--unix-socket` was given, so a `grpc://` target needs no port
/// (its host is the `:authority`).
fn parse_target(t: &str, through_socket: bool) -> Result<(ProbeSpec, Kind), String> {
    let bad = |why: &str| format!("bad target '{t}': {why}");
    if t.starts_with("unix:") || t.starts_with("unix-abstract:") {
        // gRPC's naming of a Unix socket: a connect check (send/expect apply, as to tcp://).
        let socket = prober::UnixSocket::parse(t).map_err(|e| bad(&e.to_string()))?;
        let spec = ProbeSpec::unix(socket).map_err(|e| bad(&e.to_string()))?;
        return Ok((spec, Kind::Tcp));
    }
    let Some((scheme, rest)) = t.split_once("://") else {
        return Err(bad(&format!(
            "expected http://HOST[:PORT][/PATH], https://..., tcp://HOST:PORT, grpc://HOST:PORT[/SERVICE], dns://SERVER[:PORT]/NAME, icmp://HOST, unix:///PATH or -- CMD [ARG...]{}",
            scheme_hint(t)
        )));
    };
    match scheme.to_ascii_lowercase().as_str() {
        scheme @ ("http" | "https") => {
            let spec = ProbeSpec::http(t).map_err(|e| bad(&e.to_string()))?;
            let kind = if scheme == "https" { Kind::Https } else { Kind::Http };
            Ok((spec, kind))
        }
        "tcp" => {
            let rest = rest.strip_suffix('/').unwrap_or(rest);
            let (host, port) = host_port(rest, "tcp").map_err(|e| bad(&e))?;
            let spec = ProbeSpec::tcp(host, port).map_err(|e| bad(&e.to_string()))?;
            Ok((spec, Kind::Tcp))
        }
        "grpc" => {
            // Everything after the first '/' is the service name, verbatim (none: the server).
            let (authority, service) = rest.split_once('/').unwrap_or((rest, ""));
            let (host, port) = match host_port(authority, "grpc") {
                // Through a socket the port names nothing: `grpc://localhost/SERVICE`.
                Err(_) if through_socket && !authority.contains(':') => (authority, 1),
                other => other.map_err(|e| bad(&e))?,
            };
            let spec = ProbeSpec::grpc(host, port, service).map_err(|e| bad(&e.to_string()))?;
            Ok((spec, Kind::Grpc))
        }
        "dns" => Ok((crate::kinds::dns_target(rest).map_err(|e| bad(&e))?, Kind::Dns)),
        "icmp" => Ok((crate::kinds::icmp_target(rest).map_err(|e| bad(&e))?, Kind::Icmp)),
        other => Err(bad(&format!(
            "unsupported scheme '{other}' (expected http, https, tcp, grpc, dns or icmp)"
        ))),
    }
}

/// For a target that starts with a scheme but not `://` (`gRPC:host:50051`, `tcp:/h:1`): what
/// was probably meant, as a hint to append to the message.
fn scheme_hint(t: &str) -> String {
    let Some((scheme, rest)) = t.split_once(':') else {
        return String::new();
    };
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https" | "tcp" | "grpc" | "dns" | "icmp") {
        return String::new();
    }
    format!("; did you mean '{scheme}://{}'?", rest.trim_start_matches('/'))
}

/// `HOST:PORT` or `[IPV6]:PORT` of a `SCHEME://` target, split by prober-core's one rule
/// ([`prober_core::split_host_port`], as `prober serve` splits its targets).
fn host_port<'a>(s: &'a str, scheme: &str) -> Result<(&'a str, i64), String> {
    use prober_core::HostPortError;
    let (host, port) = prober_core::split_host_port(s).map_err(|e| match e {
        _ if s.starts_with('[') => format!("expected {scheme}://[IPV6]:PORT"),
        HostPortError::TooManyColons => {
            format!("write IPv6 addresses in brackets: {scheme}://[::1]:PORT")
        }
        HostPortError::MissingPort => format!("missing port (expected {scheme}://HOST:PORT)"),
        other => format!("{other} (expected {scheme}://HOST:PORT)"),
    })?;
    let port: i64 =
        port.parse().map_err(|_| format!("invalid port '{port}' (expected 1 to 65535)"))?;
    Ok((host, port))
}

/// Runs the check, prints its line and returns the exit status.
pub fn run(args: &CheckArgs) -> Result<i32, Failure> {
    let started = Instant::now();
    let outcome = match run_probe(&args.spec)? {
        Ran::Done(o) => o,
        // The probe was cancelled (its command killed): end as the signal would have.
        Ran::Signal(sig) => return Ok(signals::reraise(sig)),
    };
    let elapsed = started.elapsed();
    let duration = if outcome.timings.total.is_zero() { elapsed } else { outcome.timings.total };
    let line = if args.json {
        json_line(&outcome, duration, has_output(&args.spec))
    } else {
        human_line(&outcome, duration)
    };
    let mut out = std::io::stdout().lock();
    // A closed stdout does not change the verdict: the exit status still tells it.
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    Ok(exit_status(outcome.result))
}

enum Ran {
    Done(Outcome),
    Signal(i32),
}

/// The probe as a one-shot run of the engine (the same machine as `prober::check`), with
/// SIGINT and SIGTERM watched so that an interrupted check still kills its command's process
/// group instead of leaving it behind.
fn run_probe(spec: &ProbeSpec) -> Result<Ran, Failure> {
    let signals = Signals::install()
        .map_err(|e| Failure::software(format!("cannot install signal handlers: {e}")))?;
    let mut engine =
        Engine::new().map_err(|e| Failure::software(format!("cannot start the engine: {e}")))?;
    // The outcome comes to this check's own completion, on this (the engine's) thread.
    let (done, outcome) = std::sync::mpsc::sync_channel(1);
    engine
        .submit_with(spec.clone(), 0, move |o| {
            let _ = done.send(o);
        })
        .map_err(|e| Failure::usage("check", e))?;
    loop {
        if let Ok(outcome) = outcome.try_recv() {
            return Ok(Ran::Done(*outcome));
        }
        if let Some(sig) = signals.take() {
            drop(engine);
            return Ok(Ran::Signal(sig));
        }
        signals
            .wait(engine.fd(), engine.timeout())
            .map_err(|e| Failure::software(format!("poll: {e}")))?;
        engine.step().map_err(|e| Failure::software(format!("engine: {e}")))?;
    }
}

fn has_output(spec: &ProbeSpec) -> bool {
    !matches!(spec.kind, ProbeKind::Tcp(_) | ProbeKind::Icmp(_))
}

pub fn exit_status(result: ProbeResult) -> i32 {
    match result {
        ProbeResult::Success | ProbeResult::Warning => 0,
        ProbeResult::Failure => EXIT_FAILURE,
        ProbeResult::Unknown => EXIT_UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::EXIT_USAGE;

    fn parse_args(v: &[&str]) -> Result<Option<CheckArgs>, Failure> {
        crate::check_flags::parse(Parser::new(v.iter().map(OsString::from).collect(), "check"))
    }

    #[test]
    fn targets() {
        let a = parse_args(&["tcp://127.0.0.1:80"]).unwrap().unwrap();
        assert!(matches!(&a.spec.kind, prober::ProbeKind::Tcp(t) if t.port == 80));
        let a = parse_args(&["tcp://[::1]:8080/"]).unwrap().unwrap();
        assert!(matches!(&a.spec.kind, prober::ProbeKind::Tcp(t) if t.host == "::1"));
        let a = parse_args(&["--timeout=2s", "http://h:1/x", "--json"]).unwrap().unwrap();
        assert!(a.json);
        assert_eq!(a.spec.timeout, Duration::from_secs(2));
        let a = parse_args(&["--env", "A=1", "--", "sh", "-c", "echo $(A)"]).unwrap().unwrap();
        assert!(
            matches!(&a.spec.kind, prober::ProbeKind::Exec(e) if e.argv.len() == 3 && e.env.len() == 1)
        );
    }

    fn grpc(a: &CheckArgs) -> &prober::GrpcSpec {
        match &a.spec.kind {
            ProbeKind::Grpc(g) => g,
            other => panic!("not gRPC: {other:?}"),
        }
    }

    fn http_tls(a: &CheckArgs) -> &TlsOptions {
        match &a.spec.kind {
            ProbeKind::Http(h) => h.tls(),
            other => panic!("not HTTP: {other:?}"),
        }
    }

    #[test]
    fn grpc_targets() {
        let a = parse_args(&["grpc://127.0.0.1:50051"]).unwrap().unwrap();
        let g = grpc(&a);
        assert_eq!(
            (g.host.as_str(), g.port, g.service.as_str(), &g.connect.tls),
            ("127.0.0.1", 50051, "", &None)
        );
        let a = parse_args(&["GRPC://[::1]:9/"]).unwrap().unwrap();
        assert_eq!((grpc(&a).host.as_str(), grpc(&a).service.as_str()), ("::1", ""));
        let a = parse_args(&["grpc://svc.local:9/my.pkg.Svc"]).unwrap().unwrap();
        assert_eq!(grpc(&a).service, "my.pkg.Svc");
        // --tls alone: TLS with the kubelet's options (no verification).
        let a = parse_args(&["--tls", "grpc://h:9"]).unwrap().unwrap();
        assert_eq!(grpc(&a).connect.tls, Some(TlsOptions::default()));
        let a = parse_args(&[
            "--tls",
            "--tls-ca=ca.pem",
            "--tls-server-name",
            "svc.example",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--tls-min-version",
            "1.3",
            "--tls-resumption",
            "grpc://h:9/s",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(
            grpc(&a).connect.tls,
            Some(TlsOptions {
                verify: TlsVerify::CaFile("ca.pem".into()),
                server_name: Some("svc.example".into()),
                client_cert: Some(("c.pem".into(), "k.pem".into())),
                min_version: Some(TlsVersion::Tls13),
                max_version: None,
                resumption: true,
            })
        );
        let a = parse_args(&["--tls", "--tls-verify", "grpc://h:9"]).unwrap().unwrap();
        assert_eq!(grpc(&a).connect.tls.as_ref().unwrap().verify, TlsVerify::SystemRoots);
    }

    #[test]
    fn https_tls_options() {
        let a = parse_args(&["https://h/"]).unwrap().unwrap();
        assert_eq!(http_tls(&a), &TlsOptions::default());
        // --tls on https:// changes nothing.
        let a = parse_args(&["--tls", "https://h/"]).unwrap().unwrap();
        assert_eq!(http_tls(&a), &TlsOptions::default());
        let a = parse_args(&["--tls-verify", "--tls-server-name=a.example", "https://h/"])
            .unwrap()
            .unwrap();
        assert_eq!(http_tls(&a).verify, TlsVerify::SystemRoots);
        assert_eq!(http_tls(&a).server_name.as_deref(), Some("a.example"));
        // Verify, against this CA (as curl and Go read the pair).
        let a = parse_args(&["--tls-verify", "--tls-ca", "ca.pem", "https://h/"]).unwrap().unwrap();
        assert_eq!(http_tls(&a).verify, TlsVerify::CaFile("ca.pem".into()));
        let a = parse_args(&["--tls-min-version", "TLSv1.2", "https://h/"]).unwrap().unwrap();
        assert_eq!(http_tls(&a).min_version, Some(TlsVersion::Tls12));
        let a = parse_args(&["--tls-max-version", "1.2", "https://h/"]).unwrap().unwrap();
        assert_eq!(http_tls(&a).max_version, Some(TlsVersion::Tls12));
    }

    #[test]
    fn usage_errors() {
        let cases: &[(&[&str], &str)] = &[
            (&["--nope", "http://h/"], "unknown option '--nope'"),
            (&[], "missing TARGET"),
            (&["h:80"], "bad target 'h:80'"),
            (&["tcp://h"], "missing port"),
            (&["tcp://h:0"], "invalid port 0"),
            (&["tcp://h:x"], "invalid port 'x'"),
            (&["tcp://::1:80"], "brackets"),
            (&["ftp://h/"], "unsupported scheme 'ftp'"),
            (&["http://h /"], "bad target"),
            (&["--timeout", "5", "http://h/"], "bad duration '5'"),
            (&["--timeout", "0s", "http://h/"], "--timeout: must be positive (got '0s')"),
            (&["--timeout", "25h", "http://h/"], "invalid timeout"),
            (&["gRPC:h:50051"], "did you mean 'grpc://h:50051'?"),
            (&["GRPC:/h:1/svc"], "did you mean 'grpc://h:1/svc'?"),
            (&["tcp:h:1"], "did you mean 'tcp://h:1'?"),
            (&["-H", "NoColon", "http://h/"], "bad header 'NoColon'"),
            (&["-H", "Bad Name: v", "http://h/"], "invalid HTTP header name"),
            (&["-H", "X: a\rb", "http://h/"], "invalid value for HTTP header"),
            (&["-H", "X: y", "tcp://h:1"], "applies to http"),
            (&["--env", "A=1", "http://h/"], "applies to command targets"),
            (&["--env", "A", "--", "true"], "bad --env 'A'"),
            (&["--redirects", "some", "http://h/"], "bad --redirects"),
            (&["--redirects", "none", "--", "true"], "applies to http"),
            (&["--namespaces-of", "x1", "--", "true"], "bad --namespaces-of 'x1'"),
            (&["--namespaces-of", "0", "--", "true"], "invalid PID 0 for namespacesOf"),
            (&["--namespaces-of", "1", "http://h/"], "applies to command targets"),
            (
                &["--exec-cgroup", "/sys/fs/cgroup/p", "http://h/"],
                "--exec-cgroup applies to command",
            ),
            (&["--exec-cgroup", "rel", "--", "true"], "invalid cgroup directory \"rel\""),
            (&["http://h/", "http://i/"], "unexpected argument"),
            (&["http://h/", "--", "true"], "not both"),
            (&["--"], "missing command"),
            (&["--timeout"], "needs a value"),
            (&["grpc://h"], "missing port (expected grpc://HOST:PORT)"),
            (&["grpc://h/svc"], "missing port (expected grpc://HOST:PORT)"),
            (&["grpc://h:0/svc"], "invalid port 0"),
            (&["grpc://::1:80"], "grpc://[::1]:PORT"),
            (&["grpc://h s:1"], "invalid host"),
            (&["-H", "X: y", "grpc://h:1"], "applies to http"),
            (&["--redirects", "none", "grpc://h:1"], "applies to http"),
            (&["--tls-ca", "c", "tcp://h:1"], "--tls-ca needs --tls or --starttls on tcp://"),
            (&["--starttls", "https://h/"], "--starttls applies to tcp:// targets only"),
            (
                &["--tls-ca", "ca.pem", "--", "true"],
                "--tls-ca applies to https://, grpc://, tcp:// and dns://",
            ),
            (&["--tls", "http://h/"], "not http:// (write https://"),
            (&["--tls-verify", "http://h/"], "--tls-verify applies"),
            (&["--tls-ca", "ca.pem", "grpc://h:1"], "--tls-ca needs --tls"),
            (&["--tls-server-name", "x", "grpc://h:1"], "needs --tls"),
            (&["--tls", "--tls-cert", "c", "grpc://h:1"], "--tls-cert needs --tls-key"),
            (&["--tls-key", "k", "https://h/"], "--tls-key needs --tls-cert"),
            (&["--tls-min-version", "1.1", "https://h/"], "bad --tls-min-version '1.1'"),
            (&["--tls-max-version", "1.4", "https://h/"], "bad --tls-max-version '1.4'"),
            (
                &["--tls-min-version", "1.3", "--tls-max-version", "1.2", "https://h/"],
                "minimum TLS version 1.3 is above the maximum 1.2",
            ),
            (&["--tls-server-name", "a b", "https://h/"], "invalid server name"),
            (&["--tls-ca=", "https://h/"], "CA file: empty path"),
            (&["--tls-ca"], "needs a value"),
        ];
        for (argv, want) in cases {
            let e = parse_args(argv).unwrap_err();
            assert_eq!(e.code, EXIT_USAGE, "{argv:?}");
            assert!(e.message.contains(want), "{argv:?}: {}", e.message);
            assert!(!e.message.contains('\n'), "{argv:?}");
        }
    }

    #[test]
    fn header_values() {
        assert_eq!(parse_header("User-Agent:"), Ok(("User-Agent".into(), String::new())));
        assert_eq!(parse_header("X-A:  b c "), Ok(("X-A".into(), "b c".into())));
        assert_eq!(parse_header("X:a:b"), Ok(("X".into(), "a:b".into())));
        assert!(parse_header(": v").is_err());
    }
}
