//! What the ICMP suites share: running one probe to its end, and a lab of two network
//! namespaces joined by a veth pair: the prober's side and a router with paths that answer,
//! drop, refuse and expire echo requests. Namespaces need root and iproute2 (CI runs as root):
//! without them the tests fail, saying so; they never skip.

#![allow(dead_code)] // each suite uses its own share

use std::time::Duration;

use prober_core::Outcome;
use prober_icmp::{IcmpFacts, IcmpProbe, IcmpSocket, IcmpSpec};
use prober_io::run_to_completion;
use prober_testkit::netns::TestNetns;

/// The timeout of runs that end by an answer; a generous bound, never waited out by a test
/// that passes.
pub const ANSWERED: Duration = Duration::from_secs(5);

/// Runs `spec` to its end on this thread (in this thread's network namespace).
pub fn ping(spec: &IcmpSpec, timeout: Duration) -> (Outcome, IcmpFacts) {
    let mut probe = IcmpProbe::new(spec, timeout);
    let outcome = run_to_completion(&mut probe);
    (outcome, *probe.facts())
}

/// A spec of one echo to `host` on the socket kind `socket`.
pub fn spec(host: &str, socket: IcmpSocket) -> IcmpSpec {
    let mut s = IcmpSpec::new(host);
    s.socket = socket;
    s.validate().expect("a valid spec");
    s
}

/// Writes a sysctl of the calling thread's network namespace (`net/ipv4/ping_group_range`).
pub fn sysctl(name: &str, value: &str) {
    let path = format!("/proc/sys/{name}");
    std::fs::write(&path, value).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
}

/// Lets every group (`0 2147483647`) or none (`1 0`) open unprivileged ICMP sockets in the
/// calling thread's namespace.
pub fn ping_group_range(all: bool) {
    sysctl("net/ipv4/ping_group_range", if all { "0 2147483647" } else { "1 0" });
}

/// The prober's namespace `a` and a router `r`, joined by a veth pair:
///
/// - `10.77.0.2`/`fd77::2` (the prober, default route via the router) and
///   `10.77.0.1`/`fd77::1` (the router, which answers echoes);
/// - [`Lab::EXPIRES4`]/[`Lab::EXPIRES6`]: routed on by the router (to a neighbour that is not there), so a
///   request with TTL 1 expires there (time exceeded);
/// - [`Lab::PROHIBITED4`]/[`Lab::PROHIBITED6`]: a `prohibit` route, as a firewall's reject
///   rule: the router answers destination unreachable, administratively prohibited;
/// - [`Lab::DROPPED4`]/[`Lab::DROPPED6`]: a `blackhole` route, as a firewall's drop rule:
///   nothing comes back.
#[derive(Debug)]
pub struct Lab {
    pub prober: TestNetns,
    pub router: TestNetns,
}

impl Lab {
    pub const ROUTER4: &str = "10.77.0.1";
    pub const ROUTER6: &str = "fd77::1";
    pub const EXPIRES4: &str = "10.78.0.5";
    pub const EXPIRES6: &str = "fd78::5";
    pub const PROHIBITED4: &str = "10.79.0.5";
    pub const PROHIBITED6: &str = "fd79::5";
    pub const DROPPED4: &str = "10.80.0.5";
    pub const DROPPED6: &str = "fd80::5";

    pub fn new(tag: &str) -> Lab {
        let prober = TestNetns::new(&format!("{tag}-a"));
        let router = TestNetns::new(&format!("{tag}-r"));
        prober.ip(&[
            "link",
            "add",
            "a0",
            "type",
            "veth",
            "peer",
            "name",
            "r0",
            "netns",
            router.name(),
        ]);
        prober.ip(&["addr", "add", "10.77.0.2/24", "dev", "a0"]);
        prober.ip(&["addr", "add", "fd77::2/64", "dev", "a0", "nodad"]);
        prober.ip(&["link", "set", "a0", "up"]);
        prober.ip(&["route", "add", "default", "via", Lab::ROUTER4]);
        prober.ip(&["-6", "route", "add", "default", "via", Lab::ROUTER6]);
        router.ip(&["addr", "add", "10.77.0.1/24", "dev", "r0"]);
        router.ip(&["addr", "add", "fd77::1/64", "dev", "r0", "nodad"]);
        router.ip(&["link", "set", "r0", "up"]);
        // Routed on to a neighbour that does not exist: the TTL is checked first.
        router.ip(&["route", "add", "10.78.0.0/24", "via", "10.77.0.3"]);
        router.ip(&["-6", "route", "add", "fd78::/64", "via", "fd77::3"]);
        router.ip(&["route", "add", "prohibit", "10.79.0.0/24"]);
        router.ip(&["-6", "route", "add", "prohibit", "fd79::/64"]);
        router.ip(&["route", "add", "blackhole", "10.80.0.0/24"]);
        router.ip(&["-6", "route", "add", "blackhole", "fd80::/64"]);
        router.run_in(|| {
            sysctl("net/ipv4/ip_forward", "1");
            sysctl("net/ipv6/conf/all/forwarding", "1");
            // No rate limit on the router's errors: a run of several requests gets one each.
            sysctl("net/ipv4/icmp_ratelimit", "0");
            sysctl("net/ipv6/icmp/ratelimit", "0");
        });
        Lab { prober, router }
    }

    /// Runs `spec` from the prober's namespace, unprivileged sockets allowed there or not.
    pub fn ping(
        &self,
        spec: &IcmpSpec,
        timeout: Duration,
        unprivileged: bool,
    ) -> (Outcome, IcmpFacts) {
        let spec = spec.clone();
        self.prober.run_in(move || {
            ping_group_range(unprivileged);
            ping(&spec, timeout)
        })
    }
}
