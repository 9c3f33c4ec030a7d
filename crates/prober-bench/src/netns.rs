//! `netns_scale`: one engine probing `--namespaces` network namespaces (issue 29), each with its
//! own listener on 127.0.0.1, one periodic TCP readiness worker per namespace. Reports the CPU
//! per probe once every target is ready, and the descriptors the engine holds: one per
//! namespace file while probes name it, none after. `--where host` runs the same targets
//! against listeners in this process's own namespace, the reference of the same run.
//!
//! The namespaces are made with `ip netns` (root) by `prober_testkit::netns`, which deletes
//! them when the set is dropped, also when this program fails half-way.

use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use prober_core::{ProbeResult, ProbeSpec, Role, Schedule};
use prober_engine::{Engine, EngineConfig};
use prober_testkit::netns::TestNetns;

use crate::measure::{Usage, current_rss_bytes, threads_cpu_us};
use crate::opts::Opts;
use crate::runs::{Runs, collect_runs};

/// This process's open descriptors: (all of them, those on a namespace file). Namespace files
/// all live on the one nsfs file system: a descriptor is on one when its device is that of
/// `/proc/self/ns/net` (readlink would show a bind mount's path, `/run/netns/NAME`, instead of
/// `net:[INODE]`).
fn descriptors() -> (u64, u64) {
    let nsfs = std::fs::metadata("/proc/self/ns/net").map(|m| m.dev()).ok();
    let (mut all, mut ns) = (0, 0);
    for entry in std::fs::read_dir("/proc/self/fd").into_iter().flatten().flatten() {
        all += 1;
        if std::fs::metadata(entry.path()).is_ok_and(|m| Some(m.dev()) == nsfs) {
            ns += 1;
        }
    }
    (all, ns)
}

pub(crate) fn scale(o: &Opts) -> Result<(), String> {
    let count = usize::try_from(o.num("namespaces", 1000)?).map_err(|e| e.to_string())?;
    let in_ns = match o.str("where", "netns").as_str() {
        "netns" => true,
        "host" => false,
        other => return Err(format!("--where {other}: expected netns or host")),
    };
    let period = Duration::from_millis(o.num("period-ms", 1000)?);
    let duration = Duration::from_secs(o.num("duration-s", 10)?);

    let made = Instant::now();
    let set = in_ns.then(|| TestNetns::many("bench", count));
    let listeners: Vec<TcpListener> = match &set {
        Some(set) => set
            .iter()
            .map(|ns| ns.run_in(|| TcpListener::bind("127.0.0.1:0")))
            .collect::<Result<_, _>>(),
        None => (0..count).map(|_| TcpListener::bind("127.0.0.1:0")).collect::<Result<_, _>>(),
    }
    .map_err(|e| format!("listen: {e}"))?;
    eprintln!(
        "netns_scale: {count} listeners ({}) in {:.1} s",
        if in_ns { "one per namespace" } else { "on the host" },
        made.elapsed().as_secs_f64()
    );

    let (fds_before, ns_fds_before) = descriptors();
    let rss_before = current_rss_bytes();
    let config = EngineConfig { every_run: true, ..EngineConfig::default() };
    let mut engine = Engine::with_config(config).map_err(|e| format!("engine: {e}"))?;
    let schedule = Schedule { period, jitter: true, ..Schedule::default() };
    let mut targets = Vec::with_capacity(count);
    for (i, l) in listeners.iter().enumerate() {
        let port = l.local_addr().map_err(|e| e.to_string())?.port();
        let mut spec = ProbeSpec::tcp("127.0.0.1", i64::from(port)).map_err(|e| e.to_string())?;
        if let Some(set) = &set {
            spec.set_netns(set[i].path()).map_err(|e| e.to_string())?;
        }
        let t = engine.add_target();
        engine.set_probe(t, Role::Readiness, spec, schedule).map_err(|e| e.to_string())?;
        targets.push(t);
    }

    // Every target's first runs (which open the namespace files) come before the window.
    let mut events = Vec::with_capacity(4096);
    let ready_by = Instant::now() + period * 3 + Duration::from_secs(30);
    let started = Instant::now();
    loop {
        let mut ready = 0;
        for t in &targets {
            if engine.published(*t, Role::Readiness).map_err(|e| e.to_string())?
                == ProbeResult::Success
            {
                ready += 1;
            }
        }
        if ready == count {
            break;
        }
        if Instant::now() > ready_by {
            return Err(format!("{ready} of {count} targets ready"));
        }
        engine.wait(Some(Duration::from_millis(50))).map_err(|e| format!("wait: {e}"))?;
        engine.drain(&mut events, usize::MAX);
        events.clear();
    }
    let ready_s = started.elapsed().as_secs_f64();

    let mut late_us = Vec::new();
    let helpers0 = threads_cpu_us("prober-netns");
    let start = Usage::now();
    let Runs { runs, ok, first_failure } =
        collect_runs(&mut engine, &mut events, start.wall + duration, &mut late_us)?;
    let d = start.until(&Usage::now());
    let helpers = threads_cpu_us("prober-netns").saturating_sub(helpers0);
    let (fds_during, ns_fds) = descriptors();
    let rss_during = current_rss_bytes();
    let kept = engine.netns_pool_stats();
    for t in targets {
        engine.remove_target(t).map_err(|e| e.to_string())?;
    }
    // The engine still alive: what it holds once no spec names the namespaces (its kept
    // sockets in them included: each keeps its namespace in existence).
    let (fds_removed, _) = descriptors();
    drop(engine);
    let (_, ns_fds_after) = descriptors();
    if let Some(f) = first_failure {
        eprintln!("prober-bench: {} of {runs} runs did not succeed; first: {f}", runs - ok);
    }
    late_us.sort_unstable();
    let mut line = o.line();
    line.common(runs, ok, &d).lateness(&late_us);
    line.kv("namespaces", count).kv("where", if in_ns { "netns" } else { "host" });
    line.kv("period_ms", period.as_millis()).f("ready_s", ready_s, 2);
    // Of the CPU per probe, the share of the threads that make the sockets in namespaces.
    line.f("netns_threads_us_per_probe", helpers as f64 / runs.max(1) as f64, 2);
    // What the engine opened: every descriptor beyond those before it (the listeners are
    // before), and those on namespace files among them.
    line.kv("engine_fds", fds_during.saturating_sub(fds_before));
    line.kv("ns_fds", ns_fds.saturating_sub(ns_fds_before));
    line.kv("ns_fds_after", ns_fds_after.saturating_sub(ns_fds_before));
    line.kv("fds_after_remove", fds_removed.saturating_sub(fds_before));
    // Sockets kept per namespace (issue 37) at the end of the window, and how many runs took
    // one instead of having a socket made.
    line.kv("netns_kept", kept.idle).kv("netns_reused", kept.reused);
    line.kv("rss_per_target_b", rss_during.saturating_sub(rss_before) / count.max(1) as u64);
    line.print();
    drop(listeners);
    drop(set);
    Ok(())
}
