//! DNS messages in wire form (RFC 1035 4, RFC 6891 for EDNS0): the probe's query out, a
//! server's response in. Every length and count of a response is checked against the bytes
//! that are there; nothing is allocated from a count before its records have been read.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::name::{Name, read_name};

/// The type of an OPT pseudo-record (EDNS0).
pub const TYPE_OPT: u16 = 41;

/// The header's flag bits (RFC 1035 4.1.1).
const QR: u16 = 1 << 15;
const TC: u16 = 1 << 9;
const RD: u16 = 1 << 8;

/// The query of one probe run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The message id, random per run.
    pub id: u16,
    /// The question's name.
    pub name: Name,
    /// The question's type.
    pub qtype: u16,
    /// The question's class.
    pub qclass: u16,
    /// The RD bit.
    pub recursion_desired: bool,
    /// EDNS0's UDP payload size, when an OPT record is sent.
    pub edns_udp_size: Option<u16>,
}

impl Query {
    /// The query in wire form (without TCP's length prefix).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + self.name.wire_len() + 4 + 11);
        out.extend_from_slice(&self.id.to_be_bytes());
        let flags = if self.recursion_desired { RD } else { 0 };
        out.extend_from_slice(&flags.to_be_bytes());
        let arcount = u16::from(self.edns_udp_size.is_some());
        for count in [1u16, 0, 0, arcount] {
            out.extend_from_slice(&count.to_be_bytes());
        }
        self.name.write_wire(&mut out);
        out.extend_from_slice(&self.qtype.to_be_bytes());
        out.extend_from_slice(&self.qclass.to_be_bytes());
        if let Some(size) = self.edns_udp_size {
            // Root name, type OPT, class = payload size, TTL 0 (ext-rcode, version 0, no
            // flags), no options.
            out.push(0);
            out.extend_from_slice(&TYPE_OPT.to_be_bytes());
            out.extend_from_slice(&size.to_be_bytes());
            out.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        }
        out
    }
}

/// The 12-byte header of a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The message id.
    pub id: u16,
    /// The flags word: QR, opcode, AA, TC, RD, RA, Z, AD, CD, RCODE.
    pub flags: u16,
    /// The four section counts as the header states them (they may lie).
    pub counts: [u16; 4],
}

impl Header {
    /// Reads the header at the start of `msg`, if there are 12 bytes.
    pub fn parse(msg: &[u8]) -> Option<Header> {
        let word = |i: usize| u16::from_be_bytes([msg[i], msg[i + 1]]);
        (msg.len() >= 12).then(|| Header {
            id: word(0),
            flags: word(2),
            counts: [word(4), word(6), word(8), word(10)],
        })
    }

    /// The QR bit: a response.
    pub fn is_response(&self) -> bool {
        self.flags & QR != 0
    }

    /// The TC bit: the answer did not fit and was truncated.
    pub fn truncated(&self) -> bool {
        self.flags & TC != 0
    }

    /// The header's 4-bit RCODE (an OPT record extends it).
    pub fn rcode(&self) -> u16 {
        self.flags & 0x000F
    }
}

/// One question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    /// Its name.
    pub name: Name,
    /// Its type.
    pub qtype: u16,
    /// Its class.
    pub qclass: u16,
}

/// The data of a record, decoded for the types this crate renders as miekg/dns does. A name
/// that is absent (`None`) is one that miekg/dns leaves empty: the record's data ended before
/// it (RDLENGTH 0, or a record cut at the end of the message); it prints as nothing, not `.`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RData {
    /// No data at all (RDLENGTH 0) for A, AAAA and the types not decoded here: miekg/dns
    /// prints the header alone for A and AAAA, `\# 0 ` for types it does not know.
    Empty,
    /// A.
    A(Ipv4Addr),
    /// AAAA.
    Aaaa(Ipv6Addr),
    /// One name: NS, CNAME, PTR, DNAME.
    Name(Option<Name>),
    /// MX: preference, exchange.
    Mx(u16, Option<Name>),
    /// SOA: mname, rname, then serial, refresh, retry, expire, minimum.
    Soa(Option<Name>, Option<Name>, [u32; 5]),
    /// SRV: priority, weight, port, target.
    Srv(u16, u16, u16, Option<Name>),
    /// TXT and SPF: the character strings; HINFO: CPU and OS, always two.
    Txt(Vec<Vec<u8>>),
    /// CAA: flags, tag, value.
    Caa(u8, Vec<u8>, Vec<u8>),
    /// OPT (EDNS0): its options, as (code, data).
    Opt(Vec<(u16, Vec<u8>)>),
    /// Any other type, undecoded.
    Other(Vec<u8>),
}

/// One resource record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The owner name.
    pub name: Name,
    /// The type.
    pub rtype: u16,
    /// The class (for OPT: the UDP payload size).
    pub class: u16,
    /// The TTL (for OPT: extended rcode, version and flags).
    pub ttl: u32,
    /// The data.
    pub data: RData,
}

