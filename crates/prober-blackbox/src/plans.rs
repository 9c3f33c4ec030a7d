//! The checks of the module and target pairs `/probe` was last asked for, validated and
//! prepared ([`prober::CheckPlan`]): Prometheus asks for the same pairs at every scrape, and a
//! `/probe` of a pair kept here builds no spec (the module's template cloned, the target's URL
//! parsed, the spec validated and its request written: about a fifth of the user-space work of
//! a `/probe`, by callgrind).
//!
//! A spec is a pure function of the module, the target, the `hostname` parameter and the
//! timeout (nothing in it is read from a file, the clock or the resolver, and a run never
//! changes it), so a kept plan is the plan the request would have built: a hit changes nothing
//! a client can see. Plans are kept for one module set: a reload makes a new set, and the
//! plans of the old one are dropped at the next `/probe`.
//!
//! Clients choose targets, so what is kept is bounded whatever they ask: at most
//! [`MAX_PLANS`] plans, one in each slot of a table that a key's hash picks (a new plan takes
//! its slot from the one there), and none for a target (with its `hostname`) longer than
//! [`MAX_KEPT_TARGET`] bytes. A table of slots rather than a map: it takes less code in
//! `prober`, whose size is bounded (ci/package-check.sh), and needs no eviction order.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use prober::CheckPlan;

use crate::modules::Modules;

/// The most plans kept (both generations).
pub(crate) const MAX_PLANS: usize = 128;

/// The longest target (with its `hostname`) whose plan is kept, in bytes.
pub(crate) const MAX_KEPT_TARGET: usize = 1024;

/// A check ready to submit, with what the request's answer needs of its spec.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub plan: CheckPlan,
    pub timeout: Duration,
    pub output_limit: usize,
    /// The address family it resolves for (`ip4`, `ip6`), for the log.
    pub family: &'static str,
}

/// What a plan was made for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlanKey<'a> {
    pub module: &'a str,
    pub target: &'a str,
    pub hostname: Option<&'a str>,
    pub timeout: Duration,
}

struct Entry {
    module: String,
    target: String,
    hostname: Option<String>,
    timeout: Duration,
    planned: Planned,
}

impl Entry {
    fn is(&self, k: &PlanKey<'_>) -> bool {
        self.timeout == k.timeout
            && self.target == k.target
            && self.module == k.module
            && self.hostname.as_deref() == k.hostname
    }
}

#[derive(Default)]
struct Kept {
    /// The module set the plans were made with (held, so that its address is not reused by
    /// another set while plans of this one are kept).
    modules: Option<Arc<Modules>>,
    /// [`MAX_PLANS`] slots once a plan was kept (none before), by the key's hash.
    slots: Vec<Option<Entry>>,
}

/// The kept plans.
pub(crate) struct Plans {
    kept: Mutex<Kept>,
}

/// One step of the key's hash: fast rather than strong, and not keyed. Keys are compared whole
/// on every lookup, so a collision, even one a client made on purpose, only makes a plan kept
/// in the place of another: what asking for [`MAX_PLANS`] other targets does anyway.
fn mix(h: u64, word: u64) -> u64 {
    (h ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

/// `h` with `text`, eight bytes at a time, and its length (so that the fields' bounds count).
fn mix_text(mut h: u64, text: &[u8]) -> u64 {
    let mut words = text.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().unwrap_or_default()));
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    mix(mix(h, u64::from_le_bytes(last)), text.len() as u64)
}

impl std::fmt::Debug for Plans {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A plan can carry a module's credentials: the count says enough.
        f.debug_struct("Plans").field("kept", &self.len()).finish()
    }
}

impl Plans {
    pub fn new() -> Plans {
        Plans { kept: Mutex::default() }
    }

