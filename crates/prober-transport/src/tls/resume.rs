//! TLS session resumption (opt-in, [`prober_core::TlsOptions::resumption`]): the sessions of
//! one target, kept per TLS configuration, with the certificate facts of the full handshake
//! that made them.
//!
//! - **Per target.** A [`crate::TlsSessions`] belongs to whatever prepares a spec once for all
//!   its runs (an engine's periodic target, a one-shot spec an engine keeps prepared); every
//!   run of it offers the sessions its earlier runs were given. Nothing is shared between
//!   targets.
//! - **Per configuration.** Within a target, sessions are filed under the configuration that
//!   made them: the TLS options (verification, CA file, client certificate, server name,
//!   versions), the ALPN list and the version of the files the options name (a renewed CA file
//!   or client certificate is another configuration). A run resumes only sessions of its own
//!   configuration; rustls files them by the name sent and verified, so a redirect hop to
//!   another host never resumes the first host's.
//! - **What a resumed run reports.** A resumed handshake sends no certificate and verifies
//!   none: the run reports the certificate facts of the full handshake that made the session,
//!   kept here beside it (rustls gives the chain of that handshake on the resumed connection,
//!   and the facts are found by it). A chain this store has no facts for is verified again,
//!   with the run's own verifier, before the run goes on.
//! - **Expiry.** A verified chain is good until the earliest expiry of its certificates: once
//!   that time has passed, the sessions of that name are dropped before the next connection,
//!   whose full handshake then verifies (and reports) the certificates the server sends now.
//! - **Bounds.** At most [`CONFIGS`] configurations per target (the spec's, and the one
//!   without its server name that redirects to another host use), each with rustls's
//!   in-memory store of [`SERVERS`] server names (one TLS 1.2 session and up to 8 TLS 1.3
//!   tickets each; rustls copies the server's chain into each) and the facts of as many full
//!   handshakes.

use std::sync::{Arc, Mutex, MutexGuard};

use prober_core::TlsOptions;
use rustls::ClientConfig;
use rustls::client::{ClientSessionMemoryCache, ClientSessionStore, Resumption};
use rustls::pki_types::{CertificateDer, ServerName};

use super::verify::{Seen, Verifier};

/// Configurations kept per target: a target has two at most (its options, and those without
/// its server name that a redirect to another host uses); a new version of the files replaces
/// the old one.
const CONFIGS: usize = 2;
/// Server names kept per configuration (rustls's store and the facts alike): the target's host
/// and one other a redirect went to.
const SERVERS: usize = 2;
/// TLS 1.3 tickets rustls keeps per server name (its `ClientSessionMemoryCache`'s).
const TICKETS_PER_SERVER: usize = 8;

/// The sessions of one target (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct Sessions {
    /// Most recently made last.
    configs: Mutex<Vec<Arc<Config>>>,
}

/// What a configuration is: sessions made under one never serve another.
#[derive(Debug, PartialEq, Eq)]
struct ConfigKey {
    opts: TlsOptions,
    alpn: &'static [&'static [u8]],
    /// The version of the files the options name ([`super::TlsMaterial::generation`]).
    generation: u64,
}

/// The sessions of one configuration, and the facts of the full handshakes that made them.
#[derive(Debug)]
pub(crate) struct Config {
    key: ConfigKey,
    store: Arc<ClientSessionMemoryCache>,
    /// The client every run of this configuration uses: rustls resumes a session only with
    /// the verifier and client credentials (by identity) that made it.
    client: Mutex<Option<(Arc<ClientConfig>, Arc<Verifier>)>>,
    /// The facts of the latest full handshake per server name, most recent last.
    facts: Mutex<Vec<(ServerName<'static>, Seen)>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sessions {
    /// The sessions of the configuration `opts` + `alpn` + `generation`, made empty when new.
    /// Sessions of the same options with other versions of their files are dropped.
    pub(crate) fn config(
        &self,
        opts: &TlsOptions,
        alpn: &'static [&'static [u8]],
        generation: u64,
    ) -> Arc<Config> {
        let mut configs = lock(&self.configs);
        if let Some(c) = configs
            .iter()
            .find(|c| c.key.generation == generation && c.key.alpn == alpn && c.key.opts == *opts)
        {
            return c.clone();
        }
        // The same options with other files: what they made must not be resumed any more.
        configs.retain(|c| !(c.key.alpn == alpn && c.key.opts == *opts));
        if configs.len() >= CONFIGS {
            configs.remove(0);
        }
        let config = Arc::new(Config {
            key: ConfigKey { opts: opts.clone(), alpn, generation },
            store: Arc::new(ClientSessionMemoryCache::new(SERVERS * TICKETS_PER_SERVER)),
            client: Mutex::new(None),
            facts: Mutex::new(Vec::new()),
        });
        configs.push(config.clone());
        config
    }
}

impl Config {
    /// What rustls resumes from: this configuration's store, TLS 1.2 session IDs and tickets,
    /// TLS 1.3 tickets.
    pub(super) fn resumption(&self) -> Resumption {
        Resumption::store(self.store.clone())
    }

    /// The client built for this configuration by an earlier run, if any.
    pub(super) fn client(&self) -> Option<(Arc<ClientConfig>, Arc<Verifier>)> {
        lock(&self.client).clone()
    }

