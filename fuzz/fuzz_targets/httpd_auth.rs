//! The `Authorization` header as `prober-httpd` reads basic credentials from it
//! (`auth::basic`), before any check: hostile before authentication by definition.
//!
//! Input: UTF-8 text (lossily), the header's value.
//!
//! Checked beyond "no panic":
//! - credentials read from a header are read again, the same, from the header made of them
//!   (`Basic BASE64(user:password)`); the user holds no `:`.
#![no_main]

use base64::Engine as _;
use libfuzzer_sys::fuzz_target;
use prober_httpd::fuzz::basic;

fuzz_target!(|data: &[u8]| {
    let header = String::from_utf8_lossy(data);
    if let Some((user, password)) = basic(&header) {
        assert!(!user.contains(':'), "{user:?}");
        let made = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        assert_eq!(basic(&format!("Basic {made}")), Some((user, password)));
    }
});
