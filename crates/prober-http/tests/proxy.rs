//! HTTP(S) probes through a real proxy on loopback (tinyproxy, see `prober_testkit::proxy`):
//! `http://` in absolute form, `https://` through a `CONNECT` tunnel with TLS to the target
//! inside it, refusals (403, 407) as Failures naming the proxy, credentials sent and never
//! printed, the no-proxy list, the allow-list on the target, and a hostile proxy's answers.
#![cfg(feature = "tls")]

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;

use common::*;
use prober_core::{AddressFilter, HttpProxy, TlsOptions, TlsVerify};
use prober_testkit::proxy::Tinyproxy;
use prober_testkit::tls::{TestCa, TlsServerOptions, TlsTargetServer};

fn via(url: &str, proxy: HttpProxy) -> ProbeSpec {
    let mut s = spec(url);
    s.set_http_proxy(Some(proxy)).unwrap();
    s
}

#[test]
fn http_goes_to_the_proxy_in_absolute_form() {
    let target = TargetServer::start();
    let proxy = Tinyproxy::start("");
    let url = target.url("/echo/headers");
    let o = run(&via(&url, HttpProxy::new(&proxy.url()).unwrap()));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    // The target saw the proxy's request (its Via), and the proxy logged ours.
    assert!(out(&o).contains("(tinyproxy/"), "{}", out(&o));
    let log = proxy.wait_for_log(&format!("GET {url}"), TIMEOUT);
    assert!(log.contains(&format!("GET {url}")), "{log}");
}

