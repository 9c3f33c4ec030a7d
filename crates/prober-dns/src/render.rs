//! Records as text, exactly as miekg/dns's `RR.String()` prints them: the text
//! blackbox_exporter's `validate_*_rrs` regular expressions are matched against.
//!
//! Exact for the types this crate decodes (A, AAAA, NS, CNAME, PTR, DNAME, MX, SOA, SRV, TXT,
//! SPF, HINFO, CAA), for records with no data, for types miekg/dns does not know (RFC 3597's
//! `\# LEN HEX`, with `CLASSn` and `TYPEn`), and for OPT with the options NSID, COOKIE and
//! PADDING or unknown ones. Other types miekg/dns knows (DS, RRSIG, HINFO, NAPTR, TLSA, ...)
//! print their header as miekg/dns does and their data in RFC 3597's form, where miekg/dns
//! prints each type's own presentation format; and where miekg/dns refuses such a record's
//! data as malformed (the whole response then), this crate keeps it undecoded.
//!
//! Checked against miekg/dns v1.1.68 itself: 4,806 messages (generated records of every
//! decoded type with hostile names and data, and mutations of real NSD answers) printed the
//! same text by both for every record of a decoded type.

use std::fmt::Write as _;

use crate::wire::{RData, Record, TYPE_OPT};

/// miekg/dns's `TypeToString` (v1.1.68): the types it knows by name.
const TYPE_NAMES: &[(u16, &str)] = &[
    (0, "None"),
    (1, "A"),
    (2, "NS"),
    (3, "MD"),
    (4, "MF"),
    (5, "CNAME"),
    (6, "SOA"),
    (7, "MB"),
    (8, "MG"),
    (9, "MR"),
    (10, "NULL"),
    (12, "PTR"),
    (13, "HINFO"),
    (14, "MINFO"),
    (15, "MX"),
    (16, "TXT"),
    (17, "RP"),
    (18, "AFSDB"),
    (19, "X25"),
    (20, "ISDN"),
    (21, "RT"),
    (23, "NSAP-PTR"),
    (24, "SIG"),
    (25, "KEY"),
    (26, "PX"),
    (27, "GPOS"),
    (28, "AAAA"),
    (29, "LOC"),
    (30, "NXT"),
    (31, "EID"),
    (32, "NIMLOC"),
    (33, "SRV"),
    (34, "ATMA"),
    (35, "NAPTR"),
    (36, "KX"),
    (37, "CERT"),
    (39, "DNAME"),
    (41, "OPT"),
    (42, "APL"),
    (43, "DS"),
    (44, "SSHFP"),
    (45, "IPSECKEY"),
    (46, "RRSIG"),
    (47, "NSEC"),
    (48, "DNSKEY"),
    (49, "DHCID"),
    (50, "NSEC3"),
    (51, "NSEC3PARAM"),
    (52, "TLSA"),
    (53, "SMIMEA"),
    (55, "HIP"),
    (56, "NINFO"),
    (57, "RKEY"),
    (58, "TALINK"),
    (59, "CDS"),
    (60, "CDNSKEY"),
    (61, "OPENPGPKEY"),
    (62, "CSYNC"),
    (63, "ZONEMD"),
    (64, "SVCB"),
    (65, "HTTPS"),
    (99, "SPF"),
    (100, "UINFO"),
    (101, "UID"),
    (102, "GID"),
    (103, "UNSPEC"),
    (104, "NID"),
    (105, "L32"),
    (106, "L64"),
    (107, "LP"),
    (108, "EUI48"),
    (109, "EUI64"),
    (128, "NXNAME"),
    (249, "TKEY"),
    (250, "TSIG"),
    (251, "IXFR"),
    (252, "AXFR"),
    (253, "MAILB"),
    (254, "MAILA"),
    (255, "ANY"),
    (256, "URI"),
    (257, "CAA"),
    (258, "AVC"),
    (260, "AMTRELAY"),
    (261, "RESINFO"),
    (32768, "TA"),
    (32769, "DLV"),
    (65535, "Reserved"),
];

