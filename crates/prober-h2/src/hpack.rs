//! HPACK (RFC 7541): a decoder for response header blocks, with Huffman, and the one encoding
//! the client needs for its requests (literal without indexing, no Huffman).
//!
//! The decoder keeps the dynamic table across header blocks of one connection, as the peer's
//! encoder does; it enforces the table size we advertise (the default 4096 octets: we never
//! send `SETTINGS_HEADER_TABLE_SIZE`), size updates only at the start of a block, the Huffman
//! padding rules (at most 7 bits, all ones, no EOS symbol), and a bound on the decoded list.

use std::collections::VecDeque;
use std::fmt;

/// The header table size the peer's encoder may use (RFC 7540's default; we never change it).
pub const DEFAULT_TABLE_SIZE: usize = 4096;

/// Why a header block could not be decoded (a connection error, `COMPRESSION_ERROR`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HpackError {
    /// The block ended inside a representation.
    Truncated,
    /// An integer does not fit (more than 2^28).
    IntegerOverflow,
    /// Index 0, or past the end of the static and dynamic tables.
    BadIndex(usize),
    /// Invalid Huffman code: EOS, or padding longer than 7 bits or not all ones.
    Huffman,
    /// A table size update above the limit, or after a header field.
    TableSizeUpdate(usize),
    /// The decoded header list is larger than the caller's bound.
    ListTooLarge,
}

impl fmt::Display for HpackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HpackError::Truncated => f.write_str("hpack: truncated header block"),
            HpackError::IntegerOverflow => f.write_str("hpack: integer overflow"),
            HpackError::BadIndex(i) => write!(f, "hpack: invalid table index {i}"),
            HpackError::Huffman => f.write_str("hpack: invalid Huffman-encoded data"),
            HpackError::TableSizeUpdate(n) => write!(f, "hpack: invalid table size update {n}"),
            HpackError::ListTooLarge => f.write_str("hpack: header list too large"),
        }
    }
}

impl std::error::Error for HpackError {}

/// One decoded header field.
pub type Field = (Vec<u8>, Vec<u8>);

/// The static table (RFC 7541 Appendix A), index 1 first.
const STATIC_TABLE: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// Octets a table entry counts for beyond its name and value (RFC 7541 section 4.1).
const ENTRY_OVERHEAD: usize = 32;

/// An HPACK decoder: one per connection.
#[derive(Debug)]
pub struct Decoder {
    /// Newest first.
    table: VecDeque<Field>,
    size: usize,
    /// Current maximum, set by the peer's size updates.
    max_size: usize,
    /// What we allow (our SETTINGS_HEADER_TABLE_SIZE).
    limit: usize,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder::new(DEFAULT_TABLE_SIZE)
    }
}

impl Decoder {
    /// A decoder whose peer may use a table of at most `limit` octets.
    pub fn new(limit: usize) -> Decoder {
        Decoder { table: VecDeque::new(), size: 0, max_size: limit, limit }
    }

    /// Decodes one complete header block. `max_list` bounds the decoded list (names plus
    /// values plus 32 per field, as `SETTINGS_MAX_HEADER_LIST_SIZE` counts).
    ///
    /// # Errors
    /// A malformed block, an index out of the tables, a list over `max_list`.
    pub fn decode(&mut self, block: &[u8], max_list: usize) -> Result<Vec<Field>, HpackError> {
        let mut fields = Vec::new();
        let mut list_size = 0usize;
        let mut pos = 0;
        let mut first = true;
        while pos < block.len() {
            let b = block[pos];
            let field = if b & 0x80 != 0 {
                // Indexed header field.
                let index = integer(block, &mut pos, 7)?;
                self.get(index)?
            } else if b & 0x40 != 0 {
                // Literal with incremental indexing.
                let field = self.literal(block, &mut pos, 6)?;
                self.insert(field.clone());
                field
            } else if b & 0x20 != 0 {
                // Dynamic table size update: only before the first field of a block.
                let size = integer(block, &mut pos, 5)?;
                if !first || size > self.limit {
                    return Err(HpackError::TableSizeUpdate(size));
                }
                self.max_size = size;
                self.evict(0);
                continue;
            } else {
                // Literal without indexing (0000) or never indexed (0001).
                self.literal(block, &mut pos, 4)?
            };
            first = false;
            list_size += field.0.len() + field.1.len() + ENTRY_OVERHEAD;
            if list_size > max_list {
                return Err(HpackError::ListTooLarge);
            }
            fields.push(field);
        }
        Ok(fields)
    }

