//! Replies a resolver must not take: wrong ids, other questions, datagrams from another port,
//! malformed messages; and servers that never answer. The server is a socket of the test's
//! own on loopback that answers as each test's script says.

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use prober_core::{ProbeResult, Reason};
use prober_dns::{DnsSpec, Transport};
use support::run;

const TIMEOUT: Duration = Duration::from_secs(3);
/// Bounds the scripts' own waits, well past the probe's deadline.
const SCRIPT_WAIT: Duration = Duration::from_secs(20);

/// The end of the question in `query` (one question, uncompressed name).
fn question_end(query: &[u8]) -> usize {
    let mut i = 12;
    while query[i] != 0 {
        i += 1 + usize::from(query[i]);
    }
    i + 5
}

/// A response to `query`: its id (or `id`), QR and RD set, `rcode`, the question copied, then
/// `answers` A records for the question's name (pointer to offset 12), TTL 60.
fn response(query: &[u8], id: Option<u16>, rcode: u8, answers: &[[u8; 4]]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&id.map_or([query[0], query[1]], u16::to_be_bytes));
    out.extend_from_slice(&[0x81, 0x80 | rcode, 0, 1]);
    out.extend_from_slice(&(answers.len() as u16).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&query[12..question_end(query)]);
    for a in answers {
        out.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]);
        out.extend_from_slice(a);
    }
    out
}

/// A UDP server that takes one query and runs `script` with its socket, the query and the
/// client's address. The socket stays open until the server is dropped, so that the probe
/// never gets an ICMP port unreachable from it.
struct ScriptedUdp {
    addr: SocketAddr,
    done: Option<JoinHandle<()>>,
    stop: mpsc::Sender<()>,
}

impl ScriptedUdp {
    fn start(script: impl FnOnce(&UdpSocket, &[u8], SocketAddr) + Send + 'static) -> ScriptedUdp {
        let sock = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let addr = sock.local_addr().expect("addr");
        let (stop, stopped) = mpsc::channel();
        let done = std::thread::spawn(move || {
            sock.set_read_timeout(Some(SCRIPT_WAIT)).expect("timeout");
            let mut buf = [0u8; 512];
            if let Ok((n, from)) = sock.recv_from(&mut buf) {
                script(&sock, &buf[..n], from);
            }
            let _ = stopped.recv_timeout(SCRIPT_WAIT);
        });
        ScriptedUdp { addr, done: Some(done), stop }
    }
}

impl Drop for ScriptedUdp {
    fn drop(&mut self) {
        let _ = self.stop.send(());
        if let Some(t) = self.done.take() {
            let _ = t.join();
        }
    }
}

fn spec(addr: SocketAddr) -> DnsSpec {
    DnsSpec::new(addr, "host.example").unwrap()
}

#[test]
fn a_server_that_never_answers_times_out() {
    let (seen, saw) = mpsc::channel();
    let server = ScriptedUdp::start(move |_, _, _| {
        let _ = seen.send(());
    });
    let (o, facts) = run(spec(server.addr), TIMEOUT);
    assert!(saw.try_recv().is_ok(), "the query reached the server");
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{}", o.message);
    assert!(o.message.contains("i/o timeout"), "{}", o.message);
    assert!(!facts.query_succeeded);
}

#[test]
fn replies_that_do_not_answer_the_query_are_ignored_until_the_right_one() {
    let server = ScriptedUdp::start(|sock, q, from| {
        let id = u16::from_be_bytes([q[0], q[1]]);
        // A wrong id.
        sock.send_to(&response(q, Some(id.wrapping_add(1)), 0, &[[6, 6, 6, 6]]), from).unwrap();
        // Our id, another question (type AAAA instead of A).
        let mut other = response(q, None, 0, &[[6, 6, 6, 6]]);
        let qtype = question_end(q) - 3;
        other[qtype] = 28;
        sock.send_to(&other, from).unwrap();
        // Our id and question, QR clear: a query, not a response.
        let mut query = response(q, None, 0, &[[6, 6, 6, 6]]);
        query[2] &= 0x7F;
        sock.send_to(&query, from).unwrap();
        // Our id, a compression loop in the answer's owner name.
        let mut looped = response(q, None, 0, &[[6, 6, 6, 6]]);
        let owner = question_end(q);
        looped[owner + 1] = owner as u8;
        sock.send_to(&looped, from).unwrap();
        // Not even a header.
        sock.send_to(&q[..5], from).unwrap();
        // The answer.
        sock.send_to(&response(q, None, 0, &[[192, 0, 2, 7]]), from).unwrap();
    });
    let mut s = spec(server.addr);
    s.validate_answer.fail_if_not_matches =
        prober_dns::validate::patterns(&["^host\\.example\\.\t60\tIN\tA\t192\\.0\\.2\\.7$"])
            .unwrap();
    let (o, facts) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!(facts.answer_rrs, 1);
    assert_eq!(facts.ignored, 4, "wrong id, wrong question, not a response, malformed: {facts:?}");
}

