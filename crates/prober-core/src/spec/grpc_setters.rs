//! The setters of a gRPC probe's request: metadata (checked by `metadata.rs`), user agent and
//! `:authority` (grpc-health-probe's `-rpc-header`, `-user-agent`; grpc-go's `WithAuthority`).

use super::validate::validate_header;
use super::{GrpcSpec, ProbeKind, ProbeSpec, SpecError};
use crate::metadata::validate_metadata;

impl ProbeSpec {
    /// Adds a metadata pair to a gRPC probe's request (grpc-health-probe's
    /// `-rpc-header 'key: value'`), validated by [`validate_metadata`]; the key is sent in lower
    /// case. Repeated keys are all sent, in order.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for an invalid pair or a probe that is not gRPC.
    pub fn add_grpc_metadata(&mut self, key: &str, value: &str) -> Result<(), SpecError> {
        let key = validate_metadata(key, value)?;
        self.grpc_request("gRPC metadata")?.metadata.push((key, value.to_string()));
        Ok(())
    }

    /// Sets the `user-agent` of a gRPC probe's request (grpc-health-probe's `-user-agent`;
    /// default `kube-probe/<version>`, as the kubelet). Sent as given: grpc-go would append its
    /// own ` grpc-go/<version>`, a probe has no such suffix.
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a value with control characters, an empty value or a
    /// probe that is not gRPC.
    pub fn set_grpc_user_agent(&mut self, user_agent: &str) -> Result<(), SpecError> {
        if user_agent.is_empty() || validate_header("User-Agent", user_agent).is_err() {
            return Err(SpecError::InvalidRequest(format!(
                "invalid gRPC user agent {user_agent:?} (not empty, no control characters)"
            )));
        }
        self.grpc_request("a gRPC user agent")?.user_agent = Some(user_agent.to_string());
        Ok(())
    }

    /// Sets the `:authority` of a gRPC probe's request (grpc-go's `WithAuthority`), instead of
    /// `host:port` (or the TLS server name when one is set, as grpc-go does, or `localhost`
    /// through a Unix socket).
    ///
    /// # Errors
    ///
    /// [`SpecError::InvalidRequest`] for a value that is not `host[:port]`, or a probe that is
    /// not gRPC.
    pub fn set_grpc_authority(&mut self, authority: &str) -> Result<(), SpecError> {
        if authority.is_empty() || validate_header("Host", authority).is_err() {
            return Err(SpecError::InvalidRequest(format!(
                "invalid gRPC authority {authority:?} (expected a host name or IP address with an optional :port)"
            )));
        }
        self.grpc_request("a gRPC authority")?.authority = Some(authority.to_string());
        Ok(())
    }

    /// The gRPC part of a gRPC probe; `what` names the setting in the refusal.
    fn grpc_request(&mut self, what: &str) -> Result<&mut GrpcSpec, SpecError> {
        match &mut self.kind {
            ProbeKind::Grpc(g) => Ok(g),
            _ => Err(SpecError::InvalidRequest(format!("{what} applies to gRPC probes only"))),
        }
    }
}