    fn literal(&self, block: &[u8], pos: &mut usize, prefix: u8) -> Result<Field, HpackError> {
        let index = integer(block, pos, prefix)?;
        let name = if index == 0 { string(block, pos)? } else { self.get(index)?.0 };
        let value = string(block, pos)?;
        Ok((name, value))
    }

    fn get(&self, index: usize) -> Result<Field, HpackError> {
        match index {
            0 => Err(HpackError::BadIndex(0)),
            1..=61 => {
                let (n, v) = STATIC_TABLE[index - 1];
                Ok((n.as_bytes().to_vec(), v.as_bytes().to_vec()))
            }
            _ => self.table.get(index - 62).cloned().ok_or(HpackError::BadIndex(index)),
        }
    }

    fn insert(&mut self, field: Field) {
        let size = field.0.len() + field.1.len() + ENTRY_OVERHEAD;
        self.evict(size);
        // An entry larger than the table empties it and is not added (section 4.4).
        if size <= self.max_size {
            self.size += size;
            self.table.push_front(field);
        }
    }

    /// Evicts until `room` more octets fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            match self.table.pop_back() {
                Some((n, v)) => self.size -= n.len() + v.len() + ENTRY_OVERHEAD,
                None => break,
            }
        }
    }

    /// The dynamic table, newest first (for tests).
    pub fn dynamic_table(&self) -> impl Iterator<Item = &Field> {
        self.table.iter()
    }

    /// The dynamic table's size in octets (RFC 7541 section 4.1).
    pub fn table_size(&self) -> usize {
        self.size
    }
}

/// An integer with an `n`-bit prefix (section 5.1), starting at `block[*pos]`.
fn integer(block: &[u8], pos: &mut usize, n: u8) -> Result<usize, HpackError> {
    let mask = (1u16 << n) as usize - 1;
    let first = *block.get(*pos).ok_or(HpackError::Truncated)?;
    *pos += 1;
    let value = usize::from(first) & mask;
    if value < mask {
        return Ok(value);
    }
    let mut value = value as u64;
    let mut shift = 0;
    loop {
        let b = *block.get(*pos).ok_or(HpackError::Truncated)?;
        *pos += 1;
        value += u64::from(b & 0x7f) << shift;
        if value > 1 << 28 {
            return Err(HpackError::IntegerOverflow);
        }
        if b & 0x80 == 0 {
            return Ok(value as usize);
        }
        shift += 7;
        if shift > 28 {
            return Err(HpackError::IntegerOverflow);
        }
    }
}

/// A string literal (section 5.2).
fn string(block: &[u8], pos: &mut usize) -> Result<Vec<u8>, HpackError> {
    let huffman = block.get(*pos).ok_or(HpackError::Truncated)? & 0x80 != 0;
    let len = integer(block, pos, 7)?;
    let end = pos.checked_add(len).filter(|&e| e <= block.len()).ok_or(HpackError::Truncated)?;
    let raw = &block[*pos..end];
    *pos = end;
    if huffman { huffman_decode(raw) } else { Ok(raw.to_vec()) }
}

