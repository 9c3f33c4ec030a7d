//! The Kubernetes probe model as a library: the probe fields of a container (`Probe`, `env`,
//! `ports`) read from `prober watch` files and from Pod manifests (Pod, Deployment,
//! StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob, lists), and
//! translated into `prober` specs and schedules with the kubelet's defaults and rules.
//!
//! - [`load_watch_file`]: a watch file (YAML or JSON) into [`TargetPlan`]s;
//! - [`manifest::load`]: every container's probes of a manifest, as targets `NAME/CONTAINER`;
//! - [`ports::PortMap`]: container ports mapped to where they are published (`--port`);
//! - [`yaml_limits`]: what a file may cost before it is built (nesting and aliases), judged on
//!   the YAML parser's own events: prober-yaml's, which every YAML reader of the project uses,
//!   re-exported here under its former name.
//!
//! Errors are one line each and say where: serde's line and column for syntax, type and field
//! errors, the target or container and the field's path for the rules checked after reading.
//! The `prober` command reads its files through this crate; so may any agent that holds a Pod
//! spec.
//!
//! ```
//! use prober_k8s::{load_watch_file, ports::PortMap};
//!
//! let text = "targets:\n- name: db\n  readinessProbe: {tcpSocket: {port: 5432}, periodSeconds: 5}\n";
//! let mut notes = Vec::new();
//! let plans = load_watch_file(text, false, "127.0.0.1", &PortMap::EMPTY, None, &mut notes).unwrap();
//! assert_eq!(plans[0].name, "db");
//! let (role, spec, schedule) = &plans[0].probes[0];
//! assert_eq!(*role, prober::Role::Readiness);
//! assert_eq!(schedule.period, std::time::Duration::from_secs(5));
//! # let _ = spec;
//! ```

#![warn(missing_docs)]

mod dns_icmp;
mod extensions;
mod ints;
pub mod manifest;
mod model;
pub mod ports;
mod translate;
mod watch_file;
pub use prober_yaml::limits as yaml_limits;

pub use translate::{LoadError, OnChange, TargetPlan, bare_host};
pub use watch_file::load_watch_file;

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
