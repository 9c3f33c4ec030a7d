//! `prober`: kubelet-grade health probes from the command line.
//!
//! `prober check TARGET` runs one probe and exits with its result (a HEALTHCHECK for images
//! without curl); `prober watch FILE` runs periodic probes with the kubelet's rules from a
//! watch file or a Kubernetes manifest. See `docs/cli.md`.

mod args;
mod check;
mod config;
mod duration;
mod extensions;
mod manifest;
mod metrics;
mod signals;
mod usage;
mod watch;

use args::{Args, Failure};

fn main() {
    let code = match run() {
        Ok(code) => code,
        Err(f) => {
            eprintln!("prober: {}", args::escape_for_terminal(&f.message));
            f.code
        }
    };
    std::process::exit(code);
}

fn run() -> Result<i32, Failure> {
    let mut argv = Vec::new();
    for a in std::env::args_os().skip(1) {
        match a.into_string() {
            Ok(s) => argv.push(s),
            Err(a) => {
                return Err(Failure::usage("", format!("argument {a:?} is not valid UTF-8")));
            }
        }
    }
    let mut argv = argv.into_iter();
    let Some(cmd) = argv.next() else {
        return Err(Failure::usage("", "missing command: check or watch"));
    };
    let rest: Vec<String> = argv.collect();
    match cmd.as_str() {
        "-h" | "--help" => {
            print!("{}", usage::MAIN);
            Ok(0)
        }
        "help" => {
            match rest.first().map(String::as_str) {
                Some("check") => print!("{}", usage::CHECK),
                Some("watch") => print!("{}", usage::WATCH),
                _ => print!("{}", usage::MAIN),
            }
            Ok(0)
        }
        "-V" | "--version" => {
            println!("prober {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        "check" => match check::parse(Args::new(rest, "check"))? {
            Some(a) => check::run(&a),
            None => Ok(0),
        },
        "watch" => match watch::parse(Args::new(rest, "watch"))? {
            Some(a) => watch::run(&a),
            None => Ok(0),
        },
        other if other.starts_with('-') => {
            Err(Failure::usage("", format!("unknown option '{other}'")))
        }
        other => {
            Err(Failure::usage("", format!("unknown command '{other}' (expected check or watch)")))
        }
    }
}