/// Appends `value` as an integer with an `n`-bit prefix whose other bits are `flags`.
fn encode_integer(out: &mut Vec<u8>, flags: u8, n: u8, mut value: usize) {
    let mask = (1usize << n) - 1;
    if value < mask {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | mask as u8);
    value -= mask;
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends one field as a literal without indexing, with a literal name and no Huffman
/// (section 6.2.2): valid for any peer, and no table state to keep.
pub fn encode_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x00);
    encode_integer(out, 0x00, 7, name.len());
    out.extend_from_slice(name);
    encode_integer(out, 0x00, 7, value.len());
    out.extend_from_slice(value);
}

// ---------------------------------------------------------------------------------------------
// Huffman (RFC 7541 Appendix B).
//
// The code is canonical: ordered by (length, symbol), each code is the previous one plus one,
// shifted left when the length grows. So the code lengths below determine every code; the
// tests check a few codes against the RFC's table and that the code is complete.

/// Code length in bits of each symbol 0..=255 and EOS (256).
const CODE_LENGTHS: [u8; 257] = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, //
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, //
    6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, //
    5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, //
    13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, //
    7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, //
    15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, //
    6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, //
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, //
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, //
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, //
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, //
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, //
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, //
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, //
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, //
    30,
];

const EOS: u16 = 256;
const MAX_LEN: usize = 30;

/// Canonical decoding tables: symbols ordered by (length, symbol), and per length the first
/// code, the index of its symbol in that order, and how many codes have that length.
struct Canonical {
    symbols: [u16; 257],
    first_code: [u32; MAX_LEN + 1],
    first_index: [u16; MAX_LEN + 1],
    count: [u16; MAX_LEN + 1],
}

const fn canonical() -> Canonical {
    let mut count = [0u16; MAX_LEN + 1];
    let mut s = 0;
    while s < 257 {
        count[CODE_LENGTHS[s] as usize] += 1;
        s += 1;
    }
    let mut first_index = [0u16; MAX_LEN + 1];
    let mut first_code = [0u32; MAX_LEN + 1];
    let mut index = 0u16;
    let mut code = 0u32;
    let mut len = 1;
    while len <= MAX_LEN {
        first_index[len] = index;
        first_code[len] = code;
        index += count[len];
        code = (code + count[len] as u32) << 1;
        len += 1;
    }
    let mut symbols = [0u16; 257];
    let mut next = first_index;
    let mut s = 0;
    while s < 257 {
        let l = CODE_LENGTHS[s] as usize;
        symbols[next[l] as usize] = s as u16;
        next[l] += 1;
        s += 1;
    }
    Canonical { symbols, first_code, first_index, count }
}

const CANONICAL: Canonical = canonical();

/// The code of `symbol` (for tests and the test encoder).
pub fn huffman_code(symbol: u16) -> (u32, u8) {
    let len = CODE_LENGTHS[symbol as usize];
    let c = &CANONICAL;
    let start = c.first_index[len as usize] as usize;
    let offset = c.symbols[start..].iter().position(|&s| s == symbol).expect("symbol listed");
    (c.first_code[len as usize] + offset as u32, len)
}

