//! HTTP/2: HTTPS negotiated by ALPN and h2c with prior knowledge, against Go's own net/http
//! server (the `-http` mode of prober-testkit's Go fixture), with the same status, body
//! limit, redirect and expectation rules as HTTP/1.1.
#![cfg(feature = "tls")]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use prober_core::{
    HttpResponseVersion, HttpVersion, Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, StatusSet,
};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::grpc::HealthServer;
use prober_testkit::tls::self_signed;

const TIMEOUT: Duration = Duration::from_secs(5);

fn run(spec: &ProbeSpec) -> Outcome {
    let ProbeKind::Http(h) = &spec.kind else { panic!("not an HTTP spec") };
    let mut m = HttpProbe::new(h, spec.timeout, spec.output_limit);
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    assert!(started.elapsed() < spec.timeout + Duration::from_secs(10), "probe hung: {o:?}");
    o
}

fn spec(url: &str, version: HttpVersion) -> ProbeSpec {
    let mut s = ProbeSpec::http(url).unwrap().with_timeout(TIMEOUT).unwrap();
    s.set_http_version(version).unwrap();
    s
}

fn get(url: &str, version: HttpVersion) -> Outcome {
    run(&spec(url, version))
}

fn out(o: &Outcome) -> String {
    String::from_utf8_lossy(&o.output).into_owned()
}

/// Go's server with TLS: HTTP/1.1 and h2 by ALPN.
fn tls_server(tag: &str) -> HealthServer {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-http-h2-{}-{tag}", std::process::id()));
    let (cert, key) = self_signed(&["localhost", "127.0.0.1"]).write_files(&dir, "server");
    HealthServer::start(&[
        "-http",
        "-tls-cert",
        cert.to_str().unwrap(),
        "-tls-key",
        key.to_str().unwrap(),
    ])
}

/// Go's server in plain text: HTTP/1.1 and h2c with prior knowledge.
fn plain_server() -> HealthServer {
    HealthServer::start(&["-http"])
}

#[test]
fn https_speaks_h2_when_the_server_picks_it_and_http1_when_forced() {
    let s = tls_server("alpn");
    let url = format!("https://127.0.0.1:{}/proto", s.port());
    let o = get(&url, HttpVersion::Auto);
    assert_eq!(
        (o.result, out(&o), o.http_status),
        (ProbeResult::Success, "HTTP/2.0".into(), Some(200))
    );
    assert_eq!(o.http_version, Some(HttpResponseVersion::Http2));
    let o = get(&url, HttpVersion::Http1);
    assert_eq!((o.result, out(&o)), (ProbeResult::Success, "HTTP/1.1".into()));
    assert_eq!(o.http_version, Some(HttpResponseVersion::Http11));
    // Plain http:// stays HTTP/1.1 unless h2c is asked for.
    let p = plain_server();
    let url = format!("http://127.0.0.1:{}/proto", p.port());
    assert_eq!(out(&get(&url, HttpVersion::Auto)), "HTTP/1.1");
    assert_eq!(out(&get(&url, HttpVersion::H2c)), "HTTP/2.0");
}

#[test]
fn h2_request_carries_the_kubelet_headers_without_connection() {
    for (s, scheme, version) in [
        (tls_server("echo"), "https", HttpVersion::Auto),
        (plain_server(), "http", HttpVersion::H2c),
    ] {
        let url = format!("{scheme}://127.0.0.1:{}/echo", s.port());
        let mut sp = spec(&url, version);
        if let ProbeKind::Http(h) = &mut sp.kind {
            h.headers = vec![
                ("X-Custom".into(), "v1".into()),
                ("Host".into(), "virtual.example".into()),
                ("Connection".into(), "keep-alive".into()),
            ];
        }
        let o = run(&sp);
        assert_eq!(o.result, ProbeResult::Success, "{o:?}");
        assert_eq!(
            out(&o),
            format!(
                "HTTP/2.0 GET virtual.example /echo\naccept: */*\nuser-agent: {}\nx-custom: v1",
                prober_core::DEFAULT_USER_AGENT
            )
        );
    }
}

#[test]
fn statuses_map_as_on_http1() {
    let s = plain_server();
    let base = format!("http://127.0.0.1:{}", s.port());
    let o = get(&format!("{base}/status/503"), HttpVersion::H2c);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status));
    assert_eq!(o.message, "HTTP probe failed with statuscode: 503");
    assert_eq!(out(&o), "status 503 over HTTP/2.0");
    let o = get(&format!("{base}/status/204"), HttpVersion::H2c);
    assert_eq!((o.result, o.http_status), (ProbeResult::Success, Some(204)));
    // Expectations apply to the HTTP/2 response as to an HTTP/1.1 one.
    let mut sp = spec(&format!("{base}/status/503"), HttpVersion::H2c);
    sp.set_expect_status(StatusSet::parse("503").unwrap()).unwrap();
    assert_eq!(run(&sp).result, ProbeResult::Success);
}

#[test]
fn body_limit_holds_past_the_initial_window() {
    let s = tls_server("big");
    // 200 KiB: past HTTP/2's 65535-byte initial window; the default limit keeps 10240 bytes.
    let url = format!("https://127.0.0.1:{}/big?n=204800", s.port());
    let o = get(&url, HttpVersion::Auto);
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(o.output.len(), 10240);
    // A larger limit reads the whole body, window updates and all.
    let mut sp = spec(&url, HttpVersion::Auto);
    sp.output_limit = 300 * 1024;
    let o = run(&sp);
    assert_eq!((o.result, o.output.len(), o.truncated), (ProbeResult::Success, 204800, false));
}

