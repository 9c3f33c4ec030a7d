//! The expiry of the verified chain, as Go computes it for blackbox_exporter's
//! `probe_ssl_last_chain_expiry_timestamp_seconds`: over every chain the verifier can build
//! from the leaf through the certificates the server sent to a trust anchor, the earliest
//! `notAfter` in each chain (the anchor's own certificate included), and the latest of those.
//!
//! The certificates the server sent are not the chain: a server that still sends an older
//! copy of its root (cross-signed, or self-signed with the same key) verifies through the
//! newer root of the trust store as well, and that copy's expiry must not count. The paths
//! are those webpki (rustls's verifier) builds, with its checks, its loop prevention and its
//! budget (at most 100 signature checks and 200,000 path steps per search), so what a
//! hostile server sends costs no more than rustls's own verification of it.

use std::cell::Cell;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, TrustAnchor, UnixTime};

/// A trust store with each anchor's own `notAfter`: webpki's anchors are a name and a key,
/// and a chain's expiry counts the root's as Go's verified chains do.
#[derive(Debug)]
pub(super) struct TrustRoots {
    /// What the verifier is built from.
    pub(super) store: Arc<RootCertStore>,
    /// The `notAfter` of `store.roots[i]`'s certificate (`None`: not readable).
    not_after: Vec<Option<i64>>,
}

impl TrustRoots {
    /// No anchor yet.
    pub(super) fn new() -> TrustRoots {
        TrustRoots { store: Arc::new(RootCertStore::empty()), not_after: Vec::new() }
    }

    /// Adds `cert` as a trust anchor (with its expiry).
    ///
    /// # Errors
    /// rustls's, for a certificate that cannot be an anchor.
    pub(super) fn add(&mut self, cert: CertificateDer<'static>) -> Result<(), rustls::Error> {
        let not_after = crate::cert::not_after(cert.as_ref());
        Arc::make_mut(&mut self.store).add(cert)?;
        self.not_after.push(not_after);
        Ok(())
    }

    /// How many anchors there are.
    pub(super) fn len(&self) -> usize {
        self.store.roots.len()
    }

    /// The expiry of `anchor`, one of `store.roots` (found by address: two anchors may have
    /// the same name and key, a root and its renewed copy, and differ only in expiry).
    fn anchor_not_after(&self, anchor: &TrustAnchor<'_>) -> Option<i64> {
        let i = self.store.roots.iter().position(|a| std::ptr::eq(a, anchor))?;
        self.not_after.get(i).copied().flatten()
    }

    /// The latest expiry over the chains from `end_entity` through `intermediates` to an
    /// anchor that verify at `now` (see the module docs); `None` when none does.
    pub(super) fn latest_chain_not_after(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
        algorithms: &WebPkiSupportedAlgorithms,
    ) -> Option<i64> {
        let leaf = webpki::EndEntityCert::try_from(end_entity).ok()?;
        let leaf_not_after = crate::cert::not_after(end_entity.as_ref());
        let latest = Cell::new(None::<i64>);
        let record = |path: &webpki::VerifiedPath<'_>| {
            let expiries = path
                .intermediate_certificates()
                .map(|c| crate::cert::not_after(c.der().as_ref()))
                .chain([leaf_not_after, self.anchor_not_after(path.anchor())]);
            if let Some(earliest) = expiries.flatten().min() {
                latest.set(Some(latest.get().map_or(earliest, |l| l.max(earliest))));
            }
            // Refused, so that webpki goes on to the next path: every one is seen.
            Err(webpki::Error::UnknownIssuer)
        };
        // Its verdict is always a refusal (see above), or its budget spent: only the paths
        // recorded count, and rustls has given the verdict already.
        let _ = leaf.verify_for_usage(
            algorithms.all,
            &self.store.roots,
            intermediates,
            now,
            webpki::KeyUsage::server_auth(),
            None,
            Some(&record),
        );
        latest.get()
    }
}
