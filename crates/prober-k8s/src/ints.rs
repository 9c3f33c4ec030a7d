//! Integers of Kubernetes manifests and watch files as serde reads them, with "expected an
//! integer" in errors instead of a Rust type name (used by `deserialize_with`).

use std::fmt;

use serde::Deserializer;
use serde::de::{self, Visitor};

/// An integer too large or too small for any field (they hold 64-bit signed integers), said
/// in words rather than with a Rust type name.
fn int_out_of_range<E: de::Error>(v: impl fmt::Display) -> E {
    E::custom(format_args!(
        "the integer {v} is out of range (at most {}, at least {})",
        i64::MAX,
        i64::MIN
    ))
}

/// A required integer (`containerPort`), as [`opt_int`] reads it.
pub(crate) fn int<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    opt_int(d)?.ok_or_else(|| de::Error::custom("expected an integer"))
}

/// An optional integer, with "expected an integer" in errors instead of a Rust type name.
pub(crate) fn opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an integer")
        }
        fn visit_none<E: de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Option<i64>, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<i64>, D::Error> {
            d.deserialize_any(V)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<i64>, E> {
            Ok(Some(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<i64>, E> {
            i64::try_from(v).map(Some).map_err(|_| int_out_of_range(v))
        }
        fn visit_u128<E: de::Error>(self, v: u128) -> Result<Option<i64>, E> {
            Err(int_out_of_range(v))
        }
        fn visit_i128<E: de::Error>(self, v: i128) -> Result<Option<i64>, E> {
            Err(int_out_of_range(v))
        }
    }
    d.deserialize_option(V)
}
