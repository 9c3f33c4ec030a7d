//! Each C enum written once: [`c_enum!`] takes one table per enum and makes the C enum (the
//! only place its variants and numbers are written, which cbindgen reads after macro
//! expansion), the conversions both ways and what C names them.
//!
//! Four shapes:
//! - an enum of a Rust type (`prober_result` of `ProbeResult`, `prober_role` of `Role`): each
//!   row names its Rust variant; made are `code_of` (Rust to C; `default` names the row for a
//!   Rust value this build has no C number for, where the Rust enum is `#[non_exhaustive]`),
//!   `ALL` (every Rust value with a number, in the order of the table) and `from_code` (C to
//!   Rust);
//! - an enum with a message per row (`prober_status`): made is `message`, the static
//!   description of a number (`prober_status_str`);
//! - an enum of inputs that map to more than a Rust variant (`prober_tls_verify`, whose
//!   `_CA_FILE` takes a path; `prober_compression`, whose `_NONE` is no coding at all): made is
//!   `from_code`, the C enum's own variant of a number, which the setter then matches by name;
//! - an enum of flags, or-ed together (`prober_engine_flags`, `prober_tcp_step_flags`): made
//!   are `KNOWN`, every row's bit, and `is_in`, whether a set of flags has a row's.
//!
//! Numbers are the ABI: rows are only ever added, never renumbered (`ci/abi-check.sh`).

