//! Reading configuration YAML that may be hostile: [`check`] (nesting depth and alias
//! expansion judged on libyaml's events, see [`limits`]) and [`from_str`], serde_norway's
//! `from_str` behind that check. Every YAML file libprober reads comes through here: `prober
//! watch` files and Pod manifests (prober-k8s), blackbox_exporter module files
//! (prober-blackbox) and web configs (prober-httpd), so that the limits and the `unsafe` calls
//! into libyaml have one home. The durations those files hold (Go's `1m30s`) are read by
//! [`duration`], which `prober`'s options share.

#![warn(missing_docs)]

pub mod duration;
pub mod limits;

pub use limits::{MAX_DEPTH, check, expansion_budget};

/// Deserializes `text` after [`check`] has passed it: a file nested too deep or whose aliases
/// expand too far is refused before serde_norway builds anything.
///
/// # Errors
///
/// The limit's refusal ([`check`]), or serde_norway's error as text (with its line and
/// column).
pub fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    check(text)?;
    serde_norway::from_str(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_str_refuses_what_check_refuses_before_building() {
        let deep = format!("{}1{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let err = from_str::<serde_norway::Value>(&deep).unwrap_err();
        assert!(err.contains("nested deeper than 128"), "{err}");
        let v: std::collections::BTreeMap<String, u32> = from_str("a: 1\nb: 2\n").unwrap();
        assert_eq!(v["b"], 2);
        let err = from_str::<std::collections::BTreeMap<String, u32>>("a: [").unwrap_err();
        assert!(err.contains("line"), "{err}");
    }
}