#[test]
fn padded_data_frames_are_read_to_the_end() {
    // Go's server never pads; this raw-frame one sends 3,000 body bytes one per DATA frame,
    // each with 255 bytes of padding (771 kB of frames), as the windows allow: the padding
    // must be given back with WINDOW_UPDATE or it stalls after the first 65,535 bytes.
    let body: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let (port, server) = prober_testkit::h2::padding_server(body.clone(), 255);
    let o = get(&format!("http://127.0.0.1:{port}/padded"), HttpVersion::H2c);
    let sent = server.join().unwrap();
    assert_eq!(
        (o.result, o.http_status, o.output_total, sent),
        (ProbeResult::Success, Some(200), 3000, 3000),
        "{}",
        o.message
    );
    assert_eq!(o.output, body);
}

#[test]
fn redirects_are_followed_on_h2_and_h2c() {
    let s = tls_server("redirect");
    let base = format!("https://127.0.0.1:{}", s.port());
    let o = get(&format!("{base}/redirect?to=/status/200"), HttpVersion::Auto);
    assert_eq!((o.result, out(&o)), (ProbeResult::Success, "status 200 over HTTP/2.0".into()));
    // To another host: not followed, a Warning with the redirect's body.
    let o = get(&format!("{base}/redirect?to=https://localhost:1/"), HttpVersion::Auto);
    assert_eq!(o.result, ProbeResult::Warning, "{o:?}");
    assert!(o.message.starts_with("Probe terminated redirects, Response body: "), "{}", o.message);
    let p = plain_server();
    let base = format!("http://127.0.0.1:{}", p.port());
    let o = get(&format!("{base}/redirect?to=/status/201"), HttpVersion::H2c);
    assert_eq!((o.result, out(&o)), (ProbeResult::Success, "status 201 over HTTP/2.0".into()));
}

#[test]
fn h2c_against_an_http1_only_server_fails_with_the_cause() {
    // grpc-go's fixture in -http1 mode speaks HTTP/1.1 only.
    let s = HealthServer::start(&["-http1"]);
    let o = get(&format!("http://127.0.0.1:{}/", s.port()), HttpVersion::H2c);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Protocol), "{o:?}");
    // Go's HTTP/2 client's words (the kubelet's ProbeH2C against such a server).
    assert_eq!(
        o.message,
        format!(
            "Get \"http://127.0.0.1:{}/\": http2: failed reading the frame payload: http2: \
             frame too large, note that the frame header looked like an HTTP/1.1 header",
            s.port()
        )
    );
}

#[test]
fn h2c_deadline_covers_a_slow_answer() {
    let s = plain_server();
    let url = format!("http://127.0.0.1:{}/slow?d=60s", s.port());
    let mut sp = spec(&url, HttpVersion::H2c);
    sp.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let o = run(&sp);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert!(
        o.message.ends_with("(Client.Timeout exceeded while awaiting headers)"),
        "{}",
        o.message
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn h2c_is_refused_on_https_urls() {
    let mut s = ProbeSpec::http("https://127.0.0.1:1/").unwrap();
    let e = s.set_http_version(HttpVersion::H2c).unwrap_err();
    assert_eq!(
        e.to_string(),
        "HTTP/2 with prior knowledge (h2c) is only supported with http:// URLs"
    );
}

#[test]
fn version_is_the_final_responses_after_an_http1_hop() {
    // An HTTP/1.1 redirect (prober-testkit's server) to Go's server, which speaks h2 by ALPN:
    // the outcome's version is the final response's, not the first hop's.
    let h2 = tls_server("version-after-h1");
    let h1 = prober_testkit::TargetServer::start();
    let to = format!("https://127.0.0.1:{}/proto", h2.port());
    let url = h1.url(&format!("/redirect?loc={to}"));
    let o = get(&url, HttpVersion::Auto);
    assert_eq!((o.result, out(&o)), (ProbeResult::Success, "HTTP/2.0".into()), "{o:?}");
    assert_eq!((o.http_redirects, o.http_version), (1, Some(HttpResponseVersion::Http2)));
    // Go's /proto answer declares its length: HTTP/2's content-length is read too.
    assert_eq!(o.http_content_length, Some(o.output_total), "{o:?}");
}

#[test]
fn gzip_bodies_are_decoded_on_h2_and_h2c_and_bounded_by_the_limit() {
    use prober_core::Compression;
    for (s, scheme, version) in [
        (tls_server("gzip"), "https", HttpVersion::Auto),
        (plain_server(), "http", HttpVersion::H2c),
    ] {
        // Compressed by Go's compress/gzip: an encoder other than the testkit's.
        let url = format!("{scheme}://127.0.0.1:{}/gzip?n=5000", s.port());
        let mut sp = spec(&url, version);
        sp.set_compression(Some(Compression::Gzip)).unwrap();
        let o = run(&sp);
        assert_eq!(o.http_version, Some(HttpResponseVersion::Http2), "{o:?}");
        assert_eq!(
            (o.result, out(&o), o.truncated),
            (ProbeResult::Success, "a".repeat(5000), false)
        );
        // 1 GiB in a few MiB of frames: decoded to the limit, then the run ends on its own.
        let url = format!("{scheme}://127.0.0.1:{}/gzip?n=1073741824", s.port());
        let mut sp = spec(&url, version);
        sp.set_compression(Some(Compression::Gzip)).unwrap();
        sp.output_limit = 1 << 20;
        let o = run(&sp);
        assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{}", o.message);
        assert_eq!((o.output.len(), o.truncated), (1 << 20, true));
    }
}
