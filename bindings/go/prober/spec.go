package prober

// #include "shim.h"
// /* The spec helpers neither keep the pointers they are given (the error buffer, the out
//    parameter, strings) nor call back into Go: cgo may leave those on the stack. */
// #cgo noescape gp_spec_new_tcp_s
// #cgo nocallback gp_spec_new_tcp_s
// #cgo noescape gp_spec_new_http_s
// #cgo nocallback gp_spec_new_http_s
// #cgo noescape gp_spec_new_exec
// #cgo nocallback gp_spec_new_exec
// #cgo noescape gp_spec_new_grpc
// #cgo nocallback gp_spec_new_grpc
// #cgo noescape gp_spec_set_timeout_ms
// #cgo nocallback gp_spec_set_timeout_ms
// #cgo noescape gp_spec_set_period_ms
// #cgo nocallback gp_spec_set_period_ms
// #cgo noescape gp_spec_set_initial_delay_ms
// #cgo nocallback gp_spec_set_initial_delay_ms
// #cgo noescape gp_spec_set_thresholds
// #cgo nocallback gp_spec_set_thresholds
// #cgo noescape gp_spec_set_jitter
// #cgo nocallback gp_spec_set_jitter
// #cgo noescape gp_spec_set_output_limit
// #cgo nocallback gp_spec_set_output_limit
// #cgo noescape gp_spec_add_header
// #cgo nocallback gp_spec_add_header
// #cgo noescape gp_spec_set_env
// #cgo nocallback gp_spec_set_env
// #cgo noescape gp_spec_set_workdir
// #cgo nocallback gp_spec_set_workdir
// #cgo noescape gp_spec_set_redirect_policy
// #cgo nocallback gp_spec_set_redirect_policy
// #cgo noescape gp_spec_set_close_policy
// #cgo nocallback gp_spec_set_close_policy
// #cgo noescape gp_spec_enable_tls
// #cgo nocallback gp_spec_enable_tls
// #cgo noescape gp_spec_set_tls_verify
// #cgo nocallback gp_spec_set_tls_verify
// #cgo noescape gp_spec_set_tls_server_name
// #cgo nocallback gp_spec_set_tls_server_name
// #cgo noescape gp_spec_set_tls_client_cert
// #cgo nocallback gp_spec_set_tls_client_cert
// #cgo noescape gp_spec_set_tls_min_version
// #cgo nocallback gp_spec_set_tls_min_version
// #cgo noescape gp_spec_set_tls_max_version
// #cgo nocallback gp_spec_set_tls_max_version
// #cgo noescape gp_spec_set_expect_status
// #cgo nocallback gp_spec_set_expect_status
// #cgo noescape gp_spec_set_expect_body
// #cgo nocallback gp_spec_set_expect_body
// #cgo noescape gp_spec_set_tls_resumption
// #cgo nocallback gp_spec_set_tls_resumption
// #cgo noescape gp_spec_set_keep_alive
// #cgo nocallback gp_spec_set_keep_alive
// #cgo noescape gp_spec_set_unhealthy_period_ms
// #cgo nocallback gp_spec_set_unhealthy_period_ms
// #cgo noescape gp_spec_set_transition_period_ms
// #cgo nocallback gp_spec_set_transition_period_ms
// #cgo noescape gp_spec_set_jitter_percent
// #cgo nocallback gp_spec_set_jitter_percent
// #cgo noescape gp_spec_set_tcp_send
// #cgo nocallback gp_spec_set_tcp_send
// #cgo noescape gp_spec_set_tcp_expect
// #cgo nocallback gp_spec_set_tcp_expect
import "C"

import (
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"
	"unsafe"
)

// Kind is the kind of a probe.
type Kind int

// Probe kinds. The zero Kind is invalid: every Spec names its kind (the constructors TCP,
// HTTP, Exec and GRPC do it for you).
const (
	// KindTCP: a TCP connect probe (the kubelet's tcpSocket).
	KindTCP Kind = iota + 1
	// KindHTTP: an HTTP GET probe (httpGet).
	KindHTTP
	// KindExec: a command run without a shell (exec).
	KindExec
	// KindGRPC: a gRPC health check (grpc).
	KindGRPC
	// KindHostRun: a probe the host runs (Spec.Run), scheduled and judged by the engine; see
	// HostRun.
	KindHostRun
	// KindDNS: a DNS query to a server, the answer checked as blackbox_exporter's dns prober
	// checks it (Spec.DNS); see DNS.
	KindDNS
	// KindICMP: ICMP echo requests (ping) to a host (Spec.ICMP); see ICMP.
	KindICMP
)