/// See the module docs.
macro_rules! c_enum {
    // The C enum itself, the same for every shape: its rows' names and numbers.
    (
        @enum $(#[$meta:meta])* $c:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(u32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $c {
            $( $(#[$vmeta])* $variant = $value, )*
        }
    };
    // What an enum of inputs adds.
    (@inputs $c:ident { $( $variant:ident = $value:literal, )* }) => {
        impl $c {
            /// The variant of C number `n`, if it is one of the table's.
            pub(crate) fn from_code(n: u32) -> Option<$c> {
                match n {
                    $( $value => Some($c::$variant), )*
                    _ => None,
                }
            }
        }
    };
    // What an enum of flags adds.
    (@flags $c:ident { $( $variant:ident = $value:literal, )* }) => {
        impl $c {
            /// Every flag of the table, or-ed together.
            pub(crate) const KNOWN: u32 = 0 $( | $value )*;

            /// Whether `flags` has this flag.
            pub(crate) const fn is_in(self, flags: u32) -> bool {
                flags & self as u32 != 0
            }
        }
    };
    (
        $(#[$meta:meta])*
        pub enum $c:ident of $rust:ident $(, default $default:ident)? {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal => $rvariant:ident, )*
        }
    ) => {
        $crate::enums::c_enum!(@enum $(#[$meta])* $c { $( $(#[$vmeta])* $variant = $value, )* });

        impl $c {
            /// Every Rust value that has a C number, in the order of the table.
            #[allow(dead_code)]
            pub(crate) const ALL: &'static [$rust] = &[$( $rust::$rvariant ),*];

            /// The C number of `r`; the default row's for a value with none.
            #[allow(dead_code)]
            pub(crate) fn code_of(r: $rust) -> u32 {
                #[allow(unreachable_patterns)]
                let c = match r {
                    $( $rust::$rvariant => $c::$variant, )*
                    $( _ => $c::$default, )?
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
        $crate::enums::c_enum!(@enum $(#[$meta])* $c { $( $(#[$vmeta])* $variant = $value, )* });

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
    // `inputs` and `flags`: rows of a name and a number, and what the shape adds.
    (
        $(#[$meta:meta])*
        pub enum $c:ident, $shape:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )*
        }
    ) => {
        $crate::enums::c_enum!(@enum $(#[$meta])* $c { $( $(#[$vmeta])* $variant = $value, )* });
        $crate::enums::c_enum!(@$shape $c { $( $variant = $value, )* });
    };
}

pub(crate) use c_enum;

#[cfg(test)]
mod tests {
    use prober_core::{ClosePolicy, HttpVersion, RedirectPolicy, Role};

    use crate::body_cel::prober_cel_mode;
    use crate::compression::prober_compression;
    use crate::engine::prober_engine_flags;
    use crate::http_version::prober_http_version;
    use crate::outcome::prober_role;
    use crate::spec::{prober_close_policy, prober_redirect_policy};
    use crate::tcp_steps::prober_tcp_step_flags;
    use crate::tls::prober_tls_verify;

    /// The tables that moved onto `c_enum!` keep the numbers of the matches they replaced, both
    /// ways (the numbers are the ABI; `ci/header.sh --check` holds the header's).
    #[test]
    fn moved_tables_keep_their_numbers() {
        let roles = [Role::Startup, Role::Readiness, Role::Liveness];
        for (n, r) in (0..).zip(roles) {
            assert_eq!((prober_role::from_code(n), prober_role::code_of(r)), (Some(r), n));
        }
        assert_eq!(prober_role::from_code(3), None);

        use RedirectPolicy::{AnyHost, SameHost, SameOrigin};
        for (n, p) in (0..).zip([SameHost, SameOrigin, RedirectPolicy::None, AnyHost]) {
            assert_eq!(prober_redirect_policy::from_code(n), Some(p));
        }
        assert_eq!(prober_redirect_policy::from_code(4), None);

        for (n, p) in (0..).zip([ClosePolicy::Reset, ClosePolicy::Fin]) {
            assert_eq!(prober_close_policy::from_code(n), Some(p));
        }
        assert_eq!(prober_close_policy::from_code(2), None);

        for (n, v) in (0..).zip([HttpVersion::Auto, HttpVersion::Http1, HttpVersion::H2c]) {
            assert_eq!(prober_http_version::from_code(n), Some(v));
        }
        assert_eq!(prober_http_version::from_code(3), None);

        use prober_compression::*;
        let codings = [
            PROBER_COMPRESSION_NONE,
            PROBER_COMPRESSION_IDENTITY,
            PROBER_COMPRESSION_GZIP,
            PROBER_COMPRESSION_DEFLATE,
            PROBER_COMPRESSION_BR,
        ];
        for (n, c) in (0..).zip(codings) {
            assert_eq!(prober_compression::from_code(n), Some(c));
        }
        assert_eq!(prober_compression::from_code(5), None);

        use prober_tls_verify::*;
        let modes = [PROBER_TLS_VERIFY_NONE, PROBER_TLS_VERIFY_SYSTEM, PROBER_TLS_VERIFY_CA_FILE];
        for (n, m) in (0..).zip(modes) {
            assert_eq!(prober_tls_verify::from_code(n), Some(m));
        }
        assert_eq!(prober_tls_verify::from_code(3), None);

        use prober_core::CelMode;
        for (n, m) in (0..).zip([CelMode::FailIfMatches, CelMode::FailIfNotMatches]) {
            assert_eq!((prober_cel_mode::from_code(n), prober_cel_mode::code_of(m)), (Some(m), n));
        }
        assert_eq!(prober_cel_mode::from_code(2), None);

        use prober_engine_flags::*;
        assert_eq!(prober_engine_flags::KNOWN, 1 | 2);
        assert!(PROBER_ENGINE_EVERY_RUN.is_in(1) && !PROBER_ENGINE_EVERY_RUN.is_in(2));
        assert!(PROBER_ENGINE_NO_SOCKET_REUSE.is_in(3) && !PROBER_ENGINE_NO_SOCKET_REUSE.is_in(1));
        use prober_tcp_step_flags::*;
        assert_eq!(prober_tcp_step_flags::KNOWN, 1 | 2 | 4);
        let each = [PROBER_TCP_STEP_EXPAND, PROBER_TCP_STEP_STARTTLS, PROBER_TCP_STEP_LINE];
        for (bit, flag) in [1, 2, 4].into_iter().zip(each) {
            assert!(flag.is_in(bit) && !flag.is_in(7 & !bit), "{flag:?}");
        }
    }
}
