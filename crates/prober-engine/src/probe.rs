//! One value that can be any probe machine, so in-flight probes need no boxing.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeKind, ProbeSpec};
#[cfg(feature = "dns")]
use prober_dns::DnsProbe;
use prober_exec::ExecProbe;
use prober_grpc::{GrpcPlan, GrpcProbe};
use prober_http::{HttpPlan, HttpProbe, OAuth2Probe};
use prober_icmp::IcmpProbe;
use prober_io::{Answer, Ctx, Machine, Ready, Step};
use prober_tcp::{TcpProbe, TlsTcpProbe};
use prober_transport::TlsSessions;

use crate::hostrun::HostRunProbe;

/// The machine for one run of `spec`.
#[derive(Debug)]
pub enum AnyProbe {
    /// A TCP probe's run.
    Tcp(TcpProbe),
    /// A TCP probe with TLS or STARTTLS (boxed: rare, and its TLS state is large).
    TcpTls(Box<TlsTcpProbe>),
    /// An HTTP(S) probe's run (boxed: its machine is the largest).
    Http(Box<HttpProbe>),
    /// An HTTP(S) probe with OAuth 2 credentials: the token exchange, then the request.
    HttpOAuth2(Box<OAuth2Probe>),
    /// An exec probe's run.
    Exec(ExecProbe),
    /// A gRPC health probe's run (boxed, as HTTP).
    Grpc(Box<GrpcProbe>),
    /// A DNS probe's run (boxed: its spec's checks travel with it).
    #[cfg(feature = "dns")]
    Dns(Box<DnsProbe>),
    /// A host-run probe's run: the host performs it (see [`crate::Engine::complete_run`]).
    HostRun(HostRunProbe),
    /// An ICMP echo probe's run (boxed: its buffer and statistics are not small).
    Icmp(Box<IcmpProbe>),
    /// A kind of probe this engine does not know: [`ProbeKind`] may grow, and a newer
    /// `prober-core` can bring a kind that this build has no machine for.
    Unsupported(UnsupportedProbe),
    /// A real exec run that panics on purpose at a chosen call (tests of fault isolation).
    #[cfg(feature = "test-panic")]
    Panicking(Box<crate::test_panic::PanickingProbe>),
}

/// A spec made ready once for all the runs it will have (a worker's, at `set_probe`): what
/// every run of an HTTP probe shares (URL, headers, the request bytes) is prepared here and
/// shared, so a run copies none of it. Other kinds build their machine from the spec, which
/// costs no allocation for an IP literal (TCP) or is dwarfed by the run itself (exec, gRPC).
/// Both are held by pointer: a target stores three of these inline, used or not.
#[derive(Debug)]
pub enum PreparedSpec {
    /// An HTTP probe: its request prepared once.
    Http {
        /// The URL, headers and request bytes every run shares.
        plan: Arc<HttpPlan>,
        /// The spec's timeout.
        timeout: Duration,
        /// The spec's output limit.
        output_limit: usize,
    },
    /// A plain TCP probe (no TLS, no STARTTLS), the most numerous: its own spec only, without
    /// the room of the largest kind a whole [`ProbeSpec`] takes (296 bytes against 504 at a
    /// million targets, `docs/benchmarks.md`).
    Tcp {
        /// The host, port and connection options every run shares.
        spec: Box<prober_core::TcpSpec>,
        /// The spec's timeout.
        timeout: Duration,
    },
    /// A TCP or DNS probe over TLS whose options ask for resumption: the spec, and the
    /// TLS sessions its runs resume from and keep (an HTTP or gRPC probe's are in its plan).
    Resuming {
        /// The spec, each run building its machine from it.
        spec: Box<ProbeSpec>,
        /// The sessions of this target's runs, and of no one else's.
        sessions: Arc<TlsSessions>,
    },
    /// A gRPC health probe: its plan (target, address text, request parts), shared by its runs
    /// as an HTTP probe's is.
    Grpc {
        /// The plan every run shares.
        plan: Arc<GrpcPlan>,
        /// The spec's timeout.
        timeout: Duration,
        /// The spec's output limit.
        output_limit: usize,
    },
    /// Any other kind: the spec itself, each run building its machine from it.
    Other(Box<ProbeSpec>),
}

