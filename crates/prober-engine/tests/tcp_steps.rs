//! Multi-step TCP exchanges (issue 28: blackbox_exporter's `query_response`), run by the
//! engine's one-shot check against the testkit's scripted line server
//! (`prober_testkit::script`), which records every line the probe sent.

use std::path::PathBuf;
use std::time::Duration;

use prober_core::{
    Pattern, ProbeKind, ProbeResult, ProbeSpec, Reason, TcpStep, TlsOptions, TlsVerify,
};
use prober_engine::check;
use prober_testkit::script::{Act, ScriptServer};
use prober_testkit::tls::{TestCa, TlsServerOptions};

fn pat(s: &str) -> Pattern {
    Pattern::new(s).unwrap()
}

fn spec(port: u16, timeout: Duration, steps: Vec<TcpStep>) -> ProbeSpec {
    let mut s = ProbeSpec::tcp("127.0.0.1", port.into()).unwrap().with_timeout(timeout).unwrap();
    s.set_tcp_steps(steps).unwrap();
    s
}

fn text(lines: &[Vec<u8>]) -> Vec<String> {
    lines.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect()
}

/// blackbox_exporter's example `smtp_starttls`, with CRLF line ends as an SMTP server wants.
fn smtp_steps() -> Vec<TcpStep> {
    vec![
        TcpStep::expect(pat("^220 ([^ ]+) ESMTP (.+)$")),
        TcpStep::send(b"EHLO prober\r\n".to_vec()),
        TcpStep::expect(pat("^250-STARTTLS")),
        TcpStep::send(b"STARTTLS\r\n".to_vec()),
        TcpStep::expect(pat("^220")),
        TcpStep::starttls(),
        TcpStep::send(b"EHLO prober\r\n".to_vec()),
        TcpStep::expect(pat("^250-AUTH")),
        TcpStep::send(b"QUIT\r\n".to_vec()),
    ]
}

#[test]
fn smtp_starttls_steps_run_through_tls() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-tcp-steps-{}", std::process::id()));
    let ca = TestCa::new("TCP steps test CA");
    let (ca_file, _) = ca.cert().write_files(&dir, "ca");
    let server = ScriptServer::start(
        vec![
            Act::say("220 mx.test ESMTP Testfix\r\n"),
            Act::hear("EHLO prober"),
            Act::say("250-mx.test\r\n250-STARTTLS\r\n250 SIZE 1000\r\n"),
            Act::hear("STARTTLS"),
            Act::say("220 2.0.0 go ahead\r\n"),
            Act::StartTls,
            Act::hear("EHLO prober"),
            Act::say("250-mx.test\r\n250-AUTH PLAIN\r\n250 SIZE 1000\r\n"),
            Act::hear("QUIT"),
            Act::say("221 bye\r\n"),
        ],
        Some(TlsServerOptions::new(ca.issue(&["mx.test"]))),
        false,
    );
    let mut s = spec(server.port(), Duration::from_secs(10), smtp_steps());
    s.set_tls(TlsOptions {
        verify: TlsVerify::CaFile(ca_file),
        server_name: Some("mx.test".into()),
        ..TlsOptions::default()
    })
    .unwrap();
    let o = check(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    let heard = server.wait_heard(4, Duration::from_secs(10));
    assert_eq!(
        text(&heard),
        ["EHLO prober\r\n", "STARTTLS\r\n", "EHLO prober\r\n", "QUIT\r\n"],
        "the last two through TLS"
    );
    let shakes = server.handshakes();
    assert_eq!(shakes.len(), 1, "{shakes:?}");
    assert_eq!((shakes[0].sni.as_deref(), &shakes[0].error), (Some("mx.test"), &None));
    let reply = String::from_utf8_lossy(&o.output);
    assert!(reply.starts_with("220 mx.test ESMTP Testfix\r\n"), "{reply}");
    assert!(
        reply.ends_with("250-AUTH PLAIN\r\n250 SIZE 1000\r\n"),
        "kept across the upgrade: {reply}"
    );
    assert!(o.timings.tls.is_some(), "{:?}", o.timings);

    // The server refuses STARTTLS: the step awaiting its go-ahead fails, named, before TLS.
    let server = ScriptServer::start(
        vec![
            Act::say("220 mx.test ESMTP Testfix\r\n"),
            Act::hear("EHLO prober"),
            Act::say("250-mx.test\r\n250 SIZE 1000\r\n"),
        ],
        Some(TlsServerOptions::new(ca.issue(&["mx.test"]))),
        false,
    );
    let o = check(&spec(server.port(), Duration::from_secs(10), smtp_steps()));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body), "{o:?}");
    assert_eq!(
        o.message,
        "step 3 of 9: no line matched \"^250-STARTTLS\": the peer closed the connection, 28 \
         bytes received in this step: \"250-mx.test\\r\\n250 SIZE 1000\\r\\n\""
    );
    assert!(server.handshakes().is_empty());
}

