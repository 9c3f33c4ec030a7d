//! What DNS and ICMP runs found out, in the words a user looks for: the rcode and the answer
//! records as `dig` shows them, and the counts and round-trip times that `ping -c` sums up.
//! Every human line of the command (`prober check`, and `prober watch`'s changes and runs)
//! adds [`details`] to its parenthesis; `prober check --json` adds [`json()`]'s objects.

use std::time::Duration;

use prober::{DnsFacts, EchoStats, IcmpFacts, IcmpSocketKind, Outcome};
use serde_json::{Value, json};

use crate::escape::escape_for_terminal;

/// How much of the answers a human line shows, in characters (the JSON has them all).
const ANSWERS_CHARS: usize = 200;

/// The short facts of a DNS or ICMP outcome, for the parenthesis of a human line:
/// `NOERROR, 2 answers` or `3 sent, 3 received, 0% loss, rtt min/avg/max/mdev =
/// 0.041/0.052/0.068/0.011 ms`. Empty for other kinds (and for a run that ended before it
/// asked anything).
pub fn details(o: &Outcome) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(d) = &o.dns {
        dns_details(d, &mut out);
    }
    if let Some(i) = &o.icmp {
        icmp_details(&i.stats, &mut out);
    }
    out
}

fn dns_details(d: &DnsFacts, out: &mut Vec<String>) {
    let Some(rcode) = d.rcode else { return };
    out.push(prober_dns::validate::rcode_name(rcode));
    let s = if d.answer_rrs == 1 { "" } else { "s" };
    out.push(format!("{} answer{s}", d.answer_rrs));
    if d.retried_over_tcp {
        out.push("truncated, retried over TCP".into());
    } else if d.truncated {
        out.push("truncated".into());
    }
}

fn icmp_details(s: &EchoStats, out: &mut Vec<String>) {
    if s.sent == 0 {
        return;
    }
    let loss = s.loss() * 100.0;
    out.push(format!("{} sent, {} received, {}% loss", s.sent, s.received, percent(loss)));
    if let (Some(min), Some(avg), Some(max), Some(mdev)) = (s.min, s.avg, s.max, s.stddev) {
        out.push(format!(
            "rtt min/avg/max/mdev = {}/{}/{}/{} ms",
            ms(min),
            ms(avg),
            ms(max),
            ms(mdev)
        ));
    }
}

/// A loss percentage as ping prints it: whole when it is whole (`0`, `100`, `50`), else with
/// up to three decimals (`33.333`).
fn percent(p: f64) -> String {
    if p.fract() == 0.0 { format!("{p:.0}") } else { format!("{p:.3}") }
}

/// Milliseconds with microseconds, as ping prints round-trip times.
fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

/// The answer records of a DNS outcome (its output, one record a line) on one line for a
/// terminal: tabs made spaces, records joined with `; `, cut at 200 characters
/// (`...` when cut, or when the probe kept only part of them). `None` for other kinds and for
/// an answer without records.
pub fn dns_answers(o: &Outcome) -> Option<String> {
    o.dns.as_ref()?;
    let text = o.output_lossy();
    let records: Vec<String> =
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| l.replace('\t', " ")).collect();
    if records.is_empty() {
        return None;
    }
    let joined = records.join("; ");
    let (mut shown, cut) = match joined.char_indices().nth(ANSWERS_CHARS) {
        None => (joined.clone(), o.truncated),
        Some((end, _)) => (joined[..end].to_string(), true),
    };
    if cut {
        shown.push_str("...");
    }
    Some(escape_for_terminal(&shown).into_owned())
}

/// The facts as JSON objects under their kind's key (`"dns"` or `"icmp"`), for `prober check
/// --json`: `None` for other kinds. Durations in milliseconds, as the line's other timings.
pub fn json(o: &Outcome) -> Option<(&'static str, Value)> {
    if let Some(d) = &o.dns {
        return Some(("dns", dns_json(d)));
    }
    o.icmp.as_ref().map(|i| ("icmp", icmp_json(i)))
}

fn dns_json(d: &DnsFacts) -> Value {
    json!({
        "query_succeeded": d.query_succeeded,
        "rcode": d.rcode.map(prober_dns::validate::rcode_name),
        "answer_rrs": d.answer_rrs,
        "authority_rrs": d.authority_rrs,
        "additional_rrs": d.additional_rrs,
        "serial": d.serial,
        "truncated": d.truncated,
        "retried_over_tcp": d.retried_over_tcp,
        "ignored": d.ignored,
    })
}

fn icmp_json(i: &IcmpFacts) -> Value {
    let s = &i.stats;
    // Microsecond precision, as the line's other timings.
    let millis = |d: Option<Duration>| d.map(|d| (d.as_secs_f64() * 1e6).round() / 1e3);
    json!({
        "sent": s.sent,
        "received": s.received,
        "loss": s.loss(),
        "rtt_min_ms": millis(s.min),
        "rtt_avg_ms": millis(s.avg),
        "rtt_max_ms": millis(s.max),
        "rtt_stddev_ms": millis(s.stddev),
        "reply_hop_limit": s.reply_hop_limit,
        "socket": i.socket.map(|k| match k {
            IcmpSocketKind::Unprivileged => "unprivileged",
            IcmpSocketKind::Raw => "raw",
        }),
        "icmp_error": s.last_error.map(|e| e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_words_for_the_echo_counts() {
        let stats = EchoStats {
            sent: 3,
            received: 2,
            min: Some(Duration::from_micros(41)),
            avg: Some(Duration::from_micros(52)),
            max: Some(Duration::from_micros(68)),
            stddev: Some(Duration::from_micros(11)),
            ..EchoStats::default()
        };
        let mut o = Outcome::success();
        o.icmp = Some(Box::new(IcmpFacts { stats, ..IcmpFacts::default() }));
        assert_eq!(
            details(&o),
            [
                "3 sent, 2 received, 33.333% loss",
                "rtt min/avg/max/mdev = 0.041/0.052/0.068/0.011 ms"
            ]
        );
        assert_eq!(json(&o).unwrap().1["received"], 2);
    }

    #[test]
    fn answers_on_one_line() {
        let mut o = Outcome::success();
        o.dns = Some(Box::new(DnsFacts {
            rcode: Some(3),
            answer_rrs: 1,
            query_succeeded: true,
            ..DnsFacts::default()
        }));
        assert_eq!(details(&o), ["NXDOMAIN", "1 answer"]);
        assert_eq!(dns_answers(&o), None);
        o.output = b"a.test.\t60\tIN\tA\t192.0.2.1\na.test.\t60\tIN\tTXT\t\"\x1b[2J\"\n".to_vec();
        assert_eq!(
            dns_answers(&o).unwrap(),
            "a.test. 60 IN A 192.0.2.1; a.test. 60 IN TXT \"\\x1b[2J\""
        );
        o.output = "x".repeat(300).into_bytes();
        assert_eq!(dns_answers(&o).unwrap(), format!("{}...", "x".repeat(200)));
    }
}
