//! Probes one target and prints the outcome.
//!
//! ```text
//! cargo run -p prober --example check -- http://127.0.0.1:8080/healthz
//! cargo run -p prober --example check -- tcp://127.0.0.1:5432
//! cargo run -p prober --example check -- -- /bin/sh -c 'exit 1'
//! ```
//! Exit status: 0 success or warning, 1 failure, 2 unknown, 64 usage error.

use prober::{ProbeResult, ProbeSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spec = match parse(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "check: {e}\nusage: check http://HOST[:PORT]/PATH | tcp://HOST:PORT | -- CMD [ARG...]"
            );
            std::process::exit(64);
        }
    };
    let o = prober::check(&spec);
    let extra =
        if o.output.is_empty() { String::new() } else { format!(" output={:?}", o.output_lossy()) };
    println!(
        "{} reason={} message={:?} duration={:?}{extra}",
        o.result, o.reason, o.message, o.timings.total
    );
    std::process::exit(match o.result {
        ProbeResult::Success | ProbeResult::Warning => 0,
        ProbeResult::Failure => 1,
        ProbeResult::Unknown => 2,
    });
}

fn parse(args: &[String]) -> Result<ProbeSpec, String> {
    match args.first().map(String::as_str) {
        None => Err("no target given".into()),
        Some("--") => ProbeSpec::exec(&args[1..]).map_err(|e| e.to_string()),
        Some(t) if t.starts_with("tcp://") => {
            let hp = &t["tcp://".len()..];
            let (host, port) = hp.rsplit_once(':').ok_or("tcp target needs HOST:PORT")?;
            let port: i64 = port.parse().map_err(|_| format!("invalid port {port:?}"))?;
            ProbeSpec::tcp(host, port).map_err(|e| e.to_string())
        }
        Some(t) => ProbeSpec::http(t).map_err(|e| e.to_string()),
    }
}