#[test]
fn irc_banner_expands_the_ping_token() {
    // blackbox_exporter's example `irc_banner`, with its `${1}`, over plain TCP.
    let server = ScriptServer::start(
        vec![
            Act::hear("NICK prober"),
            Act::hear("USER prober prober prober :prober"),
            Act::say(":irc.test NOTICE * :hello\r\nPING :tok-4711\r\n"),
            Act::hear("PONG tok-4711"),
            Act::say(":irc.test 001 prober :Welcome\r\n"),
        ],
        None,
        false,
    );
    let s = spec(
        server.port(),
        Duration::from_secs(10),
        vec![
            TcpStep::send(b"NICK prober\n".to_vec()),
            TcpStep::send(b"USER prober prober prober :prober\n".to_vec()),
            TcpStep::expect_then_send(pat("PING :([^ ]+)"), b"PONG ${1}\n".to_vec()),
            TcpStep::expect(pat("^:[^ ]+ 001")),
        ],
    );
    assert!(
        matches!(&s.kind, ProbeKind::Tcp(t) if t.connect.tls.is_none()),
        "no TLS: the plain probe"
    );
    let o = check(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(
        text(&server.heard()),
        ["NICK prober\n", "USER prober prober prober :prober\n", "PONG tok-4711\n"]
    );
    assert!(o.output.ends_with(b" 001 prober :Welcome\r\n"), "{o:?}");
}

#[test]
fn the_timeout_covers_the_whole_exchange() {
    // The greeting arrives, the answer to EHLO never does (the server then waits for a line
    // the probe never sends): the run ends at its one deadline, naming the step it was in. The
    // step reached is the server's doing, not the machine's speed: the timeout leaves a loaded
    // machine ample time to connect, read the greeting and send EHLO.
    let server = ScriptServer::start(
        vec![
            Act::say("220 mx.test ESMTP ready\r\n"),
            Act::hear("EHLO prober"),
            Act::hear("never sent"),
        ],
        None,
        false,
    );
    let timeout = Duration::from_secs(2);
    let o = check(&spec(server.port(), timeout, smtp_steps()[..3].to_vec()));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
    assert_eq!(
        o.message,
        "step 3 of 3: no line matched \"^250-STARTTLS\": no match within 2s, 0 bytes \
         received in this step: \"\""
    );
    assert!(o.timings.total >= timeout, "{:?}", o.timings);
}

#[test]
fn a_chatty_peer_is_read_line_by_line() {
    // 40 kB of lines before the one awaited (an IRC MOTD, a long capability list): scanned
    // lines are dropped, so the step matches; the output keeps the first 10240 bytes and
    // `output_total` counts them all.
    let motd = ":irc.test 372 prober :- the message of the day, once more\r\n".repeat(700);
    let server = ScriptServer::start(
        vec![
            Act::say(&format!("{motd}PING :tok-1\r\n")),
            Act::hear("PONG tok-1"),
            Act::say(":irc.test 001 prober :Welcome\r\n"),
        ],
        None,
        false,
    );
    let s = spec(
        server.port(),
        Duration::from_secs(10),
        vec![
            TcpStep::expect_then_send(pat("PING :([^ ]+)"), b"PONG ${1}\n".to_vec()),
            TcpStep::expect(pat("^:[^ ]+ 001")),
        ],
    );
    let o = check(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(text(&server.wait_heard(1, Duration::from_secs(10))), ["PONG tok-1\n"]);
    assert_eq!(o.output, motd.as_bytes()[..10240]);
    assert_eq!(o.output_total, (motd.len() + "PING :tok-1\r\n".len() + 31) as u64);
}

#[test]
fn a_line_longer_than_64_kib_fails_the_step_through_tls() {
    // After STARTTLS the server sends 70 kB without a line end (and then waits): the step
    // fails at 64 KiB, named, with reason protocol, instead of reading until the timeout.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-tcp-steps-long-{}", std::process::id()));
    let ca = TestCa::new("TCP steps test CA");
    let (ca_file, _) = ca.cert().write_files(&dir, "ca");
    let server = ScriptServer::start(
        vec![
            Act::say("220 go ahead\r\n"),
            Act::StartTls,
            Act::Say(vec![b'y'; 70_000]),
            Act::hear("never sent"),
        ],
        Some(TlsServerOptions::new(ca.issue(&["mx.test"]))),
        false,
    );
    let mut s = spec(
        server.port(),
        Duration::from_secs(10),
        vec![TcpStep::expect(pat("^220")), TcpStep::starttls(), TcpStep::expect(pat("^250 "))],
    );
    s.set_tls(TlsOptions {
        verify: TlsVerify::CaFile(ca_file),
        server_name: Some("mx.test".into()),
        ..TlsOptions::default()
    })
    .unwrap();
    let o = check(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Protocol), "{o:?}");
    let want = format!(
        "step 3 of 3: a line is longer than 65536 bytes, 65536 bytes received in this step: \
         \"{}\"...",
        "y".repeat(200)
    );
    assert_eq!(o.message, want);
    assert_eq!(o.output_total, 14 + 65536, "nothing read past the line's bound");
}

#[test]
fn an_expansion_past_the_send_limit_fails_the_step() {
    // 500 references to a 4 kB group would be 2 MB to send: refused before it is built.
    let server = ScriptServer::start(
        vec![Act::say(&format!("PING :{}\r\n", "a".repeat(4000))), Act::hear("never sent")],
        None,
        false,
    );
    let s = spec(
        server.port(),
        Duration::from_secs(10),
        vec![TcpStep::expect_then_send(pat("^PING :(.*)$"), "$1".repeat(500).into_bytes())],
    );
    let o = check(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Protocol), "{o:?}");
    assert_eq!(
        o.message,
        "step 1 of 1: the data to send, expanded with the line that matched \"^PING :(.*)$\", \
         would be longer than 10240 bytes"
    );
    assert!(server.heard().is_empty(), "nothing was sent");
}

