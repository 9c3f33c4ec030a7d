//! `$(VAR)` expansion of an exec probe's command, as the kubelet's
//! `ExpandContainerCommandOnlyStatic` does with `third_party/forked/golang/expansion`.
//!
//! Rules, in the order the scanner applies them at each `$`:
//! - `$$` is an escaped `$`: it becomes one `$` and the next character is not examined
//!   (`$$(A)` gives `$(A)`);
//! - `$(NAME)` (up to the first `)`) becomes NAME's value when NAME is defined, and stays
//!   verbatim otherwise; NAME may contain anything but `)`, so `$(A$(B))` looks up `A$(B`;
//! - `$(` with no closing `)` stays verbatim;
//! - any other `$`, including one at the very end, stays as it is.
//!
//! The source of values is the probe's static environment; when a name is listed more than
//! once the last value wins (the kubelet builds a map from the list, in order).
//!
//! The same expansion builds the command's environment ([`container_env`]), as the kubelet's
//! `makeEnvironmentVariables` builds a container's: each value is expanded against the
//! variables before it, already expanded. The command line is expanded against the values as
//! written (`ExpandContainerCommandOnlyStatic`), so the two can differ: with `B=x` and
//! `A=$(B)y`, `$(A)` in the command is `$(B)y` while the command's `A` is `xy`.

/// Expands `$(NAME)` references in `arg` from `env`; see the module documentation.
///
/// One deliberate difference from the Go code: a `$` followed by a multi-byte UTF-8 character
/// keeps that character intact (the Go code copies its first byte as a Latin-1 rune, which
/// corrupts it).
pub fn expand(arg: &str, env: &[(String, String)]) -> String {
    let lookup = |name: &str| env.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let bytes = arg.as_bytes();
    let mut out = String::with_capacity(arg.len());
    // Everything before `checkpoint` has been copied or replaced already. Only the ASCII bytes
    // `$`, `(` and `)` are ever used as cut points, so every slice is on a char boundary.
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < bytes.len() {
        if bytes[cursor] != b'$' || cursor + 1 == bytes.len() {
            cursor += 1;
            continue;
        }
        out.push_str(&arg[checkpoint..cursor]);
        match bytes[cursor + 1] {
            b'$' => {
                out.push('$');
                cursor += 2;
            }
            b'(' => {
                let rest = &arg[cursor + 2..];
                match rest.find(')') {
                    Some(len) => {
                        let name = &rest[..len];
                        match lookup(name) {
                            Some(value) => out.push_str(value),
                            None => {
                                out.push_str("$(");
                                out.push_str(name);
                                out.push(')');
                            }
                        }
                        cursor += 2 + len + 1;
                    }
                    None => {
                        // Unterminated: keep `$(` and scan on from the character after it.
                        out.push_str("$(");
                        cursor += 2;
                    }
                }
            }
            _ => {
                // A lone operator: keep it; the next character is copied as plain text.
                out.push('$');
                cursor += 1;
            }
        }
        checkpoint = cursor;
    }
    out.push_str(&arg[checkpoint..]);
    out
}

