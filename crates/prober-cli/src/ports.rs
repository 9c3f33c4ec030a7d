//! `prober watch --port PORT=LOCAL`: probe ports mapped to where the containers are published
//! (`docker run -p 18080:8080` serves container port 8080 on local port 18080).

use std::fmt;

/// The container port that a mapping applies to: a number, or a name declared in `ports`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortKey {
    /// A container port number (`8080=18080`).
    Number(u16),
    /// A port name that containers declare in `ports` (`http=18080`): the port of each
    /// container that declares it.
    Name(String),
}

impl fmt::Display for PortKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortKey::Number(n) => write!(f, "{n}"),
            PortKey::Name(s) => f.write_str(s),
        }
    }
}

/// The `--port` mappings of one run, in the order given. Empty: every probe uses the port its
/// file names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortMap {
    entries: Vec<(PortKey, u16)>,
}

impl PortMap {
    /// No mapping.
    pub const EMPTY: PortMap = PortMap { entries: Vec::new() };

    /// Adds one `PORT=LOCAL` mapping, as given to `--port`.
    ///
    /// # Errors
    ///
    /// A message (without the option's name) when `v` is not `PORT=LOCAL` with PORT a port
    /// number or name and LOCAL a port number, or when PORT was already mapped.
    pub fn add(&mut self, v: &str) -> Result<(), String> {
        let bad = |why: &str| {
            format!(
                "bad mapping '{v}': {why} (expected PORT=LOCAL, PORT a container port number or \
                 a port name from the file, e.g. 8080=18080 or http=18080)"
            )
        };
        let (port, local) = v.split_once('=').ok_or_else(|| bad("no '='"))?;
        let key = if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
            PortKey::Number(port_number(port).map_err(|e| bad(&e))?)
        } else if is_port_name(port) {
            PortKey::Name(port.to_string())
        } else {
            return Err(bad(&format!("'{port}' is neither a port number nor a port name")));
        };
        let local = port_number(local).map_err(|e| bad(&e))?;
        if self.entries.iter().any(|(k, _)| *k == key) {
            return Err(format!("port {key} is mapped more than once"));
        }
        self.entries.push((key, local));
        Ok(())
    }

    /// Whether no mapping was given.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The local port for container port `n` of a container that declares `declared` (its
    /// named ports and their numbers): a mapping of `n`, or of a name the container gives `n`.
    pub fn local(&self, n: u16, declared: &[(&str, i64)]) -> u16 {
        for (key, local) in &self.entries {
            let hit = match key {
                PortKey::Number(k) => *k == n,
                PortKey::Name(name) => {
                    declared.iter().any(|&(d, num)| d == name && num == i64::from(n))
                }
            };
            if hit {
                return *local;
            }
        }
        n
    }

    /// The first mapping by a name that no container of the file declares, with that mapping
    /// written back as given.
    pub fn unknown_name(&self, mut declared: impl FnMut(&str) -> bool) -> Option<String> {
        self.entries.iter().find_map(|(key, local)| match key {
            PortKey::Name(name) if !declared(name) => Some(format!("{name}={local}")),
            _ => None,
        })
    }
}

/// A port number, 1 to 65535.
fn port_number(s: &str) -> Result<u16, String> {
    s.parse::<u16>()
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| format!("invalid port '{s}' (expected 1 to 65535)"))
}

/// A port name: letters, digits, '-' and '_', with at least one letter (Kubernetes' rule is
/// stricter; names are matched as the file writes them, so this only keeps out what cannot be
/// a name at all, such as `8080:18080` or `a b`).
fn is_port_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && s.bytes().any(|b| b.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings() {
        let mut m = PortMap::default();
        m.add("8080=18080").unwrap();
        m.add("http=18081").unwrap();
        let declared = [("http", 9000), ("admin", 8080)];
        assert_eq!(m.local(8080, &declared), 18080);
        assert_eq!(m.local(9000, &declared), 18081);
        assert_eq!(m.local(9000, &[]), 9000);
        assert_eq!(m.local(7, &declared), 7);
        assert_eq!(m.unknown_name(|n| n == "http"), None);
        assert_eq!(m.unknown_name(|_| false), Some("http=18081".into()));
    }

    #[test]
    fn bad_mappings() {
        let cases = [
            ("8080", "bad mapping '8080': no '='"),
            ("8080:18080", "bad mapping '8080:18080': no '='"),
            ("0=1", "bad mapping '0=1': invalid port '0'"),
            ("80=70000", "bad mapping '80=70000': invalid port '70000'"),
            ("80=", "bad mapping '80=': invalid port ''"),
            ("=80", "bad mapping '=80': '' is neither"),
            ("a b=80", "bad mapping 'a b=80': 'a b' is neither"),
        ];
        for (v, want) in cases {
            let e = PortMap::default().add(v).unwrap_err();
            assert!(e.starts_with(want), "{v}: {e}");
        }
        let mut m = PortMap::default();
        m.add("http=1").unwrap();
        assert_eq!(m.add("http=2").unwrap_err(), "port http is mapped more than once");
    }
}
