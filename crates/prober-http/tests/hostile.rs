//! Hostile peers: servers that never answer, drip, never stop, lie about framing, send what
//! no parser should accept, bounce between host names or reset mid-response.
//!
//! Every probe must end by its deadline (a timeout exactly at it, everything else well
//! before), with the precise result, reason and message asserted here. Memory must stay
//! bounded: `memory_stays_bounded_under_every_hostile_peer` runs every case again in a child
//! process of its own (so that no other test shares its address space), after resetting the
//! peak RSS (`echo 5 > /proc/self/clear_refs`), and checks that `VmHWM` grew by less than
//! 50 MiB and that no descriptor was left behind.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use prober_core::{Outcome, ProbeKind, ProbeResult, ProbeSpec, Reason, RedirectPolicy};
use prober_http::HttpProbe;
use prober_io::run_to_completion;
use prober_testkit::TargetServer;
use prober_testkit::bounds::{ends_by, gives_up_after};

const LIMIT: usize = 10240;
const HEADERS_TIMEOUT: &str =
    "context deadline exceeded (Client.Timeout exceeded while awaiting headers)";
const BODY_TIMEOUT: &str =
    "context deadline exceeded (Client.Timeout or context cancellation while reading body)";

/// Runs an HTTP probe of `url` with `timeout` and checks that it ended by its deadline: no
/// sooner than it for a timeout, within [`ends_by`] of its start in any case.
fn probe(url: &str, timeout: Duration, policy: RedirectPolicy) -> Outcome {
    let mut spec = ProbeSpec::http(url).unwrap().with_timeout(timeout).unwrap();
    spec.set_redirect_policy(policy);
    let ProbeKind::Http(h) = &spec.kind else { unreachable!() };
    let mut m = HttpProbe::new(h, spec.timeout, spec.output_limit);
    let started = Instant::now();
    let o = run_to_completion(&mut m);
    let took = started.elapsed();
    assert!(
        took < ends_by(timeout),
        "{url}: ended {took:?} after start, deadline {timeout:?}: {o:?}"
    );
    if o.reason == Reason::Timeout {
        assert!(took >= timeout, "{url}: timed out early, after {took:?}");
    }
    o
}

fn get(url: &str, timeout: Duration) -> Outcome {
    probe(url, timeout, RedirectPolicy::SameHost)
}

#[track_caller]
fn assert_failure(o: &Outcome, reason: Reason, message: &str) {
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Failure, reason, message),
        "{o:?}"
    );
}

const SHORT: Duration = Duration::from_millis(1500);
const LONG: Duration = Duration::from_secs(10);

// ---- the cases, each a function so that the memory test can run them all again ----------

/// A listener that never accepts: the kernel completes the handshake, nobody reads.
fn never_accepted() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let o = get(&url, SHORT);
    assert_failure(&o, Reason::Timeout, &format!("Get \"{url}\": {HEADERS_TIMEOUT}"));
    assert_eq!((o.http_status, o.timings.first_byte), (None, None));
    assert!(o.timings.connect.is_some(), "connected: {o:?}");
}

/// Accepts, reads the request, never answers.
fn accepted_never_answered(s: &TargetServer) {
    let url = s.url("/hostile/silent");
    let o = get(&url, SHORT);
    assert_failure(&o, Reason::Timeout, &format!("Get \"{url}\": {HEADERS_TIMEOUT}"));
    assert_eq!(o.http_status, None);
}

/// A head at one byte per second, never complete.
fn head_one_byte_per_second(s: &TargetServer) {
    let url = s.url("/hostile/trickle-head/1000");
    let o = get(&url, Duration::from_millis(2500));
    assert_failure(&o, Reason::Timeout, &format!("Get \"{url}\": {HEADERS_TIMEOUT}"));
    let first = o.timings.first_byte.expect("bytes came");
    assert!(first >= Duration::from_millis(900), "first byte after {first:?}");
}

