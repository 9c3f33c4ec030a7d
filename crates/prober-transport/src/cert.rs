//! When a certificate expires: a minimal DER walk to `tbsCertificate.validity.notAfter`
//! (RFC 5280 section 4.1), so a host can warn before a probed service's certificate runs out.
//!
//! ```text
//! Certificate ::= SEQUENCE { tbsCertificate SEQUENCE {
//!     [0] EXPLICIT version OPTIONAL, serialNumber INTEGER, signature AlgorithmIdentifier,
//!     issuer Name, validity SEQUENCE { notBefore Time, notAfter Time }, ... }, ... }
//! Time ::= UTCTime (YYMMDDHHMMSSZ, 1950..2049) | GeneralizedTime (YYYYMMDDHHMMSSZ)
//! ```
//!
//! Only what is needed is parsed; anything unexpected gives `None`, never a panic.

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const VERSION: u8 = 0xa0;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// The `notAfter` time of a DER certificate, in seconds since the Unix epoch.
pub fn not_after(der: &[u8]) -> Option<i64> {
    validity(der).map(|(_, after)| after)
}

/// The `notBefore` and `notAfter` times of a DER certificate, in seconds since the Unix epoch.
pub fn validity(der: &[u8]) -> Option<(i64, i64)> {
    let (cert, _) = element(der, SEQUENCE)?;
    let (tbs, _) = element(cert, SEQUENCE)?;
    let mut rest = tbs;
    if rest.first() == Some(&VERSION) {
        rest = any(rest)?.1;
    }
    rest = element(rest, INTEGER)?.1; // serialNumber
    rest = element(rest, SEQUENCE)?.1; // signature
    rest = element(rest, SEQUENCE)?.1; // issuer
    let (validity, _) = element(rest, SEQUENCE)?;
    let (before, after_not_before) = time(validity)?;
    let (after, _) = time(after_not_before)?;
    Some((before, after))
}

/// One `Time` element and what follows it. The contents are bytes from the peer: parsed as
/// bytes, never as `&str` (slicing text at byte offsets panics inside a multi-byte character).
fn time(input: &[u8]) -> Option<(i64, &[u8])> {
    let (tag, value, rest) = tlv(input)?;
    let t = match tag {
        UTC_TIME => parse_utc_time(value),
        GENERALIZED_TIME => parse_generalized_time(value),
        _ => None,
    }?;
    Some((t, rest))
}

/// One element with `tag`: its contents and what follows it.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (t, value, rest) = tlv(input)?;
    (t == tag).then_some((value, rest))
}

/// One element of any tag.
fn any(input: &[u8]) -> Option<(&[u8], &[u8])> {
    let (_, value, rest) = tlv(input)?;
    Some((value, rest))
}

/// Tag, contents and rest. Single-byte tags and definite lengths only (DER).
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    if tag & 0x1f == 0x1f {
        return None; // high tag numbers never occur on this path
    }
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None; // indefinite length (BER) or absurd
        }
        let len = rest[..n].iter().fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        rest = &rest[n..];
        len
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

/// `YYMMDDHHMMSSZ` (also without seconds); years 50..99 are 19xx, 00..49 are 20xx (RFC 5280).
fn parse_utc_time(s: &[u8]) -> Option<i64> {
    let body = s.strip_suffix(b"Z")?;
    if !matches!(body.len(), 10 | 12) {
        return None;
    }
    let yy = digits(&body[0..2])?;
    let year = if yy >= 50 { 1900 + yy } else { 2000 + yy };
    civil_seconds(year, &body[2..])
}

/// `YYYYMMDDHHMMSS[.fff]Z`; fractional seconds are dropped.
fn parse_generalized_time(s: &[u8]) -> Option<i64> {
    let body = s.strip_suffix(b"Z")?;
    let body = match body.iter().position(|&b| b == b'.') {
        Some(dot) => {
            let frac = &body[dot + 1..];
            if frac.is_empty() || !frac.iter().all(u8::is_ascii_digit) {
                return None;
            }
            &body[..dot]
        }
        None => body,
    };
    if body.len() != 14 {
        return None;
    }
    civil_seconds(digits(&body[0..4])?, &body[4..])
}

