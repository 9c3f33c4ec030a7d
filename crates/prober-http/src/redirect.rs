//! What to do with a response: follow it as a redirect, or take it as the final response.
//!
//! The kubelet's `RedirectChecker` on top of Go's client:
//! - 301, 302, 303, 307 and 308 with a non-empty `Location` are redirects; 300, 304, 305, 306
//!   and a 3xx without `Location` are final responses (so a Warning).
//! - `Location` is resolved against the current URL; one that does not parse is an error:
//!   `Get "<current url>": failed to parse Location header "<loc>": <why>`.
//! - The policy compares the target with the *original* request: [`RedirectPolicy::SameHost`]
//!   the host name only, as written (port and scheme may change, and `LOCALHOST`, `localhost.`
//!   or `[0:0:0:0:0:0:0:1]` are other hosts than `localhost` and `[::1]`, as in the kubelet),
//!   [`RedirectPolicy::SameOrigin`] scheme, host and port; [`RedirectPolicy::None`] never
//!   follows (and does not look at `Location` at all). A target the policy refuses makes the 3xx
//!   the final response.
//! - As the kubelet's checker counts (it refuses when the requests made so far reach
//!   [`MAX_REDIRECTS`]), at most 9 redirects are followed, so at most 10 requests are sent; the
//!   10th redirect is an error, `Get "<Location>": stopped after 10 redirects`, with the raw
//!   `Location` value, as Go's client writes it. [`Redirects::with_limit`] follows another
//!   number (`HttpSpec::max_redirects`; blackbox_exporter's checker follows 10), the message
//!   counting the requests as Go's does.
//! - A user `Host` override is carried over a redirect only when `Location` is relative (no
//!   scheme and not `//host`); the other user headers are sent on every hop. Each redirected
//!   request carries `Referer: <previous url>` unless it goes from https to http (Go).
//! - The TLS options' `server_name` goes only to hops to the original host (any scheme, port or
//!   form of `Location`); a hop to another host sends and verifies that host's name (the
//!   probe's `endpoint`).
//! - The method, as Go's client redirects: 301, 302 and 303 turn any method but `GET` and `HEAD`
//!   into a `GET` without body ([`Hop::as_get`]); 307 and 308 keep the method and the body.
//!   Messages start with the first request's method as Go's `url.Error` writes it (`Get`,
//!   `Post`, `Head`).

use prober_core::{RedirectPolicy, Scheme, Url, UrlError};

/// How many redirects are followed at most (Go's client and the kubelet's checker).
pub const MAX_REDIRECTS: u32 = 10;

/// The decision about one response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Not a redirect that is followed: this is the final response.
    Final,
    /// Fetch `url` next.
    Follow(Hop),
    /// `Location` does not parse (reason Protocol).
    BadLocation(String),
    /// An 11th redirect (reason TooManyRedirects).
    TooMany(String),
}

/// The next request of a followed redirect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The URL to request next.
    pub url: Url,
    /// The virtual host to send, when it survives this redirect.
    pub host_override: Option<String>,
    /// `Referer` for the next request.
    pub referer: Option<String>,
    /// The next request is a `GET` without body: a 301, 302 or 303 answered a method other
    /// than `GET` and `HEAD` (the probe keeps it so for the later hops of the run).
    pub as_get: bool,
    /// This redirect's `Location`, or one before it in the run, named a host (an absolute URL
    /// or `//host`): Go's client dials it by name, where blackbox_exporter dialed the target's
    /// chosen address (`HttpSpec::redirects_dial_by_name`).
    pub by_name: bool,
}

/// The method as Go's `url.Error` names the operation: the first letter kept, the rest in lower
/// case (`Get`, `Post`, `Options`).
pub fn error_op(method: &str) -> String {
    let mut chars = method.chars();
    chars.next().map_or_else(String::new, |first| {
        let mut op = first.to_string();
        op.push_str(&chars.as_str().to_ascii_lowercase());
        op
    })
}