// String is the kind's name ("tcp", "http", "exec", "grpc", "host-run", "dns", "icmp"), or
// "Kind(n)" for a value this package does not define.
func (k Kind) String() string {
	switch k {
	case KindTCP:
		return "tcp"
	case KindHTTP:
		return "http"
	case KindExec:
		return "exec"
	case KindGRPC:
		return "grpc"
	case KindHostRun:
		return "host-run"
	case KindDNS:
		return "dns"
	case KindICMP:
		return "icmp"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// RedirectPolicy says which HTTP redirects are followed.
type RedirectPolicy uint32

const (
	// RedirectSameHost follows redirects to the same host name (port and scheme may change):
	// the kubelet's rule and the default.
	RedirectSameHost RedirectPolicy = C.PROBER_REDIRECT_SAME_HOST
	// RedirectSameOrigin follows only when scheme, host and port all match.
	RedirectSameOrigin RedirectPolicy = C.PROBER_REDIRECT_SAME_ORIGIN
	// RedirectNone never follows; a 3xx is a Warning.
	RedirectNone RedirectPolicy = C.PROBER_REDIRECT_NONE
	// RedirectAnyHost follows to any host, scheme and port, up to the limit (Go's client and
	// blackbox_exporter's rule).
	RedirectAnyHost RedirectPolicy = C.PROBER_REDIRECT_ANY_HOST
)

// ClosePolicy says how TCP and HTTP probes close their connections.
type ClosePolicy uint32

const (
	// CloseReset closes with RST (SO_LINGER 0), leaving no TIME_WAIT: the default.
	CloseReset ClosePolicy = C.PROBER_CLOSE_RESET
	// CloseFIN closes in order with FIN.
	CloseFIN ClosePolicy = C.PROBER_CLOSE_FIN
)

// TLSOptions configures TLS for HTTPS probes and gRPC probes. A non-nil TLSOptions on a gRPC
// spec switches it to TLS, on a DNS spec to DNS over TLS; HTTP probes use TLS for https:// URLs.
//
// Without TLSOptions (a nil Spec.TLS), an HTTPS probe verifies nothing, as the kubelet's
// probes do. A non-nil TLSOptions reads as crypto/tls's Config does: its zero value verifies
// the peer's chain and name against the system's trust store; CAFile verifies against those
// CA certificates instead; InsecureSkipVerify turns verification off.
type TLSOptions struct {
	// InsecureSkipVerify verifies neither the peer's chain nor its name (the kubelet's
	// behaviour, also what a nil Spec.TLS gives). It cannot be combined with CAFile.
	InsecureSkipVerify bool
	// CAFile is a PEM file of CA certificates to verify the peer against instead of the
	// system's trust store (read when the probe runs).
	CAFile string
	// ServerName is sent as SNI and verified against the certificate (default: the host
	// probed; an IP address sends no SNI). An HTTP redirect hop to another host uses that
	// host's own name; hops back to the probed host keep this one.
	ServerName string
	// ClientCert and ClientKey are PEM files for mutual TLS; set both or neither.
	ClientCert, ClientKey string
	// MinVersion is tls.VersionTLS12 (the default when 0) or tls.VersionTLS13.
	MinVersion uint16
	// MaxVersion is tls.VersionTLS12 or tls.VersionTLS13 (the default when 0); not below
	// MinVersion.
	MaxVersion uint16
	// Resumption resumes TLS sessions (default false: a full handshake every time, as the
	// kubelet): the runs of one engine target offer the session tickets (TLS 1.3) and session
	// IDs or tickets (TLS 1.2) their server gave the earlier runs. Sessions are kept per
	// target and per TLS configuration; a resumed run reports the certificate facts of the
	// full handshake that made its session. Check resumes nothing. With the kubelet's
	// verification, set InsecureSkipVerify too (a non-nil TLSOptions verifies otherwise).
	Resumption bool
}

// Header is one HTTP request header. A header replaces the default of the same name; an
// empty User-Agent or Accept value removes that default; Host sets the virtual host.
type Header struct {
	// Name is the header's name, a token such as "X-Probe".
	Name string
	// Value must not contain CR, LF or NUL.
	Value string
}

// EnvVar is a static environment variable of an exec probe: it feeds $(NAME) expansion in
// Argv and is added to the command's environment.
type EnvVar struct {
	// Name is the variable's name; setting a name again replaces its value.
	Name string
	// Value is the variable's value.
	Value string
}

// Spec describes a probe: what to probe, the limits of one run and, for Engine.SetProbe, the
// schedule. It is a plain value; zero fields take libprober's defaults (timeout 1s, period
// 10s, success threshold 1, failure threshold 3, output limit 10240 bytes). Fields that do
// not apply to the Kind must be left zero: setting them gives an *Error with
// StatusWrongKind.
type Spec struct {
	// Kind says what is probed, and so which of the fields below apply.
	Kind Kind

	// Host and Port: TCP and gRPC probes; DNS probes (the server; Port 0 is 53); Host alone
	// for ICMP probes. Host is a name or an IP literal (IPv6 with or without brackets); Port
	// is 1..65535.
	Host string
	Port int

	// URL: HTTP probes, an absolute http:// or https:// URL.
	URL string
	// Headers: HTTP probes, in order.
	Headers []Header
	// Redirects: HTTP probes (default RedirectSameHost).
	Redirects RedirectPolicy
	// Close: TCP and HTTP probes (default CloseReset).
	Close ClosePolicy

	// Argv: exec probes; Argv[0] is looked up in PATH when it has no '/'. No shell.
	Argv []string
	// Env: exec probes; a name set twice takes the last value. $(NAME) in Argv takes the
	// values as written; the command's environment gets each value expanded against the
	// variables before it ($$ becomes $), as the kubelet builds a container's.
	Env []EnvVar
	// Workdir: exec probes; the command's working directory (with NamespacesOf, inside
	// that process's root).
	Workdir string
	// NamespacesOf: exec probes; run the command inside the namespaces of this process
	// (mount, UTS, IPC, network, PID, cgroup, time; its user namespace where it differs), in
	// its root and working directory, as nsenter --target PID --all does, with no wrapper
	// program and no thread of this process ever entering them. 0: on this host. Needs
	// CAP_SYS_ADMIN; a process that is gone or namespaces that may not be entered make the
	// run Unknown (ReasonSpawn) with a message naming the PID.
	NamespacesOf int
	// ExecCgroup: exec probes; contain each run in a cgroup of its own made in this cgroup v2
	// directory (absolute; one delegated to this process, or any as root): at the end of the
	// run everything the command started gets SIGKILL through cgroup.kill, including
	// processes that left its process group (setsid, a daemon's double fork), which the
	// group kill alone cannot reach. Exit codes, output and timeouts are unchanged. It costs a
	// fork instead of posix_spawn and a cgroup made and removed per run. "": only the process
	// group is killed (the default). A directory that cannot be used makes each run Unknown
	// (ReasonSpawn) without running the command.
	ExecCgroup string

	// Service: gRPC probes; the service name to check ("" is the server as a whole).
	Service string

	// DNS: DNS probes; the question and the checks of the answer (see DNSOptions). Required
	// for KindDNS: its Name is the name asked about.
	DNS *DNSOptions
	// ICMP: ICMP probes; the echo requests' options (see ICMPOptions). Nil: one echo of 28
	// bytes, as blackbox_exporter's icmp prober sends it.
	ICMP *ICMPOptions

	// Run and Label: host-run probes (see HostRun). Run performs one run; Label names the
	// probe in messages ("host run \"LABEL\" failed").
	Run   HostRunFunc
	Label string

	// TLS: HTTP and gRPC probes; TCP probes too (beyond the kubelet: TLS from the first byte,
	// or after the exchange with StartTLS).
	TLS *TLSOptions

	// Timeout of one run (1ms to 24h); rounded up to whole milliseconds.
	Timeout time.Duration
	// Period between runs of a periodic probe (1ms to 7 days).
	Period time.Duration
	// InitialDelay before the first run after the target (re)starts (up to 7 days).
	InitialDelay time.Duration
	// SuccessThreshold and FailureThreshold: consecutive results needed to publish a change.
	// Liveness and startup probes need a success threshold of 1.
	SuccessThreshold, FailureThreshold int
	// Jitter starts the first run at a random point in [0, Period) after the initial delay.
	Jitter bool
	// OutputLimit is how many bytes of HTTP body or command output are kept (1 to 64 MiB).
	OutputLimit int

	// Beyond the kubelet (Envoy, HAProxy, blackbox_exporter); zero values keep the kubelet's
	// semantics.

	// ExpectStatus: HTTP probes; a set of status codes and ranges such as "200-299,418". A
	// final status in the set is Success, any other Failure (ReasonStatus), instead of the
	// 2xx-success / 3xx-warning rule. Redirects are followed per Redirects first.
	ExpectStatus string
	// ExpectBody: HTTP probes; a regular expression (Rust regex syntax, unanchored) the kept
	// body must match, else Failure with ReasonBody. Empty: no expectation (the C and Rust
	// setters refuse an empty expression, which would match any body).
	ExpectBody string
	// ExpectBodyCEL: HTTP probes; a CEL expression over the kept body parsed as JSON (the
	// variable body) that must be true, else Failure with ReasonBody (blackbox_exporter's
	// fail_if_body_json_not_matches_cel). A body that is not JSON (or cut at OutputLimit), an
	// evaluation error or a result that is not a boolean fails too. Compiled when the spec is
	// built (a bad one is StatusInvalid, its line and column in the message); evaluation is
	// bounded (docs/semantics.md). Empty: none.
	ExpectBodyCEL string
	// FailIfBodyCEL: as ExpectBodyCEL, but the run fails when the expression is true
	// (fail_if_body_json_matches_cel).
	FailIfBodyCEL string
	// KeepAlive: HTTP and gRPC probes; runs to the same origin (scheme, host, port, TLS
	// options) reuse an idle connection the engine holds (Envoy's reuse_connection): for HTTP
	// an HTTP/1.1 connection, the request carrying no "Connection: close"; for gRPC the HTTP/2
	// connection, one stream per check (a GOAWAY, a reset, an idle timeout or a run that times
	// out drops it, and the next run dials again). Verdicts stay the kubelet's. Only an Engine
	// keeps connections: Check makes and closes one per call as without it. A run on a reused
	// connection reports Resolve, Connect and TLS as not happened (negative).
	KeepAlive bool
	// MaxRedirects: HTTP probes; redirects followed at most in a run (1 to 64), the next one
	// a Failure with ReasonTooManyRedirects. 0: the kubelet's 9 (blackbox_exporter follows
	// 10). To follow none, Redirects: RedirectNone.
	MaxRedirects int
	// Cookies: HTTP probes; keep the cookies responses set (Set-Cookie, on redirects too) and
	// send them on the later hops of the same run they match by domain and path, as a Go
	// client with a net/http/cookiejar (blackbox_exporter's, one per probe). Nothing outlives
	// the run; off, as the kubelet's client.
	Cookies bool
	// HTTPVersion: HTTP probes; HTTPAuto (the kubelet's: h2 by ALPN on https://), HTTP1
	// (HTTP/1.1 only) or H2C (HTTP/2 with prior knowledge on http://, httpGet.protocol: HTTP2).
	HTTPVersion HTTPVersion
	// Compression: HTTP probes; decode the final response's body with this content coding
	// (CompressionGzip, CompressionDeflate, CompressionBr) before it is kept, counted and
	// matched, as blackbox_exporter's compression. CompressionNone (the default): the body as
	// it arrives. No Accept-Encoding is added: set one in Headers.
	Compression Compression
	// Proxy: HTTP probes; send the requests through the HTTP proxy at this URL
	// (http://[user:password@]host[:port], or host:port): http:// URLs in absolute form,
	// https:// ones through a CONNECT tunnel with TLS to the target inside it, as Go's
	// http.Transport with http.ProxyURL. The proxy resolves the target's name; the credentials
	// go as Proxy-Authorization: Basic and are never printed. A CONNECT answered with another
	// status than 2xx is a Failure with ReasonStatus naming the proxy and the status. Empty
	// (the default): straight to the target.
	Proxy string
	// NoProxy: with Proxy, the hosts reached without it, read as Go's NO_PROXY (comma-separated
	// domains, IP addresses or networks, "*"); localhost and loopback are then never proxied.
	NoProxy string
	// ProxyConnectHeaders: with Proxy, headers of the CONNECT request (blackbox_exporter's
	// proxy_connect_header); their values are never printed.
	ProxyConnectHeaders []Header
	// UnhealthyPeriod is the period while the published value is Failure (HAProxy downinter,
	// Envoy unhealthy_interval); Period when zero.
	UnhealthyPeriod time.Duration
	// TransitionPeriod is the period while the latest results disagree with the published
	// value and count towards a threshold (HAProxy fastinter); it takes precedence over
	// UnhealthyPeriod.
	TransitionPeriod time.Duration
	// JitterPercent draws every period from period ± JitterPercent % (0 to 50).
	JitterPercent int
	// Send: TCP probes; bytes written once connected (at most 10240).
	Send []byte
	// Expect: TCP probes; a regular expression the reply must match. Bytes are read (up to
	// 10240) until it matches (Success), or the peer closes or 10240 bytes arrive without a
	// match (Failure, ReasonBody), or the deadline passes (Failure, ReasonTimeout). Alone, it
	// waits for a banner. Empty: no expectation.
	Expect string

	// Requests beyond the kubelet (issue 25; Consul, Envoy, blackbox_exporter).

	// Method: HTTP probes; any HTTP token ("POST", "HEAD", "PURGE"), "GET" when empty.
	// CONNECT is refused. HEAD reads no body. Redirects as Go's client: 301, 302 and 303 turn
	// any method but GET and HEAD into a GET without body, 307 and 308 keep method and body.
	Method string
	// Body: HTTP probes; the request body (at most 65536 bytes), sent with Content-Length.
	// Nil or empty: none (POST, PUT and PATCH then send "Content-Length: 0", as net/http).
	Body []byte
	// UnixSocket: TCP, HTTP and gRPC probes; connect through this Unix socket instead of
	// Host:Port or the URL's host (curl's --unix-socket): a path, or in gRPC's naming
	// "unix:///run/app.sock", "unix-abstract:NAME". HTTP still sends the URL's host as Host;
	// gRPC sends Host (default "localhost", as grpc-go) as :authority. See Unix.
	UnixSocket string
	// Metadata: gRPC probes; request metadata in order (grpc-health-probe's -rpc-header).
	// Keys of 0-9 a-z _ - . (sent in lower case, as grpc-go), not grpc-*, content-type, te,
	// user-agent or grpc-timeout; values printable ASCII, or base64 for keys ending in -bin.
	Metadata []Header
	// UserAgent: gRPC probes; the user-agent sent instead of kube-probe/<version>
	// (grpc-health-probe's -user-agent). HTTP probes set it through Headers.
	UserAgent string
	// Authority: gRPC probes; the :authority sent (grpc-go's WithAuthority) instead of the
	// TLS server name when one is set, else host:port.
	Authority string
	// StartTLS: TCP probes; Send/Expect run in plain text (the server's go-ahead), then TLS
	// shakes hands on the same connection with TLS (default options when nil), as
	// blackbox_exporter's starttls.
	StartTLS bool
	// TCPSteps: TCP probes; a multi-step exchange in order (blackbox_exporter's
	// query_response: SMTP or IMAP STARTTLS, IRC, banners), see TCPStep. They replace Send,
	// Expect and StartTLS: a spec with both is refused (StatusInvalid).
	TCPSteps []TCPStep
	// Netns: TCP, HTTP(S), gRPC, DNS and ICMP probes; make the probe's sockets in the network namespace
	// at this path: "/proc/PID/ns/net" of a container's process, "/run/netns/NAME" (ip netns),
	// or any bind-mounted namespace file, so that 127.0.0.1 is the container's. A library
	// thread enters the namespace (never a goroutine's thread); connect, TLS, HTTP and gRPC
	// run as for any probe, and host names resolve through the host's resolver. A namespace
	// that cannot be used (no such path, not a network namespace, no CAP_SYS_ADMIN) makes each
	// run Unknown with ReasonNamespace, naming the path. Empty: this process's namespace.
	Netns string
	// IPFamily: TCP, HTTP(S), gRPC, DNS and ICMP probes; which addresses of the host are used,
	// on every connection of a run (each redirect hop): IPAny (default: all, raced), IPv4 or
	// IPv6 (only that family; a name without one, or a literal of the other, fails with
	// ReasonDNS), PreferIPv4 or PreferIPv6 (that family when the host has it, else the other).
	// Kept-alive connections serve only probes of the same family.
	IPFamily IPFamily
	// SourceAddress: TCP, HTTP(S), gRPC, DNS and ICMP probes; bind every socket of a run (each redirect
	// hop, the one to a proxy) to this local address before it connects, in the probe's
	// network namespace when it has one (blackbox_exporter's source_ip_address, Go's
	// net.Dialer.LocalAddr). Only the target's addresses of its family are connected to,
	// after IPFamily has chosen: none left is a Failure with ReasonDNS naming the address; an
	// address this host does not have is a Failure with ReasonUnreachable ("bind: cannot
	// assign requested address"). An address with a zone is refused (StatusInvalid). The zero
	// Addr: the system chooses. Kept-alive connections serve only probes of the same source.
	SourceAddress netip.Addr
}

// TCP is a TCP connect probe of host:port.
func TCP(host string, port int) Spec { return Spec{Kind: KindTCP, Host: host, Port: port} }

// HTTP is an HTTP GET probe of url.
func HTTP(url string) Spec { return Spec{Kind: KindHTTP, URL: url} }

// Exec is an exec probe running argv (no shell).
func Exec(argv ...string) Spec { return Spec{Kind: KindExec, Argv: argv} }

// GRPC is a gRPC health probe (grpc.health.v1.Health/Check) of service at host:port,
// plaintext unless TLS is set.
func GRPC(host string, port int, service string) Spec {
	return Spec{Kind: KindGRPC, Host: host, Port: port, Service: service}
}

// cbuild holds the C strings made while converting one spec; free releases them.
type cbuild struct {
	strs []*C.char
	err  C.gp_err
}

func (b *cbuild) free() {
	for _, p := range b.strs {
		C.free(unsafe.Pointer(p))
	}
	b.strs = nil
}

// noNUL refuses a string with a NUL byte inside: it cannot cross the C API. The error has
// the status the library would use for a bad value of that field.
func noNUL(s string, code Status, what string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return &Error{Code: code, Msg: what + " contains a NUL byte"}
	}
	return nil
}

// str copies s to C memory (see noNUL).
func (b *cbuild) str(s string, code Status, what string) (*C.char, error) {
	if err := noNUL(s, code, what); err != nil {
		return nil, err
	}
	p := C.CString(s)
	b.strs = append(b.strs, p)
	return p, nil
}

func (b *cbuild) check(rc C.prober_status) error {
	if rc != C.PROBER_OK {
		return newError(rc, &b.err)
	}
	return nil
}

// millis converts a duration to whole milliseconds, rounding up.
func millis(d time.Duration, what string) (C.uint32_t, error) {
	if d < 0 {
		return 0, &Error{Code: StatusInvalidDuration, Msg: fmt.Sprintf("%s %v is negative", what, d)}
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxUint32 {
		return 0, &Error{Code: StatusInvalidDuration, Msg: fmt.Sprintf("%s %v is too long", what, d)}
	}
	return C.uint32_t(ms), nil
}

// cport maps a Go port to the C argument; values outside int32 become -1 so that the library
// refuses them with its own message.
func cport(p int) C.int32_t {
	if p < math.MinInt32 || p > math.MaxInt32 {
		return -1
	}
	return C.int32_t(p)
}

// newCSpec converts s to a new C spec. The caller frees it with C.prober_spec_free.
func newCSpec(s *Spec) (*C.prober_spec, error) {
	cs, err := buildCSpec(s)
	var pe *Error
	if errors.As(err, &pe) && pe.Code != StatusIO {
		pe.spec = true
	}
	return cs, err
}

func buildCSpec(s *Spec) (*C.prober_spec, error) {
	var b cbuild
	defer b.free()
	var cs *C.prober_spec
	if err := b.create(s, &cs); err != nil {
		return nil, err
	}
	if err := b.configure(s, cs); err != nil {
		C.prober_spec_free(cs)
		return nil, err
	}
	return cs, nil
}

// misplaced names a target field set on a spec of another kind, or is "".
func misplaced(s *Spec) string {
	tcp, http, exec, grpc := s.Kind == KindTCP, s.Kind == KindHTTP, s.Kind == KindExec, s.Kind == KindGRPC
	dns, icmp := s.Kind == KindDNS, s.Kind == KindICMP
	switch {
	case s.Host != "" && !tcp && !grpc && !dns && !icmp:
		return "Host"
	case s.Port != 0 && !tcp && !grpc && !dns:
		return "Port"
	case s.DNS != nil && !dns:
		return "DNS"
	case s.ICMP != nil && !icmp:
		return "ICMP"
	case s.URL != "" && !http:
		return "URL"
	case len(s.Argv) > 0 && !exec:
		return "Argv"
	case s.Service != "" && !grpc:
		return "Service"
	case (s.Run != nil || s.Label != "") && s.Kind != KindHostRun:
		return "Run and Label"
	}
	return ""
}

func (b *cbuild) create(s *Spec, out **C.prober_spec) error {
	if done, err := b.createUnix(s, out); done {
		return err
	}
	if f := misplaced(s); f != "" && s.Kind >= KindTCP && s.Kind <= KindICMP {
		return &Error{Code: StatusWrongKind, Msg: fmt.Sprintf("%s does not apply to %v probes", f, s.Kind)}
	}
	switch s.Kind {
	case KindTCP:
		// The string goes to C as it is (copied there): no C.CString, no C.free.
		if err := noNUL(s.Host, StatusInvalidHost, "host"); err != nil {
			return err
		}
		return b.check(C.gp_spec_new_tcp_s(s.Host, cport(s.Port), out, &b.err))
	case KindHTTP:
		if err := noNUL(s.URL, StatusInvalidURL, "URL"); err != nil {
			return err
		}
		return b.check(C.gp_spec_new_http_s(s.URL, out, &b.err))
	case KindExec:
		if len(s.Argv) == 0 {
			return &Error{Code: StatusInvalidArgv, Msg: "exec probe needs a command (Argv is empty)"}
		}
		// A Go slice of C pointers may be passed to C: it holds no Go pointers.
		argv := make([]*C.char, len(s.Argv))
		for i, a := range s.Argv {
			p, err := b.str(a, StatusInvalidArgv, fmt.Sprintf("argument %d", i))
			if err != nil {
				return err
			}
			argv[i] = p
		}
		return b.check(C.gp_spec_new_exec(&argv[0], C.size_t(len(argv)), out, &b.err))
	case KindGRPC:
		host, err := b.str(s.Host, StatusInvalidHost, "host")
		if err != nil {
			return err
		}
		svc, err := b.str(s.Service, StatusInvalid, "service")
		if err != nil {
			return err
		}
		return b.check(C.gp_spec_new_grpc(host, cport(s.Port), svc, out, &b.err))
	case KindHostRun:
		return b.createHostRun(s, out)
	case KindDNS:
		return b.createDNS(s, out)
	case KindICMP:
		return b.createICMP(s, out)
	}
	return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("spec kind %v (expected KindTCP, KindHTTP, KindExec, KindGRPC, KindHostRun, KindDNS or KindICMP)", s.Kind)}
}

func (b *cbuild) configure(s *Spec, cs *C.prober_spec) error {
	if s.Timeout != 0 {
		ms, err := millis(s.Timeout, "timeout")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_timeout_ms(cs, ms, &b.err)); err != nil {
			return err
		}
	}
	if s.Period != 0 {
		ms, err := millis(s.Period, "period")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_period_ms(cs, ms, &b.err)); err != nil {
			return err
		}
	}
	if s.InitialDelay != 0 {
		ms, err := millis(s.InitialDelay, "initial delay")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_initial_delay_ms(cs, ms, &b.err)); err != nil {
			return err
		}
	}
	if s.SuccessThreshold != 0 || s.FailureThreshold != 0 {
		ok, bad := s.SuccessThreshold, s.FailureThreshold
		if ok == 0 {
			ok = 1
		}
		if bad == 0 {
			bad = 3
		}
		if ok < 0 || bad < 0 || uint64(ok) > math.MaxUint32 || uint64(bad) > math.MaxUint32 {
			return &Error{Code: StatusInvalidThreshold, Msg: fmt.Sprintf("thresholds %d/%d out of range", ok, bad)}
		}
		if err := b.check(C.gp_spec_set_thresholds(cs, C.uint32_t(ok), C.uint32_t(bad), &b.err)); err != nil {
			return err
		}
	}
	if s.Jitter {
		if err := b.check(C.gp_spec_set_jitter(cs, true, &b.err)); err != nil {
			return err
		}
	}
	if s.OutputLimit != 0 {
		if s.OutputLimit < 0 {
			return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("output limit %d is negative", s.OutputLimit)}
		}
		if err := b.check(C.gp_spec_set_output_limit(cs, C.size_t(s.OutputLimit), &b.err)); err != nil {
			return err
		}
	}
	for _, h := range s.Headers {
		name, err := b.str(h.Name, StatusInvalidHeader, "header name")
		if err != nil {
			return err
		}
		value, err := b.str(h.Value, StatusInvalidHeader, "header value")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_add_header(cs, name, value, &b.err)); err != nil {
			return err
		}
	}
	if s.Redirects > RedirectAnyHost {
		return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("Redirects %d is not RedirectSameHost, RedirectSameOrigin, RedirectNone or RedirectAnyHost", uint32(s.Redirects))}
	}
	if s.Close > CloseFIN {
		return &Error{Code: StatusInvalidEnum, Msg: fmt.Sprintf("Close %d is not CloseReset or CloseFIN", uint32(s.Close))}
	}
	if s.Redirects != RedirectSameHost {
		if err := b.check(C.gp_spec_set_redirect_policy(cs, C.uint32_t(s.Redirects), &b.err)); err != nil {
			return err
		}
	}
	if s.Close != CloseReset {
		if err := b.check(C.gp_spec_set_close_policy(cs, C.uint32_t(s.Close), &b.err)); err != nil {
			return err
		}
	}
	for _, v := range s.Env {
		name, err := b.str(v.Name, StatusInvalidEnv, "environment variable name")
		if err != nil {
			return err
		}
		value, err := b.str(v.Value, StatusInvalidEnv, "environment variable value")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_env(cs, name, value, &b.err)); err != nil {
			return err
		}
	}
	if s.Workdir != "" {
		dir, err := b.str(s.Workdir, StatusInvalid, "working directory")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_workdir(cs, dir, &b.err)); err != nil {
			return err
		}
	}
	if s.NamespacesOf != 0 {
		if s.NamespacesOf < 0 || s.NamespacesOf > 1<<22 {
			return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("invalid PID %d for NamespacesOf (expected 1 to 4194304)", s.NamespacesOf)}
		}
		if err := b.check(C.gp_spec_set_namespaces_of(cs, C.uint32_t(s.NamespacesOf), &b.err)); err != nil {
			return err
		}
	}
	if err := b.configureExtensions(s, cs); err != nil {
		return err
	}
	if s.TLS != nil {
		return b.configureTLS(s.TLS, cs)
	}
	return nil
}

