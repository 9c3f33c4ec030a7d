//! blackbox_exporter's `preferred_ip_protocol` and `ip_protocol_fallback` as the library's
//! address families, for every prober that resolves its target.

use prober_core::IpFamily;

/// blackbox_exporter's `preferred_ip_protocol` (default `ip6`) and `ip_protocol_fallback`
/// (default true) as the library's address family: with the fallback, the preferred family's
/// addresses when the target has any, else the other's (its `chooseProtocol`); without it,
/// the preferred family's only.
pub(crate) fn ip_family(
    p: Option<&str>,
    fallback: Option<bool>,
    prober: &str,
) -> Result<IpFamily, String> {
    let v4 = match p {
        None | Some("ip6" | "") => false,
        Some("ip4") => true,
        Some(other) => {
            return Err(format!("{prober}.preferred_ip_protocol: {other:?} is not ip4 or ip6"));
        }
    };
    Ok(match (v4, fallback.unwrap_or(true)) {
        (true, true) => IpFamily::PreferV4,
        (true, false) => IpFamily::V4,
        (false, true) => IpFamily::PreferV6,
        (false, false) => IpFamily::V6,
    })
}

/// The family a gRPC module connects over. blackbox_exporter v0.25.0's `ProbeGRPC` calls
/// `chooseProtocol` only for its metrics and to fail a target it cannot resolve, then dials
/// `host:port` by name, so grpc-go's dialer tries the addresses of both families: with the
/// fallback (the default) that is [`IpFamily::Any`]. Without it, the family stays required,
/// which keeps blackbox's failure for a name with no address of that family (reason `dns`,
/// nothing dialed) and does not try the other family's addresses of a name that has both:
/// blackbox_exporter does, against its own documentation of the option (one family only),
/// and a module meant to test one family must not pass over the other (docs/cli.md).
pub(crate) fn grpc_family(family: IpFamily) -> IpFamily {
    match family {
        IpFamily::PreferV4 | IpFamily::PreferV6 => IpFamily::Any,
        strict => strict,
    }
}
