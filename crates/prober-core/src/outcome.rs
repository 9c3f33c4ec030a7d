//! What a probe run produced.

use std::fmt;
use std::time::Duration;

/// The four results of the kubelet's probers (`pkg/probe/probe.go`).
///
/// The discriminants are ABI: `prober_result` in C uses the same numbers.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeResult {
    /// The probe passed.
    Success = 0,
    /// Logically a success with extra information: an HTTP 3xx that was not followed.
    Warning = 1,
    /// The probe ran and the target failed it (refused, timed out, bad status, non-zero exit...).
    Failure = 2,
    /// The probe could not be run (bad spec at run time, could not spawn, ...).
    Unknown = 3,
}

impl ProbeResult {
    /// Lower-case name as used in JSON output and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeResult::Success => "success",
            ProbeResult::Warning => "warning",
            ProbeResult::Failure => "failure",
            ProbeResult::Unknown => "unknown",
        }
    }

    /// Success or Warning: what the kubelet publishes as `Success`.
    pub fn is_ok(self) -> bool {
        matches!(self, ProbeResult::Success | ProbeResult::Warning)
    }
}

impl fmt::Display for ProbeResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Machine-readable cause of an outcome. ABI: the numbers are never reused or renumbered.
///
/// New probes and checks bring new reasons: the enum is `#[non_exhaustive]`, so a `match` on
/// it needs a wildcard arm (the C ABI and Go see new numbers the same way).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// Nothing went wrong (Success), or no more specific reason applies.
    None = 0,
    /// The connection was refused (RST to our SYN).
    Refused = 1,
    /// The probe's deadline passed (connect, headers, body, or command).
    Timeout = 2,
    /// The peer reset the connection after it was established.
    Reset = 3,
    /// Network or host unreachable, or another connect error.
    Unreachable = 4,
    /// The host name could not be resolved.
    Dns = 5,
    /// HTTP status outside 200..=399.
    Status = 6,
    /// A 3xx response that was not followed (Warning).
    Redirect = 7,
    /// More than 10 redirects.
    TooManyRedirects = 8,
    /// The peer did not speak HTTP/1.x correctly (garbage, HTTP/0.9, oversized head, bad framing,
    /// a Location that is not a URL); or a TCP step's line was longer than
    /// [`MAX_TCP_STEP_LINE`](crate::MAX_TCP_STEP_LINE), or the line it matched would expand its
    /// send template past [`MAX_SEND_LEN`](crate::MAX_SEND_LEN).
    Protocol = 9,
    /// The body ended before its declared end (early EOF).
    BrokenBody = 10,
    /// The command exited with a non-zero status.
    ExitCode = 11,
    /// The command was ended by a signal it did not get from us.
    Signal = 12,
    /// The command could not be started (no such file, permission denied, ...).
    Spawn = 13,
    /// The probe needs a feature this build lacks (for example TLS).
    Unsupported = 14,
    /// Another I/O error of the local system (running out of something is [`Reason::Resource`]).
    Io = 15,
    /// The probe was cancelled before it finished (target removed, engine dropped).
    Cancelled = 16,
    /// TLS failed: handshake, certificate verification, an alert from the peer (a refused
    /// client certificate), a protocol version the peer does not accept; or, as Unknown, TLS
    /// could not be set up (unreadable or invalid CA, certificate or key file).
    Tls = 17,
    /// A probe's own code failed inside the library (a caught panic): the run is Unknown and
    /// the message holds the panic's text. Every other probe and target goes on.
    Internal = 18,
    /// The node, not the target, ran out of something: descriptors (EMFILE, ENFILE), buffer
    /// space (ENOBUFS), memory (ENOMEM), threads for name resolution, or processes (EAGAIN on
    /// spawn). Always Unknown, so that a node's trouble never counts against a healthy target.
    Resource = 19,
    /// The HTTP body (or, for TCP send/expect, the reply) did not match the expected regular
    /// expression, or a CEL expression over the HTTP body failed it.
    Body = 20,
    /// The destination was refused by the probe's allow-list ([`crate::AddressFilter`]):
    /// nothing was connected to.
    Denied = 21,
    /// The probe's network namespace could not be used: its path does not exist, is not a
    /// namespace or one of another type, or this process may not enter it (no
    /// `CAP_SYS_ADMIN`). Always Unknown: the target was never reached.
    Namespace = 22,
}

