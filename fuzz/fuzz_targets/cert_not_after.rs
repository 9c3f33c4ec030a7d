//! The certificate expiry reader (`prober_transport::cert::not_after`), which every HTTPS and
//! gRPC-over-TLS probe runs on the certificate a server sends, before any verification.
//!
//! Input: any bytes, as a DER certificate. Checked beyond "no panic": a time that is read lies
//! within what UTCTime and GeneralizedTime can express (years 0 to 9999), and reading does not
//! depend on bytes after the certificate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prober_transport::cert::not_after;

/// 0000-01-01T00:00:00Z and 9999-12-31T23:59:60Z in seconds since the epoch.
const EARLIEST: i64 = -62_167_219_200;
const LATEST: i64 = 253_402_300_800;

fuzz_target!(|data: &[u8]| {
    let t = not_after(data);
    if let Some(t) = t {
        assert!((EARLIEST..=LATEST).contains(&t), "{t}");
        let mut longer = data.to_vec();
        longer.extend_from_slice(b"\x17\x0d491231235959Z");
        assert_eq!(not_after(&longer), Some(t), "trailing bytes changed the time");
    }
});
