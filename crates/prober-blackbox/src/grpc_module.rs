//! A `prober: grpc` module as the library's gRPC health probe: its service, TLS, address
//! family and request `metadata` (blackbox_exporter v0.28.0).

use std::path::Path;

use prober::ProbeSpec;

use crate::config::GrpcModule;
use crate::ip_protocol::{grpc_family, ip_family};
use crate::module::Module;
use crate::options::{base64, tls_options};

/// Fills `m` from the module's `grpc:` section.
pub(crate) fn grpc(m: &mut Module, g: &GrpcModule, base: &Path) -> Result<(), String> {
    let mut spec = ProbeSpec::grpc("localhost", 1, &g.service).map_err(|e| e.to_string())?;
    if g.tls {
        spec.set_tls(tls_options(g.tls_config.as_ref(), base)?).map_err(|e| e.to_string())?;
        m.tls = true;
    }
    let family = ip_family(g.preferred_ip_protocol.as_deref(), g.ip_protocol_fallback, "grpc")?;
    spec.set_ip_family(grpc_family(family)).map_err(|e| e.to_string())?;
    for (key, values) in &g.metadata {
        for value in values {
            let value = wire_value(key, value);
            spec.add_grpc_metadata(key, &value).map_err(|e| format!("grpc.metadata: {e}"))?;
        }
    }
    m.template = spec;
    Ok(())
}

/// A metadata value as grpc-go writes it: the value of a `-bin` key is bytes, which grpc-go
/// sends base64-encoded without padding (`encodeMetadataHeader`); the library takes such a
/// value already encoded. Other values go as written.
fn wire_value(key: &str, value: &str) -> String {
    if key.to_ascii_lowercase().ends_with("-bin") {
        base64(value.as_bytes()).trim_end_matches('=').to_string()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::wire_value;

    #[test]
    fn bin_values_are_encoded_as_grpc_go_sends_them() {
        assert_eq!(wire_value("key2-bin", "test"), "dGVzdA");
        assert_eq!(wire_value("Key-Bin", "ab"), "YWI");
        assert_eq!(wire_value("key1", "a value"), "a value");
    }
}
