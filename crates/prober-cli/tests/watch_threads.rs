//! `prober watch --threads N`: the targets spread over N engine threads all report, as with one.

mod common;

use std::net::TcpListener;

use common::*;

#[test]
fn watch_with_two_engine_threads_reports_every_target() {
    let listeners: Vec<TcpListener> =
        (0..2).map(|_| TcpListener::bind("127.0.0.1:0").unwrap()).collect();
    let names: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
    let targets: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let port = listeners[i % 2].local_addr().unwrap().port();
            format!(
                r#"{{"name": "{name}", "readinessProbe": {{"tcpSocket": {{"port": {port}}}, "periodSeconds": 60}}}}"#
            )
        })
        .collect();
    let file = write_file("json", &format!(r#"{{"targets": [{}]}}"#, targets.join(", ")));
    let mut w = Watch::start(&["--threads", "2", "--for", "60s", "--json", file.path()]);
    let mut ready = std::collections::BTreeSet::new();
    while ready.len() < names.len() {
        let v = w.next_json();
        assert!(v.get("summary").is_none(), "the watch ended first: {:#?}", w.seen);
        if v["role"] == "readiness" && v["result"] == "success" {
            ready.insert(v["target"].as_str().unwrap().to_string());
        }
    }
    // The probes ran on two engine threads of the watch's.
    let threads: Vec<String> = std::fs::read_dir(format!("/proc/{}/task", w.pid()))
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|c| c.trim().to_string())
        .filter(|c| c.starts_with("prober-engine"))
        .collect();
    assert_eq!(threads.len(), 2, "{threads:?}");
    w.signal(Signal::SIGTERM);
    let (status, rest) = w.wait();
    assert_eq!(status.code(), Some(0), "{rest:?}");
    let last: Value = serde_json::from_str(rest.last().expect("a summary line")).unwrap();
    assert_eq!(last["all_ready"], true, "{last}");
}

#[test]
fn thread_counts_out_of_range_are_refused() {
    for n in ["0", "257", "two"] {
        assert_usage_error(&["watch", "--threads", n, "x.yaml"], "--threads");
    }
}
