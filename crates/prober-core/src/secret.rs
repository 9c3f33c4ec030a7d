//! Credentials in what is printed: a [`Secret`] type that never shows its value, the rule
//! that says which header values are credentials ([`is_secret_header`]), and the masking of
//! passwords in URLs quoted in text ([`redact_userinfo`]).
//!
//! Pages, logs and errors print specs with `{:?}` and quote targets; the redaction lives in
//! the types' own `Debug` (and `Display`) so that a new view of them cannot forget it.

use std::borrow::Cow;
use std::fmt;

/// What is printed instead of a credential (as Prometheus' `Secret` marshals).
pub const REDACTED: &str = "<secret>";

/// A credential (a password, a token): its `Debug` and `Display` print [`REDACTED`]; only
/// [`Secret::expose`] gives the value, where it is sent.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Secret(String);

impl Secret {
    /// Wraps a credential.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value, to send it (never to print it).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// Whether a header (or gRPC metadata key) named `name` carries a credential, so that its
/// value is never printed: `Authorization`, `Proxy-Authorization`, `Cookie` and
/// `Set-Cookie`, and any name holding `auth`, `cookie`, `token`, `key`, `secret`, `pass`,
/// `session`, `credential` or `signature` (`X-Api-Key`, `X-Auth-Token`, `Private-Token`),
/// in any case. A false positive only hides a value from a page.
pub fn is_secret_header(name: &str) -> bool {
    const WORDS: [&str; 9] =
        ["auth", "cookie", "token", "key", "secret", "pass", "session", "credential", "signature"];
    let name = name.to_ascii_lowercase();
    WORDS.iter().any(|w| name.contains(w))
}

/// A header's value as it may be printed: [`REDACTED`] for a credential
/// ([`is_secret_header`]).
pub fn printable_header_value<'a>(name: &str, value: &'a str) -> &'a str {
    if is_secret_header(name) { REDACTED } else { value }
}

/// Header fields (or gRPC metadata) as `Debug` prints them, credentials' values redacted.
pub struct RedactedHeaders<'a>(pub &'a [(String, String)]);

impl fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(n, v)| (n, printable_header_value(n, v))))
            .finish()
    }
}

/// `text` with the user information of every URL in it masked, as Go's `URL.Redacted`:
/// `http://user:xxxxx@host/` (a user alone, which may be a token, becomes `xxxxx`). Borrowed
/// when there is none.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    // No `@`, no user information: the common case costs one scan (every `/probe` logs its
    // target).
    if !text.contains('@') {
        return Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut done = 0;
    let mut from = 0;
    while let Some(at) = text[from..].find("://") {
        let start = from + at + 3;
        // The authority ends where a path, query or fragment begins, or the URL ends in text.
        let end = text[start..]
            .find(['/', '?', '#', '"', '\'', '\\', '<', '>', '`'])
            .map_or(text.len(), |i| start + i);
        let end = text[start..end].find(char::is_whitespace).map_or(end, |i| start + i);
        if let Some(user_end) = text[start..end].rfind('@').map(|i| start + i) {
            let user = &text[start..user_end];
            out.push_str(&text[done..start]);
            match user.split_once(':') {
                Some((name, _)) => {
                    out.push_str(name);
                    out.push_str(":xxxxx");
                }
                None => out.push_str("xxxxx"),
            }
            done = user_end;
        }
        from = end.max(start);
    }
    if done == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[done..]);
    Cow::Owned(out)
}

/// A `/probe` target as it may be printed: [`redact_userinfo`] of it, read as a URL also when
/// it names no scheme (`user:pass@host:80`, which an HTTP module probes as `http://...`).
pub fn redact_target(target: &str) -> Cow<'_, str> {
    if target.contains("://") || !target.contains('@') {
        return redact_userinfo(target);
    }
    match redact_userinfo(&format!("x://{target}")) {
        Cow::Borrowed(_) => Cow::Borrowed(target),
        Cow::Owned(shown) => Cow::Owned(shown["x://".len()..].to_string()),
    }
}

