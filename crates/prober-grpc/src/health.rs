//! The gRPC health protocol over the HTTP/2 exchange, sans I/O: the request message, reading
//! the response as grpc-go's client does (status from trailers or a trailers-only response,
//! HTTP status fallback, message framing), and the kubelet's wording of every outcome
//! (`pkg/probe/grpc/grpc.go`).
//!
//! ```text
//! message HealthCheckRequest  { string service = 1; }
//! message HealthCheckResponse { enum ServingStatus { UNKNOWN = 0; SERVING = 1;
//!                               NOT_SERVING = 2; SERVICE_UNKNOWN = 3; }
//!                               ServingStatus status = 1; }
//! ```
//! Messages travel length-prefixed: one byte "compressed" (always 0 here: we do not offer
//! compression) and a 4-byte big-endian length.

use std::fmt;
use std::time::Duration;

use prober_core::format_duration;
use prober_core::{GrpcFacts, Outcome, ProbeResult, Reason};

use crate::h2::{Response, header};

/// The method path.
pub const PATH: &str = "/grpc.health.v1.Health/Check";
/// `HealthCheckResponse.ServingStatus.SERVING`.
pub const SERVING: i32 = 1;
/// The kubelet's output for a healthy service.
pub const HEALTHY: &str = "service healthy";

/// gRPC status codes used by name here.
pub mod code {
    /// `OK`.
    pub const OK: u32 = 0;
    /// `Unknown`.
    pub const UNKNOWN: u32 = 2;
    /// `DeadlineExceeded`.
    pub const DEADLINE_EXCEEDED: u32 = 4;
    /// `ResourceExhausted`.
    pub const RESOURCE_EXHAUSTED: u32 = 8;
    /// `Unimplemented`.
    pub const UNIMPLEMENTED: u32 = 12;
    /// `Internal`.
    pub const INTERNAL: u32 = 13;
    /// `Unavailable`.
    pub const UNAVAILABLE: u32 = 14;
}

/// A gRPC status code's name as Go's `codes.Code.String()` prints it.
pub fn code_name(code: u32) -> String {
    const NAMES: [&str; 17] = [
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    ];
    NAMES.get(code as usize).map_or_else(|| format!("Code({code})"), |n| n.to_string())
}

/// A serving status's name as protobuf-go prints it (the number for unknown values).
pub fn status_name(status: i32) -> String {
    match status {
        0 => "UNKNOWN".into(),
        1 => "SERVING".into(),
        2 => "NOT_SERVING".into(),
        3 => "SERVICE_UNKNOWN".into(),
        n => n.to_string(),
    }
}

/// A failed RPC: its status code and message, and the outcome reason it maps to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// The gRPC status code.
    pub code: u32,
    /// The status message (grpc-go's `desc`).
    pub message: String,
    /// The outcome reason it maps to.
    pub reason: Reason,
}

impl RpcError {
    /// An RPC failure with this code, message and reason.
    pub fn new(code: u32, message: impl Into<String>, reason: Reason) -> RpcError {
        RpcError { code, message: message.into(), reason }
    }
}

/// As grpc-go's status error: `rpc error: code = NotFound desc = unknown service`.
impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rpc error: code = {} desc = {}", code_name(self.code), self.message)
    }
}

impl std::error::Error for RpcError {}

/// The request message, framed: `HealthCheckRequest { service }`.
pub fn encode_request(service: &str) -> Vec<u8> {
    let mut msg = Vec::new();
    if !service.is_empty() {
        msg.push(0x0a); // field 1, length-delimited
        push_varint(&mut msg, service.len() as u64);
        msg.extend_from_slice(service.as_bytes());
    }
    let mut framed = Vec::with_capacity(5 + msg.len());
    framed.push(0);
    framed.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    framed.extend_from_slice(&msg);
    framed
}

fn push_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint(input: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *input.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint too long".into())
}

/// The `status` of a `HealthCheckResponse` (the last occurrence wins, unknown fields are
/// skipped, a missing field is `UNKNOWN`, as protobuf decoding does).
///
/// # Errors
/// Malformed protobuf: the text says what.
pub fn decode_response(msg: &[u8]) -> Result<i32, String> {
    let mut status = 0i32;
    let mut pos = 0;
    while pos < msg.len() {
        let key = varint(msg, &mut pos)?;
        let (field, wire) = (key >> 3, key & 7);
        if field == 0 {
            return Err("invalid field number 0".into());
        }
        match wire {
            0 => {
                let v = varint(msg, &mut pos)?;
                if field == 1 {
                    status = v as i32; // enums are int32 on the wire
                }
            }
            1 => pos += 8,
            2 => {
                let len = varint(msg, &mut pos)?;
                pos = usize::try_from(len)
                    .ok()
                    .and_then(|l| pos.checked_add(l))
                    .ok_or("length overflow")?;
            }
            5 => pos += 4,
            w => return Err(format!("unsupported wire type {w}")),
        }
        if pos > msg.len() {
            return Err("truncated message".into());
        }
    }
    Ok(status)
}

