//! The prepared HTTP and gRPC plans of the last few one-shot specs, so a spec submitted again
//! and again (a check over a kept connection, `prober serve`'s module for one target) is
//! validated and prepared once, as a worker's spec is at `set_probe`, instead of on every
//! submit.

use std::sync::Arc;
use std::time::Duration;

use prober_core::{ProbeKind, ProbeSpec};
use prober_grpc::GrpcPlan;
use prober_http::HttpPlan;

use crate::EngineError;
use crate::hostrun::refuse_submit;
use crate::probe::{AnyProbe, PreparedSpec};

/// How many plans are kept: a caller that alternates between a few specs still hits, and a
/// miss (a new spec each time) costs at most this many comparisons, most of which end at the
/// first field that differs (the URL).
const PLANS: usize = 8;

/// One validated spec's plan, with the two fields of its spec that the plan does not hold.
struct Entry {
    plan: Plan,
    timeout: Duration,
    output_limit: usize,
}

/// A plan of one of the kinds kept.
enum Plan {
    Http(Arc<HttpPlan>),
    Grpc(Arc<GrpcPlan>),
}

impl Plan {
    /// Whether this plan was made of `kind`.
    fn made_of(&self, kind: &ProbeKind) -> bool {
        match (self, kind) {
            (Plan::Http(p), ProbeKind::Http(h)) => p.spec() == h,
            (Plan::Grpc(p), ProbeKind::Grpc(g)) => p.spec() == g,
            _ => false,
        }
    }
}

/// The plans of the last [`PLANS`] validated HTTP and gRPC specs submitted as one-shot checks, most
/// recent first. A plan is a pure function of its spec (nothing in it is read from a file or
/// the environment, and a run never changes it), so an equal spec's plan is the plan that
/// preparing the spec again would make: a hit changes no semantic.
#[derive(Default)]
pub(crate) struct PlanCache {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for PlanCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Specs can carry secrets (a header's credentials): the count says enough.
        f.debug_struct("PlanCache").field("plans", &self.entries.len()).finish()
    }
}

impl PlanCache {
    /// The machine for a one-shot run of `spec`, validated here unless an equal spec was
    /// (its plan is then reused). The errors are [`Engine::submit`](crate::Engine::submit)'s.
    pub(crate) fn probe(&mut self, spec: ProbeSpec) -> Result<AnyProbe, EngineError> {
        if let Some(p) = self.probe_for(&spec) {
            return Ok(p);
        }
        spec.validate()?;
        refuse_submit(&spec)?;
        Ok(self.probe_validated(spec))
    }

    /// The machine for a one-shot run of a validated `spec` (a [`Handle`](crate::Handle)'s
    /// submit validated it on the caller's thread).
    pub(crate) fn probe_validated(&mut self, spec: ProbeSpec) -> AnyProbe {
        if let Some(p) = self.probe_for(&spec) {
            return p;
        }
        if !matches!(spec.kind, ProbeKind::Http(_) | ProbeKind::Grpc(_)) {
            return AnyProbe::from_spec(spec);
        }
        let (timeout, output_limit) = (spec.timeout, spec.output_limit);
        let plan = match PreparedSpec::new(spec) {
            PreparedSpec::Http { plan, .. } => Plan::Http(plan),
            PreparedSpec::Grpc { plan, .. } => Plan::Grpc(plan),
            _ => unreachable!("HTTP and gRPC specs are prepared as plans"),
        };
        if self.entries.len() == PLANS {
            self.entries.pop();
        }
        self.entries.insert(0, Entry { plan, timeout, output_limit });
        self.probe_of(0)
    }