/// Follows the redirects of one probe run.
#[derive(Clone, Debug)]
pub struct Redirects {
    policy: RedirectPolicy,
    followed: u32,
    /// Redirects followed at most.
    max: u32,
    /// A followed `Location` has named a host ([`Hop::by_name`]).
    named: bool,
}

/// Whether `status` may be a redirect (given a `Location`).
pub fn is_redirect_status(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

impl Redirects {
    /// A run's redirect state under `policy`, none followed yet.
    pub fn new(policy: RedirectPolicy) -> Redirects {
        Redirects::with_limit(policy, MAX_REDIRECTS - 1)
    }

    /// A run's redirect state under `policy` that follows at most `max` redirects (the
    /// kubelet's is 9, see [`Redirects::new`]).
    pub fn with_limit(policy: RedirectPolicy, max: u32) -> Redirects {
        Redirects { policy, followed: 0, max, named: false }
    }

    /// Redirects followed so far.
    pub fn followed(&self) -> u32 {
        self.followed
    }

    /// Decides about a response with `status` and `location` to a request for `current`, which
    /// was sent with `host_override`, in a run that started at `original` with `method` (Go
    /// names the first request's method in errors).
    pub fn decide(
        &mut self,
        original: &Url,
        current: &Url,
        host_override: Option<&str>,
        method: &str,
        status: u16,
        location: Option<&str>,
    ) -> Decision {
        let Some(loc) = location.filter(|l| !l.is_empty()) else {
            return Decision::Final;
        };
        if !is_redirect_status(status) || self.policy == RedirectPolicy::None {
            return Decision::Final;
        }
        let target = match current.join(loc) {
            Ok(u) => u,
            // Go parses any scheme, lets the redirect checker decide, and only the transport
            // refuses it: another host is a Warning, the same host an error naming the scheme.
            Err(UrlError::UnsupportedScheme(scheme)) => {
                let host = loc.split_once("://").map_or("", |(_, rest)| {
                    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
                    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                    match host_port.strip_prefix('[') {
                        Some(v6) => v6.split(']').next().unwrap_or(v6),
                        None => host_port.rsplit_once(':').map_or(host_port, |(h, _)| h),
                    }
                });
                // Only the same host under the same-host policy, or any host under any-host,
                // gets that far; the other policies refuse a change of scheme, which makes the
                // 3xx the final response.
                let reaches = match self.policy {
                    RedirectPolicy::SameHost => host == original.host_text(),
                    RedirectPolicy::AnyHost => true,
                    _ => false,
                };
                if !reaches {
                    return Decision::Final;
                }
                return Decision::BadLocation(format!(
                    "{} {loc:?}: unsupported protocol scheme {scheme:?}",
                    error_op(method)
                ));
            }
            Err(e) => {
                return Decision::BadLocation(format!(
                    "{} \"{current}\": failed to parse Location header {loc:?}: {e}",
                    error_op(method)
                ));
            }
        };
        let allowed = match self.policy {
            // The kubelet compares `URL.Hostname()` as text: `LOCALHOST` is not `localhost`.
            RedirectPolicy::SameHost => target.host_text() == original.host_text(),
            RedirectPolicy::SameOrigin => target.same_origin(original),
            RedirectPolicy::AnyHost => true,
            RedirectPolicy::None => false,
        };
        if !allowed {
            return Decision::Final;
        }
        // The kubelet's RedirectChecker refuses when `len(via) >= 10`, `via` being the requests
        // made so far: at most 9 redirects are followed and 10 requests sent. Go's client puts
        // the raw Location in that error, not the resolved URL.
        if self.followed >= self.max {
            return Decision::TooMany(format!(
                "{} {loc:?}: stopped after {} redirects",
                error_op(method),
                self.max.saturating_add(1)
            ));
        }
        self.followed += 1;
        let relative = !has_scheme(loc) && !loc.trim_start().starts_with("//");
        let host_override = if relative { host_override.map(str::to_string) } else { None };
        self.named |= !relative;
        let referer = (!(current.scheme() == Scheme::Https && target.scheme() == Scheme::Http))
            .then(|| current.to_string());
        // Go's `redirectBehavior`: 301, 302 and 303 keep only GET and HEAD.
        let as_get = matches!(status, 301..=303) && method != "GET" && method != "HEAD";
        Decision::Follow(Hop { url: target, host_override, referer, as_get, by_name: self.named })
    }
}

/// `scheme:` at the start of a reference (RFC 3986 section 3.1).
fn has_scheme(reference: &str) -> bool {
    let reference = reference.trim_start();
    match reference.find(':') {
        Some(colon) => {
            let s = &reference[..colon];
            s.starts_with(|c: char| c.is_ascii_alphabetic())
                && s.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn follow(d: Decision) -> Hop {
        match d {
            Decision::Follow(h) => h,
            other => panic!("expected Follow, got {other:?}"),
        }
    }

    /// A hop is dialed by name once a `Location` of the run named a host; relative ones before
    /// it stay on the target's address.
    #[test]
    fn hops_by_name_from_the_first_named_location() {
        let first = url("http://127.0.0.1:8080/");
        let mut r = Redirects::new(RedirectPolicy::AnyHost);
        let hop = follow(r.decide(&first, &first, None, "GET", 302, Some("/a")));
        assert!(!hop.by_name);
        let hop = follow(r.decide(&first, &hop.url, None, "GET", 302, Some("//localhost:8080/b")));
        assert!(hop.by_name);
        let hop = follow(r.decide(&first, &hop.url, None, "GET", 302, Some("/c")));
        assert!(hop.by_name, "relative to a host dialed by name");
        let mut r = Redirects::new(RedirectPolicy::AnyHost);
        let hop = follow(r.decide(&first, &first, None, "GET", 301, Some("https://127.0.0.1/")));
        assert!(hop.by_name);
    }

    #[test]
    fn statuses() {
        let cur = url("http://127.0.0.1:8080/");
        for code in [301, 302, 303, 307, 308] {
            let mut r = Redirects::new(RedirectPolicy::SameHost);
            let hop = follow(r.decide(&cur, &cur, None, "GET", code, Some("/new")));
            assert_eq!(hop.url.to_string(), "http://127.0.0.1:8080/new");
            assert_eq!(hop.referer.as_deref(), Some("http://127.0.0.1:8080/"));
        }
        for code in [200, 300, 304, 305, 306, 404, 500] {
            let mut r = Redirects::new(RedirectPolicy::SameHost);
            assert_eq!(
                r.decide(&cur, &cur, None, "GET", code, Some("/new")),
                Decision::Final,
                "{code}"
            );
        }
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        assert_eq!(r.decide(&cur, &cur, None, "GET", 308, None), Decision::Final);
        assert_eq!(r.decide(&cur, &cur, None, "GET", 302, Some("")), Decision::Final);
    }

    #[test]
    fn methods_as_go_redirects_them() {
        let cur = url("http://h/");
        for (method, code, as_get) in [
            ("POST", 301, true),
            ("POST", 302, true),
            ("PUT", 303, true),
            ("HEAD", 303, false),
            ("GET", 302, false),
            ("POST", 307, false),
            ("PATCH", 308, false),
        ] {
            let mut r = Redirects::new(RedirectPolicy::SameHost);
            let hop = follow(r.decide(&cur, &cur, None, method, code, Some("/n")));
            assert_eq!(hop.as_get, as_get, "{method} {code}");
        }
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        assert_eq!(
            r.decide(&cur, &cur, None, "POST", 302, Some("http://h:x/")),
            Decision::BadLocation(
                "Post \"http://h/\": failed to parse Location header \"http://h:x/\": invalid port \"x\" in URL (expected 1 to 65535)"
                    .into()
            )
        );
        assert_eq!(error_op("OPTIONS"), "Options");
        assert_eq!(error_op("m-search"), "m-search");
    }

    #[test]
    fn policies() {
        let orig = url("http://127.0.0.1:8080/");
        let other_port = Some("http://127.0.0.1:9090/success");
        let other_host = Some("http://localhost:8080/success");
        let https = Some("https://127.0.0.1:8443/");

        let mut r = Redirects::new(RedirectPolicy::SameHost);
        assert_eq!(follow(r.decide(&orig, &orig, None, "GET", 302, other_port)).url.port(), 9090);
        assert_eq!(
            follow(r.decide(&orig, &orig, None, "GET", 302, https)).url.scheme(),
            Scheme::Https
        );
        assert_eq!(r.decide(&orig, &orig, None, "GET", 302, other_host), Decision::Final);
        assert_eq!(
            r.decide(&orig, &orig, None, "GET", 302, Some("http://0.0.0.0/fail")),
            Decision::Final
        );

        let mut r = Redirects::new(RedirectPolicy::SameOrigin);
        assert_eq!(r.decide(&orig, &orig, None, "GET", 302, other_port), Decision::Final);
        assert_eq!(r.decide(&orig, &orig, None, "GET", 302, https), Decision::Final);
        assert_eq!(r.decide(&orig, &orig, None, "GET", 302, other_host), Decision::Final);
        assert!(matches!(
            r.decide(&orig, &orig, None, "GET", 302, Some("/x")),
            Decision::Follow(_)
        ));

        let mut r = Redirects::new(RedirectPolicy::None);
        assert_eq!(r.decide(&orig, &orig, None, "GET", 302, Some("/x")), Decision::Final);
        assert_eq!(r.decide(&orig, &orig, None, "GET", 302, Some("http://[::1")), Decision::Final);

        // The comparison is always with the original request, not the previous hop.
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        let cur = url("http://127.0.0.1:9090/a");
        assert_eq!(r.decide(&orig, &cur, None, "GET", 302, other_host), Decision::Final);
    }

    #[test]
    fn same_host_compares_the_text_as_the_kubelet_does() {
        for (orig, loc, followed) in [
            ("http://localhost:8080/", "http://LOCALHOST:8080/x", false),
            ("http://localhost:8080/", "http://localhost.:8080/x", false),
            ("http://[::1]:8080/", "http://[0:0:0:0:0:0:0:1]:8080/x", false),
            ("http://[::1]:8080/", "http://[::1]:9090/x", true),
            ("http://localhost:8080/", "http://u:p@localhost:8080/x", true),
            ("http://127.0.0.1:8080/", "http://127.0.0.1:08080/x", true),
        ] {
            let orig = url(orig);
            let mut r = Redirects::new(RedirectPolicy::SameHost);
            let d = r.decide(&orig, &orig, None, "GET", 302, Some(loc));
            assert_eq!(matches!(d, Decision::Follow(_)), followed, "{loc}: {d:?}");
        }
    }

    #[test]
    fn other_schemes_are_refused_by_the_transport_as_in_go() {
        let orig = url("http://127.0.0.1:8080/");
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        assert_eq!(
            r.decide(&orig, &orig, None, "GET", 302, Some("ftp://127.0.0.1/x")),
            Decision::BadLocation(
                r#"Get "ftp://127.0.0.1/x": unsupported protocol scheme "ftp""#.into()
            )
        );
        assert_eq!(
            r.decide(&orig, &orig, None, "GET", 302, Some("ftp://elsewhere/x")),
            Decision::Final
        );
        // Another policy refuses a change of scheme: the 3xx is the final response.
        let mut r = Redirects::new(RedirectPolicy::SameOrigin);
        assert_eq!(
            r.decide(&orig, &orig, None, "GET", 302, Some("ftp://127.0.0.1/x")),
            Decision::Final
        );
    }

    #[test]
    fn bad_location() {
        let cur = url("http://127.0.0.1:8080/bad-location");
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        assert_eq!(
            r.decide(&cur, &cur, None, "GET", 302, Some("http://[::1")),
            Decision::BadLocation(
                "Get \"http://127.0.0.1:8080/bad-location\": failed to parse Location header \
                 \"http://[::1\": invalid host \"[::1\" in URL"
                    .into()
            )
        );
    }

    #[test]
    fn nine_redirects_then_stop() {
        let orig = url("http://127.0.0.1:8080/loop");
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        for i in 0..MAX_REDIRECTS - 1 {
            assert!(
                matches!(
                    r.decide(&orig, &orig, None, "GET", 302, Some("/loop")),
                    Decision::Follow(_)
                ),
                "{i}"
            );
        }
        assert_eq!(r.followed(), 9);
        assert_eq!(
            r.decide(&orig, &orig, None, "GET", 302, Some("/loop")),
            Decision::TooMany("Get \"/loop\": stopped after 10 redirects".into())
        );
        // A refused target is still a final response, even past the limit.
        assert_eq!(
            r.decide(&orig, &orig, None, "GET", 302, Some("http://other/")),
            Decision::Final
        );
    }

    /// blackbox_exporter's checker follows 10 redirects (`len(via) > 10` refuses the 11th).
    #[test]
    fn another_limit_counts_the_same_way() {
        let orig = url("http://127.0.0.1:8080/loop");
        let mut r = Redirects::with_limit(RedirectPolicy::AnyHost, 10);
        for i in 0..10 {
            let d = r.decide(&orig, &orig, None, "GET", 302, Some("/loop"));
            assert!(matches!(d, Decision::Follow(_)), "{i}");
        }
        assert_eq!(
            r.decide(&orig, &orig, None, "GET", 302, Some("/loop")),
            Decision::TooMany("Get \"/loop\": stopped after 11 redirects".into())
        );
        let mut r = Redirects::with_limit(RedirectPolicy::AnyHost, 0);
        assert!(matches!(
            r.decide(&orig, &orig, None, "GET", 302, Some("/loop")),
            Decision::TooMany(_)
        ));
    }

    #[test]
    fn host_override_only_over_relative_locations() {
        let orig = url("http://127.0.0.1:8080/");
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        let h = Some("www.success.com");
        assert_eq!(
            follow(r.decide(&orig, &orig, h, "GET", 302, Some("/success")))
                .host_override
                .as_deref(),
            h
        );
        assert_eq!(
            follow(r.decide(&orig, &orig, h, "GET", 302, Some("success"))).host_override.as_deref(),
            h
        );
        assert_eq!(
            follow(r.decide(&orig, &orig, h, "GET", 302, Some("?q"))).host_override.as_deref(),
            h
        );
        assert_eq!(
            follow(r.decide(&orig, &orig, h, "GET", 302, Some("//127.0.0.1:1/x"))).host_override,
            None
        );
        assert_eq!(
            follow(r.decide(&orig, &orig, h, "GET", 302, Some("http://127.0.0.1:8080/x")))
                .host_override,
            None
        );
        assert_eq!(
            follow(r.decide(&orig, &orig, None, "GET", 302, Some("/x"))).host_override,
            None
        );
    }

    #[test]
    fn referer_not_sent_from_https_to_http() {
        let orig = url("https://h/");
        let mut r = Redirects::new(RedirectPolicy::SameHost);
        assert_eq!(
            follow(r.decide(&orig, &orig, None, "GET", 302, Some("http://h/"))).referer,
            None
        );
        assert_eq!(
            follow(r.decide(&orig, &orig, None, "GET", 302, Some("/x"))).referer.as_deref(),
            Some("https://h/")
        );
    }
}
