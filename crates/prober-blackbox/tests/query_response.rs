//! tcp `query_response` in `prober serve` (issue 28): blackbox_exporter v0.25.0's example
//! modules (`smtp_starttls`, `imap_starttls`, `irc_banner`, `ssh_banner`, `pop3s_banner`,
//! written here as its example.yml and blackbox.yml have them, plus the CA to verify the test
//! servers) against the testkit's scripted line servers, judged by the metrics a scrape reads.

use std::path::{Path, PathBuf};

use prober_blackbox::{Exporter, Modules, Request, Response};
use prober_testkit::script::{Act, ScriptServer};
use prober_testkit::tls::{TestCa, TlsServerOptions};

struct Setup {
    exporter: Exporter,
    ca: TestCa,
}

fn setup(tag: &str) -> Setup {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("prober-serve-query-response-{}-{tag}", std::process::id()));
    let ca = TestCa::new("query_response test CA");
    let (ca_file, _) = ca.cert().write_files(&dir, "ca");
    let tls = format!("tls_config: {{ca_file: {:?}, server_name: mail.test}}", ca_file.display());
    let yaml = format!(
        r#"
modules:
  smtp_starttls:
    prober: tcp
    timeout: 5s
    tcp:
      {tls}
      query_response:
        - expect: "^220 ([^ ]+) ESMTP (.+)$"
        - send: "EHLO prober\r"
        - expect: "^250-STARTTLS"
        - send: "STARTTLS\r"
        - expect: "^220"
        - starttls: true
        - send: "EHLO prober\r"
        - expect: "^250-AUTH"
        - send: "QUIT\r"
  imap_starttls:
    prober: tcp
    timeout: 5s
    tcp:
      {tls}
      query_response:
        - expect: "OK.*STARTTLS"
        - send: ". STARTTLS"
        - expect: "OK"
        - starttls: true
        - send: ". capability"
        - expect: "CAPABILITY IMAP4rev1"
  irc_banner:
    prober: tcp
    timeout: 5s
    tcp:
      query_response:
        - send: "NICK prober"
        - send: "USER prober prober prober :prober"
        - expect: "PING :([^ ]+)"
          send: "PONG ${{1}}"
        - expect: "^:[^ ]+ 001"
  empty_send:
    prober: tcp
    timeout: 5s
    tcp:
      query_response:
        - expect: "^220 ?(.*)$"
          send: "${{1}}"
        - expect: "^ready"
          send: "QUIT"
  ssh_banner:
    prober: tcp
    timeout: 5s
    tcp:
      query_response:
      - expect: "^SSH-2.0-"
      - send: "SSH-2.0-blackbox-ssh-check"
  pop3s_banner:
    prober: tcp
    tcp:
      query_response:
      - expect: "^+OK"
      tls: true
      {tls}
"#
    );
    let modules = Modules::parse(&yaml, Path::new("/")).unwrap();
    Setup { exporter: Exporter::start(modules).unwrap(), ca }
}

fn probe(e: &Exporter, module: &str, port: u16) -> Response {
    let query = format!("module={module}&target=127.0.0.1:{port}&debug=true");
    e.handle(&Request { path: "/probe", query: &query, headers: &[] })
}

/// The value of the sample `name` in an exposition.
fn sample(body: &str, name: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(' ')).map(str::to_string))
}

/// `(probe_success, probe_failed_due_to_regex)`.
fn verdict(r: &Response) -> (String, String) {
    let get = |name| sample(&r.body, name).unwrap_or_else(|| panic!("no {name} in {}", r.body));
    (get("probe_success"), get("probe_failed_due_to_regex"))
}

fn heard(s: &ScriptServer, n: usize) -> Vec<String> {
    let lines = s.wait_heard(n, std::time::Duration::from_secs(10));
    lines.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect()
}

fn smtp_server(ca: &TestCa, offer_starttls: bool) -> ScriptServer {
    let mut script = vec![
        Act::say("220 mail.test ESMTP Testfix\r\n"),
        Act::hear("EHLO prober"),
        Act::say(if offer_starttls {
            "250-mail.test\r\n250-STARTTLS\r\n250 SIZE 1000\r\n"
        } else {
            "250-mail.test\r\n250 SIZE 1000\r\n"
        }),
    ];
    if offer_starttls {
        script.extend([
            Act::hear("STARTTLS"),
            Act::say("220 2.0.0 Ready to start TLS\r\n"),
            Act::StartTls,
            Act::hear("EHLO prober"),
            Act::say("250-mail.test\r\n250-AUTH PLAIN LOGIN\r\n250 SIZE 1000\r\n"),
            Act::hear("QUIT"),
            Act::say("221 2.0.0 Bye\r\n"),
        ]);
    }
    ScriptServer::start(script, Some(TlsServerOptions::new(ca.issue(&["mail.test"]))), false)
}

