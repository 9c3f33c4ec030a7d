//! `$(VAR)` expansion (`prober_exec::expand`), compared with a direct port of the Go code the
//! kubelet uses (`third_party/forked/golang/expansion/expand.go`, `Expand` and
//! `tryReadVariableName`), working on bytes.
//!
//! The one documented difference: Go copies the byte after a lone `$` as a Latin-1 rune, which
//! corrupts a multi-byte character; working on bytes, the port copies the byte itself, which is
//! what `expand` does (it keeps the character intact). Everything else must match exactly.
//!
//! Input: UTF-8 text; the first line is the argument, each further line `NAME=VALUE` an
//! environment entry (the last of a name wins).
#![no_main]

use libfuzzer_sys::fuzz_target;

fn go_expand(input: &[u8], env: &[(String, String)]) -> Vec<u8> {
    let mapping = |name: &[u8]| -> Vec<u8> {
        match env.iter().rev().find(|(n, _)| n.as_bytes() == name) {
            Some((_, v)) => v.as_bytes().to_vec(),
            None => [b"$(".as_slice(), name, b")"].concat(),
        }
    };
    let mut buf = Vec::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < input.len() {
        if input[cursor] == b'$' && cursor + 1 < input.len() {
            buf.extend_from_slice(&input[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let (read, is_var, advance): (Vec<u8>, bool, usize) = match rest[0] {
                b'$' => (b"$".to_vec(), false, 1),
                b'(' => match rest[1..].iter().position(|&b| b == b')') {
                    Some(i) => (rest[1..=i].to_vec(), true, i + 2),
                    None => (b"$(".to_vec(), false, 1),
                },
                other => (vec![b'$', other], false, 1),
            };
            if is_var {
                buf.extend_from_slice(&mapping(&read));
            } else {
                buf.extend_from_slice(&read);
            }
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    buf.extend_from_slice(&input[checkpoint.min(input.len())..]);
    buf
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let arg = lines.next().unwrap_or("");
    let env: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once('='))
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    let got = prober_exec::expand(arg, &env);
    let want = go_expand(arg.as_bytes(), &env);
    assert_eq!(
        got.as_bytes(),
        want.as_slice(),
        "expand({arg:?}) = {got:?}, Go gives {:?}",
        String::from_utf8_lossy(&want)
    );
    if !arg.contains('$') {
        assert_eq!(got, arg);
    }
});
