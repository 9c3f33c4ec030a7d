//! Domain names for DNS probes: the query's name from text to wire form (checked here, when a
//! spec is built), a response's names from wire form (with compression) to labels, and labels
//! to text as miekg/dns prints them. prober-dns uses it as its `name` module.

use std::fmt::Write as _;

/// The longest name in wire form, root label included (RFC 1035 3.1).
pub const MAX_NAME_WIRE: usize = 255;

/// The most compression pointers one name may follow: miekg/dns's bound
/// (`maxCompressionPointers`, (255 + 1) / 2 - 2), which also ends any pointer loop.
pub const MAX_POINTERS: usize = 126;

/// A domain name as its labels, uncompressed; the root is no label at all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Name {
    labels: Vec<Vec<u8>>,
}

impl Name {
    /// The root name (`.`).
    pub fn root() -> Name {
        Name::default()
    }

    /// The labels, root excluded.
    pub fn labels(&self) -> &[Vec<u8>] {
        &self.labels
    }

    /// Parses a name written as text: labels separated by dots, `\c` for a literal character
    /// and `\DDD` for a byte in decimal (RFC 1035 5.1), as miekg/dns reads `query_name`. The
    /// final dot is optional (the name is always fully qualified, as blackbox's `dns.Fqdn`).
    ///
    /// # Errors
    ///
    /// A text that is empty, has an empty label (`a..b`), a label over 63 bytes, a name over
    /// 255 bytes in wire form, or a dangling or out-of-range escape.
    pub fn from_text(text: &str) -> Result<Name, String> {
        if text.is_empty() {
            return Err("empty name".into());
        }
        if text == "." {
            return Ok(Name::root());
        }
        let bytes = text.as_bytes();
        let mut labels = Vec::new();
        let mut label = Vec::new();
        let mut i = 0;
        let mut ended_with_dot = false;
        while i < bytes.len() {
            ended_with_dot = false;
            match bytes[i] {
                b'.' => {
                    if label.is_empty() {
                        return Err(format!("empty label in {text:?}"));
                    }
                    labels.push(std::mem::take(&mut label));
                    ended_with_dot = true;
                    i += 1;
                }
                b'\\' => {
                    let rest = &bytes[i + 1..];
                    if rest.len() >= 3 && rest[..3].iter().all(u8::is_ascii_digit) {
                        let v = rest[..3].iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
                        let byte = u8::try_from(v)
                            .map_err(|_| format!("escape \\{v} out of range in {text:?}"))?;
                        label.push(byte);
                        i += 4;
                    } else if let Some(&c) = rest.first() {
                        label.push(c);
                        i += 2;
                    } else {
                        return Err(format!("dangling escape in {text:?}"));
                    }
                }
                c => {
                    label.push(c);
                    i += 1;
                }
            }
            if label.len() > 63 {
                return Err(format!("label longer than 63 bytes in {text:?}"));
            }
        }
        if !ended_with_dot {
            labels.push(label);
        }
        let name = Name { labels };
        if name.wire_len() > MAX_NAME_WIRE {
            return Err(format!("name longer than {MAX_NAME_WIRE} bytes in wire form: {text:?}"));
        }
        Ok(name)
    }

    /// The length of the name in uncompressed wire form.
    pub fn wire_len(&self) -> usize {
        self.labels.iter().map(|l| l.len() + 1).sum::<usize>() + 1
    }

    /// Appends the name in uncompressed wire form.
    pub fn write_wire(&self, out: &mut Vec<u8>) {
        for label in &self.labels {
            // Labels are at most 63 bytes (from_text and read_name check it).
            out.push(label.len() as u8);
            out.extend_from_slice(label);
        }
        out.push(0);
    }

    /// The same name, ignoring ASCII case (RFC 4343): how a reply's question is compared with
    /// the query's, which a server may echo in other case (DNS 0x20).
    pub fn eq_ignore_case(&self, other: &Name) -> bool {
        self.labels.len() == other.labels.len()
            && self.labels.iter().zip(&other.labels).all(|(a, b)| a.eq_ignore_ascii_case(b))
    }

    /// The name as miekg/dns prints it (`sprintName` over an unpacked name): labels joined by
    /// dots with a final dot (`.` for the root), `. space ' @ ; ( ) " \` escaped with a
    /// backslash, bytes outside `' '..='~'` as `\DDD`.
    pub fn write_text(&self, out: &mut String) {
        if self.labels.is_empty() {
            out.push('.');
            return;
        }
        for label in &self.labels {
            for &b in label {
                match b {
                    b'.' | b' ' | b'\'' | b'@' | b';' | b'(' | b')' | b'"' | b'\\' => {
                        out.push('\\');
                        out.push(b as char);
                    }
                    b' '..=b'~' => out.push(b as char),
                    _ => {
                        let _ = write!(out, "\\{b:03}");
                    }
                }
            }
            out.push('.');
        }
    }

