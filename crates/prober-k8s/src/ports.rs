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
///
/// Each container port is mapped by at most one option: a second mapping of the same key is
/// refused when it is added ([`PortMap::add`]), and a number and a name (or two names) that
/// come to the same port of one container are refused once the file says what the names are
/// ([`PortMap::overlap`]). Otherwise the order of the options would decide, silently.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortMap {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    key: PortKey,
    local: u16,
    /// The option's value as typed, for messages.
    given: String,
}

impl PortMap {
    /// No mapping.
    pub const EMPTY: PortMap = PortMap { entries: Vec::new() };

    /// Adds one `PORT=LOCAL` mapping, as given to `--port`.
    ///
    /// # Errors
    ///
    /// A message naming the option when `v` is not `PORT=LOCAL` with PORT a port number or name
    /// and LOCAL a port number, or when PORT was already mapped (naming both options).
    pub fn add(&mut self, v: &str) -> Result<(), String> {
        let bad = |why: &str| {
            format!(
                "--port: bad mapping '{v}': {why} (expected PORT=LOCAL, PORT a container port \
                 number or a port name from the file, e.g. 8080=18080 or http=18080)"
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
        let entry = Entry { key, local, given: v.to_string() };
        if let Some(first) = self.entries.iter().find(|e| e.key == entry.key) {
            return Err(both(first, &entry, &entry.key));
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Whether no mapping was given.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the mapping applies to container port `n` of a container that declares
    /// `declared` (its named ports and their numbers).
    fn maps(e: &Entry, n: u16, declared: &[(&str, i64)]) -> bool {
        match &e.key {
            PortKey::Number(k) => *k == n,
            PortKey::Name(name) => {
                declared.iter().any(|&(d, num)| d == name && num == i64::from(n))
            }
        }
    }

    /// The local port for container port `n` of a container that declares `declared` (its
    /// named ports and their numbers): a mapping of `n`, or of a name the container gives `n`.
    /// At most one mapping applies once [`PortMap::overlap`] found none.
    pub fn local(&self, n: u16, declared: &[(&str, i64)]) -> u16 {
        self.entries.iter().find(|e| Self::maps(e, n, declared)).map_or(n, |e| e.local)
    }

    /// Two mappings that apply to the same port of a container that declares `declared` (its
    /// named ports and their numbers), as a message naming both options as given and saying
    /// where the name comes from; `whose` names the container (`target "web"`).
    pub fn overlap(&self, whose: &str, declared: &[(&str, i64)]) -> Option<String> {
        // Only a declared number can be reached by a name, so only those can overlap.
        for &(_, num) in declared {
            let Ok(n) = u16::try_from(num) else { continue };
            let mut hits = self.entries.iter().filter(|e| Self::maps(e, n, declared));
            let (Some(a), Some(b)) = (hits.next(), hits.next()) else { continue };
            let names: Vec<&str> = [a, b]
                .iter()
                .filter_map(|e| match &e.key {
                    PortKey::Name(name) => Some(name.as_str()),
                    PortKey::Number(_) => None,
                })
                .collect();
            return Some(format!(
                "{} ({whose} declares {} as containerPort {n})",
                both(a, b, &PortKey::Number(n)),
                names.join(" and ")
            ));
        }
        None
    }

    /// The first mapping by a name that no container of the file declares, with that mapping
    /// written back as given.
    pub fn unknown_name(&self, mut declared: impl FnMut(&str) -> bool) -> Option<String> {
        self.entries.iter().find_map(|e| match &e.key {
            PortKey::Name(name) if !declared(name) => Some(e.given.clone()),
            _ => None,
        })
    }
}

/// The message for two options that map the same port.
fn both(a: &Entry, b: &Entry, port: &PortKey) -> String {
    format!("--port {} and --port {} both map port {port}", a.given, b.given)
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

/// `declared: a, b`, or that there is none, for messages about port names.
pub(crate) fn declared_list(names: &[&str]) -> String {
    if names.is_empty() {
        "no port names are declared".to_string()
    } else {
        format!("declared: {}", names.join(", "))
    }
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
            ("8080", "--port: bad mapping '8080': no '='"),
            ("8080:18080", "--port: bad mapping '8080:18080': no '='"),
            ("0=1", "--port: bad mapping '0=1': invalid port '0'"),
            ("80=70000", "--port: bad mapping '80=70000': invalid port '70000'"),
            ("80=", "--port: bad mapping '80=': invalid port ''"),
            ("=80", "--port: bad mapping '=80': '' is neither"),
            ("a b=80", "--port: bad mapping 'a b=80': 'a b' is neither"),
        ];
        for (v, want) in cases {
            let e = PortMap::default().add(v).unwrap_err();
            assert!(e.starts_with(want), "{v}: {e}");
        }
        let mut m = PortMap::default();
        m.add("http=1").unwrap();
        assert_eq!(
            m.add("http=2").unwrap_err(),
            "--port http=1 and --port http=2 both map port http"
        );
        m.add("08080=3").unwrap();
        assert_eq!(
            m.add("8080=4").unwrap_err(),
            "--port 08080=3 and --port 8080=4 both map port 8080",
            "options as typed"
        );
    }

    #[test]
    fn a_name_and_a_number_for_one_port_overlap() {
        let mut m = PortMap::default();
        m.add("http=1").unwrap();
        m.add("8080=2").unwrap();
        let web = [("http", 8080), ("admin", 9000)];
        assert_eq!(
            m.overlap("target \"web\"", &web).unwrap(),
            "--port http=1 and --port 8080=2 both map port 8080 (target \"web\" declares http \
             as containerPort 8080)"
        );
        // Elsewhere `http` is another port: no overlap there, each mapping has its own port.
        let other = [("http", 9090)];
        assert_eq!(m.overlap("target \"other\"", &other), None);
        assert_eq!((m.local(9090, &other), m.local(8080, &other)), (1, 2));
        // Nothing declared: names reach nothing.
        assert_eq!(m.overlap("target \"bare\"", &[]), None);
        // Two names for one number in one container.
        let mut m = PortMap::default();
        m.add("web=1").unwrap();
        m.add("http=2").unwrap();
        assert_eq!(
            m.overlap("container p/c", &[("http", 80), ("web", 80)]).unwrap(),
            "--port web=1 and --port http=2 both map port 80 (container p/c declares web and \
             http as containerPort 80)"
        );
        // A declared number out of range is reported where a probe uses it, not here.
        assert_eq!(m.overlap("t", &[("http", 70000), ("web", 70000)]), None);
    }
}
