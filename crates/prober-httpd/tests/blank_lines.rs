//! Empty lines before a request line (RFC 9112 section 2.2: a server ignores them) are
//! skipped, over plain TCP and over TLS: alone they are an incomplete request, and a request
//! after them is answered. They once panicked the server's thread (a slice out of bounds in
//! finding the head), after which every endpoint refused connections while the process lived.

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use common::{HANG, METRICS, SCRAPE, start, temp_dir};
use prober_httpd::{Limits, Running, WebConfig};
use prober_testkit::tls::TestCa;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

/// A connection to the server under test, plain or TLS.
trait Client: Read + Write {}
impl<T: Read + Write> Client for T {}

/// How to reach a server: plainly, or over TLS trusting `ca`.
enum Transport {
    Plain,
    Tls(Arc<ClientConfig>),
}

struct Target {
    server: Running,
    transport: Transport,
}

impl Target {
    fn plain(limits: Limits) -> Target {
        Target { server: start(limits, None), transport: Transport::Plain }
    }

    fn tls(limits: Limits, name: &str) -> Target {
        let dir = temp_dir(name);
        let ca = TestCa::new("blank lines CA");
        ca.issue(&["127.0.0.1"]).write_files(&dir, "server");
        std::fs::write(
            dir.join("web.yml"),
            "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n",
        )
        .unwrap();
        let web = WebConfig::load(&dir.join("web.yml")).unwrap();
        let mut roots = RootCertStore::empty();
        roots.add(CertificateDer::from(ca.cert().cert_der.clone())).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        Target { server: start(limits, Some(web)), transport: Transport::Tls(Arc::new(config)) }
    }

    fn addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    fn connect(&self) -> Box<dyn Client> {
        let sock = TcpStream::connect(self.addr()).unwrap();
        sock.set_read_timeout(Some(HANG)).unwrap();
        match &self.transport {
            Transport::Plain => Box::new(sock),
            Transport::Tls(config) => {
                let name = ServerName::try_from("127.0.0.1").unwrap();
                let tls = ClientConnection::new(config.clone(), name).unwrap();
                Box::new(StreamOwned::new(tls, sock))
            }
        }
    }

    /// A scrape on a new connection is answered.
    fn still_serves(&self) {
        let mut c = self.connect();
        c.write_all(SCRAPE.as_bytes()).unwrap();
        assert_scraped(&read_answer(&mut *c), "a new connection");
    }
}

/// `answer` is `/metrics`' (in the classic text format: no `# EOF`).
fn assert_scraped(answer: &(u16, String), after: &str) {
    assert_eq!(answer.0, 200, "after {after:?}: {}", answer.1);
    assert!(METRICS.starts_with(&answer.1), "after {after:?}: {}", answer.1);
}

/// Reads one answer (head, then a body of its Content-Length): its status and body.
fn read_answer(c: &mut dyn Client) -> (u16, String) {
    let answer = common::read_answer(c);
    (answer.status, answer.body)
}

/// Each way of sending empty lines, then a request on the same connection: the request is
/// answered (the empty lines alone were waited on as an incomplete request), and so are
/// scrapes on new connections after it.
fn empty_lines_are_skipped(target: &Target) {
    for blank in ["\n\n\n", "\r\n\r\n\r\n", "\r\n\n\r\n\n"] {
        let mut c = target.connect();
        c.write_all(blank.as_bytes()).unwrap();
        c.flush().unwrap();
        // The server has the empty lines before the request if it reads them first: a scrape
        // on another connection is answered meanwhile (one loop, in order of arrival).
        target.still_serves();
        c.write_all(SCRAPE.as_bytes()).unwrap();
        assert_scraped(&read_answer(&mut *c), blank);
        // In one piece, and kept alive after it.
        c.write_all(format!("{blank}{SCRAPE}").as_bytes()).unwrap();
        assert_scraped(&read_answer(&mut *c), blank);
        target.still_serves();
    }
}

/// Empty lines alone are cut at the header timeout, as any incomplete head; the server goes on.
fn only_empty_lines_wait_for_the_header_timeout(target: &Target) {
    let mut c = target.connect();
    c.write_all(b"\n\n\n").unwrap();
    c.flush().unwrap();
    let mut rest = Vec::new();
    // Closed without an answer (or reset): nothing was asked.
    let _ = c.read_to_end(&mut rest);
    assert_eq!(String::from_utf8_lossy(&rest), "");
    target.still_serves();
}

/// Short enough that a test waits for it, long enough for a loaded machine to send a request.
const HEADER_TIMEOUT: Duration = Duration::from_secs(2);

#[test]
fn empty_lines_before_a_request_over_plain_tcp() {
    empty_lines_are_skipped(&Target::plain(Limits::default()));
    let limits = Limits { header_timeout: HEADER_TIMEOUT, ..Limits::default() };
    only_empty_lines_wait_for_the_header_timeout(&Target::plain(limits));
}

#[test]
fn empty_lines_before_a_request_over_tls() {
    empty_lines_are_skipped(&Target::tls(Limits::default(), "blank-tls"));
    let limits = Limits { header_timeout: HEADER_TIMEOUT, ..Limits::default() };
    only_empty_lines_wait_for_the_header_timeout(&Target::tls(limits, "blank-tls-timeout"));
}

#[test]
fn empty_lines_count_against_the_head_limit() {
    let limits = Limits::default();
    let target = Target::plain(limits);
    let mut c = target.connect();
    let flood = "\r\n".repeat((limits.max_request_line + limits.max_header_bytes) / 2 + 8);
    // The server may stop reading at its limit and answer before all of it is sent.
    let _ = c.write_all(format!("{flood}{SCRAPE}").as_bytes());
    assert_eq!(read_answer(&mut *c).0, 431);
    target.still_serves();
}
