//! Content decoding (`HttpSpec::compression`, blackbox_exporter's `compression`) against the
//! testkit's `/encoded` bodies: decoded, matched, bounded by the output limit.

mod common;

use std::io;
use std::net::SocketAddr;

use common::*;
use prober_core::{Compression, Pattern};
use prober_io::{Ctx, Machine, Ready, Step};

fn coded(url: &str, coding: Compression) -> ProbeSpec {
    let mut s = spec(url);
    s.set_compression(Some(coding)).unwrap();
    s
}

#[test]
fn gzip_deflate_and_br_bodies_are_decoded_and_matched() {
    let s = TargetServer::start();
    for coding in [Compression::Gzip, Compression::Deflate, Compression::Br, Compression::Identity]
    {
        let path = match coding {
            Compression::Identity => "/body/3000".to_string(),
            c => format!("/encoded/{}/3000", c.name()),
        };
        let mut sp = coded(&s.url(&path), coding);
        sp.set_expect_body(Pattern::new("^a{3000}$").unwrap()).unwrap();
        assert_success(&run(&sp), &"a".repeat(3000));
    }
}

#[test]
fn gzip_members_follow_one_another() {
    // Two whole members and a part: 2 MiB + 5 bytes, as Go's multistream reader reads them.
    let s = TargetServer::start();
    let mut sp = coded(&s.url("/encoded/gzip/2097157"), Compression::Gzip);
    sp.set_output_limit(4 << 20).unwrap();
    let o = run(&sp);
    assert_eq!((o.result, o.output.len(), o.truncated), (ProbeResult::Success, 2097157, false));
}

#[test]
fn without_compression_the_coded_bytes_are_the_body() {
    let s = TargetServer::start();
    let o = get(&s.url("/encoded/gzip/3000"));
    assert_eq!(o.result, ProbeResult::Success, "{o:?}");
    assert_eq!(&o.output[..2], &[0x1f, 0x8b]);
}

#[test]
fn a_body_of_another_coding_fails_as_blackbox_exporter_fails_it() {
    // The coding named, not the response's Content-Encoding, decides (blackbox_exporter reads
    // the body with the module's algorithm): gzip bytes read as DEFLATE are corrupt, plain
    // bytes are not gzip.
    let s = TargetServer::start();
    let url = s.url("/encoded/gzip/3000");
    let o = run(&coded(&url, Compression::Deflate));
    let msg = format!("Get \"{url}\": flate: corrupt input");
    assert_failure(&o, Reason::BrokenBody, &msg);
    assert_eq!(o.output_total, 0);
    let url = s.url("/body/100");
    assert_failure(
        &run(&coded(&url, Compression::Gzip)),
        Reason::BrokenBody,
        &format!("Get \"{url}\": gzip: invalid header"),
    );
    // The header says gzip, the bytes are gzip: the header does not matter either way.
    let url = s.url("/encoded/gzip/3000?as=br");
    assert_success(&run(&coded(&url, Compression::Gzip)), &"a".repeat(3000));
    // An empty body is no gzip stream (Go: EOF reading the header).
    let url = s.url("/body/0");
    let o = run(&coded(&url, Compression::Gzip));
    assert_failure(&o, Reason::BrokenBody, &format!("Get \"{url}\": unexpected EOF"));
}

#[test]
fn a_decompression_bomb_ends_at_the_limit() {
    // 1 GiB of `a` in about 1 MiB of gzip: decoded up to the limit, then the run ends on its
    // own (the limit reached), not at its deadline.
    let s = TargetServer::start();
    let o = run(&coded(&s.url("/encoded/gzip/1073741824"), Compression::Gzip));
    assert_eq!((o.result, o.reason), (ProbeResult::Success, Reason::None), "{o:?}");
    assert_eq!(o.output, vec![b'a'; LIMIT]);
    assert!(o.truncated);
    assert_eq!(o.output_total, LIMIT as u64 + 1, "one decoded byte past the limit, no more");
    let mut sp = coded(&s.url("/encoded/br/16777216"), Compression::Br);
    sp.set_output_limit(1 << 20).unwrap();
    let o = run(&sp);
    assert_eq!((o.result, o.output.len(), o.truncated), (ProbeResult::Success, 1 << 20, true));
}

/// Counts the turns a machine gives back with [`Step::Yield`].
struct Counting<M> {
    inner: M,
    yields: u32,
}

impl<M: Machine> Counting<M> {
    fn count(&mut self, s: Step) -> Step {
        if matches!(s, Step::Yield) {
            self.yields += 1;
        }
        s
    }
}

impl<M: Machine> Machine for Counting<M> {
    fn start(&mut self, cx: &mut Ctx<'_>) -> Step {
        let s = self.inner.start(cx);
        self.count(s)
    }
    fn ready(&mut self, cx: &mut Ctx<'_>, sub: usize, ready: Ready) -> Step {
        let s = self.inner.ready(cx, sub, ready);
        self.count(s)
    }
    fn resolved(&mut self, cx: &mut Ctx<'_>, addrs: io::Result<Vec<SocketAddr>>) -> Step {
        let s = self.inner.resolved(cx, addrs);
        self.count(s)
    }
    fn timer(&mut self, cx: &mut Ctx<'_>) -> Step {
        let s = self.inner.timer(cx);
        self.count(s)
    }
    fn resume(&mut self, cx: &mut Ctx<'_>) -> Step {
        let s = self.inner.resume(cx);
        self.count(s)
    }
    fn wake_at(&self) -> Option<Instant> {
        self.inner.wake_at()
    }
    fn cancel(&mut self, cx: &mut Ctx<'_>) {
        self.inner.cancel(cx);
    }
}

#[test]
fn decoding_a_bomb_yields_the_thread_between_bounded_slices() {
    // 8 MiB decoded from about 8 KiB read: without a bound on decoded bytes per turn, two reads
    // would decode it all in one turn. The reader decodes at most DECODE_PER_STEP per step and
    // a turn has at most 16 steps (at most 1 MiB), so the run gives the thread back at least
    // 7 times before the 8 MiB are decoded.
    let s = TargetServer::start();
    let limit = 8 << 20;
    let mut sp = coded(&s.url("/encoded/gzip/1073741824"), Compression::Gzip);
    sp.set_output_limit(limit).unwrap();
    let ProbeKind::Http(h) = &sp.kind else { unreachable!() };
    let mut m = Counting { inner: HttpProbe::new(h, sp.timeout, sp.output_limit), yields: 0 };
    let o = run_to_completion(&mut m);
    assert_eq!((o.result, o.output.len(), o.truncated), (ProbeResult::Success, limit, true));
    // The promise: at most 1 MiB decoded per turn (16 steps of DECODE_PER_STEP).
    const { assert!(16 * prober_http::body::DECODE_PER_STEP <= 1 << 20) };
    assert!(m.yields as usize >= limit / (1 << 20) - 1, "{} yields", m.yields);
}
