//! `prober-target [--bind ADDR] [--port N] [--ignore-stdin]`: runs the scripted target server
//! (routes in the `prober-testkit` crate docs) for C and Go suites and benchmarks.
//!
//! Prints the bound port alone on the first line of stdout, then serves until stdin reaches EOF
//! (then exits 0) or a signal ends the process. `--ignore-stdin` serves until a signal instead
//! (for shells that give background jobs `/dev/null` as stdin). Usage errors exit 64.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use prober_testkit::TargetServer;

const USAGE: &str = "usage: prober-target [--bind ADDR] [--port N] [--ignore-stdin]";

struct Args {
    bind: IpAddr,
    port: u16,
    ignore_stdin: bool,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut args = Args { bind: IpAddr::V4(Ipv4Addr::LOCALHOST), port: 0, ignore_stdin: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline.clone().or_else(|| it.next()).ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--bind" => {
                let v = value("--bind")?;
                let v = v.trim_start_matches('[').trim_end_matches(']');
                args.bind = v.parse().map_err(|_| format!("--bind: not an IP address: {v}"))?;
            }
            "--port" => {
                let v = value("--port")?;
                args.port = v.parse().map_err(|_| format!("--port: not a port number: {v}"))?;
            }
            "--ignore-stdin" if inline.is_none() => args.ignore_stdin = true,
            "-h" | "--help" if inline.is_none() => return Ok(None),
            _ => return Err(format!("unknown argument: {arg}")),
        }
    }
    Ok(Some(args))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(args)) => args,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("prober-target: {msg}\n{USAGE}");
            return ExitCode::from(64);
        }
    };
    let server = match TargetServer::start_on(SocketAddr::new(args.bind, args.port)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "prober-target: cannot listen on {}: {e}",
                SocketAddr::new(args.bind, args.port)
            );
            return ExitCode::from(1);
        }
    };
    let mut out = io::stdout().lock();
    if writeln!(out, "{}", server.port()).and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    drop(out);
    if args.ignore_stdin {
        loop {
            std::thread::park();
        }
    }
    let mut buf = [0u8; 4096];
    let mut stdin = io::stdin().lock();
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    drop(server);
    ExitCode::SUCCESS
}
