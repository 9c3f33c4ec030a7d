//! Text as Go prints it: the kubelet's messages come from Go, and libprober words its own the
//! same way so that users who know the kubelet's events recognise them.

use std::io;
use std::time::Duration;

/// `bytes` quoted as Go's `%q` quotes a string: printable characters as they are, `\"` and
/// `\\`, the usual `\n`-style escapes, other control characters and invalid UTF-8 as `\xHH`,
/// other unprintable characters as `\uHHHH`.
pub fn go_quote(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\x07' => out.push_str("\\a"),
                '\x08' => out.push_str("\\b"),
                '\x0c' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\x0b' => out.push_str("\\v"),
                c if (c as u32) < 0x20 || c == '\x7f' => {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                }
                c if c.is_control() => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out.push('"');
    out
}

/// Formats a duration the way Go prints short timeouts in the kubelet's messages
/// (`1s`, `500ms`, `1.5s`).
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else if ms >= 1000 {
        format!("{}s", d.as_secs_f64())
    } else if ms > 0 {
        format!("{ms}ms")
    } else {
        format!("{}µs", d.as_micros())
    }
}

/// An OS error as Go prints it in the kubelet's messages: the strerror text in lower case,
/// without Rust's " (os error N)" suffix (`connection refused`, `no such file or directory`).
pub fn os_error_text(err: &io::Error) -> String {
    let text = err.to_string();
    let text = match text.rfind(" (os error ") {
        Some(i) => &text[..i],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote(b"a\"b\\c\n\t\x00\x7f\xff\xc3\xa9"), r#""a\"b\\c\n\t\x00\x7f\xffé""#);
        assert_eq!(go_quote(b"sleep 5"), r#""sleep 5""#);
    }

    #[test]
    fn durations_print_like_go() {
        assert_eq!(format_duration(Duration::from_secs(1)), "1s");
        assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_micros(20)), "20µs");
    }

    #[test]
    fn os_errors_print_like_go() {
        let e = io::Error::from_raw_os_error(libc::ECONNREFUSED);
        assert_eq!(os_error_text(&e), "connection refused");
        assert_eq!(os_error_text(&io::Error::other("Plain")), "plain");
    }
}
