//! Removal of a target with an exec probe in flight. Alone in its test binary because it counts
//! this process's descriptors, which tests on parallel threads would disturb.

mod common;

use std::time::{Duration, Instant};

use common::*;
use prober_core::{ProbeSpec, Role};
use prober_engine::{EngineError, Event};

fn fd_count() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

#[test]
fn removal_mid_probe_kills_the_exec_child_and_leaks_nothing() {
    let dir = std::env::temp_dir().join(format!("prober-engine-rm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("pid");
    let _ = std::fs::remove_file(&pidfile);
    let mut e = engine();
    let before = fd_count();
    let t = e.add_target();
    // `$$$$`: kubelet expansion turns `$$` into `$`, so the shell sees `$$`.
    let script = format!("echo $$$$ > {}.tmp; mv {0}.tmp {0}; exec sleep 30", pidfile.display());
    let spec = ProbeSpec::exec(&["/bin/sh", "-c", &script])
        .unwrap()
        .with_timeout(Duration::from_secs(60))
        .unwrap();
    e.set_probe(t, Role::Liveness, spec, schedule(60_000, 1, 1)).unwrap();
    let mut ev = Vec::new();
    let limit = Instant::now() + Duration::from_secs(30);
    while !pidfile.exists() {
        assert!(Instant::now() < limit, "the command never started");
        e.wait(Some(Duration::from_millis(10))).unwrap();
        e.drain(&mut ev, usize::MAX);
    }
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    assert_eq!(e.in_flight(), 1);
    e.remove_target(t).unwrap();
    assert_eq!(e.in_flight(), 0);
    // Killed and reaped (by the probe or the reaper thread): the pid disappears entirely.
    let limit = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < limit, "child {pid} still exists (zombie or alive)");
        std::thread::sleep(Duration::from_millis(5));
    }
    run_for(&mut e, &mut ev, Duration::from_millis(50));
    assert!(
        ev.iter().all(|x| x.target() != Some(t) || matches!(x, Event::State { outcome: None, .. }))
    );
    assert!(e.drain(&mut Vec::new(), usize::MAX) == 0);
    assert_eq!(fd_count(), before, "descriptors leaked");
    assert!(matches!(e.remove_target(t), Err(EngineError::UnknownTarget(_))));
    let _ = std::fs::remove_dir_all(&dir);
}
