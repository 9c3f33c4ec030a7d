//! The `prober` command as a library: the binary (`src/main.rs`) only calls [`main`].
//!
//! `prober check TARGET` runs one probe and exits with its result (a HEALTHCHECK for images
//! without curl); `prober watch FILE` runs periodic probes with the kubelet's rules from a
//! watch file or a Kubernetes manifest. See `docs/cli.md`.
//!
//! Watch files and Kubernetes manifests are read by `prober_k8s`, and the watch's runtime
//! (target state, hooks, health, metrics, systemd) is `prober_watch`'s; this crate parses the
//! command line, wires and prints.
#![warn(missing_docs)]

mod args;
mod check;
mod check_flags;
mod duration;
mod extensions;
mod flags;
mod kinds;
mod output;
mod serve;
mod serve_reload;
mod signals;
mod usage;
mod watch;
mod watch_engine;

use std::ffi::OsString;

use args::{Failure, Parser};

/// Runs the command with `args` (the arguments after the program's name), prints what it has
/// to say, and returns the process's exit status: 0 success, 1 failure, 2 unknown, 64 usage
/// error or bad file, 66 file not readable, 70 internal error (see `docs/cli.md`).
pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    match run(args.into_iter().collect()) {
        Ok(code) => code,
        Err(f) => {
            eprintln!("prober: {}", args::escape_for_terminal(&f.message));
            f.code
        }
    }
}

fn run(mut argv: Vec<OsString>) -> Result<i32, Failure> {
    if argv.is_empty() {
        return Err(Failure::usage("", "missing command: check or watch"));
    }
    let rest = argv.split_off(1);
    let cmd = argv.swap_remove(0);
    match cmd.to_string_lossy().as_ref() {
        "-h" | "--help" => {
            print!("{}", usage::MAIN);
            Ok(0)
        }
        "help" => {
            match rest.first().and_then(|c| c.to_str()) {
                Some("check") => print!("{}", check_flags::CHECK.help()),
                Some("watch") => print!("{}", watch::WATCH.help()),
                Some("serve") => print!("{}", serve::SERVE.help()),
                _ => print!("{}", usage::MAIN),
            }
            Ok(0)
        }
        "-V" | "--version" => {
            println!("prober {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        "check" => match check_flags::parse(Parser::new(rest, "check"))? {
            Some(a) => check::run(&a),
            None => Ok(0),
        },
        "watch" => match watch::parse(Parser::new(rest, "watch"))? {
            Some(a) => watch::run(&a),
            None => Ok(0),
        },
        "serve" => match serve::parse(Parser::new(rest, "serve"))? {
            Some(a) => serve::run(&a),
            None => Ok(0),
        },
        other if other.starts_with('-') => {
            Err(Failure::usage("", format!("unknown option '{other}'")))
        }
        other => Err(Failure::usage(
            "",
            format!("unknown command '{other}' (expected check, watch or serve)"),
        )),
    }
}

// The README's examples are compiled and run with the doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