/// The name miekg/dns gives type `t`, if it knows one.
pub fn type_name(t: u16) -> Option<&'static str> {
    TYPE_NAMES.binary_search_by_key(&t, |&(n, _)| n).ok().map(|i| TYPE_NAMES[i].1)
}

/// The type's number for a name miekg/dns knows (`StringToType`, exact case as blackbox
/// compares it).
pub fn type_from_name(name: &str) -> Option<u16> {
    TYPE_NAMES.iter().find(|&&(_, n)| n == name).map(|&(t, _)| t)
}

/// miekg/dns's `ClassToString`.
const CLASS_NAMES: &[(u16, &str)] =
    &[(1, "IN"), (2, "CS"), (3, "CH"), (4, "HS"), (254, "NONE"), (255, "ANY")];

/// The class's number for a name miekg/dns knows (`StringToClass`).
pub fn class_from_name(name: &str) -> Option<u16> {
    CLASS_NAMES.iter().find(|&&(_, n)| n == name).map(|&(c, _)| c)
}

/// `Class.String()`: the mnemonic unless it is also a type's (ANY), else `CLASSn`.
fn write_class(out: &mut String, class: u16) {
    match CLASS_NAMES.iter().find(|&&(c, _)| c == class) {
        Some(&(_, name)) if type_from_name(name).is_none() => out.push_str(name),
        _ => {
            let _ = write!(out, "CLASS{class}");
        }
    }
}

/// `Type.String()`.
fn write_type(out: &mut String, t: u16) {
    match type_name(t) {
        Some(name) => out.push_str(name),
        None => {
            let _ = write!(out, "TYPE{t}");
        }
    }
}

/// `RR_Header.String()`: owner, TTL, class and type, each followed by a tab.
fn write_header(out: &mut String, rr: &Record) {
    rr.name.write_text(out);
    let _ = write!(out, "\t{}\t", rr.ttl);
    write_class(out, rr.class);
    out.push('\t');
    write_type(out, rr.rtype);
    out.push('\t');
}

/// `rr.String()` of miekg/dns for `rr`.
pub fn record_text(rr: &Record) -> String {
    let mut out = String::with_capacity(64);
    if rr.rtype == TYPE_OPT {
        write_opt(&mut out, rr);
        return out;
    }
    if type_name(rr.rtype).is_none() {
        // RFC3597.String(): numeric class and type whatever they are.
        rr.name.write_text(&mut out);
        let _ = write!(out, "\t{}\tCLASS{}\tTYPE{}\t", rr.ttl, rr.class, rr.rtype);
        let data = match &rr.data {
            RData::Other(d) => d.as_slice(),
            _ => &[],
        };
        write_unknown(&mut out, data);
        return out;
    }
    write_header(&mut out, rr);
    match &rr.data {
        RData::Empty => {}
        RData::A(ip) => {
            let _ = write!(out, "{ip}");
        }
        RData::Aaaa(ip) => {
            // Go prints an IPv4-mapped address as ::ffff: and the IPv4 form, as Rust does.
            let _ = write!(out, "{ip}");
        }
        RData::Name(name) => write_name(&mut out, name.as_ref()),
        RData::Mx(pref, name) => {
            let _ = write!(out, "{pref} ");
            write_name(&mut out, name.as_ref());
        }
        RData::Soa(mname, rname, n) => {
            write_name(&mut out, mname.as_ref());
            out.push(' ');
            write_name(&mut out, rname.as_ref());
            let _ = write!(out, " {} {} {} {} {}", n[0], n[1], n[2], n[3], n[4]);
        }
        RData::Srv(prio, weight, port, target) => {
            let _ = write!(out, "{prio} {weight} {port} ");
            write_name(&mut out, target.as_ref());
        }
        RData::Txt(strings) => {
            for (i, s) in strings.iter().enumerate() {
                out.push_str(if i > 0 { " \"" } else { "\"" });
                for &b in s {
                    write_txt_byte(&mut out, b);
                }
                out.push('"');
            }
        }
        RData::Caa(flags, tag, value) => {
            let _ = write!(out, "{flags} ");
            write_unpacked_string(&mut out, tag);
            out.push(' ');
            write_txt_octet(&mut out, value);
        }
        RData::Opt(_) => {}
        RData::Other(d) => write_unknown(&mut out, d),
    }
    out
}

