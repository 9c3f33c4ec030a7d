//! The flag tables: each command's flags declared once, with their names, the kind of value
//! they take, their help and what they do (as ripgrep's `crates/core/flags/defs.rs`). The
//! parser walks a command's table, and the command's `--help` is written from it, so a flag
//! cannot be parsed without being documented, nor documented under another name.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::args::{Failure, Parser, Token};

/// What a flag does with its value, into the command's state `T`.
pub enum Apply<T> {
    /// No value.
    Switch(fn(&mut T)),
    /// A value that must be text; errors are usage errors made with the parser.
    Text(TextFn<T>),
    /// A file name (any bytes).
    Path(fn(&mut T, &Parser, PathBuf) -> Result<(), Failure>),
    /// `-h, --help`: print the command's help and stop.
    Help,
}

/// What a flag with a text value does: the state, the parser (for errors), the flag's name
/// as typed (`-c` or `--count`), the value.
pub type TextFn<T> = fn(&mut T, &Parser, &str, String) -> Result<(), Failure>;

type S = &'static str;

/// One flag.
pub struct Flag<T> {
    /// `--name`.
    pub long: S,
    /// `-X`, the short name, if any.
    pub short: Option<char>,
    /// The value's name in the help (`DUR`, `'N: v'`); empty for a switch.
    pub value: S,
    pub apply: Apply<T>,
    /// The help: lines joined by `\n`, written from the help column on.
    pub help: S,
}

// The constructors take the help last: in the tables, its lines come after the declaration.

/// A flag with a value that must be text.
pub const fn text<T>(long: S, value: S, apply: TextFn<T>, help: S) -> Flag<T> {
    Flag { long, short: None, value, apply: Apply::Text(apply), help }
}

/// A flag with a file name.
pub const fn path<T>(long: S, value: S, apply: PathFn<T>, help: S) -> Flag<T> {
    Flag { long, short: None, value, apply: Apply::Path(apply), help }
}

/// What a flag with a file name does.
pub type PathFn<T> = fn(&mut T, &Parser, PathBuf) -> Result<(), Failure>;

/// A flag without a value.
pub const fn switch<T>(long: S, apply: fn(&mut T), help: S) -> Flag<T> {
    Flag { long, short: None, value: "", apply: Apply::Switch(apply), help }
}

/// `-h, --help`.
pub const fn help<T>() -> Flag<T> {
    Flag {
        long: "--help",
        short: Some('h'),
        value: "",
        apply: Apply::Help,
        help: "print this help",
    }
}

/// `flag` with a short name too (`-H` for `--header`).
pub const fn short<T>(c: char, mut flag: Flag<T>) -> Flag<T> {
    flag.short = Some(c);
    flag
}

/// Sets `slot` to `v`: the end of many flags' apply functions.
pub fn set<V>(slot: &mut Option<V>, v: V) -> Result<(), Failure> {
    put(slot, Some(v))
}

/// Replaces `slot` with `v`.
pub fn put<V>(slot: &mut V, v: V) -> Result<(), Failure> {
    *slot = v;
    Ok(())
}

/// Adds `v` to `list`.
pub fn add<V>(list: &mut Vec<V>, v: V) -> Result<(), Failure> {
    list.push(v);
    Ok(())
}

impl<T> Flag<T> {
    /// Whether `opt`, as typed (`--name` or `-X`), names this flag.
    fn is(&self, opt: &str) -> bool {
        let short = |c: char| opt.strip_prefix('-').is_some_and(|o| o.chars().eq([c]));
        opt == self.long || self.short.is_some_and(short)
    }

    /// How the help names it: `-H, --header 'N: v'`.
    pub fn label(&self) -> String {
        let short = self.short.map_or(String::new(), |c| format!("-{c}, "));
        format!("{short}{} {}", self.long, self.value).trim_end().to_string()
    }
}

/// Flags under one heading of the help, with a note after them.
pub struct Section<T: 'static> {
    /// The heading (`Options:`, `TLS options (...):`).
    pub title: &'static str,
    pub flags: &'static [Flag<T>],
    /// Text after the flags (empty for none).
    pub note: &'static str,
}

