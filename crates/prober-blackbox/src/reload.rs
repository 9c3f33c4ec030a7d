//! The modules in force, replaced whole by a reload (blackbox_exporter's `SafeConfig`), and
//! the two gauges that say how the last reload went.
//!
//! A `/probe` takes the modules in force when it starts and keeps them (an `Arc`) until it is
//! answered, so a reload never changes a probe in flight; the next request sees the new ones.
//! Reading the file and deciding when to reload (a signal, `POST /-/reload`, a timer) is the
//! caller's: the library installs no handler and reads no file.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use prober_exposition::{Format, Kind, family, sample};

use crate::modules::Modules;

/// How a reload of the module file went ([`crate::Exporter::reload`]).
#[derive(Debug)]
pub enum Reload {
    /// A new file, read whole and valid: these modules replace the ones in force.
    Replaced(Modules),
    /// The file is the one in force (blackbox_exporter compares a checksum): nothing changes,
    /// and the reload counts as successful, as there.
    Unchanged,
    /// The file could not be read or is not valid: the modules in force stay.
    Failed,
}

/// The modules in force and how the last reload went.
#[derive(Debug)]
pub(crate) struct Loaded {
    modules: RwLock<Arc<Modules>>,
    successful: AtomicBool,
    /// When the last reload succeeded, seconds since the Unix epoch (`f64` bits).
    success_at: AtomicU64,
}

impl Loaded {
    /// The modules read at start: a successful load, now.
    pub fn new(modules: Modules) -> Loaded {
        Loaded {
            modules: RwLock::new(Arc::new(modules)),
            successful: AtomicBool::new(true),
            success_at: AtomicU64::new(now().to_bits()),
        }
    }

    /// The modules in force.
    pub fn current(&self) -> Arc<Modules> {
        self.modules.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    pub fn apply(&self, reload: Reload) {
        match reload {
            Reload::Replaced(modules) => {
                *self.modules.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(modules);
            }
            Reload::Unchanged => {}
            Reload::Failed => {
                self.successful.store(false, Ordering::Relaxed);
                return;
            }
        }
        self.success_at.store(now().to_bits(), Ordering::Relaxed);
        self.successful.store(true, Ordering::Relaxed);
    }

    /// The gauges, under blackbox_exporter's names and under this server's prefix.
    pub fn render(&self, s: &mut String, format: Format) {
        let ok = u8::from(self.successful.load(Ordering::Relaxed));
        let at = f64::from_bits(self.success_at.load(Ordering::Relaxed));
        for prefix in ["blackbox_exporter", "prober_serve"] {
            let name = format!("{prefix}_config_last_reload_successful");
            let help = "Whether the last configuration reload succeeded.";
            family(s, format, &name, help, Kind::Gauge);
            sample(s, &name, &[], ok);
            let name = format!("{prefix}_config_last_reload_success_timestamp_seconds");
            let help = "Timestamp of the last successful configuration reload.";
            family(s, format, &name, help, Kind::Gauge);
            sample(s, &name, &[], at);
        }
    }
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}
