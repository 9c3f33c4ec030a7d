//! Expectations beyond the kubelet's rules: a set of accepted HTTP statuses (Envoy's
//! `expected_statuses`, HAProxy's `http-check expect status`, blackbox_exporter's
//! `valid_status_codes`) and a regular expression that a body or a TCP reply must match
//! (blackbox_exporter's `fail_if_body_not_matches_regexp`, HAProxy's `rstring`).
//!
//! Both are parsed and compiled once, when a spec is built; a run only looks them up.

use std::fmt;

use crate::SpecError;

/// The longest regular expression accepted, in bytes (a health check is not a grammar).
pub const MAX_PATTERN_LEN: usize = 4096;
/// Memory a compiled regular expression may take; a pattern that needs more is refused when
/// the spec is built, so a hostile configuration cannot make the engine large.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// A set of HTTP status codes and ranges, such as `200-299,418`. Codes are 100 to 999.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StatusSet {
    /// Inclusive ranges, in the order given.
    ranges: Vec<(u16, u16)>,
}

impl StatusSet {
    /// Parses `CODE` or `LOW-HIGH` items separated by commas (spaces around items are
    /// ignored): `200`, `200-299,418`, `200-399, 401`.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for an item that is not a status (100 to 999) or a
    /// range whose low end is above its high end, and for an empty item (`200,,300`, or
    /// nothing at all).
    pub fn parse(s: &str) -> Result<StatusSet, SpecError> {
        let bad =
            |why: String| SpecError::InvalidExpectation(format!("invalid status set {s:?}: {why}"));
        let code = |t: &str| -> Result<u16, SpecError> {
            let t = t.trim();
            match t.parse::<u16>() {
                Ok(c) if (100..=999).contains(&c) && t.len() == 3 => Ok(c),
                _ => Err(bad(format!("{t:?} is not a status code (expected 100 to 999)"))),
            }
        };
        let mut ranges = Vec::new();
        for item in s.split(',') {
            if item.trim().is_empty() {
                return Err(bad("empty item".into()));
            }
            let (lo, hi) = match item.split_once('-') {
                Some((lo, hi)) => (code(lo)?, code(hi)?),
                None => {
                    let c = code(item)?;
                    (c, c)
                }
            };
            if lo > hi {
                return Err(bad(format!("range {lo}-{hi} is empty")));
            }
            ranges.push((lo, hi));
        }
        Ok(StatusSet { ranges })
    }

    /// Whether `status` is in the set.
    pub fn contains(&self, status: u16) -> bool {
        self.ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&status))
    }
}

impl fmt::Display for StatusSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, &(lo, hi)) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if lo == hi { write!(f, "{lo}")? } else { write!(f, "{lo}-{hi}")? }
        }
        Ok(())
    }
}

/// A regular expression (the `regex` crate's syntax, matched anywhere in the bytes: anchor it
/// with `^`/`$` or `\A`/`\z` to match it all). Matching takes time linear in the input, so a
/// pattern cannot make a run slow; its compiled size is bounded when it is built.
///
/// Patterns are compiled with Unicode mode off (the binary carries no Unicode tables): `\d`,
/// `\w`, `\s`, `\b` and `(?i)` are ASCII, `.` is any byte but `\n`, and a non-ASCII literal
/// matches its UTF-8 bytes. Bodies and replies are bytes, not necessarily text, so this is
/// also the honest reading of them.
#[derive(Clone)]
pub struct Pattern {
    regex: regex::bytes::Regex,
}

