//! `prober check`'s flags, each declared once ([`crate::flags`]): what it records into
//! [`Given`], and its help. What they make of the probe once the target is known is
//! `check.rs`'s (the kubelet's flags and TLS), `extensions.rs`'s and `kinds.rs`'s.

use std::ffi::OsString;

use prober::{HttpVersion, IpFamily};

use crate::args::{Failure, Parser};
use crate::check::{CheckArgs, Given, env_var, parse_header, pid, redirects, timeout};
use crate::flags::{Command, Flag, Operands, Section, add, help, path, set, short, switch, text};

/// Parses the arguments after `check`; `Ok(None)` when help was printed.
pub fn parse(mut p: Parser) -> Result<Option<CheckArgs>, Failure> {
    let mut g = Given::default();
    if !CHECK.parse(&mut p, &mut g)? {
        return Ok(None);
    }
    g.build(&p).map(Some)
}

impl Operands for Given {
    const COMMAND_LINE: bool = true;

    fn operand(&mut self, p: &Parser, v: OsString) -> Result<(), Failure> {
        self.target(p, v)
    }

    fn command_line(&mut self, p: &Parser, argv: Vec<OsString>) -> Result<(), Failure> {
        self.command(p, argv)
    }
}

/// `prober check`.
#[rustfmt::skip]
pub static CHECK: Command<Given> = Command {
    name: "check",
    head: HEAD,
    sections: &[
        Section { title: "Options:", flags: OPTIONS, note: "" },
        Section { title: "TLS options (https:// targets, grpc://, tcp:// and dns:// targets with --tls):", flags: TLS, note: "" },
        Section { title: "Beyond the kubelet (http:// and https:// targets):", flags: HTTP, note: "" },
        Section { title: "gRPC requests (grpc:// targets; grpc-health-probe's options):", flags: GRPC, note: "" },
        Section { title: "Unix sockets (http://, https:// and grpc:// targets; curl's options):", flags: UNIX, note: "" },
        Section { title: "Containers (tcp://, http://, https://, grpc:// and dns:// targets):", flags: CONTAINERS, note: "" },
        Section { title: "Address family (tcp://, http://, https://, grpc://, dns:// and icmp:// targets):", flags: FAMILY, note: "" },
        Section { title: "Beyond the kubelet (tcp:// targets):", flags: TCP, note: STEPS },
        Section { title: "DNS (dns:// targets; blackbox_exporter's dns prober, dig's questions):", flags: DNS, note: "" },
        Section { title: "ICMP (icmp:// targets; ping's options):", flags: ICMP, note: "" },
    ],
    tail: "
Exit status: 0 success or warning, 1 failure, 2 unknown (could not run the probe),
64 usage error.
",
    column: 25,
    unknown_names_command: true,
};

const HEAD: &str = "\
Usage: prober check [--timeout DUR] [-H 'Name: value']... [--redirects POLICY]
                    [--env NAME=VALUE]... [--namespaces-of PID] [--exec-cgroup DIR]
                    [TLS OPTIONS] [--json]
                    TARGET

Runs one probe with the kubelet's rules and exits with its result.

