//! `http.compression`: blackbox_exporter v0.28.0's (`prober/http.go`, `config/config.go`).
//!
//! The body is decoded with the algorithm named (`gzip`, `deflate`, `br`, `identity`, any
//! case), whatever the response's `Content-Encoding` says; a body that does not decode fails
//! the probe, and `probe_http_uncompressed_body_length` and `body_size_limit` count decoded
//! bytes. No `Accept-Encoding` is added (prometheus/common's transport sets
//! `DisableCompression`); a module's own `Accept-Encoding` must accept the algorithm, or the
//! module is refused (`isCompressionAcceptEncodingValid`). An unknown algorithm loads, and every
//! probe with it fails (`getDecompressionReader`'s "unsupported compression algorithm").

use prober::{Compression, ProbeSpec};

use crate::config::HttpModule;

/// What a module's `compression` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// None, or one the library decodes (set on the spec).
    Decoded,
    /// An algorithm blackbox_exporter does not know: every probe fails.
    Unsupported,
}

/// Sets the spec's coding from the module's `compression`.
///
/// # Errors
/// An `Accept-Encoding` header that does not accept the algorithm, in blackbox_exporter's
/// words.
pub(crate) fn apply(h: &HttpModule, spec: &mut ProbeSpec) -> Result<Wanted, String> {
    let Some(name) = h.compression.as_deref().filter(|c| !c.is_empty()) else {
        return Ok(Wanted::Decoded);
    };
    for (key, value) in &h.headers.0 {
        if key.eq_ignore_ascii_case("Accept-Encoding") && !accepts(name, value) {
            return Err(format!(
                "invalid configuration \"{key}: {value}\", \"compression: {name}\""
            ));
        }
    }
    match Compression::from_name(name) {
        Some(c) => {
            spec.set_compression(Some(c)).map_err(|e| e.to_string())?;
            Ok(Wanted::Decoded)
        }
        None => Ok(Wanted::Unsupported),
    }
}

/// `isCompressionAcceptEncodingValid`: `encoding` is among the codings `accept` lists with a
/// quality above 0 (or `*` is, whichever comes first by quality).
fn accepts(encoding: &str, accept: &str) -> bool {
    if accept.is_empty() {
        return true;
    }
    let mut listed: Vec<(&str, f32)> = accept
        .split(',')
        .map(|part| match part.rfind(';') {
            None => (part.trim(), 1.0),
            Some(i) => {
                let q = part[i + 1..].trim();
                let q = q.strip_prefix("q=").unwrap_or(q);
                let q = q.parse::<f64>().map_or(0.0, |q| (q * 1000.0).round() / 1000.0);
                (part[..i].trim(), q as f32)
            }
        })
        .collect();
    // Stable, highest quality first, as Go's `sort.SliceStable`.
    listed.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
    listed.iter().find(|(e, _)| *e == encoding || *e == "*").is_some_and(|(_, q)| *q > 0.0)
}

#[cfg(test)]
mod tests {
    use super::accepts;

    #[test]
    fn accept_encoding_as_blackbox_exporter_reads_it() {
        // blackbox_exporter v0.28.0's table (config/config_test.go), an empty header added.
        let table = [
            ("gzip", "gzip", true),
            ("gzip", "gzip;q=1.0", true),
            ("gzip", "gzip, compress", true),
            ("gzip", "compress, gzip", true),
            ("br", "gzip, compress", false),
            ("br", "gzip, compress, *", true),
            ("br", "gzip, compress, *;q=0.1", true),
            ("br", "gzip, compress, br;q=0.0", false),
            ("br", "gzip, compress, *;q=0.0", false),
            ("br", "gzip;q=1.0, compress;q=0.5, br;q=0.1, *;q=0.0", true),
            ("br", "*;q=0.0, compress;q=0.5, br;q=0.1, gzip;q=1.0", true),
            ("br", " gzip;q=1.0, compress; q=0.5, br;q=0.1, *; q=0.0 ", true),
            ("gzip", "", true),
        ];
        for (coding, header, want) in table {
            assert_eq!(accepts(coding, header), want, "{coding} in {header:?}");
        }
    }
}
