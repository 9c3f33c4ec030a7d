//! `prober check -- CMD`: exit statuses, `$(VAR)` expansion, descriptors, signals.

mod common;

use common::*;

#[test]
fn check_unknown_exits_2_for_a_missing_binary() {
    let (code, v) = check_json(&["--", "/no/such/binary", "arg"]);
    assert_eq!(code, 2);
    assert_common_fields(&v);
    assert_eq!(v["result"], "unknown");
    assert_eq!(v["reason"], "spawn");
    assert!(v["message"].as_str().unwrap().contains("/no/such/binary"), "{v}");
}

#[test]
fn exec_expands_env() {
    let (code, v) =
        check_json(&["--env", "GREETING=hi", "--", "/bin/sh", "-c", "echo $(GREETING)"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"], "success");
    assert_eq!(v["output"].as_str().unwrap().trim_end(), "hi");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["output_total"], 3);
    // Without the variable the reference stays as written.
    let (_, v) = check_json(&["--", "/bin/echo", "$(GREETING)"]);
    assert_eq!(v["output"], "$(GREETING)\n");
}

#[test]
fn exec_env_values_use_the_variables_before_them() {
    // As a container's env: `A` is expanded against `B` above it, `$$` is a literal `$`, and
    // `D` names a later variable, which stays as written. The command line itself is expanded
    // against the values as written (the last argument is `$(A)` through `$$(A)`: literal).
    let (code, v) = check_json(&[
        "--env",
        "B=x",
        "--env",
        "A=$(B)y",
        "--env",
        "C=$$(B)",
        "--env",
        "D=$(E)",
        "--env",
        "E=e",
        "--",
        "/bin/sh",
        "-c",
        r#"printf '%s|%s|%s|%s|%s' "$A" "$C" "$D" '$(A)' '$$(A)'"#,
    ]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["output"], "xy|$(B)|$(E)|$(B)y|$(A)", "{v}");
}

#[test]
fn exec_command_gets_no_descriptor_of_the_shell() {
    // The shell opens descriptor 7 (not close-on-exec: a redirection meant to be inherited)
    // and becomes `prober`, which must not hand it on to the command.
    let script = r#"exec 7</etc/hostname && exec "$0" check --json -- ls -ln /proc/self/fd/"#;
    let r = run_command(
        Command::new("/bin/sh").args(["-c", script, env!("CARGO_BIN_EXE_prober")]),
        None,
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", r.stdout);
    let v = json_line(&r);
    assert_eq!(v["result"], "success", "{v}");
    let listing = v["output"].as_str().unwrap();
    assert!(listing.contains(" 0 -> /dev/null"), "{listing}");
    for line in listing.lines().filter(|l| l.contains(" -> ")) {
        let (left, target) = line.split_once(" -> ").unwrap();
        let fd: u32 = left.split_whitespace().last().unwrap().parse().unwrap();
        assert!(
            !target.ends_with("/hostname"),
            "the shell's descriptor reached the command: {line}"
        );
        // Beyond stdin, stdout and stderr only ls's own directory descriptor.
        assert!(fd < 3 || (target.starts_with("/proc/") && target.ends_with("/fd")), "{line}");
    }
}

#[test]
fn sigterm_to_check_kills_its_command_and_ends_by_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    let pid_file = pid_file();
    let script = format!("echo $$$$ > {}; exec /bin/sleep 300", pid_file.display());
    let mut child = prober()
        .args(["check", "--timeout", "10m", "--", "/bin/sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = reader(child.stdout.take().unwrap());
    let pid = wait_for_pid(&pid_file);
    signal::kill(pid_of(&child), Signal::SIGTERM).expect("kill");
    let status = wait_bounded(&mut child, HANG);
    assert_eq!(status.signal(), Some(Signal::SIGTERM as i32), "{status:?}");
    assert_eq!(out.recv().unwrap(), "", "no verdict for an interrupted check");
    assert_process_ends(pid);
}

#[test]
fn a_failed_command_line_shows_the_first_line_of_its_output() {
    let r = run(&["check", "--", "sh", "-c", "echo database not reachable; echo more; exit 1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let line = r.stdout.strip_suffix('\n').expect("one line");
    assert!(line.starts_with("failure: command terminated with exit code 1 (exit_code, exit 1, "));
    assert!(line.ends_with(" output: database not reachable"), "{line}");
    // Escaped, and cut at 200 characters.
    let long = "printf '\\033[31m%0300d\\n' 0; exit 3";
    let r = run(&["check", "--", "sh", "-c", long]);
    assert_eq!(r.code, 1);
    let want = format!(" output: \\x1b[31m{}...\n", "0".repeat(195));
    assert!(r.stdout.ends_with(&want), "{}", r.stdout);
}

/// `--exec-cgroup DIR` reaches the library: a directory that is not a cgroup v2 one makes the
/// check Unknown (exit 2) without running the command. (Containment itself, with a real
/// cgroup and a `setsid` process, is tested in prober-exec's `tests/containment.rs`.)
#[test]
fn exec_cgroup_that_is_not_a_cgroup_is_unknown_and_runs_nothing() {
    let dir = std::env::temp_dir().join(format!("prober-cli-cgroup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let marker = dir.join("ran");
    let (code, v) = check_json(&[
        "--exec-cgroup",
        dir.to_str().unwrap(),
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{v}");
    assert_eq!((v["result"].as_str(), v["reason"].as_str()), (Some("unknown"), Some("spawn")));
    let want = format!("could not create a cgroup for the command in {}: ", dir.display());
    assert!(v["message"].as_str().unwrap().starts_with(&want), "{v}");
    assert!(!marker.exists(), "the command must not run uncontained");
    std::fs::remove_dir_all(&dir).unwrap();
}