impl Reason {
    /// The lower-case name used in JSON output, logs and metrics labels (`refused`, `exit_code`).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::None => "none",
            Reason::Refused => "refused",
            Reason::Timeout => "timeout",
            Reason::Reset => "reset",
            Reason::Unreachable => "unreachable",
            Reason::Dns => "dns",
            Reason::Status => "status",
            Reason::Redirect => "redirect",
            Reason::TooManyRedirects => "too_many_redirects",
            Reason::Protocol => "protocol",
            Reason::BrokenBody => "broken_body",
            Reason::ExitCode => "exit_code",
            Reason::Signal => "signal",
            Reason::Spawn => "spawn",
            Reason::Unsupported => "unsupported",
            Reason::Io => "io",
            Reason::Cancelled => "cancelled",
            Reason::Tls => "tls",
            Reason::Internal => "internal",
            Reason::Resource => "resource",
            Reason::Body => "body",
            Reason::Denied => "denied",
            Reason::Namespace => "namespace",
        }
    }

    /// Whether `err` says that this node ran out of something (descriptors, buffer space,
    /// memory, threads), as opposed to a fault of the target or the network. The one list of
    /// such errors: `EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`, and errors made by
    /// [`Reason::local_resource_error`]. `EAGAIN` is not in it (on a socket it means "try
    /// again"); see [`Reason::is_local_spawn_resource`] for process creation.
    pub fn is_local_resource(err: &std::io::Error) -> bool {
        match err.raw_os_error() {
            Some(code) => {
                matches!(code, libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
            }
            None => err.get_ref().is_some_and(|inner| inner.is::<LocalResource>()),
        }
    }

    /// [`Reason::is_local_resource`] for the creation of a process, where `EAGAIN` means the
    /// process or thread limit was reached (`fork`, `clone`, `posix_spawn`).
    pub fn is_local_spawn_resource(err: &std::io::Error) -> bool {
        Reason::is_local_resource(err) || err.raw_os_error() == Some(libc::EAGAIN)
    }

    /// An error that [`Reason::is_local_resource`] recognises, for local resource failures
    /// that have no errno of their own (a helper thread that could not be started). `what`
    /// says what ran out; it is the error's whole text.
    pub fn local_resource_error(what: impl Into<String>) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::OutOfMemory, LocalResource(what.into()))
    }

    /// The result of a run that ended with this reason because something went wrong: Unknown
    /// for the reasons that are this node's or this library's fault ([`Reason::Resource`],
    /// [`Reason::Internal`]), which must never count against the target; Failure otherwise.
    pub fn failed_result(self) -> ProbeResult {
        match self {
            Reason::Resource | Reason::Internal | Reason::Namespace => ProbeResult::Unknown,
            _ => ProbeResult::Failure,
        }
    }

    /// Classifies an OS error from socket/connect/read/write into a reason; local resource
    /// exhaustion ([`Reason::is_local_resource`]) is [`Reason::Resource`].
    pub fn from_io(err: &std::io::Error) -> Reason {
        use std::io::ErrorKind as K;
        if Reason::is_local_resource(err) {
            return Reason::Resource;
        }
        match err.kind() {
            K::ConnectionRefused => Reason::Refused,
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => Reason::Reset,
            K::TimedOut => Reason::Timeout,
            K::HostUnreachable | K::NetworkUnreachable | K::AddrNotAvailable | K::NetworkDown => {
                Reason::Unreachable
            }
            _ => Reason::Io,
        }
    }
}

/// The payload of [`Reason::local_resource_error`].
#[derive(Debug)]
struct LocalResource(String);

