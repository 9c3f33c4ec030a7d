//! Text made safe for a terminal, one line: what every human line of `prober watch` (and its
//! health answers and systemd status) quotes from a file or a peer goes through here.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Makes any string safe to print on a terminal, on one line: control characters (C0, DEL and
/// C1) and the bidirectional-text controls (which can make a line read differently from its
/// bytes) are written as escapes: `\n`, `\r`, `\t`, `\x1b`, `\u{85}`, `\u{202e}`. Every
/// string that human (non-JSON) output prints goes through here: a target name, a message or
/// a file name can then neither forge a line nor reach the terminal as an escape sequence.
pub fn escape_for_terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// A name as one field of a line of words (a target in `watch` lines): as it is when it is
/// plain, else quoted with `\"` and `\\` escaped and [`escape_for_terminal`]'s escapes, so that
/// a name with spaces cannot pass for other fields (`web ready 3`), nor an empty one vanish.
pub fn quote_field(s: &str) -> Cow<'_, str> {
    let plain = !s.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c == '"' || c == '\\' || needs_escape(c));
    if plain {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => push_escaped(&mut out, c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if needs_escape(c) && (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if needs_escape(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes() {
        assert_eq!(
            escape_for_terminal("a\nb\r\tc\u{1}\u{1b}[31m\u{7f}\u{85}\u{9b}\u{202e}\u{2066}d"),
            "a\\nb\\r\\tc\\x01\\x1b[31m\\x7f\\u{85}\\u{9b}\\u{202e}\\u{2066}d"
        );
        assert!(matches!(escape_for_terminal("plain caf\u{e9} \\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn fields_are_quoted_only_when_they_need_it() {
        for plain in ["web", "web/app", "caf\u{e9}", "a'b", "x=1"] {
            assert!(matches!(quote_field(plain), Cow::Borrowed(_)), "{plain}");
        }
        let cases = [
            ("web ready 3", r#""web ready 3""#),
            ("", r#""""#),
            (" ", r#"" ""#),
            ("a\nb", r#""a\nb""#),
            ("a\tb", r#""a\tb""#),
            ("say \"hi\"", r#""say \"hi\"""#),
            ("back\\slash", r#""back\\slash""#),
            ("\u{1b}[31mred", r#""\x1b[31mred""#),
            ("rtl\u{202e}", r#""rtl\u{202e}""#),
            ("nb\u{a0}sp", "\"nb\u{a0}sp\""),
        ];
        for (name, want) in cases {
            assert_eq!(quote_field(name), want, "{name:?}");
        }
    }
}
