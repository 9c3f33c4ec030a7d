//! A real HTTP proxy on loopback for the proxy tests: Debian's `tinyproxy`, run in the
//! foreground as the test's child with a configuration written for it, stopped (by its pid)
//! when dropped. Install it with `apt-get install tinyproxy` (ci/test.sh does, through
//! `ci/lib.sh`'s `need`); without it [`Tinyproxy::start`] panics saying so, never skips.
//!
//! Its log (level `Info`) names every request it relays (`Request (file descriptor N): GET
//! http://...`, `CONNECT ...`), which tests read to assert that a probe went through it; it
//! adds `Via: 1.1 HOSTNAME (tinyproxy/VERSION)` to the requests it forwards.

use std::net::{Ipv4Addr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running tinyproxy (see the module docs).
#[derive(Debug)]
pub struct Tinyproxy {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Tinyproxy {
    /// Starts tinyproxy on a free loopback port with `extra` appended to its configuration
    /// (`ConnectPort 443` to refuse other tunnels with 403, `BasicAuth user pass` to ask for
    /// credentials with 407); returns once it accepts connections (at most 10 s).
    ///
    /// # Panics
    /// When tinyproxy is not installed or does not start.
    pub fn start(extra: &str) -> Tinyproxy {
        let port = crate::closed_port();
        let dir =
            std::env::temp_dir().join(format!("prober-tinyproxy-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tinyproxy's directory");
        let log = dir.join("tinyproxy.log");
        let conf = format!(
            "Port {port}\nListen 127.0.0.1\nTimeout 30\nMaxClients 32\nLogLevel Info\n\
             LogFile \"{}\"\nDisableViaHeader No\n{extra}\n",
            log.display()
        );
        std::fs::write(dir.join("tinyproxy.conf"), conf).expect("tinyproxy.conf");
        std::fs::write(&log, "").expect("tinyproxy.log");
        let child = Command::new("tinyproxy")
            .arg("-d")
            .arg("-c")
            .arg(dir.join("tinyproxy.conf"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("tinyproxy could not run ({e}): apt-get install tinyproxy (ci/test.sh does)")
            });
        let mut p = Tinyproxy { child, port, dir };
        let until = Instant::now() + Duration::from_secs(10);
        // Each attempt waits for the connect's answer; the loop ends by itself.
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Ok(Some(status)) = p.child.try_wait() {
                panic!("tinyproxy exited ({status}): {}", p.log());
            }
            assert!(Instant::now() < until, "tinyproxy did not listen: {}", p.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        p
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, its URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Its log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("tinyproxy.log")).unwrap_or_default()
    }

    /// Waits until its log holds `needle` (it writes the line as it handles the request), at
    /// most `timeout`; returns the log either way.
    pub fn wait_for_log(&self, needle: &str, timeout: Duration) -> String {
        let until = Instant::now() + timeout;
        loop {
            let log = self.log();
            if log.contains(needle) || Instant::now() >= until {
                return log;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
