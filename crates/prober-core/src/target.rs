//! Targets as they are written: `host:port`, `[ipv6]:port`, and a host alone with or without the
//! brackets of an IPv6 literal. One rule for every surface (`prober check`'s `tcp://` and
//! `grpc://` targets, `prober serve`'s `/probe?target=`, the Kubernetes translation's host
//! fields): Go's `net.SplitHostPort`, which blackbox_exporter's TCP and gRPC probers use and
//! whose refusals the kubelet's dialer shares, so that an unbracketed IPv6 address with a port
//! (`::1:80`) is refused everywhere rather than read as host `::1` by one surface.
//!
//! URLs are [`Url`](crate::Url)'s. Nothing here names `spec/`.

use std::fmt;

/// Why a text is not `host:port`, in the words of Go's `net.SplitHostPort`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostPortError {
    /// No `:port` (`127.0.0.1`, `[::1]`).
    MissingPort,
    /// A `[` without its `]` (`[::1:80`).
    MissingBracket,
    /// More than one `:` outside brackets: an IPv6 address without them (`::1:80`), or a
    /// bracketed one followed by more (`[::1]:80:90`).
    TooManyColons,
    /// A `[` where none may be (`a[b:80`, `[[::1]]:80`).
    UnexpectedOpen,
    /// A `]` where none may be (`a]:80`).
    UnexpectedClose,
}

impl fmt::Display for HostPortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostPortError::MissingPort => "missing port in address",
            HostPortError::MissingBracket => "missing ']' in address",
            HostPortError::TooManyColons => "too many colons in address",
            HostPortError::UnexpectedOpen => "unexpected '[' in address",
            HostPortError::UnexpectedClose => "unexpected ']' in address",
        })
    }
}

impl std::error::Error for HostPortError {}

/// `host:port` or `[host]:port` split as Go's `net.SplitHostPort` splits it: the host without
/// brackets and the port as written (either may be empty; checking them is the caller's, by
/// [`validate_host`](crate::validate_host) and its port range).
///
/// # Errors
///
/// A [`HostPortError`] for a text Go refuses, among them an IPv6 address without brackets.
pub fn split_host_port(text: &str) -> Result<(&str, &str), HostPortError> {
    let colon = text.rfind(':').ok_or(HostPortError::MissingPort)?;
    let (host, open_from, close_from) = if let Some(rest) = text.strip_prefix('[') {
        let end = rest.find(']').ok_or(HostPortError::MissingBracket)? + 1;
        match text.as_bytes().get(end + 1) {
            None => return Err(HostPortError::MissingPort),
            Some(b':') if end + 1 == colon => {}
            Some(b':') => return Err(HostPortError::TooManyColons),
            Some(_) => return Err(HostPortError::MissingPort),
        }
        (&text[1..end], 1, end + 1)
    } else {
        let host = &text[..colon];
        if host.contains(':') {
            return Err(HostPortError::TooManyColons);
        }
        (host, 0, 0)
    };
    if text[open_from..].contains('[') {
        return Err(HostPortError::UnexpectedOpen);
    }
    if text[close_from..].contains(']') {
        return Err(HostPortError::UnexpectedClose);
    }
    Ok((host, &text[colon + 1..]))
}

/// A host as written, without the brackets of an IPv6 literal (`[::1]` is `::1`); any other
/// text as it is (a lone bracket is left for the host check to refuse).
pub fn unbracket(host: &str) -> &str {
    host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use HostPortError::*;

    #[test]
    fn splits_as_go_net_split_host_port() {
        // Go's own table (net/ipsock_test.go, splitJoinTests and splitFailureTests), trimmed.
        for (text, host, port) in [
            ("localhost:http", "localhost", "http"),
            ("localhost:80", "localhost", "80"),
            ("127.0.0.1:80", "127.0.0.1", "80"),
            ("[::1]:80", "::1", "80"),
            ("[fe80::1%lo0]:80", "fe80::1%lo0", "80"),
            ("[localhost%lo0]:0", "localhost%lo0", "0"),
            (":80", "", "80"),
            ("[]:80", "", "80"),
            ("host:", "host", ""),
            ("[::1]:", "::1", ""),
        ] {
            assert_eq!(split_host_port(text), Ok((host, port)), "{text}");
        }
        for (text, err) in [
            ("127.0.0.1", MissingPort),
            ("[::1]", MissingPort),
            ("[fe80::1%lo0]", MissingPort),
            ("[::1]x80", MissingPort),
            ("[::1", MissingBracket),
            ("[::1:80", MissingBracket),
            // An IPv6 address without brackets: `prober check` always refused it, `prober serve`
            // read `::1:80` as host `::1`, port 80 until this parser; Go refuses it.
            ("::1:80", TooManyColons),
            ("fe80::1:80", TooManyColons),
            ("[::1]:80:90", TooManyColons),
            ("[foo:bar]baz:80", MissingPort),
            ("[foo]bar:baz", MissingPort),
            ("[foo]:[bar]baz", UnexpectedOpen),
            ("a[b:80", UnexpectedOpen),
            ("a]b:80", UnexpectedClose),
            ("[a]]:80", MissingPort),
            ("[a]:8]0", UnexpectedClose),
        ] {
            assert_eq!(split_host_port(text), Err(err), "{text}");
        }
        assert_eq!(TooManyColons.to_string(), "too many colons in address");
    }

    #[test]
    fn brackets_come_off_ip_literals_only_when_both_are_there() {
        assert_eq!(unbracket("[::1]"), "::1");
        assert_eq!(unbracket("::1"), "::1");
        assert_eq!(unbracket("[::1"), "[::1");
        assert_eq!(unbracket("example.com"), "example.com");
    }
}
