//! What ends the process when a server thread stops by itself (a leaf: it names nothing else
//! of the crate).

use std::io;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The server thread's body. The loop ends only when its [`crate::Running`] is dropped; should it end
/// otherwise (a panic that escaped the per-connection guard of `Loop::drive`, or the poller
/// failing), the endpoints are dead, and a live process with dead endpoints is never restarted
/// by a supervisor: the process is aborted, with a message saying why.
pub(crate) fn or_abort(name: &str, run: impl FnOnce() -> io::Result<()>) {
    let why = match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(())) => return,
        Ok(Err(e)) => format!("its poller failed: {e}"),
        Err(_) => "it panicked (the message is above)".to_string(),
    };
    eprintln!(
        "prober: the HTTP server thread '{name}' stopped: {why}; aborting the process so that \
         it is restarted rather than left running with dead endpoints"
    );
    std::process::abort();
}
