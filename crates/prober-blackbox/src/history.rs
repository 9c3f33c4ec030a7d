//! blackbox_exporter's `/logs` (v0.28.0's `prober.ResultHistory` and its handler in
//! `main.go`): the debug output of the last probes, what `&debug=true` would have shown, by
//! probe id or by target (and module).
//!
//! What is kept is bounded whatever clients ask: the last `limit` probes (`--history.limit`,
//! 100), and as blackbox_exporter keeps them, up to `limit` more failures that have left that
//! window; each output shown at most [`MAX_KEPT_OUTPUT`] bytes (blackbox_exporter keeps it
//! whole). A probe's log and metrics are kept, each cut at that bound, and the page is put
//! together when asked for, the module's configuration printed from the module set the probe
//! ran with (shared with it, and kept alive by the entries that name it after a reload). The
//! outputs are the debug pages, so they hold no credential.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::modules::Modules;
use crate::request::{Response, parse_query};

/// blackbox_exporter's `--history.limit` default.
pub const DEFAULT_HISTORY_LIMIT: usize = 100;

/// The most of one probe's debug output that is kept (64 KiB): with the default limit, at
/// most 200 of them, 12.5 MiB.
pub const MAX_KEPT_OUTPUT: usize = 64 << 10;

#[derive(Debug)]
struct Entry {
    id: u64,
    target: String,
    output: Output,
    success: bool,
}

/// A probe's debug output, kept in its pieces and put together only when `/logs` asks for it:
/// printing the module's configuration for every probe cost about as much CPU as the probe.
#[derive(Debug)]
pub(crate) struct Output {
    /// The probe's log lines.
    pub log: String,
    /// The metrics it answered.
    pub metrics: String,
    /// The module's name.
    pub module: String,
    /// The module set the probe ran with, the module printed from it when asked.
    pub config: Option<Arc<Modules>>,
    /// The request's `hostname`, which the module shown carries as the probe used it.
    pub hostname: Option<String>,
}

impl Output {
    /// The page `/logs` shows: [`Output::page`] cut at [`MAX_KEPT_OUTPUT`] bytes.
    fn render(&self) -> String {
        cut(self.page())
    }

    /// The page `&debug=true` shows.
    pub(crate) fn page(&self) -> String {
        let Output { log, metrics, module, config, hostname } = self;
        let mut page = format!(
            "Logs for the probe:\n{log}\n\nMetrics that would have been returned:\n{metrics}\n\nModule configuration:\n"
        );
        if let Some(module) = config.as_ref().and_then(|m| m.by_name.get(module)) {
            page.push_str(&crate::shown::module_yaml(module, hostname.as_deref()));
        }
        page
    }
}

/// `text` cut at [`MAX_KEPT_OUTPUT`] bytes (at a character boundary), saying so.
fn cut(mut text: String) -> String {
    if text.len() > MAX_KEPT_OUTPUT {
        let mut end = MAX_KEPT_OUTPUT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[cut: at most 65536 bytes of a probe's output are kept]\n");
    }
    text
}

#[derive(Debug, Default)]
struct Kept {
    next_id: u64,
    /// The last `limit` probes, oldest first.
    results: VecDeque<Arc<Entry>>,
    /// Failures that left `results`, oldest first, at most `limit`.
    failures: VecDeque<Arc<Entry>>,
}

#[derive(Debug)]
pub(crate) struct History {
    limit: AtomicUsize,
    kept: Mutex<Kept>,
}

impl History {
    pub fn new() -> History {
        History { limit: AtomicUsize::new(DEFAULT_HISTORY_LIMIT), kept: Mutex::default() }
    }

    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Keeps the debug output of a probe that ran (its module named in `output`).
    pub fn add(&self, target: String, output: Output, success: bool) {
        let limit = self.limit.load(Ordering::Relaxed);
        // What is held stays within the bound: the pieces are cut as the page would be.
        let output = Output { log: cut(output.log), metrics: cut(output.metrics), ..output };
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let id = kept.next_id;
        kept.next_id += 1;
        kept.results.push_back(Arc::new(Entry { id, target, output, success }));
        while kept.results.len() > limit {
            let Some(old) = kept.results.pop_front() else { break };
            if !old.success {
                kept.failures.push_back(old);
            }
        }
        while kept.failures.len() > limit {
            kept.failures.pop_front();
        }
    }

    /// The first kept entry (failures kept first, then the last probes, oldest first, as
    /// blackbox_exporter looks) that `matches`.
    fn find(&self, matches: impl Fn(&Entry) -> bool) -> Option<Arc<Entry>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.failures.iter().chain(&kept.results).find(|e| matches(e)).cloned()
    }

    /// `/logs?id=N` or `/logs?target=T[&module=M]`, with blackbox_exporter's answers.
    pub fn answer(&self, query: &str) -> Response {
        let params = parse_query(query);
        let get = |k: &str| params.iter().find(|(n, _)| n == k).map_or("", |(_, v)| v.as_str());
        let id = get("id").parse::<u64>().ok();
        let (target, module) = (get("target"), get("module"));
        let found = match (id, target) {
            (Some(_), t) if !t.is_empty() => {
                return error(400, "Probe id and target can't be defined at the same time");
            }
            (None, "") => {
                return error(400, "Probe id or target must be defined as http query parameters");
            }
            (_, "") if !module.is_empty() => {
                return error(
                    400,
                    "Probe module filter only works in conjunction with target parameter",
                );
            }
            (Some(id), _) => self.find(|e| e.id == id).ok_or("Probe id not found"),
            (None, t) => self
                .find(|e| e.target == t && (module.is_empty() || e.output.module == module))
                .ok_or("Probe target not found"),
        };
        match found {
            Ok(e) => Response { status: 200, content_type: "text/plain", body: e.output.render() },
            Err(why) => error(404, why),
        }
    }
}

/// Go's `http.Error`.
fn error(status: u16, why: &str) -> Response {
    Response { status, content_type: "text/plain; charset=utf-8", body: format!("{why}\n") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_as_blackbox_exporter_keeps_them() {
        let h = History::new();
        h.set_limit(2);
        for (i, success) in [false, true, true, false, true, true].into_iter().enumerate() {
            h.add(format!("t{i}"), text(&format!("run {i}")), success);
        }
        let kept = h.kept.lock().unwrap();
        let ids = |q: &VecDeque<Arc<Entry>>| q.iter().map(|e| e.id).collect::<Vec<_>>();
        assert_eq!(ids(&kept.results), [4, 5]);
        assert_eq!(ids(&kept.failures), [0, 3], "failures that left the window are kept");
        drop(kept);
        assert!(h.answer("id=0").body.contains("\nrun 0\n"));
        assert!(h.answer("target=t3&module=m").body.contains("\nrun 3\n"));
        assert_eq!(h.answer("target=t1").status, 404);
        assert_eq!(h.answer("id=1&target=t1").status, 400);
        assert_eq!(h.answer("module=m").status, 400);
        assert_eq!(h.answer("").status, 400);
        let big = "x".repeat(MAX_KEPT_OUTPUT * 2);
        h.add("big".to_string(), text(&big), true);
        assert!(h.answer("target=big").body.len() < MAX_KEPT_OUTPUT + 100);
    }

    fn text(log: &str) -> Output {
        let (metrics, module) = (String::new(), "m".to_string());
        Output { log: log.to_string(), metrics, module, config: None, hostname: None }
    }
}