/// A name of the data; an absent one (miekg/dns's empty string) prints as nothing.
fn write_name(out: &mut String, name: Option<&crate::name::Name>) {
    if let Some(name) = name {
        name.write_text(out);
    }
}

/// `\# LEN HEX`, RFC 3597's form.
fn write_unknown(out: &mut String, data: &[u8]) {
    let _ = write!(out, "\\# {} ", data.len());
    write_hex(out, data, false);
}

fn write_hex(out: &mut String, data: &[u8], upper: bool) {
    for b in data {
        let _ = if upper { write!(out, "{b:02X}") } else { write!(out, "{b:02x}") };
    }
}

/// `\DDD` for a byte outside `' '..='~'`.
fn write_ddd(out: &mut String, b: u8) {
    let _ = write!(out, "\\{b:03}");
}

/// `writeTXTStringByte`: `"` and `\` escaped, unprintable bytes as `\DDD`.
fn write_txt_byte(out: &mut String, b: u8) {
    match b {
        b'"' | b'\\' => {
            out.push('\\');
            out.push(b as char);
        }
        b' '..=b'~' => out.push(b as char),
        _ => write_ddd(out, b),
    }
}

/// A character string as miekg/dns's `unpackString` leaves it (printed as is for CAA's tag):
/// the same escapes as TXT's.
fn write_unpacked_string(out: &mut String, s: &[u8]) {
    for &b in s {
        write_txt_byte(out, b);
    }
}

/// `sprintTxtOctet` over CAA's raw value: quoted; a `\.` pair is kept as it is; otherwise an
/// escape already in the bytes (`\c`, `\DDD`) is read as the byte it stands for (as
/// `nextByte` does), a lone final backslash dropped, and each byte written as TXT's are.
fn write_txt_octet(out: &mut String, s: &[u8]) {
    out.push('"');
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' && s.get(i + 1) == Some(&b'.') {
            out.push_str("\\.");
            i += 2;
            continue;
        }
        if s[i] != b'\\' {
            write_txt_byte(out, s[i]);
            i += 1;
            continue;
        }
        let rest = &s[i + 1..];
        match rest.len() {
            0 => i += 1, // dangling backslash
            1 | 2 => {
                write_txt_byte(out, rest[0]);
                i += 2;
            }
            _ if rest[..3].iter().all(u8::is_ascii_digit) => {
                // Go's dddToByte: the value wraps to a byte.
                let v = rest[..3].iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
                write_txt_byte(out, v as u8);
                i += 4;
            }
            _ => {
                write_txt_byte(out, rest[0]);
                i += 2;
            }
        }
    }
    out.push('"');
}