impl fmt::Display for LocalResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LocalResource {}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Where the time of one run went. A phase that did not happen is `None`.
///
/// One convention for every surface (C's `prober_timings`, Go's `Timings`, the command's
/// `*_ms`), curl's `-w` one: each phase is the time from the start of the run to the moment
/// that phase ended, read from the clock where it ended, so `connect <= tls <= first_byte <=
/// total`. For a redirected HTTP probe the phases are the last hop's, still counted from the
/// start of the run; [`Outcome::http_phases`] has each phase's duration summed over all hops. `resolve` is the one duration: how long the name lookup took (it starts
/// with the run, or with the hop that needed it).
///
/// A run on a kept-alive connection (`ConnectOptions::keep_alive`) made no connection: its `resolve`,
/// `connect` and `tls` are absent and `reused` is true; `first_byte` and `total` count from the
/// start of the run as always.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timings {
    /// How long host name resolution took (absent for IP literals and exec).
    pub resolve: Option<Duration>,
    /// Start of the run to the established connection.
    pub connect: Option<Duration>,
    /// Start of the run to the end of the TLS handshake (absent without TLS).
    pub tls: Option<Duration>,
    /// Start of the run to the first response byte (HTTP, gRPC), the first reply byte (TCP
    /// send/expect) or the first output byte (exec).
    pub first_byte: Option<Duration>,
    /// The whole run.
    pub total: Duration,
    /// The run's (last hop's) connection was a kept-alive one, made by an earlier run.
    pub reused: bool,
}

/// The full result of one probe run.
///
/// [`Outcome::result`] is what counts (the kubelet's four results); [`Outcome::reason`] says
/// why in a form a program can branch on; [`Outcome::message`] says it in the kubelet's words,
/// for people. The rest is detail a host may log or export: output, HTTP status, exit code,
/// timings, certificate expiry.
///
/// ```
/// use std::net::TcpListener;
/// use prober_core::{ProbeResult, ProbeSpec, Reason};
///
/// // A port that refuses connections: bound, then released.
/// let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
///
/// let outcome = prober::check(&ProbeSpec::tcp("127.0.0.1", port.into())?);
/// assert_eq!(outcome.result, ProbeResult::Failure);
/// assert_eq!(outcome.reason, Reason::Refused);
/// assert_eq!(
///     outcome.message,
///     format!("dial tcp 127.0.0.1:{port}: connect: connection refused")
/// );
/// assert!(outcome.timings.connect.is_none(), "no connection was made");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// What the run concluded.
    pub result: ProbeResult,
    /// Why, in a form a program can branch on ([`Reason::None`] on a plain success).
    pub reason: Reason,
    /// Human-readable message in the kubelet's wording (empty on a plain success).
    pub message: String,
    /// Captured output: HTTP body or command output, at most the spec's output limit.
    pub output: Vec<u8>,
    /// True when more output was seen than kept.
    pub truncated: bool,
    /// Output bytes seen in all (kept or not). For HTTP: body bytes read before closing.
    pub output_total: u64,
    /// HTTP status of the final response, when there was one.
    pub http_status: Option<u16>,
    /// Exit code of the command, when it exited normally.
    pub exit_code: Option<i32>,
    /// Where the run's time went.
    pub timings: Timings,
    /// When the peer's (leaf) certificate expires, in seconds since the Unix epoch: from the
    /// last TLS handshake of the run, also when verification failed (an expired certificate is
    /// visible here). `None` without TLS.
    pub cert_not_after: Option<i64>,
    /// The address of the run's (last hop's) connection: where the probe was answered from,
    /// after resolution. `None` before a connection, and for Unix sockets and exec.
    pub peer: Option<std::net::SocketAddr>,
    /// HTTP: the final response's version (HTTP/1.0, HTTP/1.1 or HTTP/2).
    pub http_version: Option<crate::HttpResponseVersion>,
    /// HTTP: the final response's `Content-Length`, when it declared one.
    pub http_content_length: Option<u64>,
    /// HTTP: how many redirects the run followed.
    pub http_redirects: u32,
    /// HTTP: the final response's header fields in order, when the spec asks to keep them
    /// ([`HttpSpec::keep_headers`](crate::HttpSpec::keep_headers)); empty otherwise.
    pub headers: Vec<(String, String)>,
    /// The run's last TLS handshake: version, cipher suite, certificates (see
    /// [`TlsInfo`](crate::TlsInfo)); `None` without TLS or before a certificate was seen.
    /// Shared with a kept-alive connection's later runs, which made no handshake of their own.
    pub tls: Option<std::sync::Arc<crate::TlsInfo>>,
    /// HTTP: each phase's duration summed over the run's hops (blackbox_exporter's
    /// `probe_http_duration_seconds`); `None` for other probes.
    pub http_phases: Option<crate::HttpPhases>,
    /// gRPC: the RPC's status code and the health response's serving status, as far as the
    /// run got (both `None` for other probes).
    pub grpc: crate::GrpcFacts,
    /// ICMP: phases, counts, round-trip times, the reply's hop limit and the last ICMP error
    /// (boxed: `None` for every other kind).
    pub icmp: Option<Box<crate::IcmpFacts>>,
    /// DNS: what the run found out (counts, rcode, serial, phases); `None` for other probes.
    pub dns: Option<Box<crate::DnsFacts>>,
}

