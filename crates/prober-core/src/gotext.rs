//! Text as Go prints it: the kubelet's messages come from Go, and libprober words its own the
//! same way so that users who know the kubelet's events recognise them.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_go() {
        assert_eq!(go_quote(b"a\"b\\c\n\t\x00\x7f\xff\xc3\xa9"), r#""a\"b\\c\n\t\x00\x7f\xffé""#);
        assert_eq!(go_quote(b"sleep 5"), r#""sleep 5""#);
    }
}
