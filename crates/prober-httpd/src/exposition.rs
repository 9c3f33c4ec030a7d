//! The two Prometheus text formats, chosen as Prometheus expects: the classic text format
//! (`text/plain; version=0.0.4`) unless the scraper's `Accept` header prefers OpenMetrics
//! (`application/openmetrics-text`), as Prometheus' own client libraries negotiate.
//!
//! libprober's own exporters write either format directly (crate `prober-exposition`, whose
//! [`Format`] this is). [`respond`] serves a host whose metrics another library encodes in
//! OpenMetrics (the `prometheus-client` crate, say); the classic format is made from that text: `# EOF` and `# UNIT` lines and exemplars dropped, a
//! counter's family named with its `_total` suffix, `info` as a gauge and `unknown` as
//! `untyped`.

use crate::request::{Request, Response};

/// The two formats and their negotiation are the exposition writer's.
pub use prober_exposition::Format;

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