impl PreparedSpec {
    /// Prepares `spec` for all its runs.
    pub fn new(spec: ProbeSpec) -> PreparedSpec {
        let ProbeSpec { kind, timeout, output_limit } = spec;
        match kind {
            ProbeKind::Http(h) => {
                PreparedSpec::Http { plan: Arc::new(HttpPlan::new(h)), timeout, output_limit }
            }
            ProbeKind::Tcp(t) if t.connect.tls.is_none() && !t.has_starttls() => {
                PreparedSpec::Tcp { spec: Box::new(t), timeout }
            }
            ProbeKind::Grpc(g) => {
                let sessions = TlsSessions::for_options(g.connect.tls.as_ref());
                let plan = Arc::new(GrpcPlan::new(&g).with_tls_sessions(sessions));
                PreparedSpec::Grpc { plan, timeout, output_limit }
            }
            kind => {
                let spec = Box::new(ProbeSpec { kind, timeout, output_limit });
                match TlsSessions::for_options(spec.connect_options().and_then(|c| c.tls.as_ref()))
                {
                    Some(sessions) => PreparedSpec::Resuming { spec, sessions },
                    None => PreparedSpec::Other(spec),
                }
            }
        }
    }
}

impl AnyProbe {
    /// The machine for one run of a prepared spec.
    pub fn prepared(spec: &PreparedSpec) -> AnyProbe {
        match spec {
            PreparedSpec::Http { plan, timeout, output_limit } => {
                match OAuth2Probe::new(plan.clone(), *timeout, *output_limit) {
                    Some(p) => AnyProbe::HttpOAuth2(Box::new(p)),
                    None => AnyProbe::Http(Box::new(HttpProbe::with_plan(
                        plan.clone(),
                        *timeout,
                        *output_limit,
                    ))),
                }
            }
            PreparedSpec::Tcp { spec, timeout } => AnyProbe::Tcp(TcpProbe::new(spec, *timeout)),
            PreparedSpec::Resuming { spec, sessions } => {
                AnyProbe::new(spec).with_tls_sessions(sessions)
            }
            PreparedSpec::Grpc { plan, timeout, .. } => {
                AnyProbe::Grpc(Box::new(GrpcProbe::with_plan(plan.clone(), *timeout)))
            }
            PreparedSpec::Other(spec) => AnyProbe::new(spec),
        }
    }

    /// The machine, resuming TLS sessions from `sessions` (the kinds that dial TLS).
    fn with_tls_sessions(self, sessions: &Arc<TlsSessions>) -> AnyProbe {
        let sessions = Some(sessions.clone());
        match self {
            AnyProbe::TcpTls(p) => AnyProbe::TcpTls(Box::new(p.with_tls_sessions(sessions))),
            #[cfg(feature = "dns")]
            AnyProbe::Dns(p) => AnyProbe::Dns(Box::new(p.with_tls_sessions(sessions))),
            other => other,
        }
    }

    /// The machine for one run of a spec that is not needed afterwards (a one-shot probe):
    /// the HTTP parts are moved into it rather than copied.
    pub fn from_spec(spec: ProbeSpec) -> AnyProbe {
        match spec.kind {
            ProbeKind::Http(_) => AnyProbe::prepared(&PreparedSpec::new(spec)),
            _ => AnyProbe::new(&spec),
        }
    }

    /// The machine for one run of `spec`, copying from it what the run needs.
    pub fn new(spec: &ProbeSpec) -> AnyProbe {
        #[cfg(feature = "test-panic")]
        if let Some(p) = crate::test_panic::PanickingProbe::from_spec(spec) {
            return AnyProbe::Panicking(Box::new(p));
        }
        match &spec.kind {
            ProbeKind::Tcp(t) if t.connect.tls.is_some() || t.has_starttls() => {
                AnyProbe::TcpTls(Box::new(TlsTcpProbe::new(t, spec.timeout)))
            }
            ProbeKind::Tcp(t) => AnyProbe::Tcp(TcpProbe::new(t, spec.timeout)),
            ProbeKind::Http(h) if h.oauth2.is_some() => {
                AnyProbe::prepared(&PreparedSpec::new(spec.clone()))
            }
            ProbeKind::Http(h) => {
                AnyProbe::Http(Box::new(HttpProbe::new(h, spec.timeout, spec.output_limit)))
            }
            ProbeKind::Exec(e) => {
                AnyProbe::Exec(ExecProbe::new(e, spec.timeout, spec.output_limit))
            }
            ProbeKind::Grpc(g) => AnyProbe::Grpc(Box::new(GrpcProbe::new(g, spec.timeout))),
            // A validated spec always converts; one changed field by field and not validated
            // again is the unsupported probe's Unknown rather than a panic.
            #[cfg(feature = "dns")]
            ProbeKind::Dns(d) => match prober_dns::DnsSpec::from_core(d) {
                Ok(d) => AnyProbe::Dns(Box::new(DnsProbe::new(d, spec.timeout))),
                Err(_) => AnyProbe::Unsupported(UnsupportedProbe),
            },
            ProbeKind::HostRun(h) => {
                AnyProbe::HostRun(HostRunProbe::new(h, spec.timeout, spec.output_limit))
            }
            ProbeKind::Icmp(i) => AnyProbe::Icmp(Box::new(IcmpProbe::new(i, spec.timeout))),
            _ => AnyProbe::Unsupported(UnsupportedProbe),
        }
    }

