//! blackbox_exporter's checks of a response (`prober/dns.go`: `validRcode`, `validRRs`), over
//! records printed as miekg/dns prints them ([`crate::render`]).

use prober_core::{DnsRrChecks, Pattern, SpecError};

use crate::render::record_text;
use crate::wire::Record;

/// miekg/dns's `RcodeToString` (v1.1.68); 16 is BADSIG, also known as BADVERS.
const RCODE_NAMES: &[(u16, &str)] = &[
    (0, "NOERROR"),
    (1, "FORMERR"),
    (2, "SERVFAIL"),
    (3, "NXDOMAIN"),
    (4, "NOTIMP"),
    (5, "REFUSED"),
    (6, "YXDOMAIN"),
    (7, "YXRRSET"),
    (8, "NXRRSET"),
    (9, "NOTAUTH"),
    (10, "NOTZONE"),
    (11, "DSOTYPENI"),
    (16, "BADSIG"),
    (17, "BADKEY"),
    (18, "BADTIME"),
    (19, "BADMODE"),
    (20, "BADNAME"),
    (21, "BADALG"),
    (22, "BADTRUNC"),
    (23, "BADCOOKIE"),
];

/// The rcode for a name as `valid_rcodes` spells it (miekg/dns's `StringToRcode`: the names
/// above and `NOTIMPL`; exact case).
pub fn rcode_from_name(name: &str) -> Option<u16> {
    if name == "NOTIMPL" {
        return Some(4);
    }
    RCODE_NAMES.iter().find(|&&(_, n)| n == name).map(|&(c, _)| c)
}

/// The rcode's name, or its number.
pub fn rcode_name(rcode: u16) -> String {
    match RCODE_NAMES.iter().find(|&&(c, _)| c == rcode) {
        Some(&(_, n)) => n.to_string(),
        None => rcode.to_string(),
    }
}

/// One section's checks: blackbox's `DNSRRValidator` (prober-core's [`DnsRrChecks`], where
/// a spec holds them); [`check_rrs`] applies them.
pub type RrValidator = DnsRrChecks;

/// Compiles each expression of `sources` (prober-core's [`Pattern`]: the `regex` crate's
/// syntax with ASCII classes, as every other expectation of libprober).
///
/// # Errors
///
/// The first expression that does not compile, or that is empty.
pub fn patterns<S: AsRef<str>>(sources: &[S]) -> Result<Vec<Pattern>, SpecError> {
    sources.iter().map(|s| Pattern::new(s.as_ref())).collect()
}

/// `validRRs`: `Err` with what failed, in blackbox's words, for the first failing check of
/// `v` over `records`.
///
/// # Errors
///
/// The failed check, with the expression and the record that failed it.
pub fn check_rrs(v: &RrValidator, records: &[Record]) -> Result<(), String> {
    if v.is_empty() {
        return Ok(());
    }
    if records.is_empty() && !v.fail_if_not_matches.is_empty() {
        return Err("fail_if_not_matches_regexp specified but no RRs returned".into());
    }
    if records.is_empty() && !v.fail_if_none_matches.is_empty() {
        return Err("fail_if_none_matches_regexp specified but no RRs returned".into());
    }
    let mut all_match = true;
    let mut any_match = false;
    for record in records {
        let text = record_text(record);
        let bytes = text.as_bytes();
        if let Some(p) = v.fail_if_matches.iter().find(|p| p.is_match(bytes)) {
            return Err(format!("at least one RR matched regexp {:?}: {text:?}", p.as_str()));
        }
        if v.fail_if_all_match.iter().any(|p| !p.is_match(bytes)) {
            all_match = false;
        }
        if let Some(p) = v.fail_if_not_matches.iter().find(|p| !p.is_match(bytes)) {
            return Err(format!("at least one RR did not match regexp {:?}: {text:?}", p.as_str()));
        }
        if v.fail_if_none_matches.iter().any(|p| p.is_match(bytes)) {
            any_match = true;
        }
    }
    if !v.fail_if_all_match.is_empty() && !all_match {
        return Err("not all RRs matched regexp".into());
    }
    if !v.fail_if_none_matches.is_empty() && !any_match {
        return Err("none of the RRs matched any regexp".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::Name;
    use crate::wire::RData;

    fn a(last: u8) -> Record {
        Record {
            name: Name::from_text("x.test").unwrap(),
            rtype: 1,
            class: 1,
            ttl: 60,
            data: RData::A([192, 0, 2, last].into()),
        }
    }

    fn v(field: usize, re: &str) -> RrValidator {
        let mut v = RrValidator::default();
        let list = patterns(&[re]).unwrap();
        match field {
            0 => v.fail_if_matches = list,
            1 => v.fail_if_all_match = list,
            2 => v.fail_if_not_matches = list,
            _ => v.fail_if_none_matches = list,
        }
        v
    }

    #[test]
    fn each_check_as_blackbox_applies_it() {
        let two = [a(1), a(2)];
        assert!(check_rrs(&v(0, r"192\.0\.2\.2$"), &two).is_err());
        assert!(check_rrs(&v(0, r"10\."), &two).is_ok());
        assert!(check_rrs(&v(1, r"\.1$"), &two).is_err());
        assert!(check_rrs(&v(1, r"^x\.test\.\t60\tIN\tA\t"), &two).is_ok());
        assert!(check_rrs(&v(2, r"\.1$"), &two).is_err());
        assert!(check_rrs(&v(3, r"\.2$"), &two).is_ok());
        assert!(check_rrs(&v(3, r"\.3$"), &two).is_err());
        // No records: the two "must match" checks fail, the others pass.
        assert!(check_rrs(&v(0, "x"), &[]).is_ok());
        assert!(check_rrs(&v(1, "x"), &[]).is_ok());
        assert!(check_rrs(&v(2, "x"), &[]).is_err());
        assert!(check_rrs(&v(3, "x"), &[]).is_err());
    }

    #[test]
    fn rcode_names_are_miekg_dns_names() {
        assert_eq!(rcode_from_name("NXDOMAIN"), Some(3));
        assert_eq!(rcode_from_name("NOTIMPL"), Some(4));
        assert_eq!(rcode_from_name("nxdomain"), None);
        assert_eq!(rcode_name(5), "REFUSED");
        assert_eq!(rcode_name(12), "12");
    }
}
