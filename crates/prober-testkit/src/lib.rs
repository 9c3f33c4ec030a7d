//! `prober-testkit`: a scripted HTTP/TCP target server on loopback, for libprober's test suites and
//! benchmarks. Real sockets, one thread per connection (128 KiB stacks), bodies streamed from a
//! fixed buffer (a 1 GiB body costs no memory).
//!
//! Rust tests use [`TargetServer`] in-process; C and Go suites run the `prober-target` binary:
//! `prober-target [--bind ADDR] [--port N] [--ignore-stdin]` prints the bound port alone on the
//! first line of stdout, then serves until stdin reaches EOF (exit 0) or a signal ends it. Unknown
//! flags exit with status 64.
//!
//! # Protocol
//!
//! One request per connection. The server reads the request head (at most 64 KiB, else 431; a
//! malformed head gets 400), answers with `Connection: close`, sends FIN, then reads and discards
//! whatever the client still sends until it closes (at most 2 s), so a client never sees a reset
//! it did not cause. Header names and values are kept as received, in order. Query values are
//! percent-decoded (`+` is a literal plus). Any method is accepted; `HEAD` suppresses the body of
//! the simple routes and `/body`. Status 1xx, 204 and 304 are sent without body or Content-Length.
//!
//! A connection that never sends a byte is held open until the client closes it (at most 60 s):
//! it then counts in [`TargetServer::silent_connections`], and in
//! [`TargetServer::reset_connections`] if it ended with RST. Any read that returns `ECONNRESET`
//! marks a connection as reset (write errors do not: they are ambiguous).
//!
//! # Routes
//!
//! | Route | Response |
//! |---|---|
//! | `/`, `/ok` | 200 `ok` |
//! | `/status/{code}?body=TEXT` | `{code}`, body `status {code}` or TEXT |
//! | `/health` | 200 `ok` when healthy, 503 `unhealthy` otherwise |
//! | `/control/healthy`, `/control/unhealthy` | set health; 200 `ok` |
//! | `/redirect?loc=URL&code=302` | `code` (default 302), `Location: URL` verbatim, body `redirecting`; 400 without `loc` |
//! | `/loop` | 302 `Location: /loop` |
//! | `/redirect-chain/{n}` | n>0: 302 `Location: /redirect-chain/{n-1}`; n=0: 200 `chain end` |
//! | `/no-location/{code}?body=TEXT` | `{code}` without Location, body TEXT (default empty) |
//! | `/bad-location` | 302 `Location: http://[::1` |
//! | `/echo/headers` | each received header as `Name: value\n`, in order, Host included |
//! | `/echo/header-names` | header names except Host, sorted (bytewise), joined by `\n` |
//! | `/echo/header-count` | number of headers except Host, decimal |
//! | `/echo/host` | the Host header value (empty if none) |
//! | `/echo/request-line` | the request line as received, without CRLF |
//! | `/echo/request` | `METHOD N\n` then the N-byte request body (framed by `Content-Length`, at most 64 KiB; 400 if it does not arrive within the head's wait) |
//! | `/host-must-be/{host}/...` | 200 `ok` if Host (without port) equals `{host}` (ASCII case-insensitive, brackets optional for IPv6), else 400 `wrong host` |
//! | `/body/{n}` | 200, `Content-Length: n`, n bytes of `a` |
//! | `/chunked/{n}?chunk=K` | 200 chunked, n bytes of `a` in chunks of K (default 1000; lowercase hex sizes), then `0\r\n\r\n` |
//! | `/close-delimited/{n}` | 200 without length or chunking, n bytes of `a`, then FIN |
//! | `/truncated/{declared}/{sent}` | 200, `Content-Length: declared`, `sent` bytes, then FIN |
//! | `/reset-after/{sent}` | 200, `Content-Length: 2*sent`, `sent` bytes, then RST once the client has acknowledged them (waits at most 2 s) |
//! | `/slow-headers/{ms}` | waits ms, then 200 `ok` |
//! | `/drip/{n}/{interval_ms}` | 200, `Content-Length: n`, then one `a` after each interval |
//! | `/stall-body/{sent}` | 200, `Content-Length: sent+1000`, `sent` bytes, then silence for 60 s or until the client closes |
//! | `/close` | FIN without writing anything |
//! | `/reset` | RST without writing anything |
//! | `/garbage` | `this is not http\r\n\r\n` then FIN |
//! | `/http09` | `hello` (no status line) then FIN |
//! | `/huge-headers/{n}` | 200 with `X-Fill-NNN: aaa...` lines totalling about n bytes, body `ok` |
//! | `/bad-chunk` | 200 chunked, first size line `zz\r\n`, then FIN |
//! | `/overflow-chunk` | 200 chunked, first size line `ffffffffffffffffffff\r\n`, then FIN |
//! | `/never-answer` | reads the request, then silence for 60 s or until the client closes |
//! | `/content-length-and-chunked` | `Content-Length: 5` and `Transfer-Encoding: chunked`, chunked body `ok` |
//! | `/bytes?status=200&reason=R&body=TEXT&header=LINE...` | general builder: each `header` value is written verbatim as a header line (e.g. `Name:Value`); `Content-Length` is added unless a `header` sets Content-Length or Transfer-Encoding, `Connection: close` unless one sets Connection |
//! | `/encoded/{coding}/{n}?as=ENC` | `n` bytes of `a` compressed with `coding` (`gzip`: members of 1 MiB each, so a 1 GiB body is about 1 MiB on the wire; `deflate` (raw) and `br`: at most 16 MiB), `Content-Encoding: ENC` (default the coding; `as=` empty: none) |
//! | `/hostile/silent` | reads the request, then silence for 60 s or until the client closes |
//! | `/hostile/trickle-head/{ms}` | `HTTP/1.1 200 OK\r\nX-Trickle: aaa...`, one byte every ms, a head that never ends |
//! | `/hostile/endless-headers/{len}` | 200 status line, then header lines of `len` bytes (8 to 1 MiB) without end |
//! | `/hostile/endless-chunked/{kind}?status=200` | chunked, without end: `data` (4 KiB chunks), `extensions` (one endless chunk extension), `trailers` (one endless trailer line), `zeros` (an endless chunk-size line of zeros) |
//! | `/hostile/chunk-size/{hex}` | chunked, first size line `{hex}` (e.g. `10000000000000000`, 2^64), then 16 MiB of `a` and FIN |
//! | `/hostile/content-length/{a}/{b}` | 200 with `Content-Length: a` and `Content-Length: b`, max(a, b) bytes of `a` |
//! | `/hostile/nul/{value,name,reason}` | a NUL byte in a header value, a header name or the reason phrase |
//! | `/hostile/long-status-line/{n}` | `HTTP/1.1 200 ` + n bytes of reason phrase, then a small complete response |
//! | `/hostile/alternate-hosts/{n}` | 302 to `http://{other}:{port}/hostile/alternate-hosts/{n+1}`, `other` being `localhost` when the Host is not, else `127.0.0.1` |
//! | `/hostile/reset-mid-head` | `HTTP/1.1 200 OK\r\nContent-Le`, then RST once acknowledged |
//! | anything else | 404 `not found` |
//!
//! Endless routes stop when the client goes away (or after 4 GiB). Bad numbers in a path give 400. Reason phrases are the usual ones, or `Status`.
//!
//! # TLS
//!
//! [`tls::TlsTargetServer`] serves the same routes over TLS (rustls), with certificates made at
//! test time by [`tls::TestCa`]; it records what each handshake looked like (SNI, client
//! certificate, errors).
//!
//! # Time bounds
//!
//! [`bounds`] derives a test's upper time bounds from the timeout under test.
//!
//! # Keep-alive and allocations
//!
//! [`keep_alive::KeepAliveServer`] keeps its connections, for keep-alive probes;
//! [`allocations`] counts heap allocations per thread for the steady-state allocation tests.
//!
//! # Paths that refuse or hang
//!
//! [`closed_port`] is a loopback port where connects are refused;
//! [`hanging::HangingListener`] one where they hang (its accept queue is full).
//!
//! # ICMP
//!
//! [`echo_forger::EchoForger`] answers echo requests with forged replies, for the tests that a
//! reply which is not a run's own is ignored.
//!
//! # gRPC
//!
//! [`grpc::HealthServer`] runs grpc-go's own health service (a Go module in this crate, built
//! with `go build` at first use): the one gRPC peer of every test and of `ci/bench.sh`.

#![warn(missing_docs)]

pub mod allocations;
pub mod bounds;
mod closed_port;
mod conn;
pub mod echo_forger;
mod encoded;
pub mod grpc;
pub mod h2;
pub mod hanging;
pub mod keep_alive;
#[cfg(target_os = "linux")]
pub mod netns;
pub mod oauth2;
pub mod proxy;
mod request;
mod routes;
pub mod script;
mod server;
mod shared;
pub mod starttls;
mod threads;
pub mod tls;
pub mod unshare;

pub use closed_port::closed_port;
pub use server::TargetServer;
