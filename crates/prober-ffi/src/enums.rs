//! Each C enum written once: [`c_enum!`] takes one table per enum and makes the C enum (the
//! only place its variants and numbers are written, which cbindgen reads after macro
//! expansion), the conversions both ways and what C names them.
//!
//! Two shapes:
//! - an enum of a Rust type (`prober_result` of `ProbeResult`, `prober_reason` of `Reason`):
//!   each row names its Rust variant; made are `CODE_OF` (Rust to C, with a default for a Rust
//!   value this build has no C number for, the Rust enums being `#[non_exhaustive]`), `ALL`
//!   (every Rust value with a number, in the order of the table) and `from_code` (C to Rust);
//! - an enum with a message per row (`prober_status`): made is `message`, the static
//!   description of a number (`prober_status_str`).
//!
//! Numbers are the ABI: rows are only ever added, never renumbered (`ci/abi-check.sh`).

/// See the module docs.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub enum $c:ident of $rust:ident, default $default:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $rvariant:ident, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $c {
            $( $(#[$vmeta])* $variant = $value, )*
        }

        impl $c {
            /// Every Rust value that has a C number, in the order of the table.
            #[allow(dead_code)]
            pub(crate) const ALL: &'static [$rust] = &[$( $rust::$rvariant ),*];

            /// The C number of `r`; the default row's for a value with none.
            pub(crate) fn code_of(r: $rust) -> u32 {
                #[allow(unreachable_patterns)]
                let c = match r {
                    $( $rust::$rvariant => $c::$variant, )*
                    _ => $c::$default,
                };
                c as u32
            }

            /// The Rust value of C number `n`, if it is one of the table's.
            #[allow(dead_code)]
            pub(crate) fn from_code(n: u32) -> Option<$rust> {
                match n {
                    $( $value => Some($rust::$rvariant), )*
                    _ => None,
                }
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $c:ident, messages, else $unknown:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $message:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $c {
            $( $(#[$vmeta])* $variant = $value, )*
        }

        impl $c {
            /// The static description of C number `n` (`else` for a number not in the table).
            pub(crate) fn message(n: u32) -> &'static std::ffi::CStr {
                match n {
                    $( $value => $message, )*
                    _ => $unknown,
                }
            }
        }
    };
}

pub(crate) use c_enum;
