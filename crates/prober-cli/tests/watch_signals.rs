//! SIGINT and SIGTERM stop `prober watch` cleanly, and its commands with it.

mod common;

use common::*;

fn signal_stops_watch_cleanly(sig: Signal) {
    let server = TargetServer::start();
    let pid_file = pid_file();
    // A startup probe whose command would run for minutes: it must die with the watch.
    let file = write_file(
        "yaml",
        &format!(
            "targets:\n\
             - name: web\n\
             \x20 readinessProbe: {{tcpSocket: {{port: {}}}}}\n\
             - name: slow\n\
             \x20 startupProbe:\n\
             \x20   exec: {{command: [/bin/sh, -c, 'echo $$$$ > {}; exec /bin/sleep 300']}}\n\
             \x20   timeoutSeconds: 600\n",
            server.port(),
            pid_file.display()
        ),
    );
    let mut w = Watch::start(&["--json", file.to_str().unwrap()]);
    let v = w.next_state("web", "readiness");
    assert_eq!(v["reason"], "initial");
    let v = w.next_state("web", "readiness");
    assert_eq!(v["result"], "success");
    let pid = wait_for_pid(&pid_file);
    w.signal(sig);
    let (status, rest) = w.wait();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let last: Value = serde_json::from_str(rest.last().expect("a summary line")).unwrap();
    assert!(last.get("summary").is_some(), "{last}");
    assert_eq!(last["summary"][1]["started"], false, "{last}");
    assert_process_ends(pid);
}

#[test]
fn sigterm_stops_watch_cleanly() {
    signal_stops_watch_cleanly(Signal::SIGTERM);
}

#[test]
fn sigint_stops_watch_cleanly() {
    signal_stops_watch_cleanly(Signal::SIGINT);
}

#[test]
fn sigint_ignored_at_start_stays_ignored() {
    // A background job of a non-interactive shell starts with SIGINT ignored; shells expect
    // it to stay so (an interrupt at the terminal is not for it). SIGTERM still stops it.
    let server = TargetServer::start();
    let file = one_probe_file(
        "web",
        "readinessProbe",
        &format!("httpGet: {{path: /health, port: {}}}", server.port()),
        &["periodSeconds: 1", "failureThreshold: 1"],
    );
    let mut w =
        Watch::start_with_sigint(&["--json", file.to_str().unwrap()], signal::SigHandler::SigIgn);
    assert_eq!(w.next_state("web", "readiness")["reason"], "initial");
    assert_eq!(w.next_state("web", "readiness")["result"], "success");
    w.signal(Signal::SIGINT);
    // Still watching: the next change (a period later) is reported. Had SIGINT stopped the
    // watch, the summary would come first and next_state would fail.
    server.set_healthy(false);
    assert_eq!(w.next_state("web", "readiness")["result"], "failure");
    w.signal(Signal::SIGTERM);
    let (status, rest) = w.wait();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let last: Value = serde_json::from_str(rest.last().expect("a summary line")).unwrap();
    assert_eq!(last["summary"][0]["ready"], false, "{last}");
}
