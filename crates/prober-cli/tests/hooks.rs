//! `prober watch --on-change CMD` against a real HTTP server whose health the tests flip, with
//! real hook commands (shell scripts, `echo`, `ls`): what a hook is told, that it runs
//! without a shell unless it asks for one, one at a time per target with changes coalesced
//! into the latest state, killed with its process group at its timeout, its output bounded and
//! logged, and that a hook that hangs delays no probe.

mod common;

use common::{
    HANG, Instant, TargetServer, TempDir, Value, Watch, assert_bad_file, assert_process_ends,
    assert_usage_error, health_watch_file, run, wait_for_pid, write_file,
};
use std::path::Path;

/// The hook lines of a finished `--json` watch.
fn hooks_of(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("hook").cloned())
        .collect()
}

/// Reads the watch up to its next hook line (`--json`).
fn next_hook(w: &mut Watch) -> Value {
    let line = w.until("a hook line", |l| l.contains("\"hook\":"));
    serde_json::from_str::<Value>(&line).unwrap()["hook"].clone()
}

/// Waits until `path` has `n` lines; returns them.
fn wait_for_lines(path: &Path, n: usize) -> Vec<String> {
    let deadline = Instant::now() + HANG;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.len() >= n {
            return lines;
        }
        assert!(Instant::now() < deadline, "only {lines:?} in {}", path.display());
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// An executable shell script `name` in `dir` with `body`.
fn script(dir: &TempDir, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.0.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_change_runs_the_hook_with_the_target_probe_states_and_reason() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let hook = "sh -c 'echo \"$PROBER_TARGET|$PROBER_PROBE|$PROBER_FROM|$PROBER_TO|$PROBER_REASON\"; \
                echo to stderr >&2; exit 3'";
    let mut w = Watch::start(&["--json", "--on-change", hook, file.path()]);
    let h = next_hook(&mut w);
    assert_eq!(h["target"], "web");
    assert_eq!(h["role"], "readiness");
    assert_eq!((&h["from"], &h["to"]), (&"failure".into(), &"success".into()));
    // The hook's own end: its exit status, and its output (stdout and stderr) logged.
    assert_eq!(h["result"], "failure", "{h}");
    assert_eq!(h["reason"], "exit_code", "{h}");
    assert_eq!(h["exit_code"], 3, "{h}");
    assert_eq!(h["output"], "web|readiness|failure|success|none\nto stderr\n", "{h}");
    assert_eq!(h["truncated"], false);

    server.set_healthy(false);
    let h = next_hook(&mut w);
    assert_eq!(h["output"], "web|readiness|success|failure|status\nto stderr\n", "{h}");
    let (status, _) = w.stop();
    assert_eq!(status.code(), Some(0), "a failing hook does not change the watch's status");
}

#[test]
fn the_hook_runs_without_a_shell_and_its_line_is_escaped() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    // No shell: `$PROBER_TARGET`, `;`, `|` and `>` reach echo as words.
    let mut w = Watch::start(&["--on-change", "echo $PROBER_TARGET ; x | y > z", file.path()]);
    let line = w.until("the hook line", |l| l.contains(" hook "));
    let want = "web hook readiness failure->success success (exit 0, ";
    assert!(line.contains(want), "{line}");
    assert!(line.ends_with(") output: $PROBER_TARGET ; x | y > z\\n"), "{line}");
    assert!(!Path::new("z").exists(), "no redirection happened");
    w.stop();
}

#[test]
fn changes_during_a_hook_are_coalesced_and_a_hanging_hook_delays_no_probe() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let dir = TempDir::new("hooks");
    let log = dir.0.join("log");
    let fifo = dir.0.join("release");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    // Each run logs what it was told and waits for the test to release it. A run that starts
    // while another of the target's runs holds the lock logs `overlap`.
    let hook = script(
        &dir,
        "hook.sh",
        &format!(
            "mkdir {lock} || echo overlap >> {log}\n\
             echo \"$PROBER_FROM $PROBER_TO\" >> {log}\n\
             read x < {fifo}\n\
             rmdir {lock}",
            lock = dir.0.join("lock").display(),
            log = log.display(),
            fifo = fifo.display(),
        ),
    );
    let mut w = Watch::start(&["--json", "--on-change", &hook, file.path()]);
    assert_eq!(wait_for_lines(&log, 1), ["failure success"]);
    assert_eq!(w.next_state("web", "readiness")["reason"], "initial");
    assert_eq!(w.next_state("web", "readiness")["result"], "success");
    // The hook hangs; the probes go on, and their changes are published as they come.
    for healthy in [false, true, false] {
        server.set_healthy(healthy);
        let want = if healthy { "success" } else { "failure" };
        let v = w.next_state("web", "readiness");
        assert_eq!(v["result"], want, "{v}");
    }
    std::fs::write(&fifo, "go\n").unwrap();
    let h = next_hook(&mut w);
    assert_eq!(
        (&h["from"], &h["to"], &h["result"]),
        (&"failure".into(), &"success".into(), &"success".into())
    );
    // Three changes came while it ran: one more run, from what the hook was last told to the
    // latest state.
    assert_eq!(wait_for_lines(&log, 2), ["failure success", "success failure"]);
    std::fs::write(&fifo, "go\n").unwrap();
    let h = next_hook(&mut w);
    assert_eq!((&h["from"], &h["to"]), (&"success".into(), &"failure".into()));
    let (status, rest) = w.stop();
    assert_eq!(status.code(), Some(0));
    assert!(hooks_of(&rest).is_empty(), "{rest:?}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(logged, "failure success\nsuccess failure\n", "one run at a time, two in all");
}

