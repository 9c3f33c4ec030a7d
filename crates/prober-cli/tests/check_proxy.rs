//! `prober check -x/--proxy`, `--proxy-header` and `--noproxy` through a real proxy on
//! loopback (tinyproxy, see `prober_testkit::proxy`).

mod common;

use common::*;
use prober_testkit::proxy::Tinyproxy;

#[test]
fn check_through_a_proxy() {
    let proxy = Tinyproxy::start("BasicAuth prober s3cretPW\nConnectPort 443");
    let server = TargetServer::start();
    let url = server.url("/echo/headers");
    let with = format!("http://prober:s3cretPW@127.0.0.1:{}", proxy.port());
    let (code, v) = check_json(&["--proxy", &with, &url]);
    assert_eq!((code, v["result"].as_str()), (0, Some("success")), "{v}");
    assert!(v["output"].as_str().unwrap().contains("(tinyproxy/"), "{v}");
    assert!(
        proxy.wait_for_log(&format!("GET {url}"), std::time::Duration::from_secs(5)).contains(&url)
    );
    // A refused CONNECT names the proxy and its status; the password is never printed.
    let tls = format!("https://127.0.0.1:{}/", server.port());
    let r = run(&["check", "--json", "-x", &with, "--proxy-header", "X-Tenant: blue", &tls]);
    let want = format!("proxy 127.0.0.1:{} answered CONNECT with status 403", proxy.port());
    assert!(r.stdout.contains(&want), "{}", r.stdout);
    assert!(
        !r.stdout.contains("s3cretPW") && !r.stderr.contains("s3cretPW"),
        "{} {}",
        r.stdout,
        r.stderr
    );
    // Without the credentials: the proxy's 407, a failure.
    let (code, v) = check_json(&["-x", &proxy.url(), &url]);
    assert_eq!((code, v["result"].as_str()), (1, Some("failure")), "{v}");
    // --noproxy: loopback goes straight to the target (no Via).
    let (code, v) = check_json(&["-x", &proxy.url(), "--noproxy", "example.com", &url]);
    assert_eq!(code, 0, "{v}");
    assert!(!v["output"].as_str().unwrap().contains("tinyproxy"), "{v}");
    assert_usage_error(&["check", "--noproxy", "x", &url], "--noproxy need --proxy");
    assert_usage_error(&["check", "-x", "socks5://h:1", &url], "is not supported");
}
