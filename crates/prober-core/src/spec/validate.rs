//! The checks of spec fields shared by constructors, setters and `ProbeSpec::validate`.

use std::time::Duration;

use super::error::SpecError;

/// The longest timeout accepted: longer "timeouts" are almost always unit mistakes.
const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

pub(crate) fn validate_timeout(timeout: Duration) -> Result<(), SpecError> {
    if timeout < Duration::from_millis(1) || timeout > MAX_TIMEOUT {
        return Err(SpecError::InvalidTimeout(timeout));
    }
    Ok(())
}

/// Checks a host to connect to: a registered name (labels of letters, digits, `-` and `_`,
/// dots between them, an optional final dot, at most 253 characters, the last label not all
/// digits), an IPv4 literal, or an IPv6 literal without brackets (with an optional `%zone`).
/// ASCII only; no port, path, query, user information or white space can pass, so a host can
/// never change which port or resource a probe reaches.
///
/// # Errors
///
/// [`SpecError::InvalidHost`] with the host as given.
pub fn validate_host(host: &str) -> Result<(), SpecError> {
    if is_host(host) { Ok(()) } else { Err(SpecError::InvalidHost(host.to_string())) }
}

pub(crate) fn is_host(host: &str) -> bool {
    if host.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    if let Some((ip, zone)) = host.split_once('%') {
        return ip.parse::<std::net::Ipv6Addr>().is_ok()
            && !zone.is_empty()
            && zone.len() <= 64
            && zone.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    }
    is_registered_name(host)
}

/// LDH labels (plus `_`, as service names use it), and not all digits at the end: a host
/// name (TLS server names take these and IP literals).
pub(crate) fn is_registered_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
        // `127.1` or `2130706433` would be read as IPv4 by the resolver: not a name.
        && !name.rsplit('.').next().is_some_and(|tld| tld.chars().all(|c| c.is_ascii_digit()))
}

/// Checks the value of a user `Host` header: a host as [`validate_host`] allows, with an
/// optional `:port` (1 to 65535); IPv6 in brackets when a port follows (`[::1]:8080`). Spaces
/// and tabs around it are ignored, as the request does; an empty value asks for no virtual
/// host and is allowed.
pub(crate) fn validate_host_header(value: &str) -> Result<(), SpecError> {
    let v = value.trim_matches(|c| c == ' ' || c == '\t');
    if v.is_empty() || is_host_port(v) {
        Ok(())
    } else {
        Err(SpecError::InvalidHostHeader(value.to_string()))
    }
}

pub(crate) fn is_host_port(v: &str) -> bool {
    let port_ok = |p: &str| {
        !p.is_empty()
            && p.len() <= 5
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u32>().is_ok_and(|n| (1..=65535).contains(&n))
    };
    if let Some(rest) = v.strip_prefix('[') {
        let Some((ip, after)) = rest.split_once(']') else { return false };
        let ip_ok = ip.parse::<std::net::Ipv6Addr>().is_ok();
        return ip_ok && (after.is_empty() || after.strip_prefix(':').is_some_and(port_ok));
    }
    if v.parse::<std::net::Ipv6Addr>().is_ok() {
        return true;
    }
    match v.rsplit_once(':') {
        Some((host, port)) => {
            !host.contains(':')
                && (host.parse::<std::net::Ipv4Addr>().is_ok() || is_registered_name(host))
                && port_ok(port)
        }
        None => v.parse::<std::net::Ipv4Addr>().is_ok() || is_registered_name(v),
    }
}

pub(crate) fn validate_port(port: i64) -> Result<u16, SpecError> {
    if (1..=65535).contains(&port) { Ok(port as u16) } else { Err(SpecError::InvalidPort(port)) }
}

/// Header names must be RFC 9110 tokens; values must not contain CR, LF, NUL or other controls
/// (tab is allowed), so no request can be injected through a header. A `Host` value must be a
/// host with an optional port (see `validate_host`): it names the virtual host, and anything
/// else (`a b`, `evil/x?y#z`, `user@evil`, non-ASCII) would go on the wire as written.
///
/// # Errors
///
/// [`SpecError::InvalidHeaderName`], [`SpecError::InvalidHeaderValue`], or
/// [`SpecError::InvalidHostHeader`] for a `Host` value that is not `host[:port]`.
pub fn validate_header(name: &str, value: &str) -> Result<(), SpecError> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(tchar) {
        return Err(SpecError::InvalidHeaderName(name.to_string()));
    }
    if value.chars().any(|c| (c.is_control() && c != '\t') || c == '\u{7f}') {
        return Err(SpecError::InvalidHeaderValue(name.to_string()));
    }
    if name.eq_ignore_ascii_case("host") {
        validate_host_header(value)?;
    }
    Ok(())
}

pub(crate) fn validate_argv(argv: &[String]) -> Result<(), SpecError> {
    if argv.is_empty() || argv[0].is_empty() {
        return Err(SpecError::EmptyArgv);
    }
    match argv.iter().position(|a| a.contains('\0')) {
        Some(i) => Err(SpecError::InvalidArgument(i)),
        None => Ok(()),
    }
}

pub(crate) fn validate_env(name: &str, value: &str) -> Result<(), SpecError> {
    if name.is_empty() || name.contains('=') || name.contains('\0') {
        return Err(SpecError::InvalidEnvName(name.to_string()));
    }
    if value.contains('\0') {
        return Err(SpecError::InvalidEnvValue(name.to_string()));
    }
    Ok(())
}