/// A body at one byte per second: what came is kept.
fn body_one_byte_per_second(s: &TargetServer) {
    let url = s.url("/drip/100/1000");
    let o = get(&url, Duration::from_millis(2500));
    assert_failure(&o, Reason::Timeout, &format!("Get \"{url}\": {BODY_TIMEOUT}"));
    assert_eq!(o.http_status, Some(200));
    assert!((1..=3).contains(&o.output.len()), "{:?}", o.output);
    assert!(o.output.iter().all(|&b| b == b'a'));
}

/// Header lines without end, long or short: both hit the 64 KiB head limit (the number of lines
/// is bounded by it alone, as in Go, and such a head is parsed once it ends, not once a line).
fn endless_headers(s: &TargetServer) {
    let url = s.url("/hostile/endless-headers/1000");
    assert_failure(
        &get(&url, LONG),
        Reason::Protocol,
        &format!("Get \"{url}\": net/http: server response headers exceeded 65536 bytes; aborted"),
    );
    let url = s.url("/hostile/endless-headers/16");
    assert_failure(
        &get(&url, LONG),
        Reason::Protocol,
        &format!("Get \"{url}\": net/http: server response headers exceeded 65536 bytes; aborted"),
    );
}

/// A status line that never ends, and one over 64 KiB.
fn long_status_line(s: &TargetServer) {
    for n in [70_000u64, 1 << 32] {
        let url = s.url(&format!("/hostile/long-status-line/{n}"));
        assert_failure(
            &get(&url, LONG),
            Reason::Protocol,
            &format!(
                "Get \"{url}\": net/http: server response headers exceeded 65536 bytes; aborted"
            ),
        );
    }
    // Just under the limit is a response like any other.
    let o = get(&s.url("/hostile/long-status-line/65000"), LONG);
    assert_eq!((o.result, o.output.as_slice()), (ProbeResult::Success, &b"ok"[..]), "{o:?}");
}

/// An endless chunked body: read to the output limit, then the status decides (the kubelet's
/// `ReadAtMost`): not an error, and over at once.
fn endless_chunked_data(s: &TargetServer) {
    let o = get(&s.url("/hostile/endless-chunked/data"), LONG);
    assert_eq!(
        (o.result, o.reason, o.message.as_str()),
        (ProbeResult::Success, Reason::None, ""),
        "{o:?}"
    );
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated && o.output_total > LIMIT as u64, "{o:?}");
    let o = get(&s.url("/hostile/endless-chunked/data?status=503"), LONG);
    assert_failure(&o, Reason::Status, "HTTP probe failed with statuscode: 503");
    assert_eq!((o.output.len(), o.truncated, o.http_status), (LIMIT, true, Some(503)));
}

/// Endless chunk framing that carries no body byte: refused at 16 KiB, not read forever.
fn endless_chunked_framing(s: &TargetServer) {
    for (kind, detail) in [
        ("extensions", "chunk size lines and extensions larger than 16 KiB"),
        ("zeros", "chunk size lines and extensions larger than 16 KiB"),
        ("trailers", "chunked trailers larger than 16 KiB"),
    ] {
        let url = s.url(&format!("/hostile/endless-chunked/{kind}"));
        let o = get(&url, LONG);
        assert_failure(
            &o,
            Reason::Protocol,
            &format!("Get \"{url}\": malformed chunked encoding: {detail}"),
        );
        assert_eq!(o.http_status, Some(200));
    }
}

/// A chunk size of 2^64 is refused; 2^64-1 is a (huge) chunk read up to the output limit.
fn chunk_size_2_64(s: &TargetServer) {
    let url = s.url("/hostile/chunk-size/10000000000000000");
    assert_failure(
        &get(&url, LONG),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": malformed chunked encoding: invalid chunk size: larger than 64 bits"
        ),
    );
    let url = s.url(&format!("/hostile/chunk-size/{}", "0".repeat(40) + "10000000000000000"));
    assert_failure(
        &get(&url, LONG),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": malformed chunked encoding: invalid chunk size: larger than 64 bits"
        ),
    );
    let o = get(&s.url("/hostile/chunk-size/ffffffffffffffff"), LONG);
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!((o.output.len(), o.truncated), (LIMIT, true));
}

