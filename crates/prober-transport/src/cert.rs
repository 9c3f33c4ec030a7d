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

/// What blackbox_exporter labels a certificate with, read from its DER (the fingerprint needs
/// a hash, which the TLS provider has: see `tls`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Described {
    /// The serial number's magnitude, lower-case hex without leading zero bytes.
    pub serial: String,
    /// The issuer, as Go's `pkix.Name.String` writes it.
    pub issuer: String,
    /// The subject, as Go's `pkix.Name.String` writes it.
    pub subject: String,
    /// The DNS names of the subject alternative name extension.
    pub dns_names: Vec<String>,
}

/// Serial number, issuer, subject and DNS names of a DER certificate (`None` when it cannot
/// be read).
pub fn describe(der: &[u8]) -> Option<Described> {
    let (cert, _) = element(der, SEQUENCE)?;
    let (tbs, _) = element(cert, SEQUENCE)?;
    let mut rest = tbs;
    if rest.first() == Some(&VERSION) {
        rest = any(rest)?.1;
    }
    let (serial, r) = element(rest, INTEGER)?;
    rest = element(r, SEQUENCE)?.1; // signature
    let (issuer, r) = element(rest, SEQUENCE)?;
    rest = element(r, SEQUENCE)?.1; // validity
    let (subject, r) = element(rest, SEQUENCE)?;
    rest = element(r, SEQUENCE)?.1; // subjectPublicKeyInfo
    let mut dns_names = Vec::new();
    while !rest.is_empty() {
        let (tag, value, r) = tlv(rest)?;
        rest = r;
        if tag == EXTENSIONS {
            dns_names = san_dns_names(element(value, SEQUENCE)?.0)?;
        }
    }
    let first = serial.iter().position(|&b| b != 0).unwrap_or(serial.len());
    Some(Described {
        serial: hex(&serial[first..]),
        issuer: name_string(issuer)?,
        subject: name_string(subject)?,
        dns_names,
    })
}

const EXTENSIONS: u8 = 0xa3;
const OID: u8 = 0x06;
const SET: u8 = 0x31;
const OCTET_STRING: u8 = 0x04;
const BOOLEAN: u8 = 0x01;
/// `id-ce-subjectAltName`, 2.5.29.17.
const OID_SAN: &[u8] = &[0x55, 0x1d, 0x11];
/// `dNSName [2] IMPLICIT IA5String` of `GeneralName`.
const DNS_NAME: u8 = 0x82;

/// The DNS names of the subject alternative name extension among `extensions`.
fn san_dns_names(mut extensions: &[u8]) -> Option<Vec<String>> {
    let mut names = Vec::new();
    while !extensions.is_empty() {
        let (ext, r) = element(extensions, SEQUENCE)?;
        extensions = r;
        let (oid, mut ext) = element(ext, OID)?;
        if ext.first() == Some(&BOOLEAN) {
            ext = any(ext)?.1; // critical
        }
        if oid != OID_SAN {
            continue;
        }
        let (value, _) = element(ext, OCTET_STRING)?;
        let (mut general, _) = element(value, SEQUENCE)?;
        while !general.is_empty() {
            let (tag, v, r) = tlv(general)?;
            general = r;
            if tag == DNS_NAME {
                names.push(String::from_utf8_lossy(v).into_owned());
            }
        }
    }
    Some(names)
}

/// Go's names of the attribute types it parses into fields, in the order of
/// `pkix.Name.ToRDNSequence`: C, ST, L, STREET, POSTALCODE, O, OU, CN, SERIALNUMBER (the last
/// byte of the OID 2.5.4.x).
const NAME_ORDER: [(u8, &str); 9] = [
    (6, "C"),
    (8, "ST"),
    (7, "L"),
    (9, "STREET"),
    (17, "POSTALCODE"),
    (10, "O"),
    (11, "OU"),
    (3, "CN"),
    (5, "SERIALNUMBER"),
];

/// A `Name` (SEQUENCE OF SET OF AttributeTypeAndValue) as Go's `pkix.Name.String` writes it:
/// the attributes Go parses into fields in its fixed order (one RDN per type, several values
/// joined with `+`; one CN and one SERIALNUMBER, the last given), after them the others in
/// the order given, all reversed, joined with `,`; values escaped as RFC 2253; other types as
/// `OID=#` and the hex of the value's DER.
fn name_string(mut name: &[u8]) -> Option<String> {
    // (type: last OID byte for 2.5.4.x, or the OID; value)
    let mut known: Vec<(u8, String)> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    while !name.is_empty() {
        let (mut set, r) = element(name, SET)?;
        name = r;
        while !set.is_empty() {
            let (atv, r) = element(set, SEQUENCE)?;
            set = r;
            let (oid, value) = element(atv, OID)?;
            let (tag, content, _) = tlv(value)?;
            let standard = match oid {
                [0x55, 0x04, last] if NAME_ORDER.iter().any(|(n, _)| n == last) => Some(*last),
                _ => None,
            };
            match standard {
                Some(t) => known.push((t, string_value(tag, content)?)),
                None => {
                    let der = match string_value(tag, content) {
                        Some(text) => reencode(&text),
                        None => value[..value.len() - tlv(value)?.2.len()].to_vec(),
                    };
                    other.push(format!("{}=#{}", oid_string(oid)?, hex(&der)));
                }
            }
        }
    }
    let mut rdns: Vec<String> = other;
    for (t, label) in NAME_ORDER {
        let values: Vec<&String> = known.iter().filter(|(k, _)| *k == t).map(|(_, v)| v).collect();
        let values = match (t, values.last()) {
            (3 | 5, Some(last)) => vec![*last],
            _ => values,
        };
        if values.is_empty() {
            continue;
        }
        let rdn: Vec<String> = values.iter().map(|v| format!("{label}={}", escape(v))).collect();
        rdns.push(rdn.join("+"));
    }
    rdns.reverse();
    Some(rdns.join(","))
}