TARGET:
  http://HOST[:PORT][/PATH]    HTTP GET; 2xx success, unfollowed 3xx warning, else failure
  https://HOST[:PORT][/PATH]   the same over TLS (no certificate verification by default)
  tcp://HOST:PORT              TCP connect ([::1] for IPv6)
  grpc://HOST:PORT[/SERVICE]   gRPC health check of SERVICE (none: the whole server),
                               plaintext HTTP/2 (h2c) unless --tls is given
  unix:///PATH, unix:PATH, unix-abstract:NAME
                               connect to a Unix socket (as tcp://; gRPC's naming)
  dns://SERVER[:PORT]/NAME     DNS query of NAME (type A) to SERVER (port 53); NOERROR is
                               success; prints the rcode and the answer records
  icmp://HOST                  ICMP echo (ping); prints sent/received/loss and rtt
  -- CMD [ARG...]              run a command (no shell); exit 0 is success
";

#[rustfmt::skip]
const OPTIONS: &[Flag<Given>] = &[
    text("--timeout", "DUR", |g, p, _, v| set(&mut g.timeout, timeout(p, &v)?),
        "one deadline for the whole probe: 500ms, 2s, 1m30s (default 1s)"),
    short('H', text("--header", "'N: v'",
        |g, p, _, v| add(&mut g.headers, parse_header(&v).map_err(|e| p.usage(e))?),
        "add or replace a request header; 'User-Agent:' with an empty\n\
         value removes that default header (HTTP only, repeatable)")),
    text("--redirects", "POLICY", |g, p, _, v| set(&mut g.redirects, redirects(p, &v)?),
        "same-host (default, the kubelet's), same-origin, none or any-host"),
    short('e', text("--env", "NAME=VALUE", |g, p, _, v| add(&mut g.env, env_var(p, &v)?),
        "variable for $(NAME) expansion in the command, also set in its\n\
         environment (its value may use earlier --env ones; repeatable)")),
    text("--namespaces-of", "PID", |g, p, _, v| set(&mut g.namespaces_of, pid(p, &v)?),
        "run the command inside the namespaces of process PID (mount, UTS,\n\
         IPC, network, PID, cgroup; user where it differs), in its root,\n\
         as 'nsenter --target PID --all' does; needs CAP_SYS_ADMIN"),
    text("--exec-cgroup", "DIR", |g, _, _, v| set(&mut g.exec_cgroup, v),
        "contain the command in a cgroup made in DIR (cgroup v2, writable):\n\
         at its end everything it started is killed, setsid or not"),
    switch("--json", |g| g.json = true, "print one JSON object instead of a human line"),
    help(),
];

#[rustfmt::skip]
const TLS: &[Flag<Given>] = &[
    switch("--tls", |g| _ = g.tls.note("--tls"),
        "use TLS for a grpc://, tcp:// or dns:// target (no-op for https://)"),
    switch("--starttls", |g| { g.tls.note("--starttls"); g.extensions.note_starttls() },
        "tcp:// targets: --send/--expect in plain text (the server's\n\
         go-ahead), then TLS on the same connection"),
    switch("--tls-verify", |g| _ = g.tls.note("--tls-verify"),
        "verify the server's certificate against the system's roots"),
    path("--tls-ca", "FILE", |g, _, v| set(&mut g.tls.note("--tls-ca").ca, v),
        "verify it against the CA certificates in FILE (PEM) instead"),
    text("--tls-server-name", "NAME",
        |g, _, _, v| set(&mut g.tls.note("--tls-server-name").server_name, v),
        "name sent as SNI and verified (default: the target's host)"),
    path("--tls-cert", "FILE", |g, _, v| set(&mut g.tls.note("--tls-cert").cert, v),
        "client certificate chain (PEM), with --tls-key (mutual TLS)"),
    path("--tls-key", "FILE", |g, _, v| set(&mut g.tls.note("--tls-key").key, v),
        "client private key (PEM), with --tls-cert"),
    text("--tls-min-version", "V", |g, p, o, v| g.tls.version(p, o, &v),
        "oldest TLS version accepted: 1.2 (default) or 1.3"),
    text("--tls-max-version", "V", |g, p, o, v| g.tls.version(p, o, &v),
        "newest TLS version offered: 1.2 or 1.3 (default)"),
    switch("--tls-resumption", |g| _ = g.tls.note("--tls-resumption"),
        "resume TLS sessions between runs (watch files: tls.resumption); one\n\
         check is one handshake: nothing to resume, the option is accepted"),
];

#[rustfmt::skip]
const HTTP: &[Flag<Given>] = &[
    short('X', text("--request", "METHOD", |g, _, _, v| set(&mut g.extensions.method, v),
        "request method instead of GET (any token: POST, HEAD, PURGE);\n\
         HEAD reads no body")),
    short('d', text("--data", "DATA", |g, _, _, v| set(&mut g.extensions.data, v),
        "send DATA as the body (@FILE: the file's bytes), with POST unless\n\
         -X is given and a form Content-Type unless -H sets one, as curl;\n\
         redirects: 301/302/303 turn POST into GET, 307/308 keep it")),
    text("--expect-status", "SET", |g, _, _, v| set(&mut g.extensions.expect_status, v),
        "statuses that are success, e.g. 200-299,418; any other final\n\
         status fails (reason status), 3xx included"),
    text("--expect-body", "REGEX", |g, _, _, v| set(&mut g.extensions.expect_body, v),
        "the kept body (up to 10240 bytes) must match REGEX, else failure\n\
         with reason body"),
    text("--expect-body-cel", "EXPR", |g, _, _, v| set(&mut g.extensions.expect_body_cel, v),
        "the CEL expression EXPR over the kept body as JSON (body) must be\n\
         true, else failure (reason body)"),
    text("--fail-if-body-cel", "EXPR", |g, _, _, v| set(&mut g.extensions.fail_if_body_cel, v),
        "as --expect-body-cel, but failure when EXPR is true"),
    switch("--keep-alive", |g| g.extensions.keep_alive = true,
        "send no 'Connection: close' (httpGet.keepAlive in watch files;\n\
         also for grpc://: grpc.keepAlive); harmless here: one run has no\n\
         later run to reuse its connection, which is closed when the run ends"),
    text("--max-redirects", "N", |g, _, _, v| set(&mut g.extensions.max_redirects, v),
        "follow at most N redirects (0 to 64; default 9, the kubelet's;\n\
         httpGet.maxRedirects)"),
    switch("--cookies", |g| g.extensions.cookies = true,
        "send the cookies a response sets on the later redirect hops of\n\
         the run, as a browser or Go's cookie jar (httpGet.cookies)"),
    text("--compression", "CODING",
        |g, p, o, v| set(&mut g.extensions.compression, v.parse().map_err(|e| p.usage(format!("bad {o} {e}")))?),
        "decode the body as gzip, deflate or br, whatever Content-Encoding\n\
         says (httpGet.compression); sends no Accept-Encoding: use -H"),
    short('x', text("--proxy", "URL", |g, _, _, v| set(&mut g.extensions.proxy, v),
        "through the HTTP proxy http://[USER:PASS@]HOST:PORT (https://\n\
         by CONNECT)")),
    text("--proxy-header", "'N: V'", |g, _, _, v| add(&mut g.extensions.proxy_headers, v),
        "a header of the CONNECT request (repeatable); needs --proxy"),
    text("--noproxy", "LIST", |g, _, _, v| set(&mut g.extensions.noproxy, v),
        "hosts reached without the proxy (Go's NO_PROXY); needs --proxy"),
    switch("--http1.1", |g| g.extensions.http_version = Some(("--http1.1", HttpVersion::Http1)),
        "HTTP/1.1 only: https:// offers no h2 by ALPN (httpGet.http1Only)"),
    switch("--http2-prior-knowledge",
        |g| g.extensions.http_version = Some(("--http2-prior-knowledge", HttpVersion::H2c)),
        "HTTP/2 in clear text with prior knowledge (h2c) on http://, as\n\
         httpGet.protocol: HTTP2 (KEP-5999); https:// negotiates h2 anyway"),
];

#[rustfmt::skip]
const GRPC: &[Flag<Given>] = &[
    text("--rpc-header", "'K: v'", |g, _, _, v| add(&mut g.extensions.rpc_headers, v),
        "add request metadata (repeatable; keys sent in lower case, -bin\n\
         keys take base64 values)"),
    short('A', text("--user-agent", "UA", |g, _, _, v| set(&mut g.extensions.user_agent, v),
        "user-agent instead of kube-probe/1.37 (for http(s):// targets:\n\
         the User-Agent header, as curl's -A)")),
    text("--authority", "HOST[:PORT]", |g, _, _, v| set(&mut g.extensions.authority, v),
        ":authority instead of HOST:PORT (--tls-server-name sets it too,\n\
         as grpc-go does)"),
];

#[rustfmt::skip]
const UNIX: &[Flag<Given>] = &[
    text("--unix-socket", "PATH", |g, _, _, v| set(&mut g.extensions.unix_socket, v),
        "connect through the Unix socket PATH; the URL still gives Host,\n\
         SNI and the path (grpc://HOST[/SERVICE] needs no port: HOST is\n\
         the :authority, e.g. grpc://localhost/)"),
    text("--abstract-unix-socket", "NAME",
        |g, _, _, v| set(&mut g.extensions.abstract_unix_socket, v),
        "the same through Linux's abstract socket NAME"),
];

#[rustfmt::skip]
const CONTAINERS: &[Flag<Given>] = &[
    text("--netns", "PATH", |g, _, _, v| set(&mut g.extensions.netns, v),
        "make the probe's socket in the network namespace PATH\n\
         (/proc/PID/ns/net of a container's process, /run/netns/NAME):\n\
         127.0.0.1 is then the container's; names resolve on the host"),
];

#[rustfmt::skip]
const FAMILY: &[Flag<Given>] = &[
    short('4', switch("--ipv4", |g| g.extensions.ip_family = Some(IpFamily::V4),
        "connect to IPv4 addresses only (curl's -4); a name without one,\n\
         or an IPv6 literal, fails with reason dns")),
    short('6', switch("--ipv6", |g| g.extensions.ip_family = Some(IpFamily::V6),
        "connect to IPv6 addresses only (curl's -6)")),
    switch("--prefer-ipv4", |g| g.extensions.ip_family = Some(IpFamily::PreferV4),
        "the name's IPv4 addresses if it has any, else its IPv6 ones"),
    switch("--prefer-ipv6", |g| g.extensions.ip_family = Some(IpFamily::PreferV6),
        "the name's IPv6 addresses if it has any, else its IPv4 ones\n\
         (default: every address, raced as Go's dialer does)"),
    text("--source-address", "ADDR", |g, _, _, v| set(&mut g.extensions.source_address, v),
        "bind the sockets to ADDR, one of this host's (source_ip_address;\n\
         not dns:// yet)"),
];

#[rustfmt::skip]
const TCP: &[Flag<Given>] = &[
    text("--send", "DATA", |g, _, _, v| g.extensions.exchange("--send", v),
        "write DATA once connected (escapes: \\r \\n \\t \\\\ \\xHH)"),
    text("--expect", "REGEX", |g, _, _, v| g.extensions.exchange("--expect", v),
        "read the reply (up to 10240 bytes) until REGEX matches; failure\n\
         (reason body) when the peer closes first; alone, waits for a banner"),
    text("--send-template", "T", |g, _, _, v| g.extensions.exchange("--send-template", v),
        "after an --expect: write T with that line's groups ($1, ${1},\n\
         ${name}; $$ is $); --send writes a $ as it is"),
];

const STEPS: &str = "  \
  Steps: --send or --expect given more than once, or --send-template, make an exchange in
  command-line order (blackbox_exporter's query_response): each --expect reads lines until
  one matches, each --send writes, --starttls shakes hands with TLS where it stands
";

#[rustfmt::skip]
const DNS: &[Flag<Given>] = &[
    text("--dns-type", "TYPE", |g, _, o, v| set(&mut g.kinds.dns(o).dns_type, v),
        "A (default), AAAA, CNAME, MX, NS, PTR, SOA, SRV, TXT, CAA, ANY, ..."),
    text("--dns-class", "CLASS",
        |g, _, o, v| set(&mut g.kinds.dns(o).dns_class, v), "IN (default), CH, HS or ANY"),
    switch("--dns-tcp", |g| g.kinds.dns("--dns-tcp").dns_tcp = true,
        "ask over TCP instead of UDP (--tls: DNS over TLS, port 853\n\
         unless given, with the TLS options)"),
    switch("--dns-tcp-fallback", |g| g.kinds.dns("--dns-tcp-fallback").dns_tcp_fallback = true,
        "ask again over TCP when the UDP answer is truncated"),
    switch("--dns-no-recursion", |g| g.kinds.dns("--dns-no-recursion").dns_no_recursion = true,
        "do not set RD (dig's +norecurse)"),
    text("--dns-edns", "SIZE", |g, _, o, v| set(&mut g.kinds.dns(o).dns_edns, v),
        "EDNS0 with this UDP payload size (512 to 65535)"),
    text("--valid-rcodes", "LIST", |g, _, o, v| set(&mut g.kinds.dns(o).valid_rcodes, v),
        "rcodes that are success, e.g. NOERROR,NXDOMAIN (default NOERROR)"),
    text("--expect-answer", "REGEX", |g, _, o, v| add(&mut g.kinds.dns(o).expect_answer, v),
        "some answer record must match REGEX (repeatable), else failure\n\
         (reason body)"),
];

#[rustfmt::skip]
const ICMP: &[Flag<Given>] = &[
    short('c', text("--count", "N", |g, _, o, v| set(&mut g.kinds.icmp(o).count, v),
        "echo requests to send (default 1); without --timeout the run\n\
         gets the time to send them all, and 1s more")),
    text("--interval", "DUR", |g, _, o, v| set(&mut g.kinds.icmp(o).interval, v),
        "time between two requests (default 1s, at least 2ms)"),
    short('s', text("--payload-size", "N", |g, _, o, v| set(&mut g.kinds.icmp(o).payload_size, v),
        "bytes of data per request (default 28, blackbox_exporter's)")),
    text("--ttl", "N",
        |g, _, o, v| set(&mut g.kinds.icmp(o).ttl, v), "TTL or hop limit of the requests"),
    switch("--dont-fragment", |g| g.kinds.icmp("--dont-fragment").dont_fragment = true,
        "set don't-fragment (IPv4)"),
    text("--max-loss", "PERCENT", |g, _, o, v| set(&mut g.kinds.icmp(o).max_loss, v),
        "failure when more than PERCENT of the requests got no reply\n\
         (default 100: only when none did)"),
];
