//! `prober serve`: blackbox_exporter's `/probe?target=T&module=M` interface on libprober's
//! engine.
//!
//! - [`Modules::parse`] reads blackbox_exporter's module file (`modules:` with `prober: http |
//!   tcp | grpc | unix | icmp | dns` and their options), refusing at start what the engine does
//!   not do (HTTP/3) with the module's name, and an `allow:` list
//!   per module (ours:
//!   host patterns, networks, ports) that keeps `/probe` from being an open proxy.
//! - [`Exporter::handle`] answers `/probe`, `/metrics`, `/config`, `/logs` and `/` as a plain function
//!   of the request, with blackbox_exporter's metric names and meanings, its timeout rule and
//!   its `&debug=true` (kept for the last probes, for `/logs`); any HTTP server can carry it.
//! - [`Exporter::reload`] puts new modules in force (probes in flight keep theirs) or records
//!   a failed reload, for blackbox_exporter's `config_last_reload_*` gauges; when to read the
//!   file again (a signal, `POST /-/reload`) is the caller's choice.

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod answer;
mod budget;
mod compression;
mod config;
mod dns_facts;
mod dns_module;
mod driven;
mod exporter;
mod facts;
mod grpc_module;
mod history;
mod http_module;
mod http_verdict;
mod icmp_module;
mod ip_protocol;
mod module;
mod modules;
mod oauth2_module;
// The numbers of the answer's text, pushed without `core::fmt`: the exposition writer's.
use prober_exposition::numbers;
mod options;
mod plans;
mod proxy_module;
mod qr_facts;
mod reload;
mod request;
mod shown;
mod target;
mod target_spec;
mod tcp_module;
mod unix_module;
mod unprobed;

pub use budget::PROBE_OUTPUT_BUDGET;
pub use driven::EngineDriver;
pub use exporter::{Exporter, ProbeCancel};
pub use history::{DEFAULT_HISTORY_LIMIT, MAX_KEPT_OUTPUT};
pub use http_module::DEFAULT_BODY_LIMIT;
pub use module::{Module, Prober, TargetError};
pub use modules::{MAX_FILE_LEN, Modules};
pub use reload::Reload;
pub use request::{
    DEFAULT_TIMEOUT_OFFSET, MAX_SCRAPE_TIMEOUT, Request, Response, parse_query, timeout,
};
pub use target::Unprobeable;