/// A command's flags and help.
pub struct Command<T: 'static> {
    pub name: &'static str,
    /// The help before the flags: usage lines and what the command does.
    pub head: &'static str,
    pub sections: &'static [Section<T>],
    /// The help after the flags (exit statuses).
    pub tail: &'static str,
    /// Where the flags' help starts on a line.
    pub column: usize,
    /// Whether an unknown option's message names the command (`for 'prober check'`).
    pub unknown_names_command: bool,
}

/// What an argument other than a flag is to the command.
pub trait Operands {
    /// Whether the command takes a command line after `--` (else `--` only ends the flags).
    const COMMAND_LINE: bool = false;
    /// A plain argument (a TARGET or FILE).
    fn operand(&mut self, p: &Parser, v: OsString) -> Result<(), Failure>;
    /// Everything after `--`, when [`Operands::COMMAND_LINE`].
    fn command_line(&mut self, _p: &Parser, _argv: Vec<OsString>) -> Result<(), Failure> {
        Ok(())
    }
}

impl<T: Operands> Command<T> {
    /// Parses the arguments into `state`; `Ok(false)` when the help was printed.
    pub fn parse(&self, p: &mut Parser, state: &mut T) -> Result<bool, Failure> {
        loop {
            // Only there: taking the rest consumes the `--`.
            if let Some(argv) = T::COMMAND_LINE.then(|| p.after_double_dash()).flatten() {
                return state.command_line(p, argv).map(|()| true);
            }
            let opt = match p.next()? {
                None => return Ok(true),
                Some(Token::Value(v)) => {
                    state.operand(p, v)?;
                    continue;
                }
                Some(Token::Option(opt)) => opt,
            };
            let Some(flag) = self.flags().find(|f| f.is(&opt)) else {
                let whose = format!(" for 'prober {}'", self.name);
                let whose = if self.unknown_names_command { whose.as_str() } else { "" };
                return Err(p.usage(format!("unknown option '{opt}'{whose}")));
            };
            match &flag.apply {
                Apply::Switch(apply) => apply(state),
                Apply::Text(apply) => {
                    let v = p.text(&opt)?;
                    apply(state, p, &opt, v)?;
                }
                Apply::Path(apply) => {
                    let v = p.path(&opt)?;
                    apply(state, p, v)?;
                }
                Apply::Help => {
                    print!("{}", self.help());
                    return Ok(false);
                }
            }
        }
    }
}

impl<T> Command<T> {
    /// Every flag, in the help's order.
    pub fn flags(&self) -> impl Iterator<Item = &Flag<T>> {
        self.sections.iter().flat_map(|s| s.flags)
    }

    /// The command's `--help`.
    pub fn help(&self) -> String {
        let mut out = self.head.to_string();
        for section in self.sections {
            out.push('\n');
            out.push_str(section.title);
            out.push('\n');
            for flag in section.flags {
                let label = flag.label();
                let indent = " ".repeat(self.column);
                if 2 + label.len() < self.column {
                    out.push_str(&format!("  {label:<width$}", width = self.column - 2));
                } else {
                    out.push_str(&format!("  {label}\n{indent}"));
                }
                out.push_str(&flag.help.replace('\n', &format!("\n{indent}")));
                out.push('\n');
            }
            out.push_str(section.note);
        }
        out.push_str(self.tail);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every flag of each table is in its command's help, by every name, and no name is
    /// declared twice (the parser would take the first).
    fn check_table<T: Operands>(cmd: &Command<T>) {
        let help = cmd.help();
        let mut names = Vec::new();
        for flag in cmd.flags() {
            let line = format!("\n  {}", flag.label());
            assert!(help.contains(&line), "{}: {line:?} not in its help", cmd.name);
            names.push(flag.long.to_string());
            names.extend(flag.short.map(|c| format!("-{c}")));
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{}: a name declared twice: {names:?}", cmd.name);
    }

    #[test]
    fn every_flag_is_in_the_help_once() {
        check_table(&crate::check_flags::CHECK);
        check_table(&crate::watch::WATCH);
        check_table(&crate::serve::SERVE);
    }

    #[test]
    fn labels_and_columns() {
        let text: Flag<()> = short('H', text("--header", "'N: v'", |_, _, _, _| Ok(()), "a\nb"));
        assert_eq!(text.label(), "-H, --header 'N: v'");
        assert!(text.is("-H") && text.is("--header") && !text.is("-h") && !text.is("--head"));
        let switch: Flag<()> = switch("--json", |_| {}, "one line");
        assert_eq!(switch.label(), "--json");
    }
}
