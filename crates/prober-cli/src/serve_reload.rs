//! Reloading `prober serve`'s module file as blackbox_exporter v0.28.0 does (its `main.go`
//! and `config.SafeConfig.ReloadConfig`): on SIGHUP, on `POST /-/reload` (answered 200, or
//! 500 with the error), and every `--config.auto-reload-interval` seconds (30) with
//! `--config.enable-auto-reload`.
//!
//! Each reload reads the file again; the same bytes as the file in force change nothing and
//! count as a success (blackbox_exporter compares a SHA-256 checksum; here the bytes
//! themselves, at most [`MAX_FILE_LEN`] of them). A file that cannot be read or is not valid
//! leaves the modules in force running: a line on standard error, and
//! `blackbox_exporter_config_last_reload_successful` 0 until a good file is read. The reloads
//! run on the command's main thread, one at a time, never on the HTTP server's loop; the timer
//! starts again after every reload, whatever asked for it, as blackbox_exporter's `time.Tick`
//! in its `select` does.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use prober_blackbox::{Exporter, MAX_FILE_LEN, Modules, Reload};
use prober_httpd::{Reply, Response};
use signal_hook::consts::SIGHUP;

use crate::args::Failure;
use crate::signals::Signals;

/// blackbox_exporter's `--config.auto-reload-interval` default, in seconds.
pub const DEFAULT_AUTO_RELOAD_SECONDS: u64 = 30;

/// The module file, and the bytes of the one in force.
#[derive(Debug)]
pub struct ConfigFile {
    path: PathBuf,
    in_force: Vec<u8>,
}

impl ConfigFile {
    /// Reads the file at start: 66 when it cannot be read, 64 when it is not valid.
    pub fn load(path: &Path) -> Result<(ConfigFile, Modules), Failure> {
        let bytes = read(path).map_err(Failure::no_input)?;
        let modules = parse(path, &bytes).map_err(Failure::input)?;
        Ok((ConfigFile { path: path.to_path_buf(), in_force: bytes }, modules))
    }

    /// Reads the file again: its modules when it changed, or why it cannot be used.
    fn reload(&mut self) -> Result<Reload, String> {
        let bytes = read(&self.path)?;
        if bytes == self.in_force {
            return Ok(Reload::Unchanged);
        }
        let modules = parse(&self.path, &bytes)?;
        self.in_force = bytes;
        Ok(Reload::Replaced(modules))
    }
}

/// The file's bytes: a regular file (a FIFO put in its place cannot hang the reloads), at most
/// one byte more than [`MAX_FILE_LEN`] read (the parser refuses that).
fn read(path: &Path) -> Result<Vec<u8>, String> {
    let failed = |e: io::Error| format!("{}: {}", path.display(), prober_core::os_error_text(&e));
    let file = File::options()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(failed)?;
    if !file.metadata().map_err(failed)?.is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_LEN as u64 + 1).read_to_end(&mut bytes).map_err(failed)?;
    Ok(bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> Result<Modules, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    Modules::parse(text, base).map_err(|e| format!("{}: {e}", path.display()))
}

/// The reload loop's inputs: SIGHUP, the `POST /-/reload` requests waiting for their answer,
/// and the timer.
#[derive(Debug)]
pub struct Reloader {
    file: ConfigFile,
    signals: Signals,
    requests: Receiver<Reply>,
    /// Readable when a request is waiting.
    wake: UnixStream,
    auto: Option<Duration>,
}

/// The handler of `/-/reload` on the HTTP server's loop: a POST is handed to the reload loop,
/// which answers it once the file is read; other methods are answered 405, as
/// blackbox_exporter does.
pub type ReloadRoute = Box<dyn Fn(&prober_httpd::Request, Reply) + Send>;

