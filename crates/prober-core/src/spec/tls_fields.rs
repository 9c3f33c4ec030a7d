//! The one reader of a TLS block's fields into [`TlsOptions`], for every file that has one
//! (`prober serve`'s module file `tls_config`, `prober watch`'s probe file `tls:`): the same
//! checks in the same words, each error led by the field's path (`http.tls_config.cert_file:
//! ...`), however the file spells its fields.

use std::path::{Path, PathBuf};

use super::tls::{TlsOptions, TlsVerify, TlsVersion, valid_server_name};

/// How a file spells the fields of its TLS block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlsFieldNames {
    /// The CA certificates' file.
    pub ca_file: &'static str,
    /// The client certificate's file.
    pub cert_file: &'static str,
    /// The client key's file.
    pub key_file: &'static str,
    /// The server name.
    pub server_name: &'static str,
    /// The oldest version accepted.
    pub min_version: &'static str,
    /// The newest version offered.
    pub max_version: &'static str,
}

impl TlsFieldNames {
    /// prometheus/common's `tls_config` (blackbox_exporter's module file): `cert_file`, ...
    pub const SNAKE_CASE: TlsFieldNames = TlsFieldNames {
        ca_file: "ca_file",
        cert_file: "cert_file",
        key_file: "key_file",
        server_name: "server_name",
        min_version: "min_version",
        max_version: "max_version",
    };
    /// A Kubernetes-style file (`prober watch`'s probes): `certFile`, ...
    pub const CAMEL_CASE: TlsFieldNames = TlsFieldNames {
        ca_file: "caFile",
        cert_file: "certFile",
        key_file: "keyFile",
        server_name: "serverName",
        min_version: "minVersion",
        max_version: "maxVersion",
    };
}

/// A TLS block's fields as its file gives them, before they are checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TlsFields<'a> {
    /// Verify against the CA certificates in this PEM file.
    pub ca_file: Option<&'a str>,
    /// The client certificate chain (PEM); with `key_file` or not at all.
    pub cert_file: Option<&'a str>,
    /// The client certificate's key (PEM); with `cert_file` or not at all.
    pub key_file: Option<&'a str>,
    /// SNI and the name verified, instead of the target's host.
    pub server_name: Option<&'a str>,
    /// `1.2` or `1.3` (also `TLS12`, `tls1.3`, ...).
    pub min_version: Option<&'a str>,
    /// `1.2` or `1.3`, not below `min_version`.
    pub max_version: Option<&'a str>,
}

