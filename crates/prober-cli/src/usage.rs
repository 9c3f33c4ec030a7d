//! Help texts.

pub const MAIN: &str = "\
prober: kubelet-grade health probes (TCP, HTTP(S), gRPC, exec) from the command line

Usage:
  prober check [OPTIONS] TARGET        run one probe, print one line, exit with its result
  prober watch [OPTIONS] FILE          run the probes of a watch file (YAML or JSON)
  prober watch [OPTIONS] --manifest FILE
                                       run the probes of a Kubernetes manifest
  prober serve --config FILE --listen ADDR
                                       blackbox_exporter's /probe interface on this engine
  prober --help | prober --version

Run 'prober check --help', 'prober watch --help' or 'prober serve --help' for details.
";

pub const SERVE: &str = "\
Usage: prober serve --config FILE --listen ADDR [--timeout-offset DUR] [--web-config FILE]
                    [--config.enable-auto-reload] [--config.auto-reload-interval SECONDS]
                    [--history.limit N]

Serves blackbox_exporter's interface: /probe?target=T&module=M (add &debug=true for an
explanation), /metrics (its own), /config (the modules loaded, credentials as <secret>),
/logs?target=T (the explanation of a recent probe) and a status page at /. FILE is a
blackbox_exporter module file (modules with prober http, tcp, grpc, unix, icmp or dns); a
module may add an allow-list of targets:

  modules:
    http_2xx:
      prober: http
      allow: {hosts: ['*.example.com'], networks: ['10.0.0.0/8'], ports: [80, 443]}
    unix_socket:
      prober: unix
      allow: {paths: ['/run/app/']}

A refused target is answered 403. Each probe's timeout is the module's, or the scrape's
(X-Prometheus-Scrape-Timeout-Seconds) less the offset (default 500ms) when smaller.

FILE is read again on SIGHUP and on POST /-/reload; a file that is not valid leaves the
modules in force (blackbox_exporter_config_last_reload_successful 0 on /metrics).

Options:
  --config FILE          the module file
  --listen ADDR          IP:PORT, [IPV6]:PORT or :PORT
  --timeout-offset DUR   kept from the scrape's timeout for the answer (default 500ms)
  --web-config FILE      TLS, client certificates and basic auth for every endpoint, in the
                         Prometheus exporter-toolkit's format (as prober watch --web-config)
  --config.enable-auto-reload
                         also read FILE again every --config.auto-reload-interval
  --config.auto-reload-interval SECONDS
                         whole seconds between automatic reloads (default 30)
  --history.limit N      probes /logs keeps (default 100; as many failures more)
";

pub const CHECK: &str = "\
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

