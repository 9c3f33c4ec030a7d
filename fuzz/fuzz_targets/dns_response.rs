//! What a DNS server sends back, from a hostile server: prober-dns's message parser
//! (`wire::Message::parse`, names through `name::read_name` with compression), the records'
//! text as miekg/dns prints it (`render::record_text`) and blackbox's checks over it
//! (`RrValidator::check`). Compression loops, pointers past the end, records cut short,
//! counts that lie and messages up to 64 KiB (ci/fuzz.sh's max_len) must end in a value or
//! an error, never a panic, a hang or an allocation out of proportion to the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_dns::name::{MAX_NAME_WIRE, Name, read_name};
use prober_dns::render::record_text;
use prober_dns::validate::{RrValidator, check_rrs, patterns};
use prober_dns::wire::{Message, Query};

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Message::parse(data) {
        // Every record takes at least 11 bytes of the message (a pointer or root owner and
        // the fixed fields), every question 5: the counts cannot make it hold more.
        let records = m.answer.len() + m.authority.len() + m.additional.len();
        assert!(records * 11 + m.questions.len() * 5 + 12 <= data.len());
        let _ = m.rcode();
        let mut validator = RrValidator::default();
        validator.fail_if_none_matches = patterns(&[r"\tIN\t"]).unwrap();
        for section in [&m.answer, &m.authority, &m.additional] {
            for rr in section {
                let text = record_text(rr);
                // A name prints at most 4 bytes per wire byte (\DDD); names in the data come
                // from the message, possibly many times through pointers, so bound by the
                // names' own limits rather than the record's length.
                assert!(text.len() <= 4 * (MAX_NAME_WIRE * 3 + 4 * data.len()) + 200);
            }
            let _ = check_rrs(&validator, section);
        }
        for q in &m.questions {
            // The question's name goes back into a query and reads back the same.
            let query = Query {
                id: 1,
                name: q.name.clone(),
                qtype: q.qtype,
                qclass: q.qclass,
                recursion_desired: true,
                edns_udp_size: None,
            }
            .encode();
            let back = Message::parse(&query).expect("our own query parses");
            assert_eq!(back.questions, vec![q.clone()]);
            // Its text parses back to the same labels.
            let text = q.name.to_text();
            assert_eq!(Name::from_text(&text).as_ref(), Ok(&q.name), "{text:?}");
        }
    }
    // Names at the first offsets, as a pointer or a record's data would reach them.
    for off in 0..data.len().min(16) {
        if let Ok((name, next)) = read_name(data, off) {
            assert!(name.wire_len() <= MAX_NAME_WIRE);
            assert!(next > off && next <= data.len());
        }
    }
});