impl Pattern {
    /// Compiles `source`, a regular expression (the `regex` crate's syntax, ASCII classes), for
    /// matching bodies or replies in linear time.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidExpectation`] for an expression that is empty, too long, does not
    /// parse, or would compile to more than the size limit.
    pub fn new(source: &str) -> Result<Pattern, SpecError> {
        // Every surface (Rust, C, the CLI's flags and file fields) compiles its expectations
        // here, so all refuse it alike: an empty expression is most likely a value that went
        // missing (`expect: ""`, `--expect-body "$UNSET"`), and it matches any body and the
        // first byte of any reply, so the probe would check nothing it says it checks.
        if source.is_empty() {
            return Err(SpecError::InvalidExpectation(
                "empty regular expression: it matches anything (write what must be found, or \
                 leave the expectation out)"
                    .into(),
            ));
        }
        if source.len() > MAX_PATTERN_LEN {
            return Err(SpecError::InvalidExpectation(format!(
                "regular expression longer than {MAX_PATTERN_LEN} bytes"
            )));
        }
        let regex = regex::bytes::RegexBuilder::new(source)
            .size_limit(PATTERN_SIZE_LIMIT)
            .unicode(false)
            .build()
            .map_err(|e| {
                // The regex crate's errors span several lines (pattern, caret, message): keep
                // the last, which says what is wrong.
                let text = e.to_string();
                let why = text.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("invalid").trim();
                let why = why.strip_prefix("error: ").unwrap_or(why);
                SpecError::InvalidExpectation(format!(
                    "invalid regular expression {source:?}: {why}"
                ))
            })?;
        Ok(Pattern { regex })
    }

    /// The expression as written.
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// Whether the expression matches anywhere in `bytes`.
    pub fn is_match(&self, bytes: &[u8]) -> bool {
        self.regex.is_match(bytes)
    }

    /// When the expression matches in `bytes`, `template` with its references to the first
    /// match's groups replaced (`$1`, `${1}`, `${name}`; `$$` is one `$`; a reference to a group
    /// that does not exist or did not take part is empty). The same rules as Go's
    /// `Regexp.Expand`, which blackbox_exporter's `query_response` uses for `send`.
    ///
    /// The output is bounded while it is built: once it would pass `limit` bytes no more
    /// groups are copied and the answer is [`Expansion::TooLong`], so a template of many `$1`
    /// against a long line allocates at most `limit` plus the template's length.
    pub fn expand(&self, bytes: &[u8], template: &[u8], limit: usize) -> Expansion {
        let Some(caps) = self.regex.captures(bytes) else { return Expansion::NoMatch };
        let mut out = Vec::with_capacity(template.len().min(limit));
        let mut over = false;
        regex_automata::util::interpolate::bytes(
            template,
            |i, dst| {
                let group = caps.get(i).map_or(&[][..], |m| m.as_bytes());
                if over || dst.len() + group.len() > limit {
                    over = true;
                } else {
                    dst.extend_from_slice(group);
                }
            },
            |name| self.regex.capture_names().position(|n| n == Some(name)),
            &mut out,
        );
        // The literal text between references is the template's, so at most its length.
        if over || out.len() > limit { Expansion::TooLong } else { Expansion::Expanded(out) }
    }
}

/// What [`Pattern::expand`] made of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// The expression did not match.
    NoMatch,
    /// The template with the match's groups in place.
    Expanded(Vec<u8>),
    /// The expansion would be longer than the limit.
    TooLong,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Pattern {}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.as_str())
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The most a TCP probe sends after connecting (a request line, a `PING`, not an upload).
pub const MAX_SEND_LEN: usize = 10240;