/// The user information of a target (`user:pass` of `http://user:pass@host/`, or of
/// `user:pass@host:80`), if any: what no message quoting a part of the target may show.
pub fn target_userinfo(target: &str) -> Option<&str> {
    let rest = target.split_once("://").map_or(target, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority.rsplit_once('@').map(|(userinfo, _)| userinfo).filter(|u| !u.is_empty())
}

/// A configuration reader's error as it may be printed: serde quotes a value it could not
/// take (`invalid type: string "admin:hunter2", expected struct BasicAuth`), and the value
/// may be a credential written in the wrong place, so every quoted string is left out (the
/// error still names the field and what was expected).
pub fn redact_quoted_values(error: &str) -> String {
    const QUOTED: &str = "string \"";
    let mut out = String::with_capacity(error.len());
    let mut rest = error;
    while let Some(at) = rest.find(QUOTED) {
        out.push_str(&rest[..at]);
        out.push_str("a string (its value not shown)");
        // The end of the Debug-quoted string: the first quote not escaped by a backslash.
        let body = &rest[at + QUOTED.len()..];
        let mut escaped = false;
        let end = body.char_indices().find_map(|(i, c)| match (escaped, c) {
            (true, _) => {
                escaped = false;
                None
            }
            (false, '\\') => {
                escaped = true;
                None
            }
            (false, '"') => Some(i + 1),
            _ => None,
        });
        // An unterminated quote: nothing after it is shown.
        rest = end.map_or("", |end| &body[end..]);
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_without_a_scheme_and_quoted_config_values_are_masked() {
        assert_eq!(redact_target("admin:hunter2@host:80"), "admin:xxxxx@host:80");
        assert_eq!(redact_target("http://admin:hunter2@host/x"), "http://admin:xxxxx@host/x");
        assert_eq!(redact_target("host:80"), "host:80");
        assert_eq!(target_userinfo("admin:hunter2@host:80"), Some("admin:hunter2"));
        assert_eq!(target_userinfo("https://tok@h/p@q"), Some("tok"));
        assert_eq!(target_userinfo("host:80"), None);
        let e = r#"modules.a.http.basic_auth: invalid type: string "admin:hun\"ter2", expected struct BasicAuth at line 5"#;
        let shown = redact_quoted_values(e);
        assert!(!shown.contains("hun"), "{shown}");
        assert!(shown.ends_with("expected struct BasicAuth at line 5"), "{shown}");
        assert_eq!(redact_quoted_values(r#"x: string "abc"#), "x: a string (its value not shown)");
    }

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s:?} {s} {s:#?}"), "<secret> <secret> <secret>");
        assert_eq!(s.expose(), "hunter2");
    }

    #[test]
    fn credential_headers() {
        for name in [
            "Authorization",
            "proxy-authorization",
            "Cookie",
            "Set-Cookie",
            "X-Api-Key",
            "X-Auth-Token",
            "PRIVATE-TOKEN",
            "X-Vault-Secret",
            "X-Password",
            "X-Session-Id",
            "x-goog-signature",
        ] {
            assert!(is_secret_header(name), "{name}");
        }
        for name in ["Host", "User-Agent", "Accept", "Keep-Alive", "X-Request-Id", "Content-Type"] {
            assert!(!is_secret_header(name), "{name}");
        }
        let headers = [("X-Api-Key".to_string(), "k".to_string()), ("Accept".into(), "a".into())];
        assert_eq!(
            format!("{:?}", RedactedHeaders(&headers)),
            r#"[("X-Api-Key", "<secret>"), ("Accept", "a")]"#
        );
    }

    #[test]
    fn userinfo_is_masked() {
        let cases = [
            ("http://u:p@h/x", "http://u:xxxxx@h/x"),
            ("target \"https://u:p%40ss@h:8/\": no", "target \"https://u:xxxxx@h:8/\": no"),
            ("http://token@h?q=a@b", "http://xxxxx@h?q=a@b"),
            (
                "a http://u:p@h b http://h/ c https://v:q@[::1]",
                "a http://u:xxxxx@h b http://h/ c https://v:xxxxx@[::1]",
            ),
            ("http://h/path@x", "http://h/path@x"),
            ("no url", "no url"),
            ("://@", "://xxxxx@"),
            ("http://u:p@", "http://u:xxxxx@"),
        ];
        for (text, want) in cases {
            assert_eq!(redact_userinfo(text), want, "{text}");
        }
        assert!(matches!(redact_userinfo("http://h/"), Cow::Borrowed(_)));
    }
}
