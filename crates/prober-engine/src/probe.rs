//! One value that can be any probe machine, so in-flight probes need no boxing.

use std::io;
use std::net::SocketAddr;
use std::time::Instant;

use prober_core::{Outcome, ProbeKind, ProbeSpec};
use prober_exec::ExecProbe;
use prober_grpc::GrpcProbe;
use prober_http::HttpProbe;
use prober_io::{Ctx, Machine, Ready, Step};
use prober_tcp::TcpProbe;

/// The machine for one run of `spec`.
#[derive(Debug)]
pub enum AnyProbe {
    Tcp(TcpProbe),
    Http(Box<HttpProbe>),
    Exec(ExecProbe),
    Grpc(Box<GrpcProbe>),
}

impl AnyProbe {
    pub fn new(spec: &ProbeSpec) -> AnyProbe {
        match &spec.kind {
            ProbeKind::Tcp(t) => AnyProbe::Tcp(TcpProbe::new(t, spec.timeout)),
            ProbeKind::Http(h) => {
                AnyProbe::Http(Box::new(HttpProbe::new(h, spec.timeout, spec.output_limit)))
            }
            ProbeKind::Exec(e) => AnyProbe::Exec(ExecProbe::new(e, spec.timeout, spec.output_limit)),
            ProbeKind::Grpc(g) => AnyProbe::Grpc(Box::new(GrpcProbe::new(g, spec.timeout))),
        }
    }

    fn inner(&mut self) -> &mut dyn Machine {
        match self {
            AnyProbe::Tcp(m) => m,
            AnyProbe::Http(m) => m.as_mut(),
            AnyProbe::Exec(m) => m,
            AnyProbe::Grpc(m) => m.as_mut(),
        }
    }
}

/// Runs `spec` once on the calling thread and returns its outcome: the engine's one-shot
/// path with a private poll, for blocking callers.
pub fn check(spec: &ProbeSpec) -> Outcome {
    if let Err(e) = spec.validate() {
        return Outcome::unknown(prober_core::Reason::None, format!("invalid probe: {e}"));
    }
    prober_io::run_to_completion(&mut AnyProbe::new(spec))
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
    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.inner().timer(cx)
    }
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.inner().resume(cx)
    }
    fn wake_at(&self) -> Option<Instant> {
        match self {
            AnyProbe::Tcp(m) => m.wake_at(),
            AnyProbe::Http(m) => m.wake_at(),
            AnyProbe::Exec(m) => m.wake_at(),
            AnyProbe::Grpc(m) => m.wake_at(),
        }
    }
    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.inner().cancel(cx)
    }
}
