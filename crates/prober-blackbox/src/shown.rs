//! The module configuration of a probe's debug page (`&debug=true`, `/logs`): the module as
//! written, in YAML with every credential as `<secret>` (as `/config` shows it), and what the
//! request's `&hostname=` set in it, as blackbox_exporter's page prints the module its handler
//! changed (`yaml.Marshal(module)` after `setHTTPHost` and the TCP `ServerName`): what the probe
//! used, not only what the file says.

use serde_norway::{Mapping, Value};

use crate::module::{Module, Prober};

/// The module `m` as its probe used it with `hostname` (the `/probe` parameter, when given).
pub(crate) fn module_yaml(m: &Module, hostname: Option<&str>) -> String {
    let mut shown = m.shown.clone();
    if let Some(name) = hostname {
        match m.prober {
            // The `Host` header `apply_hostname` sent (a module's own one must be the same
            // value, or the request was refused).
            Prober::Http => {
                let headers = at(&mut shown, &["http", "headers"]);
                let has_host = headers
                    .keys()
                    .any(|k| k.as_str().is_some_and(|k| k.eq_ignore_ascii_case("host")));
                if !has_host {
                    headers.insert("Host".into(), name.into());
                }
            }
            // The server name a tcp module with TLS sends and verifies when the file sets none.
            Prober::Tcp if m.tls => {
                let tls = at(&mut shown, &["tcp", "tls_config"]);
                let set =
                    tls.get("server_name").and_then(Value::as_str).is_some_and(|s| !s.is_empty());
                if !set {
                    tls.insert("server_name".into(), name.into());
                }
            }
            Prober::Tcp | Prober::Grpc | Prober::Unix | Prober::Icmp | Prober::Dns => {}
        }
    }
    serde_norway::to_string(&shown).unwrap_or_else(|e| format!("the module cannot be shown: {e}\n"))
}

/// The mapping at `path` in `v`, made (and any mapping on the way) where it is missing or is
/// not a mapping (`tls_config:` written empty is null).
fn at<'a>(v: &'a mut Value, path: &[&str]) -> &'a mut Mapping {
    if !v.is_mapping() {
        *v = Value::Mapping(Mapping::new());
    }
    let map = v.as_mapping_mut().expect("made a mapping above");
    match path.split_first() {
        None => map,
        Some((key, rest)) => at(map.entry((*key).into()).or_insert(Value::Null), rest),
    }
}
