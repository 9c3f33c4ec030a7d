//! The two Prometheus text formats, chosen as Prometheus expects: the classic text format
//! (`text/plain; version=0.0.4`) unless the scraper's `Accept` header prefers OpenMetrics
//! (`application/openmetrics-text`), as Prometheus' own client libraries negotiate.
//!
//! Metrics are encoded once, in OpenMetrics (what the `prometheus-client` crate writes); the
//! classic format is made from that text: `# EOF` and `# UNIT` lines and exemplars dropped, a
//! counter's family named with its `_total` suffix, `info` as a gauge and `unknown` as
//! `untyped`.

use crate::request::{Request, Response};

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

/// The answer to a scrape: `openmetrics` (the exposition in OpenMetrics) in the format the
/// request's `Accept` header asks for.
pub fn respond(req: &Request, openmetrics: String) -> Response {
    let format = Format::negotiate(req.header("accept"));
    let body = match format {
        Format::OpenMetrics => openmetrics,
        Format::Text => to_text(&openmetrics),
    };
    Response::new(200, format.content_type(), body)
}

/// The classic text format of an OpenMetrics exposition.
pub fn to_text(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    // OpenMetrics says HELP before TYPE, and the name HELP carries depends on the type.
    let mut help: Option<(&str, &str)> = None;
    let write_help = |out: &mut String, name: &str, text: &str| {
        // OpenMetrics escapes `"` in HELP; the classic format does not.
        out.push_str(&format!("# HELP {name} {}\n", text.replace("\\\"", "\"")));
    };
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            if let Some((name, text)) = help.take() {
                write_help(&mut out, name, text);
            }
            help = Some(rest.split_once(' ').unwrap_or((rest, "")));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (family, kind) = rest.rsplit_once(' ').unwrap_or((rest, "unknown"));
            let (name, kind) = match kind {
                "counter" => (format!("{family}_total"), "counter"),
                "info" => (format!("{family}_info"), "gauge"),
                "gauge" | "histogram" | "summary" => (family.to_string(), kind),
                _ => (family.to_string(), "untyped"),
            };
            if let Some((h, text)) = help.take() {
                write_help(&mut out, if h == family { &name } else { h }, text);
            }
            out.push_str(&format!("# TYPE {name} {kind}\n"));
        } else if line.starts_with('#') {
            // # UNIT, # EOF: not in the classic format.
        } else if !line.is_empty() {
            out.push_str(without_exemplar(line));
            out.push('\n');
        }
    }
    if let Some((name, text)) = help {
        write_help(&mut out, name, text);
    }
    out
}

/// A sample line without its exemplar (` # {labels} value`, after the labels and value).
fn without_exemplar(line: &str) -> &str {
    // The labels may hold " # " inside quotes: look only after the closing brace.
    let after = match line.find('{') {
        Some(open) => {
            let mut in_quotes = false;
            let mut escaped = false;
            let mut close = None;
            for (i, c) in line[open..].char_indices() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => in_quotes = !in_quotes,
                    '}' if !in_quotes => {
                        close = Some(open + i);
                        break;
                    }
                    _ => {}
                }
            }
            close.unwrap_or(0)
        }
        None => 0,
    };
    match line[after..].find(" # ") {
        Some(i) => &line[..after + i],
        None => line,
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
    fn classic_from_openmetrics() {
        let om = "# HELP runs Probe \\\"runs\\\".\n# TYPE runs counter\n\
            runs_total{target=\"a # b\"} 3 # {trace=\"x\"} 1\n\
            # HELP d Durations.\n# TYPE d histogram\n# UNIT d seconds\nd_count 1\n\
            # HELP up Up.\n# TYPE up gauge\nup 1\n# TYPE x unknown\nx 2\n# EOF\n";
        assert_eq!(
            to_text(om),
            "# HELP runs_total Probe \"runs\".\n# TYPE runs_total counter\n\
             runs_total{target=\"a # b\"} 3\n\
             # HELP d Durations.\n# TYPE d histogram\nd_count 1\n\
             # HELP up Up.\n# TYPE up gauge\nup 1\n# TYPE x untyped\nx 2\n"
        );
    }
}