/// A parsed response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The header (its counts as sent).
    pub header: Header,
    /// The question section.
    pub questions: Vec<Question>,
    /// The answer section.
    pub answer: Vec<Record>,
    /// The authority section.
    pub authority: Vec<Record>,
    /// The additional section (an OPT record included, as miekg/dns keeps it).
    pub additional: Vec<Record>,
}

impl Message {
    /// Parses a whole message. As miekg/dns does (`Msg.Unpack`), a section whose count is
    /// larger than what follows ends where the message ends on a record boundary (the counts
    /// lie, the records are kept); a record cut short, or one whose data does not fill its
    /// RDLENGTH exactly, is an error.
    ///
    /// # Errors
    ///
    /// A message shorter than its header, or a question or record that is malformed.
    pub fn parse(msg: &[u8]) -> Result<Message, String> {
        let header = Header::parse(msg).ok_or("message shorter than its 12-byte header")?;
        let mut off = 12;
        let mut questions = Vec::new();
        for _ in 0..header.counts[0] {
            if off == msg.len() {
                break;
            }
            let (name, next) = read_name(msg, off).map_err(|e| format!("question: {e}"))?;
            let fixed = msg.get(next..next + 4).ok_or("question cut short")?;
            questions.push(Question {
                name,
                qtype: u16::from_be_bytes([fixed[0], fixed[1]]),
                qclass: u16::from_be_bytes([fixed[2], fixed[3]]),
            });
            off = next + 4;
        }
        let mut sections: [Vec<Record>; 3] = Default::default();
        for (i, section) in sections.iter_mut().enumerate() {
            for _ in 0..header.counts[i + 1] {
                if off == msg.len() {
                    break;
                }
                let (record, next) = read_record(msg, off)?;
                section.push(record);
                off = next;
            }
        }
        let [answer, authority, additional] = sections;
        Ok(Message { header, questions, answer, authority, additional })
    }

    /// The response code, extended by an OPT record's upper 8 bits (RFC 6891 6.1.3).
    pub fn rcode(&self) -> u16 {
        let ext = self.opt().map_or(0, |opt| (opt.ttl >> 24) as u16);
        (ext << 4) | self.header.rcode()
    }

    /// The OPT record of the additional section, if any.
    pub fn opt(&self) -> Option<&Record> {
        self.additional.iter().find(|r| r.rtype == TYPE_OPT)
    }
}

/// Reads the record at `off`; returns it and the offset after it.
fn read_record(msg: &[u8], off: usize) -> Result<(Record, usize), String> {
    let (name, next) = read_name(msg, off).map_err(|e| format!("record owner: {e}"))?;
    let fixed = msg.get(next..next + 10).ok_or_else(|| format!("record at {off} cut short"))?;
    let rtype = u16::from_be_bytes([fixed[0], fixed[1]]);
    let class = u16::from_be_bytes([fixed[2], fixed[3]]);
    let ttl = u32::from_be_bytes([fixed[4], fixed[5], fixed[6], fixed[7]]);
    let rdlength = usize::from(u16::from_be_bytes([fixed[8], fixed[9]]));
    let start = next + 10;
    let end = start + rdlength;
    if end > msg.len() {
        return Err(format!("record at {off}: RDLENGTH {rdlength} runs past the end"));
    }
    let data = if rdlength == 0 {
        // miekg/dns reads no data then (`noRdata`) and prints the type's zero value.
        zero_rdata(rtype)
    } else {
        // Names in the data may point anywhere before its end, never past it.
        let mut r = RdReader { msg: &msg[..end], off: start };
        let data = read_rdata(&mut r, rtype)
            .map_err(|e| format!("record at {off} (type {rtype}): {e}"))?;
        if r.off != end {
            return Err(format!("record at {off} (type {rtype}): data shorter than RDLENGTH"));
        }
        data
    };
    Ok((Record { name, rtype, class, ttl, data }, end))
}

/// A cursor over one record's data; the message ends where the data ends.
struct RdReader<'a> {
    msg: &'a [u8],
    off: usize,
}

