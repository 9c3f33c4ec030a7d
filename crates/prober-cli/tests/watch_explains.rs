//! `prober watch` explains itself: the first failing run of every streak is printed with its
//! message even while the published value does not change, `--every-run` prints every run,
//! and the summary gives the last message of every role that is not a success; the same in
//! `--json`. Against real servers (`prober_testkit::TargetServer`) and a closed port.
//!
//! The watch's own `--metrics` tells when runs happened that printed nothing, so that "printed
//! once per streak" is asserted after several runs, not assumed from time passing.

mod common;

use common::{TempFile, Value, Watch, one_probe_file, scrape_until, write_file};
use prober_testkit::{TargetServer, closed_port};

/// A readiness and a liveness probe on a closed port; liveness would publish only after 1000
/// failures, so its value stays success all along.
fn refused_file(port: u16) -> TempFile {
    write_file(
        "yaml",
        &format!(
            "targets:\n\
             - name: db\n\
             \x20 readinessProbe:\n\
             \x20   tcpSocket: {{port: {port}}}\n\
             \x20   periodMilliseconds: 50\n\
             \x20 livenessProbe:\n\
             \x20   tcpSocket: {{port: {port}}}\n\
             \x20   periodMilliseconds: 50\n\
             \x20   failureThreshold: 1000\n"
        ),
    )
}

fn refused(port: u16) -> String {
    format!("dial tcp 127.0.0.1:{port}: connect: connection refused")
}

/// Waits until both roles of `db` have failed at least `n` times (from the watch's metrics).
fn await_failed_runs(w: &Watch, n: f64) {
    let addr = w.metrics_addr();
    scrape_until(addr, "failed runs of both roles", |e| {
        ["readiness", "liveness"].iter().all(|role| {
            e.count(
                "prober_probe_total",
                &[("target", "db"), ("role", role), ("result", "failure")],
            ) >= n
        })
    });
}

/// A line of the watch itself (a change or a run), not of the summary: it starts with the time.
fn timed(line: &str) -> bool {
    line.trim_start().starts_with(|c: char| c.is_ascii_digit())
}

#[test]
fn a_refused_probe_is_explained_once_per_streak() {
    let port = closed_port();
    let file = refused_file(port);
    let mut w = Watch::start(&["--metrics", "127.0.0.1:0", file.path()]);
    let msg = refused(port);
    // Several failed runs of each role, of which only the first is printed (in either order).
    await_failed_runs(&w, 3.0);
    let (status, _) = w.stop();
    assert_eq!(status.code(), Some(0));
    for role in ["readiness", "liveness"] {
        let want = format!(" db {role} run failure: {msg} (refused, ");
        let line = w.seen.iter().find(|l| l.contains(&want));
        let line = line.unwrap_or_else(|| panic!("no {want:?} in {:#?}", w.seen));
        assert!(line.ends_with("ms)"), "{line}");
    }
    let runs: Vec<&String> = w.seen.iter().filter(|l| timed(l) && l.contains(" run ")).collect();
    assert_eq!(runs.len(), 2, "one line per streak: {:#?}", w.seen);
    // The initial values and nothing else changed: readiness failure, liveness success.
    let changes: Vec<&String> =
        w.seen.iter().filter(|l| timed(l) && l.contains("started=")).collect();
    assert_eq!(changes.len(), 2, "{:#?}", w.seen);
    let at = w.seen.iter().position(|l| l.starts_with("summary: ")).expect("a summary");
    let summary: Vec<&String> = w.seen[at..].iter().collect();
    assert_eq!(
        summary,
        [
            &"summary: db started=yes ready=no live=yes".to_string(),
            &format!("  db readiness failure: {msg} (refused)"),
            &format!("  db liveness success, last run failure: {msg} (refused)"),
        ],
        "{:#?}",
        w.seen
    );
}

