//! The tests' DNS servers: NSD from Debian with zones the tests write, and a UDP socket of the
//! test's own that answers as a script says (hostile, truncated, late, from another port).

#![allow(dead_code)] // each test file uses a part

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use prober_core::{NetNs, TlsOptions, TlsVerify};
use prober_dns::wire::Message;
use prober_dns::{DnsFacts, DnsProbe, DnsSpec};
use prober_testkit::netns::TestNetns;
use prober_testkit::tls::{Issued, TestCa};

/// The script that installs the server these tests run.
pub const INSTALL_HINT: &str =
    "run ci/dns-server.sh (it installs Debian's nsd package and runs these tests)";

/// How long NSD may take to load its zones and answer.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Runs `spec` to its outcome on a private poll, with its facts.
pub fn run(spec: DnsSpec, timeout: Duration) -> (prober_core::Outcome, DnsFacts) {
    let mut probe = DnsProbe::new(spec, timeout);
    let outcome = prober_io::run_to_completion(&mut probe);
    (outcome, probe.facts().clone())
}

/// The zone `probe.test.` every NSD test serves: each record type the probe renders, a name
/// whose TXT set does not fit 512 bytes, and a CNAME.
pub const ZONE: &str = r#"$ORIGIN probe.test.
$TTL 3600
@ IN SOA ns1.probe.test. hostmaster.probe.test. 2026112901 7200 3600 1209600 300
@ IN NS ns1
ns1 IN A 127.0.0.1
a IN A 192.0.2.1
a IN AAAA 2001:db8::1
alias IN CNAME a
@ IN MX 10 mail
mail IN A 192.0.2.25
ptr IN PTR a.probe.test.
_dns._udp IN SRV 0 5 53 ns1
txt IN TXT "v=spf1 -all" "say \"hi\""
@ IN CAA 0 issue "ca.example.net"
"#;

/// How many TXT records `big.probe.test.` has (about 1 KB in all: more than 512 bytes, less than NSD's EDNS0 limit of 1232).
pub const BIG_TXT_RECORDS: usize = 12;

/// NSD, from Debian, serving `probe.test.` (from [`ZONE`]) and `broken.test.` (configured,
/// its file missing: SERVFAIL) on a loopback port, UDP and TCP, and DNS over TLS on another
/// when started with a certificate; stopped when dropped.
pub struct Nsd {
    child: Child,
    dir: PathBuf,
    pub addr: SocketAddr,
    /// The DNS-over-TLS port's address (NSD's `tls-port`), when started with a certificate.
    pub tls_addr: Option<SocketAddr>,
}

fn nsd_binary() -> PathBuf {
    for dir in std::env::var("PATH").unwrap_or_default().split(':').chain(["/usr/sbin"]) {
        let candidate = Path::new(dir).join("nsd");
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!("nsd (the DNS server these tests run) is not installed: {INSTALL_HINT}");
}

/// A loopback port free for TCP at the time of asking (NSD binds UDP and TCP on it).
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = l.local_addr().expect("local address").port();
    drop(l);
    port
}

impl Nsd {
    pub fn start() -> Nsd {
        Nsd::start_with(None, None)
    }

    /// NSD serving UDP, TCP and, with `cert`, DNS over TLS on 127.0.0.1 inside the network
    /// namespace `ns` (run there by `ip netns exec`): unreachable from this one.
    pub fn start_in(ns: &TestNetns, cert: Option<&Issued>) -> Nsd {
        Nsd::start_with(cert, Some(ns))
    }

    /// NSD that also serves DNS over TLS with `cert` (NSD 4.3+: `tls-service-pem`,
    /// `tls-service-key`, `tls-port`).
    pub fn start_tls(cert: &Issued) -> Nsd {
        Nsd::start_with(Some(cert), None)
    }

