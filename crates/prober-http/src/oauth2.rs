//! The OAuth 2 token exchange of a probe with [`prober_core::OAuth2`], sans I/O: the token
//! request as a spec of its own ([`token_request`]) and the reading of its answer
//! ([`read_token`]), as golang.org/x/oauth2's `clientcredentials` (v0.32) does, within bounds:
//! everything the token endpoint sends is hostile.
//!
//! - The answer's body is kept up to [`MAX_TOKEN_RESPONSE`] bytes; a longer one fails (Go
//!   reads 1 MiB). A JSON body is parsed by serde_json, whose nesting limit (128) bounds the
//!   depth; a `application/x-www-form-urlencoded` or `text/plain` one as a query string.
//! - A status other than 2xx, an `error` field, a missing `access_token` or one that cannot be
//!   a header value fail the exchange. Nothing of the body is quoted in the error (it may echo
//!   credentials); the `error` code is, at most [`MAX_ERROR_CODE`] bytes, escaped.
//! - The token is a [`Secret`]: it reaches the request's `Authorization` header only.

use prober_core::{
    ClosePolicy, OAuth2, OAuth2AuthStyle, Outcome, ProbeResult, ProbeSpec, RedirectPolicy, Secret,
    SpecError, StatusSet,
};
use serde::Deserialize;

/// The most bytes of a token answer read (a token, even a JWT, is a few kilobytes).
pub const MAX_TOKEN_RESPONSE: usize = 64 * 1024;
/// The most bytes of an answer's `error` code quoted in the failure's message.
pub const MAX_ERROR_CODE: usize = 128;

/// The spec of the token request for `oauth2`: a `POST` of the form to its `token_url`, with
/// its TLS options and proxy, the credentials placed as `style` says, the `User-Agent` given
/// (the probe's, as prometheus/common sends it), in the network namespace of the probe.
/// Redirects are followed as Go's default client does (10, any host).
///
/// # Errors
///
/// What the spec's setters refuse (a namespace that cannot be opened, for one).
pub fn token_request(
    oauth2: &OAuth2,
    style: OAuth2AuthStyle,
    user_agent: &str,
    netns: Option<&prober_core::NetNs>,
) -> Result<ProbeSpec, SpecError> {
    let mut spec = ProbeSpec::http(&oauth2.token_url.to_string())?;
    spec.set_method("POST")?;
    spec.set_body(oauth2.form(style).expose().as_bytes().to_vec())?;
    spec.add_header("Content-Type", "application/x-www-form-urlencoded")?;
    if style == OAuth2AuthStyle::InHeader {
        spec.add_header("Authorization", oauth2.basic_auth().expose())?;
    }
    // Go's client sends no `Accept`, and the probe's `User-Agent` (none when it has none).
    spec.add_header("Accept", "")?;
    spec.add_header("User-Agent", user_agent)?;
    spec.set_tls(oauth2.tls.clone())?;
    spec.set_http_proxy(oauth2.proxy.as_deref().cloned())?;
    if let Some(ns) = netns {
        spec.set_netns(ns.to_string())?;
    }
    spec.set_redirect_policy(RedirectPolicy::AnyHost);
    spec.set_max_redirects(10)?;
    spec.set_close_policy(ClosePolicy::Reset);
    spec.set_expect_status(StatusSet::parse("200-299")?)?;
    spec.set_keep_headers(true)?;
    spec.set_output_limit(MAX_TOKEN_RESPONSE + 1)?;
    Ok(spec)
}

/// The `Authorization` value a token answer grants (`Bearer <token>` or the answer's own
/// type), or why the exchange failed: `oauth2: cannot fetch token: ...`.
///
/// # Errors
///
/// The failed exchange's message and reason: the token request's own (connection refused,
/// timeout, TLS) for a request that got no answer; [`prober_core::Reason::Status`] for a
/// refusal or an answer without a token.
pub fn read_token(o: &Outcome) -> Result<Secret, (prober_core::Reason, String)> {
    let refused = |why: String| {
        Err((prober_core::Reason::Status, format!("oauth2: cannot fetch token: {why}")))
    };
    let Some(status) = o.http_status else {
        return Err((o.reason, format!("oauth2: cannot fetch token: {}", o.message)));
    };
    if o.result != ProbeResult::Success && !(200..300).contains(&status) {
        return match parse(o).ok().and_then(|t| t.error) {
            Some(code) => refused(format!("status {status}, error {}", quoted(&code))),
            None => refused(format!("status {status}")),
        };
    }
    if o.result != ProbeResult::Success {
        // A 2xx whose body broke (early end, bad framing, the deadline).
        return Err((o.reason, format!("oauth2: cannot fetch token: {}", o.message)));
    }
    if o.output_total > MAX_TOKEN_RESPONSE as u64 {
        return refused(format!("the answer is longer than {MAX_TOKEN_RESPONSE} bytes"));
    }
    let token = parse(o).map_err(|why| (prober_core::Reason::Status, why))?;
    if let Some(code) = token.error {
        return refused(format!("error {}", quoted(&code)));
    }
    let access = token.access_token.unwrap_or_default();
    if access.is_empty() {
        return Err((
            prober_core::Reason::Status,
            "oauth2: server response missing access_token".into(),
        ));
    }
    let kind = token_type(token.token_type.as_deref().unwrap_or(""));
    let value = format!("{kind} {access}");
    // A type is one word (an HTTP token); the header's value must be sendable as it is.
    if !kind.bytes().all(|b| b.is_ascii_graphic())
        || prober_core::validate_header("Authorization", &value).is_err()
    {
        return refused("the access_token cannot be sent in a header".into());
    }
    Ok(Secret::new(value))
}

