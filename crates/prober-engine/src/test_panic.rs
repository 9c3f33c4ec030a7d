//! A probe that panics on purpose, for the fault-isolation tests of every surface (Rust, C, Go).
//! Compiled only with the `test-panic` feature, which no shipped build enables.
//!
//! An exec spec whose `argv[0]` is [`PROGRAM`] becomes this probe: `argv[1]` says where it
//! panics (`start`, `ready` or `timer`) and the rest is a real command that runs until then, so
//! the panic happens while the run holds a child, a pipe and a pidfd: the isolation must release
//! them as a cancelled run would.

use std::io;
use std::net::SocketAddr;
use std::time::Instant;

use prober_core::{ProbeKind, ProbeSpec};
use prober_exec::ExecProbe;
use prober_io::{Ctx, Machine, Ready, Step};

/// The `argv[0]` that asks for a panicking probe.
pub const PROGRAM: &str = "prober-test-panic";

/// Where the probe panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Start,
    Ready,
    Timer,
}

/// A real exec run that panics at one chosen call.
#[derive(Debug)]
pub struct PanickingProbe {
    inner: ExecProbe,
    at: At,
}

impl PanickingProbe {
    /// The panicking probe `spec` asks for, if it asks for one.
    pub fn from_spec(spec: &ProbeSpec) -> Option<PanickingProbe> {
        let ProbeKind::Exec(e) = &spec.kind else { return None };
        if e.argv.first().map(String::as_str) != Some(PROGRAM) {
            return None;
        }
        let at = match e.argv.get(1).map(String::as_str) {
            Some("ready") => At::Ready,
            Some("timer") => At::Timer,
            _ => At::Start,
        };
        let mut inner = e.clone();
        inner.argv.drain(..2.min(inner.argv.len()));
        if inner.argv.is_empty() {
            inner.argv.push("/bin/true".into());
        }
        Some(PanickingProbe { inner: ExecProbe::new(&inner, spec.timeout, spec.output_limit), at })
    }

    fn check(&self, here: At) {
        if self.at == here {
            panic!("deliberate test panic in {here:?}");
        }
    }
}

impl Machine for PanickingProbe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        // The command is started first, so that a panic at start also leaves a child to reap.
        let step = self.inner.start(cx);
        self.check(At::Start);
        step
    }
    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        self.check(At::Ready);
        self.inner.ready(cx, sub, ready)
    }
    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        self.inner.resolved(cx, addrs)
    }
    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.check(At::Timer);
        self.inner.timer(cx)
    }
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.inner.resume(cx)
    }
    fn wake_at(&self) -> Option<Instant> {
        self.inner.wake_at()
    }
    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.inner.cancel(cx)
    }
}