    fn start_with(cert: Option<&Issued>, ns: Option<&TestNetns>) -> Nsd {
        let nsd = nsd_binary();
        // The directory is this server's alone: a counter, since two tests of one process
        // starting servers at once could be handed the same just-freed port.
        static SERVERS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = SERVERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "prober-dns-nsd-{}-{n}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut zone = ZONE.to_string();
        for i in 0..BIG_TXT_RECORDS {
            zone.push_str(&format!("big IN TXT \"{}-{i}\"\n", "x".repeat(60)));
        }
        std::fs::write(dir.join("probe.test.zone"), zone).expect("write the zone");
        let tls_files = cert.map(|c| c.write_files(&dir, "nsd-tls"));
        // A few tries: the port is free when chosen, another process may take it before NSD.
        for _ in 0..5 {
            let port = free_port();
            let tls_port = tls_files.as_ref().map(|_| free_port());
            let d = dir.display();
            // The TLS port is one more address NSD listens on; `tls-port` makes it TLS's.
            let tls_conf = match (&tls_files, tls_port) {
                (Some((pem, key)), Some(tls_port)) => format!(
                    "  ip-address: 127.0.0.1@{tls_port}\n  tls-port: {tls_port}\n  \
                     tls-service-pem: \"{}\"\n  tls-service-key: \"{}\"\n",
                    pem.display(),
                    key.display()
                ),
                _ => String::new(),
            };
            let conf = format!(
                "server:\n  ip-address: 127.0.0.1@{port}\n{tls_conf}  port: {port}\n  username: \"\"\n  \
                 chroot: \"\"\n  zonesdir: \"{d}\"\n  database: \"\"\n  pidfile: \"{d}/nsd.pid\"\n  \
                 xfrdfile: \"{d}/xfrd.state\"\n  zonelistfile: \"{d}/zone.list\"\n  xfrdir: \"{d}\"\n  \
                 logfile: \"{d}/nsd.log\"\n  server-count: 1\n  do-ip6: no\n  verbosity: 1\n\
                 remote-control:\n  control-enable: no\n\
                 zone:\n  name: probe.test\n  zonefile: \"probe.test.zone\"\n\
                 zone:\n  name: broken.test\n  zonefile: \"missing.zone\"\n"
            );
            let conf_path = dir.join("nsd.conf");
            std::fs::write(&conf_path, conf).expect("write nsd.conf");
            let mut command = match ns {
                Some(ns) => ns.command(&nsd),
                None => Command::new(&nsd),
            };
            let child = command
                .arg("-d")
                .arg("-c")
                .arg(&conf_path)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {}: {e} ({INSTALL_HINT})", nsd.display()));
            let mut server = Nsd {
                child,
                dir: dir.clone(),
                addr: ([127, 0, 0, 1], port).into(),
                tls_addr: tls_port.map(|p| ([127, 0, 0, 1], p).into()),
            };
            // The readiness query goes from NSD's own namespace (a socket stays where made).
            let sock = match ns {
                Some(ns) => ns.run_in(|| UdpSocket::bind("127.0.0.1:0")),
                None => UdpSocket::bind("127.0.0.1:0"),
            }
            .expect("bind a loopback port");
            if server.wait_ready(&sock) {
                return server;
            }
            // A failed try: its drop stops this NSD, but the directory stays for the next try
            // (it held the zone and the certificate; removing it failed every later try).
            server.dir = PathBuf::new();
        }
        let log = std::fs::read_to_string(dir.join("nsd.log")).unwrap_or_default();
        panic!("nsd did not answer on a loopback port after 5 tries; its log:\n{log}");
    }

    /// Waits until NSD answers the SOA of `probe.test.` over UDP, or has exited.
    fn wait_ready(&mut self, sock: &UdpSocket) -> bool {
        let end = Instant::now() + START_TIMEOUT;
        sock.connect(self.addr).expect("connect");
        sock.set_read_timeout(Some(Duration::from_millis(200))).expect("timeout");
        let query = prober_dns::wire::Query {
            id: 7,
            name: prober_dns::name::Name::from_text("probe.test").expect("name"),
            qtype: 6,
            qclass: 1,
            recursion_desired: false,
            edns_udp_size: None,
        }
        .encode();
        let mut buf = [0u8; 512];
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            let _ = sock.send(&query);
            if let Ok(n) = sock.recv(&mut buf) {
                if Message::parse(&buf[..n]).is_ok_and(|m| m.header.id == 7 && !m.answer.is_empty())
                {
                    return true;
                }
            }
        }
        false
    }
}

impl Drop for Nsd {
    fn drop(&mut self) {
        // SIGTERM, not SIGKILL: NSD's main process then stops its server and xfrd children,
        // which a SIGKILL would leave running.
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on the pid of our own child, not yet waited for (so not reused).
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let end = Instant::now() + Duration::from_secs(10);
        while Instant::now() < end && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// NSD serving UDP, TCP and DNS over TLS inside a namespace of the test's own, with what a
/// probe needs to reach it from there: made by [`nsd_with_dot_in`]. Dropped, it stops NSD,
/// then removes the CA's directory and the namespace.
pub struct NsdWithDot {
    pub nsd: Nsd,
    /// NSD's DNS-over-TLS address.
    pub tls_addr: SocketAddr,
    /// TLS options that verify NSD's certificate (`ns1.probe.test`, issued by a CA of the
    /// test's own, whose file is in `ca_dir`).
    pub tls: TlsOptions,
    /// The namespace, for `DnsSpec::netns`.
    pub netns: NetNs,
    ca_dir: PathBuf,
    /// Last: deleted once NSD, which runs inside, has stopped.
    _ns: TestNetns,
}

/// [`NsdWithDot`] in a new namespace tagged `tag`.
pub fn nsd_with_dot_in(tag: &str) -> NsdWithDot {
    let ns = TestNetns::new(tag);
    let ca = TestCa::new("DoT test CA");
    let nsd = Nsd::start_in(&ns, Some(&ca.issue(&["ns1.probe.test"])));
    let tls_addr = nsd.tls_addr.expect("a TLS port");
    // The server's directory is its own; the CA file goes in one named after the namespace
    // (unique in this process and among processes).
    let ca_dir = std::env::temp_dir().join(format!("{}-ca", ns.name()));
    let (ca_file, _) = ca.cert().write_files(&ca_dir, "ca");
    let tls = TlsOptions {
        verify: TlsVerify::CaFile(ca_file),
        server_name: Some("ns1.probe.test".into()),
        ..TlsOptions::default()
    };
    let netns = NetNs::new(ns.path()).unwrap();
    NsdWithDot { nsd, tls_addr, tls, netns, ca_dir, _ns: ns }
}

impl Drop for NsdWithDot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.ca_dir);
    }
}