/// `MMDDHHMM[SS]` of `year` as seconds since the epoch (`rest` is 8 or 10 bytes long).
fn civil_seconds(year: i64, rest: &[u8]) -> Option<i64> {
    if !matches!(rest.len(), 8 | 10) {
        return None;
    }
    let month = digits(&rest[0..2])?;
    let day = digits(&rest[2..4])?;
    let hour = digits(&rest[4..6])?;
    let minute = digits(&rest[6..8])?;
    let second = if rest.len() == 10 { digits(&rest[8..10])? } else { 0 };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// A run of ASCII digits (at most 4 here) as a number; anything else is `None`.
fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 4 {
        return None;
    }
    let mut n = 0i64;
    for &b in s {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + i64::from(b - b'0');
    }
    Some(n)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert_expiring(year: i32, month: u8, day: u8) -> Vec<u8> {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.not_before = rcgen::date_time_ymd(1999, 1, 1);
        params.not_after = rcgen::date_time_ymd(year, month, day);
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn not_after_of_generated_certificates() {
        // UTCTime (before 2050) and GeneralizedTime (from 2050) encodings.
        assert_eq!(not_after(&cert_expiring(2031, 2, 3)), Some(1_927_843_200));
        assert_eq!(not_after(&cert_expiring(2051, 6, 7)), Some(2_569_708_800));
        assert_eq!(not_after(&cert_expiring(1999, 12, 31)), Some(946_598_400));
    }

    #[test]
    fn times() {
        assert_eq!(parse_utc_time(b"700101000000Z"), Some(0));
        assert_eq!(parse_utc_time(b"491231235959Z"), Some(2_524_607_999));
        assert_eq!(parse_utc_time(b"991231000000Z"), Some(946_598_400));
        assert_eq!(parse_utc_time(b"9912310000Z"), Some(946_598_400));
        assert_eq!(parse_generalized_time(b"20000229120001Z"), Some(951_825_601));
        assert_eq!(parse_generalized_time(b"20000229120001.5Z"), Some(951_825_601));
        assert_eq!(parse_generalized_time(b"19691231235959Z"), Some(-1));
        for bad in ["", "Z", "700101000000", "701301000000Z", "700132000000Z", "7001010000+0Z"] {
            assert_eq!(parse_utc_time(bad.as_bytes()), None, "{bad:?}");
        }
        for bad in ["20010229000000Z", "20000229250000Z", "2000022912000Z", "20000229120001.Z"] {
            assert_eq!(parse_generalized_time(bad.as_bytes()), None, "{bad:?}");
        }
    }

    #[test]
    fn garbage_is_none() {
        let good = cert_expiring(2031, 2, 3);
        assert_eq!(not_after(&[]), None);
        assert_eq!(not_after(b"not a certificate"), None);
        for cut in [1, 2, 10, 40, 100, 200] {
            assert_eq!(not_after(&good[..cut.min(good.len() - 1)]), None, "cut at {cut}");
        }
        // Indefinite length.
        assert_eq!(not_after(&[0x30, 0x80, 0x00, 0x00]), None);
    }

    /// The certificate of `cert_expiring(2031, 2, 3)` with its `notAfter` contents (UTCTime
    /// `310203000000Z`) replaced by `value`, which must be as long; the DER framing stays valid.
    fn with_not_after(value: &[u8]) -> Vec<u8> {
        let mut der = cert_expiring(2031, 2, 3);
        let encoded = b"\x17\x0d310203000000Z";
        assert_eq!(value.len(), encoded.len() - 2);
        let at = der.windows(encoded.len()).position(|w| w == encoded).expect("notAfter") + 2;
        der[at..at + value.len()].copy_from_slice(value);
        der
    }

    #[test]
    fn non_ascii_times_are_none_not_a_panic() {
        assert_eq!(not_after(&with_not_after(b"310203000000Z")), Some(1_927_843_200));
        // Valid UTF-8 with a two-byte character where the year is: slicing that text at byte
        // offsets panicked ("byte index 2 is not a char boundary").
        assert_eq!(not_after(&with_not_after("3\u{e9}203000000Z".as_bytes())), None);
        assert_eq!(not_after(&with_not_after("\u{e9}\u{e9}03000000Z".as_bytes())), None);
        assert_eq!(not_after(&with_not_after("31\u{20ac}3000000Z".as_bytes())), None);
        // Not UTF-8 at all, and digits from other scripts.
        assert_eq!(not_after(&with_not_after(b"31\xff\xfe03000000Z")), None);
        assert_eq!(not_after(&with_not_after("31\u{663}03000000Z".as_bytes())), None);
        assert_eq!(parse_generalized_time("2031\u{e9}203000000Z".as_bytes()), None);
        assert_eq!(parse_generalized_time("20310203000000.\u{e9}Z".as_bytes()), None);
        assert_eq!(parse_utc_time(b"+1+2030000Z"), None);
    }
}
