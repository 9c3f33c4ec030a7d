//! The `check` flags of the extensions beyond the kubelet (see "Beyond the kubelet" in
//! `docs/semantics.md`): `--expect-status`, `--expect-body`, `--keep-alive`, `--send` and
//! `--expect`. The watch-file fields of the same extensions are prober-k8s's.

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
