//! The `prober watch` file parser: watch files (YAML and JSON) and Kubernetes manifests.
//!
//! The parsers are prober-k8s's (`prober_k8s::load_watch_file`, `prober_k8s::manifest`), which
//! the `prober` binary calls: the fuzzed code is exactly the shipped code.
//!
//! Input: byte 0 picks the format (YAML watch file, JSON watch file, manifest), the rest is
//! the file. Checked beyond "no panic": every probe of a file that loads is a spec and a
//! schedule the engine accepts (the CLI must never hand the engine something it refuses).
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_k8s::manifest;
use prober_k8s::ports::PortMap;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let mut notes = Vec::new();
    let base = std::path::Path::new("/nonexistent-prober-fuzz");
    let plans = match mode % 3 {
        0 => prober_k8s::load_watch_file(
            text,
            false,
            "127.0.0.1",
            &PortMap::EMPTY,
            Some(base),
            &mut notes,
        ),
        1 => prober_k8s::load_watch_file(
            text,
            true,
            "127.0.0.1",
            &PortMap::EMPTY,
            Some(base),
            &mut notes,
        ),
        _ => manifest::load(text, "127.0.0.1", &PortMap::EMPTY, Some(base), &mut notes),
    };
    if let Ok(plans) = plans {
        assert!(!plans.is_empty());
        for plan in &plans {
            assert!(!plan.name.is_empty());
            for (role, spec, schedule) in &plan.probes {
                spec.validate().unwrap_or_else(|e| panic!("{}: invalid spec: {e}", plan.name));
                schedule
                    .validate(*role)
                    .unwrap_or_else(|e| panic!("{}: invalid schedule: {e}", plan.name));
            }
        }
    }
});