#[test]
fn an_answer_from_another_port_is_ignored() {
    let server = ScriptedUdp::start(|_, q, from| {
        let other = UdpSocket::bind("127.0.0.1:0").unwrap();
        other.send_to(&response(q, None, 0, &[[192, 0, 2, 1]]), from).unwrap();
    });
    let (o, facts) = run(spec(server.addr), TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{}", o.message);
    assert!(!facts.query_succeeded);

    // The same, then the answer from the server's port: that one is taken.
    let server = ScriptedUdp::start(|sock, q, from| {
        let other = UdpSocket::bind("127.0.0.1:0").unwrap();
        other.send_to(&response(q, None, 0, &[[6, 6, 6, 6]]), from).unwrap();
        sock.send_to(&response(q, None, 0, &[[192, 0, 2, 1]]), from).unwrap();
    });
    let mut s = spec(server.addr);
    s.validate_answer.fail_if_matches = prober_dns::validate::patterns(&["6\\.6\\.6\\.6"]).unwrap();
    let (o, _) = run(s, TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
}

#[test]
fn a_malformed_reply_with_our_id_is_named_at_the_timeout() {
    let server = ScriptedUdp::start(|sock, q, from| {
        let mut bad = response(q, None, 0, &[[192, 0, 2, 1]]);
        bad.truncate(bad.len() - 2); // the A record's data cut short
        sock.send_to(&bad, from).unwrap();
    });
    let (o, facts) = run(spec(server.addr), TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{}", o.message);
    assert!(o.message.contains("malformed"), "{}", o.message);
    assert_eq!(facts.ignored, 1);
}

#[test]
fn a_closed_udp_port_is_refused() {
    let port = UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let (o, _) = run(spec(port), TIMEOUT);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused), "{}", o.message);
    assert!(o.message.starts_with("read udp 127.0.0.1:"), "{}", o.message);
}

/// A TCP server that reads one length-prefixed query and writes what `reply` makes of it.
fn tcp_server(
    reply: impl FnOnce(&[u8]) -> Vec<u8> + Send + 'static,
) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        conn.set_read_timeout(Some(SCRIPT_WAIT)).unwrap();
        let mut len = [0u8; 2];
        conn.read_exact(&mut len).unwrap();
        let mut q = vec![0; usize::from(u16::from_be_bytes(len))];
        conn.read_exact(&mut q).unwrap();
        let _ = conn.write_all(&reply(&q));
        // Wait for the probe to close its end.
        let _ = conn.read(&mut len);
    });
    (addr, t)
}

fn framed(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in messages {
        out.extend_from_slice(&(m.len() as u16).to_be_bytes());
        out.extend_from_slice(m);
    }
    out
}

#[test]
fn over_tcp_a_64k_answer_is_read_and_a_wrong_id_skipped() {
    // As many A records as fit one 65535-byte message.
    let (addr, t) = tcp_server(|q| {
        let head = response(q, None, 0, &[]).len();
        let n = (65535 - head) / 16;
        let answers: Vec<[u8; 4]> = (0..n).map(|i| (i as u32).to_be_bytes()).collect();
        let id = u16::from_be_bytes([q[0], q[1]]);
        framed(&[response(q, Some(id ^ 1), 0, &[[6, 6, 6, 6]]), response(q, None, 0, &answers)])
    });
    let mut s = spec(addr);
    s.transport = Transport::Tcp;
    let (o, facts) = run(s, TIMEOUT);
    t.join().unwrap();
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!(facts.ignored, 1);
    assert!(facts.answer_rrs > 4000, "{facts:?}");
    // The answers as output: whole records up to the output limit, the rest only counted
    // (4,000 records print to about 140 KB, more than twice the message's size).
    let kept = o.output_lossy();
    assert!(
        o.truncated && o.output.len() <= prober_core::DEFAULT_OUTPUT_LIMIT,
        "{}",
        o.output.len()
    );
    assert!(kept.ends_with('\n') && kept.lines().count() > 100, "{kept}");
    let line = kept.lines().next().unwrap().len() as u64 + 1;
    assert!(o.output_total >= u64::from(facts.answer_rrs) * (line - 8), "{}", o.output_total);
}

#[test]
fn over_tcp_a_malformed_answer_is_a_protocol_failure() {
    let (addr, t) = tcp_server(|q| {
        let mut bad = response(q, None, 0, &[[192, 0, 2, 1]]);
        let owner = question_end(q);
        bad[owner + 1] = 0xFF; // pointer past the end
        framed(&[bad])
    });
    let mut s = spec(addr);
    s.transport = Transport::Tcp;
    let (o, _) = run(s, TIMEOUT);
    t.join().unwrap();
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Protocol), "{}", o.message);
    assert!(o.message.contains("past the end"), "{}", o.message);
}

#[test]
fn a_udp_answer_larger_than_asked_for_is_ignored_not_cut() {
    // 672 bytes for a query that allows 512: cut at 512 it would end on a record boundary
    // and read as a shorter answer whose counts lie; it must be ignored as a whole.
    let server = ScriptedUdp::start(|sock, q, from| {
        let mut big = response(q, None, 0, &[]);
        assert_eq!(big.len(), 30, "header and question of host.example");
        big[7] = 31; // ancount: one record of unknown type, then 30 A records
        big.extend_from_slice(&[0xC0, 12, 0xFF, 0, 0, 1, 0, 0, 0, 60, 0, 150]);
        big.extend_from_slice(&[0; 150]);
        for i in 0..30u8 {
            big.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, i]);
        }
        assert_eq!(big.len(), 672);
        sock.send_to(&big, from).unwrap();
        sock.send_to(&response(q, None, 0, &[[192, 0, 2, 1]]), from).unwrap();
    });
    let (o, facts) = run(spec(server.addr), TIMEOUT);
    assert_eq!(o.result, ProbeResult::Success, "{}", o.message);
    assert_eq!((facts.answer_rrs, facts.ignored), (1, 1), "{facts:?}");
}
