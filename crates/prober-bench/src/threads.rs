//! `https_threads`: `https_oneshot`'s checks through an engine group of `--threads` engines
//! (`prober_engine::spawn_sharded`), submitted through its one handle and answered on its one
//! channel, `--conc` in flight over the whole group. `ci/bench.sh` runs it with 1 and 2
//! threads in one invocation; the ratio of their rates is `speedup_2_threads`.

use prober_core::ProbeSpec;
use prober_engine::EngineConfig;

use crate::in_flight::keep_in_flight;
use crate::measure::Usage;
use crate::opts::Opts;

/// Runs `spec` (`https_oneshot`'s GET) `--n` times through `--threads` engines.
pub(crate) fn https_threads(o: &Opts, spec: &ProbeSpec) -> Result<(), String> {
    let n = o.num("n", 10_000)?;
    let conc = o.num("conc", 64)?.max(1);
    let threads = usize::try_from(o.num("threads", 1)?).map_err(|e| e.to_string())?;
    let mut group = prober_engine::spawn_sharded(EngineConfig::default(), threads)
        .map_err(|e| format!("engines: {e}"))?;
    let start = Usage::now();
    let tally = keep_in_flight(&mut group, spec, n, conc)?;
    let d = start.until(&Usage::now());
    tally.note_failures(n);
    let mut line = o.line();
    line.common(n, tally.ok, &d);
    line.kv("conc", conc).kv("threads", threads);
    line.print();
    group.stop().map_err(|e| format!("engines: {e}"))
}
