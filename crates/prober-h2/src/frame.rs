//! HTTP/2 framing (RFC 9113 section 4 and 6): the connection preface, frame types, flags,
//! settings, error codes, and the frame header's layout. No state: the client
//! ([`crate::client`]) keeps that.

/// The client connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The frame header's length: 24-bit length, type, flags, 31-bit stream id.
pub const FRAME_HEADER: usize = 9;
/// Our SETTINGS_MAX_FRAME_SIZE (the default: we do not send it).
pub const MAX_FRAME: usize = 16_384;
/// The decoded size of a header list we accept.
pub const MAX_HEADER_LIST: usize = 64 * 1024;
/// The initial flow-control window, both directions (we never change ours).
pub const INITIAL_WINDOW: i64 = 65_535;
/// The largest flow-control window (2^31 - 1).
pub const MAX_WINDOW: i64 = (1 << 31) - 1;

/// Frame types (RFC 9113 section 6): DATA (0x0).
pub const DATA: u8 = 0x0;
/// HEADERS (0x1).
pub const HEADERS: u8 = 0x1;
/// PRIORITY (0x2).
pub const PRIORITY: u8 = 0x2;
/// RST_STREAM (0x3).
pub const RST_STREAM: u8 = 0x3;
/// SETTINGS (0x4).
pub const SETTINGS: u8 = 0x4;
/// PUSH_PROMISE (0x5).
pub const PUSH_PROMISE: u8 = 0x5;
/// PING (0x6).
pub const PING: u8 = 0x6;
/// GOAWAY (0x7).
pub const GOAWAY: u8 = 0x7;
/// WINDOW_UPDATE (0x8).
pub const WINDOW_UPDATE: u8 = 0x8;
/// CONTINUATION (0x9).
pub const CONTINUATION: u8 = 0x9;

/// Frame flags (RFC 9113 section 6): END_STREAM on DATA and HEADERS.
pub const FLAG_END_STREAM: u8 = 0x1;
/// ACK on SETTINGS and PING.
pub const FLAG_ACK: u8 = 0x1;
/// END_HEADERS on HEADERS, PUSH_PROMISE and CONTINUATION.
pub const FLAG_END_HEADERS: u8 = 0x4;
/// PADDED on DATA, HEADERS and PUSH_PROMISE.
pub const FLAG_PADDED: u8 = 0x8;
/// PRIORITY on HEADERS.
pub const FLAG_PRIORITY: u8 = 0x20;

/// Setting identifiers (RFC 9113 section 6.5.2).
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
/// SETTINGS_MAX_CONCURRENT_STREAMS (0x3).
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
/// SETTINGS_INITIAL_WINDOW_SIZE (0x4).
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
/// SETTINGS_MAX_FRAME_SIZE (0x5).
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

/// The name of an HTTP/2 error code (RFC 9113 section 7), as Go prints it.
pub fn error_code_name(code: u32) -> String {
    let name = match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        _ => return format!("unknown error code 0x{code:x}"),
    };
    name.to_string()
}

/// The payload without its padding (PADDED flag).
///
/// # Errors
///
/// What is wrong with the padding: a padded frame without its length octet, or padding
/// longer than the frame (a connection error, `PROTOCOL_ERROR`).
pub fn unpad(flags: u8, payload: &[u8]) -> Result<&[u8], &'static str> {
    if flags & FLAG_PADDED == 0 {
        return Ok(payload);
    }
    let (&pad, rest) = payload.split_first().ok_or("malformed padding")?;
    rest.len()
        .checked_sub(usize::from(pad))
        .map(|n| &rest[..n])
        .ok_or("padding longer than the frame")
}

/// Appends a frame: its 9-byte header (length, type, flags, stream) and its payload.
pub fn push_frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    let len = payload.len() as u32;
    out.extend_from_slice(&len.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}
