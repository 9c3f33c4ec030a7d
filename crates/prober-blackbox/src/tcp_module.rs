//! A `prober: tcp` module as the library's TCP probe with steps (blackbox_exporter v0.28.0's
//! `query_response`: `expect`, `expect_bytes`, `labels`, `send`, `starttls`), and what the
//! metrics need of the steps afterwards.

use std::path::Path;

use prober::ProbeSpec;
use prober_core::{Pattern, TcpStep};

use crate::config::{QueryResponse, TcpModule};
use crate::ip_protocol::ip_family;
use crate::module::{Module, QrStep};
use crate::options::tls_options;

/// Fills `m` from the module's `tcp:` section.
pub(crate) fn tcp(m: &mut Module, t: &TcpModule, base: &Path) -> Result<(), String> {
    let family = ip_family(t.preferred_ip_protocol.as_deref(), t.ip_protocol_fallback, "tcp")?;
    let mut spec = ProbeSpec::tcp("localhost", 1).map_err(|e| e.to_string())?;
    spec.set_ip_family(family).map_err(|e| e.to_string())?;
    // blackbox_exporter's `dialTCP`: the dialer's `LocalAddr` when the text is not empty. Go's
    // dialer then keeps only the chosen address if it is of the source's family ("no
    // suitable address found" otherwise), as the library's connector does. Text that is not
    // an address fails each of blackbox's probes; here the module is refused at start.
    if let Some(text) = t.source_ip_address.as_deref().filter(|s| !s.is_empty()) {
        let ip = prober::parse_source_address(text)
            .map_err(|e| format!("tcp.source_ip_address: {e}"))?;
        spec.set_source_address(Some(ip)).map_err(|e| e.to_string())?;
    }
    let (steps, qr) = query_response(&t.query_response, "tcp")?;
    let starttls = steps.iter().any(|s| s.starttls);
    if t.tls && starttls {
        return Err("tcp.query_response: starttls with tcp.tls: true would run TLS inside TLS, \
                    which prober serve does not do"
            .into());
    }
    if t.tls || starttls {
        spec.set_tls(tls_options(t.tls_config.as_ref(), base)?).map_err(|e| e.to_string())?;
        m.tls = true;
    }
    spec.set_tcp_steps(steps).map_err(|e| format!("tcp.query_response: {e}"))?;
    m.template = spec;
    m.query_response = qr;
    Ok(())
}

/// blackbox_exporter's `query_response` as the library's steps, one for one (so the library's
/// "step N" is `query_response[N-1]`): an `expect` reads lines until one matches (the same
/// line-wise reading as its `bufio.Scanner`), an `expect_bytes` reads that many bytes and
/// compares them, a `send` is written with a newline unless it is empty once expanded (then
/// nothing is written) and, after an `expect`, is a template of its match (`${1}`), as
/// `Regexp.Expand` makes it. `prober` names the section in messages (`tcp`, `unix`).
pub(crate) fn query_response(
    list: &[QueryResponse],
    prober: &str,
) -> Result<(Vec<TcpStep>, Vec<QrStep>), String> {
    let mut steps = Vec::with_capacity(list.len());
    let mut qr_steps = Vec::with_capacity(list.len());
    for (i, qr) in list.iter().enumerate() {
        let at = format!("{prober}.query_response[{i}]");
        let expect = match &qr.expect {
            Some(e) => Some(Pattern::new(e).map_err(|e| format!("{at}.expect: {e}"))?),
            None => None,
        };
        // Go's `[]byte(s)`: the string's UTF-8 bytes; empty is none (`if qr.ExpectBytes != ""`).
        let expect_bytes = qr.expect_bytes.clone().map(String::into_bytes).unwrap_or_default();
        if expect.is_some() && !expect_bytes.is_empty() {
            return Err(format!("{at}: expect and expect_bytes are mutually exclusive"));
        }
        let labels = labels(&at, qr)?;
        // blackbox_exporter expands `send` first and writes it with a `\n` only when the
        // expansion is not empty (`if send != ""`): the step's `line` does the same.
        let send = qr.send.clone().map(String::into_bytes).unwrap_or_default();
        let expand = expect.is_some() && !send.is_empty();
        qr_steps.push(QrStep {
            expect: expect.clone(),
            bytes: expect_bytes.len(),
            labels,
            starttls: qr.starttls,
        });
        steps.push(TcpStep {
            expect,
            expect_bytes,
            send,
            expand,
            line: true,
            starttls: qr.starttls,
        });
    }
    // blackbox_exporter registers `probe_expect_info` once per step with labels whose expect
    // matched: a second one panics its registry and the scrape gets no answer. Refused here.
    if qr_steps.iter().filter(|s| s.expect.is_some() && !s.labels.is_empty()).count() > 1 {
        return Err(format!(
            "{prober}.query_response: labels on more than one step with expect (each would \
             write its own probe_expect_info, which blackbox_exporter cannot serve)"
        ));
    }
    Ok((steps, qr_steps))
}

/// A step's `labels`, checked as client_golang checks them when the metric is made (which
/// in blackbox_exporter is at each probe, failing the scrape): valid names, none twice.
fn labels(at: &str, qr: &QueryResponse) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(qr.labels.len());
    for l in &qr.labels {
        let mut chars = l.name.chars();
        let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !l.name.starts_with("__");
        if !valid {
            return Err(format!(
                "{at}.labels: {:?} is not a label name ([a-zA-Z_][a-zA-Z0-9_]*, not __*)",
                l.name
            ));
        }
        if out.iter().any(|(n, _)| *n == l.name) {
            return Err(format!("{at}.labels: {:?} is given twice", l.name));
        }
        out.push((l.name.clone(), l.value.clone()));
    }
    Ok(out)
}
