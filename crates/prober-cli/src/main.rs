//! `prober`: kubelet-grade health probes from the command line (see the `prober_cli` library
//! and `docs/cli.md`).

fn main() {
    std::process::exit(prober_cli::main(std::env::args_os().skip(1)));
}
