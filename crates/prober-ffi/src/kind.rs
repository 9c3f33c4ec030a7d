//! The one place the C setters ask a spec's kind: [`KindOf`] projects a [`ProbeKind`] to one
//! kind's options, and a setter of another kind is refused with `PROBER_E_WRONG_KIND` in one
//! wording, `{subject} {kind} probes only`. Which kinds take a connection option is prober-core's
//! table ([`prober_core::ProbeSpec::options_taking`]), not a list here.

use prober_core::{DnsSpec, ExecSpec, GrpcSpec, HttpSpec, IcmpSpec, ProbeKind, ProbeSpec, TcpSpec};

use crate::set_error;
use crate::status::{PROBER_E_WRONG_KIND, prober_status};

/// The options of one kind of probe, as a projection of [`ProbeKind`].
pub(crate) trait KindOf: Sized {
    /// The kind as refusals name it: `HTTP`, `gRPC`, `TCP`, `DNS`, `ICMP`, `exec`.
    const NAME: &'static str;
    /// The kind's options, if `kind` is this kind.
    fn of(kind: &mut ProbeKind) -> Option<&mut Self>;
}

macro_rules! kind_of {
    ($($spec:ty => $variant:ident, $name:literal;)*) => {$(
        impl KindOf for $spec {
            const NAME: &'static str = $name;
            fn of(kind: &mut ProbeKind) -> Option<&mut Self> {
                match kind {
                    // A boxed kind (DNS) coerces to its options here.
                    ProbeKind::$variant(options) => Some({ let o: &mut Self = options; o }),
                    _ => None,
                }
            }
        }
    )*};
}

kind_of! {
    HttpSpec => Http, "HTTP";
    GrpcSpec => Grpc, "gRPC";
    TcpSpec => Tcp, "TCP";
    DnsSpec => Dns, "DNS";
    IcmpSpec => Icmp, "ICMP";
    ExecSpec => Exec, "exec";
}

/// The options of kind `K` of `spec`; for a spec of another kind, `PROBER_E_WRONG_KIND` with
/// `subject` (`"headers apply to"`: `headers apply to HTTP probes only`).
pub(crate) fn kind_mut<'a, K: KindOf>(
    spec: &'a mut ProbeSpec,
    subject: &str,
) -> Result<&'a mut K, prober_status> {
    K::of(&mut spec.kind)
        .ok_or_else(|| set_error(PROBER_E_WRONG_KIND, format!("{subject} {} probes only", K::NAME)))
}

/// Refuses a spec of another kind than `K`, as [`kind_mut`]: for setters that go through
/// `ProbeSpec`'s own setters.
pub(crate) fn require_kind<K: KindOf>(
    spec: &mut ProbeSpec,
    subject: &str,
) -> Result<(), prober_status> {
    kind_mut::<K>(spec, subject).map(|_| ())
}