impl TlsFields<'_> {
    /// The options these fields say. `path` is the block's own path in the file
    /// (`tls_config`, `readinessProbe.tls`), which leads every error with the field's name as
    /// `names` spells it; relative file names are taken from `base`; without a `ca_file`,
    /// certificates are checked as `verify` says (the file's own default).
    ///
    /// # Errors
    ///
    /// `PATH.FIELD: what is wrong`: an empty file name or one with a NUL byte, a certificate
    /// without its key or a key without its certificate, a version that is not 1.2 or 1.3, a
    /// minimum version above the maximum, a server name that is neither a DNS name nor an IP
    /// address.
    pub fn read(
        &self,
        path: &str,
        names: &TlsFieldNames,
        base: Option<&Path>,
        verify: TlsVerify,
    ) -> Result<TlsOptions, String> {
        let field =
            |name: &str| if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
        let file = |name: &str, value: &str| -> Result<PathBuf, String> {
            if value.is_empty() {
                return Err(format!("{}: must not be empty", field(name)));
            }
            if value.contains('\0') {
                return Err(format!("{}: the path contains a NUL byte", field(name)));
            }
            Ok(base.map_or_else(|| PathBuf::from(value), |dir| dir.join(value)))
        };
        let verify = match self.ca_file {
            Some(ca) => TlsVerify::CaFile(file(names.ca_file, ca)?),
            None => verify,
        };
        let client_cert = match (self.cert_file, self.key_file) {
            (Some(cert), Some(key)) => {
                Some((file(names.cert_file, cert)?, file(names.key_file, key)?))
            }
            (None, None) => None,
            (Some(_), None) => {
                return Err(format!(
                    "{}: missing ({} is set)",
                    field(names.key_file),
                    names.cert_file
                ));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "{}: missing ({} is set)",
                    field(names.cert_file),
                    names.key_file
                ));
            }
        };
        let version = |name: &str, v: Option<&str>| match v {
            None => Ok(None),
            Some(v) => TlsVersion::parse(v)
                .map(Some)
                .ok_or_else(|| format!("{}: expected 1.2 or 1.3 (got {v:?})", field(name))),
        };
        let min_version = version(names.min_version, self.min_version)?;
        let max_version = version(names.max_version, self.max_version)?;
        if let (Some(min), Some(max)) = (min_version, max_version) {
            if min > max {
                return Err(format!(
                    "{}: {} is above {} {}",
                    field(names.min_version),
                    min.as_str(),
                    names.max_version,
                    max.as_str()
                ));
            }
        }
        if let Some(name) = self.server_name {
            if !valid_server_name(name) {
                return Err(format!(
                    "{}: {name:?} is neither a DNS name nor an IP address",
                    field(names.server_name)
                ));
            }
        }
        Ok(TlsOptions {
            verify,
            server_name: self.server_name.map(str::to_string),
            client_cert,
            min_version,
            max_version,
            resumption: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(f: TlsFields<'_>, names: &TlsFieldNames) -> Result<TlsOptions, String> {
        f.read("m.tls_config", names, Some(Path::new("/etc/p")), TlsVerify::SystemRoots)
    }

    #[test]
    fn every_error_names_its_field() {
        let snake = &TlsFieldNames::SNAKE_CASE;
        let cases = [
            (
                TlsFields { cert_file: Some("c"), ..Default::default() },
                "m.tls_config.key_file: missing (cert_file is set)",
            ),
            (
                TlsFields { key_file: Some("k"), ..Default::default() },
                "m.tls_config.cert_file: missing (key_file is set)",
            ),
            (
                TlsFields { ca_file: Some(""), ..Default::default() },
                "m.tls_config.ca_file: must not be empty",
            ),
            (
                TlsFields { cert_file: Some("c"), key_file: Some("a\0b"), ..Default::default() },
                "m.tls_config.key_file: the path contains a NUL byte",
            ),
            (
                TlsFields { min_version: Some("TLS14"), ..Default::default() },
                "m.tls_config.min_version: expected 1.2 or 1.3 (got \"TLS14\")",
            ),
            (
                TlsFields { max_version: Some("1.1"), ..Default::default() },
                "m.tls_config.max_version: expected 1.2 or 1.3 (got \"1.1\")",
            ),
            (
                TlsFields {
                    min_version: Some("1.3"),
                    max_version: Some("TLS12"),
                    ..Default::default()
                },
                "m.tls_config.min_version: 1.3 is above max_version 1.2",
            ),
            (
                TlsFields { server_name: Some("a b"), ..Default::default() },
                "m.tls_config.server_name: \"a b\" is neither a DNS name nor an IP address",
            ),
        ];
        for (fields, want) in cases {
            assert_eq!(read(fields, snake).unwrap_err(), want);
        }
        let camel = TlsFields { cert_file: Some("c"), ..Default::default() };
        assert_eq!(
            read(camel, &TlsFieldNames::CAMEL_CASE).unwrap_err(),
            "m.tls_config.keyFile: missing (certFile is set)"
        );
    }

    #[test]
    fn fields_into_options() {
        let f = TlsFields {
            ca_file: Some("ca.pem"),
            cert_file: Some("c.pem"),
            key_file: Some("/abs/k.pem"),
            server_name: Some("db.internal"),
            min_version: Some("TLS12"),
            max_version: Some("1.3"),
        };
        let o = read(f, &TlsFieldNames::SNAKE_CASE).unwrap();
        assert_eq!(o.verify, TlsVerify::CaFile("/etc/p/ca.pem".into()));
        assert_eq!(o.client_cert, Some(("/etc/p/c.pem".into(), "/abs/k.pem".into())));
        assert_eq!(o.server_name.as_deref(), Some("db.internal"));
        assert_eq!(
            (o.min_version, o.max_version),
            (Some(TlsVersion::Tls12), Some(TlsVersion::Tls13))
        );
        let o = TlsFields::default()
            .read("", &TlsFieldNames::SNAKE_CASE, None, TlsVerify::None)
            .unwrap();
        assert_eq!(o, TlsOptions::default());
    }
}