func (b *cbuild) configureExtensions(s *Spec, cs *C.prober_spec) error {
	if err := b.configureRequest(s, cs); err != nil {
		return err
	}
	if err := b.configureExecCgroup(s, cs); err != nil {
		return err
	}
	if err := b.configureNetns(s, cs); err != nil {
		return err
	}
	if err := b.configureIPFamily(s, cs); err != nil {
		return err
	}
	if err := b.configureSourceAddress(s, cs); err != nil {
		return err
	}
	if err := b.configureTCPSteps(s, cs); err != nil {
		return err
	}
	if err := b.configureDNS(s, cs); err != nil {
		return err
	}
	if err := b.configureICMP(s, cs); err != nil {
		return err
	}
	if s.ExpectStatus != "" {
		set, err := b.str(s.ExpectStatus, StatusInvalid, "expected status set")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_expect_status(cs, set, &b.err)); err != nil {
			return err
		}
	}
	if s.ExpectBody != "" {
		re, err := b.str(s.ExpectBody, StatusInvalid, "body regular expression")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_expect_body(cs, re, &b.err)); err != nil {
			return err
		}
	}
	if err := b.configureBodyCEL(s, cs); err != nil {
		return err
	}
	if s.KeepAlive {
		if err := b.check(C.gp_spec_set_keep_alive(cs, true, &b.err)); err != nil {
			return err
		}
	}
	if err := b.configureHTTPClient(s, cs); err != nil {
		return err
	}
	if err := b.configureHTTPVersion(s, cs); err != nil {
		return err
	}
	if err := b.configureCompression(s, cs); err != nil {
		return err
	}
	if err := b.configureProxy(s, cs); err != nil {
		return err
	}
	if s.UnhealthyPeriod != 0 {
		ms, err := millis(s.UnhealthyPeriod, "unhealthy period")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_unhealthy_period_ms(cs, ms, &b.err)); err != nil {
			return err
		}
	}
	if s.TransitionPeriod != 0 {
		ms, err := millis(s.TransitionPeriod, "transition period")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_transition_period_ms(cs, ms, &b.err)); err != nil {
			return err
		}
	}
	if len(s.Send) > 0 {
		// Copied to C memory: a Go byte slice must not be kept or written by C (it is not).
		data := C.CBytes(s.Send)
		defer C.free(data)
		if err := b.check(C.gp_spec_set_tcp_send(cs, (*C.uint8_t)(data), C.size_t(len(s.Send)), &b.err)); err != nil {
			return err
		}
	}
	if s.Expect != "" {
		re, err := b.str(s.Expect, StatusInvalid, "expected reply")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_tcp_expect(cs, re, &b.err)); err != nil {
			return err
		}
	}
	if s.JitterPercent != 0 {
		if s.JitterPercent < 0 || s.JitterPercent > math.MaxUint32 {
			return &Error{Code: StatusInvalid, Msg: fmt.Sprintf("invalid jitter %d%% (expected 0 to 50)", s.JitterPercent)}
		}
		if err := b.check(C.gp_spec_set_jitter_percent(cs, C.uint32_t(s.JitterPercent), &b.err)); err != nil {
			return err
		}
	}
	return nil
}