    /// The slot of `k`'s plan.
    fn slot(&self, k: &PlanKey<'_>) -> usize {
        let mut h = mix_text(0, k.module.as_bytes());
        h = mix_text(h, k.target.as_bytes());
        h = match k.hostname {
            Some(name) => mix_text(h, name.as_bytes()),
            None => mix(h, u64::MAX),
        };
        let nanos = k.timeout.as_nanos();
        (mix(mix(h, nanos as u64), (nanos >> 64) as u64) % MAX_PLANS as u64) as usize
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The plan kept for `k` with `modules`, if any.
    pub fn get(&self, modules: &Arc<Modules>, k: &PlanKey<'_>) -> Option<Planned> {
        let i = self.slot(k);
        let kept = self.lock();
        if !kept.modules.as_ref().is_some_and(|m| Arc::ptr_eq(m, modules)) {
            return None;
        }
        let e = kept.slots.get(i)?.as_ref().filter(|e| e.is(k))?;
        Some(e.planned.clone())
    }

    /// Keeps `planned` for `k` with `modules` (the plans of another module set are dropped).
    pub fn put(&self, modules: &Arc<Modules>, k: &PlanKey<'_>, planned: &Planned) {
        if k.target.len() + k.hostname.map_or(0, str::len) > MAX_KEPT_TARGET {
            return;
        }
        let i = self.slot(k);
        let entry = Entry {
            module: k.module.to_string(),
            target: k.target.to_string(),
            hostname: k.hostname.map(str::to_string),
            timeout: k.timeout,
            planned: planned.clone(),
        };
        let mut kept = self.lock();
        if !kept.modules.as_ref().is_some_and(|m| Arc::ptr_eq(m, modules)) {
            *kept = Kept { modules: Some(modules.clone()), ..Kept::default() };
        }
        if kept.slots.is_empty() {
            kept.slots.resize_with(MAX_PLANS, || None);
        }
        kept.slots[i] = Some(entry);
    }

    /// How many plans are kept.
    pub fn len(&self) -> usize {
        self.lock().slots.iter().filter(|s| s.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned() -> Planned {
        let spec = prober::ProbeSpec::http("http://127.0.0.1:1/").unwrap();
        Planned {
            timeout: spec.timeout,
            output_limit: spec.output_limit,
            family: "ip4",
            plan: CheckPlan::new(spec).unwrap(),
        }
    }

    fn key(target: &str) -> PlanKey<'_> {
        PlanKey { module: "m", target, hostname: None, timeout: Duration::from_secs(5) }
    }

    /// However many targets clients ask for, at most [`MAX_PLANS`] plans are kept, none for a
    /// target longer than [`MAX_KEPT_TARGET`]; a pair asked for again is kept again.
    #[test]
    fn bounded_whatever_clients_ask() {
        let (plans, modules, p) = (Plans::new(), Arc::new(Modules::default()), planned());
        for i in 0..10 * MAX_PLANS {
            plans.put(&modules, &key(&format!("http://127.0.0.1:1/{i}")), &p);
            assert!(plans.len() <= MAX_PLANS, "{} plans kept after {i}", plans.len());
            if plans.get(&modules, &key("often")).is_none() {
                plans.put(&modules, &key("often"), &p);
            }
            assert!(plans.get(&modules, &key("often")).is_some());
        }
        assert!(plans.len() > MAX_PLANS / 2, "most slots are used");
        let long = "x".repeat(MAX_KEPT_TARGET + 1);
        plans.put(&modules, &key(&long), &p);
        assert!(plans.get(&modules, &key(&long)).is_none(), "a long target is not kept");
    }

    /// A plan serves only its own module, target, hostname and timeout, with the module set
    /// it was made with; another set drops every plan.
    #[test]
    fn a_plan_serves_only_its_own_request() {
        let (plans, modules, p) = (Plans::new(), Arc::new(Modules::default()), planned());
        let k = PlanKey {
            module: "m",
            target: "t",
            hostname: Some("h"),
            timeout: Duration::from_secs(5),
        };
        plans.put(&modules, &k, &p);
        assert!(plans.get(&modules, &k).is_some());
        for other in [
            PlanKey { module: "n", ..k },
            PlanKey { target: "u", ..k },
            PlanKey { hostname: None, ..k },
            PlanKey { timeout: Duration::from_secs(4), ..k },
        ] {
            assert!(plans.get(&modules, &other).is_none(), "{other:?}");
        }
        let reloaded = Arc::new(Modules::default());
        assert!(plans.get(&reloaded, &k).is_none(), "a reload's modules");
        plans.put(&reloaded, &key("t"), &p);
        assert_eq!(plans.len(), 1, "the old set's plans are dropped");
    }
}
