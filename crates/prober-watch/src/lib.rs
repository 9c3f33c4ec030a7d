//! The runtime of `prober watch` as a library: what a Rust host that runs the watch as a
//! sidecar needs besides the engine, and what the `prober` command wires to its command line.
//!
//! It owns:
//!
//! - [`TargetState`]: what the watch knows of each target (published values, the last runs,
//!   the first verdict) and the kubelet's started / ready / live rules over them;
//! - [`Tracker`]: the event-to-state step, from the engine's events to the targets' state, the
//!   metrics, the health table and the hooks, with a [`Notice`] for each event worth a line
//!   (how a line looks is the host's);
//! - [`hooks`]: `--on-change` commands, run as one-shot exec probes on the watch's engine, one
//!   at a time per target, the latest state never missed;
//! - [`health`]: `/readyz` and `/livez` answered as the Kubernetes API server answers them;
//! - [`metrics`]: the Prometheus families of a watch and their `/metrics` route;
//! - [`endpoints`]: the servers of those two (one listener when they share an address), and the
//!   set-up every endpoint server shares with `prober serve`: web config, bind;
//! - [`systemd`]: `Type=notify` readiness, status and watchdog;
//! - [`facts`]: DNS and ICMP outcomes' facts in words (rcode, answers, ping's summary);
//! - [`escape`]: text made safe for a terminal, which every human line goes through.
//!
//! It does not read watch files or manifests (`prober_k8s` does), install signal handlers, or
//! print lines: the host does those.

pub mod endpoints;
pub mod escape;
pub mod facts;
pub mod health;
pub mod hooks;
pub mod metrics;
pub mod systemd;
pub mod target_state;
pub mod tracker;

pub use target_state::TargetState;
pub use tracker::{Notice, Tracker};