    /// The machine for a run of a kept plan whose spec equals `spec`, the plan moved to the
    /// front; `None` when none is kept (or `spec` is of another kind).
    fn probe_for(&mut self, spec: &ProbeSpec) -> Option<AnyProbe> {
        if !matches!(spec.kind, ProbeKind::Http(_) | ProbeKind::Grpc(_)) {
            return None;
        }
        let i = self.entries.iter().position(|e| {
            e.timeout == spec.timeout
                && e.output_limit == spec.output_limit
                && e.plan.made_of(&spec.kind)
        })?;
        // Most recent first: a caller with one spec compares once.
        self.entries[..=i].rotate_right(1);
        Some(self.probe_of(0))
    }

    fn probe_of(&self, i: usize) -> AnyProbe {
        let e = &self.entries[i];
        let (timeout, output_limit) = (e.timeout, e.output_limit);
        AnyProbe::prepared(&match &e.plan {
            Plan::Http(plan) => PreparedSpec::Http { plan: plan.clone(), timeout, output_limit },
            Plan::Grpc(plan) => PreparedSpec::Grpc { plan: plan.clone(), timeout, output_limit },
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn http(url: &str) -> ProbeSpec {
        ProbeSpec::http(url).unwrap()
    }

    /// A plan serves only a spec equal to the one it was made of, timeout and output limit
    /// included; the cache holds at most [`PLANS`] plans.
    #[test]
    fn a_plan_serves_only_an_equal_spec() {
        let mut cache = PlanCache::default();
        let a = http("http://127.0.0.1:1/a");
        cache.probe(a.clone()).unwrap();
        cache.probe(a.clone()).unwrap();
        assert_eq!(cache.entries.len(), 1, "an equal spec reuses the plan");
        cache.probe(a.clone().with_timeout(Duration::from_secs(7)).unwrap()).unwrap();
        let mut other_header = a.clone();
        other_header.add_header("X-Probe", "1").unwrap();
        cache.probe(other_header.clone()).unwrap();
        assert_eq!(cache.entries.len(), 3, "another timeout or header is another plan");
        assert!(cache.entries[0].plan.made_of(&other_header.kind));
        assert!(!cache.entries[1].plan.made_of(&other_header.kind));
        for i in 0..2 * PLANS {
            cache.probe(http(&format!("http://127.0.0.1:1/{i}"))).unwrap();
        }
        assert_eq!(cache.entries.len(), PLANS);
        // Other kinds are built from their spec and kept nowhere.
        cache.probe(ProbeSpec::tcp("127.0.0.1", 1).unwrap()).unwrap();
        assert_eq!(cache.entries.len(), PLANS);
    }

    /// gRPC specs are kept as HTTP ones are: an equal spec reuses its plan, another service
    /// (or timeout) is another plan, and an HTTP plan never serves a gRPC spec.
    #[test]
    fn grpc_plans_serve_only_an_equal_spec() {
        let mut cache = PlanCache::default();
        let a = ProbeSpec::grpc("127.0.0.1", 1, "").unwrap();
        cache.probe(http("http://127.0.0.1:1/")).unwrap();
        cache.probe(a.clone()).unwrap();
        cache.probe(a.clone()).unwrap();
        assert_eq!(cache.entries.len(), 2, "an equal spec reuses the plan");
        assert!(cache.entries[0].plan.made_of(&a.kind));
        cache.probe(ProbeSpec::grpc("127.0.0.1", 1, "other").unwrap()).unwrap();
        cache.probe(a.clone().with_timeout(Duration::from_secs(7)).unwrap()).unwrap();
        assert_eq!(cache.entries.len(), 4, "another service or timeout is another plan");
        assert!(matches!(cache.probe(a).unwrap(), AnyProbe::Grpc(_)));
        assert_eq!(cache.entries.len(), 4);
    }

    /// A spec that fails validation is refused, and is not kept.
    #[test]
    fn an_invalid_spec_is_refused_and_not_kept() {
        let mut cache = PlanCache::default();
        let mut bad = http("http://127.0.0.1:1/");
        bad.output_limit = 0;
        assert!(cache.probe(bad).is_err());
        assert!(cache.entries.is_empty());
    }
}