/// Splits a DATA stream into gRPC messages.
///
/// # Errors
/// A compressed message (none was asked for) or no complete message, as grpc-go reports
/// them (`Internal`).
pub fn split_messages(mut data: &[u8]) -> Result<Vec<&[u8]>, RpcError> {
    let mut out = Vec::new();
    while !data.is_empty() {
        // A message cut short at the end of the stream is no message, as grpc-go reads it.
        if data.len() < 5 {
            return Err(internal(NO_RESPONSE));
        }
        if data[0] != 0 {
            // We never send grpc-accept-encoding, so a compressed message breaks the protocol.
            return Err(internal("grpc: compressed flag set with identity or empty encoding"));
        }
        let len = u32::from_be_bytes([data[1], data[2], data[3], data[4]]) as usize;
        let body = data.get(5..5 + len).ok_or_else(|| internal(NO_RESPONSE))?;
        out.push(body);
        data = &data[5 + len..];
    }
    Ok(out)
}

/// grpc-go's words for a unary RPC whose stream ended without a whole response message.
const NO_RESPONSE: &str =
    "cardinality violation: received no response message from non-server-streaming RPC";

fn internal(m: &str) -> RpcError {
    RpcError::new(code::INTERNAL, m, Reason::Protocol)
}

/// `grpc-message` is percent-encoded (gRPC's HTTP/2 protocol doc); invalid escapes are kept.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        // Two hex digits exactly, as grpc-go's `strconv.ParseUint(_, 16, 8)` (from_str_radix
        // alone would also take a sign: `%+1`).
        if b[i] == b'%' && i + 2 < b.len() && b[i + 1..i + 3].iter().all(u8::is_ascii_hexdigit) {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// grpc-go's mapping of a non-200 HTTP status without a gRPC status.
pub fn http_status_code(status: u16) -> u32 {
    match status {
        400 => code::INTERNAL,
        401 => 16, // Unauthenticated
        403 => 7,  // PermissionDenied
        404 => code::UNIMPLEMENTED,
        429 | 502 | 503 | 504 => code::UNAVAILABLE,
        _ => code::UNKNOWN,
    }
}

fn http_status_text(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        415 => "Unsupported Media Type",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

fn is_grpc_content_type(ct: &str) -> bool {
    let ct = ct.to_ascii_lowercase();
    ct == "application/grpc"
        || ct.starts_with("application/grpc+")
        || ct.starts_with("application/grpc;")
}

/// The serving status from a complete response.
///
/// # Errors
/// Why the RPC failed: its grpc-status, or what grpc-go says of a response that is not gRPC.
pub fn interpret(r: &Response) -> Result<i32, RpcError> {
    let trailers = r.trailers.as_deref().unwrap_or(&r.headers);
    let grpc_status = header(trailers, "grpc-status");
    let is_grpc = header(&r.headers, "content-type").is_some_and(is_grpc_content_type);
    let status = match r.status() {
        Some(s) => s,
        None => return Err(internal("malformed header: missing HTTP status")),
    };
    // Not a gRPC response (another content type, or an HTTP error without a gRPC status):
    // grpc-go names the HTTP status, then what is wrong with the content type, if anything.
    if !is_grpc || (status != 200 && grpc_status.is_none()) {
        let text = http_status_text(status);
        let shown = if text.is_empty() { status.to_string() } else { format!("{status} ({text})") };
        let mut message = format!("unexpected HTTP status code received from server: {shown}");
        if !is_grpc {
            match header(&r.headers, "content-type") {
                None => message.push_str("; malformed header: missing HTTP content-type"),
                Some(ct) => {
                    let quoted = prober_core::go_quote(ct.as_bytes());
                    message.push_str(&format!(
                        "; transport: received unexpected content-type {quoted}"
                    ));
                }
            }
        }
        let reason = if status == 200 { Reason::Protocol } else { Reason::Status };
        return Err(RpcError::new(http_status_code(status), message, reason));
    }
    let Some(grpc_status) = grpc_status else {
        return Err(internal("server closed the stream without sending trailers"));
    };
    let Ok(grpc_status) = grpc_status.trim().parse::<u32>() else {
        return Err(internal(&format!("transport: malformed grpc-status: {grpc_status:?}")));
    };
    if grpc_status != code::OK {
        let message = percent_decode(header(trailers, "grpc-message").unwrap_or(""));
        return Err(RpcError::new(grpc_status, message, Reason::Status));
    }
    let messages = split_messages(&r.data)?;
    match messages.as_slice() {
        [one] => decode_response(one).map_err(|_| {
            internal("grpc: failed to unmarshal the received message: proto: cannot parse invalid wire-format data")
        }),
        [] => Err(internal(NO_RESPONSE)),
        _ => Err(internal(
            "cardinality violation: expected <EOF> for non server-streaming RPCs, but received \
             another message",
        )),
    }
}

/// The kubelet's outcome for a finished RPC (`timeout`: the probe's, for the message), with
/// the RPC's status code and the serving status in [`Outcome::grpc`].
pub fn outcome(result: Result<i32, RpcError>, timeout: Duration) -> Outcome {
    let facts = GrpcFacts {
        status_code: Some(result.as_ref().map_or_else(|e| e.code, |_| code::OK)),
        serving_status: result.as_ref().ok().copied(),
    };
    let mut o = verdict(result, timeout);
    o.grpc = facts;
    o
}

fn verdict(result: Result<i32, RpcError>, timeout: Duration) -> Outcome {
    match result {
        Ok(SERVING) => {
            let mut o = Outcome::success();
            o.output = HEALTHY.as_bytes().to_vec();
            o.output_total = o.output.len() as u64;
            o
        }
        Ok(s) => Outcome::failure(
            Reason::Status,
            format!("service unhealthy (responded with {:?})", status_name(s)),
        ),
        Err(e) if e.code == code::UNIMPLEMENTED => Outcome::failure(
            e.reason,
            format!(
                "error: this server does not implement the grpc health protocol \
                 (grpc.health.v1.Health): {}",
                e.message
            ),
        ),
        Err(e) if e.code == code::DEADLINE_EXCEEDED => rpc_timeout(timeout),
        // Failure, or Unknown when the node ran out of something (reason resource).
        Err(e) => Outcome::new(
            e.reason.failed_result(),
            e.reason,
            format!("error: health rpc probe failed: {e}"),
        ),
    }
}

/// The deadline passed during the RPC.
pub fn rpc_timeout(timeout: Duration) -> Outcome {
    let mut o = Outcome::failure(
        Reason::Timeout,
        format!("timeout: health rpc did not complete within {}", format_duration(timeout)),
    );
    o.grpc.status_code = Some(code::DEADLINE_EXCEEDED);
    o
}

/// The deadline passed before the connection was established.
pub fn connect_timeout(addr: &str, timeout: Duration) -> Outcome {
    let mut o = Outcome::failure(
        Reason::Timeout,
        format!(
            "timeout: failed to connect service {addr:?} within {}: context deadline exceeded",
            format_duration(timeout)
        ),
    );
    // grpc-go's RPC waits for the connection until its deadline.
    o.grpc.status_code = Some(code::DEADLINE_EXCEEDED);
    o
}

/// The connection could not be established: a Failure, or Unknown when the node ran out of
/// something (reason resource).
pub fn connect_failure(addr: &str, reason: Reason, detail: &str) -> Outcome {
    let mut o = Outcome::new(
        reason.failed_result(),
        reason,
        format!("error: failed to connect service at {addr:?}: {detail}"),
    );
    // grpc-go fails the RPC with Unavailable when its connection fails; a run that could not
    // even try (Unknown: this node's trouble) has no RPC status.
    if o.result == ProbeResult::Failure {
        o.grpc.status_code = Some(code::UNAVAILABLE);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    fn response(head: &[(&str, &str)], data: &[u8], trailers: Option<&[(&str, &str)]>) -> Response {
        Response { headers: fields(head), data: data.to_vec(), trailers: trailers.map(fields) }
    }

    const GRPC_HEAD: &[(&str, &str)] = &[(":status", "200"), ("content-type", "application/grpc")];
    const OK: &[(&str, &str)] = &[("grpc-status", "0")];

    fn framed(msg: &[u8]) -> Vec<u8> {
        let mut v = vec![0];
        v.extend_from_slice(&(msg.len() as u32).to_be_bytes());
        v.extend_from_slice(msg);
        v
    }

    #[test]
    fn request_encoding() {
        assert_eq!(encode_request(""), [0, 0, 0, 0, 0]);
        assert_eq!(encode_request("svc"), [0, 0, 0, 0, 5, 0x0a, 3, b's', b'v', b'c']);
        let long = "s".repeat(300);
        let r = encode_request(&long);
        assert_eq!(&r[..8], &[0, 0, 0, 1, 47, 0x0a, 0xac, 0x02]);
        assert_eq!(r.len(), 5 + 3 + 300);
    }

    #[test]
    fn response_decoding() {
        assert_eq!(decode_response(&[]), Ok(0));
        assert_eq!(decode_response(&[0x08, 0x01]), Ok(1));
        assert_eq!(decode_response(&[0x08, 0x02]), Ok(2));
        assert_eq!(decode_response(&[0x08, 0x01, 0x08, 0x03]), Ok(3), "last one wins");
        // Unknown fields of every wire type are skipped.
        let msg = [
            0x10, 0x05, 0x19, 1, 2, 3, 4, 5, 6, 7, 8, 0x22, 2, b'h', b'i', 0x2d, 1, 2, 3, 4, 0x08,
            0x01,
        ];
        assert_eq!(decode_response(&msg), Ok(1));
        assert_eq!(decode_response(&[0x08, 0x96, 0x01]), Ok(150));
        assert!(decode_response(&[0x08]).is_err());
        assert!(decode_response(&[0x22, 5, b'a']).is_err());
        assert!(decode_response(&[0x0b]).is_err(), "groups are not supported");
        assert!(decode_response(&[0x00, 0x01]).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(code_name(0), "OK");
        assert_eq!(code_name(5), "NotFound");
        assert_eq!(code_name(12), "Unimplemented");
        assert_eq!(code_name(16), "Unauthenticated");
        assert_eq!(code_name(17), "Code(17)");
        assert_eq!(status_name(2), "NOT_SERVING");
        assert_eq!(status_name(3), "SERVICE_UNKNOWN");
        assert_eq!(status_name(7), "7");
        let e = RpcError::new(5, "unknown service", Reason::Status);
        assert_eq!(e.to_string(), "rpc error: code = NotFound desc = unknown service");
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("plain text"), "plain text");
        assert_eq!(percent_decode("a%20b%25c"), "a b%c");
        assert_eq!(percent_decode("%E2%82%AC"), "€");
        assert_eq!(percent_decode("bad %zz and %4"), "bad %zz and %4");
        assert_eq!(percent_decode("%"), "%");
        // Found by fuzz/fuzz_targets/grpc_response.rs: a sign is not a hex digit.
        assert_eq!(percent_decode("%+1%+f%-1x"), "%+1%+f%-1x");
    }

    #[test]
    fn interpretation() {
        let serving = framed(&[0x08, 0x01]);
        assert_eq!(interpret(&response(GRPC_HEAD, &serving, Some(OK))), Ok(1));
        let not_serving = framed(&[0x08, 0x02]);
        assert_eq!(interpret(&response(GRPC_HEAD, &not_serving, Some(OK))), Ok(2));
        // An empty message: UNKNOWN.
        assert_eq!(interpret(&response(GRPC_HEAD, &framed(&[]), Some(OK))), Ok(0));
        // Trailers-only with an error status and a percent-encoded message.
        let head = [
            (":status", "200"),
            ("content-type", "application/grpc"),
            ("grpc-status", "12"),
            ("grpc-message", "unknown service grpc.health.v1.Health"),
        ];
        assert_eq!(
            interpret(&response(&head, &[], None)),
            Err(RpcError::new(12, "unknown service grpc.health.v1.Health", Reason::Status))
        );
        let trailers = [("grpc-status", "5"), ("grpc-message", "unknown%20service")];
        assert_eq!(
            interpret(&response(GRPC_HEAD, &[], Some(&trailers))),
            Err(RpcError::new(5, "unknown service", Reason::Status))
        );
        // HTTP errors without a gRPC status.
        let e =
            interpret(&response(&[(":status", "404"), ("content-type", "text/plain")], b"", None))
                .unwrap_err();
        assert_eq!((e.code, e.reason), (code::UNIMPLEMENTED, Reason::Status));
        // grpc-go's words: the status, then what is wrong with the content type.
        assert_eq!(
            e.message,
            "unexpected HTTP status code received from server: 404 (Not Found); transport: received unexpected content-type \"text/plain\""
        );
        let e = interpret(&response(&[(":status", "503")], b"", None)).unwrap_err();
        assert_eq!(e.code, code::UNAVAILABLE);
        assert_eq!(
            e.message,
            "unexpected HTTP status code received from server: 503 (Service Unavailable); malformed header: missing HTTP content-type"
        );
        let e = interpret(&response(&[(":status", "418")], b"", None)).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                code::UNKNOWN,
                "unexpected HTTP status code received from server: 418; malformed header: missing HTTP content-type"
            )
        );
        // 200 but not gRPC.
        let e =
            interpret(&response(&[(":status", "200"), ("content-type", "text/html")], b"x", None))
                .unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                code::UNKNOWN,
                "unexpected HTTP status code received from server: 200 (OK); transport: received unexpected content-type \"text/html\""
            )
        );
        assert_eq!(e.reason, Reason::Protocol);
        // Broken streams.
        let e = interpret(&response(GRPC_HEAD, &serving, None)).unwrap_err();
        assert_eq!(e.message, "server closed the stream without sending trailers");
        let e = interpret(&response(GRPC_HEAD, &[], Some(OK))).unwrap_err();
        assert_eq!(e.code, code::INTERNAL);
        let mut two = serving.clone();
        two.extend_from_slice(&serving);
        assert!(
            interpret(&response(GRPC_HEAD, &two, Some(OK)))
                .unwrap_err()
                .message
                .contains("cardinality")
        );
        let e = interpret(&response(GRPC_HEAD, &[1, 0, 0, 0, 0], Some(OK))).unwrap_err();
        assert!(e.message.contains("compressed flag"), "{e}");
        let e = interpret(&response(GRPC_HEAD, &[0, 0, 0, 0, 9, 8], Some(OK))).unwrap_err();
        assert_eq!(e.message, NO_RESPONSE);
        let e = interpret(&response(GRPC_HEAD, &framed(&[0x08]), Some(OK))).unwrap_err();
        assert!(e.message.starts_with("grpc: failed to unmarshal"), "{e}");
        let e =
            interpret(&response(GRPC_HEAD, &serving, Some(&[("grpc-status", "x")]))).unwrap_err();
        assert_eq!(e.message, "transport: malformed grpc-status: \"x\"");
        assert!(interpret(&response(&[], &[], None)).is_err());
        // application/grpc+proto is gRPC too.
        let head = [(":status", "200"), ("content-type", "application/grpc+proto")];
        assert_eq!(interpret(&response(&head, &serving, Some(OK))), Ok(1));
    }

    #[test]
    fn kubelet_messages() {
        let t = Duration::from_secs(1);
        let o = outcome(Ok(SERVING), t);
        assert_eq!(
            (o.result, o.reason, o.message.as_str()),
            (ProbeResult::Success, Reason::None, "")
        );
        assert_eq!((o.output.as_slice(), o.output_total), (&b"service healthy"[..], 15));
        let o = outcome(Ok(2), t);
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Status));
        assert_eq!(o.message, "service unhealthy (responded with \"NOT_SERVING\")");
        assert_eq!(
            outcome(Ok(3), t).message,
            "service unhealthy (responded with \"SERVICE_UNKNOWN\")"
        );
        assert_eq!(outcome(Ok(0), t).message, "service unhealthy (responded with \"UNKNOWN\")");
        let o = outcome(
            Err(RpcError::new(12, "unknown service grpc.health.v1.Health", Reason::Status)),
            t,
        );
        assert_eq!(
            o.message,
            "error: this server does not implement the grpc health protocol \
             (grpc.health.v1.Health): unknown service grpc.health.v1.Health"
        );
        let o = outcome(
            Err(RpcError::new(4, "context deadline exceeded", Reason::Status)),
            Duration::from_secs(2),
        );
        assert_eq!(
            (o.reason, o.message.as_str()),
            (Reason::Timeout, "timeout: health rpc did not complete within 2s")
        );
        let o = outcome(Err(RpcError::new(5, "unknown service", Reason::Status)), t);
        assert_eq!(
            o.message,
            "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service"
        );
        // The kubelet's `grpc_test.go` case with host "" and port 32.
        let o = connect_timeout(":32", t);
        assert_eq!(
            o.message,
            "timeout: failed to connect service \":32\" within 1s: context deadline exceeded"
        );
        let o = connect_failure(
            "127.0.0.1:1",
            Reason::Refused,
            "dial tcp 127.0.0.1:1: connect: connection refused",
        );
        assert_eq!(
            o.message,
            "error: failed to connect service at \"127.0.0.1:1\": dial tcp 127.0.0.1:1: connect: connection refused"
        );
        assert_eq!((o.result, o.reason), (ProbeResult::Failure, Reason::Refused));
    }
}