/// A directory string's text (PrintableString, UTF8String, IA5String, T61String,
/// NumericString, BMPString); `None` for other types.
fn string_value(tag: u8, content: &[u8]) -> Option<String> {
    match tag {
        0x0c | 0x13 | 0x16 | 0x12 => Some(String::from_utf8_lossy(content).into_owned()),
        // T61String: Go reads it as ISO 8859-1.
        0x14 => Some(content.iter().map(|&b| char::from(b)).collect()),
        0x1e => {
            let units: Vec<u16> =
                content.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
            Some(String::from_utf16_lossy(&units))
        }
        _ => None,
    }
}

/// A string as Go's `asn1.Marshal` encodes it: PrintableString when every byte is allowed
/// there, else UTF8String.
fn reencode(text: &str) -> Vec<u8> {
    let printable = text.bytes().all(|b| b.is_ascii_alphanumeric() || b" '()+,-./:=?".contains(&b));
    let mut der = vec![if printable { 0x13 } else { 0x0c }];
    let len = text.len();
    if len < 0x80 {
        der.push(len as u8);
    } else {
        let bytes: Vec<u8> = len.to_be_bytes().iter().copied().skip_while(|&b| b == 0).collect();
        der.push(0x80 | bytes.len() as u8);
        der.extend_from_slice(&bytes);
    }
    der.extend_from_slice(text.as_bytes());
    der
}

/// RFC 2253 escaping as Go's `RDNSequence.String` does it.
fn escape(v: &str) -> String {
    let last = v.chars().count().saturating_sub(1);
    let mut out = String::with_capacity(v.len());
    for (i, c) in v.chars().enumerate() {
        let escaped = match c {
            ',' | '+' | '"' | '\\' | '<' | '>' | ';' => true,
            ' ' => i == 0 || i == last,
            '#' => i == 0,
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A DER object identifier's contents in dotted form (`1.2.840.113549.1.9.1`).
fn oid_string(oid: &[u8]) -> Option<String> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut n: u64 = 0;
    for &b in oid {
        n = n.checked_mul(128)? | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            arcs.push(n);
            n = 0;
        }
    }
    let (&first, rest) = arcs.split_first()?;
    let (a, b) = match first {
        0..40 => (0, first),
        40..80 => (1, first - 40),
        _ => (2, first - 80),
    };
    let mut s = format!("{a}.{b}");
    for arc in rest {
        s.push_str(&format!(".{arc}"));
    }
    Some(s)
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
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
    Some(
        prober_core::days_from_civil(year, month, day) * 86_400
            + hour * 3600
            + minute * 60
            + second,
    )
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
    fn describe_as_go_writes_names() {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params =
            rcgen::CertificateParams::new(vec!["web.test".to_string(), "alt.test".to_string()])
                .unwrap();
        params.serial_number = Some(rcgen::SerialNumber::from_slice(&[0x00, 0x0a, 0xbc]));
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CountryName, "DE");
        dn.push(rcgen::DnType::OrganizationName, "Example, Inc.");
        dn.push(rcgen::DnType::CommonName, " web+1");
        params.distinguished_name = dn;
        let der = params.self_signed(&key).unwrap().der().to_vec();
        let d = describe(&der).unwrap();
        // Go: CN first (the reverse of C, ..., O, OU, CN), RFC 2253 escapes.
        assert_eq!(d.subject, "CN=\\ web\\+1,O=Example\\, Inc.,C=DE");
        assert_eq!(d.issuer, d.subject);
        assert_eq!(d.dns_names, ["web.test", "alt.test"]);
        assert_eq!(d.serial, "0abc");
        assert_eq!(describe(b"garbage"), None);
        for cut in [10, 100, 200] {
            assert_eq!(describe(&der[..cut]), None, "cut at {cut}");
        }
    }

    #[test]
    fn other_attribute_types_are_hex_after_the_known_ones() {
        // emailAddress, 1.2.840.113549.1.9.1: Go writes it last, as the DER of a UTF8String
        // ('@' is not printable in ASN.1).
        let oid = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01];
        assert_eq!(oid_string(&oid).as_deref(), Some("1.2.840.113549.1.9.1"));
        let mut atv_email = vec![0x30, 0x00, 0x06, oid.len() as u8];
        atv_email.extend_from_slice(&oid);
        atv_email.extend_from_slice(&[0x16, 0x03, b'a', b'@', b'b']);
        atv_email[1] = (atv_email.len() - 2) as u8;
        let atv_cn = [0x30, 0x08, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x01, b'x'];
        let mut name = Vec::new();
        for atv in [&atv_email[..], &atv_cn[..]] {
            name.push(0x31);
            name.push(atv.len() as u8);
            name.extend_from_slice(atv);
        }
        assert_eq!(name_string(&name).unwrap(), "CN=x,1.2.840.113549.1.9.1=#0c03614062");
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
