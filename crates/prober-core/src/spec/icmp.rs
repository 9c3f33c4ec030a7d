//! ICMP echo probes' constructors (the options are `crate::icmp`'s).

use super::{ProbeKind, ProbeSpec, SpecError};
use crate::icmp::IcmpSpec;

impl ProbeSpec {
    /// An ICMP echo probe of `host` (a name, or an IP literal with IPv6 unbracketed): one
    /// echo, as blackbox_exporter's icmp prober sends it. [`ProbeSpec::icmp_with`] takes every
    /// option.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidHost`].
    pub fn icmp(host: &str) -> Result<ProbeSpec, SpecError> {
        ProbeSpec::icmp_with(IcmpSpec::new(host))
    }

    /// An ICMP echo probe with the options of `spec`.
    ///
    /// # Errors
    ///
    /// As [`IcmpSpec::validate`].
    pub fn icmp_with(mut spec: IcmpSpec) -> Result<ProbeSpec, SpecError> {
        spec.host = crate::target::unbracket(&spec.host).to_string();
        spec.validate()?;
        Ok(ProbeSpec::with_kind(ProbeKind::Icmp(spec)))
    }
}