impl Outcome {
    /// An outcome with the given result, reason and message, and nothing else yet.
    pub fn new(result: ProbeResult, reason: Reason, message: impl Into<String>) -> Outcome {
        Outcome {
            result,
            reason,
            message: message.into(),
            output: Vec::new(),
            truncated: false,
            output_total: 0,
            http_status: None,
            exit_code: None,
            timings: Timings::default(),
            cert_not_after: None,
            peer: None,
            http_version: None,
            http_content_length: None,
            http_redirects: 0,
            headers: Vec::new(),
            tls: None,
            http_phases: None,
            grpc: crate::GrpcFacts::default(),
            icmp: None,
            dns: None,
        }
    }

    /// A plain success: no reason, no message.
    pub fn success() -> Outcome {
        Outcome::new(ProbeResult::Success, Reason::None, "")
    }

    /// A failure of the target with `reason` and the kubelet-style `message`.
    pub fn failure(reason: Reason, message: impl Into<String>) -> Outcome {
        Outcome::new(ProbeResult::Failure, reason, message)
    }

    /// A run that could not say anything about the target (Unknown), with `reason` and
    /// `message`: never counted against the target.
    pub fn unknown(reason: Reason, message: impl Into<String>) -> Outcome {
        Outcome::new(ProbeResult::Unknown, reason, message)
    }

    /// The output as text, with invalid UTF-8 replaced (for messages and JSON).
    pub fn output_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(&self.output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn local_resource_errors_are_resource_and_unknown() {
        for code in [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM] {
            let e = io::Error::from_raw_os_error(code);
            assert!(Reason::is_local_resource(&e), "{e}");
            assert_eq!(Reason::from_io(&e), Reason::Resource);
            assert_eq!(Reason::from_io(&e).failed_result(), ProbeResult::Unknown);
        }
        let e = Reason::local_resource_error("cannot start a resolver thread");
        assert!(Reason::is_local_resource(&e));
        assert_eq!(e.to_string(), "cannot start a resolver thread");
        // EAGAIN is a resource failure for process creation only.
        let again = io::Error::from_raw_os_error(libc::EAGAIN);
        assert!(!Reason::is_local_resource(&again));
        assert!(Reason::is_local_spawn_resource(&again));
    }

    #[test]
    fn network_errors_stay_failures() {
        for (code, reason) in [
            (libc::ECONNREFUSED, Reason::Refused),
            (libc::ECONNRESET, Reason::Reset),
            (libc::ETIMEDOUT, Reason::Timeout),
            (libc::ENETUNREACH, Reason::Unreachable),
            (libc::EHOSTUNREACH, Reason::Unreachable),
        ] {
            let e = io::Error::from_raw_os_error(code);
            assert!(!Reason::is_local_resource(&e), "{e}");
            assert_eq!(Reason::from_io(&e), reason);
            assert_eq!(reason.failed_result(), ProbeResult::Failure);
        }
        assert!(!Reason::is_local_resource(&io::Error::other("x")));
        assert_eq!(Reason::Internal.failed_result(), ProbeResult::Unknown);
    }
}