    /// [`Name::write_text`] into a new string.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }
}

/// Reads the name at `off` of `msg`, following compression pointers anywhere in `msg` (as
/// miekg/dns does: forward ones too), at most [`MAX_POINTERS`] of them, so a loop ends; the
/// name may not pass [`MAX_NAME_WIRE`] bytes. Returns the name and the offset after it where
/// it was written (after its first pointer, if any).
///
/// # Errors
///
/// A name that runs past the end of `msg`, a pointer past the end, too many pointers, a name
/// too long, or a label type other than 0 or a pointer (0x40 and 0x80 are reserved).
pub fn read_name(msg: &[u8], off: usize) -> Result<(Name, usize), String> {
    let mut labels = Vec::new();
    let mut pos = off;
    let mut after = None;
    let mut pointers = 0;
    let mut wire = 1;
    loop {
        let Some(&len) = msg.get(pos) else {
            return Err(format!("name at offset {off} runs past the end of the message"));
        };
        match len & 0xC0 {
            0x00 => {
                if len == 0 {
                    return Ok((Name { labels }, after.unwrap_or(pos + 1)));
                }
                let start = pos + 1;
                let end = start + usize::from(len);
                let Some(label) = msg.get(start..end) else {
                    return Err(format!("label at offset {pos} runs past the end of the message"));
                };
                wire += label.len() + 1;
                if wire > MAX_NAME_WIRE {
                    return Err(format!("name at offset {off} longer than {MAX_NAME_WIRE} bytes"));
                }
                labels.push(label.to_vec());
                pos = end;
            }
            0xC0 => {
                let Some(&low) = msg.get(pos + 1) else {
                    return Err(format!("pointer at offset {pos} cut short"));
                };
                pointers += 1;
                if pointers > MAX_POINTERS {
                    return Err(format!("name at offset {off}: too many compression pointers"));
                }
                if after.is_none() {
                    after = Some(pos + 2);
                }
                let target = (usize::from(len & 0x3F) << 8) | usize::from(low);
                if target >= msg.len() {
                    return Err(format!("pointer at offset {pos} past the end ({target})"));
                }
                pos = target;
            }
            _ => return Err(format!("reserved label type 0x{len:02x} at offset {pos}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_through_wire_form() {
        let name = Name::from_text("Www.Example.com").unwrap();
        let mut wire = Vec::new();
        name.write_wire(&mut wire);
        assert_eq!(wire, b"\x03Www\x07Example\x03com\x00");
        let (back, end) = read_name(&wire, 0).unwrap();
        assert_eq!((back.to_text(), end), ("Www.Example.com.".to_string(), wire.len()));
        assert_eq!(Name::from_text("a.").unwrap(), Name::from_text("a").unwrap());
        assert_eq!(Name::from_text(".").unwrap().to_text(), ".");
        assert!(Name::from_text("a..b").is_err());
        assert!(Name::from_text(&"a".repeat(64)).is_err());
        assert!(Name::from_text(&"abcdefg.".repeat(40)).is_err());
    }

    #[test]
    fn special_bytes_print_as_miekg_does() {
        let name = Name::from_text("a\\.b.c\\032d.e\\\"f.\\255\\007@").unwrap();
        assert_eq!(name.labels()[0], b"a.b");
        assert_eq!(name.to_text(), "a\\.b.c\\ d.e\\\"f.\\255\\007\\@.");
    }

    #[test]
    fn pointer_loops_and_pointers_past_the_end_are_errors() {
        // A pointer to itself, and two that point at each other.
        assert!(read_name(b"\xC0\x00", 0).unwrap_err().contains("too many"));
        assert!(read_name(b"\x01a\xC0\x04\xC0\x00", 0).unwrap_err().contains("too many"));
        assert!(read_name(b"\xC0\x09", 0).unwrap_err().contains("past the end"));
        assert!(read_name(b"\x05ab", 0).is_err());
        assert!(read_name(b"\x40", 0).unwrap_err().contains("reserved"));
        // A forward pointer is followed, as miekg/dns does; the offset is after the pointer.
        let (n, end) = read_name(b"\xC0\x03\xFF\x01x\x00", 0).unwrap();
        assert_eq!((n.to_text(), end), ("x.".to_string(), 2));
    }
}
