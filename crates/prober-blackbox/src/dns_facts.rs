//! The DNS prober's own metrics (`probe_dns_*` beside the lookup time every prober has), as
//! blackbox_exporter v0.28.0's `ProbeDNS` writes them: the phases and the section counts are
//! registered before the query (0 until an answer comes), `probe_dns_serial` only for an SOA
//! query that was answered. Two calls, since the lookup gauge falls between them in the
//! answer's alphabetical order.

use prober::Outcome;
use prober_core::{DnsFacts, ProbeKind};

use crate::facts::{gauge, gauge_family, sample};
use crate::module::Module;
use crate::numbers::Secs;

/// The query type of `probe_dns_serial`.
const TYPE_SOA: u16 = 6;

/// The gauges whose names sort before `probe_dns_lookup_time_seconds`: the section counts and
/// the phases. `o` is `None` for a target the prober gave up on (all 0).
pub(crate) fn before_lookup(s: &mut String, o: Option<&Outcome>) {
    let none = DnsFacts::default();
    let f = o.and_then(|o| o.dns.as_deref()).unwrap_or(&none);
    gauge(
        s,
        "probe_dns_additional_rrs",
        "Returns number of entries in the additional resource record list",
        f.additional_rrs,
    );
    gauge(
        s,
        "probe_dns_answer_rrs",
        "Returns number of entries in the answer resource record list",
        f.answer_rrs,
    );
    gauge(
        s,
        "probe_dns_authority_rrs",
        "Returns number of entries in the authority resource record list",
        f.authority_rrs,
    );
    let name = "probe_dns_duration_seconds";
    gauge_family(s, name, "Duration of DNS request by phase");
    // client_golang writes a vector's series sorted by label value.
    let p = &f.phases;
    for (phase, d) in [("connect", p.connect), ("request", p.request), ("resolve", p.resolve)] {
        sample(s, name, &[("phase", phase)], Secs(d));
    }
}

/// The gauges whose names sort after `probe_dns_lookup_time_seconds`: whether an answer came,
/// and for an answered SOA query the serial of the answer's last SOA record (0 without one).
pub(crate) fn after_lookup(s: &mut String, m: &Module, o: Option<&Outcome>) {
    let f = o.and_then(|o| o.dns.as_deref());
    let answered = f.is_some_and(|f| f.query_succeeded);
    gauge(
        s,
        "probe_dns_query_succeeded",
        "Displays whether or not the query was executed successfully",
        u8::from(answered),
    );
    let soa = matches!(&m.template.kind, ProbeKind::Dns(d) if d.query_type == TYPE_SOA);
    if soa && answered {
        let serial = f.and_then(|f| f.serial).unwrap_or(0);
        gauge(s, "probe_dns_serial", "Returns the serial number of the zone", serial);
    }
}
