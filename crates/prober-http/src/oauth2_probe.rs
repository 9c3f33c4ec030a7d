//! [`OAuth2Probe`]: an HTTP probe whose spec has [`prober_core::OAuth2`] credentials, as one
//! machine: the token exchange (one [`HttpProbe`] of the token request, then a second with the
//! credentials in the form when the first fails, as golang.org/x/oauth2 probes the "auth
//! style"), then the probe's own request with the token, all within the run's one deadline.
//! The token is asked for on every run: blackbox_exporter builds a client per probe, so it
//! caches none either.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use prober_core::{OAuth2, OAuth2AuthStyle, Outcome, Reason};
use prober_io::{Answer, Ctx, Machine, Ready, Step};

use crate::oauth2::{read_token, token_request};
use crate::redirect::error_op;
use crate::{HttpPlan, HttpProbe};

/// Where a run is.
#[derive(Debug)]
enum Phase {
    Idle,
    /// Asking for the token, the credentials placed as `style` says.
    Token {
        probe: Box<HttpProbe>,
        style: OAuth2AuthStyle,
    },
    /// The probe's own request, with the token.
    Request(Box<HttpProbe>),
    Done,
}

/// An HTTP probe with OAuth 2 client credentials, as a [`Machine`] (see the module docs).
#[derive(Debug)]
pub struct OAuth2Probe {
    plan: Arc<HttpPlan>,
    oauth2: Arc<OAuth2>,
    timeout: Duration,
    output_limit: usize,
    started: Option<Instant>,
    deadline: Option<Instant>,
    phase: Phase,
}

impl OAuth2Probe {
    /// A run of the plan's spec within `timeout`, keeping at most `output_limit` bytes of the
    /// probed body; `None` when the spec has no [`prober_core::HttpSpec::oauth2`] (a plain
    /// [`HttpProbe`] runs it).
    pub fn new(plan: Arc<HttpPlan>, timeout: Duration, output_limit: usize) -> Option<OAuth2Probe> {
        let oauth2 = plan.spec().oauth2.clone()?;
        Some(OAuth2Probe {
            plan,
            oauth2,
            timeout,
            output_limit,
            started: None,
            deadline: None,
            phase: Phase::Idle,
        })
    }

    fn remaining(&self, now: Instant) -> Duration {
        self.deadline.map_or(self.timeout, |d| d.saturating_duration_since(now))
    }

    /// Starts the token request with the credentials placed as `style` says.
    fn ask_token(&mut self, cx: &mut Ctx<'_>, style: OAuth2AuthStyle) -> Step {
        let spec = self.plan.spec();
        let user_agent = spec
            .headers
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case("User-Agent"))
            .map_or(spec.user_agent.as_str(), |(_, v)| v.as_str());
        let token_spec = match token_request(&self.oauth2, style, user_agent, spec.netns.as_ref()) {
            Ok(s) => s,
            Err(e) => return self.fail(cx, Reason::None, &format!("oauth2: token request: {e}")),
        };
        let prober_core::ProbeKind::Http(h) = token_spec.kind else {
            return self.fail(cx, Reason::Internal, "oauth2: the token request is not HTTP");
        };
        let mut probe =
            Box::new(HttpProbe::new(&h, self.remaining(cx.now), token_spec.output_limit));
        let step = probe.start(cx);
        self.phase = Phase::Token { probe, style };
        self.after(cx, step)
    }

    /// What a step of the current phase means for the run.
    fn after(&mut self, cx: &mut Ctx<'_>, step: Step) -> Step {
        let Step::Done(o) = step else { return step };
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Token { style, .. } => match read_token(&o) {
                Ok(auth) => {
                    let mut spec = self.plan.spec().clone();
                    spec.headers.retain(|(n, _)| !n.eq_ignore_ascii_case("Authorization"));
                    spec.headers.push(("Authorization".into(), auth.expose().to_string()));
                    let plan = Arc::new(HttpPlan::new(spec));
                    let mut probe = Box::new(HttpProbe::with_plan(
                        plan,
                        self.remaining(cx.now),
                        self.output_limit,
                    ));
                    let step = probe.start(cx);
                    self.phase = Phase::Request(probe);
                    self.after(cx, step)
                }
                // golang.org/x/oauth2 asks again with the credentials in the form after any
                // failure of the first way, time permitting.
                Err(_)
                    if style == OAuth2AuthStyle::InHeader
                        && self.deadline.is_some_and(|d| cx.now < d) =>
                {
                    self.ask_token(cx, OAuth2AuthStyle::InParams)
                }
                Err((reason, why)) => self.fail(cx, reason, &why),
            },
            Phase::Request(_) => Step::Done(self.shifted(cx.now, o)),
            Phase::Idle | Phase::Done => Step::Done(o),
        }
    }

    /// The run's failure before its request: Go's client error on the probed URL
    /// (`Get "<url>": oauth2: ...`).
    fn fail(&mut self, cx: &mut Ctx<'_>, reason: Reason, why: &str) -> Step {
        self.cancel(cx);
        let spec = self.plan.spec();
        let message = format!("{} \"{}\": {why}", error_op(&spec.method), spec.url);
        let mut o = Outcome::failure(reason, message);
        o.timings.total =
            self.started.map_or(Duration::ZERO, |s| cx.now.saturating_duration_since(s));
        Step::Done(o)
    }

    /// The request's outcome with its timings from the start of the run (the token exchange
    /// before it included).
    fn shifted(&self, now: Instant, mut o: Outcome) -> Outcome {
        let Some(started) = self.started else { return o };
        let offset = now.saturating_duration_since(started).saturating_sub(o.timings.total);
        let t = &mut o.timings;
        for phase in [&mut t.resolve, &mut t.connect, &mut t.tls, &mut t.first_byte] {
            *phase = phase.map(|d| d + offset);
        }
        t.total += offset;
        o
    }

    fn current(&mut self) -> Option<&mut HttpProbe> {
        match &mut self.phase {
            Phase::Token { probe, .. } | Phase::Request(probe) => Some(probe),
            Phase::Idle | Phase::Done => None,
        }
    }
}

impl Machine for OAuth2Probe {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        self.started = Some(cx.now);
        self.deadline = Some(cx.now + self.timeout);
        self.ask_token(cx, OAuth2AuthStyle::InHeader)
    }

    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        let Some(p) = self.current() else { return Step::Pending };
        let step = p.ready(cx, sub, ready);
        self.after(cx, step)
    }

    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        let Some(p) = self.current() else { return Step::Pending };
        let step = p.resolved(cx, addrs);
        self.after(cx, step)
    }

    fn job_done(&mut self, cx: &mut Ctx<'_>, answer: io::Result<Answer>) -> Step {
        let Some(p) = self.current() else { return Step::Pending };
        let step = p.job_done(cx, answer);
        self.after(cx, step)
    }

    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        let Some(p) = self.current() else { return Step::Pending };
        let step = p.timer(cx);
        self.after(cx, step)
    }

    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        let Some(p) = self.current() else { return Step::Pending };
        let step = p.resume(cx);
        self.after(cx, step)
    }

    fn wake_at(&self) -> Option<Instant> {
        match &self.phase {
            Phase::Token { probe, .. } | Phase::Request(probe) => probe.wake_at(),
            Phase::Idle | Phase::Done => None,
        }
    }

    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        if let Some(p) = self.current() {
            p.cancel(cx);
        }
        self.phase = Phase::Done;
    }
}
