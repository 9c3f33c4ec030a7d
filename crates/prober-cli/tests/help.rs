//! Each command's `--help` is written from its flag table; docs/cli.md documents the same
//! flags, by the same names.

mod common;

use common::*;

/// The flags of `prober CMD --help`: each option line's short name (if any) and long name.
fn help_flags(cmd: &str) -> Vec<String> {
    let r = run(&[cmd, "--help"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{cmd}");
    let mut flags = Vec::new();
    for line in r.stdout.lines().filter(|l| l.starts_with("  -") && !l.starts_with("  -- ")) {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap();
        if let Some(short) = first.strip_suffix(',') {
            flags.push(short.to_string());
            flags.push(words.next().unwrap().to_string());
        } else {
            flags.push(first.to_string());
        }
    }
    flags
}

/// The part of docs/cli.md about `prober CMD`: from its heading to the next of its level.
fn docs_section(cmd: &str) -> String {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md"))
        .expect("docs/cli.md");
    let heading = format!("\n## `prober {cmd}`\n");
    let start = docs.find(&heading).unwrap_or_else(|| panic!("no {heading:?} in docs/cli.md"));
    let rest = &docs[start + heading.len()..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
}

/// The flags named in `text` in code spans: `--for DUR`, `-X, --request METHOD`, `--a=1`.
fn flags_in_code(text: &str) -> Vec<String> {
    let spans = text.split('`').skip(1).step_by(2);
    let words = spans.flat_map(|span| span.split([' ', ',', '=']));
    words.filter(|w| w.starts_with('-') && w.len() > 1 && w != &"--").map(str::to_string).collect()
}

/// The flags docs/cli.md's section of `prober CMD` lists in its option tables (rows that start
/// with a flag: "| `-X, --request METHOD` | ...").
fn documented_flags(cmd: &str) -> Vec<String> {
    let section = docs_section(cmd);
    let rows = section.lines().filter(|l| l.starts_with("| `-"));
    rows.flat_map(|row| flags_in_code(row.split(" | ").next().unwrap())).collect()
}

#[test]
fn every_flag_of_the_help_is_documented_and_every_documented_flag_is_in_the_help() {
    for cmd in ["check", "watch", "serve"] {
        let help = help_flags(cmd);
        assert!(help.len() > 5, "{cmd}: {help:?}");
        let named = flags_in_code(&docs_section(cmd));
        let undocumented: Vec<&String> = help.iter().filter(|f| !named.contains(f)).collect();
        assert!(undocumented.is_empty(), "{cmd}: not in docs/cli.md: {undocumented:?}");
        let documented = documented_flags(cmd);
        let missing: Vec<&String> = documented.iter().filter(|f| !help.contains(f)).collect();
        assert!(missing.is_empty(), "{cmd}: documented but not in --help: {missing:?}");
    }
}