impl RdReader<'_> {
    fn at_end(&self) -> bool {
        self.off >= self.msg.len()
    }

    fn bytes(&mut self, n: usize) -> Result<&[u8], String> {
        let b = self.msg.get(self.off..self.off + n).ok_or("data cut short")?;
        self.off += n;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.bytes(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.bytes(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn name(&mut self) -> Result<Name, String> {
        let (name, next) = read_name(self.msg, self.off)?;
        self.off = next;
        Ok(name)
    }

    /// A character string: a length byte and that many bytes.
    fn string(&mut self) -> Result<Vec<u8>, String> {
        let n = usize::from(self.u8()?);
        Ok(self.bytes(n)?.to_vec())
    }

    fn rest(&mut self) -> Vec<u8> {
        let rest = self.msg.get(self.off..).unwrap_or_default().to_vec();
        self.off = self.msg.len();
        rest
    }
}

/// What miekg/dns holds for a record of `rtype` without data: its struct's zero value.
fn zero_rdata(rtype: u16) -> RData {
    match rtype {
        2 | 5 | 12 | 39 => RData::Name(None),
        15 => RData::Mx(0, None),
        6 => RData::Soa(None, None, [0; 5]),
        33 => RData::Srv(0, 0, 0, None),
        16 | 99 => RData::Txt(Vec::new()),
        13 => RData::Txt(vec![Vec::new(), Vec::new()]),
        257 => RData::Caa(0, Vec::new(), Vec::new()),
        TYPE_OPT => RData::Opt(Vec::new()),
        _ => RData::Empty,
    }
}

/// Decodes a record's data. Where miekg/dns's generated unpackers stop at the end of the data
/// between two fields and keep the rest zero (MX, SOA, SRV, CAA), so does this.
fn read_rdata(r: &mut RdReader<'_>, rtype: u16) -> Result<RData, String> {
    Ok(match rtype {
        1 => {
            let b = r.bytes(4)?;
            RData::A(Ipv4Addr::new(b[0], b[1], b[2], b[3]))
        }
        28 => {
            let b: [u8; 16] = r.bytes(16)?.try_into().map_err(|_| "bad AAAA")?;
            RData::Aaaa(Ipv6Addr::from(b))
        }
        2 | 5 | 12 | 39 => RData::Name(Some(r.name()?)),
        15 => {
            let pref = r.u16()?;
            let name = if r.at_end() { None } else { Some(r.name()?) };
            RData::Mx(pref, name)
        }
        6 => {
            let mname = Some(r.name()?);
            let rname = if r.at_end() { None } else { Some(r.name()?) };
            let mut numbers = [0u32; 5];
            for n in &mut numbers {
                if r.at_end() {
                    break;
                }
                *n = r.u32()?;
            }
            RData::Soa(mname, rname, numbers)
        }
        33 => {
            let mut numbers = [0u16; 3];
            for n in &mut numbers {
                if r.at_end() {
                    break;
                }
                *n = r.u16()?;
            }
            let target = if r.at_end() { None } else { Some(r.name()?) };
            RData::Srv(numbers[0], numbers[1], numbers[2], target)
        }
        16 | 99 => {
            let mut strings = Vec::new();
            while !r.at_end() {
                strings.push(r.string()?);
            }
            RData::Txt(strings)
        }
        13 => {
            // HINFO (RFC 8482's answer to ANY): CPU, then OS unless the data ended.
            let cpu = r.string()?;
            let os = if r.at_end() { Vec::new() } else { r.string()? };
            RData::Txt(vec![cpu, os])
        }
        257 => {
            let flags = r.u8()?;
            let tag = if r.at_end() { Vec::new() } else { r.string()? };
            RData::Caa(flags, tag, r.rest())
        }
        TYPE_OPT => {
            let mut options = Vec::new();
            while !r.at_end() {
                let code = r.u16()?;
                let len = usize::from(r.u16()?);
                options.push((code, r.bytes(len)?.to_vec()));
            }
            RData::Opt(options)
        }
        _ => RData::Other(r.rest()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query() -> Query {
        Query {
            id: 0xBEEF,
            name: Name::from_text("example.com").unwrap(),
            qtype: 1,
            qclass: 1,
            recursion_desired: true,
            edns_udp_size: Some(1232),
        }
    }

    #[test]
    fn the_query_is_laid_out_as_rfc_1035_says() {
        let q = query().encode();
        assert_eq!(&q[..12], b"\xBE\xEF\x01\x00\x00\x01\x00\x00\x00\x00\x00\x01");
        assert_eq!(&q[12..29], b"\x07example\x03com\x00\x00\x01\x00\x01");
        assert_eq!(&q[29..], b"\x00\x00\x29\x04\xD0\x00\x00\x00\x00\x00\x00");
        let back = Message::parse(&q).unwrap();
        assert_eq!(back.questions[0].name.to_text(), "example.com.");
        assert_eq!(back.opt().map(|o| o.class), Some(1232));
    }

    #[test]
    fn counts_that_lie_high_end_at_the_message_end() {
        let mut q = query().encode();
        q[7] = 9; // ancount 9 with no answer at all
        let m = Message::parse(&q[..29]).unwrap();
        assert!(m.answer.is_empty() && m.additional.is_empty());
    }

    #[test]
    fn records_cut_short_are_errors() {
        let q = query().encode();
        let e = Message::parse(&q[..35]).unwrap_err();
        assert!(e.contains("cut short"), "{e}");
        let mut long = q.clone();
        long[39] = 9; // the OPT record's RDLENGTH past the end
        assert!(Message::parse(&long).unwrap_err().contains("RDLENGTH"));
    }
}