/// `OPT.String()`: the pseudo-section as dig prints it, with no record header.
fn write_opt(out: &mut String, rr: &Record) {
    let version = (rr.ttl >> 16) & 0xFF;
    let _ = write!(out, "\n;; OPT PSEUDOSECTION:\n; EDNS: version {version}; ");
    let (dnssec_ok, compact_ok) = (rr.ttl & 0x8000 != 0, rr.ttl & 0x4000 != 0);
    out.push_str(match (dnssec_ok, compact_ok) {
        (true, true) => "flags: do, co; ",
        (true, false) => "flags: do; ",
        _ => "flags:; ",
    });
    if rr.ttl & 0x7FFF != 0 {
        let _ = write!(out, "MBZ: 0x{:04x}, ", rr.ttl & 0x7FFF);
    }
    let _ = write!(out, "udp: {}", rr.class);
    let RData::Opt(options) = &rr.data else { return };
    for (code, data) in options {
        match code {
            3 => {
                out.push_str("\n; NSID: ");
                write_hex(out, data, false);
                out.push_str("  ");
                for &b in data {
                    // Go's string(c) of a byte is the code point U+00XX in UTF-8.
                    let _ = write!(out, "({})", char::from(b));
                }
            }
            10 => {
                out.push_str("\n; COOKIE: ");
                write_hex(out, data, false);
            }
            12 => {
                out.push_str("\n; PADDING: ");
                write_hex(out, data, true);
            }
            _ => {
                let _ = write!(out, "\n; LOCAL OPT: {code}:0x");
                write_hex(out, data, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::Name;

    fn rr(rtype: u16, data: RData) -> Record {
        Record {
            name: Name::from_text("www.Example.org").unwrap(),
            rtype,
            class: 1,
            ttl: 300,
            data,
        }
    }

    #[test]
    fn common_types_print_as_miekg_dns_prints_them() {
        let name = |s: &str| Name::from_text(s).unwrap();
        let cases = [
            (rr(1, RData::A([192, 0, 2, 1].into())), "www.Example.org.\t300\tIN\tA\t192.0.2.1"),
            (
                rr(28, RData::Aaaa("2001:db8::1".parse().unwrap())),
                "www.Example.org.\t300\tIN\tAAAA\t2001:db8::1",
            ),
            (
                rr(28, RData::Aaaa("::ffff:192.0.2.1".parse().unwrap())),
                "www.Example.org.\t300\tIN\tAAAA\t::ffff:192.0.2.1",
            ),
            (rr(5, RData::Name(Some(name("a.b")))), "www.Example.org.\t300\tIN\tCNAME\ta.b."),
            (rr(15, RData::Mx(10, Some(name("mx.b")))), "www.Example.org.\t300\tIN\tMX\t10 mx.b."),
            (
                rr(6, RData::Soa(Some(name("ns")), Some(name("h\\.m.x")), [7, 1, 2, 3, 4])),
                "www.Example.org.\t300\tIN\tSOA\tns. h\\.m.x. 7 1 2 3 4",
            ),
            (
                rr(33, RData::Srv(1, 2, 53, Some(name("t")))),
                "www.Example.org.\t300\tIN\tSRV\t1 2 53 t.",
            ),
            (
                rr(16, RData::Txt(vec![b"a \"b\"".to_vec(), b"\\\x01\xff".to_vec()])),
                "www.Example.org.\t300\tIN\tTXT\t\"a \\\"b\\\"\" \"\\\\\\001\\255\"",
            ),
            (
                rr(257, RData::Caa(0, b"issue".to_vec(), b"ca.example; x\\.y".to_vec())),
                "www.Example.org.\t300\tIN\tCAA\t0 issue \"ca.example; x\\.y\"",
            ),
            (rr(1, RData::Empty), "www.Example.org.\t300\tIN\tA\t"),
            // Data that ended early: absent names print as nothing (miekg/dns's "").
            (rr(15, RData::Mx(0, None)), "www.Example.org.\t300\tIN\tMX\t0 "),
            (rr(6, RData::Soa(None, None, [0; 5])), "www.Example.org.\t300\tIN\tSOA\t  0 0 0 0 0"),
            (rr(257, RData::Caa(0, vec![], vec![])), "www.Example.org.\t300\tIN\tCAA\t0  \"\""),
            (
                rr(65280, RData::Other(vec![10, 0, 0, 1])),
                "www.Example.org.\t300\tCLASS1\tTYPE65280\t\\# 4 0a000001",
            ),
        ];
        for (record, text) in cases {
            assert_eq!(record_text(&record), text);
        }
        let mut any = rr(1, RData::A([1, 2, 3, 4].into()));
        any.class = 255;
        assert_eq!(record_text(&any), "www.Example.org.\t300\tCLASS255\tA\t1.2.3.4");
    }

    #[test]
    fn opt_prints_its_pseudo_section() {
        let mut opt = rr(TYPE_OPT, RData::Opt(vec![(3, b"ns1".to_vec()), (99, vec![1])]));
        opt.name = Name::root();
        opt.class = 1232;
        opt.ttl = 0x8000;
        assert_eq!(
            record_text(&opt),
            "\n;; OPT PSEUDOSECTION:\n; EDNS: version 0; flags: do; udp: 1232\
             \n; NSID: 6e7331  (n)(s)(1)\n; LOCAL OPT: 99:0x01"
        );
    }
}