    fn inner(&mut self) -> &mut dyn Machine {
        match self {
            AnyProbe::Tcp(m) => m,
            AnyProbe::TcpTls(m) => m.as_mut(),
            AnyProbe::Http(m) => m.as_mut(),
            AnyProbe::HttpOAuth2(m) => m.as_mut(),
            AnyProbe::Exec(m) => m,
            AnyProbe::Grpc(m) => m.as_mut(),
            #[cfg(feature = "dns")]
            AnyProbe::Dns(m) => m.as_mut(),
            AnyProbe::HostRun(m) => m,
            AnyProbe::Icmp(m) => m.as_mut(),
            AnyProbe::Unsupported(m) => m,
            #[cfg(feature = "test-panic")]
            AnyProbe::Panicking(m) => m.as_mut(),
        }
    }
}

/// The run of a probe kind this engine has no machine for: it ends when it starts, Unknown
/// with reason `unsupported`, as a probe needing a feature the build lacks does.
#[derive(Debug)]
pub struct UnsupportedProbe;

impl Machine for UnsupportedProbe {
    fn start(&mut self, _: &mut Ctx<'_>) -> Step {
        Step::Done(Outcome::unknown(
            prober_core::Reason::Unsupported,
            "this build of the engine does not support this kind of probe",
        ))
    }
    fn ready(&mut self, _: &mut Ctx<'_>, _: usize, _: Ready) -> Step {
        Step::Pending
    }
    fn timer(&mut self, _: &mut Ctx<'_>) -> Step {
        Step::Pending
    }
    fn wake_at(&self) -> Option<Instant> {
        None
    }
    fn cancel(&mut self, _: &mut Ctx<'_>) {}
}

/// Runs `spec` once on the calling thread and returns its outcome: the engine's one-shot
/// path with a private poll, for blocking callers. A host-run probe has no host here: it is
/// Unknown with reason `unsupported` at once.
///
/// A panic inside the probe's machine ends the run as Unknown with reason `internal`, as in the
/// engine; the machine is dropped, which closes its descriptors and kills its child.
pub fn check(spec: &ProbeSpec) -> Outcome {
    if let Err(e) = spec.validate() {
        return Outcome::unknown(prober_core::Reason::None, format!("invalid probe: {e}"));
    }
    if let ProbeKind::HostRun(_) = spec.kind {
        return crate::hostrun::no_host_outcome();
    }
    let mut probe = AnyProbe::new(spec);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        prober_io::run_to_completion(&mut probe)
    }));
    run.unwrap_or_else(|payload| {
        drop(probe);
        panicked(payload.as_ref())
    })
}

/// The outcome of a run whose machine panicked: Unknown, reason `internal`, with the panic's
/// text (a `&str` or `String` payload; other payloads are not printable).
pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> Outcome {
    let text = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic with no message");
    Outcome::unknown(
        prober_core::Reason::Internal,
        format!("internal error: the probe panicked: {text}"),
    )
}

impl Machine for AnyProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.inner().start(cx)
    }
    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        self.inner().ready(cx, sub, ready)
    }
    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        self.inner().resolved(cx, addrs)
    }
    fn job_done(&mut self, cx: &mut Ctx<'_>, answer: io::Result<Answer>) -> Step {
        self.inner().job_done(cx, answer)
    }
    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.inner().timer(cx)
    }
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.inner().resume(cx)
    }
    fn wake_at(&self) -> Option<Instant> {
        match self {
            AnyProbe::Tcp(m) => m.wake_at(),
            AnyProbe::TcpTls(m) => m.wake_at(),
            AnyProbe::Http(m) => m.wake_at(),
            AnyProbe::HttpOAuth2(m) => m.wake_at(),
            AnyProbe::Exec(m) => m.wake_at(),
            AnyProbe::Grpc(m) => m.wake_at(),
            #[cfg(feature = "dns")]
            AnyProbe::Dns(m) => m.wake_at(),
            AnyProbe::HostRun(m) => m.wake_at(),
            AnyProbe::Icmp(m) => m.wake_at(),
            AnyProbe::Unsupported(m) => m.wake_at(),
            #[cfg(feature = "test-panic")]
            AnyProbe::Panicking(m) => m.wake_at(),
        }
    }
    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.inner().cancel(cx)
    }
}