/// golang.org/x/oauth2's `Token.Type`: `bearer`, `mac` and `basic` in their canonical case,
/// another type as given, `Bearer` when none.
fn token_type(t: &str) -> &str {
    if t.is_empty() || t.eq_ignore_ascii_case("bearer") {
        "Bearer"
    } else if t.eq_ignore_ascii_case("mac") {
        "MAC"
    } else if t.eq_ignore_ascii_case("basic") {
        "Basic"
    } else {
        t
    }
}

/// The fields of a token answer this reads (serde skips the others, within its depth limit).
#[derive(Default, Deserialize)]
struct TokenAnswer {
    access_token: Option<String>,
    token_type: Option<String>,
    error: Option<String>,
}

/// The answer's fields, by its `Content-Type` as Go reads it.
fn parse(o: &Outcome) -> Result<TokenAnswer, String> {
    let content_type = o
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    match content_type.as_deref() {
        Some("application/x-www-form-urlencoded" | "text/plain") => {
            let mut t = TokenAnswer::default();
            for pair in o.output.split(|&b| b == b'&') {
                let (k, v) = match pair.iter().position(|&b| b == b'=') {
                    Some(i) => (&pair[..i], &pair[i + 1..]),
                    None => (pair, &[][..]),
                };
                let (Some(k), Some(v)) = (form_decode(k), form_decode(v)) else {
                    return Err("oauth2: cannot parse response".into());
                };
                // Go's `Values.Get`: the first value of a key.
                let slot = match k.as_str() {
                    "access_token" => &mut t.access_token,
                    "token_type" => &mut t.token_type,
                    "error" => &mut t.error,
                    _ => continue,
                };
                slot.get_or_insert(v);
            }
            Ok(t)
        }
        _ => serde_json::from_slice(&o.output)
            .map_err(|e| format!("oauth2: cannot parse json: {}", e.classify_name())),
    }
}

/// A query string's key or value: `+` is a space, `%XX` a byte; `None` for a bad escape or
/// text that is not UTF-8.
fn form_decode(s: &[u8]) -> Option<String> {
    let spaced: Vec<u8> = s.iter().map(|&b| if b == b'+' { b' ' } else { b }).collect();
    String::from_utf8(prober_core::percent_decode(&spaced)?).ok()
}

/// An `error` code as the message shows it: cut to [`MAX_ERROR_CODE`] bytes, escaped.
fn quoted(code: &str) -> String {
    let mut end = code.len().min(MAX_ERROR_CODE);
    while !code.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}", &code[..end])
}

/// The category of a serde_json error, without its position or the text it quotes.
trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "read error",
            serde_json::error::Category::Syntax => "syntax error",
            serde_json::error::Category::Data => "unexpected value",
            serde_json::error::Category::Eof => "unexpected end",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, content_type: &str, body: &str) -> Outcome {
        let mut o = if (200..300).contains(&status) {
            Outcome::success()
        } else {
            Outcome::failure(prober_core::Reason::Status, "status")
        };
        o.http_status = Some(status);
        o.headers = vec![("Content-Type".into(), content_type.into())];
        o.output = body.as_bytes().to_vec();
        o.output_total = body.len() as u64;
        o
    }

    #[test]
    fn json_and_form_answers() {
        let j = answer(
            200,
            "application/json",
            r#"{"access_token":"abc","token_type":"bearer","x":[[1]]}"#,
        );
        assert_eq!(read_token(&j).unwrap().expose(), "Bearer abc");
        let f = answer(200, "text/plain; charset=utf-8", "access_token=a+b%21&token_type=mac");
        assert_eq!(read_token(&f).unwrap().expose(), "MAC a b!");
        let odd = answer(200, "application/json", r#"{"access_token":"t","token_type":"DPoP"}"#);
        assert_eq!(read_token(&odd).unwrap().expose(), "DPoP t");
        let spaced = answer(200, "application/json", r#"{"access_token":"t","token_type":" "}"#);
        assert!(read_token(&spaced).is_err());
    }

    #[test]
    fn refusals_say_why_and_quote_no_body() {
        let e = read_token(&answer(
            401,
            "application/json",
            r#"{"error":"invalid_client","secret":"s3"}"#,
        ))
        .unwrap_err();
        assert_eq!(e.1, "oauth2: cannot fetch token: status 401, error \"invalid_client\"");
        let e = read_token(&answer(200, "application/json", r#"{"error":"nope"}"#)).unwrap_err();
        assert!(e.1.contains("error \"nope\""), "{}", e.1);
        let e =
            read_token(&answer(200, "application/json", r#"{"token_type":"bearer"}"#)).unwrap_err();
        assert_eq!(e.1, "oauth2: server response missing access_token");
        let e = read_token(&answer(200, "application/json", r#"{"access_token":"a\r\nX: y"}"#))
            .unwrap_err();
        assert!(e.1.contains("cannot be sent in a header"), "{}", e.1);
        let e =
            read_token(&answer(200, "application/json", "{\"access_token\": s3cret")).unwrap_err();
        assert!(!e.1.contains("s3cret"), "{}", e.1);
        let e = read_token(&answer(500, "text/html", "<html>s3cret</html>")).unwrap_err();
        assert_eq!(e.1, "oauth2: cannot fetch token: status 500");
    }

    /// Nesting deeper than serde_json's limit is an error, not a deep recursion.
    #[test]
    fn deep_json_is_refused() {
        let deep = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
        let e = read_token(&answer(200, "application/json", &deep)).unwrap_err();
        assert!(e.1.contains("cannot parse json"), "{}", e.1);
        let mut long = answer(200, "application/json", "{}");
        long.output_total = MAX_TOKEN_RESPONSE as u64 + 1;
        assert!(read_token(&long).unwrap_err().1.contains("longer than"));
    }
}
