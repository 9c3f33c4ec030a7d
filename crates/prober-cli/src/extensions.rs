//! The command's side of the extensions beyond the kubelet (see "Beyond the kubelet" in
//! `docs/semantics.md`): the `check` flags `--expect-status`, `--expect-body`, `--keep-alive`,
//! `--send` and `--expect`, and the watch-file fields named beside the Kubernetes fields they
//! extend (`httpGet.expectStatus`, `httpGet.expectBody`, `httpGet.keepAlive`, `tcpSocket.send`,
//! `tcpSocket.expect`,
//! `unhealthyPeriodSeconds`/`Milliseconds`,
//! `transitionPeriodSeconds`/`Milliseconds`, `jitterPercent`). Kept here so that `check.rs`
//! and `config.rs` only call in.

use std::time::Duration;

use prober::{Pattern, ProbeSpec, StatusSet, unescape};

use crate::args::{Failure, Parser};

/// The extension flags of `prober check`, as given.
#[derive(Debug, Default)]
pub struct CheckFlags {
    expect_status: Option<String>,
    expect_body: Option<String>,
    send: Option<String>,
    expect: Option<String>,
    keep_alive: bool,
}

impl CheckFlags {
    /// Takes option `opt` (and its value) when it is one of these flags.
    pub fn take(&mut self, p: &mut Parser, opt: &str) -> Result<bool, Failure> {
        if opt == "--keep-alive" {
            self.keep_alive = true;
            return Ok(true);
        }
        let slot = match opt {
            "--expect-status" => &mut self.expect_status,
            "--expect-body" => &mut self.expect_body,
            "--send" => &mut self.send,
            "--expect" => &mut self.expect,
            _ => return Ok(false),
        };
        *slot = Some(p.text(opt)?);
        Ok(true)
    }

    /// Applies the flags to `spec`; `is_http` says whether the target is http:// or https://,
    /// `is_tcp` whether it is tcp://.
    pub fn apply(
        &self,
        args: &Parser,
        spec: &mut ProbeSpec,
        is_http: bool,
        is_tcp: bool,
    ) -> Result<(), Failure> {
        if let Some(v) = &self.send {
            if !is_tcp {
                return Err(args.usage("--send applies to tcp:// targets only"));
            }
            let data = unescape(v).map_err(|e| args.usage(format!("--send: {e}")))?;
            spec.set_send(data).map_err(|e| args.usage(format!("--send: {e}")))?;
        }
        if let Some(v) = &self.expect {
            if !is_tcp {
                return Err(args.usage(
                    "--expect applies to tcp:// targets only (--expect-status and --expect-body for HTTP)",
                ));
            }
            let p = Pattern::new(v).map_err(|e| args.usage(format!("--expect: {e}")))?;
            spec.set_expect_reply(p).map_err(|e| args.usage(format!("--expect: {e}")))?;
        }
        if let Some(v) = &self.expect_status {
            if !is_http {
                return Err(
                    args.usage("--expect-status applies to http:// and https:// targets only")
                );
            }
            let set =
                StatusSet::parse(v).map_err(|e| args.usage(format!("--expect-status: {e}")))?;
            spec.set_expect_status(set).map_err(|e| args.usage(format!("--expect-status: {e}")))?;
        }
        if let Some(v) = &self.expect_body {
            if !is_http {
                return Err(
                    args.usage("--expect-body applies to http:// and https:// targets only")
                );
            }
            let p = Pattern::new(v).map_err(|e| args.usage(format!("--expect-body: {e}")))?;
            spec.set_expect_body(p).map_err(|e| args.usage(format!("--expect-body: {e}")))?;
        }
        if self.keep_alive {
            if !is_http {
                return Err(args.usage("--keep-alive applies to http:// and https:// targets only"));
            }
            // Accepted for symmetry with watch files; one run has no later run to reuse for.
            spec.set_keep_alive(true).map_err(|e| args.usage(format!("--keep-alive: {e}")))?;
        }
        Ok(())
    }
}

/// `httpGet.expectStatus`, `httpGet.expectBody` and `httpGet.keepAlive` of a watch-file probe
/// at path `p`.
pub fn apply_http_fields(
    p: &str,
    spec: &mut ProbeSpec,
    expect_status: Option<&str>,
    expect_body: Option<&str>,
    keep_alive: bool,
) -> Result<(), String> {
    if keep_alive {
        spec.set_keep_alive(true).map_err(|e| format!("{p}.httpGet.keepAlive: {e}"))?;
    }
    if let Some(v) = expect_status {
        let set = StatusSet::parse(v).map_err(|e| format!("{p}.httpGet.expectStatus: {e}"))?;
        spec.set_expect_status(set).map_err(|e| format!("{p}.httpGet.expectStatus: {e}"))?;
    }
    if let Some(v) = expect_body {
        let pat = Pattern::new(v).map_err(|e| format!("{p}.httpGet.expectBody: {e}"))?;
        spec.set_expect_body(pat).map_err(|e| format!("{p}.httpGet.expectBody: {e}"))?;
    }
    Ok(())
}

/// `tcpSocket.send` (with escapes) and `tcpSocket.expect` of a watch-file probe at path `p`.
pub fn apply_tcp_fields(
    p: &str,
    spec: &mut ProbeSpec,
    send: Option<&str>,
    expect: Option<&str>,
) -> Result<(), String> {
    if let Some(v) = send {
        let data = unescape(v).map_err(|e| format!("{p}.tcpSocket.send: {e}"))?;
        spec.set_send(data).map_err(|e| format!("{p}.tcpSocket.send: {e}"))?;
    }
    if let Some(v) = expect {
        let pat = Pattern::new(v).map_err(|e| format!("{p}.tcpSocket.expect: {e}"))?;
        spec.set_expect_reply(pat).map_err(|e| format!("{p}.tcpSocket.expect: {e}"))?;
    }
    Ok(())
}

/// An optional per-state period, `{name}Seconds` or `{name}Milliseconds`. Unlike the
/// Kubernetes fields there is no default to fall back to, so zero is refused like a negative.
pub fn optional_period(
    p: &str,
    name: &str,
    secs: Option<i64>,
    ms: Option<i64>,
) -> Result<Option<Duration>, String> {
    match (secs, ms) {
        (Some(_), Some(_)) => {
            Err(format!("{p}: give {name}Seconds or {name}Milliseconds, not both"))
        }
        (None, None) => Ok(None),
        (Some(s), None) if s <= 0 => {
            Err(format!("{p}.{name}Seconds: must be at least 1 (got {s})"))
        }
        (Some(s), None) => Ok(Some(Duration::from_secs(s as u64))),
        (None, Some(m)) if m <= 0 => {
            Err(format!("{p}.{name}Milliseconds: must be at least 1 (got {m})"))
        }
        (None, Some(m)) => Ok(Some(Duration::from_millis(m as u64))),
    }
}

/// `jitterPercent`: 0 to [`prober::MAX_JITTER_PERCENT`].
pub fn jitter_percent(p: &str, v: Option<i64>) -> Result<u32, String> {
    match v {
        None => Ok(0),
        Some(n) if (0..=i64::from(prober::MAX_JITTER_PERCENT)).contains(&n) => Ok(n as u32),
        Some(n) => Err(format!(
            "{p}.jitterPercent: expected 0 to {} (got {n})",
            prober::MAX_JITTER_PERCENT
        )),
    }
}