    /// Keeps the client built for this configuration, for the runs that follow.
    pub(super) fn keep_client(&self, config: Arc<ClientConfig>, verifier: Arc<Verifier>) {
        *lock(&self.client) = Some((config, verifier));
    }

    /// Before a connection to `name` at `now` (seconds since the epoch): drops the sessions of
    /// `name` when the chain verified by the handshake that made them has expired, so that the
    /// connection makes a full handshake.
    pub(super) fn drop_expired(&self, name: &ServerName<'static>, now: i64) {
        let mut facts = lock(&self.facts);
        let Some(i) = facts.iter().position(|(n, _)| n == name) else { return };
        let seen = &facts[i].1;
        if !seen.verified {
            return;
        }
        match seen.chain_not_after.or(seen.not_after) {
            Some(end) if now <= end => {}
            // Expired, or no expiry could be read: never resumed on trust.
            _ => {
                facts.remove(i);
                drop(facts);
                self.forget(name);
            }
        }
    }

    /// Drops every session of `name`.
    fn forget(&self, name: &ServerName<'static>) {
        self.store.remove_tls12_session(name);
        // Bounded: the store keeps at most TICKETS_PER_SERVER tickets per name.
        for _ in 0..TICKETS_PER_SERVER {
            if self.store.take_tls13_ticket(name).is_none() {
                break;
            }
        }
    }

    /// The facts of the full handshake with `name` whose chain is `chain`, if kept.
    pub(super) fn facts(
        &self,
        name: &ServerName<'_>,
        chain: &[CertificateDer<'_>],
    ) -> Option<Seen> {
        let facts = lock(&self.facts);
        facts.iter().find(|(n, s)| n == name && s.certs.as_slice() == chain).map(|(_, s)| s.clone())
    }

    /// Keeps `seen`, the facts of a handshake with `name` that completed, as that name's.
    pub(super) fn record(&self, name: &ServerName<'static>, seen: &Seen) {
        let mut facts = lock(&self.facts);
        if let Some(i) = facts.iter().position(|(n, _)| n == name) {
            if facts[i].1 == *seen {
                return;
            }
            facts.remove(i);
        }
        if facts.len() >= SERVERS {
            facts.remove(0);
        }
        facts.push((name.clone(), seen.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(cert: &[u8], verified: bool, chain_not_after: Option<i64>) -> Seen {
        Seen {
            not_after: Some(1_000),
            certs: vec![CertificateDer::from(cert.to_vec())],
            verified,
            chain_not_after,
        }
    }

    /// Facts are found by name and chain; a verified chain's facts go (with the sessions of
    /// that name) once its expiry has passed; unverified ones stay (nothing was verified).
    #[test]
    fn facts_by_name_and_chain_and_dropped_at_expiry() {
        let sessions = Sessions::default();
        let config = sessions.config(&TlsOptions::default(), &[], 0);
        let name = ServerName::try_from("a.example").unwrap();
        let other = ServerName::try_from("b.example").unwrap();
        config.record(&name, &seen(b"leaf", true, Some(500)));
        config.record(&other, &seen(b"other", false, None));
        let chain = [CertificateDer::from(b"leaf".to_vec())];
        assert_eq!(config.facts(&name, &chain), Some(seen(b"leaf", true, Some(500))));
        assert_eq!(config.facts(&other, &chain), None, "another name's");
        config.drop_expired(&name, 500);
        assert!(config.facts(&name, &chain).is_some(), "valid up to its expiry");
        config.drop_expired(&name, 501);
        assert_eq!(config.facts(&name, &chain), None);
        config.drop_expired(&other, 10_000);
        let chain = [CertificateDer::from(b"other".to_vec())];
        assert!(config.facts(&other, &chain).is_some());
    }

    /// A configuration is its options, ALPN and files' version: another of any is another
    /// store; the same options with new files replace the old ones; at most CONFIGS are kept.
    #[test]
    fn one_store_per_configuration() {
        let sessions = Sessions::default();
        let opts = TlsOptions { resumption: true, ..TlsOptions::default() };
        let a = sessions.config(&opts, &[], 2);
        assert!(Arc::ptr_eq(&a, &sessions.config(&opts, &[], 2)));
        let named = TlsOptions { server_name: Some("x".into()), ..opts.clone() };
        let b = sessions.config(&named, &[], 2);
        assert!(!Arc::ptr_eq(&a, &b));
        let renewed = sessions.config(&opts, &[], 3);
        assert!(!Arc::ptr_eq(&a, &renewed));
        let kept = lock(&sessions.configs).clone();
        assert_eq!(kept.len(), 2, "the old files' store is gone");
        assert!(
            kept.iter().any(|c| Arc::ptr_eq(c, &b)) && !kept.iter().any(|c| Arc::ptr_eq(c, &a))
        );
        assert!(!Arc::ptr_eq(&renewed, &sessions.config(&opts, &[b"h2"], 3)));
        for g in 10..20 {
            let o = TlsOptions { server_name: Some(format!("n{g}")), ..opts.clone() };
            sessions.config(&o, &[], g);
        }
        assert_eq!(lock(&sessions.configs).len(), CONFIGS);
    }
}
