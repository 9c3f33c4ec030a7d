//! The Prometheus text writer of libprober's exporters (`prober serve`'s `/probe` and
//! `/metrics`, `prober watch --metrics`): `# HELP` and `# TYPE` lines, samples with their
//! label values escaped (`\\`, `\"`, `\n`), numbers pushed as text ([`numbers`]), in the
//! classic text format (`text/plain; version=0.0.4`) or OpenMetrics 1.0.0, the one the
//! scraper's `Accept` header prefers ([`Format::negotiate`]).
//!
//! The writer pushes pieces onto a `String` and nothing else: no `core::fmt` for a value
//! (through it a number cost a few hundred instructions, a float's shortest digits about a
//! thousand) and no allocation of its own, since `prober serve` writes a `/probe` answer of
//! about 25 numbers per request.
//!
//! ```
//! use prober_exposition::{Format, Kind, family, sample, finish};
//!
//! let mut out = String::new();
//! let format = Format::negotiate(Some("application/openmetrics-text"));
//! family(&mut out, format, "runs_total", "Runs.", Kind::Counter);
//! sample(&mut out, "runs_total", &[("target", "a \"b\"")], 3u64);
//! finish(&mut out, format);
//! assert_eq!(
//!     out,
//!     "# HELP runs Runs.\n# TYPE runs counter\nruns_total{target=\"a \\\"b\\\"\"} 3\n# EOF\n"
//! );
//! ```

pub mod numbers;

pub use numbers::{Number, Secs};

/// A text format of the exposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The classic text format, version 0.0.4.
    Text,
    /// OpenMetrics 1.0.0.
    OpenMetrics,
}

impl Format {
    /// The format an `Accept` header asks for: the acceptable media range with the highest
    /// `q` (the first of equals), the classic format when none is or there is no header.
    pub fn negotiate(accept: Option<&str>) -> Format {
        let mut best: Option<(f32, Format)> = None;
        for range in accept.unwrap_or_default().split(',') {
            let mut params = range.split(';');
            let media = params.next().unwrap_or_default().trim().to_ascii_lowercase();
            let (mut q, mut version) = (1.0f32, None);
            for p in params {
                let Some((k, v)) = p.split_once('=') else { continue };
                match k.trim().to_ascii_lowercase().as_str() {
                    "q" => q = v.trim().parse().unwrap_or(0.0),
                    "version" => version = Some(v.trim().trim_matches('"').to_string()),
                    _ => {}
                }
            }
            let format = match media.as_str() {
                "application/openmetrics-text"
                    if matches!(version.as_deref(), None | Some("1.0.0" | "0.0.1")) =>
                {
                    Format::OpenMetrics
                }
                "text/plain" | "text/*" | "*/*" => Format::Text,
                _ => continue,
            };
            if q > 0.0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, format));
            }
        }
        best.map_or(Format::Text, |(_, f)| f)
    }

    /// Its `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// A metric family's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A value that goes up and down.
    Gauge,
    /// A count that only grows; its sample is named `NAME_total`.
    Counter,
    /// Buckets, a sum and a count (`NAME_bucket`, `NAME_sum`, `NAME_count`).
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Gauge => "gauge",
            Kind::Counter => "counter",
            Kind::Histogram => "histogram",
        }
    }
}

/// A family's `# HELP` and `# TYPE` lines. `name` is the family's name as the classic format
/// writes it: a counter's with its `_total` (OpenMetrics names the family without it, its
/// sample with it). `help` is the program's own text (a `'static` string: never a peer's or a
/// file's), written as it is in the classic format, whose HELP escapes only `\` and newline,
/// which no help text of libprober holds; escaped in OpenMetrics (which escapes `"` too). So
/// the answer that `/probe` writes per request scans none of its help texts (about 900 bytes).
pub fn family(out: &mut String, format: Format, name: &str, help: &'static str, kind: Kind) {
    let family = match (format, kind) {
        (Format::OpenMetrics, Kind::Counter) => name.strip_suffix("_total").unwrap_or(name),
        _ => name,
    };
    out.push_str("# HELP ");
    out.push_str(family);
    out.push(' ');
    match format {
        Format::Text => out.push_str(help),
        Format::OpenMetrics => push_escaped(out, help),
    }
    for piece in ["\n# TYPE ", family, " ", kind.as_str(), "\n"] {
        out.push_str(piece);
    }
}