#[test]
fn a_hook_is_killed_with_its_process_group_at_its_timeout() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    let dir = TempDir::new("hook-timeout");
    let pid_file = dir.0.join("pid");
    // The hook leaves a grandchild in its process group and waits for it.
    let hook =
        script(&dir, "hang.sh", &format!("sleep 600 &\necho $! > {}\nwait", pid_file.display()));
    let mut w = Watch::start(&[
        "--json",
        "--on-change",
        &hook,
        "--on-change-timeout",
        "300ms",
        file.path(),
    ]);
    let sleeper = wait_for_pid(&pid_file);
    let h = next_hook(&mut w);
    assert_eq!((&h["result"], &h["reason"]), (&"failure".into(), &"timeout".into()), "{h}");
    assert_process_ends(sleeper);
    // Probing went on: the next change is published and runs the hook again.
    server.set_healthy(false);
    let v = w.next_state("web", "readiness");
    assert_eq!(v["result"], "failure");
    w.stop();
}

#[test]
fn the_hook_sees_only_standard_descriptors_and_its_output_is_bounded() {
    let server = TargetServer::start();
    let file = health_watch_file(&server);
    // --metrics: a listening socket the hook must not inherit. `ls` opens the directory it
    // lists (3): anything above is a leak.
    let r = run(&[
        "watch",
        "--json",
        "--until-ready",
        "--metrics",
        "127.0.0.1:0",
        "--on-change",
        "ls /proc/self/fd",
        file.path(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<String> = r.stdout.lines().map(str::to_string).collect();
    let h = hooks_of(&lines);
    assert_eq!(h.len(), 1, "the watch waited for the hook before it ended: {lines:?}");
    assert_eq!(h[0]["output"], "0\n1\n2\n3\n", "{}", h[0]);

    let r = run(&[
        "watch",
        "--json",
        "--until-ready",
        "--on-change",
        "sh -c 'yes | head -c 100000'",
        file.path(),
    ]);
    let lines: Vec<String> = r.stdout.lines().map(str::to_string).collect();
    let h = hooks_of(&lines);
    assert_eq!(h.len(), 1, "{lines:?}");
    assert_eq!(h[0]["output"].as_str().unwrap().len(), 4096, "{}", h[0]);
    assert_eq!(h[0]["truncated"], true);
    assert_eq!(h[0]["result"], "success");
}

#[test]
fn bad_hooks_are_usage_errors() {
    assert_usage_error(&["watch", "--on-change", "", "w.yaml"], "--on-change: empty command");
    assert_usage_error(&["watch", "--on-change", "sh -c 'x", "w.yaml"], "unterminated ' quote");
    assert_usage_error(
        &["watch", "--on-change", "true", "--on-change-timeout", "0s", "w.yaml"],
        "--on-change-timeout: must be positive",
    );
}

#[test]
fn a_target_of_the_watch_file_may_have_its_own_hook() {
    let (web, api) = (TargetServer::start(), TargetServer::start());
    let probe = |port: u16| {
        format!(
            "  readinessProbe:\n    httpGet: {{path: /health, port: {port}}}\n    \
             periodMilliseconds: 100\n    failureThreshold: 1\n"
        )
    };
    // web has its own hook; api takes --on-change's.
    let file = write_file(
        "yaml",
        &format!(
            "targets:\n- name: web\n{}  onChange:\n    command: [echo, own, $(PROBER_TARGET)]\n\
             - name: api\n{}",
            probe(web.port()),
            probe(api.port())
        ),
    );
    let mut w = Watch::start(&["--json", "--on-change", "echo global", file.path()]);
    let mut outputs = vec![next_hook(&mut w), next_hook(&mut w)]
        .into_iter()
        .map(|h| format!("{} {}", h["target"].as_str().unwrap(), h["output"].as_str().unwrap()))
        .collect::<Vec<_>>();
    outputs.sort();
    assert_eq!(outputs, ["api global\n", "web own web\n"]);
    w.stop();

    // Without --on-change, only web's runs.
    let r = run(&["watch", "--json", "--until-ready", file.path()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<String> = r.stdout.lines().map(str::to_string).collect();
    let h = hooks_of(&lines);
    assert_eq!(h.len(), 1, "{lines:?}");
    assert_eq!((&h[0]["target"], &h[0]["output"]), (&"web".into(), &"own web\n".into()));
}

#[test]
fn bad_hooks_in_watch_files_are_refused() {
    let target =
        "targets:\n- name: web\n  readinessProbe:\n    tcpSocket: {port: 80}\n  onChange:\n";
    assert_bad_file(
        &[],
        &format!("{target}    command: []\n"),
        "yaml",
        &["target \"web\": onChange.command: must not be empty"],
    );
    assert_bad_file(
        &[],
        &format!("{target}    command: [x]\n    shell: true\n"),
        "yaml",
        &["unknown field `shell`, expected `command`"],
    );
    assert_bad_file(
        &[],
        &format!("{target}    command: [\"a\\0b\"]\n"),
        "yaml",
        &["onChange.command[0]: contains a NUL byte"],
    );
}
