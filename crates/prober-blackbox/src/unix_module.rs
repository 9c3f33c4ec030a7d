//! A `prober: unix` module (blackbox_exporter v0.28.0): a stream connection to the Unix socket
//! the target names (its path; `@NAME` is Linux's abstract socket, as Go dials it), with the
//! tcp prober's `query_response`, `tls` and `tls_config`, and `allow.paths` (ours) to bound the
//! sockets a `/probe` may reach.

use std::path::Path;

use prober::{ProbeSpec, TlsVerify, UnixSocket};

use crate::config::{Allow, UnixModule};
use crate::module::{Module, Prober, TargetError};
use crate::options::tls_options;
use crate::target::Unprobeable;
use crate::tcp_module::query_response;

/// Fills `m` from the module's `unix:` section.
pub(crate) fn unix(m: &mut Module, u: &UnixModule, base: &Path) -> Result<(), String> {
    let placeholder = UnixSocket::path("/").map_err(|e| e.to_string())?;
    let mut spec = ProbeSpec::unix(placeholder).map_err(|e| e.to_string())?;
    let (steps, qr) = query_response(&u.query_response, "unix")?;
    let starttls = steps.iter().any(|s| s.starttls);
    if u.tls && starttls {
        return Err("unix.query_response: starttls with unix.tls: true would run TLS inside TLS, \
                    which prober serve does not do"
            .into());
    }
    if u.tls || starttls {
        let tls = tls_options(u.tls_config.as_ref(), base)?;
        // Go verifies the name it dialed, here a path no certificate names (or, for STARTTLS,
        // refuses an empty name): a name to verify is needed.
        if !matches!(tls.verify, TlsVerify::None) && tls.server_name.is_none() {
            return Err("unix.tls_config: server_name is needed to verify the server's \
                        certificate over a Unix socket (or insecure_skip_verify: true)"
                .into());
        }
        spec.set_tls(tls).map_err(|e| e.to_string())?;
        m.tls = true;
    }
    spec.set_tcp_steps(steps).map_err(|e| format!("unix.query_response: {e}"))?;
    m.template = spec;
    m.query_response = qr;
    Ok(())
}

/// `allow.paths`, which only a unix module takes, and the only list it takes: absolute paths
/// or `@NAME`, a directory admitting what is below it when it ends in `/`.
pub(crate) fn allowed_paths(
    prober: Prober,
    allow: Option<&Allow>,
) -> Result<Option<Vec<String>>, String> {
    let Some(a) = allow else { return Ok(None) };
    if prober != Prober::Unix {
        if !a.paths.is_empty() {
            return Err("allow.paths applies to unix modules only".into());
        }
        return Ok(None);
    }
    if !a.hosts.is_empty() || !a.networks.is_empty() || !a.ports.is_empty() {
        return Err(
            "allow: hosts, networks and ports do not apply to a unix module (paths does)".into()
        );
    }
    for p in &a.paths {
        if !(p.starts_with('/') || p.starts_with('@')) || has_dot_dot(p) {
            return Err(format!("allow.paths: {p:?} is not an absolute path or @NAME without .."));
        }
    }
    Ok(Some(a.paths.clone()))
}

fn has_dot_dot(p: &str) -> bool {
    p.split('/').any(|c| c == "..")
}

/// Points `spec` at the socket `target` names, when `paths` (if any) admits it.
pub(crate) fn set_target(
    spec: &mut ProbeSpec,
    target: &str,
    paths: Option<&[String]>,
) -> Result<(), TargetError> {
    let socket = match target.strip_prefix('@') {
        Some(name) => UnixSocket::abstract_name(name.as_bytes()),
        None => UnixSocket::path(target),
    }
    .map_err(|e| {
        TargetError::Unprobeable(Unprobeable {
            message: format!("target {target:?}: {e}"),
            resolved: false,
        })
    })?;
    if let Some(list) = paths {
        let admitted = !has_dot_dot(target)
            && list.iter().any(|p| match p.strip_suffix('/') {
                Some(dir) => {
                    target.strip_prefix(dir).is_some_and(|r| r.len() > 1 && r.starts_with('/'))
                }
                None => target == p,
            });
        if !admitted {
            return Err(TargetError::Denied(format!(
                "target {target:?} is not allowed: not in allow.paths"
            )));
        }
    }
    spec.set_unix_socket(socket).map_err(|e| TargetError::Bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_paths_admit_exact_paths_and_directories() {
        let list = ["/run/app.sock".to_string(), "/run/svc/".to_string(), "@probe".to_string()];
        let mut spec = ProbeSpec::unix(UnixSocket::path("/").unwrap()).unwrap();
        for ok in ["/run/app.sock", "/run/svc/a.sock", "/run/svc/x/b.sock", "@probe"] {
            set_target(&mut spec, ok, Some(&list)).unwrap_or_else(|e| panic!("{ok}: {e:?}"));
        }
        for no in ["/run/app.sock2", "/run/svc/", "/run/svc/../docker.sock", "/run/svcx/a", "@p"] {
            let e = set_target(&mut spec, no, Some(&list)).unwrap_err();
            assert!(matches!(e, TargetError::Denied(_)), "{no}: {e:?}");
        }
    }
}
