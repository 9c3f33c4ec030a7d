//! What a run allocates does not grow with the host's environment: the command gets the host's
//! `environ` itself (no spec variables) or pointers into it (with some), never a copy of every
//! variable per run. A node agent's environment holds dozens of variables (a kubelet's, a
//! container's), and copying them cost two allocations per variable and run: half of a
//! `/bin/true` run's parent-side instructions, with the zeroed read buffer.
//!
//! Alone in its binary: [`CountingAllocator`] is the global allocator here, and the one test
//! sets host variables (no other thread of this binary reads the environment meanwhile).

use std::time::Duration;

use prober_core::{ExecSpec, ProbeResult};
use prober_exec::ExecProbe;
use prober_io::run_to_completion;
use prober_testkit::allocations::{CountingAllocator, count_allocations};

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// Host variables set for the test: far more than any bound below.
const HOST_VARS: usize = 300;

fn run(spec: &ExecSpec, expect_output: &[u8]) -> u64 {
    let ((), allocations) = count_allocations(|| {
        let mut probe = ExecProbe::new(spec, Duration::from_secs(30), 4096);
        let o = run_to_completion(&mut probe);
        assert_eq!(o.result, ProbeResult::Success, "{o:?}");
        assert_eq!(o.output, expect_output, "{o:?}");
    });
    allocations
}

#[test]
fn a_run_allocates_the_same_whatever_the_size_of_the_host_environment() {
    for i in 0..HOST_VARS {
        // SAFETY: the only test of this binary, and nothing else of it runs meanwhile: no other
        // thread reads or writes the environment while it is changed.
        unsafe { std::env::set_var(format!("PROBER_EXEC_ALLOC_TEST_{i}"), "x".repeat(40)) };
    }
    // The host's variables reach the command, with the spec's added (and winning).
    let host_only = ExecSpec {
        argv: vec!["/bin/sh".into(), "-c".into(), "printf %s \"$PROBER_EXEC_ALLOC_TEST_7\"".into()],
        env: Vec::new(),
        cwd: None,
        namespaces_of: None,
        cgroup: None,
    };
    let mut with_spec = host_only.clone();
    with_spec.argv[2] =
        "printf %s/%s \"$PROBER_EXEC_ALLOC_TEST_7\" \"$PROBER_EXEC_ALLOC_TEST_8\"".into();
    with_spec.env = vec![("PROBER_EXEC_ALLOC_TEST_8".into(), "spec".into())];
    let x40 = "x".repeat(40);

    // The first run starts the reaper thread and fills lazily made statics.
    run(&host_only, x40.as_bytes());
    let host_only_allocations = run(&host_only, x40.as_bytes());
    let with_spec_allocations = run(&with_spec, format!("{x40}/spec").as_bytes());
    // Copying the environment made at least two allocations per variable (600 here); what a
    // run allocates otherwise (argv, the boxed pieces of a run, the envp array) is a few dozen.
    assert!(
        host_only_allocations < 60,
        "a run without spec variables made {host_only_allocations} allocations with \
         {HOST_VARS} host variables"
    );
    assert!(
        with_spec_allocations < 60,
        "a run with a spec variable made {with_spec_allocations} allocations with \
         {HOST_VARS} host variables"
    );
}