Options:
  --timeout DUR          one deadline for the whole probe: 500ms, 2s, 1m (default 1s)
  -H, --header 'N: v'    add or replace a request header; 'User-Agent:' with an empty
                         value removes that default header (HTTP only, repeatable)
  --redirects POLICY     same-host (default, the kubelet's), same-origin, none or any-host
  -e, --env NAME=VALUE   variable for $(NAME) expansion in the command, also set in its
                         environment (its value may use earlier --env ones; repeatable)
  --namespaces-of PID    run the command inside the namespaces of process PID (mount, UTS,
                         IPC, network, PID, cgroup; user where it differs), in its root,
                         as 'nsenter --target PID --all' does; needs CAP_SYS_ADMIN
  --exec-cgroup DIR      contain the command in a cgroup made in DIR (cgroup v2, writable):
                         at its end everything it started is killed, setsid or not
  --json                 print one JSON object instead of a human line
  -h, --help             print this help

TLS options (https:// targets, grpc://, tcp:// and dns:// targets with --tls):
  --tls                  use TLS for a grpc://, tcp:// or dns:// target (no-op for https://)
  --starttls             tcp:// targets: --send/--expect in plain text (the server's
                         go-ahead), then TLS on the same connection
  --tls-verify           verify the server's certificate against the system's roots
  --tls-ca FILE          verify it against the CA certificates in FILE (PEM) instead
  --tls-server-name NAME name sent as SNI and verified (default: the target's host)
  --tls-cert FILE        client certificate chain (PEM), with --tls-key (mutual TLS)
  --tls-key FILE         client private key (PEM), with --tls-cert
  --tls-min-version V    oldest TLS version accepted: 1.2 (default) or 1.3
  --tls-max-version V    newest TLS version offered: 1.2 or 1.3 (default)

Beyond the kubelet (http:// and https:// targets):
  -X, --request METHOD   request method instead of GET (any token: POST, HEAD, PURGE);
                         HEAD reads no body
  -d, --data DATA        send DATA as the body (@FILE: the file's bytes), with POST unless
                         -X is given and a form Content-Type unless -H sets one, as curl;
                         redirects: 301/302/303 turn POST into GET, 307/308 keep it
  --expect-status SET    statuses that are success, e.g. 200-299,418; any other final
                         status fails (reason status), 3xx included
  --expect-body REGEX    the kept body (up to 10240 bytes) must match REGEX, else failure
                         with reason body
  --expect-body-cel EXPR, --fail-if-body-cel EXPR   the CEL expression EXPR over the kept
                         body as JSON (body) must be true / false, else failure (reason body)
  --keep-alive           send no 'Connection: close' (httpGet.keepAlive in watch files;
                         also for grpc://: grpc.keepAlive); harmless here: one run has no
                         later run to reuse its connection, which is closed when the run ends
  --max-redirects N      follow at most N redirects (0 to 64; default 9, the kubelet's;
                         httpGet.maxRedirects)
  --cookies              send the cookies a response sets on the later redirect hops of
                         the run, as a browser or Go's cookie jar (httpGet.cookies)
  --compression CODING   decode the body as gzip, deflate or br, whatever Content-Encoding
                         says (httpGet.compression); sends no Accept-Encoding: use -H
  -x, --proxy URL        through the HTTP proxy http://[USER:PASS@]HOST:PORT (https://
                         by CONNECT); --proxy-header 'N: V' adds a CONNECT header,
                         --noproxy LIST names hosts reached straight (Go's NO_PROXY)
  --http1.1              HTTP/1.1 only: https:// offers no h2 by ALPN (httpGet.http1Only)
  --http2-prior-knowledge
                         HTTP/2 in clear text with prior knowledge (h2c) on http://, as
                         httpGet.protocol: HTTP2 (KEP-5999); https:// negotiates h2 anyway

gRPC requests (grpc:// targets; grpc-health-probe's options):
  --rpc-header 'K: v'    add request metadata (repeatable; keys sent in lower case, -bin
                         keys take base64 values)
  -A, --user-agent UA    user-agent instead of kube-probe/1.37 (for http(s):// targets:
                         the User-Agent header, as curl's -A)
  --authority HOST[:PORT]
                         :authority instead of HOST:PORT (--tls-server-name sets it too,
                         as grpc-go does)

Unix sockets (http://, https:// and grpc:// targets; curl's options):
  --unix-socket PATH     connect through the Unix socket PATH; the URL still gives Host,
                         SNI and the path (grpc://HOST[/SERVICE] needs no port: HOST is
                         the :authority, e.g. grpc://localhost/)
  --abstract-unix-socket NAME
                         the same through Linux's abstract socket NAME

Containers (tcp://, http://, https://, grpc:// and dns:// targets):
  --netns PATH           make the probe's socket in the network namespace PATH
                         (/proc/PID/ns/net of a container's process, /run/netns/NAME):
                         127.0.0.1 is then the container's; names resolve on the host

Address family (tcp://, http://, https://, grpc://, dns:// and icmp:// targets):
  -4, --ipv4             connect to IPv4 addresses only (curl's -4); a name without one,
                         or an IPv6 literal, fails with reason dns
  -6, --ipv6             connect to IPv6 addresses only (curl's -6)
  --prefer-ipv4          the name's IPv4 addresses if it has any, else its IPv6 ones
  --prefer-ipv6          the name's IPv6 addresses if it has any, else its IPv4 ones
                         (default: every address, raced as Go's dialer does)
  --source-address ADDR  bind the sockets to ADDR, one of this host's (source_ip_address;
                         not dns:// yet)

Beyond the kubelet (tcp:// targets):
  --send DATA            write DATA once connected (escapes: \\r \\n \\t \\\\ \\xHH)
  --expect REGEX         read the reply (up to 10240 bytes) until REGEX matches; failure
                         (reason body) when the peer closes first; alone, waits for a banner
  Steps: --send or --expect given more than once, or --send-template, make an exchange in
  command-line order (blackbox_exporter's query_response): each --expect reads lines until
  one matches, each --send writes, --starttls shakes hands with TLS where it stands
  --send-template T      after an --expect: write T with that line's groups ($1, ${1},
                         ${name}; $$ is $); --send writes a $ as it is

DNS (dns:// targets; blackbox_exporter's dns prober, dig's questions):
  --dns-type TYPE        A (default), AAAA, CNAME, MX, NS, PTR, SOA, SRV, TXT, CAA, ANY, ...
  --dns-class CLASS      IN (default), CH, HS or ANY
  --dns-tcp              ask over TCP instead of UDP (--tls: DNS over TLS, port 853
                         unless given, with the TLS options)
  --dns-tcp-fallback     ask again over TCP when the UDP answer is truncated
  --dns-no-recursion     do not set RD (dig's +norecurse)
  --dns-edns SIZE        EDNS0 with this UDP payload size (512 to 65535)
  --valid-rcodes LIST    rcodes that are success, e.g. NOERROR,NXDOMAIN (default NOERROR)
  --expect-answer REGEX  some answer record must match REGEX (repeatable), else failure
                         (reason body)

ICMP (icmp:// targets; ping's options):
  -c, --count N          echo requests to send (default 1); without --timeout the run
                         gets the time to send them all, and 1s more
  --interval DUR         time between two requests (default 1s, at least 2ms)
  -s, --payload-size N   bytes of data per request (default 28, blackbox_exporter's)
  --ttl N                TTL or hop limit of the requests
  --dont-fragment        set don't-fragment (IPv4)
  --max-loss PERCENT     failure when more than PERCENT of the requests got no reply
                         (default 100: only when none did)

Exit status: 0 success or warning, 1 failure, 2 unknown (could not run the probe),
64 usage error.
";

pub const WATCH: &str = "\
Usage: prober watch [OPTIONS] FILE
       prober watch [OPTIONS] --manifest FILE

Runs periodic probes with the kubelet's rules (initial delay, period, timeout, thresholds,
startup gating) and prints one line per published state change, and the first failing run
of every failing streak with its message.

FILE is a watch file (YAML, or JSON when it ends in .json; '-' reads standard input):
  targets:
    - name: web
      readinessProbe:
        httpGet: {path: /healthz, port: 8080}
        periodSeconds: 2
    - name: api
      livenessProbe:
        grpc: {port: 50051, service: my.pkg.Api}
Probes take exec, httpGet (scheme HTTPS: TLS without verification, as the kubelet),
tcpSocket or grpc (mode TLS for TLS), dns ({name, host, port, type, transport,
validRcodes, validateAnswerRrs, ...}) or icmp ({host, packets, intervalMilliseconds,
payloadSize, ttl, maxLossPercent, ...}), and a 'tls:' block (verify, caFile, serverName,
certFile, keyFile, minVersion, maxVersion) for TLS probes.
Beyond the kubelet: httpGet.expectStatus (\"200-299,418\") and httpGet.expectBody (a
regular expression); httpGet.keepAlive and grpc.keepAlive: true (runs reuse one
kept-alive connection);
httpGet.http1Only: true (no h2 by ALPN; httpGet.protocol: HTTP2 is h2c, as the kubelet);
httpGet.maxRedirects: N (redirects followed at most, 9 by default), httpGet.cookies: true
(a cookie jar for each run's redirect hops) and httpGet.compression: gzip|deflate|br
(the body decoded before it is kept and matched);
unhealthyPeriodSeconds/Milliseconds (the period while Failure is
published), transitionPeriodSeconds/Milliseconds (while results move towards a threshold)
and jitterPercent (every period drawn from period +/- N %, 0 to 50); tcpSocket.send and
tcpSocket.expect (as --send and --expect), or tcpSocket.steps: [{expect, send,
sendTemplate, starttls}, ...] in order; a target's onChange: {command: [ARGV...]},
its own hook instead of --on-change's.
With --manifest, FILE is a Kubernetes manifest (multi-document YAML, or a List as
'kubectl get -o yaml' writes it): the probes of every container of its Pods, Deployments,
StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs and CronJobs run
against ADDR.

Options:
  --manifest FILE   read probes from a Kubernetes manifest
  --host ADDR       host for probes that name none (default 127.0.0.1); a host name or
                    an IP address, no port
  --port PORT=LOCAL probe local port LOCAL where the file says container port PORT (a
                    number, or a port name from the file's ports), as published by
                    'docker run -p LOCAL:PORT' (repeatable; one option per port)
  --for DUR         stop after DUR (500ms, 2s, 1m, 1h)
  --until-ready     exit 0 as soon as every target is ready; 1 if --for ends first
  --json            one JSON object per line
  --every-run       also a line for every run (result, reason, message, duration)
  --metrics ADDR    serve Prometheus metrics at http://ADDR/metrics (IP:PORT, [IPV6]:PORT
                    or :PORT; port 0: the system's choice, printed on standard error)
  --health-listen ADDR
                    serve /readyz and /livez (200 when every target is ready / live, else
                    503; ?verbose lists them; /readyz/TARGET for one) at ADDR, as --metrics
  --web-config FILE protect --metrics and --health-listen as Prometheus exporters are (the
                    exporter-toolkit's web config: tls_server_config, basic_auth_users with
                    bcrypt hashes, http_server_config.headers)
  --on-change CMD   run CMD when a target's published state changes, with PROBER_TARGET,
                    PROBER_PROBE, PROBER_FROM, PROBER_TO and PROBER_REASON set; no shell
                    (CMD is split into words as a shell would, quotes included; ask for one:
                    'sh -c \"...\"'); one run at a time per target, changes meanwhile coalesced
                    into one more run with the latest state; output logged as a hook line
  --on-change-timeout DUR
                    kill a hook's process group after DUR (default 10s)
  -h, --help        print this help

Exit status: 0 done (or ready with --until-ready), 1 not ready when --for ended or on a
signal with --until-ready, 64 bad arguments or bad file (a --web-config too), 66 file not
readable, 70 the --metrics or --health-listen address cannot be bound.
SIGINT and SIGTERM stop the watch cleanly.
Under systemd (Type=notify, NOTIFY_SOCKET set): READY=1 once every target has its first
verdict, STATUS= on change, WATCHDOG=1 while the watch makes progress, STOPPING=1 at the end.
";