impl Reloader {
    /// Catches SIGHUP (before anything is served, so that an early one reloads rather than
    /// ends the process) and makes the `/-/reload` handler.
    pub fn new(file: ConfigFile, auto: Option<Duration>) -> io::Result<(Reloader, ReloadRoute)> {
        let signals = Signals::catch(&[SIGHUP])?;
        let (wake, poke) = UnixStream::pair()?;
        wake.set_nonblocking(true)?;
        poke.set_nonblocking(true)?;
        let (tx, requests) = channel();
        let route: ReloadRoute = Box::new(move |req, reply| {
            if req.method != "POST" {
                let refused = Response::text(405, "This endpoint requires a POST request.\n");
                reply.send(refused.with_header("Allow", "POST"));
                return;
            }
            // The server's bound on deferred requests bounds this queue; a full socket means
            // a wake-up is already pending.
            if tx.send(reply).is_ok() {
                let _ = (&poke).write(&[1]);
            }
        });
        Ok((Reloader { file, signals, requests, wake, auto }, route))
    }

    /// Reloads whenever asked, for as long as the process runs.
    pub fn run(mut self, exporter: &Exporter) -> ! {
        let mut next = self.auto.map(|i| Instant::now() + i);
        loop {
            let timeout = next.map(|t| t.saturating_duration_since(Instant::now()));
            if let Err(e) = self.signals.wait(self.wake.as_raw_fd(), timeout) {
                say(&format!("cannot wait for reload requests: {e}"));
                std::thread::sleep(Duration::from_secs(1));
            }
            let hup = self.signals.take().is_some();
            drain(&self.wake);
            let waiting: Vec<Reply> = self.requests.try_iter().collect();
            let due = next.is_some_and(|t| Instant::now() >= t);
            if !(hup || due || !waiting.is_empty()) {
                continue;
            }
            let answer = match self.file.reload() {
                // In force before it is said: whoever reads the line finds the new modules.
                Ok(reload) => {
                    let replaced = matches!(reload, Reload::Replaced(_));
                    exporter.reload(reload);
                    if replaced {
                        say(&format!("reloaded {}", self.file.path.display()));
                    }
                    Response::text(200, "")
                }
                Err(e) => {
                    exporter.reload(Reload::Failed);
                    say(&format!("error reloading the config, the modules in force stay: {e}"));
                    Response::text(500, format!("failed to reload config: {e}\n"))
                }
            };
            for reply in waiting {
                reply.send(answer.clone());
            }
            next = self.auto.map(|i| Instant::now() + i);
        }
    }
}

fn drain(mut wake: &UnixStream) {
    let mut buf = [0u8; 64];
    loop {
        match wake.read(&mut buf) {
            Ok(n) if n > 0 => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            _ => return,
        }
    }
}

/// A line on standard error; a closed one is not a reason to stop serving.
fn say(line: &str) {
    let _ = writeln!(io::stderr(), "prober serve: {line}");
}

/// `--config.auto-reload-interval`: whole seconds, at least 1, as a plain number (`30`, as
/// before) or a Go duration (`30s`, `1m`, as Prometheus's flag of that name); a 0 would never
/// reload.
pub fn parse_interval(v: &str) -> Result<u64, String> {
    let whole = || format!("{v:?}: a whole number of seconds (30, 30s or 1m)");
    let seconds = match v.trim().parse::<u64>() {
        Ok(n) => n,
        Err(_) => {
            let d = crate::duration::parse(v.trim()).map_err(|_| whole())?;
            if d.subsec_nanos() != 0 {
                return Err(whole());
            }
            d.as_secs()
        }
    };
    match seconds {
        0 => Err(format!("{v}: at least 1 second")),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_interval;

    #[test]
    fn reload_intervals_in_seconds_or_go_durations() {
        assert_eq!(parse_interval("30"), Ok(30));
        assert_eq!(parse_interval("30s"), Ok(30));
        assert_eq!(parse_interval("1m30s"), Ok(90));
        assert_eq!(parse_interval("0"), Err("0: at least 1 second".into()));
        assert_eq!(parse_interval("0s"), Err("0s: at least 1 second".into()));
        for bad in ["1.5s", "500ms", "-1s", "soon", "1.5"] {
            let want = format!("{bad:?}: a whole number of seconds (30, 30s or 1m)");
            assert_eq!(parse_interval(bad), Err(want), "{bad}");
        }
    }
}