/// Duplicate Content-Length: the same value twice is one length (as Go); different values are
/// refused (request smuggling territory).
fn duplicate_and_conflicting_content_length(s: &TargetServer) {
    let o = get(&s.url("/hostile/content-length/5/5"), LONG);
    assert_eq!((o.result, o.output.as_slice()), (ProbeResult::Success, &b"aaaaa"[..]), "{o:?}");
    let url = s.url("/hostile/content-length/5/6");
    assert_failure(
        &get(&url, LONG),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": net/http: HTTP/1.x transport connection broken: http: message cannot contain multiple Content-Length headers; got [\"5\" \"6\"]"
        ),
    );
    let url = s.url("/hostile/content-length/0/18446744073709551615");
    assert_failure(
        &get(&url, LONG),
        Reason::Protocol,
        &format!(
            "Get \"{url}\": net/http: HTTP/1.x transport connection broken: bad Content-Length \"18446744073709551615\""
        ),
    );
}

/// A NUL byte anywhere in the head is a malformed response.
fn nul_in_head(s: &TargetServer) {
    // The message quotes the offending line: the status line, or the header line.
    // (Go reads a NUL in the reason phrase without complaint; httparse does not, so that one
    // keeps httparse's words.)
    for (place, detail) in [
        (
            "value",
            "net/http: HTTP/1.x transport connection broken: malformed MIME header line: \"X-Nul: a\\x00b\"",
        ),
        (
            "name",
            "net/http: HTTP/1.x transport connection broken: malformed MIME header line: \"X-N\\x00ul: ab\"",
        ),
        (
            "reason",
            "net/http: HTTP/1.x transport connection broken: malformed HTTP response: invalid response status: \"HTTP/1.1 200 O\\0K\"",
        ),
    ] {
        let url = s.url(&format!("/hostile/nul/{place}"));
        assert_failure(&get(&url, LONG), Reason::Protocol, &format!("Get \"{url}\": {detail}"));
    }
}

/// 127.0.0.1 redirects to localhost and back: another host name, so (as in the kubelet) the
/// redirect is not followed and the 302 is the final answer, a Warning. One request only: the
/// chain cannot loop, whatever the names resolve to.
fn redirects_alternating_hosts(s: &TargetServer) {
    let before = s.requests();
    let port = s.port();
    for start in ["127.0.0.1", "localhost"] {
        for policy in [RedirectPolicy::SameHost, RedirectPolicy::SameOrigin] {
            let url = format!("http://{start}:{port}/hostile/alternate-hosts/0");
            let o = probe(&url, LONG, policy);
            assert_eq!(
                (o.result, o.reason, o.message.as_str()),
                (
                    ProbeResult::Warning,
                    Reason::Redirect,
                    "Probe terminated redirects, Response body: redirecting"
                ),
                "{url}: {o:?}"
            );
            assert_eq!(o.http_status, Some(302));
        }
    }
    assert_eq!(s.requests() - before, 4, "one request per probe");
}

/// A Failure with reason Reset and Go's wording for a reset read.
fn assert_reset(o: &Outcome, url: &str) {
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Reset), "{o:?}");
    let prefix = format!("Get \"{url}\": read tcp 127.0.0.1:");
    assert!(o.message.starts_with(&prefix), "{}", o.message);
    assert!(o.message.ends_with(": read: connection reset by peer"), "{}", o.message);
}

/// RST after half the body, and after half the head.
fn reset_after_half_a_response(s: &TargetServer) {
    let url = s.url("/reset-after/5000");
    let o = get(&url, LONG);
    assert_reset(&o, &url);
    assert_eq!((o.output.len(), o.http_status), (5000, Some(200)));

    let url = s.url("/hostile/reset-mid-head");
    let o = get(&url, LONG);
    assert_reset(&o, &url);
    assert_eq!(o.http_status, None);
}

fn all_cases(s: &TargetServer) {
    never_accepted();
    accepted_never_answered(s);
    head_one_byte_per_second(s);
    body_one_byte_per_second(s);
    endless_headers(s);
    long_status_line(s);
    endless_chunked_data(s);
    endless_chunked_framing(s);
    chunk_size_2_64(s);
    duplicate_and_conflicting_content_length(s);
    nul_in_head(s);
    redirects_alternating_hosts(s);
    reset_after_half_a_response(s);
}

