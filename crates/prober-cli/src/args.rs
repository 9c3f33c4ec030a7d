//! Arguments (lexopt over `OsString`: `--name VALUE`, `--name=VALUE`, `-X VALUE`, `-XVALUE`),
//! exit statuses and the one-line errors of the command.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

pub use prober_watch::escape::{escape_for_terminal, quote_field};

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

/// `--web-config FILE` of `watch` and `serve`: 66 when it cannot be read, 64 when it is wrong.
impl From<prober_watch::endpoints::WebConfigError> for Failure {
    fn from(e: prober_watch::endpoints::WebConfigError) -> Failure {
        use prober_watch::endpoints::WebConfigError;
        match e {
            WebConfigError::Unreadable(m) => Failure::no_input(m),
            WebConfigError::Invalid(m) => Failure::input(m),
        }
    }
}

/// The option parser of one subcommand: lexopt's, over `OsString`, with the subcommand's name
/// for messages. Options come back as their names as typed on the command line (`--timeout`,
/// `-H`), so that a subcommand dispatches with one `match` and every message names the option.
#[derive(Debug)]
pub struct Parser {
    inner: lexopt::Parser,
    cmd: &'static str,
}

/// One argument: an option's name (`--name` or `-X`), or a plain value.
#[derive(Debug, PartialEq, Eq)]
pub enum Token {
    /// An option, `--name` or `-X` (its value, if any, is taken with [`Parser::value`]).
    Option(String),
    /// An argument that is not an option (`-` included).
    Value(OsString),
}

impl Parser {
    /// A parser over the arguments after `prober CMD`.
    pub fn new(items: Vec<OsString>, cmd: &'static str) -> Parser {
        let mut inner = lexopt::Parser::from_args(items);
        // `-e=A=1` is the value `=A=1`, as it was before lexopt: values are taken as written.
        inner.set_short_equals(false);
        Parser { inner, cmd }
    }

    /// A usage error of this subcommand.
    pub fn usage(&self, message: impl fmt::Display) -> Failure {
        Failure::usage(self.cmd, message)
    }

    /// A usage error that names option `opt` before `e`: `--for: bad duration ...`.
    pub fn named<'a, E: fmt::Display>(&'a self, opt: &'a str) -> impl Fn(E) -> Failure + 'a {
        move |e| self.usage(format!("{opt}: {e}"))
    }

    /// The next argument, `None` at the end.
    pub fn next(&mut self) -> Result<Option<Token>, Failure> {
        match self.inner.next() {
            Ok(None) => Ok(None),
            Ok(Some(lexopt::Arg::Long(name))) => Ok(Some(Token::Option(format!("--{name}")))),
            Ok(Some(lexopt::Arg::Short(c))) => Ok(Some(Token::Option(format!("-{c}")))),
            Ok(Some(lexopt::Arg::Value(v))) => Ok(Some(Token::Value(v))),
            Err(lexopt::Error::UnexpectedValue { option, .. }) => {
                Err(self.usage(format!("option '{option}' takes no value")))
            }
            Err(e) => Err(self.usage(e)),
        }
    }

    /// When the next argument is `--`: everything after it, verbatim (a command and its
    /// arguments). `None` otherwise (also when an option's attached value is pending: the
    /// next call to [`Parser::next`] reports it).
    pub fn after_double_dash(&mut self) -> Option<Vec<OsString>> {
        let mut raw = self.inner.try_raw_args()?;
        raw.next_if(|a| a == "--")?;
        Some(raw.collect())
    }

    /// The value of option `opt`: attached (`--name=VALUE`, `-XVALUE`) or the next argument.
    pub fn value(&mut self, opt: &str) -> Result<OsString, Failure> {
        self.inner.value().map_err(|_| self.usage(format!("option '{opt}' needs a value")))
    }

    /// The value of option `opt`, which must be text.
    pub fn text(&mut self, opt: &str) -> Result<String, Failure> {
        let v = self.value(opt)?;
        self.to_text(v, opt)
    }

    /// The value of option `opt` as a file name (any bytes).
    pub fn path(&mut self, opt: &str) -> Result<PathBuf, Failure> {
        self.value(opt).map(PathBuf::from)
    }

    /// `v` as text; `what` names it in the error (an option, or `TARGET`).
    pub fn to_text(&self, v: OsString, what: &str) -> Result<String, Failure> {
        v.into_string().map_err(|v| {
            self.usage(format!("{what}: {:?} is not valid UTF-8 text", v.to_string_lossy()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(v: &[&str]) -> Parser {
        Parser::new(v.iter().map(OsString::from).collect(), "check")
    }

    #[test]
    fn values_in_every_form() {
        let mut p = parser(&["--timeout", "2s", "--timeout=3s", "--timeout=", "-HX: y", "-H"]);
        for want in ["2s", "3s", ""] {
            assert_eq!(p.next(), Ok(Some(Token::Option("--timeout".into()))));
            assert_eq!(p.text("--timeout"), Ok(want.to_string()));
        }
        assert_eq!(p.next(), Ok(Some(Token::Option("-H".into()))));
        assert_eq!(p.text("-H"), Ok("X: y".into()));
        assert_eq!(p.next(), Ok(Some(Token::Option("-H".into()))));
        let e = p.text("-H").unwrap_err();
        assert_eq!(e.code, EXIT_USAGE);
        assert_eq!(e.message, "option '-H' needs a value (see 'prober check --help')");
        let mut p = parser(&["--json=1"]);
        assert_eq!(p.next(), Ok(Some(Token::Option("--json".into()))));
        let e = p.next().unwrap_err();
        assert_eq!(e.message, "option '--json' takes no value (see 'prober check --help')");
        let mut p = parser(&["-", "--", "-x", "--"]);
        assert_eq!(p.after_double_dash(), None);
        assert_eq!(p.next(), Ok(Some(Token::Value("-".into()))));
        assert_eq!(p.after_double_dash(), Some(vec!["-x".into(), "--".into()]));
    }

    #[test]
    fn text_and_paths() {
        use std::os::unix::ffi::OsStringExt;
        let bytes = OsString::from_vec(b"/tmp/a\xffb".to_vec());
        let mut p = Parser::new(vec![bytes.clone(), bytes.clone()], "watch");
        assert_eq!(p.path("--manifest"), Ok(PathBuf::from(bytes)));
        let e = p.text("--host").unwrap_err();
        assert_eq!(
            e.message,
            "--host: \"/tmp/a\u{fffd}b\" is not valid UTF-8 text (see 'prober watch --help')"
        );
    }
}