#[test]
fn a_peer_that_talks_without_end_is_read_up_to_1_mib() {
    // 2 MB of lines, none the one awaited, then the server waits: the step fails with reason
    // body once the run has read 1 MiB, not at the (long) timeout.
    let server = ScriptServer::start(
        vec![Act::Say(b"250-chatter\r\n".repeat(160_000)), Act::hear("never sent")],
        None,
        false,
    );
    let s = spec(server.port(), Duration::from_secs(60), vec![TcpStep::expect(pat("^250 "))]);
    let o = check(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Body), "{o:?}");
    assert!(
        o.message.starts_with(
            "step 1 of 1: no line matched \"^250 \": the steps read 1048576 bytes in all, \
             1048576 bytes received in this step: \"250-chatter\\r\\n250-chatter"
        ),
        "{}",
        o.message
    );
    assert_eq!((o.output.len(), o.output_total), (10240, 1 << 20));
}

#[test]
fn chatty_step_probes_leave_the_engine_thread_to_others() {
    // Several step probes whose peers have already sent 256 KiB of lines each (all of it in
    // the kernel's buffers before the engine reads a byte), then a connect-only probe
    // submitted on the same engine: a run reads a bounded amount per call and yields, so the
    // quick probe ends while every chatty one is still reading. A run that read until its
    // socket would block would finish each chatty exchange in the quick probe's first turn.
    const CHATTY: u64 = 4;
    let chatter = b"250-chatter from a peer that talks fast and long\r\n".repeat(5300);
    let payload = [chatter.as_slice(), b"250 END\r\n"].concat();
    let chatty = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    chatty.set_nonblocking(true).unwrap();
    let quick = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut e = prober_engine::Engine::new().unwrap();
    let chatty_port = chatty.local_addr().unwrap().port();
    for tag in 0..CHATTY {
        let s = spec(chatty_port, Duration::from_secs(30), vec![TcpStep::expect(pat("^250 END$"))]);
        e.submit(s, tag).unwrap();
    }
    // The engine does not run while the peers write: every byte is buffered before it reads.
    let mut peers = Vec::new();
    let limit = std::time::Instant::now() + Duration::from_secs(30);
    while peers.len() < CHATTY as usize {
        assert!(std::time::Instant::now() < limit, "the probes never connected");
        match chatty.accept() {
            Ok((peer, _)) => peers.push(peer),
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                e.wait(Some(Duration::from_millis(10))).unwrap();
            }
            Err(err) => panic!("accept: {err}"),
        }
    }
    for peer in &peers {
        let sock = socket2::SockRef::from(peer);
        sock.set_send_buffer_size(4 << 20).unwrap();
        sock.set_nonblocking(true).unwrap();
        let mut sent = 0;
        while sent < payload.len() {
            match std::io::Write::write(&mut &*peer, &payload[sent..]) {
                Ok(n) => sent += n,
                Err(err) => panic!(
                    "the loopback buffers hold only {sent} of the {} bytes this test \
                     needs buffered: {err}",
                    payload.len()
                ),
            }
        }
    }
    let quick_port = quick.local_addr().unwrap().port();
    let connect_only = ProbeSpec::tcp("127.0.0.1", quick_port.into())
        .unwrap()
        .with_timeout(Duration::from_secs(30))
        .unwrap();
    e.submit(connect_only, 99).unwrap();
    let mut order = Vec::new();
    let mut events = Vec::new();
    while order.len() < CHATTY as usize + 1 {
        assert!(std::time::Instant::now() < limit, "runs never ended: {order:?}");
        e.wait(Some(Duration::from_millis(50))).unwrap();
        e.drain(&mut events, usize::MAX);
        for ev in events.drain(..) {
            let prober_engine::Event::Check { tag, outcome } = ev else { continue };
            assert_eq!(outcome.result, ProbeResult::Success, "tag {tag}: {outcome:?}");
            if tag != 99 {
                assert_eq!(outcome.output_total, payload.len() as u64, "tag {tag}");
            }
            order.push(tag);
        }
    }
    assert_eq!(order[0], 99, "the connect-only probe waited for the chatty ones: {order:?}");
}
