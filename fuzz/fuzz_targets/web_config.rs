//! The exporter-toolkit's web config as `prober-httpd` reads it (`WebConfig::parse`): an
//! operator's file, read at start, whose errors must name the field, never panic.
//!
//! Input: UTF-8 text (lossily), the file's text. Relative file names are resolved against a
//! directory that does not exist, so a config naming certificates fails to load them; absolute
//! names are read as any config's would be.
//!
//! Checked beyond "no panic": an error says something.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use prober_httpd::fuzz::web_config;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match web_config(&text, Path::new("/nonexistent/prober-fuzz")) {
        Ok(web) => {
            let _ = (web.tls(), web.basic_auth());
        }
        Err(e) => assert!(!e.is_empty()),
    }
});
