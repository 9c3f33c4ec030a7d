//! The grpc-go health server now lives in `prober_testkit::grpc` (one copy for every test and
//! benchmark). This re-export remains only for the tests of other crates that still include this
//! file with `#[path]`; new tests use `prober_testkit::grpc::HealthServer` directly.
#![allow(unused_imports)]

pub use prober_testkit::grpc::HealthServer;
