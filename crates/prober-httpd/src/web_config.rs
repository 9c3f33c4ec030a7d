//! The web configuration file of the Prometheus exporter-toolkit (`--web.config.file` of
//! node_exporter and blackbox_exporter), read once at start: every error names the file and
//! the field. Relative file names in it are relative to its directory, as the toolkit reads
//! them.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use serde::Deserialize;

use crate::rate_limit::{RateLimit, RateLimitSection};
use crate::tls::{self, ClientAuth, TlsFiles};

/// A web configuration: TLS (with client certificates and the SANs they must carry), extra
/// response headers, basic authentication users, a rate limit.
#[derive(Clone)]
pub struct WebConfig {
    pub(crate) tls: Option<(TlsFiles, Arc<ServerConfig>)>,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) users: HashMap<String, String>,
    pub(crate) rate_limit: Option<RateLimit>,
}

/// The users' hashes are not printed (the exporter-toolkit holds them as `Secret`s).
impl std::fmt::Debug for WebConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut users: Vec<&String> = self.users.keys().collect();
        users.sort();
        f.debug_struct("WebConfig")
            .field("tls", &self.tls.as_ref().map(|(files, _)| files))
            .field("headers", &self.headers)
            .field("users", &users)
            .field("rate_limit", &self.rate_limit)
            .finish()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    tls_server_config: Option<TlsSection>,
    #[serde(default)]
    http_server_config: Option<HttpSection>,
    #[serde(default)]
    basic_auth_users: Option<BTreeMap<String, String>>,
    #[serde(default)]
    rate_limit: Option<RateLimitSection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlsSection {
    cert_file: Option<String>,
    key_file: Option<String>,
    client_auth_type: Option<String>,
    client_ca_file: Option<String>,
    min_version: Option<String>,
    max_version: Option<String>,
    cipher_suites: Option<Vec<String>>,
    prefer_server_cipher_suites: Option<bool>,
    curve_preferences: Option<Vec<String>>,
    client_allowed_sans: Option<Vec<String>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpSection {
    /// Only HTTP/1.1 is spoken; `http2: true` (the toolkit's default) is accepted and means
    /// nothing here.
    #[allow(dead_code)]
    http2: Option<bool>,
    headers: Option<BTreeMap<String, String>>,
}

/// The headers a web config may add, and the values allowed (none listed: any), as the
/// exporter-toolkit allows them.
const HEADERS: [(&str, &[&str]); 5] = [
    ("Strict-Transport-Security", &[]),
    ("X-Content-Type-Options", &["nosniff"]),
    ("X-Frame-Options", &["deny", "sameorigin"]),
    ("X-XSS-Protection", &[]),
    ("Content-Security-Policy", &[]),
];

/// The largest web config read.
const MAX_BYTES: u64 = 1 << 20;

impl WebConfig {
    /// Reads and checks the web config at `path`: its certificate and key are loaded (and
    /// then re-read whenever their files change), its bcrypt hashes checked for form.
    ///
    /// # Errors
    ///
    /// `PATH: FIELD: what is wrong`, for a file that cannot be read, is not the format, or
    /// names files that do not make a TLS configuration.
    pub fn load(path: &Path) -> Result<WebConfig, String> {
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let m = std::fs::metadata(path).map_err(|e| at(&e))?;
        if !m.is_file() || m.len() > MAX_BYTES {
            return Err(at(&"not a regular file of at most 1 MiB"));
        }
        let text = std::fs::read_to_string(path).map_err(|e| at(&e))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        WebConfig::parse(&text, dir).map_err(|e| at(&e))
    }

    /// Parses the text of a web config whose relative file names are relative to `dir`.
    pub(crate) fn parse(text: &str, dir: &Path) -> Result<WebConfig, String> {
        let file: File = if text.trim().is_empty() {
            File::default()
        } else {
            // Through the project's YAML limits: a web config is read before any client is
            // served, and one nested or aliased past them is refused, not built.
            prober_yaml::from_str(text)?
        };
        let tls = match file.tls_server_config {
            Some(t) => tls_files(t, dir)?,
            None => None,
        };
        let tls = match tls {
            Some(files) => {
                let config = tls::build(&files)
                    .map_err(|(field, e)| format!("tls_server_config.{field}: {e}"))?;
                Some((files, config))
            }
            None => None,
        };
        let mut headers = Vec::new();
        for (name, value) in file.http_server_config.and_then(|h| h.headers).unwrap_or_default() {
            let field = format!("http_server_config.headers.{name}");
            let Some((canonical, allowed)) =
                HEADERS.iter().find(|(h, _)| h.eq_ignore_ascii_case(&name))
            else {
                let names: Vec<_> = HEADERS.iter().map(|h| h.0).collect();
                return Err(format!(
                    "{field}: not a header that can be set ({})",
                    names.join(", ")
                ));
            };
            if !allowed.is_empty() && !allowed.iter().any(|a| a.eq_ignore_ascii_case(&value)) {
                return Err(format!("{field}: '{value}' (expected {})", allowed.join(" or ")));
            }
            if value.contains(['\r', '\n']) {
                return Err(format!("{field}: a line break in the value"));
            }
            headers.push(((*canonical).to_string(), value));
        }
        let mut users = HashMap::new();
        for (user, hash) in file.basic_auth_users.unwrap_or_default() {
            if hash.parse::<bcrypt::HashParts>().is_err() {
                return Err(format!("basic_auth_users.{user}: not a bcrypt hash"));
            }
            if user.contains(':') {
                return Err(format!("basic_auth_users.{user}: a user name cannot contain ':'"));
            }
            users.insert(user, hash);
        }
        let rate_limit = match file.rate_limit {
            Some(section) => section.check()?,
            None => None,
        };
        Ok(WebConfig { tls, headers, users, rate_limit })
    }

    /// Whether connections are TLS.
    pub fn tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Whether requests must carry basic authentication credentials.
    pub fn basic_auth(&self) -> bool {
        !self.users.is_empty()
    }
}

/// The TLS section's files and choices; `None` when it names no certificate (TLS off, as the
/// toolkit reads an empty section).
fn tls_files(t: TlsSection, dir: &Path) -> Result<Option<TlsFiles>, String> {
    let f = |name: &str| format!("tls_server_config.{name}");
    let resolve = |p: String| -> PathBuf {
        let p = PathBuf::from(p);
        if p.is_relative() { dir.join(p) } else { p }
    };
    let (cert, key) = match (t.cert_file, t.key_file) {
        (None, None) => {
            if t.client_ca_file.is_some()
                || t.client_auth_type.is_some()
                || t.client_allowed_sans.is_some()
            {
                return Err(format!("{}: required when client certificates are", f("cert_file")));
            }
            return Ok(None);
        }
        (Some(c), Some(k)) => (resolve(c), resolve(k)),
        (None, Some(_)) => return Err(format!("{}: missing (key_file is set)", f("cert_file"))),
        (Some(_), None) => return Err(format!("{}: missing (cert_file is set)", f("key_file"))),
    };
    let client_auth = match t.client_auth_type.as_deref() {
        None | Some("" | "NoClientCert") => ClientAuth::NoClientCert,
        Some("RequestClientCert") => ClientAuth::RequestClientCert,
        // "RequireClientCert": the toolkit's older name.
        Some("RequireAnyClientCert" | "RequireClientCert") => ClientAuth::RequireAnyClientCert,
        Some("VerifyClientCertIfGiven") => ClientAuth::VerifyClientCertIfGiven,
        Some("RequireAndVerifyClientCert") => ClientAuth::RequireAndVerifyClientCert,
        Some(other) => {
            return Err(format!(
                "{}: '{other}' (expected NoClientCert, RequestClientCert, RequireAnyClientCert, \
                 VerifyClientCertIfGiven or RequireAndVerifyClientCert)",
                f("client_auth_type")
            ));
        }
    };
    if t.client_ca_file.is_some() && client_auth == ClientAuth::NoClientCert {
        return Err(format!(
            "{}: set, but client_auth_type asks for no client certificate",
            f("client_ca_file")
        ));
    }
    let version = |field: &str, v: Option<String>, default: u8| match v.as_deref() {
        None | Some("") => Ok(default),
        Some(v) => tls::version(v)
            .ok_or_else(|| format!("{}: '{v}' (expected TLS10, TLS11, TLS12 or TLS13)", f(field))),
    };
    // The toolkit's default minimum is TLS 1.2.
    let min = version("min_version", t.min_version, 2)?;
    let max = version("max_version", t.max_version, 3)?;
    let versions = tls::versions(min, max);
    if versions.is_empty() {
        return Err(format!("{}: below TLS12, which is the lowest spoken", f("max_version")));
    }
    if min > max {
        return Err(format!("{}: above max_version", f("min_version")));
    }
    let cipher_suites = match t.cipher_suites {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|n| {
                    tls::cipher_suite(n).ok_or_else(|| {
                        format!("{}: '{n}' is not a supported TLS 1.2 suite", f("cipher_suites"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    let curves = match t.curve_preferences {
        None => None,
        Some(names) => Some(
            names
                .iter()
                .map(|n| {
                    tls::curve(n).ok_or_else(|| {
                        format!(
                            "{}: '{n}' (supported: X25519, CurveP256, CurveP384)",
                            f("curve_preferences")
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
    };
    match &t.client_allowed_sans {
        Some(_) if client_auth == ClientAuth::NoClientCert => {
            return Err(format!(
                "{}: set, but client_auth_type asks for no client certificate (the \
                 exporter-toolkit would check nothing)",
                f("client_allowed_sans")
            ));
        }
        Some(sans) if sans.is_empty() => {
            return Err(format!("{}: empty: no client could connect", f("client_allowed_sans")));
        }
        _ => {}
    }
    Ok(Some(TlsFiles {
        cert,
        key,
        client_ca: t.client_ca_file.map(resolve),
        client_auth,
        versions,
        cipher_suites,
        curves,
        prefer_server_order: t.prefer_server_cipher_suites.unwrap_or(true),
        allowed_sans: t.client_allowed_sans,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        WebConfig::parse(text, Path::new("/nonexistent")).unwrap_err()
    }

    #[test]
    fn a_hostile_file_is_refused_before_it_is_built() {
        // 200 nested lists: past the YAML limits (128), refused by the walk over libyaml's
        // events, before serde builds (or recurses into) anything.
        let deep = format!("basic_auth_users: {}1{}\n", "[".repeat(200), "]".repeat(200));
        let e = err(&deep);
        assert!(e.contains("nested deeper than 128"), "{e}");
        // A billion laughs: aliases of aliases, refused by their expansion's size.
        let mut text = String::from("a0: &a0 [\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"]\n");
        for i in 1..20 {
            let p = i - 1;
            text.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}]\n"));
        }
        let e = err(&text);
        assert!(e.contains("alias"), "{e}");
    }

    #[test]
    fn errors_name_the_field() {
        let e = err("tls_server_config:\n  cert_fil: a\n");
        assert!(e.contains("tls_server_config") && e.contains("cert_fil"), "{e}");
        let e = err("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n");
        assert!(e.starts_with("tls_server_config.cert_file: /nonexistent/a.crt: "), "{e}");
        let e = err("tls_server_config:\n  cert_file: a.crt\n");
        assert!(e.starts_with("tls_server_config.key_file: missing"), "{e}");
        let e = err("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n");
        assert!(e.starts_with("tls_server_config.min_version: 'TLS14'"), "{e}");
        let e = err("tls_server_config: {cert_file: a, key_file: b, client_auth_type: Yes}\n");
        assert!(e.starts_with("tls_server_config.client_auth_type: 'Yes'"), "{e}");
        let e = err("basic_auth_users:\n  alice: secret\n");
        assert_eq!(e, "basic_auth_users.alice: not a bcrypt hash");
        let e = err("http_server_config:\n  headers:\n    X-Powered-By: me\n");
        assert!(e.starts_with("http_server_config.headers.X-Powered-By: not a header"), "{e}");
        let e = err("http_server_config:\n  headers:\n    X-Frame-Options: allow\n");
        assert!(e.contains("expected deny or sameorigin"), "{e}");
    }

    #[test]
    fn plain_configs() {
        let c = WebConfig::parse("", Path::new(".")).unwrap();
        assert!(!c.tls() && !c.basic_auth());
        let hash = bcrypt::hash("secret", 4).unwrap();
        let text = format!(
            "tls_server_config: {{}}\nhttp_server_config:\n  http2: false\n  headers:\n    \
             x-frame-options: DENY\nbasic_auth_users:\n  alice: '{hash}'\n"
        );
        let c = WebConfig::parse(&text, Path::new(".")).unwrap();
        assert!(!c.tls() && c.basic_auth());
        assert_eq!(c.headers, [("X-Frame-Options".to_string(), "DENY".to_string())]);
        let shown = format!("{c:?}");
        assert!(shown.contains("alice") && !shown.contains(&hash), "{shown}");
    }
}
