//! Which of the addresses a connector has are raced: those of the address family asked for,
//! then those of the source address's family, then those the allow-list admits. Each step
//! drops the others (and a namespace's sockets made for them), or fails the connect, naming
//! why, when none is left.

use std::net::SocketAddr;

use prober_core::{IpFamily, Reason, source_family_admits};

use super::{Addrs, ConnectError, ConnectStep, Connector, State, join_host_port};

impl Connector {
    /// Drops the addresses of the family not chosen; `Some(Failed)` when the family required
    /// has none.
    ///
    /// With an allow-list, a preference looks only at the addresses the list admits: a name
    /// whose IPv6 addresses are all refused goes to its admitted IPv4 ones rather than fail
    /// (the allow-list still checks each address connected to, after this).
    pub(super) fn apply_family(&mut self) -> Option<ConnectStep> {
        let admitted: Option<Vec<SocketAddr>> = match (&self.filter, self.family) {
            (Some(f), IpFamily::PreferV4 | IpFamily::PreferV6) => {
                let name = self.name.as_deref();
                Some(
                    self.addrs
                        .as_slice()
                        .iter()
                        .filter(|a| f.check(name, **a).is_ok())
                        .copied()
                        .collect(),
                )
            }
            _ => None,
        };
        if admitted.as_ref().is_some_and(Vec::is_empty) {
            return None; // none is admitted: the allow-list says so, naming an address
        }
        let basis = admitted.as_deref().unwrap_or(self.addrs.as_slice());
        let wanted = match self.family.select(basis) {
            Ok(None) => return None,
            Ok(Some(v6)) => v6,
            Err(v6) => return Some(self.fail_family(v6)),
        };
        let keep: Vec<bool> =
            self.addrs.as_slice().iter().map(|a| IpFamily::is_v6(a.ip()) == wanted).collect();
        self.retain(&keep);
        None
    }

    /// Keeps the addresses whose `keep` is true (an IP literal's one address always stays).
    fn retain(&mut self, keep: &[bool]) {
        if let Addrs::List(list) = &mut self.addrs {
            let mut kept = keep.iter();
            list.retain(|_| kept.next() == Some(&true));
            // A namespace's sockets were made one per address, in the list's order: they go
            // with their addresses (the others are closed here, unused).
            if let Some(ns) = &mut self.ns {
                let mut kept = keep.iter();
                ns.sockets.retain(|_| kept.next() == Some(&true));
            }
        }
    }

    /// Drops the addresses of the other family than the source address's; `Some(Failed)`
    /// when none is left.
    pub(super) fn apply_source(&mut self) -> Option<ConnectStep> {
        let source = self.source?;
        let keep: Vec<bool> =
            self.addrs.as_slice().iter().map(|a| source_family_admits(source, *a)).collect();
        if keep.contains(&true) {
            self.retain(&keep);
            return None;
        }
        self.state = State::Finished;
        let (mine, other) =
            if IpFamily::is_v6(source) { ("IPv6", "IPv4") } else { ("IPv4", "IPv6") };
        let theirs = match (&self.name, self.family) {
            (None, _) => format!("{} is {other}", self.host()),
            (Some(name), IpFamily::Any) => format!("{name} has {other} addresses only"),
            (Some(name), f) => {
                format!("address family {} chose {other} addresses of {name}", f.name())
            }
        };
        let message = format!(
            "dial tcp {}: no suitable address found: the source address {source} is {mine} and {theirs}",
            self.source_to(join_host_port(&self.host(), self.port)),
        );
        Some(ConnectStep::Failed(ConnectError { reason: Reason::Dns, message }))
    }

    /// No address of the family required (`v6`): a name's lookup found none, or the IP
    /// literal is of the other family.
    fn fail_family(&mut self, v6: bool) -> ConnectStep {
        self.state = State::Finished;
        let (net, want, other) =
            if v6 { ("tcp6", "IPv6", "IPv4") } else { ("tcp4", "IPv4", "IPv6") };
        let message = match (&self.name, self.addrs.as_slice().first()) {
            (Some(name), _) => {
                format!(
                    "dial {net}: lookup {name}: no {want} address (only {want} was asked for; the name has {other} addresses only)"
                )
            }
            (None, Some(a)) => {
                format!(
                    "dial {net} {a}: {} is an {other} address (only {want} was asked for)",
                    a.ip()
                )
            }
            (None, None) => format!("dial {net}: no {want} address"),
        };
        ConnectStep::Failed(ConnectError { reason: Reason::Dns, message })
    }

    /// Drops the addresses the filter refuses; `Some(Failed)` when none is left.
    pub(super) fn apply_filter(&mut self) -> Option<ConnectStep> {
        let filter = self.filter.as_deref()?;
        let name = self.name.as_deref();
        let refused = match &mut self.addrs {
            Addrs::One(a) => filter.check(name, *a).err().map(|e| (*a, e)),
            Addrs::List(list) => {
                let mut first = None;
                let keep: Vec<bool> = list
                    .iter()
                    .map(|a| match filter.check(name, *a) {
                        Ok(()) => true,
                        Err(e) => {
                            first.get_or_insert((*a, e));
                            false
                        }
                    })
                    .collect();
                let empty = !keep.contains(&true);
                self.retain(&keep);
                first.filter(|_| empty)
            }
        };
        let (addr, why) = refused?;
        self.state = State::Finished;
        Some(ConnectStep::Failed(ConnectError {
            reason: Reason::Denied,
            message: format!("dial tcp {addr}: not allowed: {why}"),
        }))
    }
}
