//! The address family setters of a spec (issue 28); the type is `family.rs`'s.

pub use crate::family::IpFamily;
use crate::spec::{ProbeKind, ProbeSpec, SpecError};

impl ProbeSpec {
    /// Lets an HTTP probe's redirects that name a host dial it by name over both families,
    /// the address family holding for the target and its relative redirects only
    /// ([`HttpSpec::redirects_dial_by_name`](crate::HttpSpec::redirects_dial_by_name):
    /// blackbox_exporter's HTTP prober). Off by default: every hop keeps the family.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a probe that is not HTTP.
    pub fn set_redirects_dial_by_name(&mut self, on: bool) -> Result<(), SpecError> {
        match &mut self.kind {
            ProbeKind::Http(h) => h.redirects_dial_by_name = on,
            _ => {
                return Err(SpecError::InvalidRequest(
                    "redirects dialed by name apply to HTTP probes only".into(),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IP_FAMILIES;
    use std::net::SocketAddr;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| SocketAddr::new(a.parse().unwrap(), 80)).collect()
    }

    #[test]
    fn select_follows_blackbox_rule() {
        let both = addrs(&["::1", "127.0.0.1"]);
        let v4 = addrs(&["127.0.0.1"]);
        let v6 = addrs(&["::1"]);
        assert_eq!(IpFamily::Any.select(&both), Ok(None));
        assert_eq!(IpFamily::V4.select(&both), Ok(Some(false)));
        assert_eq!(IpFamily::V6.select(&both), Ok(Some(true)));
        assert_eq!(IpFamily::V4.select(&v6), Err(false));
        assert_eq!(IpFamily::V6.select(&v4), Err(true));
        assert_eq!(IpFamily::PreferV4.select(&both), Ok(Some(false)));
        assert_eq!(IpFamily::PreferV6.select(&both), Ok(Some(true)));
        assert_eq!(IpFamily::PreferV4.select(&v6), Ok(Some(true)));
        assert_eq!(IpFamily::PreferV6.select(&v4), Ok(Some(false)));
        // IPv4-mapped IPv6 is IPv4, as Go's To4 says.
        assert_eq!(IpFamily::V4.select(&addrs(&["::ffff:127.0.0.1"])), Ok(Some(false)));
    }

    #[test]
    fn names_and_numbers_round_trip() {
        for (i, f) in IP_FAMILIES.into_iter().enumerate() {
            assert_eq!(f as u32, i as u32);
            assert_eq!(IpFamily::from_u32(i as u32), Some(f));
            assert_eq!(IpFamily::from_name(f.name()), Some(f));
        }
        assert_eq!(IpFamily::from_u32(5), None);
        assert_eq!(IpFamily::from_name("6"), Some(IpFamily::V6));
        for f in &IP_FAMILIES[1..] {
            assert_eq!(IpFamily::from_flag(f.flag()), Some(*f));
        }
        assert_eq!(IpFamily::from_flag("--ipv6"), Some(IpFamily::V6));
        assert_eq!(IpFamily::from_flag(IpFamily::Any.flag()), None);
    }
}
