//! [`TlsSessions`]: the TLS sessions one target keeps between its runs when its TLS options
//! ask for resumption ([`prober_core::TlsOptions::resumption`]).

use std::sync::Arc;

use prober_core::TlsOptions;

/// The TLS sessions of one target, kept between its runs (opt-in: see
/// [`TlsOptions::resumption`]). Whoever prepares a spec once for all its runs makes one
/// ([`TlsSessions::for_options`]) and lends it to every dial ([`crate::dial::Endpoint`]'s
/// `tls_sessions`); a run offers what the earlier runs were given. Sessions are filed by TLS
/// configuration (options, ALPN, the version of the files the options name) and server name,
/// so that a configuration never resumes another's; see the `tls` module's `resume` part for
/// the bounds and for what a resumed run reports. Without the `tls` feature it holds nothing.
#[derive(Debug, Default)]
pub struct TlsSessions {
    #[cfg(feature = "tls")]
    pub(crate) inner: crate::tls::resume::Sessions,
}

impl TlsSessions {
    /// An empty store.
    pub fn new() -> TlsSessions {
        TlsSessions::default()
    }

    /// A store for a spec whose TLS options are `tls`: `Some` when they ask for resumption,
    /// `None` otherwise (nothing is kept, every handshake is a full one).
    pub fn for_options(tls: Option<&TlsOptions>) -> Option<Arc<TlsSessions>> {
        tls.filter(|t| t.resumption).map(|_| Arc::new(TlsSessions::new()))
    }
}