// ---- tests -------------------------------------------------------------------------------

#[test]
fn listener_that_never_accepts() {
    never_accepted();
}

#[test]
fn server_that_accepts_and_never_answers() {
    accepted_never_answered(&TargetServer::start());
}

#[test]
fn head_at_one_byte_per_second() {
    head_one_byte_per_second(&TargetServer::start());
}

#[test]
fn body_at_one_byte_per_second() {
    body_one_byte_per_second(&TargetServer::start());
}

#[test]
fn endless_header_lines() {
    endless_headers(&TargetServer::start());
}

#[test]
fn status_line_over_64_kib() {
    long_status_line(&TargetServer::start());
}

#[test]
fn endless_chunked_body() {
    endless_chunked_data(&TargetServer::start());
}

#[test]
fn endless_chunked_framing_without_data() {
    endless_chunked_framing(&TargetServer::start());
}

#[test]
fn chunk_size_of_2_pow_64() {
    chunk_size_2_64(&TargetServer::start());
}

#[test]
fn duplicate_or_conflicting_content_length() {
    duplicate_and_conflicting_content_length(&TargetServer::start());
}

#[test]
fn nul_byte_in_the_head() {
    nul_in_head(&TargetServer::start());
}

#[test]
fn redirect_chain_alternating_127_0_0_1_and_localhost() {
    redirects_alternating_hosts(&TargetServer::start());
}

#[test]
fn reset_after_half_a_response_or_half_a_head() {
    reset_after_half_a_response(&TargetServer::start());
}

fn proc_status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line =
        status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Every case again, in a child process alone: peak RSS growth under 50 MiB, no descriptor
/// left behind.
#[test]
fn memory_stays_bounded_under_every_hostile_peer() {
    const CHILD: &str = "PROBER_HOSTILE_MEMORY_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "memory_stays_bounded_under_every_hostile_peer",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child failed:\n{text}");
        let line = text.lines().find_map(|l| l.find("hostile-memory:").map(|i| &l[i..]));
        println!("{}", line.unwrap_or_else(|| panic!("the child did not run the cases:\n{text}")));
        return;
    }
    let server = TargetServer::start();
    // Warm up: the server's threads, the resolver, lazily allocated statics.
    accepted_never_answered(&server);
    redirects_alternating_hosts(&server);
    let fds = open_fds();
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak RSS");
    let base = proc_status_kib("VmHWM:");
    assert!(base <= proc_status_kib("VmRSS:") + 1024, "VmHWM was not reset");
    all_cases(&server);
    let peak = proc_status_kib("VmHWM:");
    let growth_mib = (peak.saturating_sub(base)) as f64 / 1024.0;
    println!("hostile-memory: VmHWM {base} KiB -> {peak} KiB (+{growth_mib:.1} MiB)");
    assert!(growth_mib < 50.0, "peak RSS grew by {growth_mib:.1} MiB");
    // Connections the server still holds are closed by their clients already; the probes'
    // descriptors are all gone.
    let deadline = Instant::now() + gives_up_after(SHORT);
    while open_fds() > fds && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(open_fds() <= fds, "descriptors: {} before, {} after", fds, open_fds());
}

/// A head over 1 KiB is parsed only when a line ends (`HeadParser::worth_parsing`, which keeps
/// a trickled head from being re-scanned after every byte): a malformed line that the server
/// never ends is still reported as malformed when the connection closes, not as an early EOF.
#[test]
fn malformed_unfinished_line_then_eof() {
    use std::io::{Read, Write};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", l.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut c, _) = l.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = c.read(&mut buf);
        let mut head = b"HTTP/1.1 200 OK\r\nX-Long: ".to_vec();
        head.resize(2000, b'a');
        head.push(0x01);
        head.extend_from_slice(b"aaaa");
        for piece in head.chunks(100) {
            c.write_all(piece).unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    let o = get(&url, LONG);
    server.join().unwrap();
    assert_failure(
        &o,
        Reason::Protocol,
        &format!(
            "Get \"{url}\": net/http: HTTP/1.x transport connection broken: malformed MIME header line: \"X-Long: {}\\x01aaaa\"",
            "a".repeat(1975)
        ),
    );
}
