//! `prober serve`'s `/logs`, as blackbox_exporter's: the debug output of recent probes by
//! target (and module) or id, kept for the last `--history.limit` probes and as many failures
//! more, never more whatever clients ask.

mod common;

use common::*;

/// A running `prober serve`, killed when dropped.
struct Serve {
    child: Child,
    addr: SocketAddr,
}

impl Serve {
    fn start(config: &str, more: &[&str]) -> Serve {
        let mut child = prober()
            .args(["serve", "--listen", "127.0.0.1:0", "--config", config])
            .args(more)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn prober serve");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).expect("prober serve printed where it listens");
        let addr = line
            .trim_end()
            .strip_prefix("prober serve: listening on http://")
            .unwrap_or_else(|| panic!("unexpected stderr line {line:?}"))
            .parse()
            .unwrap();
        // The rest of standard error is read, so that the server never finds it closed.
        let _ = reader(err);
        Serve { child, addr }
    }

    /// `GET path`: status and body. The sending side stays open (a client that closes it has
    /// gone, to the server).
    fn get(&self, path: &str) -> (u16, String) {
        let mut s = std::net::TcpStream::connect(self.addr).expect("connect to prober serve");
        s.set_read_timeout(Some(HANG)).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).expect("read the answer");
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("{raw:?}"));
        (head[9..12].parse().unwrap(), body.to_string())
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn logs_keep_the_last_probes_and_older_failures_within_the_limit() {
    let config = write_file("yml", "modules:\n  http_2xx:\n    prober: http\n    timeout: 30s\n");
    let serve = Serve::start(config.path(), &["--history.limit", "2"]);
    let target = TargetServer::start();
    // A port nothing listens on: a probe that fails.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let ok = |i: u32| format!("http://127.0.0.1:{}/health?{i}", target.port());
    let failed = format!("http://{closed}/");
    let probe = |t: &str| {
        let (status, body) = serve.get(&format!("/probe?module=http_2xx&target={t}"));
        assert_eq!(status, 200, "{body}");
    };
    probe(&ok(0));
    probe(&failed);
    let (status, body) = serve.get(&format!("/logs?target={}", ok(0)));
    assert_eq!(status, 200, "{body}");
    assert!(body.starts_with("Logs for the probe:\n"), "{body}");
    assert!(body.contains("\nprobe_success 1\n"), "{body}");
    assert!(body.contains("Module configuration:"), "{body}");
    for i in 1..=4 {
        probe(&ok(i));
    }
    // The last two probes are kept, and the failure that left them; the success is gone.
    let (status, body) = serve.get(&format!("/logs?target={}", ok(0)));
    assert_eq!((status, body.as_str()), (404, "Probe target not found\n"));
    let (status, body) = serve.get(&format!("/logs?target={failed}&module=http_2xx"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\nprobe_success 0\n"), "{body}");
    let (status, _) = serve.get(&format!("/logs?target={}", ok(4)));
    assert_eq!(status, 200);
    let (status, body) = serve.get("/logs?id=1");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\nprobe_success 0\n"), "id 1 is the failure: {body}");
    let (status, _) = serve.get(&format!("/logs?target={}&module=other", ok(4)));
    assert_eq!(status, 404);
    let (status, body) = serve.get("/logs");
    assert_eq!(
        (status, body.as_str()),
        (400, "Probe id or target must be defined as http query parameters\n")
    );
    let (status, _) = serve.get(&format!("/logs?id=1&target={failed}"));
    assert_eq!(status, 400);
}