/// Decodes the escapes of TCP send data written as text: `\r`, `\n`, `\t`, `\\` and `\xHH`
/// (two hex digits, any byte). Any other backslash sequence is refused, so that a typo is not
/// sent as written.
///
/// # Errors
///
/// [`SpecError::InvalidExpectation`] for a backslash sequence other than those above (a
/// lone final backslash, `\q`, `\x` without two hex digits).
pub fn unescape(text: &str) -> Result<Vec<u8>, SpecError> {
    let bad = |why: String| {
        SpecError::InvalidExpectation(format!("invalid data to send {text:?}: {why}"))
    };
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'r') => out.push(b'\r'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex = bytes.get(i + 2..i + 4).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) if hex.is_some_and(|h| h.bytes().all(|c| c.is_ascii_hexdigit())) => {
                        out.push(b)
                    }
                    _ => return Err(bad(format!("\\x at byte {i} needs two hex digits"))),
                }
                i += 4;
                continue;
            }
            Some(_) => {
                let esc: String = text[i..].chars().take(2).collect();
                return Err(bad(format!(
                    "unknown escape {esc:?} at byte {i} (expected \\r \\n \\t \\\\ or \\xHH)"
                )));
            }
            None => return Err(bad("a lone backslash at the end".into())),
        }
        i += 2;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(unescape("PING\\r\\n").unwrap(), b"PING\r\n");
        assert_eq!(unescape("a\\tb\\\\c\\x00\\xfF").unwrap(), b"a\tb\\c\x00\xff");
        assert_eq!(unescape("").unwrap(), b"");
        assert_eq!(unescape("é").unwrap(), "é".as_bytes());
        for bad in ["\\", "a\\q", "\\x4", "\\xg0", "\\x+1", "\\é"] {
            assert!(matches!(unescape(bad), Err(SpecError::InvalidExpectation(_))), "{bad:?}");
        }
        assert_eq!(
            unescape("PING\\rx\\q").unwrap_err().to_string(),
            "invalid data to send \"PING\\\\rx\\\\q\": unknown escape \"\\\\q\" at byte 7 (expected \\r \\n \\t \\\\ or \\xHH)"
        );
    }

    #[test]
    fn status_sets() {
        let s = StatusSet::parse("200-299,418").unwrap();
        for c in [200, 250, 299, 418] {
            assert!(s.contains(c), "{c}");
        }
        for c in [199, 300, 417, 419, 500] {
            assert!(!s.contains(c), "{c}");
        }
        assert_eq!(s.to_string(), "200-299,418");
        assert_eq!(StatusSet::parse(" 200 - 204 , 301").unwrap().to_string(), "200-204,301");
        for bad in
            ["", "200,", "abc", "99", "1000", "300-200", "200-", "-200", "2xx", "0200", "+200"]
        {
            let e = StatusSet::parse(bad).unwrap_err();
            assert!(matches!(e, SpecError::InvalidExpectation(_)), "{bad:?}");
        }
        assert_eq!(
            StatusSet::parse("200-299,4x").unwrap_err().to_string(),
            "invalid status set \"200-299,4x\": \"4x\" is not a status code (expected 100 to 999)"
        );
    }

    #[test]
    fn patterns() {
        let p = Pattern::new(r#""status":\s*"ok""#).unwrap();
        assert!(p.is_match(br#"{"status": "ok"}"#));
        assert!(!p.is_match(br#"{"status": "down"}"#));
        assert!(Pattern::new(r"\d+").unwrap().is_match(b"\xff 42"));
        assert!(Pattern::new(r"(?i)^\s*\w+: UP$").unwrap().is_match(b" status: up"));
        assert!(Pattern::new("café").unwrap().is_match("le café".as_bytes()));
        assert!(Pattern::new(r"caf.").unwrap().is_match("café".as_bytes()));
        let e = Pattern::new("a(b").unwrap_err().to_string();
        assert!(e.starts_with("invalid regular expression \"a(b\": "), "{e}");
        assert!(e.contains("unclosed group"), "{e}");
        assert!(Pattern::new(&"a".repeat(MAX_PATTERN_LEN + 1)).is_err());
        // Compiles to far more than the size limit.
        assert!(Pattern::new(r"(?:\w{1000}){1000}").is_err());
        assert_eq!(Pattern::new("x").unwrap(), Pattern::new("x").unwrap());
        let p = Pattern::new(r"PING :(?<tok>[^ ]*)").unwrap();
        assert_eq!(
            p.expand(b"PING :abc", b"PONG ${1} $1x $tok $$ $9 $", 100),
            Expansion::Expanded(b"PONG abc  abc $  $".to_vec()),
            "Go's Regexp.Expand: $1x names group \"1x\", an unknown group is empty"
        );
        assert_eq!(p.expand(b"PONG", b"$1", 100), Expansion::NoMatch);
        // 200 references to a 100-byte group: refused at the limit, not built to 20 kB.
        let line = [b"PING :".as_slice(), &[b'a'; 100]].concat();
        assert_eq!(p.expand(&line, "$1".repeat(200).as_bytes(), 10240), Expansion::TooLong);
        assert_eq!(
            p.expand(&line, b"$1$1", 200),
            Expansion::Expanded([b'a'; 200].to_vec()),
            "exactly the limit is accepted"
        );
        assert_eq!(p.expand(&line, b"$1$1!", 200), Expansion::TooLong, "literals count too");
        assert_eq!(
            Pattern::new("").unwrap_err().to_string(),
            "empty regular expression: it matches anything (write what must be found, or leave \
             the expectation out)"
        );
    }
}