#[test]
fn https_goes_through_a_connect_tunnel() {
    let ca = TestCa::new("proxy test CA");
    let target = TlsTargetServer::start(TlsServerOptions::new(ca.issue(&["localhost"])));
    let dir = std::env::temp_dir().join(format!("prober-http-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ca.pem"), &ca.cert().cert_pem).unwrap();
    let proxy = Tinyproxy::start("");
    let url = format!("https://localhost:{}/ok", target.port());
    let tls = TlsOptions { verify: TlsVerify::CaFile(dir.join("ca.pem")), ..TlsOptions::default() };
    let o = run(&via(&url, HttpProxy::new(&proxy.url()).unwrap()).with_tls(tls).unwrap());
    assert_eq!((o.result, out(&o).as_str()), (ProbeResult::Success, "ok"), "{o:?}");
    let connect = format!("CONNECT localhost:{}", target.port());
    let log = proxy.wait_for_log(&connect, TIMEOUT);
    assert!(log.contains(&connect), "{log}");
    // TLS with the target, its name verified and sent through the tunnel.
    let h = target.wait_for_handshakes(1, TIMEOUT);
    assert_eq!(h[0].sni.as_deref(), Some("localhost"), "{h:?}");
    assert!(o.tls.is_some() && o.cert_not_after.is_some(), "{o:?}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_refused_connect_is_a_failure_naming_the_proxy_and_status() {
    let target = TlsTargetServer::start(TlsServerOptions::new(TestCa::new("x").issue(&["a"])));
    // Tunnels to port 443 only: this target's port is refused with 403.
    let proxy = Tinyproxy::start("ConnectPort 443");
    let url = target.url("/ok");
    let o = run(&via(&url, HttpProxy::new(&proxy.url()).unwrap()));
    let want =
        format!("Get \"{url}\": proxy 127.0.0.1:{} answered CONNECT with status 403", proxy.port());
    assert_failure(&o, Reason::Status, &want);
    assert_eq!(o.http_status, None, "the target answered nothing");
    assert_eq!(target.handshakes().len(), 0);
}

#[test]
fn credentials_are_sent_as_basic_and_never_printed() {
    let target = TargetServer::start();
    let proxy = Tinyproxy::start("BasicAuth prober s3cretPW");
    let tls_target = TlsTargetServer::start(TlsServerOptions::new(TestCa::new("x").issue(&["a"])));
    // Without credentials: 407 from the proxy, for the request and for a CONNECT.
    let o = run(&via(&target.url("/ok"), HttpProxy::new(&proxy.url()).unwrap()));
    assert_status_failure(&o, 407, &out(&o));
    let url = tls_target.url("/ok");
    let o = run(&via(&url, HttpProxy::new(&proxy.url()).unwrap()));
    let want =
        format!("Get \"{url}\": proxy 127.0.0.1:{} answered CONNECT with status 407", proxy.port());
    assert_failure(&o, Reason::Status, &want);
    // With them, both go through.
    let with = format!("http://prober:s3cretPW@127.0.0.1:{}", proxy.port());
    let s = via(&target.url("/ok"), HttpProxy::new(&with).unwrap());
    assert!(!format!("{s:?}").contains("s3cretPW") && !format!("{s:?}").contains("czNjcmV0"));
    assert_success(&run(&s), "ok");
    let o = run(&via(&url, HttpProxy::new(&with).unwrap()));
    assert_eq!((o.result, out(&o).as_str()), (ProbeResult::Success, "ok"), "{o:?}");
    assert!(!format!("{o:?}").contains("s3cretPW"));
}

#[test]
fn a_proxy_that_is_down_fails_in_gos_words() {
    let target = TargetServer::start();
    let port = closed_port();
    let url = target.url("/ok");
    let o = run(&via(&url, HttpProxy::new(&format!("127.0.0.1:{port}")).unwrap()));
    let want = format!(
        "Get \"{url}\": proxyconnect tcp: dial tcp 127.0.0.1:{port}: connect: connection refused"
    );
    assert_failure(&o, Reason::Refused, &want);
    assert_eq!(target.connections(), 0);
}

#[test]
fn no_proxy_and_loopback_go_straight_to_the_target() {
    let target = TargetServer::start();
    let proxy = Tinyproxy::start("");
    // With a no-proxy list, loopback is never proxied (Go's NO_PROXY rules).
    let mut p = HttpProxy::new(&proxy.url()).unwrap();
    p.set_no_proxy("example.com").unwrap();
    let o = run(&via(&target.url("/echo/headers"), p));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert!(!out(&o).contains("Via:"), "{}", out(&o));
    assert_eq!(proxy.log().matches("Request (file descriptor").count(), 0, "{}", proxy.log());
}

#[test]
fn the_allow_list_checks_the_target_and_the_proxy() {
    let target = TargetServer::start();
    let proxy = Tinyproxy::start("");
    let only = |ports: &[String]| {
        let f = AddressFilter::parse::<&str, &str, _>(&[], &["127.0.0.0/8"], ports).unwrap();
        Some(std::sync::Arc::new(f))
    };
    // The proxy's port is allowed, the target's is not: refused before anything is sent.
    let url = target.url("/ok");
    let mut s = via(&url, HttpProxy::new(&proxy.url()).unwrap());
    let ProbeKind::Http(h) = &mut s.kind else { unreachable!() };
    h.connect.address_filter = only(&[proxy.port().to_string()]);
    let o = run(&s);
    let want = format!("Get \"{url}\": not allowed: port {} is not allowed", target.port());
    assert_failure(&o, Reason::Denied, &want);
    // The target's port only: the proxy's address is refused by the dial.
    let ProbeKind::Http(h) = &mut s.kind else { unreachable!() };
    h.connect.address_filter = only(&[target.port().to_string()]);
    let o = run(&s);
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Denied), "{o:?}");
    assert!(o.message.contains(&format!("127.0.0.1:{}", proxy.port())), "{o:?}");
    assert_eq!(proxy.log().matches("Request (file descriptor").count(), 0);
    assert_eq!(target.connections(), 0);
}

/// A proxy that answers every `CONNECT` with `answer` (a real socket, a hostile peer).
fn answering_proxy(answer: Vec<u8>) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut c, _)) = l.accept() {
            let mut head = Vec::new();
            let mut b = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut b) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&b[..n]),
                }
            }
            let _ = c.write_all(&answer);
            let _ = c.read(&mut b);
        }
    });
    port
}

#[test]
fn a_hostile_proxy_answer_is_bounded() {
    let url = "https://127.0.0.1:1/ok";
    let huge = format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(64 * 1024)).into_bytes();
    let o =
        run(&via(url, HttpProxy::new(&format!("127.0.0.1:{}", answering_proxy(huge))).unwrap()));
    assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Protocol), "{o:?}");
    assert!(o.message.contains("exceeded"), "{o:?}");
    let early = b"HTTP/1.1 200 OK\r\n\r\n\x16\x03\x01 early bytes".to_vec();
    let port = answering_proxy(early);
    let o = run(&via(url, HttpProxy::new(&format!("127.0.0.1:{port}")).unwrap()));
    let want =
        format!("Get \"{url}\": proxy 127.0.0.1:{port} sent 15 bytes after its CONNECT answer");
    assert_failure(&o, Reason::Protocol, &want);
}