/// One sample line: `name{label="value",...} value`, the label values escaped.
pub fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl Number) {
    out.push_str(name);
    push_labels(out, labels);
    out.push(' ');
    value.push_to(out);
    out.push('\n');
}

/// A gauge family with its one sample, in the classic format (as `/probe` answers, about 15
/// of them per request): what [`family`] and [`sample`] write, its fixed text pushed in one
/// go.
pub fn gauge(out: &mut String, name: &str, help: &'static str, value: impl Number) {
    for piece in ["# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n", name, " "] {
        out.push_str(piece);
    }
    value.push_to(out);
    out.push('\n');
}

/// `{name="value",...}` (nothing for no labels), the values escaped.
pub fn push_labels(out: &mut String, labels: &[(&str, &str)]) {
    if labels.is_empty() {
        return;
    }
    let mut separator = "{";
    for (name, value) in labels {
        for piece in [separator, name, "=\""] {
            out.push_str(piece);
        }
        push_escaped(out, value);
        out.push('"');
        separator = ",";
    }
    out.push('}');
}

/// `text` escaped as a label value (and OpenMetrics' HELP) wants it: `\` as `\\`, `"` as `\"`,
/// a newline as `\n`.
pub fn push_escaped(out: &mut String, text: &str) {
    // A plain loop over the bytes: most values (a phase's name) need nothing.
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && !matches!(bytes[i], b'\\' | b'"' | b'\n') {
        i += 1;
    }
    if i == bytes.len() {
        out.push_str(text);
        return;
    }
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// The end of an exposition: OpenMetrics' `# EOF`; nothing in the classic format.
pub fn finish(out: &mut String, format: Format) {
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        let om = Format::OpenMetrics;
        assert_eq!(Format::negotiate(None), Format::Text);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text);
        assert_eq!(Format::negotiate(Some("application/openmetrics-text")), om);
        // Prometheus' own header, preferring OpenMetrics.
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
            application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        assert_eq!(Format::negotiate(Some(prometheus)), om);
        // And configured to prefer the classic format.
        let classic = "text/plain;version=0.0.4;q=0.5,application/openmetrics-text;q=0.4";
        assert_eq!(Format::negotiate(Some(classic)), Format::Text);
        assert_eq!(
            Format::negotiate(Some("application/openmetrics-text;version=2.0.0")),
            Format::Text
        );
        assert_eq!(Format::negotiate(Some("application/json")), Format::Text);
    }

    #[test]
    fn label_values_escaped() {
        let mut out = String::new();
        sample(&mut out, "x", &[("a", "b\\c\"d\ne"), ("f", "plain")], 1u8);
        assert_eq!(out, "x{a=\"b\\\\c\\\"d\\ne\",f=\"plain\"} 1\n");
    }

    #[test]
    fn both_formats() {
        let write = |format| {
            let mut out = String::new();
            family(&mut out, format, "runs_total", "Probe \"runs\".", Kind::Counter);
            sample(&mut out, "runs_total", &[], 2u64);
            family(&mut out, format, "up", "Up.", Kind::Gauge);
            sample(&mut out, "up", &[("t", "a")], -1i64);
            finish(&mut out, format);
            out
        };
        assert_eq!(
            write(Format::Text),
            "# HELP runs_total Probe \"runs\".\n# TYPE runs_total counter\nruns_total 2\n\
             # HELP up Up.\n# TYPE up gauge\nup{t=\"a\"} -1\n"
        );
        assert_eq!(
            write(Format::OpenMetrics),
            "# HELP runs Probe \\\"runs\\\".\n# TYPE runs counter\nruns_total 2\n\
             # HELP up Up.\n# TYPE up gauge\nup{t=\"a\"} -1\n# EOF\n"
        );
    }

    #[test]
    fn a_gauge_as_probe_answers_it() {
        let mut parts = String::new();
        family(&mut parts, Format::Text, "g", "G.", Kind::Gauge);
        sample(&mut parts, "g", &[], 7u8);
        let mut whole = String::new();
        gauge(&mut whole, "g", "G.", 7u8);
        assert_eq!(whole, parts);
        let mut out = String::new();
        gauge(&mut out, "probe_success", "Displays whether or not the probe was a success", 1u8);
        assert_eq!(
            out,
            "# HELP probe_success Displays whether or not the probe was a success\n\
             # TYPE probe_success gauge\nprobe_success 1\n"
        );
    }
}
