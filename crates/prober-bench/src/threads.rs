//! `https_threads`: `https_oneshot`'s checks through an engine group of `--threads` engines
//! (`prober_engine::spawn_sharded`), submitted through its one handle and answered on its one
//! channel, `--conc` in flight over the whole group. `ci/bench.sh` runs it with 1 and 2
//! threads in one invocation; the ratio of their rates is `speedup_2_threads`.

use std::time::Duration;

use prober_core::{ProbeResult, ProbeSpec};
use prober_engine::{EngineConfig, Event};

use crate::measure::Usage;
use crate::opts::Opts;

/// Runs `spec` (`https_oneshot`'s GET) `--n` times through `--threads` engines.
pub(crate) fn https_threads(o: &Opts, spec: &ProbeSpec) -> Result<(), String> {
    let n = o.num("n", 10_000)?;
    let conc = o.num("conc", 64)?.max(1);
    let threads = usize::try_from(o.num("threads", 1)?).map_err(|e| e.to_string())?;
    let group = prober_engine::spawn_sharded(EngineConfig::default(), threads)
        .map_err(|e| format!("engines: {e}"))?;
    let h = group.handle();
    let (mut submitted, mut done, mut ok) = (0u64, 0u64, 0u64);
    let mut first_failure: Option<String> = None;
    let start = Usage::now();
    while submitted < n.min(conc) {
        h.submit(spec.clone(), submitted).map_err(|e| e.to_string())?;
        submitted += 1;
    }
    while done < n {
        // Every check ends by its timeout (the spec's default, 1 s) or sooner.
        let ev = group
            .events()
            .recv_timeout(Duration::from_secs(30))
            .map_err(|e| format!("events: {e}"))?;
        let Event::Check { outcome, .. } = ev else { continue };
        done += 1;
        if outcome.result == ProbeResult::Success {
            ok += 1;
        } else if first_failure.is_none() {
            first_failure =
                Some(format!("{} {:?}: {}", outcome.result, outcome.reason, outcome.message));
        }
        if submitted < n {
            h.submit(spec.clone(), submitted).map_err(|e| e.to_string())?;
            submitted += 1;
        }
    }
    let d = start.until(&Usage::now());
    if let Some(f) = first_failure {
        eprintln!("prober-bench: {} of {n} probes did not succeed; first: {f}", n - ok);
    }
    let mut line = o.line();
    line.common(n, ok, &d);
    line.kv("conc", conc).kv("threads", threads);
    line.print();
    group.stop().map_err(|e| format!("engines: {e}"))
}
