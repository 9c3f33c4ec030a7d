//! The whole-spec check, [`ProbeSpec::validate`]: each field again, by the checks of the
//! constructors and setters that set it, for specs built or changed field by field.

use super::containment::validate_cgroup_dir;
use super::host_run::validate_label;
use super::namespaces::validate_pid;
use super::tcp_setters::validate_steps;
use super::validate::{
    validate_argv, validate_env, validate_header, validate_host, validate_port, validate_timeout,
};
use super::{ProbeKind, ProbeSpec, SpecError, TlsOptions};
use crate::expect::MAX_SEND_LEN;
use crate::metadata::validate_metadata;
use crate::request::{validate_body, validate_method};
use crate::unix::UnixSocket;

impl ProbeSpec {
    /// Checks every field, for specs built or changed field by field.
    ///
    /// # Errors
    ///
    /// The first problem found, as the constructor or setter that checks that field would
    /// report it.
    pub fn validate(&self) -> Result<(), SpecError> {
        validate_timeout(self.timeout)?;
        if self.output_limit == 0 || self.output_limit > 64 << 20 {
            return Err(SpecError::InvalidOutputLimit);
        }
        if let Some(c) = self.connect_options() {
            if c.netns.is_some() && c.unix_socket.is_some() {
                return Err(crate::netns::with_unix());
            }
            c.tls.as_ref().map_or(Ok(()), TlsOptions::validate)?;
            c.unix_socket.as_ref().map_or(Ok(()), UnixSocket::validate)?;
        }
        if let ProbeKind::Tcp(t) = &self.kind {
            validate_steps(t)?;
        }
        match &self.kind {
            ProbeKind::Tcp(t) if t.connect.unix_socket.is_some() => {
                if t.send.len() > MAX_SEND_LEN {
                    return Err(SpecError::InvalidExpectation(format!(
                        "data to send is {} bytes (at most {MAX_SEND_LEN})",
                        t.send.len()
                    )));
                }
            }
            ProbeKind::Tcp(t) => {
                validate_host(&t.host)?;
                validate_port(t.port.into())?;
                if t.send.len() > MAX_SEND_LEN {
                    return Err(SpecError::InvalidExpectation(format!(
                        "data to send is {} bytes (at most {MAX_SEND_LEN})",
                        t.send.len()
                    )));
                }
            }
            ProbeKind::Http(h) => {
                for (n, v) in &h.headers {
                    validate_header(n, v)?;
                }
                validate_header("User-Agent", &h.user_agent)?;
                validate_method(&h.method)?;
                validate_body(&h.body)?;
            }
            ProbeKind::Grpc(g) => {
                // Empty: the local machine, as the kubelet's ":PORT" (GrpcSpec::host).
                if !g.host.is_empty() {
                    validate_host(&g.host)?;
                }
                if g.connect.unix_socket.is_none() {
                    validate_port(g.port.into())?;
                }
                for (k, v) in &g.metadata {
                    validate_metadata(k, v)?;
                }
                let mut copy = ProbeSpec::grpc("h", 1, "")?;
                if let Some(ua) = &g.user_agent {
                    copy.set_grpc_user_agent(ua)?;
                }
                if let Some(a) = &g.authority {
                    copy.set_grpc_authority(a)?;
                }
            }
            ProbeKind::Exec(e) => {
                validate_argv(&e.argv)?;
                for (n, v) in &e.env {
                    validate_env(n, v)?;
                }
                if let Some(pid) = e.namespaces_of {
                    validate_pid(pid)?;
                }
                if let Some(dir) = &e.cgroup {
                    validate_cgroup_dir(dir)?;
                }
            }
            ProbeKind::HostRun(h) => validate_label(&h.label)?,
            ProbeKind::Icmp(i) => i.validate_within(self.timeout)?,
            ProbeKind::Dns(d) => d.validate()?,
        }
        Ok(())
    }
}