/// The environment a container with the variables `declared` (in order) has: each value
/// expanded with [`expand`] against the variables before it, as expanded, so that a value can
/// use the ones above it, `$$` is a literal `$`, and a reference to a later or unknown variable
/// stays as written. Names and order are kept.
pub fn container_env(declared: &[(String, String)]) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::with_capacity(declared.len());
    for (name, value) in declared {
        let value = expand(value, &env);
        env.push((name.clone(), value));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect()
    }

    /// `expand_test.go` `doExpansionTest`, row for row (name, input, expected).
    const CASES: &[(&str, &str, &str)] = &[
        ("whole string", "$(VAR_A)", "A"),
        ("repeat", "$(VAR_A)-$(VAR_A)", "A-A"),
        ("beginning", "$(VAR_A)-1", "A-1"),
        ("middle", "___$(VAR_B)___", "___B___"),
        ("end", "___$(VAR_C)", "___C"),
        ("compound", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"),
        ("escape & expand", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"),
        ("compound escape", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"),
        ("mixed in escapes", "f000-$$VAR_A", "f000-$VAR_A"),
        ("backslash escape ignored", "foo\\$(VAR_C)bar", "foo\\Cbar"),
        ("backslash escape ignored 2", "foo\\\\$(VAR_C)bar", "foo\\\\Cbar"),
        ("lots of backslashes", "foo\\\\\\\\$(VAR_A)bar", "foo\\\\\\\\Abar"),
        ("nested var references", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"),
        ("nested var references second type", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"),
        ("value is a reference", "$(VAR_REF)", "$(VAR_A)"),
        ("value is a reference x 2", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"),
        ("empty var", "foo$(VAR_EMPTY)bar", "foobar"),
        ("unterminated expression", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"),
        ("expression without operator", "f00__(VAR_A)__", "f00__(VAR_A)__"),
        ("shell special vars pass through", "$?_boo_$!", "$?_boo_$!"),
        ("bare operators are ignored", "$VAR_A", "$VAR_A"),
        ("undefined vars are passed through", "$(VAR_DNE)", "$(VAR_DNE)"),
        ("multiple (even) operators, var undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"),
        ("multiple (even) operators, var defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"),
        ("multiple (odd) operators, var undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"),
        ("multiple (odd) operators, var defined", "$$$$$$$(VAR_A)", "$$$A"),
        ("missing open expression", "$VAR_A)", "$VAR_A)"),
        ("shell syntax ignored", "${VAR_A}", "${VAR_A}"),
        ("trailing incomplete expression not consumed", "$(VAR_B)_______$(A", "B_______$(A"),
        ("trailing incomplete expression, no content", "$(VAR_C)_______$(", "C_______$("),
        ("operator at end of input string is preserved", "$(VAR_A)foobarzab$", "Afoobarzab$"),
        ("shell escaped incomplete expr", "foo-\\$(VAR_A", "foo-\\$(VAR_A"),
        ("lots of $( in middle", "--$($($($($--", "--$($($($($--"),
        ("lots of $( in beginning", "$($($($($--foo$(", "$($($($($--foo$("),
        ("lots of $( at end", "foo0--$($($($(", "foo0--$($($($("),
        ("escaped operators in variable names are not escaped", "$(foo$$var)", "$(foo$$var)"),
        ("newline not expanded", "\n", "\n"),
    ];

    fn run_table(env: &[(String, String)]) {
        let mut failures = Vec::new();
        for (name, input, expected) in CASES {
            let got = expand(input, env);
            if got != *expected {
                failures
                    .push(format!("{name}: expand({input:?}) = {got:?}, expected {expected:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// `TestMapping`: one context.
    #[test]
    fn upstream_table() {
        run_table(&env(&[
            ("VAR_A", "A"),
            ("VAR_B", "B"),
            ("VAR_C", "C"),
            ("VAR_REF", "$(VAR_A)"),
            ("VAR_EMPTY", ""),
        ]));
    }

    /// `TestMappingDual` used two maps searched in order; with disjoint names that is the same
    /// as one list in another order.
    #[test]
    fn upstream_table_other_order() {
        run_table(&env(&[
            ("VAR_B", "B"),
            ("VAR_C", "C"),
            ("VAR_REF", "$(VAR_A)"),
            ("VAR_A", "A"),
            ("VAR_EMPTY", ""),
        ]));
    }

    /// `TestMapReference`: values expanded in order against the values expanded so far.
    #[test]
    fn upstream_map_reference() {
        let declared = env(&[("FOO", "bar"), ("ZOO", "$(FOO)-1"), ("BLU", "$(ZOO)-2")]);
        assert_eq!(
            container_env(&declared),
            env(&[("FOO", "bar"), ("ZOO", "bar-1"), ("BLU", "bar-1-2")])
        );
    }

    /// The kubelet's `makeEnvironmentVariables`: only earlier variables are seen, `$$` is a
    /// `$`, unknown references stay, a name given again sees its earlier value.
    #[test]
    fn container_env_sees_only_what_is_above() {
        let declared = env(&[
            ("B", "x"),
            ("A", "$(B)y"),
            ("C", "$$(B)"),
            ("D", "$(E)"),
            ("E", "late"),
            ("B", "$(B)2"),
            ("F", "$(B)"),
        ]);
        assert_eq!(
            container_env(&declared),
            env(&[
                ("B", "x"),
                ("A", "xy"),
                ("C", "$(B)"),
                ("D", "$(E)"),
                ("E", "late"),
                ("B", "x2"),
                ("F", "x2"),
            ])
        );
    }

    /// The kubelet's `prober_test.go` TestProbe exec case
    /// (<https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/prober/prober_test.go>).
    #[test]
    fn kubelet_probe_row() {
        assert_eq!(expand("some $(A) $(B)", &env(&[("A", "script")])), "some script $(B)");
    }

    #[test]
    fn edge_cases() {
        let e = env(&[("A", "1"), ("A", "2"), ("", "empty-name")]);
        assert_eq!(expand("$(A)", &e), "2", "last definition wins");
        assert_eq!(expand("$()", &e), "empty-name");
        assert_eq!(expand("$()", &[]), "$()");
        assert_eq!(expand("", &e), "");
        assert_eq!(expand("$", &e), "$");
        assert_eq!(expand("$$", &e), "$");
        assert_eq!(expand("$$$", &e), "$$");
        assert_eq!(expand("$é$(A)ü", &e), "$é2ü", "multi-byte characters survive");
        assert_eq!(expand("$(é)", &env(&[("é", "x")])), "x");
        assert_eq!(expand("no references", &e), "no references");
        assert_eq!(expand("$(A)$(A)", &e), "22");
        assert_eq!(expand("$(A))", &e), "2)");
    }
}
