//! A followed redirect's body is read before the next request, as Go's client (and so the
//! kubelet) reads it: up to 2 KiB when it has no `Content-Length` or one of at most 2 KiB.
//! A redirect whose body stalls therefore times out, naming the next URL; one that declares a
//! larger body is followed at once.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use prober_core::{ProbeKind, ProbeResult, ProbeSpec, Reason};
use prober_http::HttpProbe;
use prober_io::run_to_completion;

/// Serves connections in order: the first gets `redirect` (and is then held open without
/// more bytes until the test ends), later ones a 200. Returns the URL and a sender that ends
/// the server.
fn server(redirect: &'static [u8]) -> (String, mpsc::Sender<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/start", l.local_addr().unwrap());
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut held: Vec<TcpStream> = Vec::new();
        for (i, conn) in l.incoming().enumerate() {
            let Ok(mut c) = conn else { break };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            if i == 0 {
                let _ = c.write_all(redirect);
                held.push(c); // stalls: the rest of the body never comes
            } else {
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                );
                break;
            }
        }
        let _ = stopped.recv_timeout(Duration::from_secs(30));
    });
    (url, stop)
}

fn check(url: &str, timeout: Duration) -> prober_core::Outcome {
    let spec = ProbeSpec::http(url).unwrap().with_timeout(timeout).unwrap();
    let ProbeKind::Http(h) = &spec.kind else { unreachable!() };
    run_to_completion(&mut HttpProbe::new(h, spec.timeout, spec.output_limit))
}

#[test]
fn a_redirect_whose_small_body_stalls_times_out_naming_the_next_url() {
    for redirect in [
        &b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 100\r\n\r\npartial"[..],
        &b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"[..],
        &b"HTTP/1.1 302 Found\r\nLocation: /ok\r\n\r\nclose-delimited"[..],
    ] {
        let (url, stop) = server(redirect);
        let o = check(&url, Duration::from_millis(300));
        let next = url.replace("/start", "/ok");
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Timeout), "{o:?}");
        assert_eq!(
            o.message,
            format!(
                "Get \"{next}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            )
        );
        let _ = stop.send(());
    }
}

#[test]
fn a_redirect_with_a_large_or_ended_body_is_followed() {
    // Close-delimited, 3000 bytes sent and then a stall: followed once 2 KiB were read.
    let mut long = b"HTTP/1.1 302 Found\r\nLocation: /ok\r\n\r\n".to_vec();
    long.resize(long.len() + 3000, b'a');
    let long: &'static [u8] = Box::leak(long.into_boxed_slice());
    for redirect in [
        long,
        // Declared larger than 2 KiB: not read at all.
        &b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 5000\r\n\r\npartial"[..],
        // Small and complete.
        &b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 4\r\n\r\nmove"[..],
        &b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nContent-Length: 0\r\n\r\n"[..],
    ] {
        let (url, stop) = server(redirect);
        let o = check(&url, Duration::from_secs(10));
        assert_eq!((o.result, o.output.as_slice()), (ProbeResult::Success, &b"ok"[..]), "{o:?}");
        let _ = stop.send(());
    }
}