func (b *cbuild) configureTLS(t *TLSOptions, cs *C.prober_spec) error {
	if err := b.check(C.gp_spec_enable_tls(cs, &b.err)); err != nil {
		return err
	}
	if t.InsecureSkipVerify && t.CAFile != "" {
		return &Error{Code: StatusInvalidTLS, Msg: "CAFile with InsecureSkipVerify: nothing would be verified against it"}
	}
	if !t.InsecureSkipVerify {
		var ca *C.char
		verify := C.uint32_t(C.PROBER_TLS_VERIFY_SYSTEM)
		if t.CAFile != "" {
			var err error
			if ca, err = b.str(t.CAFile, StatusInvalidTLS, "CA file"); err != nil {
				return err
			}
			verify = C.PROBER_TLS_VERIFY_CA_FILE
		}
		if err := b.check(C.gp_spec_set_tls_verify(cs, verify, ca, &b.err)); err != nil {
			return err
		}
	}
	if t.ServerName != "" {
		name, err := b.str(t.ServerName, StatusInvalidTLS, "server name")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_tls_server_name(cs, name, &b.err)); err != nil {
			return err
		}
	}
	if t.ClientCert != "" || t.ClientKey != "" {
		if t.ClientCert == "" || t.ClientKey == "" {
			return &Error{Code: StatusInvalidTLS, Msg: "ClientCert and ClientKey must be set together"}
		}
		cert, err := b.str(t.ClientCert, StatusInvalidTLS, "client certificate file")
		if err != nil {
			return err
		}
		key, err := b.str(t.ClientKey, StatusInvalidTLS, "client key file")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_tls_client_cert(cs, cert, key, &b.err)); err != nil {
			return err
		}
	}
	if t.MinVersion != 0 {
		v, err := tlsVersionNumber(t.MinVersion, "minimum")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_tls_min_version(cs, v, &b.err)); err != nil {
			return err
		}
	}
	if t.MaxVersion != 0 {
		v, err := tlsVersionNumber(t.MaxVersion, "maximum")
		if err != nil {
			return err
		}
		if err := b.check(C.gp_spec_set_tls_max_version(cs, v, &b.err)); err != nil {
			return err
		}
	}
	if t.Resumption {
		if err := b.check(C.gp_spec_set_tls_resumption(cs, true, &b.err)); err != nil {
			return err
		}
	}
	return nil
}

// tlsVersionNumber is a crypto/tls version as the C API numbers it (12, 13); which names the
// bound ("minimum", "maximum") in the error.
func tlsVersionNumber(v uint16, which string) (C.uint32_t, error) {
	switch v {
	case tls.VersionTLS12:
		return 12, nil
	case tls.VersionTLS13:
		return 13, nil
	}
	return 0, &Error{Code: StatusInvalidTLS, Msg: fmt.Sprintf("%s TLS version %#04x (expected tls.VersionTLS12 or tls.VersionTLS13)", which, v)}
}
