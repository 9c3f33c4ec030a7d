//! The help of `prober` itself; each command's is written from its flag table
//! ([`crate::flags`]).

pub const MAIN: &str = "\
prober: kubelet-grade health probes (TCP, HTTP(S), gRPC, exec) from the command line

Usage:
  prober check [OPTIONS] TARGET        run one probe, print one line, exit with its result
  prober watch [OPTIONS] FILE          run the probes of a watch file (YAML or JSON)
  prober watch [OPTIONS] --manifest FILE
                                       run the probes of a Kubernetes manifest
  prober serve --config FILE --listen ADDR
                                       blackbox_exporter's /probe interface on this engine
  prober --help | prober --version

Run 'prober check --help', 'prober watch --help' or 'prober serve --help' for details.
";