#[test]
fn smtp_starttls_succeeds_through_tls_and_fails_by_regex_without_it() {
    let s = setup("smtp");
    let server = smtp_server(&s.ca, true);
    let r = probe(&s.exporter, "smtp_starttls", server.port());
    assert_eq!(verdict(&r), ("1".into(), "0".into()), "{}", r.body);
    // blackbox writes each send with "\n"; the example's own "\r" makes SMTP's CRLF.
    assert_eq!(
        heard(&server, 4),
        ["EHLO prober\r\n", "STARTTLS\r\n", "EHLO prober\r\n", "QUIT\r\n"]
    );
    assert_eq!(server.handshakes().len(), 1);
    assert!(sample(&r.body, "probe_ssl_earliest_cert_expiry").is_some(), "{}", r.body);

    let server = smtp_server(&s.ca, false);
    let r = probe(&s.exporter, "smtp_starttls", server.port());
    assert_eq!(verdict(&r), ("0".into(), "1".into()), "{}", r.body);
    assert!(
        r.body.contains(r#"step 3 of 9: no line matched \"^250-STARTTLS\": the peer closed"#),
        "the debug log names query_response[2]: {}",
        r.body
    );
    assert!(server.handshakes().is_empty());
}

#[test]
fn imap_starttls_succeeds() {
    let s = setup("imap");
    let server = ScriptServer::start(
        vec![
            Act::say("* OK [CAPABILITY IMAP4rev1 STARTTLS LOGINDISABLED] ready\r\n"),
            Act::hear(". STARTTLS"),
            Act::say(". OK Begin TLS negotiation now\r\n"),
            Act::StartTls,
            Act::hear(". capability"),
            Act::say("* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n. OK done\r\n"),
        ],
        Some(TlsServerOptions::new(s.ca.issue(&["mail.test"]))),
        false,
    );
    let r = probe(&s.exporter, "imap_starttls", server.port());
    assert_eq!(verdict(&r), ("1".into(), "0".into()), "{}", r.body);
    assert_eq!(heard(&server, 2), [". STARTTLS\n", ". capability\n"]);
}

#[test]
fn irc_banner_answers_the_ping_with_its_token() {
    let s = setup("irc");
    let script = |token: &str| {
        vec![
            Act::hear("NICK prober"),
            Act::hear("USER prober prober prober :prober"),
            Act::say(&format!(":irc.test NOTICE * :Looking up your hostname\r\nPING :{token}\r\n")),
            Act::hear(&format!("PONG {token}")),
            Act::say(":irc.test 001 prober :Welcome to the test network\r\n"),
        ]
    };
    let server = ScriptServer::start(script("5C0A1B"), None, false);
    let r = probe(&s.exporter, "irc_banner", server.port());
    assert_eq!(verdict(&r), ("1".into(), "0".into()), "{}", r.body);
    assert_eq!(heard(&server, 3)[2], "PONG 5C0A1B\n");

    // A server that closes after the PONG: the last expect fails at the peer's close.
    let server = ScriptServer::start(script("x")[..4].to_vec(), None, false);
    let r = probe(&s.exporter, "irc_banner", server.port());
    assert_eq!(verdict(&r), ("0".into(), "1".into()), "{}", r.body);
    assert!(
        r.body.contains(r#"step 4 of 4: no line matched \"^:[^ ]+ 001\": the peer closed"#),
        "{}",
        r.body
    );
}

#[test]
fn irc_banner_reads_past_a_long_motd() {
    // A chatty server: 60 kB of MOTD before the PING. blackbox_exporter's scanner drops the
    // lines it has read, and so do the steps (the kept output is the first 10240 bytes).
    let s = setup("irc-motd");
    let motd = ":irc.test 372 prober :- the message of the day, line after line after line\r\n"
        .repeat(800);
    assert!(motd.len() > 60_000);
    let server = ScriptServer::start(
        vec![
            Act::hear("NICK prober"),
            Act::hear("USER prober prober prober :prober"),
            Act::say(&format!("{motd}PING :tok\r\n")),
            Act::hear("PONG tok"),
            Act::say(&format!("{motd}:irc.test 001 prober :Welcome\r\n")),
        ],
        None,
        false,
    );
    let r = probe(&s.exporter, "irc_banner", server.port());
    assert_eq!(verdict(&r), ("1".into(), "0".into()), "{}", r.body);
    assert_eq!(heard(&server, 3)[2], "PONG tok\n");
}

#[test]
fn an_empty_expansion_writes_nothing() {
    // `send: "${1}"` with an empty group: blackbox_exporter writes nothing at all (`if send
    // != ""`), not a lone "\n"; the next step's send is the first line the server hears.
    let s = setup("empty-send");
    let server =
        ScriptServer::start(vec![Act::say("220\r\nready\r\n"), Act::hear("QUIT")], None, false);
    let r = probe(&s.exporter, "empty_send", server.port());
    assert_eq!(verdict(&r), ("1".into(), "0".into()), "{}", r.body);
    assert_eq!(heard(&server, 1), ["QUIT\n"]);
}

#[test]
fn ssh_banner_and_pop3s_banner() {
    let s = setup("banners");
    let server = ScriptServer::start(
        vec![Act::say("SSH-2.0-OpenSSH_9.6\r\n"), Act::hear("SSH-2.0-blackbox-ssh-check")],
        None,
        false,
    );
    let r = probe(&s.exporter, "ssh_banner", server.port());
    assert_eq!(verdict(&r), ("1".into(), "0".into()), "{}", r.body);
    assert_eq!(heard(&server, 1), ["SSH-2.0-blackbox-ssh-check\n"]);

    // pop3s_banner's "^+OK" is, in Go's syntax as in ours, a repeated start of text followed
    // by "OK": it cannot match a POP3 greeting ("+OK ..."), and blackbox_exporter v0.25.0
    // fails the probe by regex, after a good TLS handshake. prober serve answers the same.
    let pop3 = |greeting: &str| {
        ScriptServer::start(
            vec![Act::say(greeting)],
            Some(TlsServerOptions::new(s.ca.issue(&["mail.test"]))),
            true,
        )
    };
    let server = pop3("+OK POP3 server ready\r\n");
    let r = probe(&s.exporter, "pop3s_banner", server.port());
    assert_eq!(verdict(&r), ("0".into(), "1".into()), "{}", r.body);
    assert_eq!(server.handshakes().len(), 1);
    assert!(
        r.body.contains(r#"step 1 of 1: no line matched \"^+OK\": the peer closed"#),
        "{}",
        r.body
    );
    let server = pop3("OK what the expression means\r\n");
    let r = probe(&s.exporter, "pop3s_banner", server.port());
    assert_eq!(verdict(&r), ("1".into(), "0".into()), "{}", r.body);
}

#[test]
fn query_response_fields_are_checked_at_start() {
    // blackbox_exporter v0.28.0's own check; then what its registry would fail on at each
    // probe (a label name it refuses, one name twice, two steps each with labels).
    let step = |fields: &str| {
        format!("modules:\n  m:\n    prober: tcp\n    tcp:\n      query_response:\n{fields}")
    };
    for (fields, want) in [
        (
            "        - {expect: x, expect_bytes: ab}\n",
            "expect and expect_bytes are mutually exclusive",
        ),
        ("        - {expect: x, labels: [{name: 0a, value: b}]}\n", "\"0a\" is not a label name"),
        ("        - {expect: x, labels: [{name: a}, {name: a}]}\n", "\"a\" is given twice"),
        (
            "        - {expect: x, labels: [{name: a}]}\n        - {expect: y, labels: [{name: b}]}\n",
            "labels on more than one step",
        ),
    ] {
        let err = Modules::parse(&step(fields), Path::new("/")).unwrap_err();
        assert!(err.starts_with("module \"m\": tcp.query_response") && err.contains(want), "{err}");
    }
    let yaml = "modules:\n  m:\n    prober: tcp\n    tcp:\n      tls: true\n      query_response: [{starttls: true}]\n";
    let err = Modules::parse(yaml, Path::new("/")).unwrap_err();
    assert!(err.contains("starttls with tcp.tls: true would run TLS inside TLS"), "{err}");
}
