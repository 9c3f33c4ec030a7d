//! The connector in another network namespace: its sockets are made by a `prober-netns`
//! thread (`prober_io::netns`) or taken from those the driver keeps for the namespace
//! (`prober_io::NsPools`, issue 37).

use prober_io::Ctx;

use super::{Addrs, ConnectError, ConnectStep, Connector, State};

impl Connector {
    /// [`Connector::start`] in another namespace: a kept socket, a thread's check of the path
    /// for one, or the sockets made by a thread.
    pub(super) fn start_in_netns(&mut self, cx: &mut Ctx<'_>) -> ConnectStep {
        let literal = match self.addrs {
            Addrs::One(addr) if self.name.is_none() && self.plain() => Some(addr),
            _ => None,
        };
        let Some(ns) = &mut self.ns else { return ConnectStep::Pending };
        // An IP literal takes a socket the driver kept for the namespace, while the path's
        // identity was checked recently enough: no thread, no `setns`, no `socket`.
        let now = cx.now;
        let pool = cx.pool().map(|p| p.netns());
        if let (Some(addr), Some(pool)) = (literal, pool) {
            if let Some((socket, id)) = pool.take(&ns.netns, addr.is_ipv6(), now) {
                ns.kept = Some(socket);
                ns.id = Some(id);
                return self.begin(cx);
            }
            // Kept, but checked too long ago: a thread checks the path again and makes a
            // socket only if it names another namespace now.
            if let Some(kept) = pool.kept_identity(&ns.netns, addr.is_ipv6()) {
                ns.asked_at = Some(now);
                ns.checking = true;
                self.state = State::Resolving;
                let answer = ns.answer.clone();
                self.lookup = Some(cx.sockets_in_unless(&ns.netns, vec![addr], kept, answer));
                return ConnectStep::Pending;
            }
        }
        // Otherwise even an IP literal waits for the pool: its socket must be made in the
        // namespace.
        ns.asked_at = Some(now);
        self.state = State::Resolving;
        if self.name.is_some() {
            self.resolve_started = Some(cx.now);
        }
        let addrs = self.addrs.as_slice().to_vec();
        let lookup =
            cx.sockets_in(&ns.netns, self.name.as_deref(), addrs, self.port, ns.answer.clone());
        self.lookup = Some(lookup);
        ConnectStep::Pending
    }

    /// The thread's answer, before the addresses are looked at: the sockets it made (or, after
    /// a check of the path only, a kept one), or the namespace's failure. `None`: go on with
    /// the addresses.
    pub(super) fn netns_answer(&mut self, cx: &mut Ctx<'_>) -> Option<ConnectStep> {
        let ipv6 = self.first_is_ipv6();
        let ns = self.ns.as_mut()?;
        match ns.answer.lock().take() {
            Some(Ok(made)) => {
                let checked_only = std::mem::take(&mut ns.checking) && made.sockets.is_empty();
                ns.sockets = made.sockets.into_iter().map(Some).collect();
                ns.id = Some(made.id);
                // The thread checked the path just now: sockets the driver kept under
                // another identity are closed, those under this one may serve again.
                if let (Some(pool), Some(at)) = (cx.pool(), ns.asked_at) {
                    pool.netns().verified(&ns.netns, made.id, at);
                }
                if checked_only {
                    // The path still names the kept sockets' namespace: take one; or, if
                    // another run took the last meanwhile, have one made after all.
                    let now = cx.now;
                    let kept = cx.pool().and_then(|p| {
                        p.netns().take_verified(&ns.netns, ipv6, now).map(|(s, _)| s)
                    });
                    if kept.is_none() {
                        ns.asked_at = Some(now);
                        let addrs = self.addrs.as_slice().to_vec();
                        let answer = ns.answer.clone();
                        let lookup = cx.sockets_in(&ns.netns, None, addrs, self.port, answer);
                        self.lookup = Some(lookup);
                        return Some(ConnectStep::Pending);
                    }
                    ns.kept = kept;
                }
            }
            Some(Err(e)) => {
                // Whatever is kept for the path is of no use: it is gone, or names
                // something else.
                if let Some(pool) = cx.pool() {
                    pool.netns().forget(&ns.netns);
                }
                self.state = State::Finished;
                let e = ConnectError { reason: e.reason, message: e.message };
                return Some(ConnectStep::Failed(e));
            }
            None => {} // the lookup failed: its error is below
        }
        None
    }
}