/// Decodes a Huffman-encoded string.
///
/// # Errors
/// Invalid padding or an EOS symbol in the string.
pub fn huffman_decode(input: &[u8]) -> Result<Vec<u8>, HpackError> {
    let c = &CANONICAL;
    let mut out = Vec::with_capacity(input.len() * 8 / 5);
    let (mut code, mut len) = (0u32, 0usize);
    for &byte in input {
        for bit in (0..8).rev() {
            code = (code << 1) | u32::from((byte >> bit) & 1);
            len += 1;
            let offset = code.wrapping_sub(c.first_code[len]);
            if code >= c.first_code[len] && offset < u32::from(c.count[len]) {
                let symbol = c.symbols[c.first_index[len] as usize + offset as usize];
                if symbol == EOS {
                    return Err(HpackError::Huffman);
                }
                out.push(symbol as u8);
                (code, len) = (0, 0);
            } else if len == MAX_LEN {
                return Err(HpackError::Huffman);
            }
        }
    }
    // Padding: fewer than 8 bits, all ones (the most significant bits of EOS).
    if len > 7 || code != (1u32 << len) - 1 {
        return Err(HpackError::Huffman);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    fn fields(list: &[(&str, &str)]) -> Vec<Field> {
        list.iter().map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec())).collect()
    }

    fn table(d: &Decoder) -> Vec<(String, String)> {
        d.dynamic_table()
            .map(|(n, v)| {
                (String::from_utf8(n.clone()).unwrap(), String::from_utf8(v.clone()).unwrap())
            })
            .collect()
    }

    fn huffman_encode(s: &[u8]) -> Vec<u8> {
        let (mut acc, mut bits, mut out) = (0u64, 0u32, Vec::new());
        for &b in s {
            let (code, len) = huffman_code(u16::from(b));
            acc = (acc << len) | u64::from(code);
            bits += u32::from(len);
            while bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        if bits > 0 {
            out.push(((acc << (8 - bits)) as u8) | ((1u16 << (8 - bits)) - 1) as u8);
        }
        out
    }

    #[test]
    fn huffman_table_matches_the_rfc() {
        // Spot checks against RFC 7541 Appendix B.
        assert_eq!(huffman_code(0), (0x1ff8, 13));
        assert_eq!(huffman_code(b' '.into()), (0x14, 6));
        assert_eq!(huffman_code(b'0'.into()), (0x0, 5));
        assert_eq!(huffman_code(b'a'.into()), (0x3, 5));
        assert_eq!(huffman_code(b'A'.into()), (0x21, 6));
        assert_eq!(huffman_code(b'z'.into()), (0x7b, 7));
        assert_eq!(huffman_code(b'~'.into()), (0x1ffd, 13));
        assert_eq!(huffman_code(b'%'.into()), (0x15, 6));
        assert_eq!(huffman_code(10), (0x3ffffffc, 30));
        assert_eq!(huffman_code(255), (0x3ffffee, 26));
        assert_eq!(huffman_code(EOS), (0x3fffffff, 30));
        // A complete prefix code: the Kraft sum is exactly 1.
        let kraft: u64 = CODE_LENGTHS.iter().map(|&l| 1u64 << (30 - l)).sum();
        assert_eq!(kraft, 1 << 30);
    }

    #[test]
    fn huffman_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(huffman_decode(&huffman_encode(&all)).unwrap(), all);
        for s in [&b""[..], b"a", b"www.example.com", b"no-cache", b"\xff\x00\x7f"] {
            assert_eq!(huffman_decode(&huffman_encode(s)).unwrap(), s);
        }
    }

    #[test]
    fn huffman_padding_and_eos_are_checked() {
        // "www.example.com" (C.4.1), then broken variants.
        let good = hex("f1e3 c2e5 f23a 6ba0 ab90 f4ff");
        assert_eq!(huffman_decode(&good).unwrap(), b"www.example.com");
        // A whole byte of padding.
        let mut long = good.clone();
        long.push(0xff);
        assert_eq!(huffman_decode(&long), Err(HpackError::Huffman));
        // Padding with a zero bit: 'a' (00011) + "000" instead of "111".
        assert_eq!(huffman_decode(&[0b0001_1000]), Err(HpackError::Huffman));
        assert_eq!(huffman_decode(&[0b0001_1111]).unwrap(), b"a");
        // EOS (30 ones) as a symbol.
        assert_eq!(huffman_decode(&[0xff, 0xff, 0xff, 0xfc]), Err(HpackError::Huffman));
    }

    #[test]
    fn integers() {
        // C.1.1 to C.1.3.
        let mut pos = 0;
        assert_eq!(integer(&[0b0000_1010], &mut pos, 5), Ok(10));
        let mut pos = 0;
        assert_eq!(integer(&[0b0001_1111, 0b1001_1010, 0b0000_1010], &mut pos, 5), Ok(1337));
        assert_eq!(pos, 3);
        let mut pos = 0;
        assert_eq!(integer(&[42], &mut pos, 8), Ok(42));
        let mut out = Vec::new();
        encode_integer(&mut out, 0, 5, 1337);
        assert_eq!(out, [0b0001_1111, 0b1001_1010, 0b0000_1010]);
        let mut pos = 0;
        assert_eq!(integer(&[0x1f, 0x9a], &mut pos, 5), Err(HpackError::Truncated));
        let mut pos = 0;
        let huge = [0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(integer(&huge, &mut pos, 5), Err(HpackError::IntegerOverflow));
    }

    #[test]
    fn c2_field_representations() {
        let mut d = Decoder::default();
        let block = hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572");
        assert_eq!(d.decode(&block, 1 << 16).unwrap(), fields(&[("custom-key", "custom-header")]));
        assert_eq!(d.table_size(), 55);
        let mut d = Decoder::default();
        let block = hex("040c 2f73 616d 706c 652f 7061 7468");
        assert_eq!(d.decode(&block, 1 << 16).unwrap(), fields(&[(":path", "/sample/path")]));
        assert_eq!(d.table_size(), 0);
        let block = hex("1008 7061 7373 776f 7264 0673 6563 7265 74");
        assert_eq!(d.decode(&block, 1 << 16).unwrap(), fields(&[("password", "secret")]));
        assert_eq!(d.decode(&hex("82"), 1 << 16).unwrap(), fields(&[(":method", "GET")]));
        assert_eq!(d.table_size(), 0);
    }

    fn request_sequence(blocks: [&str; 3]) {
        let mut d = Decoder::default();
        let first = [(":method", "GET"), (":scheme", "http"), (":path", "/")];
        let mut expect = fields(&first);
        expect.push((b":authority".to_vec(), b"www.example.com".to_vec()));
        assert_eq!(d.decode(&hex(blocks[0]), 1 << 16).unwrap(), expect);
        assert_eq!(d.table_size(), 57);
        expect.push((b"cache-control".to_vec(), b"no-cache".to_vec()));
        assert_eq!(d.decode(&hex(blocks[1]), 1 << 16).unwrap(), expect);
        assert_eq!(d.table_size(), 110);
        let third = fields(&[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ]);
        assert_eq!(d.decode(&hex(blocks[2]), 1 << 16).unwrap(), third);
        assert_eq!(d.table_size(), 164);
        assert_eq!(
            table(&d),
            [
                ("custom-key".to_string(), "custom-value".to_string()),
                ("cache-control".into(), "no-cache".into()),
                (":authority".into(), "www.example.com".into()),
            ]
        );
    }

    #[test]
    fn c3_requests_without_huffman() {
        request_sequence([
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ]);
    }

    #[test]
    fn c4_requests_with_huffman() {
        request_sequence([
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
            "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ]);
    }

    fn response_sequence(blocks: [&str; 3]) {
        let mut d = Decoder::new(256);
        let date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
        let loc = "https://www.example.com";
        let r1 = fields(&[
            (":status", "302"),
            ("cache-control", "private"),
            ("date", date1),
            ("location", loc),
        ]);
        assert_eq!(d.decode(&hex(blocks[0]), 1 << 16).unwrap(), r1);
        assert_eq!(d.table_size(), 222);
        let mut r2 = r1.clone();
        r2[0].1 = b"307".to_vec();
        assert_eq!(d.decode(&hex(blocks[1]), 1 << 16).unwrap(), r2);
        assert_eq!(d.table_size(), 222);
        let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
        let r3 = fields(&[
            (":status", "200"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
            ("location", loc),
            ("content-encoding", "gzip"),
            ("set-cookie", cookie),
        ]);
        assert_eq!(d.decode(&hex(blocks[2]), 1 << 16).unwrap(), r3);
        assert_eq!(d.table_size(), 215);
        assert_eq!(
            table(&d),
            [
                ("set-cookie".to_string(), cookie.to_string()),
                ("content-encoding".into(), "gzip".into()),
                ("date".into(), "Mon, 21 Oct 2013 20:13:22 GMT".into()),
            ]
        );
    }

    #[test]
    fn c5_responses_without_huffman() {
        response_sequence([
            "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 \
             2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 \
             6c65 2e63 6f6d",
            "4803 3330 37c1 c0bf",
            "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d \
             54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 \
             5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e \
             3d31",
        ]);
    }

    #[test]
    fn c6_responses_with_huffman() {
        response_sequence([
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
            "4883 640e ffc1 c0bf",
            "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab \
             77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f \
             9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        ]);
    }

    #[test]
    fn table_size_updates() {
        let mut d = Decoder::default();
        d.decode(&hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572"), 1 << 16)
            .unwrap();
        assert_eq!(d.table_size(), 55);
        // Size 0 empties the table; then index 62 is gone.
        assert_eq!(d.decode(&[0x20], 1 << 16).unwrap(), vec![]);
        assert_eq!(d.table_size(), 0);
        assert_eq!(d.decode(&[0xbe], 1 << 16), Err(HpackError::BadIndex(62)));
        // Above our limit; after a field.
        assert_eq!(d.decode(&[0x3f, 0xe2, 0x1f], 1 << 16), Err(HpackError::TableSizeUpdate(4097)));
        assert_eq!(d.decode(&[0x82, 0x20], 1 << 16), Err(HpackError::TableSizeUpdate(0)));
        // Back up to 4096 is allowed.
        assert_eq!(d.decode(&[0x3f, 0xe1, 0x1f, 0x82], 1 << 16).unwrap().len(), 1);
    }

    #[test]
    fn malformed_blocks() {
        let mut d = Decoder::default();
        assert_eq!(d.decode(&[0x80], 1 << 16), Err(HpackError::BadIndex(0)));
        assert_eq!(d.decode(&[0xff, 0x00], 1 << 16), Err(HpackError::BadIndex(127)));
        assert_eq!(d.decode(&[0x00, 0x05, b'a'], 1 << 16), Err(HpackError::Truncated));
        assert_eq!(d.decode(&[0x00, 0x01, b'a'], 1 << 16), Err(HpackError::Truncated));
        assert_eq!(d.decode(&[0x0f], 1 << 16), Err(HpackError::Truncated));
        let big = {
            let mut v = Vec::new();
            encode_literal(&mut v, b"x", &[b'y'; 100]);
            v
        };
        assert_eq!(d.decode(&big, 100), Err(HpackError::ListTooLarge));
        assert_eq!(d.decode(&big, 133).unwrap().len(), 1);
    }

    #[test]
    fn an_entry_larger_than_the_table_empties_it() {
        let mut d = Decoder::new(64);
        let mut block = Vec::new();
        block.push(0x40);
        encode_integer(&mut block, 0, 7, 1);
        block.push(b'a');
        encode_integer(&mut block, 0, 7, 2);
        block.extend_from_slice(b"bc");
        d.decode(&block, 1 << 16).unwrap();
        assert_eq!(d.table_size(), 35);
        let mut block = vec![0x40, 0x01, b'a'];
        encode_integer(&mut block, 0, 7, 40);
        block.extend_from_slice(&[b'z'; 40]);
        assert_eq!(d.decode(&block, 1 << 16).unwrap().len(), 1);
        assert_eq!(d.table_size(), 0);
    }

    #[test]
    fn literal_encoding_decodes() {
        let mut block = Vec::new();
        encode_literal(&mut block, b":path", b"/grpc.health.v1.Health/Check");
        encode_literal(&mut block, b"x", &[b'v'; 300]);
        let mut d = Decoder::default();
        let got = d.decode(&block, 1 << 16).unwrap();
        assert_eq!(got[0], (b":path".to_vec(), b"/grpc.health.v1.Health/Check".to_vec()));
        assert_eq!(got[1].1.len(), 300);
        assert_eq!(d.table_size(), 0);
    }
}
