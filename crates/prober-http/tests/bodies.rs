//! Response bodies: framing, limits and breaks, beyond the kubelet's cases (`http.rs`).

mod common;

use common::*;

#[test]
fn one_gib_body_is_cut_at_the_limit_without_memory_growth() {
    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
    let s = TargetServer::start();
    let before = rss_kib();
    let o = get(&s.url("/body/1073741824"));
    let after = rss_kib();
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated);
    assert!(o.output_total >= LIMIT as u64 && o.output_total < 1 << 20, "{}", o.output_total);
    assert!(after.saturating_sub(before) < 50 * 1024, "RSS grew from {before} KiB to {after} KiB");
}

#[test]
fn chunked_body_exact() {
    let s = TargetServer::start();
    let mut sp = spec(&s.url("/chunked/25000?chunk=7"));
    sp.set_output_limit(65536).unwrap();
    assert_success(&run(&sp), &"a".repeat(25000));
    assert_success(&get(&s.url("/chunked/10240?chunk=1000")), &"a".repeat(LIMIT));
    assert_success(&get(&s.url("/chunked/0")), "");
    let o = get(&s.url("/chunked/100000"));
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated && o.result == ProbeResult::Success);
}

#[test]
fn close_delimited_body_exact() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/close-delimited/5000")), &"a".repeat(5000));
    assert_success(&get(&s.url("/close-delimited/0")), "");
    let o = get(&s.url("/close-delimited/100000"));
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated && o.result == ProbeResult::Success);
}

#[test]
fn content_length_and_chunked_uses_chunked() {
    let s = TargetServer::start();
    assert_success(&get(&s.url("/content-length-and-chunked")), "ok");
}

#[test]
fn body_cut_short_past_the_limit_is_not_an_error() {
    let s = TargetServer::start();
    let o = get(&s.url("/truncated/20000/15000"));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated);
}

#[test]
fn stalled_body_times_out() {
    let s = TargetServer::start();
    let url = s.url("/stall-body/100");
    let o = run(&spec(&url).with_timeout(Duration::from_millis(300)).unwrap());
    assert_failure(
        &o,
        Reason::Timeout,
        &format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout or context cancellation while reading body)"
        ),
    );
    assert_eq!(o.output, vec![b'a'; 100]);
    assert_eq!(o.http_status, Some(200));
}

#[test]
fn slow_headers_time_out_awaiting_headers() {
    let s = TargetServer::start();
    let url = s.url("/slow-headers/2000");
    let o = run(&spec(&url).with_timeout(Duration::from_millis(300)).unwrap());
    assert_failure(
        &o,
        Reason::Timeout,
        &format!(
            "Get \"{url}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        ),
    );
    assert_eq!(o.http_status, None);
}

#[test]
fn never_answering_server_times_out() {
    let s = TargetServer::start();
    let url = s.url("/never-answer");
    let o = run(&spec(&url).with_timeout(Duration::from_millis(300)).unwrap());
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout));
    assert!(
        o.message.ends_with("(Client.Timeout exceeded while awaiting headers)"),
        "{}",
        o.message
    );
    assert!(s.wait_for_connections_closed(1, Duration::from_secs(10)), "connection left open");
}

#[test]
fn drip_fed_body_within_the_timeout_succeeds() {
    let s = TargetServer::start();
    let o = run(&spec(&s.url("/drip/5/20")).with_timeout(Duration::from_secs(5)).unwrap());
    assert_success(&o, "aaaaa");
}

#[test]
fn interim_responses_are_skipped() {
    let s = TargetServer::start();
    let fin = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    let o = get(&s.url(&format!("/bytes?status=103&header=Content-Length:0&body={}", enc(fin))));
    assert_success(&o, "ok");
    assert_eq!(o.http_status, Some(200));
    // An interim response and then nothing: the response had begun, so Go's words.
    let url = s.url("/bytes?status=100&header=Content-Length:0");
    let msg =
        format!("Get \"{url}\": net/http: HTTP/1.x transport connection broken: unexpected EOF");
    assert_failure(&get(&url), Reason::Protocol, &msg);
    // 101 is final.
    assert_status_failure(&get(&s.url("/bytes?status=101&header=Content-Length:0")), 101, "");
}
