//! Module options blackbox_exporter v0.28.0 has that `prober serve` refused before (issue 34,
//! section 3), each against a real server on loopback, judged by the lines a scrape reads.

use std::path::{Path, PathBuf};

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::grpc::HealthServer;

#[allow(dead_code)]
fn dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-blackbox-v028-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn exporter(yaml: &str, base: &Path) -> Exporter {
    let modules = Modules::parse(yaml, base).unwrap_or_else(|e| panic!("refused: {e}"));
    Exporter::start(modules).unwrap()
}

fn get(e: &Exporter, query: &str) -> Response {
    e.handle(&Request { path: "/probe", query, headers: &[] })
}

/// The value of the sample `name` (with its labels, as written) in an exposition.
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

/// The whole family `name`: its HELP, TYPE and sample lines, in order.
fn family(body: &str, name: &str) -> Vec<String> {
    body.lines()
        .filter(|l| {
            l.strip_prefix("# HELP ")
                .or_else(|| l.strip_prefix("# TYPE "))
                .unwrap_or(l)
                .strip_prefix(name)
                .is_some_and(|r| r.starts_with([' ', '{']))
        })
        .map(str::to_string)
        .collect()
}

/// `grpc.metadata` goes with the health check: grpc-go's server answers Unauthenticated
/// unless it receives each pair (a `-bin` value as the bytes written, which go base64-encoded).
#[test]
fn grpc_metadata_is_sent() {
    let g = HealthServer::start(&[
        "-require-metadata",
        "x-tenant=blue",
        "-require-metadata",
        "key2-bin=test",
    ]);
    let e = exporter(
        "modules:
  with_md:
    prober: grpc
    grpc:
      metadata:
        X-Tenant: [blue]
        key2-bin: [test]
  without_md:
    prober: grpc
",
        Path::new("."),
    );
    let addr = format!("127.0.0.1:{}", g.port());
    let r = get(&e, &format!("module=with_md&target={addr}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("1"), "{}", r.body);
    assert_eq!(sample(&r.body, "probe_grpc_status_code").as_deref(), Some("0"));
    // The same server refuses a request without them: the metadata is what passed.
    let r = get(&e, &format!("module=without_md&target={addr}"));
    assert_eq!(sample(&r.body, "probe_success").as_deref(), Some("0"), "{}", r.body);
    assert_eq!(
        family(&r.body, "probe_grpc_status_code").last().map(String::as_str),
        Some("probe_grpc_status_code 16"),
        "Unauthenticated"
    );
}

/// A key gRPC reserves is refused at start, with the module's name, never dropped in silence.
#[test]
fn reserved_grpc_metadata_is_refused() {
    let yaml = "modules:\n  m:\n    prober: grpc\n    grpc: {metadata: {grpc-timeout: [1S]}}\n";
    let err = Modules::parse(yaml, Path::new(".")).unwrap_err();
    assert!(err.contains("module \"m\": grpc.metadata:"), "{err}");
}
