//! A small hand-written argument reader: `--name VALUE`, `--name=VALUE`, `-X VALUE`, `-XVALUE`.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt::{self, Write as _};

/// Exit statuses (sysexits.h for the errors of the command itself).
pub const EXIT_FAILURE: i32 = 1;
pub const EXIT_UNKNOWN: i32 = 2;
pub const EXIT_USAGE: i32 = 64;
pub const EXIT_NOINPUT: i32 = 66;
pub const EXIT_SOFTWARE: i32 = 70;

/// Why the command stops early: an exit status and a one-line message for stderr.
#[derive(Debug, PartialEq, Eq)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    /// A usage error of `prober CMD`, with a pointer to its help.
    pub fn usage(cmd: &str, message: impl fmt::Display) -> Failure {
        let help = if cmd.is_empty() {
            "prober --help".to_string()
        } else {
            format!("prober {cmd} --help")
        };
        Failure { code: EXIT_USAGE, message: format!("{message} (see '{help}')") }
    }

    /// Bad input in a file (also exit status 64).
    pub fn input(message: impl fmt::Display) -> Failure {
        Failure { code: EXIT_USAGE, message: message.to_string() }
    }

    pub fn no_input(message: impl fmt::Display) -> Failure {
        Failure { code: EXIT_NOINPUT, message: message.to_string() }
    }

    pub fn software(message: impl fmt::Display) -> Failure {
        Failure { code: EXIT_SOFTWARE, message: message.to_string() }
    }
}

/// The remaining arguments of one subcommand.
#[derive(Debug)]
pub struct Args {
    items: VecDeque<String>,
    cmd: &'static str,
}

impl Args {
    pub fn new(items: Vec<String>, cmd: &'static str) -> Args {
        Args { items: items.into(), cmd }
    }

    #[allow(clippy::should_implement_trait)] // not an iterator: values are taken mid-loop
    pub fn next(&mut self) -> Option<String> {
        self.items.pop_front()
    }

    /// Everything left, in order.
    pub fn rest(&mut self) -> Vec<String> {
        self.items.drain(..).collect()
    }

    pub fn usage(&self, message: impl fmt::Display) -> Failure {
        Failure::usage(self.cmd, message)
    }

    /// If `arg` is the option `long` (or `short`), returns its value: the part after `=` (long)
    /// or after the letter (short), else the next argument. `Ok(None)`: `arg` is another thing.
    pub fn value(
        &mut self,
        arg: &str,
        long: &str,
        short: Option<&str>,
    ) -> Result<Option<String>, Failure> {
        let attached = if arg == long || Some(arg) == short {
            None
        } else if let Some(v) = arg.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            Some(v.to_string())
        } else if let Some(v) = short.and_then(|s| arg.strip_prefix(s)).filter(|v| !v.is_empty()) {
            Some(v.to_string())
        } else {
            return Ok(None);
        };
        match attached {
            Some(v) => Ok(Some(v)),
            None => match self.items.pop_front() {
                Some(v) => Ok(Some(v)),
                None => Err(self.usage(format!("option '{arg}' needs a value"))),
            },
        }
    }
}

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
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Args {
        Args::new(v.iter().map(|s| s.to_string()).collect(), "check")
    }

    #[test]
    fn values_in_every_form() {
        let mut a = args(&["2s", "rest"]);
        assert_eq!(a.value("--timeout", "--timeout", None), Ok(Some("2s".into())));
        assert_eq!(a.value("--timeout=3s", "--timeout", None), Ok(Some("3s".into())));
        assert_eq!(a.value("--timeout=", "--timeout", None), Ok(Some(String::new())));
        assert_eq!(a.value("--timeouts", "--timeout", None), Ok(None));
        assert_eq!(a.value("-HX: y", "--header", Some("-H")), Ok(Some("X: y".into())));
        assert_eq!(a.value("-H", "--header", Some("-H")), Ok(Some("rest".into())));
        let e = a.value("-H", "--header", Some("-H")).unwrap_err();
        assert_eq!(e.code, EXIT_USAGE);
        assert_eq!(e.message, "option '-H' needs a value (see 'prober check --help')");
    }

    #[test]
    fn terminal_escapes() {
        assert_eq!(
            escape_for_terminal("a\nb\r\tc\u{1}\u{1b}[31m\u{7f}\u{85}\u{9b}\u{202e}\u{2066}d"),
            "a\\nb\\r\\tc\\x01\\x1b[31m\\x7f\\u{85}\\u{9b}\\u{202e}\\u{2066}d"
        );
        assert!(matches!(escape_for_terminal("plain caf\u{e9} \\n"), Cow::Borrowed(_)));
    }
}