#[test]
fn every_failing_streak_is_explained_before_its_change() {
    let server = TargetServer::start();
    server.set_healthy(false);
    let file = one_probe_file(
        "web",
        "readinessProbe",
        &format!("httpGet: {{path: /health, port: {}}}", server.port()),
        &["periodMilliseconds: 50", "failureThreshold: 3"],
    );
    let mut w = Watch::start(&[file.path()]);
    let status_503 =
        "web readiness run failure: HTTP probe failed with statuscode: 503 (status, HTTP 503, ";
    // Streak 1: the published value (failure, initial) does not change, the message shows.
    w.until("the first streak", |l| l.contains(status_503));
    server.set_healthy(true);
    let line = w.until("ready", |l| l.contains(" web readiness success"));
    assert!(
        line.ends_with(" web readiness success (HTTP 200)  started=yes ready=yes live=yes"),
        "{line}"
    );
    // Streak 2: printed at its first failure, while still ready; then the change.
    server.set_healthy(false);
    let line = w.next();
    assert!(line.contains(status_503), "{line}");
    let line = w.next();
    assert!(
        line.ends_with(" web readiness failure: HTTP probe failed with statuscode: 503 (status, HTTP 503)  started=yes ready=no live=yes"),
        "{line}"
    );
    let (_, rest) = w.stop();
    assert_eq!(rest.len(), 2, "nothing between the change and the summary: {rest:#?}");
    assert_eq!(rest[0], "summary: web started=yes ready=no live=yes");
    assert_eq!(
        rest[1],
        "  web readiness failure: HTTP probe failed with statuscode: 503 (status, HTTP 503)"
    );
}

#[test]
fn every_run_prints_every_run() {
    let server = TargetServer::start();
    let file = one_probe_file(
        "web",
        "livenessProbe",
        &format!("httpGet: {{path: /health, port: {}}}", server.port()),
        &["periodMilliseconds: 50"],
    );
    let mut w = Watch::start(&["--every-run", file.path()]);
    for _ in 0..3 {
        let line = w.until("a run", |l| l.contains(" run "));
        assert!(line.contains(" web liveness run success (HTTP 200, "), "{line}");
    }
    let (status, rest) = w.stop();
    assert_eq!(status.code(), Some(0));
    // A liveness probe that keeps succeeding changes nothing: the summary explains nothing.
    assert_eq!(rest.last().unwrap(), "summary: web started=yes ready=yes live=yes");
    assert!(w.seen.iter().filter(|l| l.starts_with("summary")).count() == 1, "{:#?}", w.seen);

    let mut w = Watch::start(&["--every-run", "--json", file.path()]);
    for _ in 0..3 {
        let line = w.until("a run", |l| l.contains("\"run\""));
        let v: Value = serde_json::from_str(&line).unwrap();
        let run = &v["run"];
        assert_eq!((run["target"].as_str(), run["role"].as_str()), (Some("web"), Some("liveness")));
        assert_eq!(
            (run["result"].as_str(), run["reason"].as_str()),
            (Some("success"), Some("none"))
        );
        assert_eq!((run["message"].as_str(), run["http_status"].as_u64()), (Some(""), Some(200)));
        assert!(run["duration_ms"].as_f64().unwrap() > 0.0, "{v}");
        assert!(run["late_ms"].as_f64().unwrap() >= 0.0, "{v}");
        assert!(v["time_ms"].is_u64(), "{v}");
    }
    w.stop();
}

#[test]
fn json_carries_the_same_explanations() {
    let port = closed_port();
    let file = refused_file(port);
    let mut w = Watch::start(&["--json", "--metrics", "127.0.0.1:0", file.path()]);
    let msg = refused(port);
    await_failed_runs(&w, 3.0);
    let (_, rest) = w.stop();
    for role in ["readiness", "liveness"] {
        let want = format!("\"role\":\"{role}\",\"result\":\"failure\",\"reason\"");
        let line = w.seen.iter().find(|l| l.contains(&want));
        let line = line.unwrap_or_else(|| panic!("no {want:?} in {:#?}", w.seen));
        let v: Value = serde_json::from_str(line).unwrap();
        let run = &v["run"];
        assert_eq!(run["target"], "db", "{v}");
        assert_eq!(
            (run["reason"].as_str(), run["message"].as_str()),
            (Some("refused"), Some(msg.as_str()))
        );
        assert!(run["duration_ms"].is_number(), "{v}");
    }
    let runs = w.seen.iter().filter(|l| l.contains("\"run\":")).count();
    assert_eq!(runs, 2, "one object per streak: {:#?}", w.seen);
    let summary: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    let db = &summary["summary"][0];
    assert_eq!(
        (db["ready"].as_bool(), db["live"].as_bool()),
        (Some(false), Some(true)),
        "{summary}"
    );
    let roles = db["not_success"].as_array().unwrap();
    assert_eq!(roles.len(), 2, "{summary}");
    let want = [("readiness", "failure"), ("liveness", "success")];
    for (r, (role, published)) in roles.iter().zip(want) {
        assert_eq!(
            (r["role"].as_str(), r["result"].as_str()),
            (Some(role), Some(published)),
            "{r}"
        );
        assert_eq!(r["last_run"], "failure", "{r}");
        assert_eq!(
            (r["reason"].as_str(), r["message"].as_str()),
            (Some("refused"), Some(msg.as_str())),
            "{r}"
        );
    }
}
